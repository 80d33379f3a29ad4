"""The tiny models of the families that need torchvision, built and loaded as a user loads a checkpoint.

Per family, with the real processor classes (real video processors included): the stored template is
the one named by ``TEMPLATE_SOURCE``, a two-image turn renders each image in place, the tokenized
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

TURN = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Images:\n"},
            {"type": "image"},
            {"type": "text", "text": "\n"},
            {"type": "image"},
            {"type": "text", "text": "\nWhich?"},
        ],
    }
]


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
    if name == "lfm2_vl":
        out = processor.image_processor(images=[[photo]], return_row_col_info=True)
        factor = processor.image_processor.downsample_factor
        return sum((int(h) // factor) * (int(w) // factor) for h, w in out["spatial_shapes"])
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

    rendered = processor.apply_chat_template(TURN, add_generation_prompt=True, tokenize=False)
    assert facts.rendered_turn in rendered, rendered
    assert rendered.startswith(facts.starts_with) and rendered.endswith(facts.generation_prompt)

    inputs = processor(text=[rendered], images=[photos], return_tensors="pt", add_special_tokens=False)
    ids = inputs["input_ids"][0].tolist()
    tok = processor.tokenizer
    if tok.bos_token_id is not None and rendered.startswith(tok.bos_token):
        assert ids.count(tok.bos_token_id) == 1 and ids[0] == tok.bos_token_id
    if facts.once_per_image is not None:
        assert ids.count(tok.convert_tokens_to_ids(facts.once_per_image)) == 2
    image_id = tok.convert_tokens_to_ids(processor.image_token)
    expected = [_image_token_counts(name, processor, p) for p in photos]
    assert ids.count(image_id) == sum(expected)

    with torch.no_grad():
        generated = model.generate(**inputs, max_new_tokens=3, do_sample=False)
        again = model.generate(**inputs, max_new_tokens=3, do_sample=False)
    assert 1 <= generated.shape[1] - len(ids) <= 3 and torch.equal(generated, again)


def test_gemma4_thinking_is_a_system_marker_and_a_channel_the_model_opens(load):
    _, _, processor, _ = load("gemma4")
    on = processor.apply_chat_template(TURN, add_generation_prompt=True, tokenize=False, enable_thinking=True)
    off = processor.apply_chat_template(TURN, add_generation_prompt=True, tokenize=False)
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
    off = processor.apply_chat_template(TURN, add_generation_prompt=True, tokenize=False, enable_thinking=False)
    assert off.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    tok = processor.tokenizer
    ids = tok.encode("<think>\nB</think>\n\nA", add_special_tokens=False)
    assert tok.decode(ids, skip_special_tokens=True) == "<think>\nB</think>\n\nA"
