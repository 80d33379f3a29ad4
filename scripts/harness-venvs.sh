#!/usr/bin/env bash
# Create the virtual environments in which the export tests run the real harnesses
# (tests/release/test_exports.py; docs/exports.md). Usage: scripts/harness-venvs.sh [DIR]
# (default $MVLSIB_HARNESS_VENVS or ~/.cache/mvlsib/harness-venvs)
#
# Each venv is self-contained: it sees no other interpreter's site-packages (inside a user's
# virtualenv, --system-site-packages would mean the *base* interpreter's packages, not the user's),
# and it installs exactly the pinned set in scripts/harness/<name>.txt with --no-deps, after
# torch==2.13.0 (which this machine's pip configuration takes from its local CPU wheel). A fresh
# resolve next month therefore installs the same thing. Idempotent: a venv whose stamp matches its
# requirement file is left as it is; one built from another requirement file is rebuilt.
# Inspect AI needs no torch, so its venv skips that step.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dir="${1:-${MVLSIB_HARNESS_VENVS:-$HOME/.cache/mvlsib/harness-venvs}}"
python="${PYTHON:-python3}"
mkdir -p "$dir"

make_venv() {  # name, module to import, requirement file, whether torch goes in first (yes|no)
  local name="$1" module="$2" requirements="$3" torch="${4:-yes}"
  local venv="$dir/$name" stamp
  stamp="$(sha256sum "$requirements" | cut -d' ' -f1)"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.mvlsib-stamp" 2>/dev/null)" = "$stamp" ] \
      && "$venv/bin/python" -c "import $module" 2>/dev/null; then
    return
  fi
  echo "harness-venvs: creating $venv (pinned in ${requirements#"$here"/})" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  if [ "$torch" = yes ]; then
    "$venv/bin/python" -m pip install -q torch==2.13.0
  fi
  "$venv/bin/python" -m pip install -q --no-deps -r "$requirements"
  "$venv/bin/python" -c "import $module"
  echo "$stamp" > "$venv/.mvlsib-stamp"
}

make_venv lmms lmms_eval "$here/harness/lmms-eval.txt"
make_venv mteb mteb "$here/harness/mteb.txt"
make_venv inspect inspect_ai "$here/harness/inspect.txt" no
