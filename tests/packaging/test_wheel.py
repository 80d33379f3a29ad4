"""A release built from a wheel install, outside any checkout, equals one built from the checkout.

The wheel is built from a copy of the project files (no network: ``--no-build-isolation``,
``--no-index``) and installed with ``--no-deps`` into a fresh venv that sees the running
interpreter's site-packages (a virtualenv's own, if the tests run in one) for the dependencies. The wheel's build runs with torch, transformers and
matplotlib made unimportable, which proves the core install covers ``build``. The wheel holds
the package with its data (bundled pool, schemas, card templates) and nothing of tests/ or tools/.
"""

from __future__ import annotations

import email
import hashlib
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from support import POOL_DIR, REPO

pytestmark = pytest.mark.slow

LANGS = "eng_Latn,fra_Latn"
# These behave as not installed: `import torch` fails and `importlib.util.find_spec("torch")` is
# None (what libraries such as `datasets` probe), exactly as in a core-only install.
BLOCK_HEAVY = """
import sys
for _name in ("torch", "transformers", "matplotlib", "torchvision"):
    sys.modules[_name] = None
"""


def _tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _clean_env() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("project")
    shutil.copy(REPO / "pyproject.toml", src)
    shutil.copy(REPO / "README.md", src)
    # tests/ and tools/ come along, so that the check that none of them lands in the wheel means something.
    for folder in ("src", "tests", "tools"):
        shutil.copytree(REPO / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    out = tmp_path_factory.mktemp("dist")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            ".",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(out),
        ],
        src,
        _clean_env(),
    )
    (whl,) = out.glob("mvlsib_build-*.whl")
    return whl


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


def test_wheel_build_equals_checkout_build(wheel: Path, tmp_path: Path, sib_dir: Path):
    venv = tmp_path / "venv"
    env = _clean_env()
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, env)
    py = venv / "bin" / "python"
    # The dependencies come from the interpreter running the tests: a path file lists its site
    # folders. `--system-site-packages` would not do: inside a user's virtualenv it means the base
    # interpreter's packages, not the virtualenv's. Plain path lines do not process the .pth files
    # found there, so the checkout's editable install stays out and mvlsib comes from the wheel.
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, env)
    Path(purelib.stdout.strip(), "_test_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    # The venv gets no pip of its own (creating one copies ~15 MB); the system pip installs into it
    # through `--python` (pip >= 22.3).
    _run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        tmp_path,
        env,
    )
    outside = tmp_path / "user"
    outside.mkdir()
    where = _run([str(py), "-c", "import mvlsib; print(mvlsib.__file__)"], outside, env).stdout.strip()
    assert where.startswith(str(venv)), f"mvlsib came from {where}, not the wheel"

    build_args = ["build", "--sib", str(sib_dir), "--seed", "0", "--out", "rel", "--languages", LANGS]
    _run(
        [str(py), "-c", BLOCK_HEAVY + "from mvlsib.cli import build_cli\nbuild_cli(sys.argv[1:])", *build_args],
        outside,
        env,
    )
    wheel_files = _tree_hashes(outside / "rel")

    checkout_env = dict(env, PYTHONPATH=str(REPO / "src"))
    _run([sys.executable, "-m", "mvlsib", *build_args], tmp_path, checkout_env)
    checkout_files = _tree_hashes(tmp_path / "rel")

    assert "README.md" in wheel_files and any(p.startswith("data/images/") for p in wheel_files)
    assert wheel_files == checkout_files
    card = (outside / "rel" / "README.md").read_text("utf-8")
    assert "Hash key." in card  # the sampling procedure made it into the card


def test_help_without_heavy_libraries():
    code = (
        BLOCK_HEAVY
        + "from mvlsib.cli import build_cli, eval_cli\n"
        + (
            "for cli, args in ((build_cli, ['--help']), (build_cli, ['build', '--help']), (eval_cli, ['--help'])):\n"
            "    try:\n        cli(args)\n    except SystemExit as e:\n        assert e.code == 0, e.code\n"
        )
    )
    proc = _run([sys.executable, "-c", code], REPO, dict(_clean_env(), PYTHONPATH=str(REPO / "src")))
    assert "Usage:" in proc.stdout
