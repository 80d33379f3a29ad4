"""``mvlsib-eval report``: tables (Markdown, CSV), a leaderboard and figures for runs side by side.

Metrics are recomputed from each run's stored responses (so ``--parse-mode``, ``--groups``
and ``--language-metadata`` apply to old runs too). Every table names the subset a run
covers and how complete it is; accuracies carry 95 % bootstrap intervals (``stats``).
Languages are grouped by script, family and resource class out of the box (``languages``).

Per language, the summary figure is the accuracy pooled over the run's task x k cells
(the mean over cells when, as in any complete run, every cell has the same instances),
with the text-only (t2s, s2t) and cross-modal (i2s, s2i) means and their gap.
"""

from __future__ import annotations

import csv
import html
from collections.abc import Callable, Mapping
from pathlib import Path

from ._compat import TASK_BY_NAME, TASK_TABLE, TASKS, TOPICS, MvlsibError, atomic_open, loader
from .languages import GROUPINGS, info
from .scoring import METRICS, compute_metrics
from .stats import cell_interval, macro_interval
from .store import completeness, load_run
from .subset import describe

TEXT_ONLY = tuple(t.name for t in TASK_TABLE if not t.cross_modal)
CROSS_MODAL = tuple(t.name for t in TASK_TABLE if t.cross_modal)
N_RELEASE = 3012  # instances per language in a release (SPEC section 1)
FIGURE_GROUPINGS = ("family", "resource")


def _fmt(v) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def _ci(row, lo="ci_low", hi="ci_high") -> str:
    if row is None or row.get(lo) is None:
        return ""
    return f" [{100 * row[lo]:.1f}, {100 * row[hi]:.1f}]"


def _write_csv(path: Path, rows: list[dict], fields: list[str]) -> Path:
    with atomic_open(path) as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return path


def _mean(vals):
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


def language_summary(metrics: dict, metadata: Mapping | None = None) -> dict[str, dict]:
    """Per language: pooled accuracy over task x k with its interval, text-only, cross-modal, gap, metadata."""
    by_lang: dict[str, list[dict]] = {}
    for c in metrics["per_language"]:
        by_lang.setdefault(c["language"], []).append(c)
    out = {}
    for lang, cells in sorted(by_lang.items()):
        correct = sum(round(c["accuracy"] * c["n"]) for c in cells)
        n = sum(c["n"] for c in cells)
        lo, hi = cell_interval(correct, n, (lang, "all"))
        text = _mean([c["accuracy"] for c in cells if c["task"] in TEXT_ONLY])
        cross = _mean([c["accuracy"] for c in cells if c["task"] in CROSS_MODAL])
        meta = info(lang, metadata)
        out[lang] = {
            "name": meta["name"],
            "family": meta["family"],
            "resource": GROUPINGS["resource"](meta),
            "script": meta["script"],
            "accuracy": correct / n if n else None,
            "ci_low": lo,
            "ci_high": hi,
            "correct": correct,
            "n": n,
            "format_error_rate": _mean([c["format_error_rate"] for c in cells]),
            "text_only": text,
            "cross_modal": cross,
            "gap": None if text is None or cross is None else text - cross,
        }
    return out


def gap_intervals(records, mode: str = "relaxed", confidence: float = 0.95) -> dict[str, tuple[float, float]]:
    """Per language, an interval for the text-only minus cross-modal gap, paired by instance.

    For each instance answered in both kinds of task, d = (share right over its text-only cells)
    − (share right over its cross-modal cells); the gap is the mean of d (equal to the difference
    of the cell means when every cell has the same instances) and its interval the normal
    approximation mean ± z·sd/√n. Pairing by instance removes the item difficulty both share.
    """
    from statistics import NormalDist

    from .parsing import parse_letter
    from .prompts import LETTERS

    per: dict[tuple, list[list[int]]] = {}
    for r in records:
        ok = parse_letter(r["response"], mode) == LETTERS[int(r["label"])]
        cell = per.setdefault((r["language"], r["instance_id"]), [[0, 0], [0, 0]])  # text, cross: [right, n]
        side = cell[1] if r["task"] in CROSS_MODAL else cell[0]
        side[0] += ok
        side[1] += 1
    diffs: dict[str, list[float]] = {}
    for (lang, _), (text, cross) in per.items():
        if text[1] and cross[1]:
            diffs.setdefault(lang, []).append(text[0] / text[1] - cross[0] / cross[1])
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    out = {}
    for lang, d in diffs.items():
        n = len(d)
        mean = sum(d) / n
        sd = (sum((x - mean) ** 2 for x in d) / (n - 1)) ** 0.5 if n > 1 else 0.0
        out[lang] = (mean - z * sd / n**0.5, mean + z * sd / n**0.5)
    return out


def group_summary(summary: dict[str, dict], grouping: str) -> list[dict]:
    """Per group: mean over its languages of the pooled accuracy, interval over languages and instances."""
    members: dict[str, list[str]] = {}
    for lang, s in summary.items():
        members.setdefault(s[grouping], []).append(lang)
    out = []
    for group in sorted(members):
        langs = members[group]
        lo, hi = macro_interval(
            [(summary[lang]["correct"], summary[lang]["n"]) for lang in langs], ("group", grouping, group, *langs)
        )
        out.append(
            {
                "group": group,
                "n_languages": len(langs),
                "accuracy": _mean([summary[lang]["accuracy"] for lang in langs]),
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    return out


def coverage(config: dict, records: list[dict]) -> dict:
    """Which instances a run covers (its --limit rule) and how complete it is."""
    fp = config.get("fingerprint", {})
    limit = fp.get("limit")
    mode = fp.get("limit_mode", "first" if limit is not None else "stratified")  # runs before the rule took the first N
    done = completeness(config, records)  # n done / n expected, and every short cell
    return {"subset": describe(limit, mode, N_RELEASE), **done}


def write_report(
    runs: list[str | Path],
    out: str | Path,
    *,
    groups: Mapping[str, Mapping[str, str]] | None = None,
    mode: str = "relaxed",
    names: list[str] | None = None,
    metadata: Mapping[str, Mapping[str, str]] | None = None,
    figures: bool = True,
    data: str | Path | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[Path]:
    out = Path(out)
    if names is not None and len(names) != len(runs):
        raise MvlsibError(f"--name was given {len(names)} times for {len(runs)} runs; give one per run or none")
    labels = names or [Path(r).resolve().name for r in runs]
    if len(set(labels)) != len(labels):
        labels = [f"{i + 1}:{label}" for i, label in enumerate(labels)]
    loaded, raw = [], []
    for run, label in zip(runs, labels):
        config, records, _ = load_run(run)  # refuses a run with duplicate keys
        if not records:
            raise MvlsibError(f"{run}: predictions.jsonl is empty")
        cov = coverage(config, records)
        if warn is not None and not cov["complete"]:
            warn(
                f"{run} is incomplete: {cov['n_done']} of {cov['n_expected'] if cov['n_expected'] is not None else '?'} "
                f"predictions ({len(cov['incomplete_cells'])} short cells); report.md lists them"
            )
        metrics = compute_metrics(records, mode, groups or config.get("groups") or {}, metadata)
        loaded.append((label, config, metrics, cov))
        raw.append(records)
    out.mkdir(parents=True, exist_ok=True)  # only once every run has loaded: a failure writes nothing

    written: list[Path] = []
    per_lang_rows, macro_rows, group_rows = [], [], []
    for label, _, m, _ in loaded:
        per_lang_rows += [{"run": label, **c} for c in m["per_language"]]
        macro_rows += [{"run": label, **r} for r in m["macro"]]
        for gname, rows in m["groups"].items():
            group_rows += [{"run": label, "grouping": gname, **r} for r in rows]
    metric_fields = ["n", *METRICS, "ci_low", "ci_high"]
    written.append(
        _write_csv(out / "per_language.csv", per_lang_rows, ["run", "language", "task", "k", *metric_fields])
    )
    written.append(_write_csv(out / "macro.csv", macro_rows, ["run", "task", "k", "n_languages", *metric_fields]))
    written.append(
        _write_csv(
            out / "groups.csv", group_rows, ["run", "grouping", "group", "task", "k", "n_languages", *metric_fields]
        )
    )
    summaries = [(label, language_summary(m, metadata)) for label, _, m, _ in loaded]
    for (_, summ), records in zip(summaries, raw):
        for lang, (lo, hi) in gap_intervals(records, mode).items():
            if lang in summ and summ[lang]["gap"] is not None:
                summ[lang]["gap_low"], summ[lang]["gap_high"] = lo, hi
    lang_rows = []
    for label, summ in summaries:
        lang_rows += [{"run": label, "language": lang, **s} for lang, s in summ.items()]
    written.append(
        _write_csv(
            out / "languages.csv",
            lang_rows,
            [
                "run",
                "language",
                "name",
                "family",
                "resource",
                "script",
                "accuracy",
                "ci_low",
                "ci_high",
                "format_error_rate",
                "text_only",
                "cross_modal",
                "gap",
                "gap_low",
                "gap_high",
            ],
        )
    )
    written += write_leaderboard(out, loaded)
    fig_names: list[str] = []
    if figures:
        try:
            import matplotlib  # noqa: F401  (the figures' only third-party need; tables do without)
        except ImportError:
            figures = False
            fig_names = ["(figures skipped: install matplotlib to draw them)"]
    if figures:
        if data is None:
            data = next(
                (
                    c.get("fingerprint", {}).get("data")
                    for _, c, _, _ in loaded
                    if Path(str(c.get("fingerprint", {}).get("data"))).is_dir()
                ),
                None,
            )
        figs = _figures(out, loaded, summaries)
        figs += _topic_confusion(out, loaded, raw, data, mode)
        written += figs
        fig_names = [p.name for p in figs if p.suffix == ".png"]
    written.append(_markdown(out, loaded, summaries, mode, fig_names))
    return written


def _runs_table(loaded) -> list[str]:
    lines = [
        "| run | model | backend | subset | predictions | complete | prompts sha256 | release manifest sha256 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, config, _, cov in loaded:
        fp = config.get("fingerprint", {})
        lines.append(
            f"| {label} | `{fp.get('model')}` | {fp.get('backend')} | {cov['subset']} | "
            f"{cov['n_done']} of {cov['n_expected'] if cov['n_expected'] is not None else '?'} | "
            f"{'yes' if cov['complete'] else '**no**'} | `{(fp.get('prompts_sha256') or '')[:12]}` | "
            f"`{(fp.get('release_manifest_sha256') or '–')[:12]}` |"
        )
    return lines


def completeness_lines(coverage) -> list[str]:
    """The report's completeness section: n done / n expected per run, and every short cell."""
    lines = ["## Completeness", "", "| run | predictions | expected | complete |", "|---|---|---|---|"]
    for label, c in coverage:
        lines.append(
            f"| {label} | {c['n_done']} | {c['n_expected'] if c['n_expected'] is not None else '?'} | "
            f"{'yes' if c['complete'] else '**NO**'} |"
        )
    short = [(label, cell) for label, c in coverage for cell in c["incomplete_cells"]]
    if short:
        lines += [
            "",
            "Incomplete cells (their figures cover only the predictions present):",
            "",
            "| run | language | task | k | done / expected |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {label} | {x['language']} | {x['task']} | {x['k']} | {x['n_done']} / {x['n_expected']} |"
            for label, x in short
        ]
    return lines + [""]


def _scope_line(loaded) -> str:
    """The header line every table repeats: subset and completeness of each run."""
    parts = [
        f"{label}: {cov['subset']}, {cov['n_done']}/{cov['n_expected']} predictions"
        f"{'' if cov['complete'] else ' (INCOMPLETE)'}"
        for label, _, _, cov in loaded
    ]
    return "Scope — " + "; ".join(parts) + "."


def _markdown(out: Path, loaded, summaries, mode: str, fig_names: list[str]) -> Path:
    scope = _scope_line(loaded)
    lines = [
        "# MVL-SIB evaluation report",
        "",
        f"Letters read in `{mode}` mode. Figures in %, with 95 % bootstrap confidence intervals in brackets "
        "(seeded; method in docs/analysis.md).",
        "",
        scope,
        "",
        "## Runs",
        "",
    ]
    lines += _runs_table(loaded)
    lines += [""] + completeness_lines([(label, cov) for label, _, _, cov in loaded])
    keys = sorted(
        {(r["task"], r["k"]) for _, _, m, _ in loaded for r in m["macro"]},
        key=lambda tk: (TASKS.index(tk[0]) if tk[0] in TASKS else len(TASKS), tk[1]),
    )
    lines += [
        "",
        "## Macro averages over languages (task × k)",
        "",
        scope,
        "",
        "Accuracy [95 % CI] / format-error rate / valid accuracy per run.",
        "",
    ]
    lines.append("| task | k | " + " | ".join(f"{label} acc | FE | valid" for label, _, _, _ in loaded) + " |")
    lines.append("|---|---|" + "---|---|---|" * len(loaded))
    for task, k in keys:
        cells = []
        for _, _, m, _ in loaded:
            row = next((r for r in m["macro"] if (r["task"], r["k"]) == (task, k)), None)
            cells += (
                [_fmt(row["accuracy"]) + _ci(row), _fmt(row["format_error_rate"]), _fmt(row["valid_accuracy"])]
                if row
                else ["–", "–", "–"]
            )
        lines.append(f"| {task} | {k} | " + " | ".join(cells) + " |")
    langs = sorted({lang for _, s in summaries for lang in s})
    lines += [
        "",
        "## Per language (accuracy pooled over task × k)",
        "",
        scope,
        "",
        "| language | name | family | resource | "
        + " | ".join(f"{label} acc | FE | text−cross gap" for label, _ in summaries)
        + " |",
        "|---|---|---|---|" + "---|---|---|" * len(summaries),
    ]
    for lang in langs:
        meta = next(s[lang] for _, s in summaries if lang in s)
        cells = []
        for _, s in summaries:
            row = s.get(lang)
            cells += (
                [
                    _fmt(row["accuracy"]) + _ci(row),
                    _fmt(row["format_error_rate"]),
                    _fmt(row["gap"]) + _ci(row, "gap_low", "gap_high"),
                ]
                if row
                else ["–"] * 3
            )
        lines.append(f"| {lang} | {meta['name']} | {meta['family']} | {meta['resource']} | " + " | ".join(cells) + " |")
    for gname in sorted({g for _, _, m, _ in loaded for g in m["groups"]}):
        lines += [
            "",
            f"## Groups: {gname}",
            "",
            scope,
            "",
            "| run | group | task | k | languages | acc [95 % CI] | FE | valid |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for label, _, m, _ in loaded:
            for r in m["groups"].get(gname, []):
                lines.append(
                    f"| {label} | {r['group']} | {r['task']} | {r['k']} | {r['n_languages']} | "
                    f"{_fmt(r['accuracy'])}{_ci(r)} | {_fmt(r['format_error_rate'])} | "
                    f"{_fmt(r['valid_accuracy'])} |"
                )
    if fig_names and not fig_names[0].endswith(".png"):
        lines += ["", "## Figures", "", fig_names[0]]
    elif fig_names:
        lines += ["", "## Figures", "", scope, "", "Each figure is also written as SVG beside the PNG.", ""]
        lines += [f"![{name[:-4]}]({name})\n" for name in fig_names]
    lines += [
        "",
        "Leaderboard: [leaderboard.md](leaderboard.md), [leaderboard.csv](leaderboard.csv), "
        "[leaderboard.html](leaderboard.html).",
        "",
    ]
    path = out / "report.md"
    with atomic_open(path) as fh:
        fh.write("\n".join(lines))
    return path


# ---------------------------------------------------------------- leaderboard


def leaderboard_rows(loaded) -> tuple[list[tuple[str, int]], list[dict]]:
    """Models as rows, task x k as columns (macro over languages, with intervals), sorted by the overall mean."""
    keys = sorted(
        {(r["task"], r["k"]) for _, _, m, _ in loaded for r in m["macro"]},
        key=lambda tk: (TASKS.index(tk[0]) if tk[0] in TASKS else len(TASKS), tk[1]),
    )
    rows = []
    for label, config, m, cov in loaded:
        cells = {(r["task"], r["k"]): r for r in m["macro"]}
        row = {
            "run": label,
            "model": config.get("fingerprint", {}).get("model"),
            "subset": cov["subset"],
            "complete": cov["complete"],
            "n_languages": len(m["languages"]),
            "mean": _mean([cells[k]["accuracy"] for k in keys if k in cells]) if len(cells) == len(keys) else None,
            "cells": cells,
        }
        rows.append(row)
    rows.sort(key=lambda r: (-(r["mean"] if r["mean"] is not None else -1), r["run"]))
    return keys, rows


def write_leaderboard(out: Path, loaded) -> list[Path]:
    keys, rows = leaderboard_rows(loaded)
    scope = _scope_line(loaded)
    col = [f"{t} k={k}" for t, k in keys]
    # CSV
    fields = ["rank", "run", "model", "n_languages", "complete", "subset", "mean"]
    for c in col:
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
        for c, key in zip(col, keys):
            cell = r["cells"].get(key)
            d[c], d[f"{c} ci_low"], d[f"{c} ci_high"] = (
                (cell["accuracy"], cell["ci_low"], cell["ci_high"]) if cell else (None, None, None)
            )
        csv_rows.append(d)
    written = [_write_csv(out / "leaderboard.csv", csv_rows, fields)]
    # Markdown
    md = [
        "# MVL-SIB leaderboard",
        "",
        "Macro accuracy over languages (%), 95 % bootstrap CI in brackets; "
        "mean = mean over the task × k columns (– when a run lacks one).",
        "",
        scope,
        "",
        "| # | run | model | languages | mean | " + " | ".join(col) + " |",
        "|---|---|---|---|---|" + "---|" * len(col),
    ]
    for i, r in enumerate(rows, start=1):
        cells = [(_fmt(r["cells"][k]["accuracy"]) + _ci(r["cells"][k])) if k in r["cells"] else "–" for k in keys]
        md.append(
            f"| {i} | {r['run']}{'' if r['complete'] else ' (incomplete)'} | `{r['model']}` | "
            f"{r['n_languages']} | {_fmt(r['mean'])} | " + " | ".join(cells) + " |"
        )
    path = out / "leaderboard.md"
    with atomic_open(path) as fh:
        fh.write("\n".join(md) + "\n")
    written.append(path)
    # HTML: one self-contained page (inline CSS, no scripts or external resources)
    e = html.escape
    head = "".join(f"<th>{e(c)}</th>" for c in ["#", "run", "model", "languages", "mean", *col])
    body = []
    for i, r in enumerate(rows, start=1):
        tds = [
            str(i),
            e(r["run"] + ("" if r["complete"] else " (incomplete)")),
            f"<code>{e(str(r['model']))}</code>",
            str(r["n_languages"]),
            _fmt(r["mean"]),
        ]
        for k in keys:
            c = r["cells"].get(k)
            tds.append(f"{_fmt(c['accuracy'])}<br><small>{e(_ci(c).strip())}</small>" if c else "–")
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
    path = out / "leaderboard.html"
    with atomic_open(path) as fh:
        fh.write(page)
    written.append(path)
    return written


# ---------------------------------------------------------------- figures


def group_rank(grouping: str, group: str) -> tuple:
    """Display order of groups: resource classes from 5 down, anything else alphabetical; unknown last."""
    from .languages import UNKNOWN

    if group == UNKNOWN:
        return (1, "")
    if grouping == "resource":
        return (0, "".join(chr(255 - ord(ch)) for ch in group))
    return (0, group)


def figure_scope(loaded) -> str:
    """The short scope line printed above every figure: per run, its subset and completeness."""
    parts = []
    for label, config, _, cov in loaded:
        fp = config.get("fingerprint", {})
        limit = fp.get("limit")
        rule = "all instances" if limit is None else f"{fp.get('limit_mode', 'first')} {limit}/{N_RELEASE} per language"
        parts.append(
            f"{label}: {rule}, {cov['n_done']}/{cov['n_expected']} predictions"
            f"{'' if cov['complete'] else ' (INCOMPLETE)'}"
        )
    return "; ".join(parts)


def _figures(out: Path, loaded, summaries) -> list[Path]:
    from . import figures as F

    scope = figure_scope(loaded)

    runs = [label for label, _ in summaries]
    langs = sorted({lang for _, s in summaries for lang in s})
    written: list[Path] = []

    def lang_rows(value_of):
        rows = []
        for lang in langs:
            meta = next(s[lang] for _, s in summaries if lang in s)
            rows.append(
                {
                    "language": lang,
                    **{g: meta[g] for g in FIGURE_GROUPINGS},
                    "runs": {label: value_of(s.get(lang)) for label, s in summaries},
                }
            )
        return rows

    def acc(s):
        return (
            None if s is None else {"v": 100 * s["accuracy"], "v_low": 100 * s["ci_low"], "v_high": 100 * s["ci_high"]}
        )

    def gap(s):
        if s is None or s["gap"] is None:
            return None
        out = {"v": 100 * s["gap"]}
        if s.get("gap_low") is not None:
            out.update(v_low=100 * s["gap_low"], v_high=100 * s["gap_high"])
        return out

    for grouping in FIGURE_GROUPINGS:
        written += F.language_dots(
            out / f"accuracy_by_language_{grouping}",
            runs,
            lang_rows(acc),
            value="v",
            group_key=grouping,
            title=f"Accuracy per language (pooled over task × k, 95% CI), grouped by {grouping}",
            xlabel="accuracy (%)",
            scope=scope,
            group_order=lambda g, grouping=grouping: group_rank(grouping, g),
        )
    written += F.language_dots(
        out / "gap_text_vs_crossmodal",
        runs,
        lang_rows(gap),
        value="v",
        group_key="family",
        title="Text-only minus cross-modal accuracy per language (paired by instance, 95% CI; grouped by family)",
        xlabel="gap (percentage points)",
        xlim=(-60, 60),
        chance=0,
        scope=scope,
        group_order=lambda g: group_rank("family", g),
    )
    for grouping in ("family", "resource", "script"):
        groups = {}
        for label, s in summaries:
            for g in group_summary(s, grouping):
                d = groups.setdefault(g["group"], {"group": g["group"], "n_languages": g["n_languages"], "runs": {}})
                d["runs"][label] = {
                    "accuracy": 100 * g["accuracy"],
                    "low": 100 * g["ci_low"],
                    "high": 100 * g["ci_high"],
                }
        if grouping == "resource":  # classes in their own order, 5 (most resources) first
            ordered = sorted(groups.values(), key=lambda g: group_rank(grouping, g["group"]))
        else:
            ordered = sorted(
                groups.values(), key=lambda g: (-(g["runs"].get(runs[0], {}).get("accuracy") or -1), g["group"])
            )
        written += F.group_dots(
            out / f"accuracy_by_{grouping}", runs, ordered, title=f"Accuracy by {grouping}", scope=scope
        )
    written += F.accuracy_over_k(
        out / "accuracy_over_k", runs, {label: m["macro"] for label, _, m, _ in loaded}, TASKS, scope=scope
    )
    written += F.task_k_heatmap(out / "task_k_heatmap", [(label, m) for label, _, m, _ in loaded], scope=scope)
    return written


def topic_confusions(loaded, raw, data, mode: str) -> tuple[str, list[tuple[str, dict]]] | None:
    """For the task whose options are topics (s2t): (gold topic, answered topic) counts per run, all
    languages pooled. Topic options are the same in every language, so one language's rows suffice."""
    from .parsing import parse_letter
    from .prompts import LETTERS

    task = next((t.name for t in TASK_TABLE if t.options == "topic_options"), None)
    if task is None or not data or not Path(data).is_dir():
        return None
    mvl = loader(data)
    langs = mvl.languages(data)
    if not langs:
        return None
    rows = {r["instance_id"]: r for r in mvl.load_rows(langs[0], data)}
    spec = TASK_BY_NAME[task]
    out = []
    for (label, _, _, _), records in zip(loaded, raw):
        counts: dict[tuple, int] = {}
        for r in records:
            row = rows.get(r["instance_id"])
            if r["task"] != task or row is None:
                continue
            letter = parse_letter(r["response"], mode)
            answered = row[spec.options][LETTERS.index(letter)] if letter in LETTERS else "none"
            key = (row["topic"], answered)
            counts[key] = counts.get(key, 0) + 1
        if counts:
            out.append((label, counts))
    return (task, out) if out else None


def _topic_confusion(out: Path, loaded, raw, data, mode: str) -> list[Path]:
    found = topic_confusions(loaded, raw, data, mode)
    if found is None:
        return []
    from . import figures as F

    task, matrices = found
    return F.topic_confusion(out / "topic_confusion", matrices[:3], list(TOPICS), task, scope=figure_scope(loaded))
