"""The standalone evaluate.py of a release: same code, deterministic, runs without mvlsib."""

from __future__ import annotations

import ast
import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import mvlsib
from mvlsib import readers
from mvlsib.release.bundle import BUNDLE_PACKAGE, bundle_files, bundle_zip, evaluate_script, write_evaluate_script

SRC = Path(mvlsib.__file__).resolve().parent
# The evaluator and mvlsib-eval's commands, copied at their places inside mvlsib.
COPIED = [SRC / "evaluation", SRC / "cli" / "eval", SRC / "cli" / "options.py"]


def _copied_sources() -> set[str]:
    files = [p for part in COPIED for p in ([part] if part.is_file() else [*part.rglob("*.py"), *part.rglob("*.csv")])]
    return {p.relative_to(SRC).as_posix() for p in files if "__pycache__" not in p.parts}


# Runs evaluate.py as __main__ with every `mvlsib` import failing, as on a machine without the toolkit.
BLOCKED_RUNNER = r"""
import runpy, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "mvlsib" or name.startswith("mvlsib."):
            raise ImportError(f"{name} is blocked in this test")
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["evaluate.py", *sys.argv[1:]]
runpy.run_path("evaluate.py", run_name="__main__")
"""


def _written(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_bundle_is_deterministic_and_complete(tmp_path):
    assert bundle_files() == bundle_files()
    a = _written(write_evaluate_script(tmp_path / "a" / "evaluate.py").parent)
    b = _written(write_evaluate_script(tmp_path / "b" / "evaluate.py").parent)
    assert a == b and a["evaluate.py"].decode("utf-8") == evaluate_script()
    files = dict(bundle_files())
    assert {f"{BUNDLE_PACKAGE}/{rel}" for rel in files} | {"evaluate.py"} == set(a)
    for rel in _copied_sources():
        assert a[f"{BUNDLE_PACKAGE}/{rel}"] == (SRC / rel).read_bytes(), rel  # the same code, at the same place
    assert f"__version__ = {mvlsib.__version__!r}" in files["__init__.py"].decode()
    # readable source, no embedded archive
    text = a["evaluate.py"].decode("utf-8")
    assert len(text) < 3000 and "base64" not in text and "zipimport" not in text
    assert all(data.decode("utf-8") for data in a.values())  # every file is UTF-8 text


def test_bundle_zip_is_the_same_package():
    """The one-file form (the lmms-eval export ships it): the same files, fixed timestamps."""
    files = dict(bundle_files())
    with zipfile.ZipFile(io.BytesIO(bundle_zip())) as zf:
        names = zf.namelist()
        assert names == sorted(names)
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert {n.removeprefix(f"{BUNDLE_PACKAGE}/") for n in names} == set(files)
        for rel, data in files.items():
            assert zf.read(f"{BUNDLE_PACKAGE}/{rel}") == data, rel
    assert bundle_zip() == bundle_zip()


def test_bundle_holds_exactly_the_evaluator_and_its_leaves():
    """No test fixture, no bundler, no second copy of a leaf: the evaluator, mvlsib-eval's commands and
    the leaves they use, each at its place in mvlsib, so that every relative import works unchanged."""
    from mvlsib.release.bundle import shared_leaves

    leaves = shared_leaves()

    expected = _copied_sources()
    assert "evaluation/run/data/languages.csv" in expected  # package data the report groups by
    assert {"cli/eval/__init__.py", "cli/options.py"} <= expected  # the commands evaluate.py runs
    # the packages whose own __init__ is not copied (it imports the rest of the toolkit) stand as stubs
    expected |= {"__init__.py", "cli/__init__.py", "schema/__init__.py"}
    expected |= {f"{name}.py" for name in leaves}
    # the schemas of the reader's kinds, in the package the reader finds them in
    schemas = {k.schema for k in readers.KINDS.values() if k.schema}
    expected |= {f"schema/{n}.schema.json" for n in schemas}
    files = dict(bundle_files())
    assert set(files) == expected
    for n in schemas:
        assert files[f"schema/{n}.schema.json"] == (SRC / "schema" / f"{n}.schema.json").read_bytes()
    for name in leaves:
        assert files[f"{name}.py"] == (SRC / f"{name}.py").read_bytes()
    assert not [n for n in files if "tiny" in n or "bundle.py" in n]
    # the stubs import nothing: the bundle's front door is not the toolkit's
    for stub in ("__init__.py", "cli/__init__.py", "schema/__init__.py"):
        assert not [n for n in ast.walk(ast.parse(files[stub])) if isinstance(n, (ast.Import, ast.ImportFrom))], stub
    # the leaves import nothing of mvlsib but each other (relatively: all of them ship at the top,
    # as ``from . import jsonio`` or ``from .errors import ...``), so they run where mvlsib is absent
    for name in leaves:
        tree = ast.parse((SRC / f"{name}.py").read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                assert node.level == 1, name
                assert (node.module in leaves) or (
                    node.module is None and {alias.name for alias in node.names} <= set(leaves)
                ), name
            elif isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("mvlsib"), name


def test_the_bundled_code_imports_only_what_ships(monkeypatch):
    """An import of a part of the toolkit that no release holds is refused when the bundle is made."""
    from mvlsib.release import bundle

    planted = SRC / "cli" / "eval" / "run.py"
    original = bundle._imported_tops
    monkeypatch.setattr(
        bundle, "_imported_tops", lambda path: original(path) | ({"workdir"} if path == planted else set())
    )
    bundle.shared_leaves.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=r"mvlsib\.workdir"):
            bundle.shared_leaves()
    finally:
        bundle.shared_leaves.cache_clear()


def test_release_carries_the_bundled_evaluator(release_dir):
    assert (release_dir / "evaluate.py").read_text("utf-8") == evaluate_script()
    for rel, data in bundle_files():  # one source of truth: the release's copy is the package's code
        assert (release_dir / BUNDLE_PACKAGE / rel).read_bytes() == data, rel


@pytest.mark.eval
def test_evaluate_py_runs_from_release_without_mvlsib(tmp_path, release_dir, tiny_llava):
    rel = tmp_path / "rel"
    shutil.copytree(release_dir, rel)
    args = [
        "--data",
        ".",
        "--model",
        str(tiny_llava),
        "--tasks",
        "i2s,s2i,t2s",
        "--k",
        "1,3",
        "--languages",
        "eng_Latn",
        "--limit",
        "3",
        "--max-new-tokens",
        "1",
        "--device",
        "cpu",
        "--no-progress",
    ]
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUNNER, *args, "--out", str(tmp_path / "bundled")],
        cwd=rel,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "15 new predictions" in proc.stdout  # (i2s k1,k3 + s2i k1,k3 + t2s) x 3
    assert not list(rel.rglob("__pycache__"))  # running it leaves the release folder as it was
    # The blocker really bites: importing mvlsib in the same way fails.
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            BLOCKED_RUNNER.replace('runpy.run_path("evaluate.py", run_name="__main__")', "import mvlsib"),
        ],
        cwd=rel,
        env=env,
        capture_output=True,
        text=True,
    )
    assert check.returncode != 0 and "blocked" in check.stderr
    # Same code, same answers: the installed evaluator gives identical predictions.
    from click.testing import CliRunner

    from mvlsib.cli import eval_cli

    result = CliRunner().invoke(
        eval_cli, ["run", *[a if a != "." else str(rel) for a in args], "--out", str(tmp_path / "installed")]
    )
    assert result.exit_code == 0, result.output

    def strip(path):
        return [{k: v for k, v in json.loads(line).items()} for line in path.read_text("utf-8").splitlines()]

    assert strip(tmp_path / "bundled" / "predictions.jsonl") == strip(tmp_path / "installed" / "predictions.jsonl")
    cfg = json.loads((tmp_path / "bundled" / "config.json").read_text("utf-8"))
    assert cfg["versions"]["mvlsib-build"] == mvlsib.__version__
    # the language table is read from inside the bundle (zipimport), so the bundled metrics group by family
    metrics = json.loads((tmp_path / "bundled" / "metrics.json").read_text("utf-8"))
    assert {g["group"] for g in metrics["groups"]["family"]} == {"Indo-European"}
    assert metrics == json.loads((tmp_path / "installed" / "metrics.json").read_text("utf-8"))
    # help works and names the default command
    proc = subprocess.run(
        [sys.executable, "-c", BLOCKED_RUNNER, "--help"], cwd=rel, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "run" in proc.stdout and "report" in proc.stdout


def test_bundled_cli_reports_errors_cleanly(tmp_path, release_dir):
    """A folder with the evaluator and loader but no data: a clean message, exit 2."""
    rel = tmp_path / "rel"
    rel.mkdir()
    for name in ("evaluate.py", "mvl_sib.py"):
        shutil.copy(release_dir / name, rel / name)
    shutil.copytree(release_dir / BUNDLE_PACKAGE, rel / BUNDLE_PACKAGE)
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            BLOCKED_RUNNER,
            "--data",
            ".",
            "--model",
            "m",
            "--out",
            str(tmp_path / "o"),
            "--languages",
            "eng_Latn",
        ],
        cwd=rel,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "images config is missing" in proc.stderr


def test_the_bundles_import_scan_finds_what_a_full_parse_finds():
    """``bundle._import_nodes`` parses only the lines that start an import (a build parses every bundled file);
    over the whole package it must find every ``from ... import`` a full parse finds."""
    from mvlsib.release.bundle import _import_nodes

    for path in sorted(SRC.rglob("*.py")):
        source = path.read_text("utf-8")
        full = [ast.dump(n) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)]
        fast = [ast.dump(n) for n in _import_nodes(source)]
        assert sorted(fast) == sorted(full), path
