"""A folder's ledger (``.mvlsib-outputs.json``) under concurrent writers: one locked read-modify-write.

Commands writing files of different names into one folder at once (``--out r/a.md`` and
``--out r/b.md``) each read the ledger, add their entry and write it back; unlocked, the last writer
wins and the others' entries are lost, so their re-runs are refused as if the files were the user's.
``atomic._update_ledger`` holds the folder's ledger lock from the read to the rename; every writer of
the ledger goes through it (the AST check below), and the processes below race every kind of writer
with the read widened, so an unlocked path loses entries on every run.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from click.testing import CliRunner
from support import REPO, subprocess_env

from mvlsib import atomic
from mvlsib.cli import build_cli

# A writer process: waits for the start signal, then writes its file(s) with the ledger read slowed
# down (the window in which an unlocked writer loses the others' entries).
WRITER = r"""
import sys, time
from pathlib import Path
from mvlsib import atomic

kind, folder, name, go = sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
read = atomic._read_ledger_data
def slow(folder):
    data = read(folder)
    time.sleep(0.05)
    return data
atomic._read_ledger_data = slow
while not go.exists():
    time.sleep(0.005)
if kind == "output_file":
    with atomic.output_file(folder / name, "mvlsib-build images credits") as fh:
        fh.write(name)
elif kind == "owned_files":
    with atomic.owned_files(folder, [name, name + ".extra"], "mvlsib-build ingest"):
        for n in (name, name + ".extra"):
            with atomic.atomic_open(folder / n) as fh:
                fh.write(n)
"""

KINDS = ["output_file", "owned_files", "mixed"]


@pytest.mark.parametrize("kind", KINDS)
def test_concurrent_writers_keep_every_entry(kind, tmp_path):
    folder, go = tmp_path / "r", tmp_path / "go"
    folder.mkdir()
    names = [f"c{i}.md" for i in range(6)]
    kinds = [kind if kind != "mixed" else KINDS[i % 2] for i in range(len(names))]
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, k, str(folder), n, str(go)], env=subprocess_env())
        for k, n in zip(kinds, names, strict=True)
    ]
    go.touch()
    assert [p.wait(120) for p in procs] == [0] * len(procs)
    expected = {
        n for k, n in zip(kinds, names, strict=True) for n in ([n] if k == "output_file" else [n, n + ".extra"])
    }
    assert set(atomic.read_ledger(folder)) == expected
    assert sorted(p.name for p in folder.iterdir()) == sorted(expected | {atomic.LEDGER})  # no lock left
    for n in sorted(expected):  # each file is known as written by us, so its writer may replace it again
        atomic.refuse_theirs(folder, [n])


def test_concurrent_commands_may_each_rerun(tmp_path):
    """The commands themselves (``images credits --out r/cN.md``), raced, then each run again."""
    folder = tmp_path / "r"
    folder.mkdir()
    cmd = [sys.executable, "-m", "mvlsib", "images", "credits", "--out"]
    procs = [subprocess.Popen([*cmd, str(folder / f"c{i}.md")], env=subprocess_env()) for i in range(6)]
    assert [p.wait(120) for p in procs] == [0] * 6
    assert len(atomic.read_ledger(folder)) == 6
    for i in range(6):
        res = CliRunner().invoke(build_cli, ["images", "credits", "--out", str(folder / f"c{i}.md")])
        assert res.exit_code == 0, res.output


def _ledger_writes(tree: ast.AST) -> list[tuple[str, int]]:
    """(enclosing function, line) of every call that opens or replaces a path naming ``LEDGER``."""
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in WRITES:
                if any("LEDGER" in ast.unparse(a) and "LEDGER_LOCK" not in ast.unparse(a) for a in node.args):
                    found.append((fn.name, node.lineno))
    return found


WRITES = {"atomic_open", "atomic_path", "open", "replace", "rename", "write_text", "write_bytes", "unlink"}


def test_the_ledger_is_written_in_one_place():
    writes = []
    for path in sorted((REPO / "src" / "mvlsib").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        writes += [(path.name, fn, line) for fn, line in _ledger_writes(tree)]
    assert [(f, fn) for f, fn, _ in writes] == [("atomic.py", "_update_ledger")], writes


def test_the_walk_finds_a_ledger_write():
    tree = ast.parse("def f(folder):\n    with atomic_open(folder / LEDGER) as fh:\n        pass\n")
    assert _ledger_writes(tree) == [("f", 2)]
