"""Issue #11 defect 16: what a command killed mid-write leaves behind is cleaned by its next run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import subprocess_env

from mvlsib.atomic import atomic_open

KILL_IN_ATOMIC_WRITE = r"""
import os, sys
from mvlsib.atomic import atomic_open
with atomic_open(sys.argv[1]) as fh:
    fh.write("half")
    fh.flush()
    os.kill(os.getpid(), 9)
"""

KILL_IN_PUBLISH_STAGE = r"""
import os, sys
from pathlib import Path
from mvlsib.release.manifest import staged_release
with staged_release(Path(sys.argv[1])) as stage:
    (stage / "part.parquet").write_bytes(b"half")
    os.kill(os.getpid(), 9)
"""


def _killed(script: str, arg: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-c", script, str(arg)], env=subprocess_env(), capture_output=True, timeout=60
    )
    assert res.returncode == -9, res.stderr


def test_temporary_file_of_a_killed_write_is_removed_by_the_next_write(tmp_path: Path):
    target = tmp_path / "metrics.json"
    _killed(KILL_IN_ATOMIC_WRITE, target)
    leftovers = [p.name for p in tmp_path.iterdir()]
    assert len(leftovers) == 1 and leftovers[0].startswith(".metrics.json.") and not target.exists()
    # a live writer's temporary file is left alone
    live = tmp_path / f".metrics.json.{os.getppid()}.abcd.tmp"
    live.write_text("busy")
    with atomic_open(target) as fh:
        fh.write("{}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, "metrics.json"])


def test_stage_of_a_killed_publish_is_removed_by_the_next_publish(tmp_path: Path):
    out = tmp_path / "release"
    _killed(KILL_IN_PUBLISH_STAGE, out)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".release.partial-")]
    from mvlsib.release.manifest import staged_release

    with staged_release(out) as stage:
        (stage / "manifest.json").write_text("{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]
