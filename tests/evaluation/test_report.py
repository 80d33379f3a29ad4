"""The report on planted runs: intervals in every table, subset and completeness in every
header, metadata columns and groups, the leaderboard, and figures (PNG + SVG) at print size."""

from __future__ import annotations

import csv
import json
import re

import pytest
from click.testing import CliRunner
from PIL import Image
from support.planted import planted_records, write_run

from mvlsib.cli import eval_cli

LANGS = ("eng_Latn", "arb_Arab", "swh_Latn", "nqo_Nkoo")


@pytest.mark.eval
def test_report_tables_leaderboard_and_figures(tmp_path):
    strong = planted_records(0.8, languages=LANGS, n=40, seed=1)
    weak = planted_records(0.5, languages=LANGS[1:], n=40, seed=2)
    a = write_run(tmp_path / "a", strong, model="model-a", limit=40)
    # run b is missing eng_Latn: incomplete, and shown as missing, never as 0
    b = write_run(tmp_path / "b", weak, model="model-b", limit=40, n_expected=len(strong))
    meta = tmp_path / "meta.csv"
    meta.write_text("language,region\neng_Latn,Europe\narb_Arab,MENA\nswh_Latn,Africa\nnqo_Nkoo,Africa\n", "utf-8")
    out = tmp_path / "report"
    r = CliRunner().invoke(
        eval_cli,
        ["report", str(a), str(b), "--out", str(out), "--name", "A", "--name", "B", "--language-metadata", str(meta)],
    )
    assert r.exit_code == 0, r.output
    md = (out / "report.md").read_text("utf-8")
    scope = (
        "Scope — A: 40 of 3012 instances per language, stratified over topics and gold letters (--limit 40), "
        "320/320 predictions; B: 40 of 3012 instances per language, stratified over topics and gold letters "
        "(--limit 40), 240/320 predictions (INCOMPLETE)."
    )
    assert md.count(scope) >= 5  # the header and every table section
    # macro with its interval (every cell escaped by md_row: the brackets too)
    assert re.search(r"\| i2s \| 1 \| \d+\.\d \\\[\d+\.\d, \d+\.\d\\\] \|", md)
    assert (
        "| nqo\\_Nkoo | N'Ko | Mande | Joshi class 0 |" in md
        and "| eng\\_Latn | English | Indo-European | Joshi class 5 |" in md
    )
    for grouping in ("script", "family", "resource", "region"):
        assert f"## Groups: {grouping}" in md
    groups = list(csv.DictReader(open(out / "groups.csv", encoding="utf-8")))
    africa = [g for g in groups if g["grouping"] == "region" and g["group"] == "Africa" and g["run"] == "A"]
    assert africa and all(g["n_languages"] == "2" and float(g["ci_low"]) < float(g["accuracy"]) for g in africa)
    langs = {(x["run"], x["language"]): x for x in csv.DictReader(open(out / "languages.csv", encoding="utf-8"))}
    assert ("B", "eng_Latn") not in langs and langs[("A", "swh_Latn")]["family"] == "Atlantic-Congo"
    # the text-only minus cross-modal gap (s2t vs i2s here) with its paired interval, centred on the gap
    for row in langs.values():
        lo, gap, hi = float(row["gap_low"]), float(row["gap"]), float(row["gap_high"])
        assert lo < gap < hi and (lo + hi) / 2 == pytest.approx(gap)
        assert gap == pytest.approx(float(row["text_only"]) - float(row["cross_modal"]))

    board = list(csv.DictReader(open(out / "leaderboard.csv", encoding="utf-8")))
    assert [x["run"] for x in board] == ["A", "B"] and float(board[0]["mean"]) > float(board[1]["mean"])
    assert float(board[0]["i2s k=1 ci_low"]) < float(board[0]["i2s k=1"]) < float(board[0]["i2s k=1 ci_high"])
    page = (out / "leaderboard.html").read_text("utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page  # self-contained
    assert "model-a" in page and "(incomplete)" in page
    assert "| 1 | A | `model-a` | 4 |" in (out / "leaderboard.md").read_text("utf-8")

    for name in (
        "accuracy_by_language_family",
        "accuracy_by_language_resource",
        "gap_text_vs_crossmodal",
        "accuracy_by_family",
        "accuracy_by_resource",
        "accuracy_by_script",
        "accuracy_over_k",
        "task_k_heatmap",
    ):
        with Image.open(out / f"{name}.png") as im:
            # 300 dpi, at most a page wide (7 in) plus the tight bounding box's margin
            assert im.format == "PNG" and 600 < im.width <= 7.3 * 300, (name, im.size)
        svg = (out / f"{name}.svg").read_text("utf-8")
        assert svg.lstrip().startswith("<?xml") and "<dc:date>" not in svg
        assert name + ".png" in md
    # same inputs, same files: rerun and compare the SVG and the tables byte for byte
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".svg", ".csv", ".md", ".html")}
    CliRunner().invoke(
        eval_cli,
        ["report", str(a), str(b), "--out", str(out), "--name", "A", "--name", "B", "--language-metadata", str(meta)],
    )
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.suffix in (".svg", ".csv", ".md", ".html")}
    assert before == after


def test_metrics_json_of_a_run_has_intervals_and_metadata_groups():
    from mvlsib.evaluation.run.scoring import compute_metrics

    m = compute_metrics(planted_records(0.7, languages=LANGS, n=30))
    assert set(m["groups"]) == {"script", "family", "resource"}
    fam = {g["group"] for g in m["groups"]["family"]}
    assert fam == {"Indo-European", "Afro-Asiatic", "Atlantic-Congo", "Mande"}
    json.dumps(m)  # serialisable as metrics.json


@pytest.mark.eval
def test_topic_confusion_on_a_real_release(tmp_path, release_dir):
    from mvlsib.evaluation.analysis.report import write_report
    from mvlsib.evaluation.analysis.report_figures import topic_confusions
    from mvlsib.release_format import mvl_sib

    rows = mvl_sib.load_rows("eng_Latn", release_dir)[:60]
    ids = [r["instance_id"] for r in rows]
    labels = {"s2t": [r["image_label"] for r in rows]}
    # perfect on s2t except every 'sports' item, answered as the option one letter further on
    recs = planted_records(1.0, languages=("eng_Latn",), cells=(("s2t", 1),), n=60, instance_ids=ids, labels=labels)
    sports = {r["instance_id"] for r in rows if r["topic"] == "sports"}
    for rec in recs:
        if rec["instance_id"] in sports:
            rec["response"] = "ABCD"[(rec["label"] + 1) % 4]
    run = write_run(tmp_path / "run", recs)
    from mvlsib.evaluation.run.store import load_run

    config, records, _ = load_run(run)
    task, [(label, counts)] = topic_confusions([("run", config, None, None)], [records], release_dir, "relaxed")
    assert task == "s2t"
    by_row = {r["instance_id"]: r for r in rows}
    for (gold, answered), n in counts.items():
        assert (gold == answered) == (gold != "sports") and n > 0
    assert sum(counts.values()) == 60 and sum(n for (g, _), n in counts.items() if g == "sports") == len(sports)
    wrong = {by_row[i]["topic_options"][(by_row[i]["image_label"] + 1) % 4] for i in sports}
    assert {a for (g, a) in counts if g == "sports"} == wrong
    out = tmp_path / "rep"
    written = write_report([run], out, data=release_dir)
    assert out / "topic_confusion.png" in written and (out / "topic_confusion.svg").is_file()
    assert "topic_confusion.png" in (out / "report.md").read_text("utf-8")


def test_report_without_matplotlib_still_writes_the_tables(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("matplotlib is not installed here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    run = write_run(tmp_path / "a", planted_records(0.7, languages=LANGS, n=20), limit=20)
    out = tmp_path / "report"
    r = CliRunner().invoke(eval_cli, ["report", str(run), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "figures skipped: install matplotlib" in (out / "report.md").read_text("utf-8")
    assert (out / "leaderboard.html").is_file() and not list(out.glob("*.png"))
