"""README command 1 from the wheel, as a user runs it: the package index alone, outside any checkout.

The wheel is built by ``uv build`` from a copy of the project files (the build backend comes from
the index, in an isolated build environment) and installed by ``uv pip install`` into a fresh venv
(``uv venv``: no system site packages, no folder of the running interpreter), its dependencies
resolved from the package index alone, as ``pip install mvlsib-build`` does for a user. In a
folder outside any checkout, the venv's ``mvlsib-build`` runs README command 1's build exactly:
it exits 0, gives the known ``instances.jsonl``, and its release equals one built from the
checkout, byte for byte. The venv has none of the [eval] extra's libraries, which proves that
the core install covers ``build``. The wheel holds the package with its data (bundled pool,
schemas, card templates) and nothing of tests/ or tools/.
"""

from __future__ import annotations

import atexit
import email
import hashlib
import json
import shutil
import sys
import zipfile
from pathlib import Path

import pytest
from support import POOL_DIR, REPO
from support.venvs import clean_env, fresh_venv, installed, run, uv

pytestmark = pytest.mark.slow

SIB = REPO.parent / "shared" / "sib-200"
# README command 1's build step, word for word (its `--sib ../shared/sib-200` is this checkout's neighbour).
README_BUILD = ["build", "--sib", str(SIB), "--seed", "0", "--out", "release"]
INSTANCES_SHA256 = "6a62ee051aa5a85970ac33ad2b52ffed051302b47e6130481c7a20b217e62eb9"
HEAVY = ("torch", "torchvision", "transformers", "jinja2", "matplotlib")


def _tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("project")
    shutil.copy(REPO / "pyproject.toml", src)
    shutil.copy(REPO / "README.md", src)
    # tests/ and tools/ come along, so that the check that none of them lands in the wheel means something.
    for folder in ("src", "tests", "tools"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    out = tmp_path_factory.mktemp("dist")
    run([*uv(), "build", "--wheel", "-q", "--python", sys.executable, "--out-dir", out, src], src)
    (whl,) = out.glob("mvlsib_build-*.whl")
    return whl


@pytest.fixture(scope="module")
def venv_python(wheel: Path, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel and the core dependencies, resolved from the package index."""
    return fresh_venv(tmp_path_factory.mktemp("wheel-venv") / "venv", wheel)


def _outside_any_checkout(tmp_path_factory) -> Path:
    """A fresh folder with no pyproject.toml above it (nox puts the test temp folder inside the checkout)."""
    import tempfile

    for base in (tmp_path_factory.getbasetemp(), Path(tempfile.gettempdir()), Path("/tmp"), Path.home()):
        if not any((parent / "pyproject.toml").exists() for parent in [base, *base.parents]):
            folder = Path(tempfile.mkdtemp(prefix="mvlsib-user-", dir=base))
            atexit.register(shutil.rmtree, folder, True)  # outside pytest's temp folders: removed here
            return folder
    raise AssertionError("no temporary folder outside a checkout")


@pytest.fixture(scope="module")
def readme_build(venv_python: Path, tmp_path_factory, sib_dir: Path) -> tuple[Path, str]:
    """README command 1's build, by the venv's console script, in a folder outside any checkout."""
    assert sib_dir == SIB
    user = _outside_any_checkout(tmp_path_factory)
    proc = run([venv_python.parent / "mvlsib-build", *README_BUILD], user, clean_env(), timeout=600)
    return user / "release", proc.stdout


def test_core_requirements_have_no_torch(wheel: Path):
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = email.message_from_bytes(zf.read(meta_name))
    requires = meta.get_all("Requires-Dist")
    core = [r for r in requires if "extra ==" not in r]
    eval_extra = [r for r in requires if 'extra == "eval"' in r]
    heavy = ("torch", "transformers", "matplotlib", "safetensors")
    assert not [r for r in core if r.split(">")[0].split("=")[0].strip() in heavy], core
    assert {r.split(">")[0] for r in eval_extra} >= {"torch", "transformers", "matplotlib"}
    assert not [r for r in requires if r.startswith(("pydantic", "safetensors")) and "extra" not in r]


def test_wheel_ships_the_product_and_its_data_but_no_tools_or_fixtures(wheel: Path):
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    # The default pool (byte for byte as in the checkout), the schemas and the card's files ship as package data.
    pool_files = sorted(p for p in POOL_DIR.rglob("*") if p.is_file() and p.suffix in (".png", ".csv"))
    assert len(pool_files) == 71  # 70 pictograms and manifest.csv
    with zipfile.ZipFile(wheel) as zf:
        for path in pool_files:
            assert zf.read(f"mvlsib/data/image_pool/{path.relative_to(POOL_DIR).as_posix()}") == path.read_bytes()
    assert {"mvlsib/schema/" + p.name for p in (REPO / "src/mvlsib/schema").glob("*.json")} <= set(names)
    templates = REPO / "src/mvlsib/release/card/templates"
    assert {f"mvlsib/release/card/templates/{p.name}" for p in templates.iterdir() if p.is_file()} <= set(names)
    assert "mvlsib/release/card/templates/sampling.md" in names
    # Test fixtures, their chat templates and the pictogram drawer live in tests/ and tools/, outside the wheel.
    assert not [n for n in names if n.startswith(("mvlsib/testing/", "tests/", "tools/", "tiny_models/"))]
    assert not [n for n in names if n.endswith(".jinja")]
    assert not [n for n in names if n.rsplit("/", 1)[-1] in ("demo.py", "demo_pool.py") or "pictograms" in n]
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"mvlsib"}


def test_the_venv_is_the_core_install_from_the_wheel(venv_python: Path, tmp_path: Path):
    names = installed(venv_python)
    assert "mvlsib-build" in names and {"pyarrow", "click", "datasets"} <= names
    assert not names & set(HEAVY), names & set(HEAVY)
    # mvlsib comes from the wheel in the venv: no editable install, no folder of the test interpreter.
    code = "import mvlsib, sys; print(mvlsib.__file__); print('\\n'.join(sys.path))"
    where, *path = run([venv_python, "-c", code], tmp_path).stdout.splitlines()
    venv = venv_python.parent.parent
    assert Path(where).is_relative_to(venv), f"mvlsib came from {where}, not the wheel"
    base = Path(sys.base_prefix)
    assert all(Path(p).is_relative_to(venv) or Path(p).is_relative_to(base) for p in path if p), path
    assert not [p for p in path if "site-packages" in p and not Path(p).is_relative_to(venv)], path


def test_readme_command_1_from_the_wheel(readme_build: tuple[Path, str]):
    release, stdout = readme_build
    # `build` keeps its work folder (and so instances.jsonl) only with --workdir; it prints the file's
    # hash, and the release's manifest records it.
    assert f"instances.jsonl sha256: {INSTANCES_SHA256}" in stdout
    manifest = json.loads((release / "manifest.json").read_text("utf-8"))
    assert manifest["build"]["instances_sha256"] == INSTANCES_SHA256
    assert "Hash key." in (release / "README.md").read_text("utf-8")  # the sampling procedure made it into the card


def test_wheel_build_equals_checkout_build(readme_build: tuple[Path, str], tmp_path: Path):
    release, _ = readme_build
    wheel_files = _tree_hashes(release)
    run([sys.executable, "-m", "mvlsib", *README_BUILD], tmp_path, clean_env(PYTHONPATH=str(REPO / "src")))
    checkout_files = _tree_hashes(tmp_path / "release")
    assert "README.md" in wheel_files and any(p.startswith("data/images/") for p in wheel_files)
    assert wheel_files == checkout_files


def test_help_from_the_wheel(venv_python: Path, tmp_path: Path):
    scripts = venv_python.parent
    for cmd in (["mvlsib-build", "--help"], ["mvlsib-build", "build", "--help"], ["mvlsib-eval", "--help"]):
        proc = run([scripts / cmd[0], *cmd[1:]], tmp_path)
        assert "Usage:" in proc.stdout
