"""verify-images end to end with real tiny models over the bundled pool.

A random-weight LLaVA (the evaluator's builder) and a tiny CLIP built here (random, and
fitted to the pool's topics) run through the real CLI. The fitted CLIP makes the check
meaningful: it passes every image of the pool, and in a copy of the pool whose manifest
swaps two images' topics exactly those two fail.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mvlsib.cli import build_cli
from mvlsib.release_format.mvl_sib import TOPICS, topic_from_slug

pytestmark = pytest.mark.eval

N_IMAGES = 70


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models run fastest on one thread (thread hand-offs dominate; see docs/verify_images.md)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny_llava(tmp_path_factory) -> Path:
    from tiny_models.clip import _tokenizer_texts
    from tiny_models.llava import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("llava"), _tokenizer_texts(), letter_scale=3.0)


@pytest.fixture(scope="module")
def random_clip(tmp_path_factory) -> Path:
    from tiny_models.clip import build_tiny_clip

    return build_tiny_clip(tmp_path_factory.mktemp("clip-random"), seed=1)


@pytest.fixture(scope="module")
def fitted_clip(tmp_path_factory, pool_dir) -> Path:
    from tiny_models.clip import build_tiny_clip, fit_tiny_clip

    out = build_tiny_clip(tmp_path_factory.mktemp("clip-fitted"), seed=0)
    stats = fit_tiny_clip(out, pool_dir, steps=150, seed=0)
    assert stats["train_accuracy"] == 1.0, stats
    return out


def verify(*args: str):
    return CliRunner().invoke(build_cli, ["verify-images", "--device", "cpu", "--no-progress", *map(str, args)])


@pytest.fixture(scope="module")
def both_run(tmp_path_factory, pool_dir, tiny_llava, random_clip):
    """LLaVA + random CLIP over the bundled pool, without --allow-fail."""
    out = tmp_path_factory.mktemp("both")
    result = verify(
        "--pool", pool_dir, "--model", tiny_llava, "--model", random_clip, "--out", out, "--batch-size", "16"
    )
    return result, out, json.loads((out / "report.json").read_text("utf-8"))


def test_report_shape_70_images_x_2_models(both_run, pool_dir, tiny_llava, random_clip):
    from mvlsib.workdir.pool_manifest import read_manifest

    _, out, report = both_run
    names = [str(tiny_llava), str(random_clip)]
    assert report["models"] == names
    assert {m: report["model_info"][m]["kind"] for m in names} == {names[0]: "generative", names[1]: "dual"}
    rows = read_manifest(pool_dir)
    assert len(report["images"]) == N_IMAGES
    assert [(i["image_id"], i["topic"]) for i in report["images"]] == [(r.image_id, r.topic) for r in rows]
    for img in report["images"]:
        assert set(img["results"]) == set(names)
        for res in img["results"].values():
            assert isinstance(res["passed"], bool) and isinstance(res["predictions"], list)
        assert img["passed"] == all(r["passed"] for r in img["results"].values())
    failures = {(i, m) for i, m in report["failures"]}
    assert failures == {(i["image_id"], m) for i in report["images"] for m in names if not i["results"][m]["passed"]}
    assert (out / "report.md").is_file()


def test_generative_predictions_follow_the_rotations(both_run, tiny_llava):
    from mvlsib.evaluation.run.parsing import parse_letter

    _, _, report = both_run
    model = str(tiny_llava)
    letters = "ABCDEFG"
    n_letters = 0
    for img in report["images"]:
        res = img["results"][model]
        preds = res["predictions"]
        assert [p["shift"] for p in preds] == list(range(7))
        # every topic sits exactly once at every letter over the 7 orders
        for pos in range(7):
            assert sorted(p["options"][pos] for p in preds) == sorted(TOPICS)
        for p in preds:
            assert p["options"] == [TOPICS[(i + p["shift"]) % 7] for i in range(7)]
            assert p["letter"] == parse_letter(p["response"], "relaxed", letters=tuple(letters))
            expected = p["options"][letters.index(p["letter"])] if p["letter"] else None
            assert p["predicted_topic"] == expected
            assert p["correct"] == (expected == img["topic"])
            n_letters += p["letter"] is not None
        assert res["correct"] == sum(p["correct"] for p in preds) and res["n"] == 7
        assert res["required"] == 4 and res["passed"] == (res["correct"] >= 4)
    summary = report["summary"][model]
    assert summary["prompts"] == N_IMAGES * 7
    assert summary["prompts"] - summary["format_errors"] == n_letters
    assert sum(summary["answer_letters"].values()) == N_IMAGES * 7


def test_dual_predictions_are_argmax_and_margin(both_run, random_clip):
    _, _, report = both_run
    for img in report["images"]:
        res = img["results"][str(random_clip)]
        (pred,) = res["predictions"]
        sims = pred["similarities"]
        assert list(sims) == list(TOPICS)
        best = max(TOPICS, key=lambda t: (sims[t], -TOPICS.index(t)))
        assert pred["predicted_topic"] == best
        others = max(v for t, v in sims.items() if t != img["topic"])
        assert pred["margin"] == pytest.approx(sims[img["topic"]] - others, abs=2e-4)
        assert res["passed"] == pred["correct"] == (best == img["topic"]) == (pred["margin"] > 0)


def test_random_models_fail_images_and_exit_non_zero(both_run, tiny_llava, random_clip):
    result, _, report = both_run
    assert result.exit_code == 1, result.output
    assert "fail at least one model" in result.output
    # random weights cannot know the topics: most images fail
    assert report["summary"][str(tiny_llava)]["failed"] > N_IMAGES // 2
    assert report["summary"][str(random_clip)]["failed"] > N_IMAGES // 2
    assert report["passed"] is False


def _table_ids(md: str) -> list[str]:
    """Image ids of the per-image table, in order."""
    rows = md.split("## Images", 1)[1].splitlines()
    return [line.split("|")[1].strip() for line in rows if line.startswith("| ") and not line.startswith("| image |")]


@pytest.mark.usefixtures("random_clip")
def test_markdown_lists_failures_first(both_run):
    _, out, report = both_run
    md = (out / "report.md").read_text("utf-8")
    ids = _table_ids(md)
    assert sorted(ids) == sorted(i["image_id"] for i in report["images"])
    passed = {i["image_id"]: i["passed"] for i in report["images"]}
    flags = [passed[i] for i in ids]
    assert flags == sorted(flags), "failing images must come before passing ones"
    assert md.count("**FAIL**") == len(report["failures"])


def test_allow_fail_exits_zero(tmp_path, pool_dir, tiny_llava):
    result = verify(
        "--pool",
        pool_dir,
        "--model",
        tiny_llava,
        "--out",
        tmp_path,
        "--rotations",
        "1",
        "--allow-fail",
        "--batch-size",
        "16",
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["settings"]["rotations"] == [0] and report["failures"]
    assert all(len(i["results"][str(tiny_llava)]["predictions"]) == 1 for i in report["images"])


def test_fitted_clip_passes_the_pool(tmp_path, pool_dir, fitted_clip):
    result = verify("--pool", pool_dir, "--model", fitted_clip, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text("utf-8"))
    assert report["passed"] and not report["failures"]
    assert all(i["results"][str(fitted_clip)]["margin"] > 0 for i in report["images"])
    # same inputs, same bytes
    again = tmp_path / "again"
    assert verify("--pool", pool_dir, "--model", fitted_clip, "--out", again).exit_code == 0
    assert (again / "report.json").read_bytes() == (tmp_path / "report.json").read_bytes()


def _copy_pool_with_swap(pool_dir: Path, dest: Path, a: str, b: str) -> Path:
    shutil.copytree(pool_dir, dest)
    manifest = dest / "manifest.csv"
    with open(manifest, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    topic = {r["image_id"]: r["topic"] for r in rows}
    for r in rows:
        if r["image_id"] in (a, b):
            r["topic"] = topic[b if r["image_id"] == a else a]
    with open(manifest, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return dest


@pytest.mark.parametrize("a, b", [("health_3", "sports_7"), ("entertainment_0", "travel_9")])
def test_swapped_topics_flag_exactly_those_two(tmp_path, pool_dir, fitted_clip, a, b):
    pool = _copy_pool_with_swap(pool_dir, tmp_path / "pool", a, b)
    out = tmp_path / "out"
    result = verify("--pool", pool, "--model", fitted_clip, "--out", out)
    assert result.exit_code == 1, result.output
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert sorted(i for i, _ in report["failures"]) == sorted([a, b])
    true_topic = {i: topic_from_slug(i.rsplit("_", 1)[0]) for i in (a, b)}
    for img in report["images"]:
        res = img["results"][str(fitted_clip)]
        if img["image_id"] in (a, b):
            # flagged, and the model says what the picture really shows
            assert res["passed"] is False and res["margin"] < 0
            assert res["predictions"][0]["predicted_topic"] == true_topic[img["image_id"]]
        else:
            assert res["passed"] is True
    assert set(_table_ids((out / "report.md").read_text("utf-8"))[:2]) == {a, b}


def test_tiny_models_command_writes_a_loadable_clip(tmp_path, pool_dir, capsys):
    from mvlsib.verify_images.zero_shot import DualEncoder, model_kind
    from tools.tiny_verify_models import main

    assert main(["clip", "--out", str(tmp_path / "clip"), "--fit-pool", str(pool_dir), "--steps", "3"]) == 0
    assert "fitted to" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "clip").iterdir()) == [
        "config.json",
        "model.safetensors",
        "preprocessor_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
    ]
    assert model_kind(str(tmp_path / "clip")) == "dual"
    enc = DualEncoder(str(tmp_path / "clip"), device="cpu")
    ids = enc.tokenizer(["a picture about health."])["input_ids"][0]
    # CLIP pools at the end-of-text token: the tokenizer must put one there
    assert ids[0] == enc.tokenizer.bos_token_id and ids[-1] == enc.tokenizer.eos_token_id
    assert enc.class_embeddings(TOPICS).shape == (7, 32)


def test_gallery_reads_the_report(both_run, tiny_llava, random_clip):
    """The image-pool gallery (`images gallery --report`) is the report's other reader."""
    from mvlsib.image_pool.gallery import read_verification

    _, out, report = both_run
    seen = read_verification(out / "report.json")
    assert seen["models"] == [str(tiny_llava), str(random_clip)]
    assert len(seen["by_id"]) == N_IMAGES
    for img in report["images"]:
        assert {m: r["passed"] for m, r in seen["by_id"][img["image_id"]].items()} == {
            m: r["passed"] for m, r in img["results"].items()
        }
    # What a reviewer reads on a gallery card: topic counts over the 7 orders, and the CLIP margin.
    from mvlsib.image_pool.gallery import _prediction_summary

    first = report["images"][0]["results"]
    llava, clip = first[str(tiny_llava)], first[str(random_clip)]
    text = _prediction_summary(llava["predictions"])
    assert "{" not in text and sum(int(part.split(" ")[-1].split("/")[0]) for part in text.split(", ")) == 7
    clip_text = _prediction_summary(clip["predictions"], clip.get("margin"))
    assert clip_text.startswith(clip["predictions"][0]["predicted_topic"]) and "margin" in clip_text
