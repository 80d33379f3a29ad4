"""Metrics: per language x task x k, macro averages, script and CSV groups."""

from __future__ import annotations

import pytest

from mvlsib.errors import MvlsibError
from mvlsib.evaluation.run.scoring import compute_metrics, read_groups_csv, script_of


def rec(language, task, k, response, label, iid="0-0"):
    return {"language": language, "task": task, "k": k, "response": response, "label": label, "instance_id": iid}


RECORDS = [
    # eng_Latn i2s k1: correct, wrong, format error, correct-but-not-strict -> acc 2/4, strict 1/4
    rec("eng_Latn", "i2s", 1, "A", 0),
    rec("eng_Latn", "i2s", 1, "(B)", 2),
    rec("eng_Latn", "i2s", 1, "I do not know", 1),
    rec("eng_Latn", "i2s", 1, "D. because", 3),
    # rus_Cyrl i2s k1: Cyrillic C counts; one format error
    rec("rus_Cyrl", "i2s", 1, "С", 2),
    rec("rus_Cyrl", "i2s", 1, "???", 0),
    # arb_Arab i2s k1: all wrong
    rec("arb_Arab", "i2s", 1, "A", 1),
    rec("arb_Arab", "s2t", 3, "The answer is B", 1),
]


def cell(metrics, language, task, k):
    (c,) = [c for c in metrics["per_language"] if (c["language"], c["task"], c["k"]) == (language, task, k)]
    return c


def test_per_language_cells():
    m = compute_metrics(RECORDS)
    eng = cell(m, "eng_Latn", "i2s", 1)
    assert (eng["n"], eng["accuracy"], eng["strict_accuracy"]) == (4, 0.5, 0.25)
    assert eng["format_error_rate"] == 0.25
    assert eng["valid_accuracy"] == pytest.approx(2 / 3)
    rus = cell(m, "rus_Cyrl", "i2s", 1)
    assert (rus["accuracy"], rus["format_error_rate"], rus["valid_accuracy"]) == (0.5, 0.5, 1.0)
    arb = cell(m, "arb_Arab", "s2t", 3)
    assert (arb["accuracy"], arb["format_error_rate"], arb["valid_accuracy"]) == (0.0, 1.0, None)
    assert m["n_predictions"] == len(RECORDS)


def test_lenient_mode_reads_cues():
    arb = cell(compute_metrics(RECORDS, "lenient"), "arb_Arab", "s2t", 3)
    assert (arb["accuracy"], arb["format_error_rate"]) == (1.0, 0.0)


def test_macro_weighs_languages_equally():
    m = compute_metrics(RECORDS)
    (i2s,) = [r for r in m["macro"] if (r["task"], r["k"]) == ("i2s", 1)]
    # eng 0.5 (4 answers), rus 0.5 (2 answers), arb 0.0 (1 answer): mean of languages, not of answers
    assert i2s["accuracy"] == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert i2s["n_languages"] == 3 and i2s["n"] == 7
    assert i2s["valid_accuracy"] == pytest.approx((2 / 3 + 1.0 + 0.0) / 3)


def test_script_and_csv_groups(tmp_path):
    csv_path = tmp_path / "tiers.csv"
    csv_path.write_text("language,group\neng_Latn,high\nrus_Cyrl,high\narb_Arab,mid\n", encoding="utf-8")
    m = compute_metrics(RECORDS, groups={"tiers": read_groups_csv(csv_path)})
    scripts = {(r["group"], r["task"], r["k"]): r for r in m["groups"]["script"]}
    assert set(g for g, _, _ in scripts) == {"Arab", "Cyrl", "Latn"}
    assert scripts[("Latn", "i2s", 1)]["accuracy"] == 0.5
    tiers = {(r["group"], r["task"], r["k"]): r for r in m["groups"]["tiers"]}
    assert tiers[("high", "i2s", 1)]["accuracy"] == 0.5 and tiers[("high", "i2s", 1)]["n_languages"] == 2
    assert tiers[("mid", "i2s", 1)]["accuracy"] == 0.0
    assert script_of("zho_Hans") == "Hans"


def test_bad_groups_csv(tmp_path):
    bad = tmp_path / "g.csv"
    bad.write_text("lang,tier\neng_Latn,high\n", encoding="utf-8")
    with pytest.raises(MvlsibError, match="g.csv: grouping CSV needs the columns language,group"):
        read_groups_csv(bad)
    bad.write_text("language,group\neng_Latn,high\neng_Latn,low\n", encoding="utf-8")
    with pytest.raises(MvlsibError, match="line 3: eng_Latn is already in group 'high'"):
        read_groups_csv(bad)
    with pytest.raises(MvlsibError, match="missing.csv: cannot be read"):
        read_groups_csv(tmp_path / "missing.csv")
