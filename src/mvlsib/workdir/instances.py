"""Reader of the sample stage's output, ``WORK/instances.jsonl`` (one instance per line, ids only)."""

from __future__ import annotations

import json
from pathlib import Path

from mvlsib.errors import MvlsibError
from mvlsib.workdir import INSTANCES_FILE as INSTANCES_NAME


def read_instances(workdir: str | Path) -> list[dict]:
    path = Path(workdir) / INSTANCES_NAME
    if path.is_dir() or not path.exists():
        path = Path(workdir) if Path(workdir).is_file() else path
    if not path.is_file():
        raise MvlsibError(f"{path}: no instances file; run `mvlsib-build sample --workdir {Path(workdir)}` first")
    out = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise MvlsibError(
                    f"{path}, line {lineno}: not valid JSON ({exc.msg}); re-run `mvlsib-build sample`"
                ) from None
    return out
