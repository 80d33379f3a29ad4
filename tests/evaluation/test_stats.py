"""Bootstrap intervals, the paired test and the multiple-testing corrections, on planted runs
with a known difference and with none."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from support.planted import planted_records, write_run

from mvlsib.cli import eval_cli
from mvlsib.evaluation.analysis.compare import compare_outcomes, outcomes
from mvlsib.evaluation.run.scoring import compute_metrics
from mvlsib.evaluation.run.stats import benjamini_hochberg, cell_interval, holm, macro_interval, mcnemar_exact


def test_cell_interval_matches_the_normal_approximation_and_is_seeded():
    lo, hi = cell_interval(600, 1000, ("eng_Latn", "i2s", 1))
    half = 1.96 * math.sqrt(0.6 * 0.4 / 1000)
    assert lo < 0.6 < hi
    assert (hi - lo) / 2 == pytest.approx(half, rel=0.15)
    assert cell_interval(600, 1000, ("eng_Latn", "i2s", 1)) == (lo, hi)
    assert cell_interval(600, 1000, ("eng_Latn", "i2s", 1), seed=1) != (lo, hi)
    assert cell_interval(0, 0, ("x",)) == (None, None)


def test_macro_interval_resamples_languages_too():
    # languages far apart: the language level dominates, so the interval is much wider
    # than any single language's instance-level interval
    spread = [(100, 1000), (500, 1000), (900, 1000)]
    lo, hi = macro_interval(spread, ("i2s", 1))
    assert lo < 0.5 < hi and hi - lo > 0.3
    same = [(500, 1000)] * 3
    lo2, hi2 = macro_interval(same, ("i2s", 1))
    assert hi2 - lo2 < 0.1


def test_exact_mcnemar_and_corrections():
    assert mcnemar_exact(10, 0) == pytest.approx(2 * 0.5**10)
    assert mcnemar_exact(5, 5) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(60, 40) == pytest.approx(0.0569, abs=2e-4)  # the exact binomial two-sided value
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert benjamini_hochberg([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.04, 0.04])


def test_metrics_carry_intervals():
    m = compute_metrics(planted_records(0.7, n=200))
    for c in m["per_language"]:
        assert c["ci_low"] < c["accuracy"] < c["ci_high"]
    for r in m["macro"]:
        assert r["ci_low"] < r["accuracy"] < r["ci_high"]
    assert m["ci"]["confidence"] == 0.95 and m["ci"]["seed"] == 0


def test_paired_test_finds_a_planted_difference_and_not_a_null_one():
    strong = outcomes(planted_records(0.75, seed=1))
    weak = outcomes(planted_records(0.60, seed=2))
    res = compare_outcomes(strong, weak)
    o = res["overall"]
    assert o["diff"] == pytest.approx(0.15, abs=0.03)
    assert o["ci_low"] > 0.08 and o["ci_low"] < o["diff"] < o["ci_high"]
    assert o["p"] < 0.001
    assert all(r["p_holm"] < 0.05 and r["ci_low"] > 0 for r in res["per_task_k"])
    assert res["n_shared"] == 3 * 2 * 300 and res["n_only_a"] == res["n_only_b"] == 0

    same_a = outcomes(planted_records(0.6, seed=3))
    same_b = outcomes(planted_records(0.6, seed=4))
    null = compare_outcomes(same_a, same_b)
    assert null["overall"]["ci_low"] < 0 < null["overall"]["ci_high"]
    assert null["overall"]["p"] > 0.05
    assert all(r["p_holm"] > 0.05 for r in null["per_cell"])
    assert all(r["p_holm"] > 0.05 for r in null["per_language"]) and len(null["per_language"]) == 3
    assert all(r["p_holm"] >= r["p"] and r["p_bh"] >= r["p"] for r in null["per_cell"])


def test_compare_command_prints_a_table_and_writes_json(tmp_path):
    a = write_run(tmp_path / "a", planted_records(0.75, seed=1), model="model-a")
    b = write_run(tmp_path / "b", planted_records(0.60, seed=2), model="model-b")
    out = tmp_path / "cmp.json"
    r = CliRunner().invoke(eval_cli, ["compare", str(a), str(b), "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert "overall:" in r.output and "p_holm" in r.output
    data = json.loads(out.read_text("utf-8"))
    assert data["model_a"] == "model-a" and data["diff"] > 0.1 and data["p"] < 0.001
    assert {"ci_low", "ci_high", "per_task_k", "per_language", "per_cell", "method"} <= set(data)
    assert len(data["per_cell"]) == 6 and {"p", "p_holm", "p_bh"} <= set(data["per_cell"][0])
    assert [r["language"] for r in data["per_language"]] == ["arb_Arab", "eng_Latn", "urd_Arab"]
    assert all(r["n"] == 600 and r["p_holm"] < 0.001 and r["ci_low"] > 0 for r in data["per_language"])
    # byte-identical on a rerun: the bootstrap is seeded
    first = out.read_bytes()
    CliRunner().invoke(eval_cli, ["compare", str(a), str(b), "--json", str(out)])
    assert out.read_bytes() == first


def test_compare_refuses_runs_of_different_releases_unless_asked(tmp_path):
    a = write_run(tmp_path / "a", planted_records(0.75, seed=1), release_sha256="a" * 64)
    b = write_run(tmp_path / "b", planted_records(0.60, seed=2), release_sha256="b" * 64)
    refused = CliRunner().invoke(eval_cli, ["compare", str(a), str(b)])
    assert (
        refused.exit_code == 2 and "different releases" in refused.output and "--different-releases" in refused.output
    )
    asked = CliRunner().invoke(
        eval_cli, ["compare", str(a), str(b), "--different-releases", "--json", str(tmp_path / "c")]
    )
    assert asked.exit_code == 0 and asked.output.startswith("WARNING: A and B were made on different releases")
    assert json.loads((tmp_path / "c").read_text("utf-8"))["release_manifest_sha256"]["same"] is False
    same = write_run(tmp_path / "a2", planted_records(0.6, seed=2), release_sha256="a" * 64)
    assert CliRunner().invoke(eval_cli, ["compare", str(a), str(same)]).exit_code == 0


def test_compare_refuses_disjoint_runs(tmp_path):
    a = write_run(tmp_path / "a", planted_records(0.7, languages=("eng_Latn",)))
    b = write_run(tmp_path / "b", planted_records(0.7, languages=("arb_Arab",)))
    r = CliRunner().invoke(eval_cli, ["compare", str(a), str(b)])
    assert r.exit_code == 2 and "share no" in r.output
