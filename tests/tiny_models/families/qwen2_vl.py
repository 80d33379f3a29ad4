"""Tiny random-weight Qwen2-VL (``Qwen2VLForConditionalGeneration``) with the real Qwen2-VL-Instruct chat template.

Real protocol kept: ChatML turns, a default system turn, each image rendered in place as
``<|vision_start|><|image_pad|><|vision_end|>`` and expanded by the processor to one
``<|image_pad|>`` per 2x2 merge of 14-pixel patches. The processor's ``min_pixels`` /
``max_pixels`` (knobs the real ``preprocessor_config.json`` sets too) keep each photo at most
112x112 pixels, i.e. at most 16 image tokens.
"""

from __future__ import annotations

from pathlib import Path

from . import _qwen
from ._processor_files import video_config

FAMILY = "qwen2_vl"
KIND = "generative"
WIDE = True
TEMPLATE_SOURCE = (
    "Hub Qwen/Qwen2-VL-7B-Instruct chat_template.json, as copied verbatim in "
    "huggingface/transformers tests/models/qwen2_vl/test_processing_qwen2_vl.py (prepare_processor_dict)"
)

# Verbatim; do not "fix" it: the evaluator must cope with what users really get.
CHAT_TEMPLATE = "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}{% for message in messages %}{% if loop.first and message['role'] != 'system' %}<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n{% else %}{% for content in message['content'] %}{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>{% elif content['type'] == 'video' or 'video' in content %}{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"

PATCH_SIZE = 14  # the real vision patch; only the pixel budget shrinks (at most 16 tokens per image)
MERGE_SIZE = 2


def mrope_section(wide: bool) -> list[int]:
    """How mrope splits each head's rotary half-dimension (64/4/2 = 8; wide: 128/2/2 = 32) over time,
    height and width, in the real checkpoints' proportions (16, 24, 24 of 64)."""
    return [8, 12, 12] if wide else [2, 3, 3]


def build(out_dir: Path, texts: list[str], *, seed: int = 0, wide: bool = False) -> Path:
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    tokenizer = _qwen.qwen_tokenizer(texts)
    text = _qwen.text_kwargs(tokenizer, wide=wide)
    config = Qwen2VLConfig(
        text_config={
            **text,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 1000000.0,
                "mrope_section": mrope_section(wide),
            },
        },
        vision_config={
            "depth": 2,
            "embed_dim": 32,
            "hidden_size": text["hidden_size"],
            "mlp_ratio": 2,
            "num_heads": 2,
            "patch_size": PATCH_SIZE,
            "spatial_merge_size": MERGE_SIZE,
            "temporal_patch_size": 2,
        },
        **_qwen.vision_token_ids(tokenizer),
    )
    image_processor = _qwen.image_processor(PATCH_SIZE, MERGE_SIZE)
    torch.manual_seed(seed)
    model = Qwen2VLForConditionalGeneration(config)
    return _qwen.finish(
        model,
        tokenizer,
        Path(out_dir),
        processor_class="Qwen2VLProcessor",
        image_processor=image_processor,
        chat_template=CHAT_TEMPLATE,
        video_processor=video_config("Qwen2VLVideoProcessor", **_qwen.video_settings(image_processor)),
    )
