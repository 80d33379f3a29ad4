"""The leaderboard: models as rows, task x k as columns, in CSV, Markdown and one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

from .._compat import atomic_open, escape
from .report_format import ci, fmt, mean, scope_line, task_k_keys, write_csv


def leaderboard_rows(loaded) -> tuple[list[tuple[str, int]], list[dict]]:
    """Models as rows, task x k as columns (macro over languages, with intervals), sorted by the overall mean."""
    keys = task_k_keys(loaded)
    rows = []
    for label, config, m, cov in loaded:
        cells = {(r["task"], r["k"]): r for r in m["macro"]}
        row = {
            "run": label,
            "model": config.get("fingerprint", {}).get("model"),
            "subset": cov["subset"],
            "complete": cov["complete"],
            "n_languages": len(m["languages"]),
            "mean": mean([cells[k]["accuracy"] for k in keys if k in cells]) if len(cells) == len(keys) else None,
            "cells": cells,
        }
        rows.append(row)
    rows.sort(key=lambda r: (-(r["mean"] if r["mean"] is not None else -1), r["run"]))
    return keys, rows


def write_leaderboard(out: Path, loaded) -> list[Path]:
    keys, rows = leaderboard_rows(loaded)
    scope = scope_line(loaded)
    columns = [f"{t} k={k}" for t, k in keys]
    return [
        _leaderboard_csv(out / "leaderboard.csv", keys, columns, rows),
        _leaderboard_markdown(out / "leaderboard.md", keys, columns, rows, scope),
        _leaderboard_html(out / "leaderboard.html", keys, columns, rows, scope_line(loaded, text=str)),
    ]


def _leaderboard_csv(path: Path, keys, columns, rows) -> Path:
    fields = ["rank", "run", "model", "n_languages", "complete", "subset", "mean"]
    for c in columns:
        fields += [c, f"{c} ci_low", f"{c} ci_high"]
    csv_rows = []
    for i, r in enumerate(rows, start=1):
        d = {
            "rank": i,
            "run": r["run"],
            "model": r["model"],
            "n_languages": r["n_languages"],
            "complete": r["complete"],
            "subset": r["subset"],
            "mean": r["mean"],
        }
        for c, key in zip(columns, keys):
            cell = r["cells"].get(key)
            d[c], d[f"{c} ci_low"], d[f"{c} ci_high"] = (
                (cell["accuracy"], cell["ci_low"], cell["ci_high"]) if cell else (None, None, None)
            )
        csv_rows.append(d)
    return write_csv(path, csv_rows, fields)


def _leaderboard_markdown(path: Path, keys, columns, rows, scope: str) -> Path:
    md = [
        "# MVL-SIB leaderboard",
        "",
        "Macro accuracy over languages (%), 95 % bootstrap CI in brackets; "
        "mean = mean over the task × k columns (– when a run lacks one).",
        "",
        scope,
        "",
        *escape.md_table_head(["#", "run", "model", "languages", "mean", *columns]),
    ]
    for i, r in enumerate(rows, start=1):
        cells = [(fmt(r["cells"][k]["accuracy"]) + ci(r["cells"][k])) if k in r["cells"] else "–" for k in keys]
        run = r["run"] + ("" if r["complete"] else " (incomplete)")
        md.append(escape.md_row([i, run, escape.md_code(r["model"]), r["n_languages"], fmt(r["mean"]), *cells]))
    with atomic_open(path) as fh:
        fh.write("\n".join(md) + "\n")
    return path


def _leaderboard_html(path: Path, keys, columns, rows, scope: str) -> Path:
    """One self-contained page (inline CSS, no scripts or external resources)."""
    e = escape.html_text
    head = "".join(f"<th>{e(c)}</th>" for c in ["#", "run", "model", "languages", "mean", *columns])
    body = []
    for i, r in enumerate(rows, start=1):
        tds = [
            str(i),
            e(r["run"] + ("" if r["complete"] else " (incomplete)")),
            f"<code>{e(str(r['model']))}</code>",
            str(r["n_languages"]),
            fmt(r["mean"]),
        ]
        for k in keys:
            c = r["cells"].get(k)
            tds.append(f"{fmt(c['accuracy'])}<br><small>{e(ci(c).strip())}</small>" if c else "–")
        body.append("<tr>" + "".join(f"<td>{t}</td>" for t in tds) + "</tr>")
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>MVL-SIB leaderboard</title>'
        "<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
        "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}td:nth-child(2),td:nth-child(3),"
        "th{text-align:left}th{background:#f3f3f3}small{color:#666}</style></head><body>"
        "<h1>MVL-SIB leaderboard</h1><p>Macro accuracy over languages (%), 95 % bootstrap confidence interval "
        f"below each value.</p><p>{e(scope)}</p><table><thead><tr>{head}</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table></body></html>\n"
    )
    with atomic_open(path) as fh:
        fh.write(page)
    return path
