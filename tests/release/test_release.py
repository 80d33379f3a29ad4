"""The release folder built from all of ../shared/sib-200 and the bundled pool.

Two builds are made once per module: ``mvlsib-build build`` in a subprocess (the
whole pipeline, as a user runs it) and ``publish_from()`` from the session's shared
work folder. Everything below checks those two folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image
from support import WITHOUT_MVLSIB, subprocess_env

CHECK_LANGS = ["eng_Latn", "zho_Hans", "arb_Arab", "tir_Ethi"]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def cli_build(sib_dir: Path, pool_dir: Path, tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "rel"
    work = out.parent / "work"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "mvlsib",
            "build",
            "--sib",
            str(sib_dir),
            "--seed",
            "0",
            "--out",
            str(out),
            "--workdir",
            str(work),
            "--pool",
            str(pool_dir),
        ],
        env=subprocess_env(PYTHONHASHSEED="4242"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return {"out": out, "work": work, "stdout": res.stdout}


@pytest.fixture(scope="module")
def release(cli_build) -> Path:
    return cli_build["out"]


@pytest.fixture(scope="module")
def lib_release(full_workdir: Path, pool_dir: Path, tmp_path_factory) -> Path:
    from support.workfolder import publish_from

    out = tmp_path_factory.mktemp("lib") / "rel"
    publish_from(full_workdir, out, pool_dir, seed=0, progress=False)
    return out


@pytest.fixture(scope="module")
def ds_cache(tmp_path_factory) -> str:
    """A datasets cache of this module's own, so no earlier load of another folder is reused."""
    return str(tmp_path_factory.mktemp("hf-datasets-cache"))


@pytest.fixture(scope="module")
def corpus_texts(full_workdir: Path) -> dict[tuple[str, int], str]:
    table = pq.read_table(full_workdir / "corpus.parquet", columns=["language", "index_id", "text"])
    return {
        (lang, i): t
        for lang, i, t in zip(*(table.column(c).to_pylist() for c in ("language", "index_id", "text")))
        if lang in CHECK_LANGS
    }


def test_build_prints_summary_and_writes_every_language(cli_build, full_workdir):
    out, stdout = cli_build["out"], cli_build["stdout"]
    langs = sorted(p.name for p in (out / "data").iterdir() if p.name not in ("images", "preview"))
    corpus_langs = sorted(
        set(pq.read_table(full_workdir / "corpus.parquet", columns=["language"]).column(0).to_pylist())
    )
    assert langs == corpus_langs and len(langs) >= 199
    sha = hashlib.sha256((full_workdir / "instances.jsonl").read_bytes()).hexdigest()
    assert f"languages: {len(langs)}" in stdout
    assert "instances per language: 3,012" in stdout
    assert f"instances.jsonl sha256: {sha}" in stdout
    assert " MB" in stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md",
        "data",
        "eval.yaml",
        "evaluate.py",
        "manifest.json",
        "mvl_sib.py",
        "mvlsib_evaluate",
    ]


def test_two_builds_are_byte_identical(release, lib_release):
    """Same bytes from the CLI pipeline in a subprocess (PYTHONHASHSEED=4242) and from
    publish_from() on the session's shared work folder in this process."""
    a, b = _files(release), _files(lib_release)
    assert sorted(a) == sorted(b)
    differing = [name for name in a if a[name] != b[name]]
    assert differing == []


def test_language_configs_load_with_datasets(release, full_workdir, corpus_texts, ds_cache):
    import datasets

    from mvlsib.workdir.instances import load_instances

    instances = load_instances(full_workdir)
    for lang in CHECK_LANGS:
        ds = datasets.load_dataset(str(release), name=lang, split="test", cache_dir=ds_cache)
        assert ds.num_rows == 3012
        assert ds.column_names[:5] == ["instance_id", "index_id", "language", "topic", "sentence"]
        for n in (0, 1234, 3011):
            row, inst = ds[n], instances[n]
            text = lambda i, lang=lang: corpus_texts[(lang, i)]  # noqa: E731
            assert row["instance_id"] == inst["instance_id"] and row["language"] == lang
            assert row["sentence"] == text(inst["index_id"])
            assert row["ref_sentences"] == [text(i) for i in inst["ref_sentence_ids"]]
            assert row["sentence_options"] == [text(i) for i in inst["sentence_option_ids"]]
            for key in (
                "ref_image_ids",
                "neg_topics",
                "image_option_ids",
                "topic_options",
                "sentence_label",
                "image_label",
            ):
                assert row[key] == inst[key]


def test_every_config_knows_its_features_before_download(release, ds_cache):
    """The card's dataset_info gives every config its features: `load_dataset_builder` knows them
    without reading a parquet file, and they equal what the files declare."""
    import datasets
    import pyarrow.parquet as pq
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCard

    card = DatasetCard((release / "README.md").read_text("utf-8"))
    configs = [c["config_name"] for c in card.data["configs"]]
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    assert len(configs) > 100 and sorted(infos) == sorted(configs)
    assert all(infos[c].features is not None for c in configs)
    for config in [*CHECK_LANGS, "images"]:  # a builder per config costs ~0.5 s; these stand for all
        builder = datasets.load_dataset_builder(str(release), name=config, cache_dir=ds_cache)
        declared = datasets.Features.from_arrow_schema(pq.read_schema(release / "data" / config / "test.parquet"))
        assert builder.info.features == declared, config


def test_images_config_decodes_and_holds_each_image_once(release, pool_dir, ds_cache):
    import datasets

    from mvlsib.workdir.pool_manifest import read_manifest

    ds = datasets.load_dataset(str(release), name="images", split="test", cache_dir=ds_cache)
    rows = {r.image_id: r for r in read_manifest(pool_dir)}
    assert sorted(ds["image_id"]) == sorted(rows) and ds.num_rows == 70
    for rec in ds:
        img = rec["image"]
        assert isinstance(img, Image.Image) and img.size == (rec["width"], rec["height"])
        m = rows[rec["image_id"]]
        assert (rec["topic"], rec["license"], rec["author"], rec["source_url"]) == (
            m.topic,
            m.license,
            m.author,
            m.source_url,
        )
        with Image.open(pool_dir / m.file) as original:
            assert img.convert("RGB").tobytes() == original.convert("RGB").tobytes()
    raw = ds.cast_column("image", datasets.Image(decode=False))
    for rec in raw:
        assert hashlib.sha256(rec["image"]["bytes"]).hexdigest() == rows[rec["image_id"]].sha256 == rec["sha256"]
    # no image bytes anywhere else: language files hold only ids and texts
    schema = pq.read_schema(release / "data" / "eng_Latn" / "test.parquet")
    assert all("binary" not in str(f.type) for f in schema)


def test_card_yaml_lists_every_language_and_config(release, full_workdir, pool_dir):
    from mvlsib.image_pool.credits import title_of
    from mvlsib.release.card.render import card_metadata, license_link
    from mvlsib.workdir.pool_manifest import read_manifest

    text = (release / "README.md").read_text("utf-8")
    meta = card_metadata(text)
    langs = sorted(p.name for p in (release / "data").iterdir() if p.name not in ("images", "preview"))
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert sorted(configs) == sorted([*langs, "images", "preview"])
    for name, cfg in configs.items():
        (files,) = cfg["data_files"]
        assert files["split"] == "test" and (release / files["path"]).is_file()
        assert files["path"] == f"data/{name}/test.parquet"
    assert configs["eng_Latn"].get("default") is True
    assert meta["language_details"] == langs
    from mvlsib.release.card.iso639 import ISO639_1

    assert sorted(meta["language"]) == sorted({ISO639_1.get(lang[:3], lang[:3]) for lang in langs})
    assert sum(len(code) == 2 for code in meta["language"]) == 113  # of 193 ISO 639-3 codes in SIB-200
    assert meta["license"][0] == "cc-by-sa-4.0" and "cc0-1.0" in meta["license"]
    assert meta["pretty_name"] == "MVL-SIB (mvlsib-build instances, seed 0, demo pictograms)"  # bundled pool
    assert "visual-question-answering" in meta["task_categories"] and meta["size_categories"] == ["1K<n<10K"]

    sha = hashlib.sha256((full_workdir / "instances.jsonl").read_bytes()).hexdigest()
    assert "sampled with seed **0**" in text and sha in text
    assert "| `sentence_label` (i2s, t2s) | 753 | 753 | 753 | 753 |" in text
    assert "| `image_label` (s2i, s2t) | 753 | 753 | 753 | 753 |" in text
    for row in read_manifest(pool_dir):  # one attribution row per image, with its licence link
        link = f"[{row.license}]({license_link(row.license)})"
        assert f"| `{row.image_id}` | {row.topic} | {title_of(row)} | {row.author} | {link} |" in text
    for heading in (
        "## Tasks",
        "### Prompts",
        "## How to load",
        "## How to evaluate",
        "## Sampling",
        "## Statistics",
        "## Licences",
        "## Image attribution",
        "## Citation",
    ):
        assert heading in text
    assert "How MVL-SIB instances are sampled" in text  # docs/sampling.md is included
    for cite in ("schmidt2025mvlsib", "adelani-etal-2024-sib", "nllb2022"):
        assert cite in text


def test_manifest_lists_every_file_and_the_build(release, pool_dir):
    from mvlsib.release.manifest import verify_release

    manifest = verify_release(release)
    files = {p.relative_to(release).as_posix() for p in release.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(manifest["files"]) == files
    for rel, entry in manifest["files"].items():
        data = (release / rel).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    build = manifest["build"]
    assert build["seed"] == 0 and build["num_instances"] == 3012 and build["num_images"] == 70
    assert build["languages"] == sorted(
        p.name for p in (release / "data").iterdir() if p.name not in ("images", "preview")
    )
    assert build["pool_manifest_sha256"] == hashlib.sha256((pool_dir / "manifest.csv").read_bytes()).hexdigest()
    assert build["source"]["location"].endswith("sib-200") and build["source"]["kind"] == "local"
    assert set(manifest["library_versions"]) >= {"python", "pyarrow", "datasets", "pillow"}
    assert (release / "mvl_sib.py").read_bytes() == Path(
        __import__("mvlsib.release_format.mvl_sib").release_format.mvl_sib.__file__
    ).read_bytes()


_STANDALONE = (
    WITHOUT_MVLSIB
    + r"""
import mvl_sib
lang = sys.argv[1]
rows = mvl_sib.load_rows(lang, ".")
images = mvl_sib.load_images(".")
out = {}
for task in mvl_sib.TASKS:
    for k in ((1,) if task == "t2s" else (1, 3, 5)):
        ex = mvl_sib.load_task(task, lang, k=k, source=".")
        again = mvl_sib.build_examples(rows, images, task, k)
        strip = lambda e: {key: v for key, v in e.items() if key != "images"}  # noqa: E731
        assert [strip(e) for e in ex] == [strip(e) for e in again]
        # one decoded object per image id within a call
        seen = {}
        assert all(seen.setdefault(i, im) is im for e in ex for i, im in zip(e["image_ids"], e["images"]))
        out[f"{task}/{k}"] = {
            "n": len(ex),
            "n_images": sorted({len(e["images"]) for e in ex}),
            "n_refs": sorted({len(e["references"]) for e in ex}),
            "n_options": sorted({len(e["options"]) for e in ex}),
            "modes": sorted({im.mode for e in ex for im in e["images"]}),
            "sample": [{key: ex[n][key] for key in ("instance_id", "references", "options", "label", "image_ids", "sentences")}
                       for n in (0, 2000)],
        }
assert "mvlsib" not in sys.modules
print(json.dumps(out))
"""
)


def test_loader_works_from_the_release_folder_alone(release, full_workdir, corpus_texts):
    from mvlsib.workdir.instances import load_instances

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    res = subprocess.run(
        [sys.executable, "-c", _STANDALONE, "eng_Latn"],
        cwd=release,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout)
    instances = load_instances(full_workdir)
    text = lambda i: corpus_texts[("eng_Latn", i)]  # noqa: E731
    assert len(got) == 10
    for key, val in got.items():
        task, k = key.split("/")
        k = int(k)
        assert val["n"] == 3012 and val["n_options"] == [4]
        assert val["n_refs"] == [1 if task == "t2s" else k]
        assert val["n_images"] == [{"i2s": k, "s2i": 4}.get(task, 0)]
        for sample, n in zip(val["sample"], (0, 2000)):
            inst = instances[n]
            expected = {
                "i2s": (
                    inst["ref_image_ids"][:k],
                    [text(i) for i in inst["sentence_option_ids"]],
                    inst["sentence_label"],
                ),
                "s2i": ([text(i) for i in inst["ref_sentence_ids"][:k]], inst["image_option_ids"], inst["image_label"]),
                "t2s": ([inst["topic"]], [text(i) for i in inst["sentence_option_ids"]], inst["sentence_label"]),
                "s2t": ([text(i) for i in inst["ref_sentence_ids"][:k]], inst["topic_options"], inst["image_label"]),
            }[task]
            assert (sample["references"], sample["options"], sample["label"]) == tuple(expected)
            assert sample["instance_id"] == inst["instance_id"]


def test_evaluate_script_runs_without_the_package(release):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    res = subprocess.run(
        [sys.executable, "evaluate.py", "--help"], cwd=release, env=env, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "--model" in res.stdout


def test_release_size(release):
    size = sum(p.stat().st_size for p in release.rglob("*") if p.is_file())
    assert size < 200e6


def test_build_with_raw_flores_languages(sib_dir, pool_dir, tmp_path):
    """`build --flores --annotation` adds N'Ko (built from the raw Flores files) beside SIB-200 languages."""
    from click.testing import CliRunner

    from mvlsib.cli import build_cli
    from mvlsib.release_format import mvl_sib

    out = tmp_path / "rel"
    res = CliRunner().invoke(
        build_cli,
        [
            "build",
            "--sib",
            str(sib_dir),
            "--languages",
            "eng_Latn,nqo_Nkoo",
            "--out",
            str(out),
            "--pool",
            str(pool_dir),
            "--flores",
            str(sib_dir / "data" / "nko_flores"),
            "--annotation",
            str(sib_dir / "data" / "eng"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert mvl_sib.languages(out) == ["eng_Latn", "nqo_Nkoo"]
    nko = mvl_sib.load_task("s2t", "nqo_Nkoo", k=1, source=out)
    eng = mvl_sib.load_task("s2t", "eng_Latn", k=1, source=out)
    assert len(nko) == 3012 and [e["options"] for e in nko] == [e["options"] for e in eng]
    assert all(any("\u07c0" <= ch <= "\u07ff" for ch in e["references"][0]) for e in nko[:50])  # N'Ko script
    build = json.loads((out / "manifest.json").read_text("utf-8"))["build"]
    assert build["source"]["kind"] == "local, flores, annotation"


def test_publish_applies_the_release_row_schema(full_workdir):
    """The release row schema (derived from the column table) is applied to every table publish writes."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from mvlsib.errors import MvlsibError
    from mvlsib.release import tables as rt
    from mvlsib.workdir.corpus import corpus_texts, load_corpus
    from mvlsib.workdir.instances import load_instances

    index_ids, texts = corpus_texts(load_corpus(full_workdir))
    plan = rt.plan_instances(load_instances(full_workdir), index_ids)
    table = rt.language_table(plan, "fra_Latn", texts["fra_Latn"])
    rt.check_language_table(table, "fra_Latn", full=True)
    empty = pc.if_else(pa.array([i == 5 for i in range(table.num_rows)]), "", table.column("sentence"))
    bad_text = table.set_column(table.schema.get_field_index("sentence"), "sentence", empty)
    for full in (True, False):
        with pytest.raises(MvlsibError, match="sentence has an empty or missing text"):
            rt.check_language_table(bad_text, "fra_Latn", full=full)
    with pytest.raises(MvlsibError, match="are not the release columns"):
        rt.check_language_table(table.drop_columns(["image_label"]), "fra_Latn", full=True)
    with pytest.raises(MvlsibError, match="not a language code"):
        rt.check_language_table(table, "fra_Latn copy", full=False)
    # The column-wise checks of every table.
    other = pa.array(["fra_Latn"] * (table.num_rows - 1) + ["deu_Latn"])
    mixed = table.set_column(table.schema.get_field_index("language"), "language", other)
    with pytest.raises(MvlsibError, match="a row names another language"):
        rt.check_language_table(mixed, "fra_Latn", full=False)
    refs = table.column("ref_sentences").to_pylist()
    refs[3] = refs[3][:4]
    short = table.set_column(
        table.schema.get_field_index("ref_sentences"),
        "ref_sentences",
        pa.array(refs, type=table.schema.field("ref_sentences").type),
    )
    with pytest.raises(MvlsibError, match="ref_sentences must hold 5 texts in every row"):
        rt.check_language_table(short, "fra_Latn", full=False)
    options = table.column("sentence_options").to_pylist()
    options[11][2] = None
    missing = table.set_column(
        table.schema.get_field_index("sentence_options"),
        "sentence_options",
        pa.array(options, type=table.schema.field("sentence_options").type),
    )
    with pytest.raises(MvlsibError, match="sentence_options has an empty or missing text"):
        rt.check_language_table(missing, "fra_Latn", full=False)


def test_a_release_rebuilt_in_the_same_folder_loads_afresh(sib_dir, pool_dir, tmp_path):
    """`datasets` keys its cache for a local folder on the card, not on the files' contents or
    times: the card's per-config `download_size` is what makes a rebuilt release load anew
    (the split sizes were dropped from the card for speed)."""
    import datasets

    from mvlsib.builder.ingest import ingest
    from mvlsib.builder.sample import sample
    from mvlsib.release.publish import publish

    cache, out = str(tmp_path / "cache"), tmp_path / "rel"
    ids = {}
    corpus = ingest(sib_dir, languages="eng_Latn", progress=False)
    for seed in (0, 1):
        instances = [inst.as_dict() for inst in sample(corpus, pool_dir, seed=seed)]
        publish(corpus, instances, pool_dir, out, seed=seed, progress=False)
        ds = datasets.load_dataset(str(out), name="eng_Latn", split="test", cache_dir=cache)
        assert ds["ref_sentence_ids"][:50] == [i["ref_sentence_ids"] for i in instances[:50]], seed
        ids[seed] = ds["ref_sentence_ids"][:50]
    assert ids[0] != ids[1]
