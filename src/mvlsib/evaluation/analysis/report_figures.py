"""The report's figures: per-language dots, groups, accuracy over k, the task x k heatmap and the
s2t topic confusion, each over every run with its scope line (drawing in ``figures``)."""

from __future__ import annotations

from pathlib import Path

from .._compat import LOADER, TASK_BY_NAME, TASK_TABLE, TASKS, TOPICS, escape
from ..run.languages import UNKNOWN
from ..run.parsing import parse_letter
from ..run.prompts import LETTERS
from . import figures
from .report_format import N_RELEASE

FIGURE_GROUPINGS = ("family", "resource")


def group_rank(grouping: str, group: str) -> tuple:
    """Display order of groups: resource classes from 5 down, anything else alphabetical; unknown last."""
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


def draw_figures(out: Path, loaded, summaries, group_summary) -> list[Path]:
    """Every figure of the report (``group_summary``: the per-group summary of one run's languages)."""
    loaded, summaries = _drawn_labels(loaded), [(escape.mpl_text(label), s) for label, s in summaries]
    scope = figure_scope(loaded)
    runs = [label for label, _ in summaries]
    written = _language_figures(out, runs, summaries, scope)
    for grouping in ("family", "resource", "script"):
        ordered = _group_rows(summaries, runs, grouping, group_summary)
        written += figures.group_dots(
            out / f"accuracy_by_{grouping}", runs, ordered, title=f"Accuracy by {grouping}", scope=scope
        )
    written += figures.accuracy_over_k(
        out / "accuracy_over_k", runs, {label: m["macro"] for label, _, m, _ in loaded}, TASKS, scope=scope
    )
    written += figures.task_k_heatmap(out / "task_k_heatmap", [(label, m) for label, _, m, _ in loaded], scope=scope)
    return written


def _drawn_labels(loaded) -> list:
    """``loaded`` with each run label as matplotlib must get it to draw it literally (``$`` escaped)."""
    return [(escape.mpl_text(label), *rest) for label, *rest in loaded]


def _accuracy_point(s):
    return None if s is None else {"v": 100 * s["accuracy"], "v_low": 100 * s["ci_low"], "v_high": 100 * s["ci_high"]}


def _gap_point(s):
    if s is None or s["gap"] is None:
        return None
    out = {"v": 100 * s["gap"]}
    if s.get("gap_low") is not None:
        out.update(v_low=100 * s["gap_low"], v_high=100 * s["gap_high"])
    return out


def _language_rows(summaries, value_of) -> list[dict]:
    rows = []
    for lang in sorted({lang for _, s in summaries for lang in s}):
        meta = next(s[lang] for _, s in summaries if lang in s)
        rows.append(
            {
                "language": lang,
                **{g: meta[g] for g in FIGURE_GROUPINGS},
                "runs": {label: value_of(s.get(lang)) for label, s in summaries},
            }
        )
    return rows


def _language_figures(out: Path, runs, summaries, scope: str) -> list[Path]:
    written: list[Path] = []
    for grouping in FIGURE_GROUPINGS:
        written += figures.language_dots(
            out / f"accuracy_by_language_{grouping}",
            runs,
            _language_rows(summaries, _accuracy_point),
            value="v",
            group_key=grouping,
            title=f"Accuracy per language (pooled over task × k, 95% CI), grouped by {grouping}",
            xlabel="accuracy (%)",
            scope=scope,
            group_order=lambda g, grouping=grouping: group_rank(grouping, g),
        )
    written += figures.language_dots(
        out / "gap_text_vs_crossmodal",
        runs,
        _language_rows(summaries, _gap_point),
        value="v",
        group_key="family",
        title="Text-only minus cross-modal accuracy per language (paired by instance, 95% CI; grouped by family)",
        xlabel="gap (percentage points)",
        xlim=(-60, 60),
        chance=0,
        scope=scope,
        group_order=lambda g: group_rank("family", g),
    )
    return written


def _group_rows(summaries, runs, grouping: str, group_summary) -> list[dict]:
    groups: dict[str, dict] = {}
    for label, s in summaries:
        for g in group_summary(s, grouping):
            d = groups.setdefault(g["group"], {"group": g["group"], "n_languages": g["n_languages"], "runs": {}})
            d["runs"][label] = {"accuracy": 100 * g["accuracy"], "low": 100 * g["ci_low"], "high": 100 * g["ci_high"]}
    if grouping == "resource":  # classes in their own order, 5 (most resources) first
        return sorted(groups.values(), key=lambda g: group_rank(grouping, g["group"]))
    return sorted(groups.values(), key=lambda g: (-(g["runs"].get(runs[0], {}).get("accuracy") or -1), g["group"]))


def topic_confusions(loaded, raw, data, mode: str) -> tuple[str, list[tuple[str, dict]]] | None:
    """For the task whose options are topics (s2t): (gold topic, answered topic) counts per run, all
    languages pooled. Topic options are the same in every language, so one language's rows suffice."""
    task = next((t.name for t in TASK_TABLE if t.options == "topic_options"), None)
    if task is None or data is None:  # data: a release folder load_runs checked
        return None
    mvl = LOADER
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


def topic_confusion_figure(out: Path, loaded, raw, data, mode: str) -> list[Path]:
    loaded = _drawn_labels(loaded)
    found = topic_confusions(loaded, raw, data, mode)
    if found is None:
        return []
    task, matrices = found
    return figures.topic_confusion(
        out / "topic_confusion", matrices[:3], list(TOPICS), task, scope=figure_scope(loaded)
    )
