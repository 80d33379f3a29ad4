"""The test environments, one session per kind of user (``pip install nox && nox``).

Each session installs what that user installs and runs the tests that belong to it; a test
module says where it belongs (``pytest.mark.eval``, ``.harness`` or ``.vllm``, else the core)
and ``tests/conftest.py`` collects, per ``--env``, only those modules, so a core test that
imports torch fails in ``core`` instead of hiding in an environment that has everything.

=============  ============================================================================
``lint``       ruff and mypy
``core``       ``pip install mvlsib-build`` (no torch, transformers, jinja2, matplotlib):
               README command 1, every ``--help``, every core test
``eval``       the ``[eval]`` extra as a user gets it, torchvision included (the index's
               torch 2.13.0 build), plus what single families need on top (timm)
``harnesses``  lmms-eval, MTEB and Inspect AI from their pinned sets (``tests/envs/``)
``vllm``       real vLLM servers (vLLM's CPU build, pinned in ``tests/envs/vllm.txt``, in a venv of
               its own) against the [eval] install: the same prompt token ids and answers as the
               hf backend, and the batch route through vLLM's own batch runner
``lowest``     the lower bounds in ``pyproject.toml``, resolved lowest-direct: the unit
               tier and the byte-pinning tests
``py313``      README command 1, the unit tier and the byte-pinning tests under Python 3.13
               (3.10 is not supported: the byte-stable pyarrow 26 needs 3.11)
``py312``      the same under Python 3.12 (not run by default: ``nox -s py312``)
=============  ============================================================================

``core``, ``eval``, ``harnesses`` and ``vllm`` run every tier (``--tier all``); plain ``pytest`` runs the
unit tier (tests/conftest.py). Sessions reuse their virtualenvs (``.nox/``) between runs; uv builds
them from its cache in seconds. Interpreters come from ``PATH`` or, where pyenv is used, from ``$(pyenv root)/versions``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import nox

nox.needs_version = ">=2025.2.9"
nox.options.default_venv_backend = "uv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
# py312 is there to run by name; by default 3.11 (core) and 3.13 (py313) bracket the supported range.
nox.options.sessions = ["lint", "core", "eval", "harnesses", "vllm", "lowest", "py313"]

ROOT = Path(__file__).resolve().parent
ENVS = ROOT / "tests" / "envs"
PYTHON = "3.11"
# The index's own torch 2.13.0 is a CUDA build that also runs on the CPU and loads torchvision
# 0.28.0 beside it (a CPU-only torch wheel some machines carry does not); the project's tested pair.
TORCH = ("torch==2.13.0", "torchvision==0.28.0")
# What single families need beyond [eval] (docs/evaluation/backends.md's family table): timm's vision towers.
FAMILY_EXTRAS = ("timm==1.0.31",)
WORKERS = os.environ.get("MVLSIB_TEST_WORKERS", "2")
# The tests that pin bytes: a full release (every data file and the card) and the sampler's output.
SAME_BYTES = ("tests/release/test_release_bytes.py", "tests/builder/test_sample.py")


def _add_pyenv_pythons() -> None:
    """Make pyenv's installed Pythons findable as ``python3.X`` (its shims hide all but the active one)."""
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    bins = sorted((Path(root) / "versions").glob("3.*/bin"))
    if bins:
        os.environ["PATH"] = os.pathsep.join([os.environ.get("PATH", ""), *map(str, bins)])


_add_pyenv_pythons()


def _pytest(session: nox.Session, env: str, *args: str, workers: str = WORKERS) -> None:
    session.run(
        "python",
        "-m",
        "pytest",
        "--env",
        env,
        "-n",
        workers,
        "-q",
        *args,
        *session.posargs,
        env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
    )


def _core(session: nox.Session, *, tier: str = "all") -> None:
    session.install("-e", ".[test]")
    # README command 1 exactly as a user runs it: only the core installed, outside the test runner.
    out = Path(session.create_tmp()) / "readme-build"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    session.chdir(out)
    session.run(
        "mvlsib-build", "build", "--sib", str(ROOT.parent / "shared" / "sib-200"), "--seed", "0", "--out", "release"
    )
    session.chdir(ROOT)
    _pytest(session, "core", "--tier", tier)
    if tier != "all":  # the release's bytes and the sampler's, whatever the tier
        _pytest(session, "core", *SAME_BYTES)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("-e", ".[eval,test]", *TORCH)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session(python=PYTHON)
def core(session: nox.Session) -> None:
    _core(session)


@nox.session(python=PYTHON)
def eval(session: nox.Session) -> None:  # shadows eval(): the session's name is the extra's
    session.install("-e", ".[eval,test]", *TORCH, *FAMILY_EXTRAS)
    _pytest(session, "eval", "--tier", "all")


@nox.session(python=PYTHON)
def harnesses(session: nox.Session) -> None:
    """The exports run by the real harnesses, each in its own pinned venv beside this session's."""
    session.install("-e", ".[test]")
    venvs = Path(session.virtualenv.location).parent / "harness-venvs"
    for name, module, torch in (("lmms", "lmms_eval", True), ("mteb", "mteb", True), ("inspect", "inspect_ai", False)):
        _harness_venv(session, venvs / name, ENVS / f"{name}.txt", module, torch)
    session.env["MVLSIB_HARNESS_VENVS"] = str(venvs)
    _pytest(session, "harness", "--tier", "all")


@nox.session(python=PYTHON)
def vllm(session: nox.Session) -> None:
    """The evaluator against real vLLM servers (tests/vllm_engine/). The engine lives in a venv of its own
    (its transformers pin excludes ours), the evaluator in this session's, as a user runs them.
    One pytest worker: each server takes both cores while it starts, and a second worker would
    start every family's server again."""
    session.install("-e", ".[eval,test]", *TORCH)
    engine = Path(session.virtualenv.location).parent / "vllm-engine"
    _harness_venv(session, engine, ENVS / "vllm.txt", "vllm", torch=False)
    session.env["MVLSIB_VLLM_PYTHON"] = str(engine / "bin" / "python")
    _pytest(session, "vllm", "--tier", "all", workers="0")


def _harness_venv(session: nox.Session, venv: Path, pins: Path, module: str, torch: bool) -> None:
    stamp = venv / ".mvlsib-stamp"
    digest = subprocess.run(["sha256sum", str(pins)], capture_output=True, text=True, check=True).stdout.split()[0]
    python = venv / "bin" / "python"
    if python.exists() and stamp.exists() and stamp.read_text().strip() == digest:
        return
    session.run("uv", "venv", "-q", "--clear", "-p", PYTHON, str(venv), external=True)
    target = ("--python", str(python))  # not the session's own venv, which nox names in VIRTUAL_ENV
    if torch:
        session.run("uv", "pip", "install", "-q", *target, TORCH[0], external=True)
    session.run("uv", "pip", "install", "-q", *target, "--no-deps", "-r", str(pins), external=True)
    session.run(str(python), "-c", f"import {module}", external=True)
    stamp.write_text(digest + "\n")


@nox.session(python=PYTHON)
def lowest(session: nox.Session) -> None:
    """Every declared lower bound at once: the bounds in pyproject.toml are the ones this passes with.

    The core tier runs with the core alone (its tests check that torch is absent), then the eval tier
    with [eval] added. ``uv pip sync`` makes the (reused) venv exactly the lowest-direct resolution:
    a plain install would keep newer versions left from an earlier run.
    """
    tmp = Path(session.create_tmp())
    for env, extras, extra in (("core", "test", ()), ("eval", "eval,test", FAMILY_EXTRAS)):
        wanted, pins = tmp / f"lowest-{env}.in", tmp / f"lowest-{env}.txt"
        wanted.write_text("\n".join([f"-e {ROOT}[{extras}]", *extra]) + "\n")
        uv = ("uv", "pip", "compile", "-q", "-p", PYTHON, "--resolution", "lowest-direct", str(wanted), "-o", str(pins))
        session.run(*uv, external=True)
        python = str(Path(session.virtualenv.location) / "bin" / "python")
        session.run("uv", "pip", "sync", "-q", "--python", python, str(pins), external=True)
        _pytest(session, env, "--tier", "unit")
        if env == "core":
            _pytest(session, env, *SAME_BYTES)


@nox.session(python="3.12")
def py312(session: nox.Session) -> None:
    _core(session, tier="unit")


@nox.session(python="3.13")
def py313(session: nox.Session) -> None:
    _core(session, tier="unit")
