"""Figures for a paper: PNG (300 dpi) and SVG, sized for a page (7 in wide) or a column (3.4 in).

matplotlib is imported here only, when a figure is drawn. Every figure draws points with
their confidence intervals, never bars from zero; a value a run does not have is left
out and labelled "n/a", never drawn as 0. The inputs are plain dicts prepared by
``report_figures``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._compat import TASKS, atomic_open

PAGE_WIDTH = 7.0  # inches: a full page width of a two-column paper (A4/letter)
COLUMN_WIDTH = 3.4
CHANCE = 25.0
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
COLORS = ("#1b6ca8", "#d1495b", "#2e933c", "#edae49", "#6a4c93", "#00798c", "#8d6a9f", "#3d3d3d")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "font.size": 7,
            "axes.titlesize": 7.5,
            "axes.labelsize": 7,
            "legend.fontsize": 6.5,
            "xtick.labelsize": 6.5,
            "ytick.labelsize": 6.5,
            "svg.hashsalt": "mvlsib",
            # Every text on every figure is literal: a "$" in a run name, a group or a metadata value
            # (from a user's CSV) never starts a formula, which would raise on a malformed one.
            "text.parse_math": False,
            "font.family": "DejaVu Sans",
        }
    )
    return plt


def save(fig, base: Path, scope: str = "") -> list[Path]:
    """``base``.png (300 dpi) and ``base``.svg, without timestamps (same input, same bytes).

    ``scope`` (each run's subset and completeness) is printed above the figure, so a figure
    copied out of its report still says what it covers."""
    if scope:
        # ~24 characters per inch at 5.5 pt; wrapped by hand (matplotlib's wrap leaves gaps under tight bbox)
        width = max(40, int(fig.get_figwidth() * 24))
        fig.text(
            0.5, 1.0, "\n".join(textwrap.wrap(scope, width)), ha="center", va="bottom", fontsize=5.5, color="#444444"
        )
    out = []
    for ext, kw in (("png", {"dpi": 300, "metadata": {"Software": None}}), ("svg", {"metadata": {"Date": None}})):
        path = base.with_suffix(f".{ext}")
        with atomic_open(path, "wb") as fh:
            fig.savefig(fh, format=ext, bbox_inches="tight", **kw)
        out.append(path)
    return out


def language_dots(  # noqa: PLR0913 - keyword-only figure options; the redesign makes them a value
    base: Path,
    runs: Sequence[str],
    rows: Sequence[dict],
    *,
    value: str,
    title: str,
    xlabel: str,
    group_key: str,
    xlim=(0, 100),
    chance: float | None = CHANCE,
    columns: int = 3,
    group_order=lambda g: g,
    scope: str = "",
) -> list[Path]:
    """Per-language dot plot with intervals, languages grouped (shaded bands) and sorted within groups.

    ``rows``: one dict per language with ``language``, ``group_key`` and, per run label,
    ``{run: {value: v, value_low: lo, value_high: hi}}`` (missing run -> not drawn, "n/a").
    Long lists wrap into ``columns`` side-by-side panels so labels stay readable on a page.
    """
    plt = _pyplot()
    entries = _language_entries(rows, runs[0], value, group_key, group_order)
    columns = max(1, min(columns, (len(entries) + 24) // 25))
    per_col = -(-len(entries) // columns)
    height = min(9.3, max(2.2, 0.105 * per_col + 0.9))
    fig, axes = plt.subplots(1, columns, figsize=(PAGE_WIDTH, height), squeeze=False, sharex=True)
    group_names = sorted({r[group_key] for r in rows}, key=group_order)
    for col, ax in enumerate(axes[0]):
        part = entries[col * per_col : (col + 1) * per_col]
        if part and part[0][0] == "language":
            part = [("group", f"{part[0][1][group_key]} (cont.)"), *part]
        shaded = [kind == "language" and group_names.index(item[group_key]) % 2 == 0 for kind, item in part]
        _language_panel(ax, part, shaded, runs, value=value, xlim=xlim)
        _panel_axes(ax, part, xlim, chance, xlabel)
    fig.suptitle(title, fontsize=7.5)
    if len(runs) > 1:
        _run_legend(fig, runs)
    fig.tight_layout(rect=(0, 0.03 if len(runs) > 1 else 0, 1, 0.97))
    try:
        return save(fig, base, scope)
    finally:
        plt.close(fig)


def _language_entries(rows, first: str, value: str, group_key: str, group_order) -> list[tuple[str, Any]]:
    """("group", name) and ("language", row) entries: groups in order, languages by the first run's
    value within a group. A header row opens each group, so group names never sit on top of data points."""

    def sort_key(r):
        v = (r["runs"].get(first) or {}).get(value)
        return (group_order(r[group_key]), -(v if v is not None else -1e9), r["language"])

    entries: list[tuple[str, Any]] = []
    current = None
    for r in sorted(rows, key=sort_key):
        if not entries or r[group_key] != current:
            current = r[group_key]
            entries.append(("group", current))
        entries.append(("language", r))
    return entries


def _language_panel(ax, part, shaded: list[bool], runs: Sequence[str], *, value: str, xlim) -> None:
    """One panel's points and intervals (each run offset a little), groups' rows shaded alternately."""
    for y, (kind, item) in enumerate(part):
        if kind == "group":
            continue
        if shaded[y]:
            ax.axhspan(y - 0.5, y + 0.5, color="#eeeeee", zorder=0, linewidth=0)
        for j, run in enumerate(runs):
            off = (j - (len(runs) - 1) / 2) * min(0.25, 0.6 / max(1, len(runs)))
            d = item["runs"].get(run) or {}
            v = d.get(value)
            color = COLORS[j % len(COLORS)]
            if v is None:
                ax.text(xlim[0] + 0.01 * (xlim[1] - xlim[0]), y + off, "n/a", fontsize=5, va="center", color=color)
                continue
            lo, hi = d.get(f"{value}_low"), d.get(f"{value}_high")
            if lo is not None and hi is not None:
                ax.plot([lo, hi], [y + off] * 2, color=color, linewidth=0.7, zorder=2)
            ax.plot(
                [v],
                [y + off],
                marker=MARKERS[j % len(MARKERS)],
                color=color,
                markersize=2.6,
                linestyle="none",
                zorder=3,
            )


def _panel_axes(ax, part, xlim, chance: float | None, xlabel: str) -> None:
    """Row labels (group headers bold italic), limits, the chance line and the grid of one panel."""
    labels = [item if kind == "group" else item["language"] for kind, item in part]
    ax.set_yticks(range(len(part)), labels, fontsize=5.5)
    for tick, (kind, _) in zip(ax.get_yticklabels(), part):
        if kind == "group":
            tick.set_fontweight("bold")
            tick.set_fontstyle("italic")
    ax.set_ylim(len(part) - 0.5, -0.5)
    ax.set_xlim(*xlim)
    if chance is not None:
        ax.axvline(chance, color="grey", linewidth=0.6, linestyle="--", zorder=1)
    ax.grid(axis="x", linewidth=0.3, color="#cccccc")
    ax.set_xlabel(xlabel)
    ax.tick_params(axis="y", length=0)


def _run_legend(fig, runs: Sequence[str]) -> None:
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [],
            [],
            marker=MARKERS[j % len(MARKERS)],
            color=COLORS[j % len(COLORS)],
            markersize=3,
            linewidth=0.7,
            label=run,
        )
        for j, run in enumerate(runs)
    ]
    fig.legend(handles=handles, loc="lower center", ncol=min(4, len(runs)), frameon=False, bbox_to_anchor=(0.5, -0.01))


def group_dots(base: Path, runs: Sequence[str], groups: Sequence[dict], *, title: str, scope: str = "") -> list[Path]:
    """Column-width dot plot: one row per group (``{group, n_languages, runs: {run: {accuracy, low, high}}}``)."""
    plt = _pyplot()
    height = max(1.6, 0.17 * len(groups) + 0.8)
    fig, ax = plt.subplots(figsize=(COLUMN_WIDTH, height))
    for j, run in enumerate(runs):
        off = (j - (len(runs) - 1) / 2) * min(0.25, 0.6 / max(1, len(runs)))
        for y, g in enumerate(groups):
            d = g["runs"].get(run) or {}
            if d.get("accuracy") is None:
                ax.text(1, y + off, "n/a", fontsize=5, va="center")
                continue
            if d.get("low") is not None:
                ax.plot([d["low"], d["high"]], [y + off] * 2, color=COLORS[j % len(COLORS)], linewidth=0.8)
            ax.plot(
                [d["accuracy"]],
                [y + off],
                marker=MARKERS[j % len(MARKERS)],
                color=COLORS[j % len(COLORS)],
                markersize=3,
                linestyle="none",
                label=run if y == 0 else None,
            )
    ax.set_yticks(range(len(groups)), [f"{g['group']} ({g['n_languages']})" for g in groups])
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.set_xlim(0, 100)
    ax.axvline(CHANCE, color="grey", linewidth=0.6, linestyle="--")
    ax.grid(axis="x", linewidth=0.3, color="#cccccc")
    ax.set_xlabel("accuracy (%), mean over task × k, 95% CI")
    ax.set_title(title)
    if len(runs) > 1:
        ax.legend(loc="best", frameon=False)
    fig.tight_layout()
    try:
        return save(fig, base, scope)
    finally:
        plt.close(fig)


def accuracy_over_k(
    base: Path, runs: Sequence[str], macros: dict[str, list[dict]], tasks: Sequence[str], *, scope: str = ""
) -> list[Path]:
    """One panel per task: macro accuracy over k with intervals, one line per run (column or page width)."""
    plt = _pyplot()
    tasks = [t for t in tasks if any(r["task"] == t for rows in macros.values() for r in rows)]
    fig, axes = plt.subplots(
        1, len(tasks), figsize=(PAGE_WIDTH if len(tasks) > 2 else COLUMN_WIDTH, 1.9), squeeze=False, sharey=True
    )
    for ax, task in zip(axes[0], tasks):
        for j, run in enumerate(runs):
            pts = sorted((r["k"], r) for r in macros.get(run, []) if r["task"] == task)
            if not pts:
                continue
            ks = [k for k, _ in pts]
            acc = [100 * r["accuracy"] for _, r in pts]
            err = [
                [100 * (r["accuracy"] - r["ci_low"]) if r.get("ci_low") is not None else 0 for _, r in pts],
                [100 * (r["ci_high"] - r["accuracy"]) if r.get("ci_high") is not None else 0 for _, r in pts],
            ]
            ax.errorbar(
                ks,
                acc,
                yerr=err,
                marker=MARKERS[j % len(MARKERS)],
                color=COLORS[j % len(COLORS)],
                markersize=3,
                linewidth=0.8,
                capsize=1.5,
                label=run,
            )
        ax.set_title(task)
        ax.set_xticks(sorted({r["k"] for rows in macros.values() for r in rows if r["task"] == task}))
        ax.set_xlabel("k (references)")
        ax.set_ylim(0, 100)
        ax.axhline(CHANCE, color="grey", linewidth=0.6, linestyle="--")
        ax.grid(axis="y", linewidth=0.3, color="#cccccc")
    axes[0][0].set_ylabel("macro accuracy (%)")
    if len(runs) > 1:
        axes[0][-1].legend(frameon=False)
    fig.tight_layout()
    try:
        return save(fig, base, scope)
    finally:
        plt.close(fig)


def task_k_heatmap(base: Path, loaded, *, scope: str = "") -> list[Path]:
    """The task x k heatmap per run (macro accuracy), kept from the first report."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(loaded), figsize=(min(PAGE_WIDTH, 2.6 * len(loaded) + 0.8), 2.0), squeeze=False)
    im = None
    for ax, (label, m) in zip(axes[0], loaded):
        tasks = [t for t in TASKS if any(r["task"] == t for r in m["macro"])]
        ks = sorted({r["k"] for r in m["macro"]})
        grid = [[float("nan")] * len(ks) for _ in tasks]
        for r in m["macro"]:
            grid[tasks.index(r["task"])][ks.index(r["k"])] = 100 * r["accuracy"]
        im = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
        ax.set_xticks(range(len(ks)), [f"k={k}" for k in ks])
        ax.set_yticks(range(len(tasks)), tasks)
        for i in range(len(tasks)):
            for j in range(len(ks)):
                v = grid[i][j]
                ax.text(
                    j,
                    i,
                    "n/a" if v != v else f"{v:.1f}",
                    ha="center",
                    va="center",
                    color="#777777" if v != v else ("white" if v < 60 else "black"),
                    fontsize=6,
                )
        ax.set_title(label)
    fig.colorbar(im, ax=list(axes[0]), shrink=0.8, label="macro accuracy (%)")
    try:
        return save(fig, base, scope)
    finally:
        plt.close(fig)


def topic_confusion(
    base: Path, matrices: Sequence[tuple[str, dict]], topics: Sequence[str], task: str, *, scope: str = ""
) -> list[Path]:
    """Row-normalised confusion of gold topic (rows) vs answered topic (columns, plus "none"), one panel per run."""
    plt = _pyplot()
    cols = [*topics, "none"]
    n = len(matrices)
    fig, axes = plt.subplots(1, n, figsize=(min(PAGE_WIDTH, 3.3 * n + 0.5), 3.0), squeeze=False)
    im = None
    for ax, (label, counts) in zip(axes[0], matrices):
        grid = []
        for gold in topics:
            row = [counts.get((gold, c), 0) for c in cols]
            total = sum(row)
            grid.append([100 * v / total if total else float("nan") for v in row])
        im = ax.imshow(grid, vmin=0, vmax=100, cmap="Blues", aspect="auto")
        for i in range(len(topics)):
            for j in range(len(cols)):
                v = grid[i][j]
                ax.text(
                    j,
                    i,
                    "n/a" if v != v else f"{v:.0f}",
                    ha="center",
                    va="center",
                    fontsize=5,
                    color="white" if v == v and v > 60 else "black",
                )
        short = [c.replace("science/technology", "sci/tech").replace("entertainment", "entertain.") for c in cols]
        ax.set_xticks(range(len(cols)), short, rotation=45, ha="right")
        ax.set_yticks(range(len(topics)), short[:-1])
        if ax is not axes[0][0]:  # one set of row labels: they would run into the panel to the left
            ax.tick_params(labelleft=False)
        ax.set_xlabel("answered topic")
        ax.set_title(f"{label} ({task})")
    axes[0][0].set_ylabel("gold topic")
    fig.colorbar(im, ax=list(axes[0]), shrink=0.8, label="% of the gold topic's items")
    try:
        return save(fig, base, scope)
    finally:
        plt.close(fig)
