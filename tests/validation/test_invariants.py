"""Each invariant of SPEC §4, planted as a violation into the real seed-0 sample, must be named."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
from click.testing import CliRunner
from support import POOL_DIR, corpus_from_frame

from mvlsib.builder.sample import duplicate_partners
from mvlsib.cli import build_cli
from mvlsib.validation.invariants import RULES, validate
from mvlsib.workdir.corpus import load_corpus
from mvlsib.workdir.pool_manifest import read_manifest


@pytest.fixture(scope="module")
def image_topics(pool_dir):
    return {r.image_id: r.topic for r in read_manifest(pool_dir)}


@pytest.fixture(scope="module")
def corpus(full_workdir):
    return load_corpus(full_workdir)


def _by_id(instances):
    return {inst["instance_id"]: inst for inst in instances}


def _run(corpus, instances, schemas=False):
    return validate(corpus, instances, POOL_DIR, schemas=schemas)


def _rules_for(result, iid=None):
    return {v.rule for v in result.violations if iid is None or v.instance_id == iid}


def test_clean_sample_has_no_violations(corpus, full_instances):
    result = _run(corpus, full_instances, schemas=True)
    assert result.ok, [str(v) for v in result.violations[:5]]


def _plant(instances, iid, **changes):
    out = copy.deepcopy(instances)
    target = _by_id(out)[iid]
    for key, value in changes.items():
        target[key] = value(target) if callable(value) else value
    return out


def test_schema_violation_named(corpus, full_instances):
    bad = _plant(full_instances, "5-1", sentence_label=7)
    result = _run(corpus, bad, schemas=True)
    hits = [v for v in result.violations if v.rule == "schema" and v.instance_id == "5-1"]
    assert hits and "sentence_label" in hits[0].detail and "maximum of 3" in hits[0].detail


def test_count_violations(corpus, full_instances):
    missing = [i for i in full_instances if i["instance_id"] != "10-2"]
    result = _run(corpus, missing)
    assert any(v.rule == "count" and v.instance_id == "10-2" and "missing" in v.detail for v in result.violations)
    doubled = full_instances + [copy.deepcopy(full_instances[0])]
    result = _run(corpus, doubled)
    assert any(v.rule == "count" and v.instance_id == "0-0" and "2 times" in v.detail for v in result.violations)


def _other_topic_image(image_topics, topic):
    return next(i for i, t in sorted(image_topics.items()) if t != topic)


def test_positive_image_of_wrong_topic(corpus, full_instances, image_topics):
    inst = full_instances[30]
    intruder = _other_topic_image(image_topics, inst["topic"])
    bad = _plant(
        full_instances,
        inst["instance_id"],
        ref_image_ids=lambda t: [t["ref_image_ids"][0], *t["ref_image_ids"][1:4], intruder],
    )
    result = _run(corpus, bad)
    hit = [v for v in result.violations if v.instance_id == inst["instance_id"] and v.rule == "positives"]
    assert hit and intruder in hit[0].detail


def test_own_sentence_not_first(corpus, full_instances):
    inst = full_instances[40]
    bad = _plant(
        full_instances,
        inst["instance_id"],
        ref_sentence_ids=lambda t: t["ref_sentence_ids"][1:] + t["ref_sentence_ids"][:1],
    )
    assert "positives" in _rules_for(_run(corpus, bad), inst["instance_id"])


def test_negative_topic_equal_to_topic(corpus, full_instances):
    inst = full_instances[50]
    bad = _plant(full_instances, inst["instance_id"], neg_topics=lambda t: [t["topic"], *t["neg_topics"][1:]])
    assert "negatives" in _rules_for(_run(corpus, bad), inst["instance_id"])


def test_label_pointing_at_a_negative(corpus, full_instances):
    inst = full_instances[60]
    bad = _plant(full_instances, inst["instance_id"], sentence_label=lambda t: (t["sentence_label"] + 1) % 4)
    result = _run(corpus, bad)
    assert "options" in _rules_for(result, inst["instance_id"])
    assert "label-balance" in _rules_for(result)  # one letter now has 754


def test_topic_options_out_of_step(corpus, full_instances):
    inst = full_instances[70]
    bad = _plant(full_instances, inst["instance_id"], topic_options=lambda t: list(reversed(t["topic_options"])))
    assert "options" in _rules_for(_run(corpus, bad), inst["instance_id"])


def test_identical_siblings(corpus, full_instances):
    twin = copy.deepcopy(_by_id(full_instances)["7-0"])
    twin["instance_id"] = "7-1"
    bad = [twin if i["instance_id"] == "7-1" else i for i in full_instances]
    result = _run(corpus, bad)
    assert any(v.rule == "siblings" and v.instance_id == "7-1" and "7-0" in v.detail for v in result.violations)


def test_duplicate_text_makes_instance_unanswerable(corpus, full_instances):
    partners = duplicate_partners(corpus)
    topics = dict(zip(corpus.column("index_id"), corpus.column("topic")))
    a, b = next((a, b) for a, bs in sorted(partners.items()) for b in sorted(bs) if topics[a] == topics[b])
    inst = next(i for i in full_instances if i["index_id"] == a)
    bad = _plant(full_instances, inst["instance_id"], ref_sentence_ids=lambda t: [*t["ref_sentence_ids"][:4], b])
    result = _run(corpus, bad)
    hits = [v for v in result.violations if v.rule == "answerable" and v.instance_id == inst["instance_id"]]
    assert hits and str(sorted([a, b])) in hits[0].detail.replace(" ", "").replace(",", ", ")


def test_unknown_ids(corpus, full_instances):
    inst = full_instances[80]
    bad = _plant(full_instances, inst["instance_id"], ref_image_ids=lambda t: [*t["ref_image_ids"][:4], "sports_99"])
    result = _run(corpus, bad)
    hits = [v for v in result.violations if v.rule == "unknown-id" and v.instance_id == inst["instance_id"]]
    assert hits and "sports_99" in hits[0].detail


def test_uneven_image_use(corpus, full_instances, image_topics):
    bad = copy.deepcopy(full_instances)
    topic = "travel"
    pool = sorted(i for i, t in image_topics.items() if t == topic)
    for inst in bad:
        if inst["topic"] == topic:
            inst["ref_image_ids"] = pool[:5]  # images 5..9 are never positives
            inst["image_option_ids"][inst["image_label"]] = pool[0]
    result = _run(corpus, bad)
    hits = [v for v in result.violations if v.rule == "image-balance"]
    assert hits and hits[0].detail.startswith("travel:")


def test_corpus_language_out_of_step(full_corpus, full_instances):
    frame = full_corpus.copy()
    row = frame.index[(frame["language"] == "fra_Latn") & (frame["index_id"] == 0)][0]
    frame.loc[row, "topic"] = "sports" if frame.loc[row, "topic"] != "sports" else "travel"
    result = _run(corpus_from_frame(frame), full_instances)
    assert any(v.rule == "corpus-parallel" and "fra_Latn" in v.detail for v in result.violations)


def test_every_rule_is_documented():
    doc = (__import__("pathlib").Path(__file__).parents[2] / "docs" / "validation.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"`{rule}`" in doc


def test_cli_reports_violations_and_exit_status(full_workdir, pool_dir, tmp_path):
    work = tmp_path / "w"
    shutil.copytree(full_workdir, work)
    runner = CliRunner()
    ok = runner.invoke(build_cli, ["validate", "--workdir", str(work), "--pool", str(pool_dir)])
    assert ok.exit_code == 0, ok.output
    assert ok.output.startswith("OK: 3012 instances, 1004 sentences, 199 languages, 70 images")

    lines = (work / "instances.jsonl").read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[3])
    rec["neg_topics"] = [rec["topic"], *rec["neg_topics"][1:]]
    lines[3] = json.dumps(rec)
    rec5 = json.loads(lines[5])
    rec5["ref_image_ids"] = rec5["ref_image_ids"][:4]
    lines[5] = json.dumps(rec5)
    (work / "instances.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = tmp_path / "violations.json"
    bad = runner.invoke(build_cli, ["validate", "--workdir", str(work), "--pool", str(pool_dir), "--json", str(report)])
    assert bad.exit_code == 1
    assert f"{rec['instance_id']}  negatives" in bad.output
    assert f"{rec5['instance_id']}  schema" in bad.output and "ref_image_ids" in bad.output
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["ok"] is False and data["counts"]["negatives"] >= 1
