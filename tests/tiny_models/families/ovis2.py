"""Ovis2 in the Hugging Face format (``AIDC-AI/Ovis2-*`` converted by transformers, e.g. ``thisisiron/Ovis2-1B-hf``;
``Ovis2ForConditionalGeneration``): an AIMv2-style tower whose features become a probability table over a
visual vocabulary, a Qwen2 text model.

Real protocol kept: the template writes a fixed ``You are a helpful assistant.`` system turn, then ChatML
turns, each image in place as ``<image>\\n``. ``<image>`` is not a token of the real tokenizer (transformers'
processor test tokenizes it as three pieces); the processor replaces it with ``<IMG_START>``, the global view's
``<IMG_ATOM>`` x ``image_seq_length``, ``<IMG_GRID>``, and, for an image cropped to several tiles, each tile's
atoms (``<IMG_COL>`` between tiles of a row, ``<IMG_ROW>`` between rows), then ``<IMG_END>``. The model
scatters the image features into the ``<IMG_ATOM>`` positions (``image_token_id``) and the indicator
embeddings into the five indicator tokens. Tiny here: 56-pixel tiles of 14-pixel patches, hidden stride 2 ->
4 atoms per tile (real: 448, 14, 2 -> 256), at most 4 tiles (real 12).
"""

from __future__ import annotations

from pathlib import Path

from . import _qwen
from ._common import TINY_VISION, finish, train_fast_tokenizer

FAMILY = "ovis2"
KIND = "generative"
NEEDS = ("torchvision",)
# The token the model fills with image features ("<image>" is only text; see above): what the family checks count.
FILLED_TOKEN = "<IMG_ATOM>"
TEMPLATE_SOURCE = (
    "huggingface/transformers src/transformers/models/ovis2/convert_ovis2_weights_to_hf.py (CHAT_TEMPLATE, "
    "written into every converted AIDC-AI/Ovis2-* checkpoint); the same string is prepare_processor_dict() of "
    "tests/models/ovis2/test_processor_ovis2.py, whose test_chat_template checks thisisiron/Ovis2-1B-hf renders it"
)
# Verbatim (the converter's Python string, so '\n' are real newlines inside the Jinja strings).
CHAT_TEMPLATE = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\n'}}"
    "{% if message['content'] is string %}"
    "{{ message['content'] }}"
    "{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}"
    "{{ '<image>\n' }}"
    "{% elif content['type'] == 'text' %}"
    "{{ content['text'] }}"
    "{% endif %}"
    "{% endfor %}"
    "{% endif %}"
    "{{'<|im_end|>\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}"
    "{{'<|im_start|>assistant\n' }}"
    "{% endif %}"
)

# The converter adds these after the Qwen2 tokens, <IMG_ATOM> first (image_token_id), then the five
# visual indicators in the order of the config's visual_indicator_token_ids.
OVIS_TOKENS = ["<IMG_ATOM>", "<IMG_START>", "<IMG_GRID>", "<IMG_COL>", "<IMG_ROW>", "<IMG_END>"]
TILE = 56  # real 448
PATCH = 14  # as real
HIDDEN_STRIDE = 2  # as real
IMAGE_SEQ_LENGTH = (TILE // PATCH) ** 2 // HIDDEN_STRIDE**2  # 4 atoms per tile (real 256)
MAX_PATCHES = 4  # real 12
VISUAL_VOCAB = 64  # real 65536


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import Ovis2Config, Ovis2ForConditionalGeneration, Ovis2ImageProcessor, Ovis2Processor

    tokenizer = train_fast_tokenizer(
        texts,
        _qwen.SPECIAL_TOKENS + OVIS_TOKENS,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    ids = tokenizer.convert_tokens_to_ids
    text = _qwen.text_kwargs(tokenizer)
    config = Ovis2Config(
        vision_config={
            **TINY_VISION,
            "image_size": TILE,
            "patch_size": PATCH,
            "hidden_stride": HIDDEN_STRIDE,
            "vocab_size": VISUAL_VOCAB,
            "num_visual_indicator_tokens": 5,
        },
        text_config={"model_type": "qwen2", **text},
        image_token_id=ids("<IMG_ATOM>"),
        visual_indicator_token_ids=[ids(t) for t in OVIS_TOKENS[1:]],
        vocab_size=len(tokenizer),
        hidden_size=text["hidden_size"],
    )
    torch.manual_seed(seed)
    model = Ovis2ForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    image_processor = Ovis2ImageProcessor(
        size={"height": TILE, "width": TILE},
        crop_to_patches=True,  # as the converter writes it
        min_patches=1,
        max_patches=MAX_PATCHES,
    )
    processor = Ovis2Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=IMAGE_SEQ_LENGTH,
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
