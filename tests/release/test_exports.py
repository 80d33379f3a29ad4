"""Exports to lmms-eval, MTEB and VLMEvalKit, checked field by field against the evaluator.

A release of four languages (Latin, right-to-left Arabic, Han, Devanagari) is built once
from the real SIB-200 files. Every exported prompt, option, image (order) and gold letter
must equal what ``mvlsib.evaluation`` builds for the same instance. The real harnesses run
from their own virtual environments (``~/.cache/mvlsib/harness-venvs/{lmms,mteb}``, or ``$MVLSIB_HARNESS_VENVS``; see
docs/exports.md); they are never installed into the test interpreter.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from support import WITHOUT_MVLSIB, subprocess_env

from mvlsib.atomic import LEDGER
from mvlsib.evaluation.run.prompts import LETTERS, prompt_for_example
from mvlsib.evaluation.run.scoring import METRICS, macro, per_language
from mvlsib.pipeline import build
from mvlsib.release_format import mvl_sib

LANGS = ("eng_Latn", "arb_Arab", "zho_Hans", "hin_Deva")
# Instances checked in every language, task and k: both ends and the middle.
SAMPLE = (0, 1, 1507, 3011)
VENVS = Path(os.environ.get("MVLSIB_HARNESS_VENVS", Path.home() / ".cache" / "mvlsib" / "harness-venvs"))


@pytest.fixture(scope="module")
def release(sib_dir, pool_dir, tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("export-release")
    build(str(sib_dir), base / "rel", workdir=base / "work", pool=pool_dir, languages=LANGS, progress=False)
    return base / "rel"


@pytest.fixture(scope="module")
def images(release):
    return mvl_sib.load_images(release)


@pytest.fixture(scope="module")
def pixels(images) -> dict[str, str]:
    """sha256 of each image's RGB pixels: how images are compared across processes."""
    return {image_id: _pixels(img) for image_id, img in images.items()}


@pytest.fixture(scope="module")
def lmms_dir(release, tmp_path_factory) -> Path:
    from mvlsib.release.exports import export

    out = tmp_path_factory.mktemp("lmms") / "tasks"
    export("lmms-eval", release, out)
    return out


def _pixels(img) -> str:
    return hashlib.sha256(img.convert("RGB").tobytes()).hexdigest()


@functools.cache
def _rows(release: Path, lang: str) -> list[dict]:
    return mvl_sib.load_rows(lang, release)


def _expected(release, pixels, task: str, k: int, lang: str, idx: int) -> dict:
    """What the reference evaluator sends and scores for one instance (images as pixel hashes)."""
    ex = mvl_sib.build_examples([_rows(release, lang)[idx]], pixels, task, k)[0]
    prompt = prompt_for_example(ex)
    return {
        "instance_id": ex["instance_id"],
        "text": "".join(p["text"] for p in prompt.parts if p["type"] == "text"),
        "messages": [["T", p["text"]] if p["type"] == "text" else ["I", pixels[p["image_id"]]] for p in prompt.parts],
        "visuals": list(ex["images"]),
        "target": LETTERS[ex["label"]],
    }


def _pairs():
    return [(t.name, k) for t in mvl_sib.TASK_TABLE for k in mvl_sib.DEFAULT_K_VALUES if k in t.k_values]


# ---------------------------------------------------------------- lmms-eval


def test_lmms_eval_folder_is_one_template_per_task_and_copies_the_evaluator(lmms_dir, release):
    from mvlsib.release.bundle import bundle_zip
    from mvlsib.release.exports.lmms_eval import UTILS_TEMPLATE

    pairs = _pairs()
    assert len(pairs) == 10
    for task, k in pairs:
        assert (lmms_dir / f"_mvl_sib_{task}_k{k}_template_yaml").is_file()
        group = (lmms_dir / f"_mvl_sib_{task}_k{k}.yaml").read_text(encoding="utf-8")
        assert all(f'"mvl_sib_{task}_k{k}_{lang}"' in group for lang in LANGS)
        assert "weight_by_size: false" in group  # the macro over languages
        for lang in LANGS:
            body = (lmms_dir / f"mvl_sib_{task}_k{k}_{lang}.yaml").read_text(encoding="utf-8")
            assert f'include: "_mvl_sib_{task}_k{k}_template_yaml"' in body
            assert f'dataset_name: "{lang}"' in body
    template = (lmms_dir / "_mvl_sib_s2t_k3_template_yaml").read_text(encoding="utf-8")
    assert f'dataset_path: "{release.resolve()}"' in template
    assert "process_docs: !function utils.process_docs_s2t_k3" in template
    assert all(f"aggregation: !function utils.aggregate_{m}" in template for m in METRICS)
    # One source of truth: the evaluator's code and the loader are copied, never restated.
    assert (lmms_dir / "mvlsib_evaluate.zip").read_bytes() == bundle_zip()
    assert (lmms_dir / "mvl_sib.py").read_bytes() == Path(mvl_sib.__file__).read_bytes()
    assert (lmms_dir / "utils.py").read_bytes() == UTILS_TEMPLATE.read_bytes()
    assert json.loads((lmms_dir / "export.json").read_text())["languages"] == sorted(LANGS)


# Runs utils.py the way lmms-eval does (docs from datasets.load_dataset, then process_docs),
# in a child process where the mvlsib package is not importable.
_LMMS_CHILD = (
    WITHOUT_MVLSIB
    + r"""
import hashlib, importlib.util
import datasets
spec = importlib.util.spec_from_file_location("utils", "utils.py")
utils = importlib.util.module_from_spec(spec)
spec.loader.exec_module(utils)
release, pairs, langs, sample, responses = json.loads(sys.argv[1])
pix = lambda im: hashlib.sha256(im.convert("RGB").tobytes()).hexdigest()
out = {"docs": {}, "scores": {}}
for lang in langs:
    raw = datasets.load_dataset(release, name=lang, split="test")
    for task, k in pairs:
        docs = getattr(utils, f"process_docs_{task}_k{k}")(raw)
        for idx in sample:
            doc = docs[idx]
            out["docs"][f"{task}/{k}/{lang}/{idx}"] = {
                "instance_id": doc["instance_id"],
                "text": utils.doc_to_text(doc),
                "messages": [[["T", p["text"]] if p["type"] == "text" else ["I", pix(p["url"])] for p in m["content"]]
                             for m in utils.doc_to_messages(doc)],
                "visuals": [pix(im) for im in utils.doc_to_visual(doc)],
                "target": utils.doc_to_target(doc),
            }
        if (task, k) == ("i2s", 3):
            records = {m: [] for m in utils.METRICS}
            for idx, response in enumerate(responses):
                for metric, rec in utils.process_results(docs[idx], [response]).items():
                    records[metric].append(rec)
            out["scores"][lang] = {m: getattr(utils, f"aggregate_{m}")(records[m]) for m in utils.METRICS}
print(json.dumps(out, ensure_ascii=False))
"""
)

RESPONSES = [
    "A",
    "(b)",
    "**C**",
    "D. because",
    "According to the image",
    "",
    "Ｃ",
    "The answer is D",
    "В",
    "c)",
    "  'A'",
    "B",
    "x",
    "D",
    "A",
    "C",
    "B",
    "D",
    "nothing",
    "A",
]


def test_lmms_eval_docs_and_scores_equal_the_evaluator(lmms_dir, release, images, pixels, tmp_path):
    pairs = _pairs()
    arg = json.dumps([str(release), pairs, list(LANGS), list(SAMPLE), RESPONSES])
    res = subprocess.run(
        [sys.executable, "-c", _LMMS_CHILD, arg],
        cwd=lmms_dir,
        capture_output=True,
        text=True,
        timeout=300,
        env=subprocess_env(HF_DATASETS_CACHE=str(tmp_path / "hf")),
    )
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout)
    for task, k in pairs:
        for lang in LANGS:
            for idx in SAMPLE:
                exp = _expected(release, pixels, task, k, lang, idx)
                doc = got["docs"][f"{task}/{k}/{lang}/{idx}"]
                assert doc["instance_id"] == exp["instance_id"]
                assert doc["text"] == exp["text"], (task, k, lang, idx)
                assert doc["messages"] == [exp["messages"]], (task, k, lang, idx)
                assert doc["visuals"] == exp["visuals"], (task, k, lang, idx)
                assert doc["target"] == exp["target"], (task, k, lang, idx)
    # Non-Latin text arrives untouched (the Arabic and Hindi prompts hold their own script).
    assert any("\u0600" <= c <= "\u06ff" for c in got["docs"]["i2s/1/arb_Arab/0"]["text"])
    assert any("\u0900" <= c <= "\u097f" for c in got["docs"]["s2t/3/hin_Deva/1507"]["text"])
    # Scores: the evaluator's scorer on the same responses, per language and as the macro.
    records = []
    for lang in LANGS:
        rows = mvl_sib.load_rows(lang, release)[: len(RESPONSES)]
        for row, response in zip(rows, RESPONSES):
            ex = mvl_sib.build_examples([row], images, "i2s", 3)[0]
            records.append({"language": lang, "task": "i2s", "k": 3, "label": ex["label"], "response": response})
    cells = {c.language: c for c in per_language(records)}
    for lang in LANGS:
        for metric in METRICS:
            assert got["scores"][lang][metric] == getattr(cells[lang], metric), (lang, metric)
    (row,) = macro(per_language(records))
    for metric in METRICS:
        assert sum(got["scores"][lang][metric] for lang in LANGS) / len(LANGS) == pytest.approx(row[metric])
    # The responses exercise all outcomes: right, wrong and format errors.
    assert 0 < cells["eng_Latn"].format_error_rate < 1 and 0 < cells["eng_Latn"].accuracy < 1


def _venv_python(name: str) -> Path:
    py = VENVS / name / "bin" / "python"
    if not py.is_file():
        msg = f"{py} not found: create it as docs/exports.md says to run the real harness"
        if os.environ.get("CI"):
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return py


_LMMS_PROBE = r"""
import hashlib, json, sys
from lmms_eval.tasks import TaskManager, get_task_dict
include, names, sample = sys.argv[1], sys.argv[2].split(","), json.loads(sys.argv[3])
tm = TaskManager(include_path=include)
pix = lambda im: hashlib.sha256(im.convert("RGB").tobytes()).hexdigest()
out = {"registered": sorted(t for t in tm.all_tasks if t.startswith("mvl_sib")), "docs": {}}
def leaves(d):
    for value in d.values():
        if isinstance(value, dict):
            yield from leaves(value)
        else:
            yield value
for task in leaves(get_task_dict(names, tm)):
    docs = task.test_docs()
    out["docs"][task.config.task] = {"n": len(docs), "docs": {}}
    for idx in sample:
        doc = docs[idx]
        out["docs"][task.config.task]["docs"][str(idx)] = {
            "instance_id": doc["instance_id"], "text": task.doc_to_text(doc),
            "messages": [[["T", p["text"]] if p["type"] == "text" else ["I", pix(p["url"])] for p in m["content"]]
                         for m in task.config.doc_to_messages(doc)],
            "visuals": [pix(im) for im in task.doc_to_visual(doc)], "target": task.doc_to_target(doc)}
print(json.dumps(out, ensure_ascii=False))
"""


@pytest.mark.harness
def test_lmms_eval_task_manager_discovers_and_builds_the_evaluator_prompts(lmms_dir, release, pixels, tmp_path):
    py = _venv_python("lmms")
    names = ["mvl_sib_s2i_k1_arb_Arab", "mvl_sib_i2s_k3_zho_Hans", "mvl_sib_s2t_k5_hin_Deva", "mvl_sib_t2s_k1_eng_Latn"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_DATASETS_CACHE=str(tmp_path / "hf"), HF_HUB_OFFLINE="1")
    res = subprocess.run(
        [str(py), "-c", _LMMS_PROBE, str(lmms_dir), ",".join(names), json.dumps(list(SAMPLE))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout)
    for task, k in _pairs():
        assert f"mvl_sib_{task}_k{k}" in got["registered"]
        assert all(f"mvl_sib_{task}_k{k}_{lang}" in got["registered"] for lang in LANGS)
    assert "mvl_sib" in got["registered"]
    for name in names:
        _, _, task, kk, *lang = name.split("_")
        lang = "_".join(lang)
        assert got["docs"][name]["n"] == 3012
        for idx in SAMPLE:
            exp = _expected(release, pixels, task, int(kk[1:]), lang, idx)
            doc = got["docs"][name]["docs"][str(idx)]
            assert doc == {
                "instance_id": exp["instance_id"],
                "text": exp["text"],
                "messages": [exp["messages"]],
                "visuals": exp["visuals"],
                "target": exp["target"],
            }, (name, idx)


# ---------------------------------------------------------------- VLMEvalKit


def test_vlmevalkit_tsv_one_row_per_instance_with_the_evaluator_prompt(release, images, tmp_path):
    import pandas as pd

    from mvlsib.release.exports import export

    out = tmp_path / "vlm"
    info = export("vlmevalkit", release, out, languages=["arb_Arab", "zho_Hans"], tasks="i2s,s2i,s2t", ks=[1, 5])
    assert sorted(info["files"]) == sorted(
        f"MVLSIB_{t}_k{k}_{lang}.tsv"
        for t in ("i2s", "s2i", "s2t")
        for k in (1, 5)
        for lang in ("arb_Arab", "zho_Hans")
    )
    stored = {
        r["image_id"]: r["image"]["bytes"]
        for r in pq.read_table(release / "data" / "images" / "test.parquet", columns=["image_id", "image"]).to_pylist()
    }
    for name in info["files"]:
        _, task, kk, *lang = name[:-4].split("_")
        lang, k = "_".join(lang), int(kk[1:])
        # Read as VLMEvalKit reads it (pandas, tab-separated), and with the csv module.
        frame = pd.read_csv(out / name, sep="\t")
        with open(out / name, encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        assert len(rows) == len(frame) == 3012 == info["files"][name]
        assert list(frame.columns) == [
            "index",
            "question",
            "A",
            "B",
            "C",
            "D",
            "answer",
            "category",
            "l2-category",
            *(["image_path"] if task != "s2t" else []),
            "instance_id",
        ]
        examples = mvl_sib.build_examples(mvl_sib.load_rows(lang, release), images, task, k)
        letters = [LETTERS[ex["label"]] for ex in examples]
        assert list(frame["answer"]) == [r["answer"] for r in rows] == letters
        assert sorted(set(letters)) == list(LETTERS)
        for idx in SAMPLE:
            row, ex = rows[idx], examples[idx]
            prompt = prompt_for_example(ex)
            assert frame["question"][idx] == row["question"] == prompt.text()
            assert [row[letter] for letter in LETTERS] == [str(o) for o in ex["options"]]
            assert row["instance_id"] == ex["instance_id"] and row["l2-category"] == lang
            paths = json.loads(row["image_path"]) if task != "s2t" else []
            assert [Path(p).read_bytes() for p in paths] == [stored[i] for i in prompt.image_ids]
            assert row["question"].count("<image>") == len(paths)
    assert len(list((out / "images").iterdir())) == 70
    assert info["base64_image_bytes_if_inlined"] > 10 * info["tsv_bytes"]


# ---------------------------------------------------------------- MTEB


def test_mteb_layout_holds_the_instances_candidates_and_gold(release, images, tmp_path):
    import datasets

    from mvlsib.release.exports import export

    out = tmp_path / "mteb"
    export("mteb", release, out, languages="eng_Latn,arb_Arab")
    cache = str(tmp_path / "hf")

    def load(task, config):
        return datasets.load_dataset(str(out / task), name=config, split="test", cache_dir=cache)

    for lang in ("eng_Latn", "arb_Arab"):
        rows = mvl_sib.load_rows(lang, release)
        for task in ("s2i", "i2s"):
            queries, corpus = load(task, f"{lang}-queries"), load(task, f"{lang}-corpus")
            qrels, top = load(task, f"{lang}-qrels"), load(task, f"{lang}-top_ranked")
            assert len(queries) == len(qrels) == len(top) == 3012
            assert len(corpus) == (70 if task == "s2i" else 1004)
            examples = mvl_sib.build_examples(rows, images, task, 1)
            corpus_ids = set(corpus["id"])
            for idx in SAMPLE:
                ex, q = examples[idx], queries[idx]
                assert q["id"] == qrels[idx]["query-id"] == top[idx]["query-id"] == ex["instance_id"]
                if task == "s2i":
                    assert q["text"] == ex["references"][0]
                    assert top[idx]["corpus-ids"] == ex["options"]
                    assert qrels[idx]["corpus-id"] == ex["options"][ex["label"]]
                else:
                    assert _pixels(q["image"]) == _pixels(images[ex["references"][0]])
                    texts = dict(zip(corpus["id"], corpus["text"]))
                    assert [texts[i] for i in top[idx]["corpus-ids"]] == ex["options"]
                    assert texts[qrels[idx]["corpus-id"]] == ex["options"][ex["label"]]
                assert set(top[idx]["corpus-ids"]) <= corpus_ids
    card = (out / "s2i" / "README.md").read_text(encoding="utf-8")
    assert "MVLSIBSent2Img" in card and "new task" in card


def _doc_block(marker: str) -> str:
    """The python block after ``<!-- marker -->`` in docs/exports.md: documented code is run as written."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "exports.md").read_text(encoding="utf-8")
    after = text.split(f"<!-- {marker} -->", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


_MTEB_PROBE = r"""
import json, sys
from mteb.abstasks.retrieval_dataset_loaders import RetrievalDatasetLoader
out = {}
for lang in ("zho_Hans", "arb_Arab"):
    split = task.dataset[lang]["test"]
    first = split["queries"][0]["id"]
    out[f"s2i/{lang}"] = {"queries": len(split["queries"]), "corpus": len(split["corpus"]),
                          "qrels": len(split["relevant_docs"]), "top_ranked": len(split["top_ranked"]),
                          "corpus_columns": sorted(split["corpus"].column_names),
                          "query_columns": sorted(split["queries"].column_names),
                          "first": [first, split["relevant_docs"][first], list(split["top_ranked"][first])]}
    data = RetrievalDatasetLoader(hf_repo=EXPORT[:-3] + "i2s", revision=None, config=lang).load()
    out[f"i2s/{lang}"] = {"queries": len(data["queries"]), "corpus": len(data["corpus"]),
                          "qrels": len(data["relevant_docs"]), "top_ranked": len(data["top_ranked"]),
                          "corpus_columns": sorted(data["corpus"].column_names),
                          "query_columns": sorted(data["queries"].column_names)}
print("MVLSIB-RESULT" + json.dumps(out))
"""


@pytest.mark.harness
def test_mteb_loads_the_export(release, images, tmp_path):
    """The documented MTEB task class (docs/exports.md), run in MTEB's venv, and MTEB's loader for i2s."""
    py = _venv_python("mteb")
    from mvlsib.release.exports import export

    out = tmp_path / "exports" / "mteb"
    export("mteb", release, out, languages="zho_Hans,arb_Arab")
    block = _doc_block("mvl-sib-mteb-task")
    assert 'EXPORT = "exports/mteb/s2i"' in block
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_DATASETS_CACHE=str(tmp_path / "hf"), HF_HUB_OFFLINE="1")
    res = subprocess.run(
        [str(py), "-c", block + _MTEB_PROBE], capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr[-3000:]
    got = json.loads(res.stdout.split("MVLSIB-RESULT", 1)[1])
    for lang in ("zho_Hans", "arb_Arab"):
        ex = mvl_sib.build_examples(mvl_sib.load_rows(lang, release)[:1], images, "s2i", 1)[0]
        s2i = got[f"s2i/{lang}"]
        assert (s2i["queries"], s2i["corpus"], s2i["qrels"], s2i["top_ranked"]) == (3012, 70, 3012, 3012)
        assert s2i["corpus_columns"] == ["id", "image"] and s2i["query_columns"] == ["id", "text"]
        assert s2i["first"] == [ex["instance_id"], {ex["options"][ex["label"]]: 1}, ex["options"]]
        i2s = got[f"i2s/{lang}"]
        assert (i2s["queries"], i2s["corpus"], i2s["qrels"], i2s["top_ranked"]) == (3012, 1004, 3012, 3012)
        assert i2s["corpus_columns"] == ["id", "text"] and i2s["query_columns"] == ["id", "image"]


def test_documented_vlmevalkit_prompt_rebuilds_the_evaluator_prompt(release, images, tmp_path):
    """The docs' build_prompt replacement, on rows read as VLMEvalKit reads them (pandas; a single
    image path becomes a plain string, a list stays a list), gives the evaluator's parts in order."""
    import pandas as pd

    from mvlsib.release.exports import export

    namespace: dict = {}
    exec(compile(_doc_block("mvl-sib-vlmevalkit-prompt"), "docs/exports.md", "exec"), namespace)
    message_of = namespace["mvl_sib_message"]
    out = tmp_path / "vlm"
    export("vlmevalkit", release, out, languages="arb_Arab", tasks="i2s,s2i,t2s", ks=[1, 3])
    for task, k in (("i2s", 1), ("i2s", 3), ("s2i", 1), ("t2s", 1)):
        frame = pd.read_csv(out / f"MVLSIB_{task}_k{k}_arb_Arab.tsv", sep="\t")
        examples = mvl_sib.build_examples(_rows(release, "arb_Arab"), images, task, k)
        for idx in SAMPLE:
            line = frame.iloc[idx].to_dict()
            if "image_path" in line:  # what VLMEvalKit's ImageBaseDataset does to the column
                paths = json.loads(line["image_path"])
                line["image_path"] = paths[0] if len(paths) == 1 else paths
            prompt = prompt_for_example(examples[idx])
            got = [[p["type"], p["value"] if p["type"] == "text" else Path(p["value"]).stem] for p in message_of(line)]
            assert got == [[p["type"], p.get("text", p.get("image_id"))] for p in prompt.parts], (task, k, idx)


# ---------------------------------------------------------------- command


def test_export_command_and_its_errors(release, tmp_path):
    from click.testing import CliRunner

    from mvlsib.cli.build import build_cli

    runner = CliRunner()
    out = tmp_path / "lmms"
    res = runner.invoke(
        build_cli,
        [
            "export",
            "lmms-eval",
            "--release",
            str(release),
            "--out",
            str(out),
            "--languages",
            "arb_Arab",
            "--tasks",
            "s2i,t2s",
            "--k",
            "1,3",
        ],
    )
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.glob("mvl_sib_*.yaml")) == [
        "mvl_sib_s2i_k1_arb_Arab.yaml",
        "mvl_sib_s2i_k3_arb_Arab.yaml",
        "mvl_sib_t2s_k1_arb_Arab.yaml",
    ]
    # A rerun replaces its own export; a foreign non-empty folder is refused.
    assert (
        runner.invoke(
            build_cli,
            [
                "export",
                "lmms-eval",
                "--release",
                str(release),
                "--out",
                str(out),
                "--languages",
                "eng_Latn",
                "--tasks",
                "t2s",
            ],
        ).exit_code
        == 0
    )
    assert [p.name for p in out.glob("mvl_sib_*.yaml")] == ["mvl_sib_t2s_k1_eng_Latn.yaml"]
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    for args, message in [
        (["lmms-eval", "--release", str(release), "--out", str(foreign)], "refusing to replace"),
        (
            ["mteb", "--release", str(release), "--out", str(tmp_path / "m"), "--tasks", "t2s", "--k", "1"],
            "cannot be exported",
        ),
        (
            ["vlmevalkit", "--release", str(release), "--out", str(tmp_path / "v"), "--languages", "xyz_Latn"],
            "xyz_Latn",
        ),
        (["mteb", "--release", str(tmp_path / "nope"), "--out", str(tmp_path / "m")], "neither"),
        (["lmms-eval", "--release", str(release), "--out", str(tmp_path / "l"), "--k", "x"], "integers"),
    ]:
        res = runner.invoke(build_cli, ["export", *args])
        assert res.exit_code == 2 and message in res.output, (args, res.output)
        assert "Traceback" not in res.output
    assert (foreign / "keep.txt").read_text() == "mine" and not (tmp_path / "m").exists()


def test_a_hub_release_is_checked_against_its_card_before_anything_is_written(release, tmp_path):
    """A Hub repo id: its card (on the Hub stand-in) gives the languages; a misspelt repo or language,
    and an unreachable or offline Hub, are one line each and leave no export behind. In processes of
    their own: huggingface_hub reads HF_ENDPOINT and HF_HUB_OFFLINE when it is imported."""
    from support.fakes.hub import serve_folder

    def export_cli(env: dict, fmt: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-c", "from mvlsib.cli import build_cli; build_cli()", "export", fmt, *args],
            env=subprocess_env(HF_HOME=str(tmp_path / "home"), HF_HUB_DISABLE_XET="1", **env),
            capture_output=True,
            text=True,
            timeout=240,
        )

    with serve_folder("org/mvl-sib", release) as hub:
        online = {"HF_ENDPOINT": hub.endpoint, "HF_HUB_OFFLINE": "0"}
        ok = export_cli(online, "lmms-eval", "--release", "org/mvl-sib", "--out", str(tmp_path / "l"))
        assert ok.returncode == 0, ok.stderr
        info = json.loads((tmp_path / "l" / "export.json").read_text("utf-8"))
        assert info["languages"] == sorted(LANGS)  # every language config of the card, the images config left out
        for args, message in [
            (["--release", "org/nothing-here"], "org/nothing-here"),
            (["--release", "org/mvl-sib", "--languages", "xyz_Latn"], "xyz_Latn"),
        ]:
            res = export_cli(online, "lmms-eval", *args, "--out", str(tmp_path / "x"))
            assert res.returncode == 2 and message in res.stderr and "Traceback" not in res.stderr, res.stderr
            assert not (tmp_path / "x").exists()
    for env, message in [
        (
            {"HF_ENDPOINT": "http://user:hunter2hunter2@127.0.0.1:9", "HF_HUB_OFFLINE": "0"},
            "cannot reach the Hugging Face Hub at http://127.0.0.1:9",
        ),
        ({"HF_HUB_OFFLINE": "1"}, "HF_HUB_OFFLINE is set"),
    ]:
        res = export_cli(env, "mteb", "--release", "org/other", "--out", str(tmp_path / "y"))
        assert res.returncode == 2 and message in res.stderr.splitlines()[-1], res.stderr
        assert "hunter2" not in res.stdout + res.stderr and "Traceback" not in res.stderr
        assert not (tmp_path / "y").exists()


@pytest.mark.harness
def test_lmms_eval_runs_end_to_end_and_scores_like_the_evaluator(lmms_dir, release, images, tmp_path):
    """lmms-eval itself, with its OpenAI-compatible chat model against the suite's fake server:
    the requests it sends are the evaluator's prompts (text and images in place), and the
    scores it reports per language and for the group are the evaluator's on the same answers."""
    import numpy as np
    from support.fakes.openai_compat import images_of, lettered_server, thumb

    py = _venv_python("lmms")
    limit = 4
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_DATASETS_CACHE=str(tmp_path / "hf"), HF_HUB_OFFLINE="1", OPENAI_API_KEY="unused")
    with lettered_server(fail_every=0) as server:
        res = subprocess.run(
            [
                str(py),
                "-m",
                "lmms_eval",
                "--model",
                "openai",
                "--model_args",
                f"model_version=fake,base_url={server.base_url}",
                "--include_path",
                str(lmms_dir),
                "--tasks",
                "mvl_sib_s2i_k1,mvl_sib_i2s_k3_zho_Hans",
                "--limit",
                str(limit),
                "--log_samples",
                "--output_path",
                str(tmp_path / "out"),
                "--batch_size",
                "1",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
        requests = list(server.requests)
    assert res.returncode == 0, res.stderr[-3000:]
    (results_file,) = (tmp_path / "out").rglob("*_results.json")
    results = json.loads(results_file.read_text())["results"]
    runs = [("s2i", 1, lang) for lang in LANGS] + [("i2s", 3, "zho_Hans")]
    assert len(requests) == limit * len(runs)
    ids = sorted(images)
    thumbs = np.stack([thumb(images[i]) for i in ids])
    expected_prompts = []
    records = []
    for task, k, lang in runs:
        (samples_file,) = (tmp_path / "out").rglob(f"*_samples_mvl_sib_{task}_k{k}_{lang}.jsonl")
        samples = [json.loads(line) for line in samples_file.read_text(encoding="utf-8").splitlines()]
        examples = mvl_sib.build_examples(_rows(release, lang)[:limit], images, task, k)
        assert [s["doc_id"] for s in samples] == list(range(limit))
        for sample, ex in zip(samples, examples):
            assert sample["target"] == LETTERS[ex["label"]]
            records.append(
                {
                    "language": lang,
                    "task": task,
                    "k": k,
                    "label": ex["label"],
                    "response": sample["filtered_resps"]
                    if isinstance(sample["filtered_resps"], str)
                    else sample["filtered_resps"][0],
                }
            )
            prompt = prompt_for_example(ex)
            expected_prompts.append([[p["type"], p.get("text", p.get("image_id"))] for p in prompt.parts])
    # The requests are the evaluator's prompts, each image where the evaluator puts it (the three
    # instances of one sentence share their s2i text, so whole prompts are compared as a multiset).
    sent = []
    for payload in requests:
        parts = [p for m in payload["messages"] for p in m["content"]]
        seen = iter([ids[int(np.argmin(np.abs(thumbs - thumb(img)).sum(axis=1)))] for img in images_of(payload)])
        sent.append([["text", p["text"]] if p["type"] == "text" else ["image", next(seen)] for p in parts])
    assert sorted(map(json.dumps, sent)) == sorted(map(json.dumps, expected_prompts))
    cells = {(c.task, c.language): c for c in per_language(records)}
    for task, k, lang in runs:
        for metric in METRICS:
            assert results[f"mvl_sib_{task}_k{k}_{lang}"][f"{metric},none"] == pytest.approx(
                getattr(cells[(task, lang)], metric)
            ), (task, lang, metric)
    (s2i_macro,) = [row for row in macro(per_language(records)) if row["task"] == "s2i"]
    for metric in ("accuracy", "format_error_rate"):
        assert results["mvl_sib_s2i_k1"][f"{metric},none"] == pytest.approx(s2i_macro[metric])
    assert 0 < s2i_macro["format_error_rate"] < 1


def test_a_hub_release_exports_the_same_files_as_the_folder(release, tmp_path):
    """--release ORG/NAME reads the release through datasets and the Hub API (the suite's Hub stand-in)."""
    from support.fakes.hub import serve_folder

    def files(root: Path) -> dict[str, bytes]:
        return {
            p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*"))
            # export.json names the source, and the output ledger records export.json's hash
            if p.is_file() and p.name not in ("export.json", LEDGER)
        }

    args = {"vlmevalkit": ["--tasks", "s2i,t2s", "--k", "1"], "mteb": [], "lmms-eval": ["--tasks", "i2s", "--k", "3"]}
    local = {}
    for fmt, extra in args.items():
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "mvlsib",
                "export",
                fmt,
                "--release",
                str(release),
                "--out",
                str(tmp_path / fmt),
                "--languages",
                "arb_Arab",
                *extra,
            ],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert res.returncode == 0, res.stderr[-2000:]
        local[fmt] = files(tmp_path / fmt)
    with serve_folder("org/mvl-sib", release) as hub:
        env = subprocess_env(
            HF_ENDPOINT=hub.endpoint,
            HF_HOME=str(tmp_path / "home"),
            HF_HUB_DISABLE_XET="1",
            HF_DATASETS_CACHE=str(tmp_path / "hf"),
        )
        env.pop("HF_TOKEN", None)
        for fmt, extra in args.items():
            res = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "mvlsib",
                    "export",
                    fmt,
                    "--release",
                    "org/mvl-sib",
                    "--revision",
                    hub.commit,
                    "--out",
                    str(tmp_path / fmt),
                    "--languages",
                    "arb_Arab",
                    *extra,
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert res.returncode == 0, res.stderr[-2000:]
            remote = files(tmp_path / fmt)
            if fmt == "lmms-eval":
                template = remote.pop("_mvl_sib_i2s_k3_template_yaml").decode()
                assert 'dataset_path: "org/mvl-sib"' in template
                assert f'dataset_kwargs: {{"revision": "{hub.commit}"}}' in template
                local[fmt].pop("_mvl_sib_i2s_k3_template_yaml")
            if fmt == "mteb":
                for task in ("s2i", "i2s"):
                    card = remote.pop(f"{task}/README.md").decode()
                    assert "org/mvl-sib" in card and local[fmt].pop(f"{task}/README.md")
            assert remote == local[fmt], fmt
        downloaded = {p for m, p in hub.state.requests if m == "GET" and "/resolve/" in p}
    assert any(p.endswith("/data/arb_Arab/test.parquet") for p in downloaded)
    assert not any("/data/eng_Latn/" in p for p in downloaded)


@pytest.mark.parametrize("fmt", ["vlmevalkit", "mteb", "inspect", "lmms-eval"])
@pytest.mark.parametrize("hostile", ["../../victim/holiday", "/tmp/abs", "sports_1\n", "a/b_1"])
def test_an_image_id_that_is_not_one_never_becomes_a_path(release, fmt, hostile, tmp_path):
    """A tampered release (its image table's id rewritten): every format either refuses it, one line,
    or writes nothing outside its own folder; the user's file next door is untouched."""
    import pyarrow as pa
    from click.testing import CliRunner

    from mvlsib.cli import build_cli

    evil = tmp_path / "rel" / "evil"
    shutil.copytree(release, evil)
    path = evil / "data" / "images" / "test.parquet"
    table = pq.read_table(path)
    ids = table.column("image_id").to_pylist()
    table = table.set_column(table.schema.get_field_index("image_id"), "image_id", pa.array([hostile, *ids[1:]]))
    pq.write_table(table, path)
    # made so by its publisher (its manifest lists the file as it is): the id rule is what must refuse it
    manifest = json.loads((evil / "manifest.json").read_text("utf-8"))
    data = path.read_bytes()
    manifest["files"]["data/images/test.parquet"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (evil / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True), "utf-8")
    victim = tmp_path / "victim" / "holiday.png"
    victim.parent.mkdir()
    victim.write_bytes(b"mine")
    res = CliRunner().invoke(
        build_cli,
        ["export", fmt, "--release", str(evil), "--out", str(tmp_path / "rel" / "out"), "--languages", "eng_Latn"],
    )
    assert res.exit_code in (0, 2) and "Traceback" not in res.output, res.output
    if res.exit_code == 2:
        assert "not an MVL-SIB image id" in res.output and not (tmp_path / "rel" / "out").exists()
    assert victim.read_bytes() == b"mine" and sorted(p.name for p in victim.parent.iterdir()) == ["holiday.png"]
    assert not Path("/tmp/abs.png").exists() and not Path("/tmp/abs.jpg").exists()
