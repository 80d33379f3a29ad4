#!/usr/bin/env bash
# Create the virtual environment in which the families that need torchvision are tested
# (tests/torchvision_families/; docs/model_families.md). Usage: scripts/torchvision-venv.sh [DIR]
# (default $MVLSIB_TORCHVISION_VENV or ~/.cache/mvlsib/torchvision-venv). Prints the venv's path.
#
# Why a venv of its own: this machine's pip configuration (find-links, constraints) installs the
# local CPU torch wheel, beside which no torchvision from the package index loads. Here pip runs
# without that configuration, so torch==2.13.0 and torchvision==0.28.0 both come from the package
# index's own (CUDA) build, which runs on CPU as well; about 5 GB. Everything else is the pinned full
# freeze scripts/harness/torchvision.txt, installed with --no-deps (the same versions as the main
# test environment), then the project itself (editable, --no-deps: its dependencies are in the freeze).
#
# Idempotent: a venv whose stamp matches the pins and that imports torchvision is kept; only its
# editable install is pointed at this checkout again if it points elsewhere.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
venv="${1:-${MVLSIB_TORCHVISION_VENV:-$HOME/.cache/mvlsib/torchvision-venv}}"
python="${PYTHON:-python3}"
requirements="$here/harness/torchvision.txt"
pins="torch==2.13.0 torchvision==0.28.0"
stamp="$( (echo "$pins"; cat "$requirements") | sha256sum | cut -d' ' -f1)"

index_pip() {  # pip without the machine's configuration: the package index's own builds
  env -u PIP_FIND_LINKS -u PIP_CONSTRAINT -u PIP_EXTRA_INDEX_URL -u PIP_INDEX_URL PIP_CONFIG_FILE=/dev/null \
    "$venv/bin/python" -m pip "$@"
}

works() {
  "$venv/bin/python" - <<'EOF' 2>/dev/null
import torch, torchvision, torchvision.ops, transformers, timm
boxes = torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 2.0, 1.9]])
assert torchvision.ops.nms(boxes, torch.tensor([1.0, 0.5]), 0.5).tolist() == [0]
EOF
}

if ! { [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.mvlsib-stamp" 2>/dev/null)" = "$stamp" ] && works; }; then
  echo "torchvision-venv: creating $venv (pinned in ${requirements#"$repo"/})" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv"
  # shellcheck disable=SC2086  # two requirement specifiers, split on purpose
  index_pip install -q $pins
  index_pip install -q --no-deps -r "$requirements"
  if ! works; then
    echo "torchvision-venv: $venv was built but torchvision does not run in it (torchvision.ops.nms failed)" >&2
    exit 1
  fi
  echo "$stamp" > "$venv/.mvlsib-stamp"
fi

# The editable install names one checkout; point it at this one (CI clones afresh each run).
installed="$("$venv/bin/python" -c 'import mvlsib, os; print(os.path.dirname(os.path.dirname(os.path.dirname(mvlsib.__file__))))' 2>/dev/null || true)"
if [ "$installed" != "$repo" ]; then
  index_pip install -q --no-deps --no-build-isolation -e "$repo"
fi
echo "$venv"
