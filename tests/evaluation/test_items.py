"""Item analysis over several runs on a real release: planted always-wrong instances are
listed with their texts and options, a planted bad image tops the s2i error table, and a
letter-biased run shows its bias."""

from __future__ import annotations

import csv
import json

from click.testing import CliRunner
from support.planted import planted_records, s2i_images, write_run

from mvlsib.cli import eval_cli
from mvlsib.release_format import mvl_sib

CELLS = (("i2s", 1), ("s2i", 1), ("s2t", 1))


def test_items_lists_planted_always_wrong_instances_with_texts(tmp_path, release_dir):
    rows = mvl_sib.load_rows("eng_Latn", release_dir)[:80]
    ids = [r["instance_id"] for r in rows]
    labels = {
        "i2s": [r["sentence_label"] for r in rows],
        "s2i": [r["image_label"] for r in rows],
        "s2t": [r["image_label"] for r in rows],
    }
    planted_bad = {ids[3], ids[41]}
    # every instance whose gold s2i image is img-7 is also missed (by chance-free construction below)
    bad_image = {ids[i] for i in range(80) if s2i_images(i)[labels["s2i"][i]] == "img-7"}
    kw = dict(languages=("eng_Latn", "arb_Arab"), cells=CELLS, n=80, instance_ids=ids, labels=labels)
    runs = []
    for j, (acc, letter) in enumerate(((0.9, None), (0.8, None), (0.6, "B"))):
        recs = planted_records(
            acc, seed=10 + j, always_wrong=planted_bad | bad_image if j < 2 else planted_bad, answer_letter=letter, **kw
        )
        # the third run also misses img-7 as the s2i gold image, but only in s2i
        for r in recs:
            if r["task"] == "s2i" and r["instance_id"] in bad_image:
                r["response"] = "ABCD"[(r["label"] + 1) % 4]
        runs.append(write_run(tmp_path / f"run{j}", recs, model=f"m{j}"))
        last = recs
    out = tmp_path / "items"
    r = CliRunner().invoke(eval_cli, ["items", *map(str, runs), "--out", str(out), "--data", str(release_dir)])
    assert r.exit_code == 0, r.output
    listed = [json.loads(line) for line in (out / "always_wrong.jsonl").read_text("utf-8").splitlines()]
    keys = {(d["language"], d["task"], d["instance_id"]) for d in listed}
    for iid in planted_bad:
        for lang in ("eng_Latn", "arb_Arab"):
            for task, _ in CELLS:
                assert (lang, task, iid) in keys
    first = next(d for d in listed if d["instance_id"] == ids[3] and d["task"] == "i2s" and d["language"] == "arb_Arab")
    import pyarrow.parquet as pq

    arb = pq.read_table(release_dir / "data" / "arb_Arab" / "test.parquet", columns=["instance_id", "sentence"])
    assert first["sentence"] == dict(zip(*arb.to_pydict().values()))[ids[3]]
    assert len(first["options"]) == 4 and first["gold"] == "ABCD"[labels["i2s"][3]]
    assert first["references"] == list(rows[3]["ref_image_ids"][:1])
    md = (out / "items.md").read_text("utf-8")
    assert f"### arb\\_Arab i2s k=1 {ids[3]}" in md and "- sentence: " in md  # Markdown-escaped: arb\_Arab
    # (task, k, instance) wrong everywhere: the planted ones are among them
    assert all(f"| i2s | 1 | {iid} |" in md for iid in planted_bad)

    images = list(csv.DictReader(open(out / "image_error_rates.csv", encoding="utf-8")))
    assert images[0]["image_id"] == "img-7" and float(images[0]["s2i_gold_error_rate"]) == 1.0

    bias = {(b["run"], b["label_column"]): b for b in csv.DictReader(open(out / "letter_bias.csv", encoding="utf-8"))}
    biased = bias[("run2", "image_label")]
    assert float(biased["answered_B"]) - float(biased["gold_B"]) > 0.2 and float(biased["max_excess"]) > 0.2
    assert float(bias[("run0", "image_label")]["max_excess"]) < 0.1
    assert "## Letter-position bias" in md
    # text-only vs cross-modal per item: s2i and its mirror s2t share instances, k and languages
    pairs = list(csv.DictReader(open(out / "modality_pairs.csv", encoding="utf-8")))
    assert {(p["cross_modal_task"], p["text_task"]) for p in pairs} == {("s2i", "s2t")}
    run2 = next(p for p in pairs if p["run"] == "run2")
    assert run2["n"] == "160"  # 80 instances x 2 languages
    shares = [float(run2[c]) for c in ("both_right", "only_text_right", "only_cross_right", "both_wrong")]
    assert sum(shares) == 1.0 or abs(sum(shares) - 1.0) < 1e-9
    # recount from run2's planted records: s2t right and s2i wrong on the same (language, instance)
    right = {(r["language"], r["task"], r["instance_id"]): r["response"] == "ABCD"[r["label"]] for r in last}
    only_text = sum(
        right[(lang, "s2t", iid)] and not right[(lang, "s2i", iid)] for lang in ("eng_Latn", "arb_Arab") for iid in ids
    )
    assert float(run2["only_text_right"]) == only_text / 160 and only_text > 0
    assert "## Text-only vs cross-modal" in md
