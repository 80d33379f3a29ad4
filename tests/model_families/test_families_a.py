"""Tiny models of the Qwen-VL, InternVL, Aya Vision and PaliGemma families.

Each family is built from configs with its real chat template, loaded back the way a user
loads a Hub checkpoint, fed a two-image turn with two real photos, and made to generate.
The facts the evaluator relies on (the image marker in the rendered text, where the images
land, BOS, tokens per image) are asserted per family.

Families whose processor has a video processor load the real one (the eval session has torchvision).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import TWO_IMAGE_TURN


@dataclass(frozen=True)
class Facts:
    template_mark: str  # a substring only the family's real template has
    rendered_image: str  # what one image is in the rendered text, before expansion
    in_place: bool  # images where the message puts them (else all at the start of the turn)
    starts_with_bos: str | None  # the BOS string the rendered text starts with, if any
    # expected expanded image tokens per image, from (processor, processed inputs, the photos)
    tokens_per_image: Callable[..., list[int]]
    max_tokens_per_image: int
    generation_prompt: str  # how the rendered text ends with add_generation_prompt=True


def _qwen_tokens(_processor, inputs, _photos, merge: int = 2) -> list[int]:
    return [int(n) // merge**2 for n in inputs["image_grid_thw"].prod(-1)]


def _internvl_tokens(processor, inputs, photos) -> list[int]:
    tiles = processor.image_processor(images=photos, crop_to_patches=True, return_tensors="pt")["num_patches"]
    assert int(sum(tiles)) == inputs["pixel_values"].shape[0]
    return [processor.image_seq_length * int(n) for n in tiles]


FAMILIES = {
    "qwen2_vl": Facts(
        template_mark="{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}",
        rendered_image="<|vision_start|><|image_pad|><|vision_end|>",
        in_place=True,
        starts_with_bos=None,
        tokens_per_image=_qwen_tokens,
        max_tokens_per_image=16,
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n",
    ),
    "qwen2_5_vl": Facts(
        template_mark="{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}",
        rendered_image="<|vision_start|><|image_pad|><|vision_end|>",
        in_place=True,
        starts_with_bos=None,
        tokens_per_image=_qwen_tokens,
        max_tokens_per_image=16,
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n",
    ),
    "qwen3_vl": Facts(
        template_mark="{%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}",
        rendered_image="<|vision_start|><|image_pad|><|vision_end|>",
        in_place=True,
        starts_with_bos=None,
        tokens_per_image=_qwen_tokens,
        max_tokens_per_image=16,
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n",
    ),
    "qwen3_vl_thinking": Facts(
        template_mark="{{- '<|im_start|>assistant\\n<think>\\n' }}",
        rendered_image="<|vision_start|><|image_pad|><|vision_end|>",
        in_place=True,
        starts_with_bos=None,
        tokens_per_image=_qwen_tokens,
        max_tokens_per_image=16,
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n<think>\n",
    ),
    "internvl": Facts(
        template_mark="{{ '<IMG_CONTEXT>\n' }}",
        rendered_image="<IMG_CONTEXT>\n",
        in_place=True,
        starts_with_bos=None,
        tokens_per_image=_internvl_tokens,
        max_tokens_per_image=16,
        generation_prompt="<|im_end|>\n<|im_start|>assistant\n",
    ),
}


@pytest.fixture(scope="module")
def texts(sib_dir: Path) -> list[str]:
    from tiny_models.llava import sib_sentences

    return sib_sentences(sib_dir, ["eng_Latn", "arb_Arab", "zho_Hans"], limit=50)


@pytest.fixture(scope="module")
def photos(topic_photos_dir: Path):
    from PIL import Image

    paths = sorted(topic_photos_dir.glob("*/*.jpg"))[:2]
    assert len(paths) == 2
    # Differently shaped photos, so that per-image token counts are checked, not assumed equal.
    return [Image.open(p).convert("RGB") for p in paths]


@pytest.fixture(scope="module")
def load(texts, tmp_path_factory):
    """``load(name)``: the family built once into tmp and loaded like a Hub checkpoint."""
    from tiny_models.families import build_family, family
    from transformers import AutoModelForImageTextToText, AutoProcessor

    cache: dict = {}

    def get(name: str):
        if name not in cache:
            out = build_family(name, tmp_path_factory.mktemp(name), texts, seed=0)
            processor = AutoProcessor.from_pretrained(out)
            model = AutoModelForImageTextToText.from_pretrained(out, use_safetensors=True).eval()
            cache[name] = (name, family(name), out, processor, model)
        return cache[name]

    return get


# Families without a chat template, tested on their own prompt format below.
NO_TEMPLATE = ["paligemma"]


@pytest.fixture(params=sorted(FAMILIES))
def built(request, load):
    return load(request.param)


@pytest.fixture(params=sorted(FAMILIES) + NO_TEMPLATE)
def any_built(request, load):
    return load(request.param)


def test_family_module_declares_itself(any_built):
    name, module, out, _, _ = any_built
    assert module.FAMILY == name
    assert module.KIND == "generative"
    assert module.TEMPLATE_SOURCE
    assert (out / "model.safetensors").is_file()
    assert not list(out.glob("*.bin"))


def test_real_template_two_images_generate(built, photos):
    import torch

    name, module, out, processor, model = built
    facts = FAMILIES[name]
    assert facts.template_mark in processor.chat_template
    assert processor.chat_template == module.CHAT_TEMPLATE

    rendered = processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False)
    assert rendered.count(facts.rendered_image) == 2
    first, second = (rendered.index(facts.rendered_image, i) for i in (0, rendered.index(facts.rendered_image) + 1))
    if facts.in_place:
        assert "Images:\n" + facts.rendered_image + "\n" + facts.rendered_image + "\nWhich?" in rendered
    else:
        assert rendered.index("Images:") > second
    assert rendered.endswith(facts.generation_prompt)
    if facts.starts_with_bos:
        assert rendered.startswith(facts.starts_with_bos)
    elif processor.tokenizer.bos_token:
        assert not rendered.startswith(processor.tokenizer.bos_token)

    inputs = processor(text=[rendered], images=[photos], return_tensors="pt")
    expected = facts.tokens_per_image(processor, inputs, photos)
    assert len(expected) == 2 and all(1 <= n <= facts.max_tokens_per_image for n in expected)
    image_id = processor.tokenizer.convert_tokens_to_ids(processor.image_token)
    assert int((inputs["input_ids"][0] == image_id).sum()) == sum(expected)

    with torch.no_grad():
        generated = model.generate(**inputs, max_new_tokens=3, do_sample=False)
    new = generated[0, inputs["input_ids"].shape[1] :]
    assert 1 <= len(new) <= 3
    # Same inputs, same output: the evaluator's determinism rests on it.
    with torch.no_grad():
        again = model.generate(**inputs, max_new_tokens=3, do_sample=False)
    assert torch.equal(generated, again)


def test_a_batch_of_two_prompts_with_nested_image_lists(built, photos):
    """The evaluator batches: two rendered prompts of different lengths, one image list per prompt."""
    import torch

    name, _, _, processor, model = built
    one = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Which?"}]}]
    rendered = processor.apply_chat_template([TWO_IMAGE_TURN, one], add_generation_prompt=True, tokenize=False)
    inputs = processor(text=rendered, images=[photos, [photos[1]]], padding=True, return_tensors="pt")
    assert inputs["input_ids"].shape[0] == 2
    # Left padding, so that every prompt ends where generation starts.
    assert bool(inputs["attention_mask"][:, -1].all())
    with torch.no_grad():
        generated = model.generate(**inputs, max_new_tokens=3, do_sample=False)
    assert generated.shape[0] == 2 and generated.shape[1] > inputs["input_ids"].shape[1]


def test_build_is_deterministic(any_built, texts, tmp_path):
    from tiny_models.families import build_family

    name, _, out, _, _ = any_built
    again = build_family(name, tmp_path / name, texts, seed=0)
    assert (again / "model.safetensors").read_bytes() == (out / "model.safetensors").read_bytes()
    assert (again / "tokenizer.json").read_bytes() == (out / "tokenizer.json").read_bytes()


@pytest.mark.parametrize("name", ["qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_thinking"])
def test_qwen2_vl_adds_a_default_system_turn_qwen3_vl_does_not(load, name):
    _, _, _, processor, _ = load(name)
    rendered = processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False)
    has_system = rendered.startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")
    assert has_system == name.startswith("qwen2")


@pytest.mark.parametrize("name", ["qwen3_vl", "qwen3_vl_thinking"])
def test_think_tokens_are_single_and_survive_skip_special_tokens(load, name):
    _, _, _, processor, _ = load(name)
    tok = processor.tokenizer
    ids = tok.encode("<think>\nB</think>\n\nA", add_special_tokens=False)
    assert tok.convert_tokens_to_ids("<think>") in ids and tok.convert_tokens_to_ids("</think>") in ids
    assert tok.decode(ids, skip_special_tokens=True) == "<think>\nB</think>\n\nA"


def test_internvl_tiles_a_wide_image_and_wraps_each_image_in_img_tags(load, photos):
    _, module, _, processor, _ = load("internvl")
    wide = photos[0].resize((module.TILE * 3, module.TILE))
    rendered = processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False)
    inputs = processor(text=[rendered], images=[[wide, photos[1]]], return_tensors="pt")
    ids = inputs["input_ids"][0].tolist()
    tok = processor.tokenizer
    starts = [i for i, t in enumerate(ids) if t == tok.convert_tokens_to_ids("<img>")]
    ends = [i for i, t in enumerate(ids) if t == tok.convert_tokens_to_ids("</img>")]
    assert len(starts) == len(ends) == 2
    spans = [e - s - 1 for s, e in zip(starts, ends)]
    # 3 tiles + the thumbnail for the 3:1 image, each worth image_seq_length tokens.
    assert spans[0] == 4 * module.IMAGE_SEQ_LENGTH


def test_paligemma_has_no_chat_template_and_takes_a_prefix_prompt(load, photos):
    import torch

    _, module, _, processor, model = load("paligemma")
    assert processor.chat_template is None and module.CHAT_TEMPLATE is None
    with pytest.raises(ValueError, match="chat template"):
        processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False)

    inputs = processor(text=["<image><image>Which?"], images=[photos], return_tensors="pt")
    ids = inputs["input_ids"][0].tolist()
    image_id = processor.tokenizer.convert_tokens_to_ids(processor.image_token)
    assert ids.count(image_id) == 2 * module.IMAGE_SEQ_LENGTH == 2 * processor.image_seq_length
    # The processor puts <bos> right after the last image and ends the prefix with a newline.
    bos = ids.index(processor.tokenizer.bos_token_id)
    assert ids[:bos] == [image_id] * bos
    assert processor.tokenizer.decode(ids[bos:]) == "<bos>Which?\n"
    with torch.no_grad():
        generated = model.generate(**inputs, max_new_tokens=3, do_sample=False)
    assert 1 <= generated.shape[1] - inputs["input_ids"].shape[1] <= 3


def test_family_modules_import_nothing_heavy():
    """The registry imports every family module to list them; none may pull in torch/transformers."""
    import os
    import subprocess
    import sys

    from support import REPO, subprocess_env
    from tiny_models.families import family_names

    names = family_names()  # every family, those checked in the torchvision venv included
    script = (
        "import sys\n"
        "from tiny_models.families import family\n"
        f"for name in {names!r}:\n"
        "    family(name).TEMPLATE_SOURCE\n"
        "print(sorted(m for m in ('torch', 'transformers', 'PIL') if m in sys.modules))\n"
    )
    env = subprocess_env(PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO / "tests")]))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
