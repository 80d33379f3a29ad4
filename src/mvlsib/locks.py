"""Exclusive locks on a folder's lock file, for read-modify-write cycles and long runs.

An ``flock`` on ``FOLDER/NAME``: the kernel drops it when its holder dies (even by
``kill -9``), so a crash never leaves a stale lock behind. The file keeps the holder's
pid, host and command, which the refused process names. Where ``flock`` does not exist
(Windows) nothing is locked.

This module imports only leaves (httpio, terminal): the bundled evaluator ships it beside them.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from . import httpio, terminal


class Busy(Exception):
    """The lock is held by another process; ``holder`` says which."""

    def __init__(self, holder: str) -> None:
        super().__init__(holder)
        self.holder = holder


@contextlib.contextmanager
def exclusive(folder: str | os.PathLike[str], name: str, *, wait: float = 0.0) -> Iterator[None]:
    """Hold the lock ``folder/name`` for the block; wait up to ``wait`` seconds, then raise ``Busy``."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
                    raise Busy(holder) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(
            fd,
            # shown to the process refused (and to whoever reads the file): no control acts, nothing forges a line
            f"pid {os.getpid()} on {terminal.visible(socket.gethostname())}: "
            f"{terminal.visible(' '.join(httpio.public_argv(sys.argv)))[:300]}\n".encode(),
            0,
        )
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock
