"""What the Qwen-VL family builders share: the Qwen2 special tokens, tokenizer, tiny text config."""

from __future__ import annotations

from pathlib import Path

from . import _common
from ._common import train_fast_tokenizer
from ._processor_files import write_processor

# The Qwen2 special tokens in the real checkpoints' order (<|endoftext|> first, as id 151643 is).
SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
# Single tokens that the real Qwen tokenizers do NOT mark special, so that decoding with
# skip_special_tokens=True keeps them (a Thinking model's "<think>...</think>" stays visible).
PLAIN_ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<think>", "</think>"]


def qwen_tokenizer(texts: list[str], special_tokens: list[str] = SPECIAL_TOKENS):
    """A Qwen-style tokenizer: no BOS, ``<|im_end|>`` ends a turn, ``<|endoftext|>`` pads."""
    from tokenizers import AddedToken

    tokenizer = train_fast_tokenizer(
        texts,
        special_tokens,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",  # as the real tokenizer_config.json
        extra_special_tokens={"image_token": "<|image_pad|>", "video_token": "<|video_pad|>"},
    )
    tokenizer.add_tokens([AddedToken(t, normalized=False, special=False) for t in PLAIN_ADDED_TOKENS])
    return tokenizer


# vLLM's CPU attention takes only head dimensions that are multiples of 32: a "wide" tiny model has
# 2 heads of 64 (1 key/value head) where the default has 4 heads of 16.
WIDE_HIDDEN = 128


def text_kwargs(tokenizer, hidden: int = 64, *, wide: bool = False) -> dict:
    if wide:
        hidden = WIDE_HIDDEN
    return dict(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=2,
        num_attention_heads=2 if wide else 4,
        num_key_value_heads=1 if wide else 2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def vision_tower(out_hidden_size: int, patch_size: int, merge_size: int, **family) -> dict:
    """The tiny vision tower of Qwen2.5-VL, Qwen3-VL and Qwen3.5 (their ``vision_config``): two blocks of
    width 32, 2-frame patches merged ``merge_size`` x ``merge_size``; ``family`` adds what differs."""
    return {
        "depth": 2,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_heads": 2,
        "out_hidden_size": out_hidden_size,
        "patch_size": patch_size,
        "spatial_merge_size": merge_size,
        "temporal_patch_size": 2,
        **family,
    }


def vision_token_ids(tokenizer) -> dict:
    ids = tokenizer.convert_tokens_to_ids
    return dict(
        image_token_id=ids("<|image_pad|>"),
        video_token_id=ids("<|video_pad|>"),
        vision_start_token_id=ids("<|vision_start|>"),
        vision_end_token_id=ids("<|vision_end|>"),
    )


def image_processor(patch_size: int, merge_size: int = 2, max_merged: int = 4):
    """Qwen2-VL's image processor (PIL backend) at the real patch size, with a pixel budget of at
    most ``max_merged`` x ``max_merged`` merged patches (``min_pixels``/``max_pixels`` are the same
    knobs the real ``preprocessor_config.json`` sets): ≤ 16 image tokens by default."""
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    unit = patch_size * merge_size
    return Qwen2VLImageProcessorPil(
        patch_size=patch_size,
        merge_size=merge_size,
        temporal_patch_size=2,
        min_pixels=unit * unit,
        max_pixels=(max_merged * unit) ** 2,
    )


def video_settings(image_processor) -> dict:
    """The image processor's saved settings that a Qwen2-VL / Qwen2.5-VL checkpoint's video processor is
    built from: those checkpoints ship only ``preprocessor_config.json``, and transformers reads the
    video processor's config from it."""
    saved = image_processor.to_dict()
    keys = (
        "patch_size",
        "merge_size",
        "temporal_patch_size",
        "size",
        "min_pixels",
        "max_pixels",
        "image_mean",
        "image_std",
    )
    return {key: saved[key] for key in keys if key in saved}


def finish(
    model,
    tokenizer,
    out: Path,
    *,
    processor_class: str,
    image_processor,
    chat_template: str,
    video_processor: dict,
) -> Path:
    """Favour letters, set generation ids, save weights and the processor files (``video_processor``:
    the saved video-processor config, so the folder loads where torchvision works too)."""
    model.eval()
    # The real generation_config.json stops on both <|im_end|> and <|endoftext|>.
    _common.finish(model, tokenizer, eos=[tokenizer.eos_token_id, tokenizer.pad_token_id])
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    write_processor(
        out,
        processor_class=processor_class,
        image_processor=image_processor,
        image_processor_type="Qwen2VLImageProcessor",
        tokenizer=tokenizer,
        chat_template=chat_template,
        video_processor=video_processor,
    )
    return out
