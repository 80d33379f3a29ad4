"""The families whose processors need torchvision, checked inside the torchvision venv.

transformers' processors of Gemma 4, Mistral 3 (Pixtral), LFM2-VL, ... cannot be built without
torchvision (PerceptionLM's and Gemma 3n's vision towers also need timm, which needs torchvision), and
torchvision cannot be installed beside the main test environment's CPU torch. So
these tests run in their own venv (``scripts/torchvision-venv.sh``), as ``.ci/run`` does::

    "$(bash scripts/torchvision-venv.sh)/bin/python" -m pytest -n 2 -q tests/torchvision_families

In an interpreter without torchvision (the main suite) the family modules here are not collected:
they run exactly once, in the venv. ``test_environment.py`` is collected everywhere and, under
``CI=true``, fails when the venv is missing or broken, so CI can never skip them silently.
"""

from __future__ import annotations

import importlib.util

# Everything but the environment check needs torchvision to even import its fixtures.
collect_ignore_glob = [] if importlib.util.find_spec("torchvision") else ["test_tv_*.py"]
