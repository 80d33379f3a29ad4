#!/usr/bin/env bash
# The whole test suite, as CI runs it (README's second command, after installing):
#   1. the self-contained, pinned venvs of the real harnesses (lmms-eval, MTEB, Inspect AI);
#   2. the torchvision venv, in which the families whose processors need torchvision are tested;
#   3. lint, format and types (ruff, mypy; configured in pyproject.toml);
#   4. the main suite, then the torchvision families inside their venv (2 workers each).
# Each venv is built once and kept (a stamp of its pins); later runs start at step 3.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/harness-venvs.sh
tv="$(bash scripts/torchvision-venv.sh)"
ruff check .
ruff format --check .
mypy
python3 -m pytest -n 2 -q
"$tv/bin/python" -m pytest -n 2 -q tests/torchvision_families
