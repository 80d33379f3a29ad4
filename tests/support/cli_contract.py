"""The CLI's error contract, checked in one place for every test that refuses a command.

A refused command exits 2 (``exit_codes`` widens that where a failed check, exit 1, is a right
answer too), says why in one line (one ``Error:`` line; click's ``Usage:``/``Try`` lines may come
before it), prints no traceback, lets no exception escape, prints no secret, and leaves the scene
(the folder it was pointed at) byte-identical. ``problems`` lists what a result breaks, so a test
can report every breach at once; ``refused`` asserts there are none and returns the ``Error:`` line.
A result is click's test-runner result, a ``subprocess.CompletedProcess`` or an ``Outcome`` (what a
driver process reports back).
"""

from __future__ import annotations

import os
import subprocess
import traceback
from dataclasses import dataclass
from pathlib import Path

# Lines that are not the command's answer: transformers' weight-loading bar, drawn before an error.
NOISE = ("Loading weights",)


@dataclass(frozen=True)
class Outcome:
    """What a command did: its exit code, everything it printed, and an exception that escaped it."""

    exit_code: int
    output: str
    escaped: str | None = None


def outcome(result) -> Outcome:
    """The ``Outcome`` of a click test-runner result, a finished subprocess or an ``Outcome``."""
    if isinstance(result, Outcome):
        return result
    if isinstance(result, subprocess.CompletedProcess):
        output = (result.stdout or "") + (result.stderr or "")
        return Outcome(result.returncode, output, "Traceback" if "Traceback" in output else None)
    exc = result.exception
    escaped = None if exc is None or isinstance(exc, SystemExit) else "".join(traceback.format_exception(exc))
    return Outcome(result.exit_code, result.output, escaped)


def scene_state(root: Path) -> dict[str, bytes]:
    """Every file's bytes, every symbolic link's target and every folder under ``root``."""
    out = {}
    for p in sorted(Path(root).rglob("*")):
        if p.is_symlink():
            out[str(p)] = b"->" + os.readlink(p).encode()
        elif p.is_file():
            out[str(p)] = p.read_bytes()
        elif p.is_dir():
            out[str(p)] = b"<dir>"
    return out


def changed(before: dict, after: dict) -> list[str]:
    """The paths that differ between two ``scene_state`` snapshots."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("Error:")]


def problems(
    result,
    *names: str,
    exit_codes: tuple[int, ...] = (2,),
    one_line: bool = True,
    prefixed: bool = True,
    secret: str | None = None,
    moved: list[str] | tuple[str, ...] = (),
) -> list[str]:
    """What ``result`` breaks of the contract. ``names``: words the error line must hold (a path, an
    option); ``one_line``: nothing printed but the error line and click's usage lines (``False``: what
    the command printed before its one error line may stand); ``prefixed``: the line starts
    with ``Error:`` (a launcher's own line before the boundary exists does not); ``secret``: a value
    that must not appear; ``moved``: what changed in the scene (``changed``)."""
    res = outcome(result)
    found = []
    if res.exit_code not in exit_codes:
        found.append(f"exit {res.exit_code}")
    if res.escaped or "Traceback" in res.output:
        found.append("traceback: " + (res.escaped or "")[-300:])
    lines = [ln for ln in res.output.splitlines() if ln.strip() and not any(n in ln for n in NOISE)]
    said = error_lines(res.output) if prefixed else lines[-1:]
    if res.exit_code == 2 and not said:
        found.append("no 'Error:' line" if prefixed else "no message")
    if res.exit_code == 2 and len(said) > 1:
        found.append(f"more than one error line: {said[:4]}")
    rest = [ln for ln in lines if ln not in said and not ln.startswith(("Usage:", "Try "))]
    if one_line and res.exit_code == 2 and rest:
        found.append(f"more than one line: {lines[:4]}")
    missing = [n for n in names if not said or n not in said[0]]
    if missing:
        found.append(f"the error line does not name {missing}")
    if secret and secret in res.output:
        found.append("secret printed")
    if moved:
        found.append(f"scene changed: {list(moved)[:4]}")
    return found


def refused(result, *names: str, **checks) -> str:
    """Assert ``result`` keeps the contract (``problems`` finds nothing); return its error line."""
    res = outcome(result)
    found = problems(res, *names, **checks)
    assert not found, f"{found}\n{res.output[-3000:]}"
    lines = [ln for ln in res.output.splitlines() if ln.strip() and not any(n in ln for n in NOISE)]
    return (error_lines(res.output) if checks.get("prefixed", True) else lines[-1:] or [""])[0]
