"""InternVL 3.5 in the Hugging Face format (``OpenGVLab/InternVL3_5-{1B..14B}-HF``, ``InternVLForConditionalGeneration``):
the InternVL architecture with a **Qwen3** text model (q/k norms, explicit head_dim), built with the real
processor classes (``InternVLProcessor``, ``GotOcr2ImageProcessor``, the real ``InternVLVideoProcessor``).

What differs from ``internvl`` (InternVL3, Qwen2.5 text model) is the text model and the tokenizer's
``<think>``/``</think>`` (single, non-special tokens, as in Qwen3's tokenizer): InternVL 3.5's thinking
mode is switched on by a system prompt (the model card's ``R1_SYSTEM_PROMPT``) and the model answers
``<think>…</think>`` then the answer, which ``parsing.REASONING_MARKERS`` already reads.

Template: the InternVL-HF template of transformers' conversion script (the one ``internvl`` stores). The
-HF checkpoints' own ``chat_template.jinja`` was **not** reachable in any public copy searched (the Hub
repositories themselves are not reachable from here; the versions of transformers' converter found name
only InternVL2.5/3 checkpoints), so whether 3.5-HF ships exactly this string is not shown; what this module
tests is the 3.5 architecture under the InternVL processor and that template (docs/model_families.md).
Tiny sizes as ``internvl``: 56-pixel tiles, 4 tokens per tile, at most 3 tiles + a thumbnail.
"""

from __future__ import annotations

from pathlib import Path

from . import _qwen
from ._common import finish, train_fast_tokenizer
from .internvl import CHAT_TEMPLATE as INTERNVL_HF_TEMPLATE
from .internvl import DOWNSAMPLE, IMAGE_SEQ_LENGTH, INTERNVL_TOKENS, MAX_PATCHES, PATCH, TILE

FAMILY = "internvl3_5"
KIND = "generative"
NEEDS = ("torchvision",)
TEMPLATE_SOURCE = (
    "huggingface/transformers src/transformers/models/internvl/convert_internvl_weights_to_hf.py (chat_template, "
    "as the internvl module stores it); the OpenGVLab/InternVL3_5-*-HF checkpoints' own chat_template.jinja was "
    "not reachable, so it is not shown to be this string"
)
CHAT_TEMPLATE = INTERNVL_HF_TEMPLATE


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from tokenizers import AddedToken
    from transformers import (
        GotOcr2ImageProcessor,
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLProcessor,
        InternVLVideoProcessor,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        _qwen.SPECIAL_TOKENS + INTERNVL_TOKENS,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        extra_special_tokens={
            "start_image_token": "<img>",
            "end_image_token": "</img>",
            "context_image_token": "<IMG_CONTEXT>",
            "video_token": "<video>",
        },
    )
    # Qwen3's <think>/</think> (and tool-call tags): single tokens, not special, so decoding keeps them.
    tokenizer.add_tokens([AddedToken(t, normalized=False, special=False) for t in _qwen.PLAIN_ADDED_TOKENS])
    text = _qwen.text_kwargs(tokenizer)
    config = InternVLConfig(
        text_config={
            "model_type": "qwen3",
            **text,
            "head_dim": 16,
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
    image_processor = GotOcr2ImageProcessor(
        size={"height": TILE, "width": TILE},
        crop_to_patches=False,  # as in the real preprocessor_config.json; the processor turns it on
        min_patches=1,
        max_patches=MAX_PATCHES,
        image_mean=[0.485, 0.456, 0.406],
        image_std=[0.229, 0.224, 0.225],
    )
    video_processor = InternVLVideoProcessor(
        size={"height": TILE, "width": TILE}, image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225]
    )
    processor = InternVLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=IMAGE_SEQ_LENGTH,
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
