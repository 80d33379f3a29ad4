"""Tiny random-weight InternVL 3 in the Hugging Face format (``InternVLForConditionalGeneration``).

Real protocol kept (OpenGVLab/InternVL3-*-hf; InternVL 3.5 is ``internvl3_5``): ChatML turns without a
system turn, each image rendered in place as ``<IMG_CONTEXT>\\n``; the processor tiles each
image (dynamic crop to patches + a thumbnail) and expands ``<IMG_CONTEXT>`` into
``<img>`` + ``image_seq_length`` x tiles x ``<IMG_CONTEXT>`` + ``</img>``. Tiny here: 56-pixel
tiles of 14-pixel patches, pixel-shuffled by 0.5 -> 4 tokens per tile, and ``max_patches`` 3
(the real processor config says 12) -> at most 4 tiles, 16 tokens per image.
"""

from __future__ import annotations

from pathlib import Path

from . import _qwen
from ._common import finish, train_fast_tokenizer
from ._processor_files import video_config, write_processor

FAMILY = "internvl"
KIND = "generative"
WIDE = True
TEMPLATE_SOURCE = (
    "huggingface/transformers src/transformers/models/internvl/convert_internvl_weights_to_hf.py "
    "(chat_template, the template the OpenGVLab/InternVL3-*-hf checkpoints ship)"
)

# Verbatim (the converter's Python string, so '\n' are real newlines inside the Jinja strings).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\n'}}"
    "{% if message['content'] is string %}"
    "{{ message['content'] }}"
    "{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}"
    "{{ '<IMG_CONTEXT>\n' }}"
    "{% elif content['type'] == 'video' %}"
    "{{ '<video>\n' }}"
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

TILE = 56
PATCH = 14
DOWNSAMPLE = 0.5
IMAGE_SEQ_LENGTH = int((TILE // PATCH) ** 2 * DOWNSAMPLE**2)  # 4 tokens per tile
MAX_PATCHES = 3
# The converter adds these after the Qwen2 tokens (InternVL3 is Qwen2.5-based).
INTERNVL_TOKENS = [
    "<img>",
    "</img>",
    "<IMG_CONTEXT>",
    "<quad>",
    "</quad>",
    "<ref>",
    "</ref>",
    "<box>",
    "</box>",
    "<video>",
]


# What the -hf checkpoints' processor files set (image statistics, tiles, frames at the tile size).
MEAN_STD = {"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}
IMAGE_PROCESSOR = {
    "size": {"height": TILE, "width": TILE},
    "crop_to_patches": False,  # as in the real preprocessor_config.json; the processor turns it on
    "min_patches": 1,
    "max_patches": MAX_PATCHES,
    **MEAN_STD,
}
VIDEO_PROCESSOR = {"size": {"height": TILE, "width": TILE}, **MEAN_STD}


def tokenizer_for(texts: list[str], **kwargs):
    """The Qwen tokenizer with the converter's InternVL tokens (``kwargs`` go to ``train_fast_tokenizer``)."""
    return train_fast_tokenizer(
        texts,
        _qwen.SPECIAL_TOKENS + INTERNVL_TOKENS,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens={
            "start_image_token": "<img>",
            "end_image_token": "</img>",
            "context_image_token": "<IMG_CONTEXT>",
            "video_token": "<video>",
        },
        **kwargs,
    )


def model_for(tokenizer, text_config: dict, *, seed: int, wide: bool = False):
    """A tiny ``InternVLForConditionalGeneration``: ``text_config`` (model type and what differs) over the
    Qwen text sizes, the tiny InternViT of 56-pixel tiles."""
    import torch
    from transformers import InternVLConfig, InternVLForConditionalGeneration

    config = InternVLConfig(
        text_config={
            **text_config,
            **_qwen.text_kwargs(tokenizer, wide=wide),
            "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0},
        },
        vision_config={
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": [TILE, TILE],
            "patch_size": [PATCH, PATCH],
        },
        image_token_id=tokenizer.convert_tokens_to_ids("<IMG_CONTEXT>"),
        image_seq_length=IMAGE_SEQ_LENGTH,
        downsample_ratio=DOWNSAMPLE,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = InternVLForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    return model


def build(out_dir: Path, texts: list[str], *, seed: int = 0, wide: bool = False) -> Path:
    from transformers.models.got_ocr2.image_processing_pil_got_ocr2 import GotOcr2ImageProcessorPil

    tokenizer = tokenizer_for(texts)
    model = model_for(tokenizer, {"model_type": "qwen2"}, seed=seed, wide=wide)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    write_processor(
        out,
        processor_class="InternVLProcessor",
        image_processor=GotOcr2ImageProcessorPil(**IMAGE_PROCESSOR),
        image_processor_type="GotOcr2ImageProcessor",
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        # InternVLVideoProcessor cannot be imported without torchvision: its settings that differ from
        # the class defaults, as the -hf checkpoints set them.
        video_processor=video_config("InternVLVideoProcessor", **VIDEO_PROCESSOR),
        image_seq_length=IMAGE_SEQ_LENGTH,
    )
    return out
