"""A command killed with SIGKILL while writing its output folder, then run again: the re-run
completes, removes every temporary file the killed one left (and nothing else), and still refuses a
file the user placed there. The kill is real: the child sends itself SIGKILL just before renaming
one chosen output into place (no cleanup code of ours can run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import subprocess_env
from support.planted import planted_records, write_run

from mvlsib.atomic import LEDGER
from mvlsib.cli import eval_cli

# Runs the evaluator's CLI, and SIGKILLs itself when an output named argv[1] is about to be
# renamed into place (the moment a temporary file exists beside finished outputs).
KILL_AT = r"""
import os, signal, sys
target = sys.argv.pop(1)
real = os.replace
def replace(src, dst, *a, **k):
    if os.path.basename(str(dst)) == target:
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *a, **k)
os.replace = replace
from mvlsib.cli import eval_cli
eval_cli(prog_name="mvlsib-eval")
"""

# report without matplotlib writes these, in this order (the ledger is rewritten around each)
REPORT_FILES = ["per_language.csv", "macro.csv", "groups.csv", "languages.csv", "leaderboard.md", "report.md", LEDGER]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("runs")
    return [
        write_run(tmp / "a", planted_records(0.6, n=20, seed=1), model="a"),
        write_run(tmp / "b", planted_records(0.4, n=20, seed=2), model="b"),
    ]


def _killed(args: list, at: str) -> None:
    env = subprocess_env(MPLBACKEND="Agg")
    res = subprocess.run(
        [sys.executable, "-c", KILL_AT, at, *map(str, args)], env=env, capture_output=True, timeout=120
    )
    assert res.returncode == -9, res.stderr.decode()


def _listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _temps(folder: Path) -> list[str]:
    return [name for name in _listing(folder) if name.endswith(".tmp")]


@pytest.mark.parametrize("over_an_earlier_report", [False, True], ids=["fresh", "over-earlier"])
@pytest.mark.parametrize("at", REPORT_FILES)
def test_report_killed_mid_write_then_rerun_cleans_its_temporaries(runs, tmp_path, at, over_an_earlier_report):
    out = tmp_path / "report"
    args = ["report", *runs, "--out", out]
    clean = tmp_path / "clean"
    assert CliRunner().invoke(eval_cli, ["report", *map(str, runs), "--out", str(clean)]).exit_code == 0
    if over_an_earlier_report:
        assert CliRunner().invoke(eval_cli, list(map(str, args))).exit_code == 0
    before = _listing(out) if out.exists() else None
    _killed(args, at)
    # The report is written in a stage beside the folder: the kill leaves it there, the folder as it was.
    stages = list(tmp_path.glob(".report.partial-*"))
    assert stages and any(_temps(st) or list(st.iterdir()) for st in stages), "the kill left no stage behind"
    assert (_listing(out) if out.exists() else None) == before

    rerun = CliRunner().invoke(eval_cli, list(map(str, args)))
    assert rerun.exit_code == 0, rerun.output
    assert _temps(out) == [] and not list(tmp_path.glob(".report.partial-*"))
    assert _listing(out) == _listing(clean)
    for name in REPORT_FILES[:-1]:
        assert (out / name).read_bytes() == (clean / name).read_bytes(), name


def test_user_file_still_refused_after_a_kill(runs, tmp_path):
    out = tmp_path / "report"
    args = ["report", *runs, "--out", out]
    assert CliRunner().invoke(eval_cli, list(map(str, args))).exit_code == 0  # an earlier report of its own
    _killed(args, "report.md")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    (out / "macro.csv").write_text("edited by hand", encoding="utf-8")
    rerun = CliRunner().invoke(eval_cli, list(map(str, args)))
    assert rerun.exit_code == 2 and "notes.txt" in rerun.output and "macro.csv" in rerun.output
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (out / "macro.csv").read_text(encoding="utf-8") == "edited by hand"


def test_a_live_writers_temporary_file_is_kept(runs, tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    live = out / f".report.md.{os.getppid()}.abcd1234.tmp"  # our parent runs: a live writer
    live.write_text("busy", encoding="utf-8")
    rerun = CliRunner().invoke(eval_cli, ["report", *map(str, runs), "--out", str(out)])
    assert rerun.exit_code == 2 and live.name in rerun.output
    assert live.read_text(encoding="utf-8") == "busy"


def test_only_atomic_temporary_names_are_removed(runs, tmp_path):
    """A user's file that merely ends in .tmp is not ours: refused, never removed."""
    out = tmp_path / "report"
    out.mkdir()
    theirs = out / ".draft.999999999.tmp"  # no mkstemp part: not a name atomic_path makes
    theirs.write_text("mine", encoding="utf-8")
    rerun = CliRunner().invoke(eval_cli, ["report", *map(str, runs), "--out", str(out)])
    assert rerun.exit_code == 2 and theirs.exists()
