"""The tiny models of the families that need torchvision, built and loaded as a user loads a checkpoint.

Per family, with the real processor classes (real video processors included): the stored template is
the one named by ``TEMPLATE_SOURCE``, a two-image turn renders each image where the real template puts it
(in place; Molmo2: first, numbered), the tokenized
prompt carries one BOS, each image expands to the image processor's own count of image tokens,
and the model generates. Thinking switches are rendered as the real templates render them.
Collected only where torchvision runs (``conftest.py``); Qwen3.5 is here too because its processor
carries a video processor: here it is the real one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from PIL import Image
from support import TWO_IMAGE_TURN


@dataclass(frozen=True)
class Facts:
    template_file: str | None  # the verbatim template file next to the module, if stored as a file
    rendered_turn: str  # the two-image turn as the template renders it (images not yet expanded)
    generation_prompt: str  # how the rendered text ends with add_generation_prompt=True
    starts_with: str  # how the rendered text starts
    once_per_image: str | None  # a token each expanded image carries exactly once (None: the family has none)


FAMILIES = {
    "gemma4": Facts(
        template_file="gemma4_31b_it_interleaved.jinja",
        rendered_turn="<|turn>user\nImages:\n\n<|image|>\n\n\n\n<|image|>\n\nWhich?<turn|>\n",
        generation_prompt="<|turn>model\n<|channel>thought\n<channel|>",
        starts_with="<bos><|turn>user\n",
        once_per_image="<|image>",
    ),
    "mistral3": Facts(
        template_file="mistral_small_3_1_instruct_2503.jinja",
        rendered_turn="[INST]Images:\n[IMG]\n[IMG]\nWhich?[/INST]",
        generation_prompt="[INST]Images:\n[IMG]\n[IMG]\nWhich?[/INST]",
        starts_with="<s>[SYSTEM_PROMPT]You are Mistral Small 3",
        once_per_image="[IMG_END]",
    ),
    "lfm2_vl": Facts(
        template_file=None,
        rendered_turn="<|im_start|>user\nImages:\n<image>\n<image>\nWhich?<|im_end|>\n",
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n",
        starts_with="<|startoftext|><|im_start|>user\n",
        once_per_image="<|image_start|>",
    ),
    "internvl3_5": Facts(
        template_file=None,
        rendered_turn="<|im_start|>user\nImages:\n<IMG_CONTEXT>\n\n<IMG_CONTEXT>\n\nWhich?<|im_end|>\n",
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n",
        starts_with="<|im_start|>user\n",
        once_per_image="<img>",
    ),
    "ovis2": Facts(
        template_file=None,
        rendered_turn="<|im_start|>user\nImages:\n<image>\n\n<image>\n\nWhich?<|im_end|>\n",
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n",
        starts_with="<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n",
        once_per_image="<IMG_START>",
    ),
    "molmo2": Facts(
        template_file="molmo2_convert_chat_template.jinja",
        # Every image first, numbered; the text parts joined with a space.
        rendered_turn="Image 1<|image|>Image 2<|image|><|im_start|>user\nImages:\n \n \nWhich?<|im_end|>\n",
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n",
        starts_with="Image 1<|image|>Image 2<|image|><|im_start|>user\n",
        once_per_image="<low_res_im_start>",
    ),
    "glm4v": Facts(
        template_file="glm4_1v_9b_thinking.jinja",
        rendered_turn=(
            "<|user|>\nImages:\n<|begin_of_image|><|image|><|end_of_image|>\n"
            "<|begin_of_image|><|image|><|end_of_image|>\nWhich?"
        ),
        generation_prompt="Which?<|assistant|>\n",
        starts_with="[gMASK]<sop><|user|>\n",
        once_per_image="<|begin_of_image|>",
    ),
    "qwen3_5": Facts(
        template_file="qwen3_5_9b.jinja",
        rendered_turn=(
            "<|im_start|>user\nImages:\n<|vision_start|><|image_pad|><|vision_end|>\n"
            "<|vision_start|><|image_pad|><|vision_end|>\nWhich?<|im_end|>\n"
        ),
        generation_prompt="<|im_start|>assistant\n<think>\n",
        starts_with="<|im_start|>user\n",
        once_per_image="<|vision_start|>",
    ),
    "gemma3n": Facts(
        template_file=None,
        rendered_turn="<start_of_turn>user\nImages:<image_soft_token><image_soft_token>Which?<end_of_turn>\n",
        generation_prompt="<end_of_turn>\n<start_of_turn>model\n",
        starts_with="<bos><start_of_turn>user\n",
        once_per_image="<start_of_image>",
    ),
    "perception_lm": Facts(
        template_file=None,
        rendered_turn="<|start_header_id|>user<|end_header_id|>\n\n<|image|><|image|>Images:Which?<|eot_id|>",
        generation_prompt="<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        starts_with=(
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful language and vision "
            "assistant."
        ),
        once_per_image=None,  # nothing but <|image|> x tokens: no start or end marker
    ),
}


@pytest.fixture(scope="module")
def texts(sib_dir: Path) -> list[str]:
    from tiny_models.llava import sib_sentences

    return sib_sentences(sib_dir, ["eng_Latn", "arb_Arab", "zho_Hans"], limit=50)


@pytest.fixture(scope="module")
def photos(topic_photos_dir: Path):
    paths = sorted(topic_photos_dir.glob("*/*.jpg"))[:2]
    return [Image.open(p).convert("RGB") for p in paths]  # differently shaped: counts are per image


@pytest.fixture(scope="module")
def load(texts, tmp_path_factory):
    from tiny_models.families import build_family, family
    from transformers import AutoModelForImageTextToText, AutoProcessor

    cache: dict = {}

    def get(name: str):
        if name not in cache:
            out = build_family(name, tmp_path_factory.mktemp(name), texts, seed=0)
            processor = AutoProcessor.from_pretrained(out)
            model = AutoModelForImageTextToText.from_pretrained(out, use_safetensors=True).eval()
            cache[name] = (family(name), out, processor, model)
        return cache[name]

    return get


def _image_token_counts(name: str, processor, photo) -> int:
    """Image tokens of one image, from the image processor's own outputs (not the text expansion)."""
    if name == "gemma4":
        return int(processor.image_processor(images=[[photo]])["num_soft_tokens_per_image"][0])
    if name == "mistral3":
        height, width = (int(v) for v in processor.image_processor(images=[photo])["image_sizes"][0])
        unit = processor.patch_size * processor.spatial_merge_size
        return (height // unit) * (width // unit)
    if name == "gemma3n":  # a fixed count: the MobileNetV5's fused feature map, whatever the image
        assert tuple(processor.image_processor(images=[photo], return_tensors="pt")["pixel_values"].shape[-2:]) == (
            64,
            64,
        )
        return processor.image_seq_length
    if name == "perception_lm":  # tiles (grid + thumbnail) x pooled patches per tile
        tiles = processor.image_processor(images=[photo], return_tensors="pt")["pixel_values"].shape[1]
        side = processor.image_processor.tile_size // processor.patch_size // processor.pooling_ratio
        return int(tiles) * side * side
    if name == "molmo2":  # one pooled token per row of image_token_pooling: the low-res view and the crops
        return int(processor.image_processor(images=[photo])["image_token_pooling"].shape[0])
    if name == "lfm2_vl":
        out = processor.image_processor(images=[[photo]], return_row_col_info=True)
        factor = processor.image_processor.downsample_factor
        return sum((int(h) // factor) * (int(w) // factor) for h, w in out["spatial_shapes"])
    if name == "internvl3_5":  # tiles (plus a thumbnail when there are several) x tokens per tile
        out = processor.image_processor(images=[photo], crop_to_patches=True, return_tensors="pt")
        return int(out["num_patches"][0]) * processor.image_seq_length
    if name == "ovis2":  # the global view, plus every tile when the image is cropped to several
        rows, cols = (int(v) for v in processor.image_processor(images=[photo])["grids"][0])
        return processor.image_seq_length * (1 + (rows * cols if rows * cols > 1 else 0))
    grid = processor.image_processor(images=[photo])["image_grid_thw"][0]
    return int(grid.prod()) // processor.image_processor.merge_size**2


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_real_template_two_images_in_place_one_bos_and_the_processors_counts(name, load, photos):
    module, out, processor, model = load(name)
    facts = FAMILIES[name]
    assert module.FAMILY == name and module.TEMPLATE_SOURCE and (out / "model.safetensors").is_file()
    assert processor.chat_template == module.CHAT_TEMPLATE
    if facts.template_file:
        stored = (Path(module.__file__).parent / facts.template_file).read_text(encoding="utf-8")
        assert stored == module.CHAT_TEMPLATE
    video = getattr(processor, "video_processor", None)
    assert video is None or type(video).__name__ != "NeverCalledVideoProcessor"  # the real one here

    rendered = processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False)
    assert facts.rendered_turn in rendered, rendered
    assert rendered.startswith(facts.starts_with) and rendered.endswith(facts.generation_prompt)

    inputs = processor(text=[rendered], images=[photos], return_tensors="pt", add_special_tokens=False)
    ids = inputs["input_ids"][0].tolist()
    tok = processor.tokenizer
    if tok.bos_token_id is not None and rendered.startswith(tok.bos_token):
        assert ids.count(tok.bos_token_id) == 1 and ids[0] == tok.bos_token_id
    if facts.once_per_image is not None:
        assert ids.count(tok.convert_tokens_to_ids(facts.once_per_image)) == 2
    image_id = tok.convert_tokens_to_ids(getattr(module, "FILLED_TOKEN", None) or processor.image_token)
    expected = [_image_token_counts(name, processor, p) for p in photos]
    assert ids.count(image_id) == sum(expected)

    with torch.no_grad():
        generated = model.generate(**inputs, max_new_tokens=3, do_sample=False)
        again = model.generate(**inputs, max_new_tokens=3, do_sample=False)
    assert 1 <= generated.shape[1] - len(ids) <= 3 and torch.equal(generated, again)


def test_gemma4_thinking_is_a_system_marker_and_a_channel_the_model_opens(load):
    _, _, processor, _ = load("gemma4")
    on = processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False, enable_thinking=True)
    off = processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False)
    assert on.startswith("<bos><|turn>system\n<|think|>\n<turn|>\n") and on.endswith("<|turn>model\n")
    assert "<|think|>" not in off and off.endswith("<|channel>thought\n<channel|>")
    tok = processor.tokenizer
    # Every Gemma 4 marker is one special token: skip_special_tokens=True would drop the channel's delimiters.
    for marker in ("<|channel>", "<channel|>", "<|think|>", "<|turn>", "<turn|>"):
        assert len(tok.encode(marker, add_special_tokens=False)) == 1 and marker in tok.all_special_tokens
    ids = tok.encode("<|channel>thought\nB<channel|>A", add_special_tokens=False)
    assert tok.decode(ids, skip_special_tokens=True) == "thought\nBA"


def test_qwen3_5_thinking_is_on_unless_switched_off_and_the_template_is_the_pinned_one(load):
    module, out, processor, _ = load("qwen3_5")
    text = (out / "chat_template.jinja").read_bytes()
    assert hashlib.sha256(text).hexdigest() == module.TEMPLATE_SHA256 and len(text) == 7756
    off = processor.apply_chat_template(
        TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False, enable_thinking=False
    )
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    tok = processor.tokenizer
    ids = tok.encode("<think>\nB</think>\n\nA", add_special_tokens=False)
    assert tok.decode(ids, skip_special_tokens=True) == "<think>\nB</think>\n\nA"


def test_molmo2_processor_prepends_its_bos_once_and_the_template_is_the_pinned_one(load, photos):
    """Molmo2's BOS is ``<|im_end|>``; the template writes none and the processor prepends it as text (once,
    whether or not the call adds special tokens), so ``<|im_end|>`` opens the prompt and ends the user turn."""
    module, out, processor, _ = load("molmo2")
    text = (out / "chat_template.jinja").read_bytes()
    assert hashlib.sha256(text).hexdigest() == module.TEMPLATE_SHA256 and len(text) == 3169
    tok = processor.tokenizer
    assert tok.bos_token == tok.eos_token == "<|im_end|>" and tok.padding_side == "left"
    one = processor.apply_chat_template(
        [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Which?"}]}],
        add_generation_prompt=True,
        tokenize=False,
    )
    assert one == "<|image|><|im_start|>user\nWhich?<|im_end|>\n<|im_start|>assistant\n"
    for add in (True, False):
        ids = processor(text=[one], images=[photos[:1]], return_tensors="pt", add_special_tokens=add)["input_ids"][0]
        assert ids[0] == tok.bos_token_id != ids[1] and int((ids == tok.bos_token_id).sum()) == 2


def test_glm4v_template_is_the_recorded_one_and_thinking_is_the_models_own(load):
    """The stored GLM-4.1V-9B-Thinking template hashes as the public record of the checkpoint's template
    does; it opens no thinking block and knows no switch (``enable_thinking`` renders the same); the
    tokenizer has no BOS (the template writes ``[gMASK]<sop>``) and keeps ``<think>``/``<answer>`` tags
    when special tokens are skipped."""
    import json

    module, out, processor, _ = load("glm4v")
    text = (out / "chat_template.jinja").read_text(encoding="utf-8")
    assert hashlib.sha256(json.dumps(text).encode()).hexdigest() == module.TEMPLATE_JSON_SHA256 and len(text) == 922
    plain = processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False)
    on = processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False, enable_thinking=True)
    off = processor.apply_chat_template(
        TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False, enable_thinking=False
    )
    assert plain == on == off and "<think>" not in plain
    tok = processor.tokenizer
    assert tok.bos_token is None
    assert tok(plain)["input_ids"] == tok(plain, add_special_tokens=False)["input_ids"]  # nothing added
    ids = tok.encode("<think>C</think><answer>B</answer><|endoftext|>", add_special_tokens=False)
    assert tok.decode(ids, skip_special_tokens=True) == "<think>C</think><answer>B</answer>"


def test_glm4v_renders_a_recorded_prompt_of_the_real_checkpoint_byte_for_byte(load):
    """The same public record holds prompts the real GLM-4.1V-9B-Thinking processor rendered, with their
    sha256 (tests/snapshots/glm_atomic_prompts/direct_visual_relation_01.txt, 409 characters): the stored
    template renders that conversation to the same bytes."""
    _, _, processor, _ = load("glm4v")
    system = (
        "Solve the relation task using only the supplied evidence. Return exactly one allowed lowercase answer "
        "word and no explanation."
    )
    question = (
        "What is eizadfsanr's direction from fllzxdxvuq?\nAllowed answers in displayed order: east, north, south, "
        "west.\nAnswer schema: Return exactly one allowed lowercase direction word and nothing else."
    )
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": question}]},
    ]
    rendered = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert len(rendered) == 409
    assert hashlib.sha256(rendered.encode()).hexdigest() == (
        "2965591ff19607b946a2f901f4eb533b426943d1776f82e29aa690703c61ba7d"
    )
