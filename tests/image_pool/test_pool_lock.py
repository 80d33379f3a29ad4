"""One lock for every writer of an image pool (``pool_manifest.pool_lock``), enforced.

``images import-release --pool P`` makes P anew in a stage and renames it into place; an
``images add --pool P`` that finished meanwhile once reported success and then lost its image with
the old folder (it took a lock inside P, the import one beside it). Every pool writer now holds the
one lock beside the pool, the one ``atomic.staged_folder`` takes: walked from the command tree (every
``--pool`` a command may create) and the demo-pool tool, each is refused while another holds it, and
an add during a real import is either kept or refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support import subprocess_env
from support.cli_contract import changed, refused, scene_state
from support.cli_tree import commands
from support.other_holder import held_elsewhere

from mvlsib import locks
from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError
from mvlsib.workdir import pool_manifest
from mvlsib.workdir.pool_manifest import read_manifest


def _pool_writers() -> set[str]:
    """Commands with a --pool they may create: the writers of a pool."""
    return {
        where
        for where, cmd in commands()
        for p in cmd.params
        if p.opts[0] == "--pool" and isinstance(p.type, click.Path) and not p.type.exists and not p.type.file_okay
    }


def _upstream(base: Path, photos: Path) -> tuple[Path, Path]:
    """An upstream release's image folder of the real photographs of six topics, and its licence CSV."""
    up = base / "up" / "data" / "images" / "sib200"
    up.mkdir(parents=True)
    lines = ["file,license,author,source_url"]
    for topic in ("sports", "travel", "health", "politics", "geography", "entertainment"):
        for i, photo in enumerate(sorted(p for p in (photos / topic).iterdir() if p.suffix == ".jpg")):
            shutil.copyfile(photo, up / f"{topic}_{i}.jpg")
            lines.append(f"{topic}_{i}.jpg,CC0-1.0,A,https://example.org/{topic}{i}")
    (base / "lic.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return base / "up", base / "lic.csv"


def _photo(photos: Path) -> Path:
    return next(p for p in sorted((photos / "science_technology").iterdir()) if p.suffix == ".jpg")


def _writers(base: Path, photos: Path) -> dict[str, object]:
    """writer -> how to run it into the pool P (a callable giving a click result or raising)."""
    from tools.pictograms import write_demo_pool

    def cli(*args):
        return lambda pool: CliRunner().invoke(build_cli, [str(a).replace("{P}", str(pool)) for a in args])

    up, lic = (base / "up", base / "lic.csv")
    return {
        "mvlsib-build images add": cli("images", "add", _photo(photos), "--pool", "{P}", "--topic",
                                       "science/technology", "--license", "CC0-1.0"),
        "mvlsib-build images import-release": cli("images", "import-release", up, "--licences", lic, "--pool", "{P}",
                                                  "--no-progress"),
        "tools/demo_pool.py": lambda pool: write_demo_pool(pool, progress=False),
    }  # fmt: skip


WRITERS = ["mvlsib-build images add", "mvlsib-build images import-release", "tools/demo_pool.py"]


def test_every_pool_writer_is_walked(tmp_path, topic_photos_dir):
    assert _pool_writers() | {"tools/demo_pool.py"} == set(_writers(tmp_path, topic_photos_dir)) == set(WRITERS)


@pytest.mark.parametrize("existing", [False, True], ids=["new-pool", "existing-pool"])
@pytest.mark.parametrize("writer", WRITERS)
def test_a_pool_writer_waits_for_the_pool_lock_then_stops_naming_the_holder(
    writer, existing, tmp_path, topic_photos_dir, monkeypatch
):
    _upstream(tmp_path, topic_photos_dir)
    pool = tmp_path / "P"
    if existing:
        pool.mkdir()  # empty: every writer may write there (import-release refuses any other at once)
    monkeypatch.setattr(pool_manifest, "POOL_LOCK_WAIT_S", 0.3)
    run = _writers(tmp_path, topic_photos_dir)[writer]
    key = locks.canonical(pool)
    with held_elsewhere(key.parent, f".{key.name}.lock", remove=True):
        before = scene_state(tmp_path)
        start = time.monotonic()
        try:
            res = run(pool)
        except MvlsibError as exc:
            line = str(exc)
        else:
            line = refused(res, moved=changed(before, scene_state(tmp_path)))
        assert time.monotonic() - start < 30
        assert scene_state(tmp_path) == before
    assert "being written by another command" in line and f"pid {os.getpid()}" in line, line


def test_an_add_during_an_import_is_kept_or_refused(tmp_path, topic_photos_dir):
    """The race as it happens: an import at work (its stage there), an add into the same pool."""
    up, lic = _upstream(tmp_path, topic_photos_dir)
    pool = tmp_path / "P"
    cmd = [sys.executable, "-m", "mvlsib", "images", "import-release", str(up), "--licences", str(lic)]
    imp = subprocess.Popen([*cmd, "--pool", str(pool), "--no-progress"], env=subprocess_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.startswith(".P.partial") for p in tmp_path.iterdir()):
            assert time.monotonic() < deadline and imp.poll() is None, "the import never started its stage"
            time.sleep(0.02)
        add = CliRunner().invoke(
            build_cli,
            ["images", "add", str(_photo(topic_photos_dir)), "--pool", str(pool), "--topic", "science/technology",
             "--license", "CC0-1.0"],
        )  # fmt: skip
    finally:
        out, _ = imp.communicate(timeout=300)
    ids = {r.image_id for r in read_manifest(pool)}
    if add.exit_code == 0 and imp.returncode == 0:
        assert "science_technology_0" in ids, (add.output, out)
        assert (pool / "science_technology" / "science_technology_0.jpg").is_file()
    else:
        assert add.exit_code == 2 or imp.returncode == 2, (add.output, out)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".lock") or ".partial" in p.name]
