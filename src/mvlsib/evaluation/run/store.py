"""The run folder's files. ``predictions.jsonl``: one JSON object per line, appended and flushed as
results arrive; ``config.json`` and ``metrics.json`` (``finalize``, ``load_run``).

A run killed at any moment (even ``kill -9`` in the middle of a write) leaves at most a
torn last line without its newline; ``open_for_append`` cuts it off before appending, so
a restarted run rewrites that one result and every key ends up exactly once.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .._compat import TASKS, MvlsibError, atomic_open, jsonio, locks, readers, refuse_theirs
from .run_files import parse_prediction_lines, read_config, read_metrics
from .scoring import compute_metrics


def record_key(rec: dict) -> tuple:
    return (rec["task"], int(rec["k"]), rec["language"], rec["instance_id"])


def read_predictions(path: str | Path, *, repair: bool = False) -> list[dict]:
    """Records of a predictions file, each checked (``run_files``); a torn last line is ignored (and cut
    off with ``repair``)."""
    path = Path(path)
    if not path.exists():
        return []
    lines, good = readers.read_lines(path, "predictions_file", "prediction_line")
    if repair and good != os.path.getsize(path):
        with open(path, "r+b") as fh:
            fh.truncate(good)
            fh.flush()
            os.fsync(fh.fileno())
    return parse_prediction_lines(path, lines)


def duplicate_keys(records: Iterable[dict]) -> list[tuple]:
    """Keys that occur more than once, in first-seen order."""
    counts = Counter(record_key(r) for r in records)
    return [k for k, n in counts.items() if n > 1]


def refuse_duplicates(path: str | Path, records: list[dict]) -> None:
    dups = duplicate_keys(records)
    if dups:
        raise MvlsibError(
            f"{path}: {len(dups)} keys appear more than once (e.g. {'|'.join(map(str, dups[0]))}): two runs "
            "wrote to this folder at the same time, so its answers cannot be trusted; start a new --out folder"
        )


def completeness(config: dict, records: list[dict]) -> dict[str, Any]:
    """How much of the run ``config`` describes ``records`` cover, in total and per (language, task, k) cell.

    Every cell of a run holds the same number of examples (each language has the same
    instances, each task x k one example per instance), so a cell's expectation is the
    run's total over its cell count.
    """
    fp = config.get("fingerprint") or {}
    expected = config.get("n_expected_run", config.get("n_expected"))
    cells = [(lang, t, int(k)) for lang in fp.get("languages") or [] for t, k in fp.get("tasks") or []]
    done = Counter((r["language"], r["task"], int(r["k"])) for r in records)
    per_cell = expected // len(cells) if expected and cells and expected % len(cells) == 0 else None
    short = (
        []
        if per_cell is None
        else [
            {"language": c[0], "task": c[1], "k": c[2], "n_done": done.get(c, 0), "n_expected": per_cell}
            for c in cells
            if done.get(c, 0) != per_cell
        ]
    )
    n_done = len(records)
    return {
        "n_done": n_done,
        "n_expected": expected,
        "complete": expected is not None and n_done == expected and not short,
        "incomplete_cells": short,
    }


@contextlib.contextmanager
def run_lock(out: Path, name: str = ".run.lock") -> Iterator[None]:
    """Hold an exclusive lock on a run folder (one writer per predictions file) for the block."""
    try:
        with locks.exclusive(out, name):
            yield
    except locks.Busy as busy:
        raise MvlsibError(
            f"{out} is in use by another run ({busy.holder}); wait for it to finish, or give this run its own "
            "--out folder (several processes share one folder only with --shard I/N)"
        ) from None


def dump_line(rec: dict) -> str:
    return jsonio.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n"


class PredictionWriter:
    """Append records, one ``write`` + flush per record; fsync per batch of records."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        read_predictions(self.path, repair=True)
        self._fh: IO[str] = open(self.path, "a", encoding="utf-8", newline="\n")

    def write_many(self, records: Iterable[dict]) -> None:
        for rec in records:
            self._fh.write(dump_line(rec))
            self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> PredictionWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def iter_sorted(records: Iterable[dict]) -> Iterator[dict]:
    """Records in canonical order: language, task, k, instance (index_id, r)."""
    task_rank = {name: n for n, name in enumerate(TASKS)}

    def instance_rank(iid: str) -> tuple:
        try:
            a, b = iid.split("-")
            return (int(a), int(b), iid)
        except ValueError:
            return (1 << 62, 0, iid)

    def sort_key(rec: dict) -> tuple:
        return (
            rec["language"],
            task_rank.get(rec["task"], 9),
            rec["task"],
            int(rec["k"]),
            instance_rank(rec["instance_id"]),
        )

    return iter(sorted(records, key=sort_key))


# ---------------------------------------------------------------- the run folder's JSON files


def _write_json(path: Path, obj: Any) -> None:
    with atomic_open(path) as fh:
        fh.write(jsonio.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True))
        fh.write("\n")


# The config of a whole run and of each of its shards (``config.shard-I-of-N.json``).
_RUN_CONFIG = re.compile(r"config(\.shard-[0-9]+-of-[0-9]+)?\.json")


def claim_run_folder(out: Path, fingerprint: dict, pred_path: Path, cfg_path: Path) -> None:
    """The one rule of every command that writes a run folder (run, batch collect, merge): a folder
    that holds a run may be added to only by the same run (its fingerprint); one that holds none
    must not hold files of the names a run writes that the user put there (a metrics.json of their
    own is refused, never replaced: ``refuse_theirs``, by the folder's ledger). Every run config in the
    folder counts, the whole run's and each shard's: a shard of another run beside a finished run (or
    the reverse) would leave two runs in one folder."""
    held = sorted(p for p in out.iterdir() if _RUN_CONFIG.fullmatch(p.name)) if out.is_dir() else []
    for path in held:
        old = read_config(path)["fingerprint"]
        if old != fingerprint:
            diff = sorted(k for k in set(old) | set(fingerprint) if old.get(k) != fingerprint.get(k))
            raise MvlsibError(
                f"{out} holds a run with different {', '.join(diff)} ({path.name}); resume it with the same "
                "command or pick another --out folder"
            )
    if cfg_path.exists():
        return
    if pred_path.exists() and pred_path.stat().st_size:
        raise MvlsibError(f"{pred_path} exists without {cfg_path.name}; pick another --out folder")
    refuse_theirs(out, [pred_path.name, cfg_path.name, "predictions.jsonl", "config.json", "metrics.json"])


def finalize(out: Path, config: dict, records: list[dict]) -> dict:
    """Write metrics.json and config.json of a complete (or merged) run; returns the metrics."""
    metrics = compute_metrics(records, config.get("parse_mode", "relaxed"), config.get("groups") or {})
    _write_json(out / "metrics.json", metrics)
    _write_json(out / "config.json", config)
    return metrics


def load_run(run: str | Path) -> tuple[dict, list[dict], dict]:
    """(config, predictions, metrics) of a finished run folder."""
    run = Path(run)
    pred = run / "predictions.jsonl"
    cfg = run / "config.json"
    if not pred.is_file() or not cfg.is_file():
        raise MvlsibError(
            f"{run}: not a finished run folder (needs predictions.jsonl and config.json; "
            "for a sharded run, `mvlsib-eval merge` it first)"
        )
    config = read_config(cfg)
    metrics_path = run / "metrics.json"
    metrics = read_metrics(metrics_path) if metrics_path.is_file() else {}
    records = read_predictions(pred)
    refuse_duplicates(pred, records)
    if metrics:
        _refuse_stale_metrics(metrics_path, metrics, config, records)
    return config, records, metrics


# What names a row of metrics.json (the rest of a row is figures derived from the predictions).
_ROW_NAMES = ("grouping", "group", "language", "task", "k")
# Prose about the method, not a figure: a later toolkit may word it otherwise.
_NOT_FIGURES = frozenset({"ci"})


def _figures(metrics: dict) -> dict[tuple, dict[str, Any]]:
    """Every figure of ``metrics`` by the row it sits in: ``(section, names...) -> {field: value}``.

    The top level is one row (``n_predictions``, ``languages``, ``parse_mode``); each row of ``macro``,
    ``per_language`` and of each grouping of ``groups`` is named by its grouping, group, language, task, k."""
    top = {k: v for k, v in metrics.items() if not isinstance(v, (dict, list)) or k == "languages"}
    rows: dict[tuple, dict[str, Any]] = {("top",): top}
    tables = [(section, None, metrics.get(section)) for section in ("macro", "per_language")]
    tables += [("groups", name, table) for name, table in (metrics.get("groups") or {}).items()]
    for section, grouping, table in tables:
        for row in table if isinstance(table, list) else []:
            if isinstance(row, dict):
                names = {"grouping": grouping, **row}
                key = (section, *((n, names[n]) for n in _ROW_NAMES if names.get(n) is not None))
                rows[key] = {f: v for f, v in row.items() if f not in _ROW_NAMES}
    return {key: {f: v for f, v in row.items() if f not in _NOT_FIGURES} for key, row in rows.items()}


def _same(a, b) -> bool:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return a == b or (numbers and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))


def _table(key: tuple) -> tuple:
    # the table a row belongs to: a section, or one grouping of ``groups``
    return key[:2] if key[0] == "groups" else key[:1]


def _refuse_stale_metrics(path: Path, metrics: dict, config: dict, records: list[dict]) -> None:
    """metrics.json is derived from predictions.jsonl: a figure that is not the predictions' (an edited
    file, or one left by another run) would be reported or published as the run's. Every figure is
    recomputed and compared, in every row (macro, per language, per group) and at the top (counts,
    languages); a row one side lacks is a difference too. Only a field the file does not hold (a file
    of an older toolkit) and a grouping the recomputation does not make are left alone."""
    fresh = compute_metrics(records, config.get("parse_mode", "relaxed"), config.get("groups") or {})
    stored, recomputed = _figures(metrics), _figures(fresh)
    tables = {_table(key) for key in recomputed}

    def where(key: tuple) -> str:
        return " ".join([key[0], *(f"{n}={v}" for n, v in key[1:])])

    def refuse(what: str) -> MvlsibError:
        return MvlsibError(
            f"{path}: {what}; metrics.json was edited or is another run's: re-run the same command to write it anew"
        )

    for key in sorted(set(stored) | set(recomputed), key=str):
        if _table(key) not in tables:
            continue  # a grouping made from another language table or --groups: not recomputable here
        if key not in recomputed:
            raise refuse(f"it has a row {where(key)} that predictions.jsonl does not give")
        if key not in stored:
            raise refuse(f"it lacks the row {where(key)} that predictions.jsonl gives")
        for field, b in recomputed[key].items():
            a = stored[key].get(field, b)
            if not _same(a, b):
                raise refuse(f"{field} of {where(key)} is {a!r}, but predictions.jsonl gives {b!r}")
