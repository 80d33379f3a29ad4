"""Fresh virtual environments for the tests that install something as a user would: made with uv
(``uv venv``, no system site packages) and filled from the package index alone (uv reads no pip
configuration). uv comes with the ``test`` extra, so it sits beside the interpreter running the tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def uv() -> list[str]:
    """The uv command: the one installed beside this interpreter (the test extra), else the one on PATH."""
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("uv")
    assert found, "uv is not installed: pip install -e '.[test]' brings it"
    return [found]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would leak the running interpreter into a subprocess."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def run(cmd: list, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``cmd``; it must exit 0 (the failure shows its output)."""
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-4000:]}"
    return proc


def fresh_venv(path: Path, *requirements: str) -> Path:
    """A new venv at ``path`` holding ``requirements`` (and what they depend on) from the index; its python."""
    # The interpreter running the tests (uv finds its base when it is a venv's): the same Python version.
    run([*uv(), "venv", "-q", "--python", sys.executable, path], path.parent)
    if requirements:
        run([*uv(), "pip", "install", "-q", "--python", path / "bin" / "python", *requirements], path.parent)
    return path / "bin" / "python"


def installed(python: Path) -> set[str]:
    """The distribution names (normalised: lower case, '-') installed in the venv of ``python``."""
    code = "import importlib.metadata as m; print('\\n'.join(d.metadata['Name'] for d in m.distributions()))"
    out = run([python, "-c", code], python.parent).stdout
    return {line.strip().lower().replace("_", "-") for line in out.splitlines() if line.strip()}
