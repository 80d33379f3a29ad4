"""Uncertainty for MVL-SIB results: bootstrap intervals and paired comparisons of two runs.

Every figure here is reproducible: the random draws come from numpy's legacy
``RandomState`` (its streams are frozen by NEP 19, so the same seed gives the same
interval on any numpy version), seeded per cell from the run-wide seed and a CRC-32 of
the cell's key, so adding or removing a language never moves another cell's interval.

- **Cell interval** (one language x task x k): percentile bootstrap over instances. The
  number correct in a resample of n binary outcomes is Binomial(n, p̂), so the bootstrap is
  drawn as binomials (exactly the instance bootstrap, without materialising resamples).
- **Macro interval** (mean over languages, per task x k): two-level bootstrap: resample the
  languages with replacement, and within each drawn language its instances.
- **Paired comparison** of runs A and B on the same instances: the difference
  ``acc(A) - acc(B)`` with a paired bootstrap interval (instances resampled jointly, so
  both runs see the same resample) and a two-sided p-value from the sign-flip permutation
  test (under the null the two runs' answers on an instance are exchangeable). For one
  cell that test is exact: McNemar's exact binomial test on the discordant pairs. For the
  macro and overall differences it is Monte Carlo with ``N_PERMUTATIONS`` draws and the
  (1 + hits) / (1 + draws) estimate. The per-cell p-values are adjusted for the number of
  tests with Holm's step-down method (family-wise error) and Benjamini-Hochberg (false
  discovery rate).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

CONFIDENCE = 0.95
N_BOOTSTRAP = 1000
N_PERMUTATIONS = 10000
SEED = 0


def _rng(seed: int, *key):
    return np.random.RandomState([seed & 0xFFFFFFFF, zlib.crc32("|".join(map(str, key)).encode("utf-8"))])


def _percentiles(samples, confidence: float) -> tuple[float, float]:
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(samples, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def cell_interval(
    correct: int, n: int, key: Sequence, *, seed: int = SEED, n_boot: int = N_BOOTSTRAP, confidence: float = CONFIDENCE
) -> tuple[float, float] | tuple[None, None]:
    """Percentile bootstrap interval of correct / n (resampling the n instances)."""
    if n <= 0:
        return None, None
    draws = _rng(seed, "cell", *key).binomial(n, correct / n, size=n_boot) / n
    return _percentiles(draws, confidence)


def macro_interval(
    cells: Sequence[tuple[int, int]],
    key: Sequence,
    *,
    seed: int = SEED,
    n_boot: int = N_BOOTSTRAP,
    confidence: float = CONFIDENCE,
) -> tuple[float, float] | tuple[None, None]:
    """Interval of the mean over languages of correct/n; ``cells`` is one (correct, n) per language.

    Two levels: languages drawn with replacement, and each drawn language's instances resampled.
    """
    cells = [(c, n) for c, n in cells if n > 0]
    if not cells:
        return None, None
    rng = _rng(seed, "macro", *key)
    n = np.array([c[1] for c in cells])
    p = np.array([c[0] for c in cells]) / n
    acc = rng.binomial(n, p, size=(n_boot, len(cells))) / n
    pick = rng.randint(0, len(cells), size=(n_boot, len(cells)))
    return _percentiles(np.take_along_axis(acc, pick, axis=1).mean(axis=1), confidence)


# ---------------------------------------------------------------- paired comparison


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact p-value of the sign test on b vs c discordant pairs (McNemar, exact)."""
    m = b + c
    if m == 0:
        return 1.0
    k = min(b, c)
    # P(X <= k) for X ~ Binomial(m, 1/2), in log space so m in the thousands stays exact enough.
    log_half_m = -m * math.log(2)
    tail = sum(
        math.exp(math.lgamma(m + 1) - math.lgamma(i + 1) - math.lgamma(m - i + 1) + log_half_m) for i in range(k + 1)
    )
    return min(1.0, 2 * tail)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (controls the family-wise error rate)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    out = [0.0] * len(pvalues)
    running = 0.0
    m = len(pvalues)
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjustment (controls the false discovery rate)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i], reverse=True)
    out = [0.0] * m
    running = 1.0
    for pos, i in enumerate(order):
        rank = m - pos
        running = min(running, pvalues[i] * m / rank)
        out[i] = min(1.0, running)
    return out


class PairedCell:
    """One language x task x k of a paired comparison: n shared instances, b = only A right, c = only B right."""

    __slots__ = ("language", "task", "k", "n", "correct_a", "correct_b", "b", "c")

    def __init__(self, language: str, task: str, k: int, outcomes: Iterable[tuple[bool, bool]]) -> None:
        self.language, self.task, self.k = language, task, k
        n = ca = cb = b = c = 0
        for a_ok, b_ok in outcomes:
            n += 1
            ca += a_ok
            cb += b_ok
            b += a_ok and not b_ok
            c += b_ok and not a_ok
        self.n, self.correct_a, self.correct_b, self.b, self.c = n, ca, cb, b, c

    @property
    def diff(self) -> float:
        return (self.b - self.c) / self.n


def paired_cell_interval(
    cell: PairedCell, *, seed: int = SEED, n_boot: int = N_BOOTSTRAP, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Paired bootstrap: an instance resample moves b, c and the ties together (a multinomial draw)."""
    n = cell.n
    probs = [cell.b / n, cell.c / n, 1 - (cell.b + cell.c) / n]
    draws = _rng(seed, "paired", cell.language, cell.task, cell.k).multinomial(n, probs, size=n_boot)
    return _percentiles((draws[:, 0] - draws[:, 1]) / n, confidence)


def _macro_draws(cells: Sequence[PairedCell], key, seed: int, n_boot: int, n_perm: int):
    """Bootstrap draws of the macro difference and sign-flip null draws, for cells of one task x k."""
    rng = _rng(seed, "paired-macro", *key)
    n = np.array([c.n for c in cells])
    probs = np.array([[c.b / c.n, c.c / c.n, 1 - (c.b + c.c) / c.n] for c in cells])
    diffs = np.empty((n_boot, len(cells)))
    for j, c in enumerate(cells):
        d = rng.multinomial(c.n, probs[j], size=n_boot)
        diffs[:, j] = (d[:, 0] - d[:, 1]) / c.n
    pick = rng.randint(0, len(cells), size=(n_boot, len(cells)))
    boot = np.take_along_axis(diffs, pick, axis=1).mean(axis=1)
    # Under the null each discordant pair is A-right or B-right with probability 1/2.
    m = np.array([c.b + c.c for c in cells])
    flips = rng.binomial(m, 0.5, size=(n_perm, len(cells)))
    null = ((2 * flips - m) / n).mean(axis=1)
    return boot, null


def _perm_p(null, observed: float) -> float:
    hits = int(np.sum(np.abs(null) >= abs(observed) - 1e-12))
    return (1 + hits) / (1 + len(null))


def compare_cells(
    cells: Sequence[PairedCell],
    *,
    seed: int = SEED,
    n_boot: int = N_BOOTSTRAP,
    n_perm: int = N_PERMUTATIONS,
    confidence: float = CONFIDENCE,
) -> dict:
    """Overall, per task x k (macro over languages) and per cell: difference, interval, p-values."""
    per_cell: list[dict[str, Any]] = []
    for c in cells:
        lo, hi = paired_cell_interval(c, seed=seed, n_boot=n_boot, confidence=confidence)
        per_cell.append(
            {
                "language": c.language,
                "task": c.task,
                "k": c.k,
                "n": c.n,
                "accuracy_a": c.correct_a / c.n,
                "accuracy_b": c.correct_b / c.n,
                "diff": c.diff,
                "ci_low": lo,
                "ci_high": hi,
                "only_a_correct": c.b,
                "only_b_correct": c.c,
                "p": mcnemar_exact(c.b, c.c),
            }
        )
    ps = [r["p"] for r in per_cell]
    for r, ph, pb in zip(per_cell, holm(ps), benjamini_hochberg(ps)):
        r["p_holm"], r["p_bh"] = ph, pb

    by_tk: dict[tuple, list[PairedCell]] = {}
    for c in cells:
        by_tk.setdefault((c.task, c.k), []).append(c)
    per_tk, boots, nulls = [], [], []
    for (task, k), group in by_tk.items():
        boot, null = _macro_draws(group, (task, k), seed, n_boot, n_perm)
        boots.append(boot)
        nulls.append(null)
        observed = float(np.mean([c.diff for c in group]))
        lo, hi = _percentiles(boot, confidence)
        per_tk.append(
            {
                "task": task,
                "k": k,
                "n_languages": len(group),
                "n": sum(c.n for c in group),
                "accuracy_a": float(np.mean([c.correct_a / c.n for c in group])),
                "accuracy_b": float(np.mean([c.correct_b / c.n for c in group])),
                "diff": observed,
                "ci_low": lo,
                "ci_high": hi,
                "p": _perm_p(null, observed),
            }
        )
    for r, ph in zip(per_tk, holm([r["p"] for r in per_tk])):
        r["p_holm"] = ph
    overall: dict = {"n_cells": len(cells), "n": sum(c.n for c in cells)}
    if per_tk:
        observed = float(np.mean([r["diff"] for r in per_tk]))
        boot = np.mean(boots, axis=0)
        null = np.mean(nulls, axis=0)
        lo, hi = _percentiles(boot, confidence)
        overall.update(
            {
                "accuracy_a": float(np.mean([r["accuracy_a"] for r in per_tk])),
                "accuracy_b": float(np.mean([r["accuracy_b"] for r in per_tk])),
                "diff": observed,
                "ci_low": lo,
                "ci_high": hi,
                "p": _perm_p(null, observed),
            }
        )
    return {"overall": overall, "per_task_k": per_tk, "per_cell": per_cell}


def method_note(confidence: float = CONFIDENCE, n_boot: int = N_BOOTSTRAP, seed: int = SEED) -> dict:
    """How the intervals in an output were made (stored beside them)."""
    return {
        "confidence": confidence,
        "n_bootstrap": n_boot,
        "seed": seed,
        "cell": "percentile bootstrap over instances",
        "macro": "two-level percentile bootstrap: languages with replacement, then instances within each",
        "rng": "numpy.random.RandomState (NEP 19 frozen streams), seeded with (seed, crc32(cell key))",
    }
