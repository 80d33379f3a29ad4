"""The standalone loader ``mvl_sib.py`` on a small release written by the release writers.

The release here holds real SIB-200 test sentences (English and French) and real
PNG files; the instances are composed in the test so that every expected field
is known independently of the loader.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image
from support import WITHOUT_MVLSIB

from mvlsib.release import tables as rt
from mvlsib.release_format import mvl_sib
from mvlsib.release_format.mvl_sib import TOPICS, topic_slug
from mvlsib.workdir.pool_manifest import ManifestRow, read_manifest, write_manifest

LANGS = ("eng_Latn", "fra_Latn")
N_PER_TOPIC = 2  # instances per topic in the small release


def _read_tsv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _small_pool(dst: Path) -> Path:
    rows = []
    for t, topic in enumerate(TOPICS):
        for n in range(5):
            image_id = f"{topic_slug(topic)}_{n}"
            rel = f"{topic_slug(topic)}/{image_id}.png"
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (24 + n, 16 + t), (30 * t, 40 * n, 128)).save(dst / rel)
            import hashlib

            digest = hashlib.sha256((dst / rel).read_bytes()).hexdigest()
            rows.append(ManifestRow(image_id, topic, rel, "CC0-1.0", "test", "https://example.org/x", digest))
    write_manifest(dst, rows)
    return dst


def _compose_instances(eng_rows: list[dict]) -> list[dict]:
    by_topic: dict[str, list[int]] = {}
    for r in eng_rows:
        by_topic.setdefault(r["category"], []).append(int(r["index_id"]))
    for ids in by_topic.values():
        ids.sort()
    instances = []
    for t, topic in enumerate(TOPICS):
        for j in range(N_PER_TOPIC):
            ids = by_topic[topic]
            own = ids[j]
            refs = [own] + [x for x in ids if x != own][:4]
            negs = [TOPICS[(t + d) % 7] for d in (1, 2, 3)]
            label = (t + j) % 4
            sent_opts = [by_topic[n][j] for n in negs]
            sent_opts.insert(label, own)
            img_label = (t + j + 1) % 4
            img_opts = [f"{topic_slug(n)}_{j}" for n in negs]
            img_opts.insert(img_label, f"{topic_slug(topic)}_{j}")
            topic_opts = [negs[0], negs[1], negs[2]]
            topic_opts.insert(img_label, topic)
            instances.append(
                {
                    "instance_id": f"{own}-0",
                    "index_id": own,
                    "topic": topic,
                    "ref_sentence_ids": refs,
                    "ref_image_ids": [f"{topic_slug(topic)}_{(j + n) % 5}" for n in range(5)],
                    "neg_topics": negs,
                    "sentence_option_ids": sent_opts,
                    "sentence_label": label,
                    "image_option_ids": img_opts,
                    "topic_options": topic_opts,
                    "image_label": img_label,
                }
            )
    return sorted(instances, key=lambda i: i["index_id"])


@pytest.fixture(scope="module")
def small_release(tmp_path_factory, sib_dir):
    root = tmp_path_factory.mktemp("small")
    pool = _small_pool(root / "pool")
    texts: dict[str, dict[int, str]] = {}
    for lang in LANGS:
        rows = _read_tsv(sib_dir / "data" / "annotated" / lang / "test.tsv")
        texts[lang] = {int(r["index_id"]): r["text"].rstrip() for r in rows}
    eng_rows = _read_tsv(sib_dir / "data" / "annotated" / "eng_Latn" / "test.tsv")
    instances = _compose_instances(eng_rows)
    index_ids = sorted(texts["eng_Latn"])
    rel = root / "release"
    plan = rt.plan_instances(instances, index_ids)
    for lang in LANGS:
        rt.write_language(rel, plan, lang, [texts[lang][i] for i in index_ids])
    rt.write_images(rel, [rt.read_image_record(pool, row) for row in read_manifest(pool)])
    shutil.copyfile(mvl_sib.__file__, rel / "mvl_sib.py")
    return {"dir": rel, "instances": instances, "texts": texts, "pool": pool}


def _expected(inst, texts, task, k):
    t = lambda ids: [texts[i] for i in ids]  # noqa: E731
    if task == "i2s":
        return inst["ref_image_ids"][:k], t(inst["sentence_option_ids"]), inst["sentence_label"]
    if task == "s2i":
        return t(inst["ref_sentence_ids"][:k]), inst["image_option_ids"], inst["image_label"]
    if task == "t2s":
        return [inst["topic"]], t(inst["sentence_option_ids"]), inst["sentence_label"]
    return t(inst["ref_sentence_ids"][:k]), inst["topic_options"], inst["image_label"]


@pytest.mark.parametrize("task,k", [("i2s", 1), ("i2s", 3), ("s2i", 5), ("t2s", 1), ("s2t", 2), ("s2t", 5)])
def test_examples_match_instances(small_release, task, k):
    lang = "fra_Latn"
    texts = small_release["texts"][lang]
    examples = mvl_sib.load_task(task, lang, k=k, source=small_release["dir"])
    assert len(examples) == len(small_release["instances"]) == 7 * N_PER_TOPIC
    for ex, inst in zip(examples, small_release["instances"]):
        refs, opts, label = _expected(inst, texts, task, k)
        assert ex["instance_id"] == inst["instance_id"]
        assert (ex["language"], ex["task"], ex["k"]) == (lang, task, k)
        assert ex["references"] == refs
        assert ex["options"] == opts
        assert ex["label"] == label
        if task == "i2s":
            assert ex["image_ids"] == refs and ex["sentences"] == opts
        elif task == "s2i":
            assert ex["image_ids"] == opts and ex["sentences"] == refs
        elif task == "t2s":
            assert ex["image_ids"] == [] and ex["sentences"] == opts
        else:
            assert ex["image_ids"] == [] and ex["sentences"] == refs
        assert len(ex["images"]) == len(ex["image_ids"])


def test_images_are_the_pool_files_decoded_once(small_release):
    pool = small_release["pool"]
    examples = mvl_sib.load_task("i2s", "eng_Latn", k=5, source=small_release["dir"])
    seen = {}
    for ex in examples:
        for image_id, img in zip(ex["image_ids"], ex["images"]):
            # one PIL object per image id in a call, shared across examples
            assert seen.setdefault(image_id, img) is img
    rows = {r.image_id: r for r in read_manifest(pool)}
    for image_id, img in seen.items():
        with Image.open(pool / rows[image_id].file) as original:
            assert img.size == original.size
            assert img.convert("RGB").tobytes() == original.convert("RGB").tobytes()


def test_images_are_decoded_once_per_release_not_per_language(small_release, tmp_path, monkeypatch):
    """Issue #15: load_task over all languages decodes each image once; a rewritten release is read again."""
    decoded = []
    real = mvl_sib._decode
    monkeypatch.setattr(mvl_sib, "_decode", lambda data, image_id: decoded.append(image_id) or real(data, image_id))
    monkeypatch.setattr(mvl_sib, "_IMAGE_CACHE", {})
    rel = tmp_path / "rel"
    shutil.copytree(small_release["dir"], rel)
    n_images = len(read_manifest(small_release["pool"]))
    first = {lang: mvl_sib.load_task("i2s", lang, k=3, source=rel) for lang in LANGS}
    assert len(decoded) == n_images  # once for both languages (was once per language)
    mvl_sib.load_task("s2i", "eng_Latn", source=str(rel))  # same release named differently
    assert len(decoded) == n_images
    by_id = {i: im for ex in first["eng_Latn"] for i, im in zip(ex["image_ids"], ex["images"])}
    for ex in first["fra_Latn"]:
        assert all(by_id.get(i, im) is im for i, im in zip(ex["image_ids"], ex["images"]))
    # the same examples as without the cache
    monkeypatch.setattr(mvl_sib, "_IMAGE_CACHE", {})
    again = mvl_sib.load_task("i2s", "fra_Latn", k=3, source=rel)
    assert [(e["image_ids"], e["options"], e["label"]) for e in again] == [
        (e["image_ids"], e["options"], e["label"]) for e in first["fra_Latn"]
    ]
    assert len(decoded) == 2 * n_images
    # a release rewritten in place (another images file) is decoded again, not served stale
    images_file = rel / "data" / "images" / "test.parquet"
    data = images_file.read_bytes()
    images_file.write_bytes(data)
    os.utime(images_file, ns=(1, 1))
    mvl_sib.load_task("i2s", "eng_Latn", source=rel)
    assert len(decoded) == 3 * n_images
    # Hub sources are keyed by repo and revision
    assert mvl_sib._images_key("org/mvl-sib", "v1") != mvl_sib._images_key("org/mvl-sib", "v2")


def test_aliases_and_bad_arguments(small_release):
    src = small_release["dir"]
    a = mvl_sib.load_task("img2sent", "eng_Latn", k=3, source=src)
    b = mvl_sib.load_task("i2s", "eng_Latn", k=3, source=src)
    assert [x["options"] for x in a] == [x["options"] for x in b] and a[0]["task"] == "i2s"
    assert mvl_sib.load_task("sent2img", "eng_Latn", source=src)[0]["task"] == "s2i"
    with pytest.raises(ValueError, match="t2s.*only k=1"):
        mvl_sib.load_task("t2s", "eng_Latn", k=3, source=src)
    with pytest.raises(ValueError, match=r"k must be in 1\.\.5"):
        mvl_sib.load_task("i2s", "eng_Latn", k=6, source=src)
    with pytest.raises(ValueError, match="unknown task 'x2y'"):
        mvl_sib.load_task("x2y", "eng_Latn", source=src)
    with pytest.raises(ValueError, match="deu_Latn.*not a language.*eng_Latn, fra_Latn"):
        mvl_sib.load_task("i2s", "deu_Latn", source=src)
    with pytest.raises(ValueError, match="neither an existing release folder nor a Hub repo id"):
        mvl_sib.load_task("i2s", "eng_Latn", source=str(src / "nope"))


def test_build_examples_reuses_loaded_inputs(small_release):
    src = small_release["dir"]
    rows = mvl_sib.load_rows("eng_Latn", src)
    images = mvl_sib.load_images(src)
    assert sorted(images) == sorted(r.image_id for r in read_manifest(small_release["pool"]))
    for task in mvl_sib.TASKS:
        for k in (1,) if task == "t2s" else (1, 4):
            assert mvl_sib.build_examples(rows, images, task, k) == mvl_sib.load_task(task, "eng_Latn", k=k, source=src)
    assert mvl_sib.languages(src) == list(LANGS)


def test_datasets_reads_the_files(small_release):
    """The files carry the features datasets needs (Image decoded as PIL) without a card."""
    import datasets

    src = small_release["dir"]
    ds = datasets.load_dataset("parquet", data_files={"test": str(src / "data/images/test.parquet")}, split="test")
    assert isinstance(ds.features["image"], datasets.Image)
    row = ds[0]
    assert isinstance(row["image"], Image.Image) and row["image"].size == (row["width"], row["height"])
    lang = datasets.load_dataset("parquet", data_files={"test": str(src / "data/fra_Latn/test.parquet")}, split="test")
    assert lang.column_names == list(rt.LANGUAGE_COLUMNS)
    assert lang[0]["sentence"] == small_release["texts"]["fra_Latn"][lang[0]["index_id"]]


_STANDALONE = (
    WITHOUT_MVLSIB
    + r"""
import mvl_sib
out = {}
for task in mvl_sib.TASKS:
    for k in ((1,) if task == "t2s" else (1, 3, 5)):
        ex = mvl_sib.load_task(task, sys.argv[1], k=k, source=".")
        out[f"{task}/{k}"] = {
            "n": len(ex),
            "first": {key: ex[0][key] for key in ("instance_id", "references", "options", "label", "image_ids", "sentences")},
            "sizes": [im.size for im in ex[0]["images"]],
        }
assert "mvlsib" not in sys.modules
print(json.dumps(out))
"""
)


def test_loader_runs_from_release_folder_without_mvlsib(small_release):
    src = small_release["dir"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    res = subprocess.run(
        [sys.executable, "-c", _STANDALONE, "fra_Latn"], cwd=src, env=env, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout)
    texts = small_release["texts"]["fra_Latn"]
    inst = small_release["instances"][0]
    assert sorted(got) == ["i2s/1", "i2s/3", "i2s/5", "s2i/1", "s2i/3", "s2i/5", "s2t/1", "s2t/3", "s2t/5", "t2s/1"]
    for key, val in got.items():
        task, k = key.split("/")
        refs, opts, label = _expected(inst, texts, task, int(k))
        assert val["n"] == 7 * N_PER_TOPIC
        assert val["first"]["references"] == refs and val["first"]["options"] == opts and val["first"]["label"] == label
        assert len(val["sizes"]) == {"i2s": int(k), "s2i": 4}.get(task, 0)


def test_standalone_loader_topics_match_the_package():
    """mvl_sib.py may not import mvlsib, so it carries its own copy of the topic list; keep them equal."""
    from mvlsib.release_format import mvl_sib
    from mvlsib.release_format.mvl_sib import TOPICS

    assert mvl_sib.TOPICS == TOPICS
