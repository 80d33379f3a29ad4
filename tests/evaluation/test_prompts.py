"""Prompt templates: frozen by snapshots, and checked for what the spec requires."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlsib.evaluation.run.prompts import (
    ANSWER_LINE,
    IMAGE_PLACEHOLDER,
    build_prompt,
    prompts_hash,
    render_prompt_text,
)
from mvlsib.release_format.mvl_sib import TOPICS

SNAPSHOTS = Path(__file__).parent / "snapshots"
CASES = [("i2s", 1), ("i2s", 3), ("s2i", 1), ("s2i", 3), ("t2s", 1), ("s2t", 1), ("s2t", 5)]

# A real instance's texts (SIB-200 eng_Latn) so the snapshots show real prompts too.
REAL_SENTENCES = [
    "The fission bomb works on the principle that it takes energy to put together a nucleus with many protons and neutrons.",
    "Mutation adds new genetic variation, and selection removes it from the pool of expressed variation.",
    "Pests can spoil food, cause irritation, or in a worse case cause allergic reactions, spread venom, or transmit infections.",
    "The tournament was played in a round-robin format.",
]


def _snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    assert path.is_file(), f"missing snapshot {path}"
    assert text == path.read_text(encoding="utf-8"), (
        f"prompt changed: {name}. If the change is intended, bump TEMPLATE_VERSION and update the snapshot."
    )


@pytest.mark.parametrize("task,k", CASES)
def test_template_snapshots(task, k):
    _snapshot(f"{task}_k{k}.txt", render_prompt_text(task, k))


def test_real_instance_snapshots():
    _snapshot(
        "real_i2s_k3.txt",
        render_prompt_text(
            "i2s", 3, ["science_technology_1", "science_technology_4", "science_technology_7"], REAL_SENTENCES
        ),
    )
    _snapshot(
        "real_s2t_k1.txt",
        render_prompt_text("s2t", 1, REAL_SENTENCES[:1], ["sports", "science/technology", "travel", "health"]),
    )


def test_prompts_hash_frozen():
    _snapshot("prompts_sha256.txt", prompts_hash() + "\n")


@pytest.mark.parametrize("task,k", CASES)
def test_every_prompt_lists_topics_letters_and_answer_instruction(task, k):
    text = render_prompt_text(task, k)
    assert ", ".join(TOPICS) in text
    for letter in "ABCD":
        assert f"\n{letter}. " in text
    assert text.endswith(ANSWER_LINE)
    n_images = {"i2s": k, "s2i": 4}.get(task, 0)
    assert text.count(IMAGE_PLACEHOLDER) == n_images


def test_images_are_parts_in_prompt_order():
    p = build_prompt("s2i", ["s1", "s2"], ["img_a", "img_b", "img_c", "img_d"])
    assert p.image_ids == ("img_a", "img_b", "img_c", "img_d")
    kinds = [part["type"] for part in p.parts]
    # text, then each option letter followed by its image: interleaved, not collected at the front
    assert kinds == ["text", "image", "text", "image", "text", "image", "text", "image", "text"]
    assert p.parts[0]["text"].endswith("A. ")
    p = build_prompt("i2s", ["r1", "r2", "r3"], ["a", "b", "c", "d"])
    assert p.image_ids == ("r1", "r2", "r3")


def test_bad_arguments():
    with pytest.raises(ValueError, match="4 options"):
        build_prompt("i2s", ["x"], ["a", "b", "c"])
    with pytest.raises(ValueError, match="unknown task"):
        build_prompt("x2y", ["x"], ["a", "b", "c", "d"])


@pytest.mark.eval
def test_chat_template_places_images(tiny_llava):
    """Through a real processor's chat template the image tokens land where the parts put them."""
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny_llava)
    p = build_prompt("s2i", REAL_SENTENCES[:3], ["a", "b", "c", "d"])
    from mvlsib.evaluation.backends.hf.inputs import hf_content as _hf_content

    text = processor.apply_chat_template(_hf_content(tuple(p.messages())), add_generation_prompt=True, tokenize=False)
    assert text.count("<image>") == 4
    for letter in "ABCD":
        assert f"{letter}. <image>" in text
    assert REAL_SENTENCES[2] in text and text.rstrip().endswith("ASSISTANT:")
