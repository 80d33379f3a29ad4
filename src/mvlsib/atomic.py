"""Write files so that a crash never leaves a half-written output behind."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` only on success."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target.parent, f".{target.name}.", ".tmp")
    # The writer's pid is in the name, so a later run can tell a killed writer's leftover from a live one's.
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp creates 0600 files; outputs should get the permissions a plain open() would give.
    os.chmod(tmp_path, 0o666 & ~_umask())
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs) -> Iterator[IO]:
    """``open`` for writing whose result appears at ``path`` only when the block succeeds."""
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
        kwargs.setdefault("newline", "\n")
    with atomic_path(path) as tmp:
        with open(tmp, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


def remove_stale(folder: Path, prefix: str, suffix: str = "") -> list[Path]:
    """Remove ``prefix<pid><sep>...suffix`` leftovers in ``folder`` whose process no longer runs.

    What a command killed mid-write (``kill -9``, power loss) leaves behind; the next run of the
    same command cleans it. Entries of live processes (a concurrent writer) are kept.
    """
    removed: list[Path] = []
    pattern = re.compile(re.escape(prefix) + r"(\d+)(?:[.-].*)?" + re.escape(suffix) + "$", re.S)
    try:
        entries = list(Path(folder).iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if not m or process_alive(int(m.group(1))):
            continue
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            removed.append(entry)
        except OSError:
            pass
    return removed


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (unknown counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # someone else's process, or cannot tell: keep it
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


@contextlib.contextmanager
def staged_folder(out: str | os.PathLike[str]) -> Iterator[Path]:
    """A fresh folder beside ``out`` that replaces ``out`` only when the block succeeds.

    The old folder is moved aside, the stage renamed into place, the old one removed: a
    failure at any point leaves ``out`` as it was. Leftovers of a run that was killed (its
    stage, or the old folder it had moved aside) are cleaned first; if it died between the
    two renames, the old folder is put back.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(out.parent, f".{out.name}.partial-")
    for old in sorted(out.parent.glob(f".{out.name}.old-*")):
        pid = old.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not process_alive(int(pid)):
            if not out.exists():  # killed between the two renames: put the previous folder back
                os.replace(old, out)
            else:
                shutil.rmtree(old, ignore_errors=True)
    stage = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    try:
        yield stage
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        if out.exists():
            os.replace(out, old)
        os.replace(stage, out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
