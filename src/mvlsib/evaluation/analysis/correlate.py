"""``mvlsib-eval correlate RUNS --scores FILE.csv``: how MVL-SIB ranks models compared with other benchmarks.

The scores CSV has the columns ``model, benchmark, score`` (one row per model and
benchmark). A run is matched to a ``model`` value by its display name (``--name``, default
the run folder's name) or by the model it ran (``fingerprint.model`` in config.json).
Per MVL-SIB task x k (macro accuracy over languages) and per benchmark, over the models
that have both: Pearson's r and Spearman's rho (Pearson on average ranks, ties averaged),
the number of models, and 95 % intervals by the Fisher z transform (z ± 1.96 / sqrt(n - 3),
needs n ≥ 4; for Spearman the same transform, an approximation).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from statistics import NormalDist

from .._compat import TASKS, MvlsibError, csvio, output_file, read_csv, terminal
from ..run.scoring import compute_metrics
from ..run.stats import CONFIDENCE
from .runs import load_runs

# Benchmark scores are accuracies, percentages or Elo-like ratings; beyond this a value is not a score.
MAX_SCORE = 1e9


def read_scores(path: str | Path) -> dict[str, dict[str, float]]:
    """benchmark -> model -> score."""
    path = Path(path)
    table = read_csv(path, "the scores CSV")
    missing = {"model", "benchmark", "score"} - set(table.fieldnames)
    if missing:
        raise MvlsibError(
            f"{path}: the scores CSV needs the columns model,benchmark,score; missing {', '.join(sorted(missing))}"
        )
    out: dict[str, dict[str, float]] = {}
    for lineno, row in table:
        try:
            score = float(row["score"])
        except (TypeError, ValueError):
            score = math.nan
        if not math.isfinite(score):  # "nan" and "inf" parse as floats; no correlation survives them
            raise MvlsibError(f"{path}, line {lineno}: score {row['score']!r} is not a finite number")
        if abs(score) > MAX_SCORE:  # squared sums of larger values overflow a float
            raise MvlsibError(f"{path}, line {lineno}: score {row['score']!r} is beyond ±{MAX_SCORE:g}; is it a score?")
        model, bench = (row["model"] or "").strip(), (row["benchmark"] or "").strip()
        if not model or not bench:
            raise MvlsibError(f"{path}, line {lineno}: empty model or benchmark")
        if model in out.setdefault(bench, {}):
            raise MvlsibError(f"{path}, line {lineno}: {model} has two scores for {bench}")
        out[bench][model] = score
    return out


def _ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for t in range(i, j + 1):
            ranks[order[t]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def spearman(xs: list[float], ys: list[float]) -> float | None:
    return pearson(_ranks(xs), _ranks(ys))


def fisher_interval(r: float | None, n: int, confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
    if r is None or n < 4:
        return None, None
    z = math.atanh(max(-0.999999, min(0.999999, r)))
    half = NormalDist().inv_cdf(0.5 + confidence / 2) / math.sqrt(n - 3)
    return math.tanh(z - half), math.tanh(z + half)


def correlate(
    runs,
    scores: dict[str, dict[str, float]],
    *,
    names=None,
    mode: str = "relaxed",
    different_releases: bool = False,
    warn: Callable[[str], None] | None = None,
) -> list[dict]:
    mvl: dict[tuple, dict[str, float]] = {}  # (task, k) -> scores-model name -> macro accuracy
    known = {m for per in scores.values() for m in per}
    taken: dict[str, Path] = {}  # scores-model name -> the run that stands for it
    models_seen: dict[str, Path] = {}  # a run's fingerprint -> the run
    for i, loaded in enumerate(load_runs(runs, different_releases=different_releases, warn=warn)):
        run, config, records = loaded.path, loaded.config, loaded.records
        label = names[i] if names else run.resolve().name  # matched against the CSV's names, as given
        model = config.get("fingerprint", {}).get("model")
        key = label if label in known else model if model in known else None
        if key is None:
            raise MvlsibError(
                f"{run}: neither its name {label!r} nor its model {model!r} is a model in the scores "
                "CSV; name the run with --name as in the CSV"
            )
        if key in taken:  # one point per model: a second run would replace the first without a word
            raise MvlsibError(
                f"{run}: stands for the scores CSV's model {key!r}, as {taken[key]} does; give one run per model "
                "(or name them apart with --name as in the CSV)"
            )
        taken[key] = run
        # one point per model, however the runs are named: one evaluation (the same fingerprint: model,
        # settings, release) in two folders would weigh its model twice
        identity = json.dumps(config.get("fingerprint"), sort_keys=True)
        if config.get("fingerprint") and identity in models_seen:
            raise MvlsibError(
                f"{run}: the same evaluation of model {model!r} as {models_seen[identity]} (their fingerprints are "
                "equal); a model is one point of a correlation: give one run per model"
            )
        models_seen[identity] = run
        for row in compute_metrics(records, mode)["macro"]:
            mvl.setdefault((row["task"], row["k"]), {})[key] = row["accuracy"]
    out = []
    for task, k in sorted(mvl, key=lambda tk: (TASKS.index(tk[0]) if tk[0] in TASKS else 9, tk[1])):
        for bench in sorted(scores):
            models = sorted(set(mvl[(task, k)]) & set(scores[bench]))
            xs = [mvl[(task, k)][m] for m in models]
            ys = [scores[bench][m] for m in models]
            r, rho = pearson(xs, ys), spearman(xs, ys)
            (rl, rh), (sl, sh) = fisher_interval(r, len(models)), fisher_interval(rho, len(models))
            out.append(
                {
                    "task": task,
                    "k": k,
                    "benchmark": bench,
                    "n_models": len(models),
                    "pearson": r,
                    "pearson_low": rl,
                    "pearson_high": rh,
                    "spearman": rho,
                    "spearman_low": sl,
                    "spearman_high": sh,
                }
            )
    return out


def format_correlations(rows: list[dict]) -> str:
    def f(v):
        return "   –" if v is None else f"{v:+.2f}"

    lines = [
        f"{'task':<5} {'k':>2} {'benchmark':<20} {'n':>3} {'pearson':>7} {'95% CI':>15} {'spearman':>8} {'95% CI':>15}"
    ]
    for r in rows:
        lines.append(
            f"{r['task']:<5} {r['k']:>2} {terminal.visible(r['benchmark'])[:20]:<20} {r['n_models']:>3} {f(r['pearson']):>7} "
            f"{'[' + f(r['pearson_low']) + ', ' + f(r['pearson_high']) + ']':>15} {f(r['spearman']):>8} "
            f"{'[' + f(r['spearman_low']) + ', ' + f(r['spearman_high']) + ']':>15}"
        )
    return "\n".join(lines)


def write_correlations(rows: list[dict], path: str | Path) -> Path:
    path = Path(path)
    fields = [
        "task",
        "k",
        "benchmark",
        "n_models",
        "pearson",
        "pearson_low",
        "pearson_high",
        "spearman",
        "spearman_low",
        "spearman_high",
    ]
    with output_file(path, "mvlsib-eval correlate") as fh:
        csvio.write_dicts(fh, rows, fields)
    return path
