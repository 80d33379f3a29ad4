"""The torchvision venv exists and works wherever the families that need it must be tested (CI)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest
from support import REPO, subprocess_env

SCRIPT = REPO / "scripts" / "torchvision-venv.sh"


def venv_dir() -> Path:
    return Path(os.environ.get("MVLSIB_TORCHVISION_VENV", Path.home() / ".cache" / "mvlsib" / "torchvision-venv"))


def test_the_torchvision_families_run_somewhere():
    """Here (torchvision importable: the family tests are collected in this run) or in the venv,
    which CI builds with scripts/torchvision-venv.sh and runs tests/torchvision_families in."""
    if importlib.util.find_spec("torchvision") is not None:
        import torchvision.ops  # noqa: F401  (importable is not enough: its C++ ops must load)

        return
    python = venv_dir() / "bin" / "python"
    if not python.exists():
        message = (
            f"no torchvision here and no torchvision venv at {venv_dir()}: the families that need torchvision "
            f"(Gemma 4, Mistral 3, LFM2-VL) are not tested; run bash {SCRIPT.relative_to(REPO)} and then "
            f"{python} -m pytest -n 2 -q tests/torchvision_families"
        )
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    # The venv must really run torchvision and the project (a half-built venv fails here, not later).
    code = "import torch, torchvision.ops, transformers, timm, mvlsib; print(torchvision.__version__)"
    done = subprocess.run([str(python), "-c", code], env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().startswith("0.28.0")
