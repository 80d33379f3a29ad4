"""A lock held by someone else, stood in for within the test's process.

``locks.exclusive`` is re-entrant for the thread that holds it (a command that takes its own lock
again, by another spelling of the folder, goes on), so a test that wants a command refused takes the
lock in another thread: its own descriptor, as another process would."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from mvlsib import locks


@contextlib.contextmanager
def held_elsewhere(folder: str | os.PathLike[str], name: str, **kwargs) -> Iterator[None]:
    """Hold ``folder/name`` from another thread for the block."""
    taken, done = threading.Event(), threading.Event()
    failed: list[BaseException] = []

    def hold() -> None:
        try:
            with locks.exclusive(folder, name, **kwargs):
                taken.set()
                done.wait(600)
        except BaseException as exc:  # reported to the test below
            failed.append(exc)
            taken.set()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    taken.wait(60)
    if failed:
        raise failed[0]
    try:
        yield
    finally:
        done.set()
        thread.join(60)
