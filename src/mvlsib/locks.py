"""Exclusive locks on a folder's lock file, for read-modify-write cycles and long runs.

An ``flock`` on ``FOLDER/NAME``: the kernel drops it when its holder dies (even by
``kill -9``), so a crash never leaves a stale lock behind. The file keeps the holder's
pid, host and command, which the refused process names. Where ``flock`` does not exist
(Windows) nothing is locked.

This module imports only leaves (httpio, terminal, errors): the bundled evaluator ships it beside them.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from . import httpio, terminal
from .errors import MvlsibError


class Busy(Exception):
    """The lock is held by another process; ``holder`` says which."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


class NotALock(MvlsibError):
    """The lock's path holds something that is not a lock file of ours (a user's file, a symlink, a FIFO)."""


# What the first line of a lock file of ours says (written below); an empty file is one just made.
_OURS = re.compile(rb"pid [0-9]+ on ")


def canonical(path: str | os.PathLike[str]) -> Path:
    """The one name of ``path`` every lock is keyed by: its real path (``linked/rel`` with ``linked``
    a link to ``real`` is ``/.../real/rel``). Two spellings of one folder are one lock, and a process
    that holds it recognises it however the folder is named to it the second time."""
    return Path(os.path.realpath(path))


# Locks this process holds: (real path of the lock file) -> the thread holding it.
_HELD: dict[Path, int] = {}


def held(folder: str | os.PathLike[str], name: str) -> bool:
    """Whether this thread holds the lock ``folder/name`` (however ``folder`` is spelt)."""
    return _HELD.get(canonical(folder) / name) == threading.get_ident()


@contextlib.contextmanager
def exclusive(folder: str | os.PathLike[str], name: str, *, wait: float = 0.0, remove: bool = False) -> Iterator[None]:
    """Hold the lock ``folder/name`` for the block; wait up to ``wait`` seconds, then raise ``Busy``.

    Re-entrant: a thread holding the lock already (named by any path to its folder) goes on at once;
    the lock's flock is per open file, so taking it again would refuse the holder as if it were
    another process. The lock file is ours or nothing is done: a symlink is never followed, and a
    path holding anything but a regular file of ours (empty, or the holder line below) raises
    ``NotALock`` before any byte is written. ``remove``: the file is removed when the block ends, if
    the path still holds it."""
    key = canonical(folder) / name
    if _HELD.get(key) == threading.get_ident():
        yield
        return
    try:
        import fcntl  # noqa: F401 - whether flock exists here
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    folder = key.parent
    path = key
    while True:
        fd = _open_lock(path)
        try:
            _acquire(fd, wait)
            same = os.lstat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        # The holder removed the file between our open and our lock: this descriptor locks a file
        # nobody else will find (a third process would make a new one and lock it too); start again.
        os.close(fd)
    try:
        first = os.pread(fd, 64, 0)
        if first and not _OURS.match(first):
            raise NotALock(f"{path}: a file that is not a lock of ours; move it away (it is left as it is)")
        os.ftruncate(fd, 0)
        os.pwrite(
            fd,
            # shown to the process refused (and to whoever reads the file): no control acts, nothing forges a line
            f"pid {os.getpid()} on {terminal.visible(socket.gethostname())}: "
            f"{terminal.visible(' '.join(httpio.public_argv(sys.argv)))[:300]}\n".encode(),
            0,
        )
        _HELD[key] = threading.get_ident()
        try:
            yield
        finally:
            del _HELD[key]
            if remove:
                with contextlib.suppress(OSError):
                    if os.lstat(path).st_ino == os.fstat(fd).st_ino:  # still ours: nobody replaced it meanwhile
                        os.unlink(path)
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _open_lock(path: Path) -> int:
    """The lock file's descriptor: a regular file at ``path`` (made if missing), never through a link."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        if os.path.islink(path):
            raise NotALock(f"{path}: a symbolic link where a lock file goes; remove it") from None
        raise exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotALock(f"{path}: not a regular file (a pipe or a device) where a lock file goes; remove it")
    return fd


def _acquire(fd: int, wait: float) -> None:
    """``flock`` ``fd`` exclusively, waiting up to ``wait`` seconds; then ``Busy`` naming the holder."""
    import fcntl

    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            if time.monotonic() >= deadline:
                holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
                raise Busy(holder) from None
            time.sleep(0.05)
