"""``mvlsib-eval correlate``: Pearson and Spearman against planted benchmark scores."""

from __future__ import annotations

import csv
import statistics

import pytest
from click.testing import CliRunner
from support.planted import planted_records, write_run

from mvlsib.cli import eval_cli
from mvlsib.evaluation.analysis.correlate import fisher_interval, pearson, spearman

ACCURACIES = (0.3, 0.45, 0.55, 0.7, 0.85)


def test_coefficients_match_the_standard_library():
    xs, ys = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 7, 7]
    assert pearson(xs, ys) == pytest.approx(statistics.correlation(xs, ys))
    # Spearman = Pearson on ranks, the tied 7s sharing rank 5.5
    assert spearman(xs, ys) == pytest.approx(statistics.correlation(xs, [2, 1, 4, 3, 5.5, 5.5]))
    lo, hi = fisher_interval(0.8, 10)
    assert lo < 0.8 < hi and fisher_interval(0.8, 3) == (None, None)


def test_correlate_command(tmp_path):
    runs = [
        write_run(tmp_path / f"m{i}", planted_records(acc, n=200, seed=i), model=f"org/model-{i}")
        for i, acc in enumerate(ACCURACIES)
    ]
    scores = tmp_path / "scores.csv"
    lines = ["model,benchmark,score"]
    for i, acc in enumerate(ACCURACIES):
        lines += [f"org/model-{i},agrees,{10 + 50 * acc}", f"org/model-{i},disagrees,{90 - 40 * acc}"]
    lines.append("org/model-0,only-one,1")
    scores.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "corr.csv"
    r = CliRunner().invoke(eval_cli, ["correlate", *map(str, runs), "--scores", str(scores), "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = {(x["task"], x["k"], x["benchmark"]): x for x in csv.DictReader(open(out, encoding="utf-8"))}
    agrees = rows[("i2s", "1", "agrees")]
    assert agrees["n_models"] == "5" and float(agrees["spearman"]) == pytest.approx(1.0)
    assert float(agrees["pearson"]) > 0.95 and float(agrees["pearson_low"]) < float(agrees["pearson"])
    assert float(rows[("s2t", "1", "disagrees")]["spearman"]) == pytest.approx(-1.0)
    assert rows[("i2s", "1", "only-one")]["pearson"] == ""  # one model: no correlation, not a fake 0
    bad = tmp_path / "bad.csv"
    bad.write_text("model,benchmark,score\nsomeone-else,x,1\n", encoding="utf-8")
    r = CliRunner().invoke(eval_cli, ["correlate", str(runs[0]), "--scores", str(bad)])
    assert r.exit_code == 2 and "is a model in the scores CSV" in r.output


@pytest.mark.parametrize("by", ["model", "name"])
def test_two_runs_standing_for_one_model_are_refused(tmp_path, by):
    """One point per model: a second run of the same model would replace the first without a word."""
    same = "org/model-0"
    runs = [
        write_run(tmp_path / f"m{i}", planted_records(acc, n=50, seed=i), model=same if by == "model" and i < 2 else f"org/model-{i}")
        for i, acc in enumerate(ACCURACIES[:3])
    ]  # fmt: skip
    scores = tmp_path / "scores.csv"
    scores.write_text("model,benchmark,score\norg/model-0,b,1\norg/model-2,b,3\n", encoding="utf-8")
    names = ["--name", same, "--name", same, "--name", "org/model-2"] if by == "name" else []
    for order in (runs, [runs[1], runs[0], runs[2]]):
        r = CliRunner().invoke(eval_cli, ["correlate", *map(str, order), "--scores", str(scores), *names])
        assert r.exit_code == 2 and "give one run per model" in r.output, r.output
