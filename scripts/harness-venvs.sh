#!/usr/bin/env bash
# Create the virtual environments in which the export tests run the real harnesses
# (tests/release/test_exports.py; docs/exports.md). Usage: scripts/harness-venvs.sh [DIR]  (default $MVLSIB_HARNESS_VENVS or ~/.cache/mvlsib/harness-venvs)
#
# Each venv sees the system site-packages (torch, transformers, datasets, pyarrow) but installs
# into itself only: the harness with --no-deps (lmms-eval's dependencies include a torchvision that
# breaks the CPU torch here) plus the few pure-Python packages task discovery and scoring import.
# Nothing is installed into the system python. Idempotent: an existing venv is left as it is.
set -euo pipefail
dir="${1:-${MVLSIB_HARNESS_VENVS:-$HOME/.cache/mvlsib/harness-venvs}}"
mkdir -p "$dir"
make_venv() {  # name, harness requirement, its extra packages...
  local name="$1" harness="$2"; shift 2
  if [ -x "$dir/$name/bin/python" ] && "$dir/$name/bin/python" -c "import ${name/lmms/lmms_eval}" 2>/dev/null; then
    return
  fi
  python3 -m venv --system-site-packages "$dir/$name"
  "$dir/$name/bin/pip" install -q --no-deps "$harness"
  "$dir/$name/bin/pip" install -q "$@"
}
make_venv lmms lmms-eval==0.7.3 loguru pytz accelerate tenacity evaluate sacrebleu openai python-dotenv pytablewriter
make_venv mteb mteb==2.26.24 polars scikit-learn pytrec-eval-terrier
