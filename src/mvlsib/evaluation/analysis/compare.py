"""``mvlsib-eval compare RUN_A RUN_B``: is A better than B, overall, per task x k, per language?

Both runs are scored from their stored responses (same parse mode) and matched on
(language, task, k, instance): only instances both runs answered are compared, and the
result says how many each run had beyond the shared ones. The statistics are in ``stats``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from .._compat import TASKS, MvlsibError, jsonio, output_file, terminal
from ..run.parsing import parse_letter
from ..run.prompts import LETTERS
from ..run.stats import (
    CONFIDENCE,
    N_PERMUTATIONS,
    PairedCell,
    benjamini_hochberg,
    compare_cells,
    holm,
    mcnemar_exact,
    method_note,
    paired_cell_interval,
)
from ..run.store import record_key
from .report_format import coverage
from .runs import load_runs


def outcomes(records, mode: str = "relaxed") -> dict[tuple, bool]:
    """(task, k, language, instance_id) -> answered correctly."""
    return {record_key(r): parse_letter(r["response"], mode) == LETTERS[int(r["label"])] for r in records}


def compare_outcomes(a: dict[tuple, bool], b: dict[tuple, bool], **kw) -> dict:
    shared = sorted(set(a) & set(b))
    if not shared:
        raise MvlsibError("the two runs share no (language, task, k, instance): nothing to compare")
    grouped: dict[tuple, list] = defaultdict(list)
    for key in shared:
        task, k, language, _ = key
        grouped[(language, TASKS.index(task) if task in TASKS else len(TASKS), task, int(k))].append((a[key], b[key]))
    cells = [PairedCell(lang, task, k, pairs) for (lang, _, task, k), pairs in sorted(grouped.items())]
    result = compare_cells(cells, **kw)
    # Per language over all its task x k cells (answers pooled; exact sign test, Holm over languages)
    by_lang: dict[str, list] = defaultdict(list)
    for (lang, _, _, _), pairs in grouped.items():
        by_lang[lang] += pairs
    langs: list[dict[str, Any]] = []
    for lang in sorted(by_lang):
        c = PairedCell(lang, "all", 0, by_lang[lang])
        lo, hi = paired_cell_interval(c, **{k: v for k, v in kw.items() if k != "n_perm"})
        langs.append(
            {
                "language": lang,
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
    for r, ph, pb in zip(langs, holm([r["p"] for r in langs]), benjamini_hochberg([r["p"] for r in langs])):
        r["p_holm"], r["p_bh"] = ph, pb
    result["per_language"] = langs
    result["n_shared"] = len(shared)
    result["n_only_a"] = len(set(a) - set(b))
    result["n_only_b"] = len(set(b) - set(a))
    return result


def compare_runs(
    run_a: str | Path, run_b: str | Path, mode: str = "relaxed", *, different_releases: bool = False, warn=None
) -> dict:
    """The comparison of two finished runs, with the runs' identities and the method.

    Runs made on different releases (their recorded release manifest hashes differ) are refused unless
    ``different_releases``: the same instance key may stand for other sentences or images there.
    """
    loaded = load_runs([run_a, run_b], names=["A", "B"], different_releases=different_releases, warn=warn)
    runs = [(r.path, r.config, r.records) for r in loaded]
    releases = [r.release for r in loaded]
    differ = loaded.mixed
    result = compare_outcomes(outcomes(runs[0][2], mode), outcomes(runs[1][2], mode))
    overall = result.pop("overall")
    cov = [coverage(config, records) for _, config, records in runs]
    out = {
        "run_a": str(run_a),
        "run_b": str(run_b),
        "model_a": runs[0][1].get("fingerprint", {}).get("model"),
        "model_b": runs[1][1].get("fingerprint", {}).get("model"),
        "parse_mode": mode,
        "release_manifest_sha256": {"a": releases[0], "b": releases[1], "same": not differ},
        "scope_a": cov[0],
        "scope_b": cov[1],
        **overall,
        "n_shared": result.pop("n_shared"),
        "n_only_a": result.pop("n_only_a"),
        "n_only_b": result.pop("n_only_b"),
        "method": {
            **method_note(),
            "difference": "accuracy(A) - accuracy(B) on the shared instances; macro = mean over languages, "
            "overall = mean over task x k of the macros",
            "interval": "paired percentile bootstrap (instances resampled jointly; languages too for macros)",
            "p": "two-sided sign-flip permutation test: exact (McNemar) per cell, "
            f"Monte Carlo with {N_PERMUTATIONS} draws for macros and overall",
            "per_language": "each language's answers pooled over its task x k cells; exact sign test",
            "multiple_testing": "p_holm: Holm step-down within each family of tests (languages, cells, task x k); "
            "p_bh: Benjamini-Hochberg within languages and within cells",
        },
        "per_task_k": result["per_task_k"],
        "per_language": result["per_language"],
        "per_cell": result["per_cell"],
    }
    return out


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:+.1f}"


def _p(v) -> str:
    return "–" if v is None else ("<0.0001" if v < 1e-4 else f"{v:.4f}")


def format_comparison(res: dict, alpha: float = 1 - CONFIDENCE) -> str:
    """A readable table: overall, per task x k, and the languages whose difference survives Holm."""

    def scope(c):
        return f"{terminal.visible(c['subset'])}, {c['n_done']}/{c['n_expected']} predictions" + (
            "" if c["complete"] else " (INCOMPLETE)"
        )

    releases = res.get("release_manifest_sha256") or {}
    lines = [
        *(
            ["WARNING: A and B were made on different releases; the same keys may hold other instances or images"]
            if releases.get("same") is False
            else []
        ),
        f"A = {terminal.visible(res['run_a'])} ({terminal.visible(res.get('model_a'))}): {scope(res['scope_a'])}",
        f"B = {terminal.visible(res['run_b'])} ({terminal.visible(res.get('model_b'))}): {scope(res['scope_b'])}",
        f"{res['n_shared']} shared predictions (only in A: {res['n_only_a']}, only in B: {res['n_only_b']}); "
        f"{int(100 * CONFIDENCE)}% intervals, differences in percentage points (A − B)",
        "",
    ]
    if "diff" in res:
        lines.append(
            f"overall: {100 * res['accuracy_a']:.1f} vs {100 * res['accuracy_b']:.1f}  "
            f"diff {_pct(res['diff'])} [{_pct(res['ci_low'])}, {_pct(res['ci_high'])}]  p={_p(res['p'])}"
        )
    lines += [
        "",
        f"{'task':<5} {'k':>2} {'langs':>5} {'acc A':>6} {'acc B':>6} {'diff':>6} {'interval':>15} "
        f"{'p':>8} {'p_holm':>8}",
    ]
    for r in res["per_task_k"]:
        lines.append(
            f"{r['task']:<5} {r['k']:>2} {r['n_languages']:>5} {100 * r['accuracy_a']:>6.1f} "
            f"{100 * r['accuracy_b']:>6.1f} {_pct(r['diff']):>6} "
            f"{'[' + _pct(r['ci_low']) + ', ' + _pct(r['ci_high']) + ']':>15} {_p(r['p']):>8} "
            f"{_p(r['p_holm']):>8}"
        )
    sig = [r for r in res["per_language"] if r["p_holm"] < alpha]
    lines += [
        "",
        f"{len(sig)} of {len(res['per_language'])} languages differ at p_holm < {alpha:g} "
        "(answers pooled over task x k)" + (":" if sig else "."),
    ]
    for r in sig[:40]:
        lines.append(
            f"  {r['language']:<9} {100 * r['accuracy_a']:5.1f} vs {100 * r['accuracy_b']:5.1f}  diff "
            f"{_pct(r['diff'])} [{_pct(r['ci_low'])}, {_pct(r['ci_high'])}] p_holm={_p(r['p_holm'])}"
        )
    if len(sig) > 40:
        lines.append(f"  … {len(sig) - 40} more (see --json)")
    cells = [r for r in res["per_cell"] if r["p_holm"] < alpha]
    lines.append(f"{len(cells)} of {len(res['per_cell'])} language x task x k cells differ at p_holm < {alpha:g}.")
    return "\n".join(lines)


def write_comparison_json(res: dict, path: str | Path) -> Path:
    path = Path(path)
    with output_file(path, "mvlsib-eval compare", option="--json") as fh:
        fh.write(jsonio.dumps(res, ensure_ascii=False, indent=2, sort_keys=False))
        fh.write("\n")
    return path
