"""Progress bars draw on a terminal only: a CI log or a pipe gets no redrawn lines."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest
from support import SIB_DIR, subprocess_env

from mvlsib import progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_draws_on_a_terminal_only():
    for stream, enabled, drawn in (
        (_Terminal(), True, True),
        (io.StringIO(), True, False),
        (_Terminal(), False, False),
    ):
        for _ in progress.bar(range(3), enabled=enabled, file=stream, desc="work"):
            pass
        assert ("work" in stream.getvalue()) is drawn, (type(stream).__name__, enabled, stream.getvalue())


def test_a_library_bar_class_follows_the_same_rule(monkeypatch):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with progress.bar_class(True)(range(3), desc="download") as bar:
        list(bar)
    assert sys.stderr.getvalue() == ""


@pytest.mark.usefixtures("sib_dir")
def test_a_build_into_a_pipe_writes_no_cursor_movements(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "mvlsib", "build", "--sib", str(SIB_DIR), "--languages", "eng_Latn,fra_Latn",
         "--out", str(tmp_path / "release"), "--workdir", str(tmp_path / "work")],
        env=subprocess_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\r" not in done.stderr and "\x1b[" not in done.stderr, done.stderr[-2000:]
    assert "instances.jsonl sha256" in done.stdout
