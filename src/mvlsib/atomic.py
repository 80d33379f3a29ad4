"""Write files so that a crash never leaves a half-written output behind."""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO

from . import jsonio, locks, readers
from .errors import MvlsibError


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
        _record_pending(target, tmp_path)
        os.replace(tmp_path, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(target)  # a write() error names no file; the user needs to know which
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


# The name atomic_path gives its temporary file: `.<target>.<pid>.<8 mkstemp letters>.tmp`.
_TEMP_NAME = re.compile(r"\.(?P<target>.+)\.(?P<pid>\d+)\.[a-z0-9_]{8}\.tmp", re.S)


def remove_stale_temps(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove, anywhere under ``folder``, the temporary files of atomic writes whose writer no longer
    runs (killed mid-write): a re-run cleans what any earlier run left, not only the files it writes
    again. Only names atomic_path makes are touched, and never a live writer's."""
    removed: list[Path] = []
    folder = Path(folder)
    if not folder.is_dir() or folder.is_symlink():
        return removed
    for path in folder.rglob(".*.tmp"):
        m = _TEMP_NAME.fullmatch(path.name)
        if not m or path.is_dir() or process_alive(int(m.group("pid"))):
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    return removed


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
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """Whether ``pid`` has exited and waits to be reaped (a container's init may never reap a process
    killed with -9 whose parent died too): it answers a signal, yet holds nothing."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat_line = fh.read(4096)
    except OSError:
        return False
    return stat_line.rpartition(b")")[2].split()[:1] == [b"Z"]


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
def staged_folder(out: str | os.PathLike[str], *, check: Callable[[Path], object]) -> Iterator[Path]:
    """A fresh folder beside ``out`` that replaces ``out`` only when the block succeeds.

    ``check(out)`` is the caller's ledger rule (it raises when ``out`` holds what the user placed):
    required, and run under the lock before the work and again just before the replace, so no command
    replaces a folder it has not looked into, and none can slip a file in between the look and the
    replace (every writer of an image pool takes this lock too: ``pool_manifest.pool_lock``). The old folder is moved aside, the
    stage renamed into place, the old one removed: a failure at any point leaves ``out`` as it was.
    Leftovers of a run that was killed (its stage, or the old folder it had moved aside) are cleaned
    first; if it died between the two renames, the old folder is put back. One process at a time.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out = locks.canonical(out)  # the folder the lock guards is the one replaced, however it was spelt
    with replacing(out):
        for old in sorted(out.parent.glob(f".{out.name}.old-*")):
            pid = old.name.rsplit("-", 1)[-1]
            if pid.isdigit() and not process_alive(int(pid)):
                if not out.exists():  # killed between the two renames: put the previous folder back
                    os.replace(old, out)
                else:
                    shutil.rmtree(old, ignore_errors=True)
        check(out)
        with fresh_stage(out) as stage:
            yield stage
            # Looked into again just before the replace: whatever reached ``out`` during the work (a
            # writer that does not take this lock, the user) is refused, never moved aside and deleted.
            check(out)
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            if out.exists():
                os.replace(out, old)
            os.replace(stage, out)
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def fresh_stage(out: Path) -> Iterator[Path]:
    """An empty hidden folder beside ``out`` (``.NAME.partial-PID``), removed when the block fails; a
    killed run's stage is removed by the next. Its name is never one a user gives a folder."""
    remove_stale(out.parent, f".{out.name}.partial-")
    stage = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    try:
        yield stage
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


@contextlib.contextmanager
def replacing(out: str | os.PathLike[str], *, wait: float = 0.0) -> Iterator[None]:
    """One process at a time makes the folder ``out`` anew: a second one is refused at once, naming
    the first (two that both replaced it would both report success, and one result would be gone).
    The lock is a file beside ``out``'s real path (``locks.canonical``), removed when the block ends
    (the kernel releases it on kill -9); a process holding it already (a build holds its --out from
    the start, its publish step's staged_folder then takes it again, maybe by another spelling) goes on.
    ``wait``: seconds to wait for another holder (an image pool's short writers) before refusing."""
    key = locks.canonical(out)
    lock = locks.exclusive(key.parent, f".{key.name}.lock", wait=wait, remove=True)
    try:
        lock.__enter__()
    except locks.Busy as busy:
        waited = f" (waited {wait:g} s)" if wait else ""
        raise MvlsibError(
            f"{out} is being written by another command ({busy.holder}){waited}; wait for it to finish, or choose "
            "another folder"
        ) from None
    with contextlib.ExitStack() as stack:
        stack.push(lock)  # entered above, so that a Busy of another lock inside the block keeps its own words
        yield


def refuse_nested(
    out: tuple[str, str | os.PathLike[str]],
    inputs: Iterable[tuple[str, str | os.PathLike[str]]],
    *,
    inside_ok: Iterable[str] = (),
) -> None:
    """Refuse an output folder ``out`` (its option, its path) that is, lies inside or holds one of the
    ``inputs`` (option, path; a text value naming no local file, such as a Hub id, is skipped): written
    inside an input, it becomes part of what it was made from (an export under a release's ``data/``
    is read as one of its tables), and made anew around one, it would replace it. ``inside_ok``: the
    options whose folder may hold the output (a run folder inside the release it evaluates)."""
    name, path = out
    a = Path(os.path.abspath(path)).resolve()
    allowed = set(inside_ok)
    for option, value in inputs:
        if isinstance(value, str) and not (os.path.exists(value) or os.path.islink(value)):
            continue
        b = Path(os.path.abspath(value)).resolve()
        how = (
            "are the same folder"
            if a == b
            else "lie one inside the other"
            if (b in a.parents and option not in allowed) or (a in b.parents)
            else ""
        )
        if how:
            raise MvlsibError(
                f"{name} {path} and {option} {value} {how}: what is written would land in what it is made from "
                f"(or replace it); give {name} a folder outside {option}"
            )


# ---------------------------------------------------------------- output folders we may replace

# A hidden file in every output folder a command writes, listing the files it wrote there: the
# one way the next run can tell its own earlier output (which it may replace) from the user's
# files (which it must never overwrite or delete).
LEDGER = ".mvlsib-outputs.json"
# Held while the ledger is read, changed and written back (``_update_ledger``): commands writing files
# of different names into one folder at once would otherwise each write back what it read, and the
# entries of the others would be lost (a re-run then refuses its own file as the user's).
LEDGER_LOCK = ".mvlsib-outputs.lock"
# Files tools and operating systems drop into any folder; never anyone's work.
_LITTER_DIRS = frozenset({"__pycache__"})
_LITTER_NAMES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini", "Desktop.ini"})


def _is_litter(rel: Path) -> bool:
    return (
        any(part in _LITTER_DIRS for part in rel.parts) or rel.name in _LITTER_NAMES or rel.suffix in (".pyc", ".pyo")
    )


def folder_files(folder: str | os.PathLike[str]) -> list[str]:
    """Relative POSIX paths of the files (and symbolic links) under ``folder``, litter and ledger excluded."""
    folder = Path(folder)
    out = []
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if _is_litter(rel) or rel.as_posix() in (LEDGER, LEDGER_LOCK) or (path.is_dir() and not path.is_symlink()):
            continue
        out.append(rel.as_posix())
    return sorted(out)


def _read_ledger_data(folder: Path) -> dict:
    try:
        data = readers.read_json("ledger", folder / LEDGER)
    except MvlsibError:
        return {}
    return data if isinstance(data, dict) else {}


def read_ledger(folder: str | os.PathLike[str]) -> dict[str, str | None]:
    """``{file: sha256}`` of what ``folder``'s ledger says we wrote (empty without a readable ledger)."""
    files = _read_ledger_data(Path(folder)).get("files")
    if isinstance(files, dict):
        return {f: h if isinstance(h, str) else None for f, h in files.items() if isinstance(f, str)}
    return {}


# Commands that write the same kind of folder: each may take up what another of them wrote there.
_FAMILIES = {"merge": "run", "batch collect": "run"}


def _family(writer: str | None) -> str | None:
    """The kind of output a writer makes: its command without the program's name (``mvlsib-eval run``
    and ``evaluate.py run`` are one; a writer is named program first), commands writing run folders
    one family."""
    if writer is None:
        return None
    words = writer.split()
    command = " ".join(words[1:]) if len(words) > 1 else writer
    return _FAMILIES.get(command, command)


def _accepted(folder: Path, writer: str | None = None) -> dict[str, set[str] | None]:
    """``{file: the contents we may have left there}`` (None: any): the ledger's files, plus the
    writes a killed run had announced (``pending``: the content before and after its rename).
    ``writer``: only the files a command of its family wrote (a run's metrics.json is not
    ``compare --json``'s to replace, a report folder not ``export``'s); None: every command's."""
    data = _read_ledger_data(folder)
    by: dict = data["by"] if isinstance(data.get("by"), dict) else {}
    default = data.get("writer") if isinstance(data.get("writer"), str) else None
    family = _family(writer)

    def theirs(rel: str) -> bool:
        made_by = by.get(rel, default)
        return family is not None and _family(made_by if isinstance(made_by, str) else None) != family

    out: dict[str, set[str] | None] = {}
    files = data.get("files")
    for rel, digest in files.items() if isinstance(files, dict) else ():
        if isinstance(rel, str) and not theirs(rel):
            out[rel] = {digest} if isinstance(digest, str) else None
    pending = data.get("pending")
    for rel, digests in pending.items() if isinstance(pending, dict) else ():
        if isinstance(rel, str) and isinstance(digests, list) and not theirs(rel):
            known = out.get(rel, set())
            if known is not None:
                out[rel] = known | {d for d in digests if isinstance(d, str)}
    return out


# Folders an `owned_folder` block of this process writes into now (resolved). An atomic write
# below one announces itself in the folder's ledger before its rename, so a run killed with
# SIGKILL (no cleanup code runs) leaves a folder whose every file a re-run still recognises.
_OWNED: list[tuple[Path, str]] = []  # (folder, writer)


def _record_pending(target: Path, tmp: Path) -> None:
    if not _OWNED:
        return
    where = Path(os.path.abspath(target.parent)).resolve() / target.name
    for folder, writer in reversed(_OWNED):
        try:
            rel = where.relative_to(folder).as_posix()
        except ValueError:
            continue
        if rel != LEDGER:
            _update_ledger(folder, functools.partial(_announce, rel, target, tmp, writer))
        return


def _announce(rel: str, target: Path, tmp: Path, writer: str, data: dict) -> dict:
    """``data`` with the write of ``tmp`` over ``target`` (``rel`` in the ledger's folder) announced."""
    files: dict = data["files"] if isinstance(data.get("files"), dict) else {}
    pending: dict = data["pending"] if isinstance(data.get("pending"), dict) else {}
    before = [files[rel]] if isinstance(files.get(rel), str) else []
    if target.is_file() and not target.is_symlink() and rel not in files:
        before = [sha256_file(target)]  # only when a killed run had announced it: it passed the check
    pending[rel] = sorted(set(before + [sha256_file(tmp)]) | set(pending.get(rel) or []))
    by = _by(data)
    by[rel] = writer
    return {**data, "files": files, "pending": pending, "by": by}


def _by(data: dict) -> dict[str, str]:
    """The ledger's ``{file: the command that wrote it}`` (older ledgers name one writer for all)."""
    by: dict = data["by"] if isinstance(data.get("by"), dict) else {}
    default = data.get("writer") if isinstance(data.get("writer"), str) else None
    files: dict = data["files"] if isinstance(data.get("files"), dict) else {}
    out = {rel: w for rel, w in by.items() if isinstance(rel, str) and isinstance(w, str)}
    if default is not None:
        for rel in files:
            out.setdefault(rel, default)
    return out


def _update_ledger(folder: Path, change: Callable[[dict], dict | None]) -> None:
    """The one way a ledger is written: ``change`` gets what the ledger holds now and returns what it
    is to hold (None, or the same: left untouched), with the folder's ledger lock held from the read
    to the rename, so a concurrent writer's entries are never written back over."""
    try:
        with locks.exclusive(folder, LEDGER_LOCK, wait=LEDGER_WAIT_S, remove=True):
            data = _read_ledger_data(folder)
            new = change(data)
            if new is None or (new == data and (folder / LEDGER).is_file()):
                return
            with atomic_open(folder / LEDGER) as fh:
                fh.write(jsonio.dumps(new, indent=1, ensure_ascii=False, sort_keys=True))
                fh.write("\n")
    except locks.Busy as busy:
        raise MvlsibError(
            f"{folder}: its ledger {LEDGER} has been held by another command ({busy.holder}) for "
            f"{LEDGER_WAIT_S:.0f} s; wait for it to finish, then run this command again"
        ) from None


# An update of the ledger takes milliseconds; a holder that long has hung (or is being debugged).
LEDGER_WAIT_S = 60.0


def write_ledger(folder: str | os.PathLike[str], writer: str, skip: Iterable[str] = ()) -> None:
    """Record every file now in ``folder`` (with its sha256) as written by ``writer``, but those of
    ``skip`` (there before, unrecorded, untouched); call only when no foreign file was there."""
    folder = Path(folder)
    left = set(skip)

    def record(_old: dict) -> dict:
        files = {rel: _digest(folder / rel) for rel in folder_files(folder) if rel not in left}
        return {"writer": writer, "files": files}

    _update_ledger(folder, record)


def _digest(path: Path) -> str | None:
    return None if path.is_symlink() or not path.is_file() else sha256_file(path)


def foreign_files(
    folder: str | os.PathLike[str],
    ours: Iterable[str] | None = None,
    patterns: Iterable[str] = (),
    writer: str | None = None,
) -> list[str]:
    """Files in ``folder`` we did not write: not in ``ours`` (default: its ledger, where a file whose
    content changed since is the user's edit), matching no ``patterns``."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    pats = tuple(patterns)
    ledger: dict[str, set[str] | None] = dict.fromkeys(ours) if ours is not None else _accepted(folder, writer)
    out = []
    for rel in folder_files(folder):
        if any(fnmatch.fnmatchcase(rel, p) for p in pats):
            continue
        known = ledger.get(rel, set())
        if rel not in ledger or (known is not None and _digest(folder / rel) not in known):
            out.append(rel)
    return out


def refuse_foreign(
    folder: str | os.PathLike[str],
    ours: Iterable[str] | None = None,
    patterns: Iterable[str] = (),
    *,
    option: str = "--out",
    writer: str | None = None,
) -> None:
    """Raise ``MvlsibError`` naming the files when ``folder`` holds any we did not write (``writer``:
    any this command's family did not write).

    The rule every writer of an output folder applies before it writes: what the user put
    there is never overwritten or deleted, only files an earlier run of ours recorded.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise MvlsibError(f"{folder}: exists and is not a folder; choose another {option}")
    foreign = foreign_files(folder, ours, patterns, writer)
    if foreign:
        shown = ", ".join(foreign[:10]) + (f" and {len(foreign) - 10} more" if len(foreign) > 10 else "")
        raise MvlsibError(
            f"{folder}: holds files this command did not write ({shown}); refusing to replace or overwrite "
            f"them. Move them out of the folder, or choose another {option}"
        )


@contextlib.contextmanager
def owned_folder(
    folder: str | os.PathLike[str], writer: str, patterns: Iterable[str] = (), *, option: str = "--out"
) -> Iterator[Path]:
    """Write into ``folder`` in place, refused when it holds files we did not write; the ledger then
    lists what is there (also after a failure, so a re-run may replace the partial files)."""
    folder = Path(folder)
    remove_stale_temps(folder)
    refuse_foreign(folder, None, patterns, option=option, writer=writer)
    # Files the ``patterns`` let pass without the ledger knowing them (a run's metrics.json the user
    # put there, before the command refuses it): recorded only once this command has written them.
    accepted = _accepted(folder, writer) if folder.is_dir() else {}
    unknown = (
        {}
        if not folder.is_dir()
        else {rel: _signature(folder / rel) for rel in folder_files(folder) if rel not in accepted}
    )
    _OWNED.append((Path(os.path.abspath(folder)).resolve(), writer))
    try:
        yield folder
    except BaseException:
        with contextlib.suppress(OSError):  # an unwritable folder must not mask the real error
            if folder.is_dir() and (
                set(folder_files(folder)) - set(read_ledger(folder)) - set(unknown) or _pending(folder)
            ):
                write_ledger(folder, writer, _still(folder, unknown))
        raise
    finally:
        _OWNED.pop()
    if folder.is_dir() and folder_files(folder):
        write_ledger(folder, writer, _still(folder, unknown))


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _still(folder: Path, unknown: dict[str, tuple[int, int, int] | None]) -> set[str]:
    """Of the files that were there unrecorded, those this command left as they were."""
    return {rel for rel, sig in unknown.items() if _signature(folder / rel) == sig}


def _pending(folder: Path) -> bool:
    return bool(_read_ledger_data(folder).get("pending"))


@contextlib.contextmanager
def owned_files(
    folder: str | os.PathLike[str], names: Iterable[str], writer: str, *, option: str = "--out"
) -> Iterator[Path]:
    """Write the files ``names`` into ``folder``, a folder others write in too (a work folder, a model
    repo's ``.eval_results/``, where a script goes): refused when one of them is there and the
    folder's ledger does not record it, with that content, as ours (the user placed or edited it).
    Files of other names are never touched; the ledger then records ours beside its other entries."""
    folder = Path(folder)
    names = sorted(set(names))
    refuse_theirs(folder, names, option=option, writer=writer)
    _OWNED.append((Path(os.path.abspath(folder)).resolve(), writer))
    try:
        yield folder
    finally:
        _OWNED.pop()
        with contextlib.suppress(OSError):  # an unwritable folder must not mask the real error
            if folder.is_dir():
                _merge_ledger(folder, writer, names)


@contextlib.contextmanager
def output_file(
    path: str | os.PathLike[str], writer: str, *, option: str = "--out", mode: str = "w", **kwargs
) -> Iterator[IO]:
    """The one way a command writes a single file it is told to (``--json FILE``, ``--script FILE``,
    ``--out FILE``): atomically, and refused when a file of that name is there that the folder's
    ledger does not record, with that content, as this command's (the user's own file, or one edited
    since); the ledger then records it. ``params.OutputFile`` makes the same check when the option
    is parsed, before any work."""
    path = Path(path)
    with owned_files(path.parent, [path.name], writer, option=option):
        with atomic_open(path, mode, **kwargs) as fh:
            yield fh


def refuse_theirs(
    folder: str | os.PathLike[str], names: Iterable[str], *, option: str = "--out", writer: str | None = None
) -> None:
    """Raise ``MvlsibError`` when one of the files ``names`` in ``folder`` is there and its ledger does not
    record it, with that content, as ours: the check of ``owned_files``, for a command to make before
    its expensive work."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise MvlsibError(f"{folder}: exists and is not a folder; choose another {option}")
    accepted = _accepted(folder, writer) if folder.is_dir() else {}
    theirs = []
    for name in sorted(set(names)):
        path = folder / name
        if not (path.exists() or path.is_symlink()):
            continue
        known = accepted.get(name, set())
        if name not in accepted or (known is not None and _digest(path) not in known):
            theirs.append(name)
    if theirs:
        raise MvlsibError(
            f"{folder}: {', '.join(theirs)} not written by this command, or edited since; refusing to replace "
            f"it. Move it out of the folder, or choose another {option}"
        )


def edited_since(folder: str | os.PathLike[str], names: Iterable[str]) -> list[str]:
    """Of the files ``names`` in ``folder``, those its ledger records whose content is not what was
    recorded (edited or replaced since the command wrote them). A file the ledger does not know is
    not listed: whether it may be used is the reader's rule."""
    folder = Path(folder)
    accepted = _accepted(folder) if folder.is_dir() else {}
    out = []
    for name in sorted(set(names)):
        path = folder / name
        known = accepted.get(name)
        if known is None or not (path.exists() or path.is_symlink()):
            continue
        if _digest(path) not in known:
            out.append(name)
    return out


def _merge_ledger(folder: Path, writer: str, names: list[str]) -> None:
    def merge(data: dict) -> dict | None:
        files: dict = dict(data["files"]) if isinstance(data.get("files"), dict) else {}
        pending: dict = dict(data["pending"]) if isinstance(data.get("pending"), dict) else {}
        by = _by(data)
        for name in names:
            pending.pop(name, None)
            path = folder / name
            if path.exists() or path.is_symlink():
                files[name] = _digest(path)
                by[name] = writer
            else:
                files.pop(name, None)
                by.pop(name, None)
        by = {rel: w for rel, w in by.items() if rel in files or rel in pending}
        if not files and not pending and not (folder / LEDGER).exists():
            return None  # nothing of ours there (a failed first write): the folder stays as it was
        return {"writer": writer, "files": files, "by": by, **({"pending": pending} if pending else {})}

    _update_ledger(folder, merge)


@contextlib.contextmanager
def staged_output(
    out: str | os.PathLike[str], writer: str, ours: Iterable[str] | None = None, *, option: str = "--out"
) -> Iterator[Path]:
    """``staged_folder`` for an output folder: refused when ``out`` holds files we did not write
    (``ours``, default its ledger); the new folder gets a ledger of what it holds."""
    out = Path(out)

    def check(folder: Path) -> None:
        refuse_foreign(folder, ours, option=option, writer=writer)

    check(out)  # before the work, and again under the lock
    with staged_folder(out, check=check) as stage:
        yield stage
        write_ledger(stage, writer)


def probe_writable(path: str | os.PathLike[str]) -> None:
    """Raise the ``OSError`` that creating ``path`` would raise (a read-only folder, a file in the
    way, a name too long), leaving nothing behind: long commands check before working, not after."""
    path = Path(os.path.abspath(path))
    if path.is_dir():
        probe_in, name = path, "probe"
    else:
        child = path
        while not child.parent.exists() and child.parent != child:
            child = child.parent
        probe_in, name = child.parent, child.name
    tmp = tempfile.mkdtemp(prefix=f".{name}.probe-{os.getpid()}-", dir=probe_in)
    os.rmdir(tmp)
