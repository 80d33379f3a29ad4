"""Every popular VLM family gets correct inputs: a tiny random-weight model of each family,
built here from configs with the family's real chat template (``tiny_models.families`` in tests/).

Per family: a batch equals its prompts processed one by one (one image list per prompt);
image tokens per row are the prompt's images' tokens, in prompt order; s2i images follow
their letters; one BOS; answers at batch size 8 equal those at batch size 1; the full
``mvlsib-eval run`` (all tasks, k 1,3,5, default batch size) and ``verify-images`` exit 0.

Processors with a video processor load the real one: the eval session has torchvision.
"""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner
from support import EVAL_LANGUAGES, POOL_DIR, one_line_cli_error
from support.families import (  # noqa: F401  (fixtures)
    CHAT,
    GENERATIVE,
    IMAGE_MARKER,
    NO_TEMPLATE,
    SENTENCES,
    check_eval_run_and_verify_images,
    check_inputs,
    model_dir,
    one_thread,
    photos,
    sample_requests,
    small_pool,
    texts,
)
from tiny_models.families import family, family_names, needs

from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.run.prompts import build_prompt

pytestmark = pytest.mark.eval


@pytest.mark.parametrize("name", GENERATIVE)
def test_inputs_are_right(name, model_dir, photos):
    check_inputs(name, model_dir, photos)


@pytest.mark.parametrize("name", GENERATIVE)
def test_eval_run_and_verify_images_exit_0(name, model_dir, release_dir, pool_dir, tmp_path):
    check_eval_run_and_verify_images(name, model_dir, release_dir, pool_dir, tmp_path)


@pytest.mark.parametrize("name", NO_TEMPLATE)
def test_model_without_chat_template_exits_2_with_one_line(name, model_dir, release_dir, tmp_path):
    from mvlsib.cli import build_cli, eval_cli

    model = model_dir(name)
    for cli, args in (
        (
            eval_cli,
            [
                "run",
                "--data",
                str(release_dir),
                "--out",
                str(tmp_path / "run"),
                "--tasks",
                "s2i",
                "--languages",
                EVAL_LANGUAGES[0],
                "--limit",
                "1",
                "--no-progress",
            ],
        ),
        (build_cli, ["verify-images", "--pool", str(tmp_path / "none"), "--out", str(tmp_path / "v")]),
    ):
        if cli is build_cli:
            small_pool(POOL_DIR, tmp_path / "none")
        line = one_line_cli_error(cli, *args, "--model", model, "--device", "cpu")
        assert "no chat template" in line, line


def test_every_chat_family_has_its_image_marker_listed():
    assert set(CHAT) == set(IMAGE_MARKER)


def test_family_matrix_covers_the_issue():
    """The families the evaluator supports (Aya Vision aside: see docs/evaluation/backends.md)."""
    wanted = {
        "qwen2_vl",
        "qwen2_5_vl",
        "qwen3_vl",
        "qwen3_vl_thinking",
        "gemma3",
        "idefics3",
        "smolvlm",
        "llava_1_5",
        "llava_next",
        "llava_onevision",
        "mllama",
        "internvl",
        "paligemma",
        "siglip",
        "siglip2",
    }
    assert wanted <= set(family_names())


DUAL = [n for n in family_names() if getattr(family(n), "KIND", "") == "dual_encoder" and not needs(n)]


@pytest.mark.parametrize("name", DUAL)
def test_dual_encoder_texts_as_the_processor_makes_them(name, model_dir, pool_dir, tmp_path):
    """Dual encoders tokenize as the model's processor does (SigLIP 2: 64 tokens, not the
    tokenizer's longer model_max_length) and verify-images runs on them."""
    from transformers import AutoProcessor

    from mvlsib.cli import build_cli
    from mvlsib.verify_images.zero_shot import DualEncoder

    model = model_dir(name)
    encoder = DualEncoder(str(model), device="cpu", batch_size=4)
    processor = AutoProcessor.from_pretrained(model)
    words = ["a picture about sports.", "travel"]
    ours = encoder.tokenizer(words, **encoder.text_kwargs, return_tensors="pt")
    assert ours["input_ids"].shape[1] == 64
    if name == "siglip2":
        assert processor.tokenizer.model_max_length > 64
        assert torch.equal(ours["input_ids"], processor(text=words, return_tensors="pt")["input_ids"])
    small = tmp_path / "pool"
    small_pool(pool_dir, small)
    result = CliRunner().invoke(
        build_cli,
        [
            "verify-images",
            "--model",
            str(model),
            "--pool",
            str(small),
            "--out",
            str(tmp_path / "verify"),
            "--allow-fail",
            "--device",
            "cpu",
        ],
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    report = json.loads((tmp_path / "verify" / "report.json").read_text("utf-8"))
    assert len(report["images"]) == 7


def test_a_first_batch_of_single_image_prompts_does_not_fix_the_layout(model_dir, photos):
    """With one image per prompt, "a row per image" and "a row per prompt" look alike (Qwen's
    image_grid_thw); the first batch with several images per prompt is checked again."""
    model = str(model_dir("qwen2_vl"))
    backend = make_backend("hf", model=model, batch_size=8, device="cpu", max_new_tokens=3)
    backend.set_images(photos)
    singles = []
    for i in range(3):
        p = build_prompt("i2s", [f"img{i}"], SENTENCES)
        singles.append(Request(f"one-{i}", tuple(p.messages()), p.image_ids))
    backend.generate(singles)
    assert backend.batcher.ambiguous[True] is True
    several = [r for r in sample_requests() if len(r.image_ids) > 1]
    one = make_backend("hf", model=model, batch_size=1, device="cpu", max_new_tokens=3)
    one.set_images(photos)
    assert backend.generate(several) == one.generate(several)
    assert backend.batcher.ambiguous[True] is False and backend.batcher.layouts[True]["image_grid_thw"] == "image"


def test_a_processor_that_pads_its_own_way_batches_itself(model_dir, photos):
    """Mllama marks a padded image's first tile as valid in aspect_ratio_mask, so zero-padding
    per-prompt inputs differs from its batch; its own batches carry every prompt's values
    unchanged, so they are used as they come (and answers equal batch size 1)."""
    model = str(model_dir("mllama"))
    p1 = build_prompt("i2s", ["img0"], SENTENCES)
    p4 = build_prompt("s2i", SENTENCES[:1], ["img1", "img2", "img3", "img4"])
    reqs = [Request("one", tuple(p1.messages()), p1.image_ids), Request("four", tuple(p4.messages()), p4.image_ids)]
    backend = make_backend("hf", model=model, batch_size=8, device="cpu", max_new_tokens=3)
    backend.set_images(photos)
    answers = backend.generate(reqs)
    assert backend.batcher.batched[True] == "processor"
    one = make_backend("hf", model=model, batch_size=1, device="cpu", max_new_tokens=3)
    one.set_images(photos)
    assert one.generate(reqs) == answers
