"""One sentence for any ``OSError``: the path, what failed in words, and what to do.

The command-line boundary (both CLIs and a release's ``evaluate.py``) turns every
``OSError`` into this message and exit status 2: a refused permission, a missing or
mistyped path, a full disk or a dropped connection is the environment, not a bug in the
code, and a traceback would only hide the one fact the user needs, the path. Standard
library only: the evaluator bundle ships it as one of its shared leaves.
"""

from __future__ import annotations

import errno
import os
import re

# errno -> (what failed, what to do). Words, because "[Errno 13]" tells a user nothing.
_ADVICE: dict[int, tuple[str, str]] = {
    errno.EACCES: (
        "permission denied",
        "give yourself access (ls -l shows the owner and mode; chmod/chown) or choose another path",
    ),
    errno.EPERM: (
        "operation not permitted",
        "the file or folder is protected (owner, immutable flag or a policy); choose another path",
    ),
    errno.ENOENT: ("no such file or folder", "check the path (and that its parent folders exist)"),
    errno.ENOTDIR: (
        "a part of the path is a file, not a folder",
        "check the path: a folder was expected where a file is",
    ),
    errno.EISDIR: ("is a folder, not a file", "give the path of a file (or a new name) instead"),
    errno.ELOOP: ("too many levels of symbolic links", "a symbolic link points to itself or a loop; fix or remove it"),
    errno.ENAMETOOLONG: ("the name is too long", "use a shorter file or folder name"),
    errno.ENOSPC: ("no space left on the device", "free space or choose a folder on another disk"),
    errno.EDQUOT: ("disk quota exceeded", "free space within your quota or choose another folder"),
    errno.EROFS: ("read-only file system", "choose a folder on a writable file system"),
    errno.EFBIG: ("file too large", "the file system or a size limit (ulimit -f) refuses a file this large"),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n) or close other programs, then re-run"),
    errno.ENFILE: ("too many open files in the system", "close other programs, then re-run"),
    errno.EEXIST: ("already exists", "remove it or choose another path"),
    errno.ENOTEMPTY: ("the folder is not empty", "move its files out or choose another path"),
    errno.EXDEV: ("cannot move across file systems", "keep the output on the same disk as its folder"),
    errno.ETXTBSY: ("the file is busy", "stop the program that uses it, then re-run"),
    errno.EBUSY: ("the file or folder is busy", "stop the program that uses it, then re-run"),
    errno.EIO: ("input/output error", "the disk or network share failed; check it, then re-run"),
    errno.ENXIO: ("no such device", "the path names a device that is not there; choose a regular file"),
    errno.ENODEV: ("no such device", "the path names a device that is not there; choose a regular file"),
    errno.ECONNREFUSED: ("connection refused", "check that the server runs and the address and port are right"),
    errno.ECONNRESET: ("connection reset by the server", "re-run; if it persists, check the server"),
    errno.ETIMEDOUT: ("timed out", "check the network or the server, or raise the timeout"),
    errno.EHOSTUNREACH: ("host unreachable", "check the network and the address"),
    errno.ENETUNREACH: ("network unreachable", "check the network connection"),
}

_GENERIC_ADVICE = "check the path and the file system, then re-run"


def _path_text(value: object) -> str:
    if isinstance(value, bytes):
        value = os.fsdecode(value)
    # repr() keeps a name with a newline or control character on one line and visible.
    text = str(value)
    return text if text.isprintable() else repr(text)


_ERRNO_IN_TEXT = re.compile(r"\[errno (\d+)\]", re.IGNORECASE)


def describe(exc: OSError) -> str:
    """``PATH: what failed (errno name); what to do`` on one line."""
    code = exc.errno if isinstance(exc.errno, int) else None
    if code is None and (found := _ERRNO_IN_TEXT.search(str(exc))):
        code = int(found.group(1))  # pyarrow: "Failed to open local file '...'. Detail: [errno 13] ..."
    what, advice = _ADVICE.get(code, (None, _GENERIC_ADVICE)) if code is not None else (None, _GENERIC_ADVICE)
    if what is None:
        what = exc.strerror or (str(exc) if str(exc) else type(exc).__name__)
    if code is not None and code in errno.errorcode:
        what = f"{what} ({errno.errorcode[code]})"
    where = ""
    text = " ".join(str(exc).split())
    if exc.filename is None and exc.strerror and code is not None and exc.strerror != os.strerror(code):
        # No filename, but the text names the file (pyarrow: "Failed to open local file '...'. Detail: ...").
        where = " ".join(exc.strerror.split())
    elif exc.filename is not None:
        where = _path_text(exc.filename)
        if getattr(exc, "filename2", None) is not None:
            where += f" -> {_path_text(exc.filename2)}"
    elif exc.errno is None and text:
        # Libraries (pyarrow, Pillow, sockets) often put the path into the text and no errno.
        where = text
        if code is None:
            what = type(exc).__name__
    message = f"{where}: {what}" if where else what
    return f"{message}; {advice}"


def is_about_writing(exc: OSError) -> bool:
    """Whether the error means the output could not be (fully) written."""
    return exc.errno in {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG}


def message(exc: OSError) -> str:
    """The boundary's full message: ``describe`` plus, for a failed write, that nothing half-written was kept."""
    text = describe(exc)
    if is_about_writing(exc):
        text += "; outputs are written atomically, so nothing half-written was kept"
    return text


_LOOP = re.compile(r"^Symlink loop from '(?P<path>.*)'\Z", re.S)


def as_oserror(exc: BaseException) -> OSError | None:
    """The ``OSError`` an exception stands for, if any: ``Path.resolve`` on Python < 3.13 reports a
    symbolic-link loop as ``RuntimeError("Symlink loop from '...'")`` instead of ``ELOOP``."""
    if isinstance(exc, OSError):
        return exc
    if type(exc) is RuntimeError and (m := _LOOP.match(str(exc))):
        return OSError(errno.ELOOP, os.strerror(errno.ELOOP), m.group("path"))
    return None
