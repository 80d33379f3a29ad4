"""What the report's tables share: number formatting, CSV writing, a run's coverage and scope line."""

from __future__ import annotations

from pathlib import Path

from .._compat import TASKS, atomic_open, csvio, escape
from ..run.store import completeness
from ..run.subset import describe

N_RELEASE = 3012  # instances per language in a release (SPEC section 1)


def fmt(v) -> str:
    """A share as a percentage with one decimal; – when missing."""
    return "–" if v is None else f"{100 * v:.1f}"


def ci(row, lo="ci_low", hi="ci_high") -> str:
    """A row's interval in brackets (percent), or nothing."""
    if row is None or row.get(lo) is None:
        return ""
    return f" [{100 * row[lo]:.1f}, {100 * row[hi]:.1f}]"


def write_csv(path: Path, rows: list[dict], fields: list[str]) -> Path:
    """A report table as CSV; every cell through ``escape.csv_cell``, so a run name or model id
    starting with ``=`` is text in a spreadsheet, not a formula."""
    with atomic_open(path) as fh:
        csvio.write_dicts(fh, rows, fields)
    return path


def mean(vals):
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def coverage(config: dict, records: list[dict]) -> dict:
    """Which instances a run covers (its --limit rule) and how complete it is."""
    fp = config.get("fingerprint", {})
    limit = fp.get("limit")
    mode = fp.get("limit_mode", "first" if limit is not None else "stratified")  # runs before the rule took the first N
    done = completeness(config, records)  # n done / n expected, and every short cell
    return {"subset": describe(limit, mode, N_RELEASE), **done}


def scope_line(loaded, text=escape.md_text) -> str:
    """The header line every table repeats: subset and completeness of each run (run labels through
    ``text``: Markdown-escaped by default; ``str`` for a caller that escapes the whole line)."""
    parts = [
        f"{text(label)}: {cov['subset']}, {cov['n_done']}/{cov['n_expected']} predictions"
        f"{'' if cov['complete'] else ' (INCOMPLETE)'}"
        for label, _, _, cov in loaded
    ]
    return "Scope — " + "; ".join(parts) + "."


def task_k_keys(loaded) -> list[tuple[str, int]]:
    """Every (task, k) of the loaded runs' macro tables, in task-table order."""
    return sorted(
        {(r["task"], r["k"]) for _, _, m, _ in loaded for r in m["macro"]},
        key=lambda tk: (TASKS.index(tk[0]) if tk[0] in TASKS else len(TASKS), tk[1]),
    )


def macro_table(metrics: dict) -> str:
    """The per task x k macro figures of a run as a terminal table."""
    lines = [f"{'task':<5} {'k':>2} {'langs':>5} {'acc':>7} {'strict':>7} {'fmt_err':>7} {'valid_acc':>9}"]
    for row in metrics["macro"]:
        va = "-" if row["valid_accuracy"] is None else f"{row['valid_accuracy']:.4f}"
        lines.append(
            f"{row['task']:<5} {row['k']:>2} {row['n_languages']:>5} {row['accuracy']:>7.4f} "
            f"{row['strict_accuracy']:>7.4f} {row['format_error_rate']:>7.4f} {va:>9}"
        )
    return "\n".join(lines)
