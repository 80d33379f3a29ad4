"""Tiny models of the families LLaVA-1.5, Gemma 3, Idefics3, SmolVLM, Mllama, LLaVA-NeXT and
LLaVA-OneVision: each loads through the Auto classes, renders the family's real chat template,
expands its image placeholders as the real processor does, and generates on CPU.

The rendered strings asserted below are what the real checkpoints' templates produce for the
evaluator's two-image turn; they are the facts the evaluator's ``hf`` backend relies on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from PIL import Image
from support import REPO, TWO_IMAGE_TURN, subprocess_env
from tiny_models.families import build_family, family, family_names
from tiny_models.llava import sib_sentences


@pytest.fixture(scope="module")
def texts(sib_dir: Path) -> list[str]:
    return sib_sentences(sib_dir, ["eng_Latn", "arb_Arab", "zho_Hans"], limit=50)


@pytest.fixture(scope="module")
def photos(topic_photos_dir: Path) -> list[Image.Image]:
    # Two real photographs of different shapes (landscape and near-square).
    paths = sorted(topic_photos_dir.glob("*/*.jpg"))[:2]
    assert len(paths) == 2
    return [Image.open(p).convert("RGB") for p in paths]


class Run:
    """One family folder, loaded back and run on the two-image turn."""

    def __init__(self, folder: Path, photos: list[Image.Image]):
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.processor = AutoProcessor.from_pretrained(folder)
        self.model = AutoModelForImageTextToText.from_pretrained(folder, use_safetensors=True).eval()
        self.tokenizer = self.processor.tokenizer
        self.rendered = self.processor.apply_chat_template(TWO_IMAGE_TURN, add_generation_prompt=True, tokenize=False)
        self.inputs = self.processor(text=[self.rendered], images=[photos], return_tensors="pt")
        self.ids = self.inputs["input_ids"][0].tolist()

    def count(self, token: str) -> int:
        return self.ids.count(self.tokenizer.convert_tokens_to_ids(token))

    def tokens(self) -> list[str]:
        return self.tokenizer.convert_ids_to_tokens(self.ids)

    def generate(self) -> torch.Tensor:
        with torch.no_grad():
            out = self.model.generate(**self.inputs, max_new_tokens=3, do_sample=False)
        assert out.shape[0] == 1 and out.shape[1] > len(self.ids)
        return out[0, len(self.ids) :]


def load(name: str, tmp_path_factory, texts, photos) -> Run:
    folder = build_family(name, tmp_path_factory.mktemp(name) / name, texts)
    return Run(folder, photos)


FAMILIES_B = ["llava_1_5", "gemma3", "idefics3", "smolvlm", "mllama", "llava_next", "llava_onevision"]


def test_family_modules_declare_their_source_and_import_light():
    for name in FAMILIES_B:
        assert name in family_names()
        module = family(name)
        assert module.FAMILY == name and module.KIND == "generative" and module.TEMPLATE_SOURCE
        assert module.CHAT_TEMPLATE  # the template text lives in the module, named by TEMPLATE_SOURCE
    # Importing the modules (e.g. to list families) must not pull in torch or transformers.
    code = (
        "import sys\n"
        "from tiny_models.families import family\n"
        f"for name in {FAMILIES_B!r}: family(name)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'tokenizers') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=subprocess_env(PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO / "tests")])),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("name", FAMILIES_B)
def test_family_build_is_byte_identical_for_the_same_seed(name, tmp_path, texts):
    first = build_family(name, tmp_path / "a", texts, seed=3)
    second = build_family(name, tmp_path / "b", texts, seed=3)
    files = sorted(p.name for p in first.iterdir())
    assert "model.safetensors" in files and "chat_template.jinja" in files
    assert files == sorted(p.name for p in second.iterdir())
    for file in files:
        assert (first / file).read_bytes() == (second / file).read_bytes(), file


# --- LLaVA-1.5 (llava-hf) -----------------------------------------------------------------


@pytest.fixture(scope="module")
def llava_1_5(tmp_path_factory, texts, photos) -> Run:
    return load("llava_1_5", tmp_path_factory, texts, photos)


def test_llava_1_5_template_puts_all_images_before_the_text(llava_1_5):
    # The real llava-hf template: images first, then each text part followed by a space.
    assert llava_1_5.rendered == "USER: <image>\n<image>\nImages:\n \n \nWhich? ASSISTANT:"


def test_llava_1_5_expands_each_image_to_its_patches_and_adds_bos(llava_1_5):
    assert llava_1_5.processor.image_token == "<image>"
    assert llava_1_5.count("<image>") == 2 * 16  # (24 px / 6 px)^2 per image, CLS dropped
    assert tuple(llava_1_5.inputs["pixel_values"].shape) == (2, 3, 24, 24)
    # The template writes no BOS; the tokenizer prepends it, as the real Llama tokenizer does.
    assert not llava_1_5.rendered.startswith("<s>")
    assert llava_1_5.tokens()[0] == "<s>" and llava_1_5.count("<s>") == 1
    llava_1_5.generate()


# --- Gemma 3 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gemma3(tmp_path_factory, texts, photos) -> Run:
    return load("gemma3", tmp_path_factory, texts, photos)


def test_gemma3_template_writes_bos_keeps_image_order_and_trims_text(gemma3):
    # Real Gemma 3 template: <bos> written by the template, images in place, text parts trimmed.
    assert gemma3.rendered == (
        "<bos><start_of_turn>user\nImages:<start_of_image><start_of_image>Which?<end_of_turn>\n<start_of_turn>model\n"
    )


def test_gemma3_expands_each_image_to_pooled_soft_tokens(gemma3):
    assert gemma3.processor.image_token == "<start_of_image>"  # what the rendered text carries
    assert gemma3.processor.tokenizer.image_token == "<image_soft_token>"  # what it expands to
    assert gemma3.count("<image_soft_token>") == 2 * 4
    assert gemma3.count("<start_of_image>") == 2 and gemma3.count("<end_of_image>") == 2
    assert tuple(gemma3.inputs["pixel_values"].shape) == (2, 3, 32, 32)
    assert gemma3.inputs["token_type_ids"][0].sum().item() == 2 * 4
    # The real tokenizer prepends <bos> as well: the rendered text tokenized as-is starts with two.
    assert gemma3.tokens()[:2] == ["<bos>", "<bos>"]
    gemma3.generate()


# --- Idefics3 -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def idefics3(tmp_path_factory, texts, photos) -> Run:
    return load("idefics3", tmp_path_factory, texts, photos)


def test_idefics3_template_starts_with_literal_bos_and_keeps_image_order(idefics3):
    assert idefics3.rendered == "<|begin_of_text|>User: Images:\n<image>\n<image>\nWhich?<end_of_utterance>\nAssistant:"


def test_idefics3_splits_each_photo_into_a_tile_grid_plus_a_global_view(idefics3):
    assert idefics3.processor.image_token == "<image>"
    # Both photos are wider/taller than one 32 px tile: 2 x 2 tiles + 1 global view, 4 tokens each.
    assert tuple(idefics3.inputs["pixel_values"].shape) == (1, 10, 3, 32, 32)  # nested: one row per prompt
    assert idefics3.count("<image>") == 2 * 5 * 4
    assert idefics3.count("<fake_token_around_image>") == 2 * (4 + 2)
    expanded = idefics3.tokenizer.decode(idefics3.ids)
    assert expanded.count("<row_2_col_2>") == 2 and expanded.count("<global-img>") == 2
    # The Llama 3 tokenizer prepends <|begin_of_text|> to the template's own.
    assert idefics3.tokens()[:2] == ["<|begin_of_text|>", "<|begin_of_text|>"]
    idefics3.generate()


# --- SmolVLM2 -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smolvlm(tmp_path_factory, texts, photos) -> Run:
    folder = build_family("smolvlm", tmp_path_factory.mktemp("smolvlm") / "smolvlm", texts)
    return Run(folder, photos)


def test_smolvlm_template_starts_with_im_start_and_keeps_image_order(smolvlm):
    assert smolvlm.rendered == "<|im_start|>User: Images:\n<image>\n<image>\nWhich?<end_of_utterance>\nAssistant:"


def test_smolvlm_expands_tiles_with_single_token_tags_and_adds_no_bos(smolvlm):
    assert smolvlm.processor.image_token == "<image>"
    assert tuple(smolvlm.inputs["pixel_values"].shape) == (1, 10, 3, 32, 32)  # 2 x (2 x 2 tiles + global)
    assert smolvlm.count("<image>") == 2 * 5 * 4
    # Unlike Idefics3, the grid tags are single tokens of the vocabulary.
    assert smolvlm.count("<row_2_col_2>") == 2 and smolvlm.count("<global-img>") == 2
    assert smolvlm.tokens()[0] == "<|im_start|>" and smolvlm.count("<|im_start|>") == 1
    smolvlm.generate()


def test_smolvlm_loads_its_real_video_processor(smolvlm):
    assert type(smolvlm.processor.video_processor).__name__ == "SmolVLMVideoProcessor"


# --- Llama 3.2 Vision (Mllama) ------------------------------------------------------------


@pytest.fixture(scope="module")
def mllama(tmp_path_factory, texts, photos) -> Run:
    return load("mllama", tmp_path_factory, texts, photos)


def test_mllama_template_writes_bos_keeps_image_order_and_omits_system_with_images(mllama):
    assert mllama.rendered == (
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nImages:\n<|image|>\n<|image|>\nWhich?"
        "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    )
    assert "Cutting Knowledge Date" in mllama.processor.chat_template  # the real, tool-aware template


def test_mllama_keeps_one_token_per_image_and_tiles_through_cross_attention(mllama):
    assert mllama.processor.image_token == "<|image|>"
    assert mllama.count("<|image|>") == 2  # not expanded
    assert tuple(mllama.inputs["pixel_values"].shape) == (1, 2, 4, 3, 16, 16)  # prompt, image, tile, ...
    assert tuple(mllama.inputs["cross_attention_mask"].shape) == (1, len(mllama.ids), 2, 4)
    # The processor leaves the template's BOS alone, the Llama 3 tokenizer adds a second one.
    assert mllama.tokens()[:2] == ["<|begin_of_text|>", "<|begin_of_text|>"]
    mllama.generate()


# --- LLaVA-NeXT (llava-hf v1.6 Mistral) ---------------------------------------------------


@pytest.fixture(scope="module")
def llava_next(tmp_path_factory, texts, photos) -> Run:
    return load("llava_next", tmp_path_factory, texts, photos)


def test_llava_next_template_puts_all_images_first_inside_inst(llava_next):
    # Images first, then the text parts glued together, no BOS written.
    assert llava_next.rendered == "[INST] <image>\n<image>\nImages:\n\n\nWhich? [/INST]"


def test_llava_next_expands_each_image_by_its_anyres_grid(llava_next):
    assert llava_next.processor.image_token == "<image>"
    # One base view + up to 4 grid crops per image, padded to 5 views.
    assert tuple(llava_next.inputs["pixel_values"].shape) == (2, 5, 3, 24, 24)
    assert llava_next.inputs["image_sizes"].tolist() == [[1096, 1600], [960, 912]]
    # Landscape 1600x1096 -> 4 base + 10 unpadded grid tokens; near-square 912x960 -> 4 + 20.
    assert llava_next.count("<image>") == 14 + 24
    assert llava_next.tokens()[0] == "<s>" and llava_next.count("<s>") == 1
    llava_next.generate()


# --- LLaVA-OneVision (llava-hf, Qwen2) ----------------------------------------------------


@pytest.fixture(scope="module")
def llava_onevision(tmp_path_factory, texts, photos) -> Run:
    folder = build_family("llava_onevision", tmp_path_factory.mktemp("llava_onevision") / "llava_onevision", texts)
    return Run(folder, photos)


def test_llava_onevision_template_puts_all_images_first_without_system_or_bos(llava_onevision):
    assert llava_onevision.rendered == (
        "<|im_start|>user\n<image>\n<image>\nImages:\n\n\nWhich?<|im_end|>\n<|im_start|>assistant\n"
    )


def test_llava_onevision_uses_one_view_per_image_when_a_prompt_has_several(llava_onevision, photos):
    assert llava_onevision.processor.image_token == "<image>"
    # Several images in one prompt: no anyres grid, one base view each (2 x 2 tokens + 1 newline).
    assert tuple(llava_onevision.inputs["pixel_values"].shape) == (2, 1, 3, 24, 24)
    assert llava_onevision.inputs["batch_num_images"].tolist() == [2]
    assert llava_onevision.count("<image>") == 2 * 5
    assert llava_onevision.tokens()[0] == "<|im_start|>"  # Qwen2 has no BOS
    llava_onevision.generate()
    # A single image does get the anyres grid: many crops, more tokens.
    single = llava_onevision.processor(text=["<image>\nWhich?"], images=[photos[0]], return_tensors="pt")
    assert single["pixel_values"].shape[1] > 1
    assert single["input_ids"][0].tolist().count(llava_onevision.processor.image_token_id) > 5


@pytest.mark.parametrize("name", FAMILIES_B)
def test_saved_folder_carries_the_real_template_verbatim(name, request):
    run = request.getfixturevalue(name)
    assert run.processor.chat_template == family(name).CHAT_TEMPLATE


def test_llava_onevision_needs_nested_images_for_its_multi_image_protocol(llava_onevision, photos):
    # A flat image list reads as one image per sample: each gets the full anyres grid instead.
    processor = llava_onevision.processor
    flat = processor(text=[llava_onevision.rendered], images=photos, return_tensors="pt")
    assert flat["batch_num_images"].tolist() == [1, 1]
    assert flat["input_ids"][0].tolist().count(processor.image_token_id) > llava_onevision.count("<image>")
