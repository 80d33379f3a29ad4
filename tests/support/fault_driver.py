"""Run CLI cases with one planted file-system fault each; meant to run as root WITHOUT
CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (under ``setpriv``), where mode bits bind root too.

    python fault_driver.py      # then one case per line on stdin, one RESULT line back per case

Each case: ``{"cli": "build"|"eval", "args": [...], "fault": {"kind": K, "path": P}, "scene": DIR}``.
The driver plants the fault, invokes the command in-process (click's test runner), undoes the
fault and records the exit code, the output, any escaped exception and every change to the
scene folder (names, sizes and mtimes of its files: what "no partial output left" means). It
serves case after case, so a test can ask for each case as its own test id and the toolkit is
imported once per process.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import traceback
from pathlib import Path

from click.testing import CliRunner

LONG_NAME = "n" * 300  # over NAME_MAX (255) on every common file system


ASIDE: Path  # outside the scene, so a moved-aside file is never seen as one of the scene's


def _aside(p: Path) -> Path:
    return ASIDE / p.name


def plant(kind: str, p: Path):
    """Plant fault ``kind`` at ``p``; return the function that undoes it."""
    if kind == "none":
        return lambda: None
    if kind == "unreadable":  # a file or folder with mode 000
        mode = p.stat().st_mode & 0o7777
        os.chmod(p, 0)
        return lambda: os.chmod(p, mode)
    if kind == "unsearchable":  # a folder that can be listed but not entered (r without x)
        mode = p.stat().st_mode & 0o7777
        os.chmod(p, 0o644)
        return lambda: os.chmod(p, mode)
    if kind == "read-only-folder":  # an existing output folder (or a file's folder) we may not write into
        created = not p.exists()
        p.mkdir(parents=True, exist_ok=True)
        mode = p.stat().st_mode & 0o7777
        os.chmod(p, 0o555)

        def undo():
            os.chmod(p, mode)
            if created:
                shutil.rmtree(p)

        return undo
    if kind in ("dangling-symlink", "symlink-loop", "file-not-folder", "folder-not-file", "under-a-file"):
        existed = p.exists() or p.is_symlink()
        if existed:
            os.rename(p, _aside(p))
        if kind == "dangling-symlink":
            p.symlink_to(p.parent / "planted-missing-target" / p.name)
        elif kind == "symlink-loop":
            p.symlink_to(p.name)
        elif kind == "file-not-folder":
            p.write_text("a file where a folder belongs\n")
        elif kind == "folder-not-file":
            p.mkdir()
        else:  # the path's parent is a file: p = FILE/name
            raise AssertionError("under-a-file is planted on the parent; see the test")

        def undo():
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
            if existed:
                os.rename(_aside(p), p)

        return undo
    raise AssertionError(f"unknown fault {kind}")


def snapshot(root: Path) -> dict[str, tuple]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            if name == ".run.lock":  # the run lock records its holder on every start: bookkeeping, not output
                continue
            p = Path(dirpath) / name
            st = p.lstat()
            kind = "l" if p.is_symlink() else ("d" if p.is_dir() else "f")
            out[str(p.relative_to(root))] = (
                kind,
                0 if kind == "d" else st.st_size,
                0 if kind == "d" else st.st_mtime_ns,
            )
    return out


def run_case(case: dict) -> dict:
    global ASIDE
    scene = Path(case["scene"])
    ASIDE = scene.parent / f"{scene.name}-aside"
    ASIDE.mkdir(exist_ok=True)
    fault = case["fault"]
    before = snapshot(scene)
    undo = plant(fault["kind"], Path(fault["path"]))
    try:
        from mvlsib.cli import build_cli, eval_cli

        cli = build_cli if case["cli"] == "build" else eval_cli
        res = CliRunner().invoke(cli, case["args"], catch_exceptions=True)
        escaped = None
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            escaped = "".join(traceback.format_exception(res.exception))[-3000:]
    finally:
        undo()
    after = snapshot(scene)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return {"exit_code": res.exit_code, "output": res.output, "escaped": escaped, "changed": changed}


RESULT = "RESULT "  # the prefix of the driver's answer lines


def main() -> int:
    sys.dont_write_bytecode = True  # no __pycache__ appearing in the scene between snapshots
    # The answers go to the real stdout; anything a library writes to file descriptor 1 goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    for line in sys.stdin:
        answers.write(RESULT + json.dumps(run_case(json.loads(line))) + "\n")
        answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
