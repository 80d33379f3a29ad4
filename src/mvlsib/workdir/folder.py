"""The work folder's lock: one command at a time uses a work folder, from its first read to its last write.

Two ``ingest`` runs into one folder would both report the corpus they wrote while only one is on
disk (or the second would take the first's fresh files for the user's); a ``publish`` reading while
an ``ingest`` writes would copy a report of one corpus beside another. So every command that uses a
work folder holds :func:`in_use` for its whole run, and every ``save_*`` of this package takes it
too (held already by the command, or for the write alone when called from Python): a second
command is refused at once, naming the holder. The lock file is ``WORK/.mvlsib-work.lock``, removed
when the holder ends (the kernel releases the lock itself on kill -9).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from mvlsib import locks
from mvlsib.errors import MvlsibError

LOCK_NAME = ".mvlsib-work.lock"

# Work folders this process holds (resolved): a save inside a command that holds its folder already.
_HELD: set[Path] = set()

# A folder we may read but not write in cannot be locked; a reader goes on without the lock there.
_CANNOT_LOCK = (errno.EACCES, errno.EPERM, errno.EROFS)


def held(workdir: str | os.PathLike[str]) -> bool:
    """Whether this process holds the lock of ``workdir``."""
    return _key(workdir) in _HELD


def _key(workdir: str | os.PathLike[str]) -> Path:
    return locks.canonical(workdir)


@contextlib.contextmanager
def in_use(workdir: str | os.PathLike[str], *, write: bool = True, option: str = "--workdir") -> Iterator[Path]:
    """Hold the lock of the work folder ``workdir`` for the block (re-entrant within a process).

    ``write``: the block writes there, so the folder is made when missing (and removed again, with
    the parents made for it, when the block leaves it empty); otherwise a missing folder is not
    locked (its loaders say what is missing) and one this user cannot write in is read unlocked.
    Another holder: ``MvlsibError`` naming it, before the block runs."""
    folder = Path(workdir)
    key = _key(folder)
    if key in _HELD:
        yield folder
        return
    made: list[Path] = []
    if write:
        if folder.exists() and not folder.is_dir():
            raise MvlsibError(f"{folder}: exists and is not a folder; choose another {option}")
        made = [p for p in (key, *key.parents) if not p.exists()]
        folder.mkdir(parents=True, exist_ok=True)
    elif not folder.is_dir():
        yield folder
        return
    try:
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(locks.exclusive(folder, LOCK_NAME, remove=True))
            except locks.Busy as busy:
                raise MvlsibError(
                    f"{folder}: the work folder is in use by another command ({busy.holder}); wait for it to "
                    f"finish, or choose another {option}"
                ) from None
            except OSError as exc:
                if write or exc.errno not in _CANNOT_LOCK:
                    raise
            _HELD.add(key)
            try:
                yield folder
            finally:
                _HELD.discard(key)
    finally:
        _remove_made(made)


def _remove_made(made: list[Path]) -> None:
    """Remove the folders ``in_use`` made, innermost first, while they are empty."""
    for path in made:
        try:
            os.rmdir(path)
        except OSError:
            return
