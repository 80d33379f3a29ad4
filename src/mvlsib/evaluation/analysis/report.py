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

from collections.abc import Callable, Mapping
from pathlib import Path
from statistics import NormalDist

from .._compat import TASK_TABLE, atomic_open, escape
from ..run.languages import GROUPINGS, info
from ..run.parsing import parse_letter
from ..run.prompts import LETTERS
from ..run.scoring import METRICS, compute_metrics
from ..run.stats import cell_interval, macro_interval
from .leaderboard import write_leaderboard
from .report_figures import draw_figures, topic_confusion_figure
from .report_format import ci, coverage, fmt, mean, scope_line, task_k_keys, write_csv
from .runs import load_runs

TEXT_ONLY = tuple(t.name for t in TASK_TABLE if not t.cross_modal)
CROSS_MODAL = tuple(t.name for t in TASK_TABLE if t.cross_modal)
LANGUAGE_FIELDS = [
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
]


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
        text = mean([c["accuracy"] for c in cells if c["task"] in TEXT_ONLY])
        cross = mean([c["accuracy"] for c in cells if c["task"] in CROSS_MODAL])
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
            "format_error_rate": mean([c["format_error_rate"] for c in cells]),
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
                "accuracy": mean([summary[lang]["accuracy"] for lang in langs]),
                "ci_low": lo,
                "ci_high": hi,
            }
        )
    return out


def write_report(  # noqa: PLR0913 - keyword-only report options; the redesign makes them a value
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
    different_releases: bool = False,
) -> list[Path]:
    out = Path(out)
    draw = figures and _can_draw()
    loaded, raw, mixed, data = _load_runs(
        runs,
        groups,
        mode=mode,
        metadata=metadata,
        warn=warn,
        names=names,
        different_releases=different_releases,
        release=data,
        own_release=draw,
    )
    out.mkdir(parents=True, exist_ok=True)  # only once every run has loaded: a failure writes nothing
    written = _write_tables(out, loaded)
    summaries = [(label, language_summary(m, metadata)) for label, _, m, _ in loaded]
    for (_, summ), records in zip(summaries, raw):
        for lang, (lo, hi) in gap_intervals(records, mode).items():
            if lang in summ and summ[lang]["gap"] is not None:
                summ[lang]["gap_low"], summ[lang]["gap_high"] = lo, hi
    lang_rows = [{"run": label, "language": lang, **s} for label, summ in summaries for lang, s in summ.items()]
    written.append(write_csv(out / "languages.csv", lang_rows, LANGUAGE_FIELDS))
    written += write_leaderboard(out, loaded)
    fig_names: list[str] = []
    if figures and not draw:
        fig_names = ["(figures skipped: install matplotlib to draw them)"]
    elif draw:
        figs = draw_figures(out, loaded, summaries, group_summary)
        figs += topic_confusion_figure(out, loaded, raw, data, mode)
        written += figs
        fig_names = [p.name for p in figs if p.suffix == ".png"]
    written.append(_markdown(out, loaded, summaries, mode, fig_names, mixed=mixed))
    return written


def _can_draw() -> bool:
    try:
        import matplotlib  # noqa: F401  (the figures' only third-party need; tables do without)
    except ImportError:
        return False
    return True


def _load_runs(
    runs, groups, *, mode: str, metadata, warn, **checks
) -> tuple[list[tuple], list[list[dict]], bool, str | None]:
    """(label, config, metrics, coverage) per run, each run's records (``load_runs`` and its ``checks``),
    whether the runs were made on different releases, and the release folder read beside them."""
    loaded, raw = [], []
    runs_ = load_runs(runs, warn=warn, where="report.md lists them", **checks)
    for run_ in runs_:
        label, config, records = run_.label, run_.config, run_.records
        cov = coverage(config, records)
        metrics = compute_metrics(records, mode, groups or config.get("groups") or {}, metadata)
        loaded.append((label, config, metrics, cov))
        raw.append(records)
    return loaded, raw, runs_.mixed, runs_.release


def _write_tables(out: Path, loaded) -> list[Path]:
    """per_language.csv, macro.csv and groups.csv of every run."""
    per_lang_rows, macro_rows, group_rows = [], [], []
    for label, _, m, _ in loaded:
        per_lang_rows += [{"run": label, **c} for c in m["per_language"]]
        macro_rows += [{"run": label, **r} for r in m["macro"]]
        for gname, rows in m["groups"].items():
            group_rows += [{"run": label, "grouping": gname, **r} for r in rows]
    metric_fields = ["n", *METRICS, "ci_low", "ci_high"]
    return [
        write_csv(out / "per_language.csv", per_lang_rows, ["run", "language", "task", "k", *metric_fields]),
        write_csv(out / "macro.csv", macro_rows, ["run", "task", "k", "n_languages", *metric_fields]),
        write_csv(
            out / "groups.csv", group_rows, ["run", "grouping", "group", "task", "k", "n_languages", *metric_fields]
        ),
    ]


def _runs_table(loaded) -> list[str]:
    lines = escape.md_table_head(
        ["run", "model", "backend", "subset", "predictions", "complete", "prompts sha256", "release manifest sha256"]
    )
    for label, config, _, cov in loaded:
        fp = config.get("fingerprint", {})
        lines.append(
            escape.md_row(
                [
                    label,
                    escape.md_code(fp.get("model")),
                    fp.get("backend"),
                    cov["subset"],
                    f"{cov['n_done']} of {cov['n_expected'] if cov['n_expected'] is not None else '?'}",
                    "yes" if cov["complete"] else escape.md_strong("no"),
                    escape.md_code((fp.get("prompts_sha256") or "")[:12]),
                    escape.md_code((fp.get("release_manifest_sha256") or "–")[:12]),
                ]
            )
        )
    return lines


def completeness_lines(coverage) -> list[str]:
    """The report's completeness section: n done / n expected per run, and every short cell."""
    lines = ["## Completeness", "", *escape.md_table_head(["run", "predictions", "expected", "complete"])]
    for label, c in coverage:
        expected = c["n_expected"] if c["n_expected"] is not None else "?"
        lines.append(escape.md_row([label, c["n_done"], expected, "yes" if c["complete"] else escape.md_strong("NO")]))
    short = [(label, cell) for label, c in coverage for cell in c["incomplete_cells"]]
    if short:
        lines += [
            "",
            "Incomplete cells (their figures cover only the predictions present):",
            "",
            *escape.md_table_head(["run", "language", "task", "k", "done / expected"]),
        ]
        lines += [
            escape.md_row([label, x["language"], x["task"], x["k"], f"{x['n_done']} / {x['n_expected']}"])
            for label, x in short
        ]
    return lines + [""]


def _markdown(out: Path, loaded, summaries, mode: str, fig_names: list[str], *, mixed: bool) -> Path:
    # Run labels (--name, folder names) and the language metadata are others' text: every table row
    # below is made by ``md_row``, which escapes each cell, and the scope line escapes the labels itself.
    scope = scope_line(loaded)
    lines = [
        "# MVL-SIB evaluation report",
        "",
        f"Letters read in `{mode}` mode. Figures in %, with 95 % bootstrap confidence intervals in brackets "
        "(seeded; method in docs/analysis.md).",
        "",
        scope,
        "",
    ]
    if mixed:  # allowed with --different-releases, and said first
        lines += [
            "**WARNING: these runs were made on different releases** (see the release column): the same "
            "keys may hold other instances or images, so their figures are not paired.",
            "",
        ]
    lines += ["## Runs", ""]
    lines += _runs_table(loaded)
    lines += [""] + completeness_lines([(label, cov) for label, _, _, cov in loaded])
    lines += _macro_section(loaded, scope)
    lines += _language_section(summaries, scope)
    lines += _group_sections(loaded, scope)
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


def _macro_section(loaded, scope: str) -> list[str]:
    lines = [
        "",
        "## Macro averages over languages (task × k)",
        "",
        scope,
        "",
        "Accuracy [95 % CI] / format-error rate / valid accuracy per run.",
        "",
    ]
    lines += escape.md_table_head(
        ["task", "k", *(col for label, _, _, _ in loaded for col in (f"{label} acc", "FE", "valid"))]
    )
    for task, k in task_k_keys(loaded):
        cells = []
        for _, _, m, _ in loaded:
            row = next((r for r in m["macro"] if (r["task"], r["k"]) == (task, k)), None)
            cells += (
                [fmt(row["accuracy"]) + ci(row), fmt(row["format_error_rate"]), fmt(row["valid_accuracy"])]
                if row
                else ["–", "–", "–"]
            )
        lines.append(escape.md_row([task, k, *cells]))
    return lines


def _language_section(summaries, scope: str) -> list[str]:
    lines = [
        "",
        "## Per language (accuracy pooled over task × k)",
        "",
        scope,
        "",
        *escape.md_table_head(
            [
                "language",
                "name",
                "family",
                "resource",
                *(col for label, _ in summaries for col in (f"{label} acc", "FE", "text−cross gap")),
            ]
        ),
    ]
    for lang in sorted({lang for _, s in summaries for lang in s}):
        meta = next(s[lang] for _, s in summaries if lang in s)
        cells = []
        for _, s in summaries:
            row = s.get(lang)
            cells += (
                [
                    fmt(row["accuracy"]) + ci(row),
                    fmt(row["format_error_rate"]),
                    fmt(row["gap"]) + ci(row, "gap_low", "gap_high"),
                ]
                if row
                else ["–"] * 3
            )
        lines.append(escape.md_row([lang, meta["name"], meta["family"], meta["resource"], *cells]))
    return lines


def _group_sections(loaded, scope: str) -> list[str]:
    lines: list[str] = []
    for gname in sorted({g for _, _, m, _ in loaded for g in m["groups"]}):
        lines += [
            "",
            f"## Groups: {escape.md_text(gname)}",
            "",
            scope,
            "",
            *escape.md_table_head(["run", "group", "task", "k", "languages", "acc [95 % CI]", "FE", "valid"]),
        ]
        for label, _, m, _ in loaded:
            for r in m["groups"].get(gname, []):
                lines.append(
                    escape.md_row(
                        [
                            label,
                            r["group"],
                            r["task"],
                            r["k"],
                            r["n_languages"],
                            fmt(r["accuracy"]) + ci(r),
                            fmt(r["format_error_rate"]),
                            fmt(r["valid_accuracy"]),
                        ]
                    )
                )
    return lines
