"""``mvlsib-eval report``: tables (Markdown, CSV) and plots (PNG) for runs side by side.

Metrics are recomputed from each run's stored responses (so ``--parse-mode`` and
``--groups`` apply to old runs too). Plots: mean accuracy per language (sorted by the
first run), a task x k heatmap per run, and per language the gap between the text-only
tasks (t2s, s2t) and the cross-modal ones (i2s, s2i).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Callable, Mapping

from ._compat import TASK_TABLE, TASKS, MvlsibError, atomic_open
from .store import completeness, load_run
from .scoring import METRICS, compute_metrics

TEXT_ONLY = tuple(t.name for t in TASK_TABLE if not t.cross_modal)
CROSS_MODAL = tuple(t.name for t in TASK_TABLE if t.cross_modal)


def _fmt(v) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


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


def language_summary(metrics: dict) -> dict[str, dict[str, float | None]]:
    """Per language: mean accuracy over all task x k, over text-only, over cross-modal, and the gap."""
    by_lang: dict[str, list[dict]] = {}
    for c in metrics["per_language"]:
        by_lang.setdefault(c["language"], []).append(c)
    out = {}
    for lang, cells in sorted(by_lang.items()):
        text = _mean([c["accuracy"] for c in cells if c["task"] in TEXT_ONLY])
        cross = _mean([c["accuracy"] for c in cells if c["task"] in CROSS_MODAL])
        out[lang] = {
            "accuracy": _mean([c["accuracy"] for c in cells]),
            "format_error_rate": _mean([c["format_error_rate"] for c in cells]),
            "text_only": text,
            "cross_modal": cross,
            "gap": None if text is None or cross is None else text - cross,
        }
    return out


def write_report(runs: list[str | Path], out: str | Path, *, groups: Mapping[str, Mapping[str, str]] | None = None,
                 mode: str = "relaxed", names: list[str] | None = None,
                 warn: Callable[[str], None] | None = None) -> list[Path]:
    out = Path(out)
    if names is not None and len(names) != len(runs):
        raise MvlsibError(f"--name was given {len(names)} times for {len(runs)} runs; give one per run or none")
    labels = names or [Path(r).resolve().name for r in runs]
    if len(set(labels)) != len(labels):
        labels = [f"{i + 1}:{label}" for i, label in enumerate(labels)]
    loaded, coverage = [], []
    for run, label in zip(runs, labels):
        config, records, _ = load_run(run)  # refuses a run with duplicate keys
        if not records:
            raise MvlsibError(f"{run}: predictions.jsonl is empty")
        coverage.append((label, completeness(config, records)))
        if warn is not None and not coverage[-1][1]["complete"]:
            c = coverage[-1][1]
            warn(f"{run} is incomplete: {c['n_done']} of {c['n_expected'] if c['n_expected'] is not None else '?'} "
                 f"predictions ({len(c['incomplete_cells'])} short cells); report.md lists them")
        metrics = compute_metrics(records, mode, groups or config.get("groups") or {})
        loaded.append((label, config, metrics))
    out.mkdir(parents=True, exist_ok=True)  # only once every run has loaded: a failure writes nothing

    written: list[Path] = []
    per_lang_rows, macro_rows, group_rows = [], [], []
    for label, _, m in loaded:
        per_lang_rows += [{"run": label, **c} for c in m["per_language"]]
        macro_rows += [{"run": label, **r} for r in m["macro"]]
        for gname, rows in m["groups"].items():
            group_rows += [{"run": label, "grouping": gname, **r} for r in rows]
    metric_fields = ["n", *METRICS]
    written.append(_write_csv(out / "per_language.csv", per_lang_rows, ["run", "language", "task", "k", *metric_fields]))
    written.append(_write_csv(out / "macro.csv", macro_rows, ["run", "task", "k", "n_languages", *metric_fields]))
    written.append(_write_csv(out / "groups.csv", group_rows,
                              ["run", "grouping", "group", "task", "k", "n_languages", *metric_fields]))
    summaries = [(label, language_summary(m)) for label, _, m in loaded]
    lang_rows = []
    for label, summ in summaries:
        lang_rows += [{"run": label, "language": lang, **s} for lang, s in summ.items()]
    written.append(_write_csv(out / "languages.csv", lang_rows,
                              ["run", "language", "accuracy", "format_error_rate", "text_only", "cross_modal", "gap"]))
    written += _plots(out, loaded, summaries)
    written.append(_markdown(out, loaded, summaries, mode, coverage))
    return written


def completeness_lines(coverage) -> list[str]:
    """The report's completeness section: n done / n expected per run, and every short cell."""
    lines = ["## Completeness", "", "| run | predictions | expected | complete |", "|---|---|---|---|"]
    for label, c in coverage:
        lines.append(f"| {label} | {c['n_done']} | {c['n_expected'] if c['n_expected'] is not None else '?'} | "
                     f"{'yes' if c['complete'] else '**NO**'} |")
    short = [(label, cell) for label, c in coverage for cell in c["incomplete_cells"]]
    if short:
        lines += ["", "Incomplete cells (their figures cover only the predictions present):", "",
                  "| run | language | task | k | done / expected |", "|---|---|---|---|---|"]
        lines += [f"| {label} | {x['language']} | {x['task']} | {x['k']} | {x['n_done']} / {x['n_expected']} |"
                  for label, x in short]
    return lines + [""]


def _markdown(out: Path, loaded, summaries, mode: str, coverage=()) -> Path:
    lines = ["# MVL-SIB evaluation report", "", f"Letters read in `{mode}` mode. Figures in %.", "", "## Runs", ""]
    lines += ["| run | model | backend | revision | prompts sha256 | release manifest sha256 | predictions |",
              "|---|---|---|---|---|---|---|"]
    for label, config, m in loaded:
        fp = config.get("fingerprint", {})
        lines.append(
            f"| {label} | `{fp.get('model')}` | {fp.get('backend')} | {fp.get('model_revision') or '–'} | "
            f"`{(fp.get('prompts_sha256') or '')[:12]}` | `{(fp.get('release_manifest_sha256') or '–')[:12]}` | "
            f"{m['n_predictions']} |"
        )
    lines += [""] + completeness_lines(coverage)
    keys = sorted({(r["task"], r["k"]) for _, _, m in loaded for r in m["macro"]},
                  key=lambda tk: (TASKS.index(tk[0]) if tk[0] in TASKS else len(TASKS), tk[1]))
    lines += ["", "## Macro averages over languages (task × k)", "",
              "Accuracy / format-error rate / valid accuracy per run.", ""]
    lines.append("| task | k | " + " | ".join(f"{label} acc | FE | valid" for label, _, _ in loaded) + " |")
    lines.append("|---|---|" + "---|---|---|" * len(loaded))
    for task, k in keys:
        cells = []
        for _, _, m in loaded:
            row = next((r for r in m["macro"] if (r["task"], r["k"]) == (task, k)), None)
            cells += [_fmt(row and row["accuracy"]), _fmt(row and row["format_error_rate"]),
                      _fmt(row and row["valid_accuracy"])] if row else ["–", "–", "–"]
        lines.append(f"| {task} | {k} | " + " | ".join(cells) + " |")
    langs = sorted({lang for _, s in summaries for lang in s})
    lines += ["", "## Per language (mean over task × k)", "",
              "| language | " + " | ".join(f"{label} acc | FE | text−cross gap" for label, _ in summaries) + " |",
              "|---|" + "---|---|---|" * len(summaries)]
    for lang in langs:
        cells = []
        for _, s in summaries:
            row = s.get(lang)
            cells += [_fmt(row["accuracy"]), _fmt(row["format_error_rate"]), _fmt(row["gap"])] if row else ["–"] * 3
        lines.append(f"| {lang} | " + " | ".join(cells) + " |")
    for gname in sorted({g for _, _, m in loaded for g in m["groups"]}):
        lines += ["", f"## Groups: {gname}", "", "| run | group | task | k | languages | acc | FE | valid |",
                  "|---|---|---|---|---|---|---|---|"]
        for label, _, m in loaded:
            for r in m["groups"].get(gname, []):
                lines.append(f"| {label} | {r['group']} | {r['task']} | {r['k']} | {r['n_languages']} | "
                             f"{_fmt(r['accuracy'])} | {_fmt(r['format_error_rate'])} | {_fmt(r['valid_accuracy'])} |")
    lines += ["", "## Plots", "", "![accuracy per language](accuracy_per_language.png)", "",
              "![task x k](task_k_heatmap.png)", "", "![text-only vs cross-modal](text_vs_crossmodal_gap.png)", ""]
    path = out / "report.md"
    with atomic_open(path) as fh:
        fh.write("\n".join(lines))
    return path


def _plots(out: Path, loaded, summaries) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    first = summaries[0][1]
    langs = sorted(first, key=lambda lang: (-(first[lang]["accuracy"] or 0), lang))
    langs += sorted({lang for _, s in summaries for lang in s} - set(langs))
    width = max(6.0, 0.25 * len(langs) + 2)

    fig, ax = plt.subplots(figsize=(width, 4))
    n = len(summaries)
    for j, (label, s) in enumerate(summaries):
        xs = [i + (j - (n - 1) / 2) * 0.8 / n for i in range(len(langs))]
        ax.bar(xs, [100 * (s.get(lang, {}).get("accuracy") or 0) for lang in langs], width=0.8 / n, label=label)
    ax.set_xticks(range(len(langs)), langs, rotation=90, fontsize=7)
    ax.set_ylabel("accuracy (%), mean over task × k")
    ax.set_ylim(0, 100)
    ax.axhline(25, color="grey", linewidth=0.8, linestyle="--")
    ax.legend(fontsize=7)
    fig.tight_layout()
    written.append(_save(fig, out / "accuracy_per_language.png"))
    plt.close(fig)

    fig, axes = plt.subplots(1, len(loaded), figsize=(4 * len(loaded), 3.2), squeeze=False)
    for ax, (label, _, m) in zip(axes[0], loaded):
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
                if grid[i][j] == grid[i][j]:
                    ax.text(j, i, f"{grid[i][j]:.1f}", ha="center", va="center", color="white", fontsize=8)
        ax.set_title(label, fontsize=9)
    fig.colorbar(im, ax=list(axes[0]), shrink=0.8, label="macro accuracy (%)")
    written.append(_save(fig, out / "task_k_heatmap.png"))
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(width, 4))
    for j, (label, s) in enumerate(summaries):
        xs = [i + (j - (n - 1) / 2) * 0.8 / n for i in range(len(langs))]
        ax.bar(xs, [100 * (s.get(lang, {}).get("gap") or 0) for lang in langs], width=0.8 / n, label=label)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(langs)), langs, rotation=90, fontsize=7)
    ax.set_ylabel("text-only − cross-modal accuracy (pp)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    written.append(_save(fig, out / "text_vs_crossmodal_gap.png"))
    plt.close(fig)
    return written


def _save(fig, path: Path) -> Path:
    from ._compat import atomic_open as _open

    with _open(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110, metadata={"Software": None})
    return path
