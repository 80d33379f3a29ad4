"""A folder a command makes anew (``atomic.staged_folder``: releases, exports, batches, reports) has
one maker at a time: while another process holds it, a command is refused at once, naming the
holder, and writes nothing (two that both replaced it would both report success, one result lost).
Another process is stood in for by the lock itself, taken here on its own descriptor."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from support.cli_contract import refused
from support.other_holder import held_elsewhere

from mvlsib import atomic
from mvlsib.cli import build_cli, eval_cli
from mvlsib.errors import MvlsibError


def _nothing_placed(out: Path) -> None:
    """The ledger rule of a folder nobody else writes in (these tests' own folders)."""


COMMANDS = {
    "build": (build_cli, "build", "--sib", "{sib}", "--languages", "eng_Latn", "--out", "{out}", "--no-progress"),
    "export": (build_cli, "export", "vlmevalkit", "--release", "{rel}", "--out", "{out}"),
    "batch-prepare": (
        eval_cli,
        "batch",
        "prepare",
        "--data",
        "{rel}",
        "--model",
        "m",
        "--limit",
        "1",
        "--out",
        "{out}",
    ),
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_second_maker_is_refused_at_once(name, sib_dir, release_dir, tmp_path):
    cli, *args = COMMANDS[name]
    out = tmp_path / "out"
    args = [a.format(sib=sib_dir, rel=release_dir, out=out) for a in args]
    with held_elsewhere(tmp_path, ".out.lock"):
        line = refused(CliRunner().invoke(cli, args))
    assert "is being written by another command" in line and "pid " in line, line
    assert not out.exists()


def test_the_lock_is_gone_when_the_maker_ends(tmp_path):
    out = tmp_path / "made"
    with atomic.staged_folder(out, check=_nothing_placed) as stage:
        (stage / "f").write_text("x")
        assert (tmp_path / ".made.lock").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["made"]


def test_one_process_may_hold_it_across_steps(tmp_path):
    """A build holds its release folder from the start; its publish step's stage is the same maker."""
    out = tmp_path / "made"
    with atomic.replacing(out), atomic.staged_folder(out, check=_nothing_placed) as stage:
        (stage / "f").write_text("x")
    assert (Path(out) / "f").read_text() == "x"


def _plant(tmp_path: Path, kind: str) -> Path:
    lock = tmp_path / ".out.lock"
    mine = tmp_path / "notes.txt"
    mine.write_text("my notes\n")
    if kind == "symlink-to-a-users-file":
        lock.symlink_to(mine)
    elif kind == "dangling-symlink":
        lock.symlink_to(tmp_path / "nowhere")
    elif kind == "fifo":
        import os

        os.mkfifo(lock)
    elif kind == "users-file":
        lock.write_text("my own .out.lock\n")
    elif kind == "folder":
        lock.mkdir()
    return mine


@pytest.mark.parametrize("kind", ["symlink-to-a-users-file", "dangling-symlink", "fifo", "users-file", "folder"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_what_stands_where_the_lock_goes_is_refused_and_kept(name, kind, sib_dir, release_dir, tmp_path):
    """A symlink is never followed (a planted link would have the lock overwrite its target), and a
    file that is not a lock of ours is neither truncated nor removed: one line naming the path."""
    mine = _plant(tmp_path, kind)
    before = {p.name: (p.is_symlink(), p.is_dir()) for p in tmp_path.iterdir()}
    cli, *args = COMMANDS[name]
    out = tmp_path / "out"
    args = [a.format(sib=sib_dir, rel=release_dir, out=out) for a in args]
    line = refused(CliRunner().invoke(cli, args))
    assert ".out.lock" in line, line
    assert mine.read_text() == "my notes\n" and not out.exists()
    assert {p.name: (p.is_symlink(), p.is_dir()) for p in tmp_path.iterdir()} == before
    if kind == "users-file":
        assert (tmp_path / ".out.lock").read_text() == "my own .out.lock\n"


def test_a_lock_left_by_a_killed_maker_is_taken_over(tmp_path):
    (tmp_path / ".made.lock").write_text("pid 999999 on host: mvlsib-build build --out made\n")
    with atomic.staged_folder(tmp_path / "made", check=_nothing_placed) as stage:
        (stage / "f").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["made"]


def test_the_lock_is_gone_when_the_maker_fails(tmp_path):
    with pytest.raises(RuntimeError), atomic.staged_folder(tmp_path / "made", check=_nothing_placed):
        raise RuntimeError("the work failed")
    assert list(tmp_path.iterdir()) == []


def test_the_ledger_rule_runs_under_the_lock_before_anything_moves(tmp_path):
    """``staged_folder``'s check is required and runs with the lock held: a file placed between a
    command's early look and its replace is found, and ``out`` is left as it was."""
    out = tmp_path / "made"
    out.mkdir()
    (out / "mine.txt").write_text("precious")
    seen = []

    def check(folder: Path) -> None:
        seen.append((tmp_path / f".{folder.name}.lock").exists())  # the lock is held while it looks
        if (folder / "mine.txt").exists():
            raise atomic.MvlsibError(f"{folder}: holds mine.txt")

    with pytest.raises(atomic.MvlsibError, match="mine.txt"), atomic.staged_folder(out, check=check):
        pytest.fail("the block must not run")
    assert seen == [True] and (out / "mine.txt").read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["made"]  # no stage, no lock left
    with pytest.raises(TypeError):
        atomic.staged_folder(out).__enter__()  # type: ignore[call-arg]


def test_the_stage_of_a_killed_maker_is_removed_even_while_it_is_a_zombie(tmp_path):
    """A container's init may never reap a process killed with -9: it still answers a signal."""
    import subprocess
    import time

    child = subprocess.Popen(["sleep", "0"])
    try:
        time.sleep(0.3)  # exited, not yet reaped: a zombie
        stage = tmp_path / f".made.partial-{child.pid}"
        stage.mkdir()
        (stage / "half.bin").write_bytes(b"x")
        assert not atomic.process_alive(child.pid)
        with atomic.staged_folder(tmp_path / "made", check=_nothing_placed) as new:
            (new / "whole.bin").write_bytes(b"y")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["made"]
    finally:
        child.wait()


def _spellings(tmp_path: Path) -> dict[str, Path]:
    """One folder ``real/made``, named five ways."""
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to("real", target_is_directory=True)
    (tmp_path / "made-link").symlink_to("real/made")
    return {
        "plain": tmp_path / "real" / "made",
        "symlinked-parent": tmp_path / "linked" / "made",
        "dot-dot": tmp_path / "real" / ".." / "linked" / "made",
        "relative-dot": tmp_path / "real" / "." / "made",
        "symlink-to-it": tmp_path / "made-link",
    }


SPELLINGS = ["plain", "symlinked-parent", "dot-dot", "relative-dot", "symlink-to-it"]


@pytest.mark.parametrize("second", SPELLINGS)
@pytest.mark.parametrize("first", SPELLINGS)
def test_one_process_recognises_its_lock_by_any_spelling(first, second, tmp_path, monkeypatch):
    """Every lock is keyed by the real path: a build that holds ``linked/rel`` and stages ``real/rel``
    once refused itself, naming its own pid."""
    ways = _spellings(tmp_path)
    monkeypatch.chdir(tmp_path)
    with atomic.replacing(ways[first]), atomic.staged_folder(ways[second], check=_nothing_placed) as stage:
        (stage / "f").write_text("x")
    assert (tmp_path / "real" / "made" / "f").read_text() == "x"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["made"]  # no lock, no stage left


@pytest.mark.parametrize("second", SPELLINGS)
def test_another_holder_is_refused_by_any_spelling(second, tmp_path):
    """Two spellings are one lock for another holder too (here another thread: its own descriptor)."""
    ways = _spellings(tmp_path)
    with held_elsewhere(tmp_path / "real", ".made.lock"):
        with pytest.raises(MvlsibError, match="being written by another command"):
            with atomic.staged_folder(ways[second], check=_nothing_placed):
                pass
    assert not (tmp_path / "real" / "made").exists()


@pytest.mark.parametrize("placed", ["file", "nested-file", "folder-made"])
def test_what_reaches_the_folder_during_the_work_is_refused_not_deleted(placed, tmp_path):
    """The ledger rule runs again just before the replace: a file a writer that does not take the lock
    (or the user) put into ``out`` while the stage was built is refused and kept, never moved aside."""
    out = tmp_path / "made"
    if placed != "folder-made":
        out.mkdir()

    def empty(folder: Path) -> None:
        if folder.exists() and any(folder.iterdir()):
            raise MvlsibError(f"{folder}: not empty")

    rel = {"file": "mine.txt", "nested-file": "sports/sports_0.jpg", "folder-made": "mine.txt"}[placed]
    with pytest.raises(MvlsibError, match="not empty"):
        with atomic.staged_folder(out, check=empty) as stage:
            (stage / "theirs").write_text("the command's\n")
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text("placed meanwhile\n")
    assert (out / rel).read_text() == "placed meanwhile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["made"]  # no stage, no lock, nothing moved aside
