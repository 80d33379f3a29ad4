"""Helpers importable from any test module (``from support import ...``; tests/ is on sys.path).

Fixtures live in conftest.py files; plain functions and constants live here, because
``from conftest import ...`` breaks as soon as a sub-folder has its own conftest.py.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SIB_DIR = SHARED / "sib-200"
TOPIC_PHOTOS = SHARED / "topic-photos"
POOL_DIR = REPO / "image_pool"


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for running the package from this checkout in a child process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env
