"""The files an image-pool command reads or keeps beside the pool (``--allow-list``, ``--hash-cache``)
and the pool's own images, fed what is not a plain file of the right kind: each is one line naming
the file (no hang on a FIFO, no traceback, no whole /dev/zero in memory), and a file that is not
ours is never replaced."""

from __future__ import annotations

import os
import shutil
import socket
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.cli_contract import refused

from mvlsib import limits
from mvlsib.cli import build_cli


def _plant(kind: str, path: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        # bound by its name from inside its folder: a socket path is limited to 107 bytes, and a
        # clean clone's tmp_path can be longer than that
        here = os.getcwd()
        os.chdir(path.parent)
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(path.name)
        finally:
            os.chdir(here)
    elif kind == "dangling-symlink":
        path.symlink_to(path.parent / "nowhere")
    elif kind == "symlink-to-dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "not-utf8":
        path.write_bytes(b"CC-BY-4.0\n\xff\xfe\n")
    elif kind == "escape-line":
        path.write_bytes(b"CC-BY-4.0\n\x1b]0;owned\x07CC0-1.0\n")
    elif kind == "huge":
        with open(path, "wb") as fh:
            fh.truncate(limits.MAX_TEXT_LINE_BYTES + 1)
    else:
        raise AssertionError(kind)


ALLOW_LIST_FAULTS = ["fifo", "symlink-to-dev-zero", "not-utf8", "escape-line", "huge"]
HASH_CACHE_FAULTS = ["fifo", "socket", "dangling-symlink", "symlink-to-dev-zero"]


@pytest.mark.parametrize("command", ["check", "gallery"])
@pytest.mark.parametrize("kind", ALLOW_LIST_FAULTS)
def test_an_allow_list_that_is_not_a_text_file_is_one_line(command, kind, pool_dir, tmp_path):
    path = tmp_path / "allow.txt"
    _plant(kind, path)
    args = ["images", command, "--pool", str(pool_dir), "--allow-list", str(path)]
    if command == "gallery":
        args += ["--out", str(tmp_path / "gallery")]
    line = refused(CliRunner().invoke(build_cli, args))
    assert "allow.txt" in line and "\x1b" not in line, line
    assert not (tmp_path / "gallery").exists()


@pytest.mark.parametrize("kind", HASH_CACHE_FAULTS)
def test_a_hash_cache_that_is_not_a_regular_file_is_never_replaced(kind, pool_dir, tmp_path):
    path = tmp_path / "hashes.json"
    _plant(kind, path)
    before = os.lstat(path)
    line = refused(
        CliRunner().invoke(build_cli, ["images", "check", "--pool", str(pool_dir), "--hash-cache", str(path)])
    )
    assert "--hash-cache" in line and "not a regular file" in line, line
    after = os.lstat(path)
    assert (after.st_ino, stat.S_IFMT(after.st_mode)) == (before.st_ino, stat.S_IFMT(before.st_mode))


def test_a_pool_image_beyond_the_bound_is_a_finding_not_a_whole_read(pool_dir, tmp_path):
    """A sparse file of 2 GB where an image belongs: named, never read whole."""
    pool = tmp_path / "pool"
    shutil.copytree(pool_dir, pool)
    victim = next(p for p in sorted(pool.rglob("*")) if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp"))
    with open(victim, "r+b") as fh:
        fh.truncate(2 * 1024**3)
    result = CliRunner().invoke(build_cli, ["images", "check", "--pool", str(pool)])
    assert result.exit_code == 1, result.output  # the pool has a fault: check reports it
    assert victim.name in result.output and f"over {limits.MAX_IMAGE_FILE_BYTES:,} bytes" in result.output
    assert "Traceback" not in result.output
