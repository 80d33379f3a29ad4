"""Tiny random-weight Qwen2.5-VL (``Qwen2_5_VLForConditionalGeneration``) with the real chat template.

Qwen2.5-VL ships the very template of Qwen2-VL (ChatML, default system turn, each image in
place as ``<|vision_start|><|image_pad|><|vision_end|>``); the architecture differs (window
attention in the vision tower, SwiGLU, absolute-time mrope). Same pixel budget as the tiny
Qwen2-VL: at most 112x112 pixels, i.e. at most 16 image tokens.
"""

from __future__ import annotations

from pathlib import Path

from . import _qwen, qwen2_vl
from ._processor_files import video_config

FAMILY = "qwen2_5_vl"
KIND = "generative"
WIDE = True
TEMPLATE_SOURCE = (
    "Hub Qwen/Qwen2.5-VL-7B-Instruct chat_template.json: character for character the Qwen2-VL-7B-Instruct "
    "template (see qwen2_vl.TEMPLATE_SOURCE); public copy: the Hub API dump of a Qwen2.5-VL-7B checkpoint "
    "(mit-han-lab/StreamingVLM, processor_config.chat_template == tokenizer_config.chat_template)"
)
CHAT_TEMPLATE = qwen2_vl.CHAT_TEMPLATE

PATCH_SIZE = 14
MERGE_SIZE = 2


def build(out_dir: Path, texts: list[str], *, seed: int = 0, wide: bool = False) -> Path:
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    tokenizer = _qwen.qwen_tokenizer(texts)
    text = _qwen.text_kwargs(tokenizer, wide=wide)
    config = Qwen2_5_VLConfig(
        text_config={
            **text,
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 1000000.0,
                "mrope_section": qwen2_vl.mrope_section(wide),
            },
        },
        vision_config=_qwen.vision_tower(
            text["hidden_size"],
            PATCH_SIZE,
            MERGE_SIZE,
            window_size=112,  # the real window (8x8 patches): one window covers a whole tiny image
            fullatt_block_indexes=[1],  # the real model alternates windowed and full-attention blocks
        ),
        **_qwen.vision_token_ids(tokenizer),
    )
    image_processor = _qwen.image_processor(PATCH_SIZE, MERGE_SIZE)
    torch.manual_seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(config)
    return _qwen.finish(
        model,
        tokenizer,
        Path(out_dir),
        processor_class="Qwen2_5_VLProcessor",
        image_processor=image_processor,
        chat_template=CHAT_TEMPLATE,
        video_processor=video_config("Qwen2VLVideoProcessor", **_qwen.video_settings(image_processor)),
    )
