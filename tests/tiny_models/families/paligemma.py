"""Tiny random-weight PaliGemma (``PaliGemmaForConditionalGeneration``), built as the real checkpoints are.

PaliGemma has **no chat template** (google/paligemma-3b-mix-224 and friends ship none): it is a
prefix-LM prompted as ``<image>`` x n + ``<bos>`` + prefix + ``\\n``; the processor inserts the
``<bos>`` after the last ``<image>`` and the trailing newline itself, and expands each
``<image>`` to ``image_seq_length`` image tokens. ``apply_chat_template`` therefore fails on it;
the evaluator has to refuse it in one line or use the prefix path. Tiny here: a SigLIP tower
on 56-pixel images of 14-pixel patches -> 16 image tokens per image, a Gemma text model.
The processor adds the 1024 ``<locNNNN>`` and 128 ``<segNNN>`` tokens, as it does for the real ones.
"""

from __future__ import annotations

from pathlib import Path

from ._common import finish, save, train_fast_tokenizer

FAMILY = "paligemma"
KIND = "generative"
TEMPLATE_SOURCE = "none: PaliGemma checkpoints ship no chat template (prefix-LM prompt built by PaliGemmaProcessor)"
CHAT_TEMPLATE = None

IMAGE_SIZE = 56
PATCH = 14
IMAGE_SEQ_LENGTH = (IMAGE_SIZE // PATCH) ** 2
# Gemma's special tokens in the real ids' order (<pad>=0, <eos>=1, <bos>=2, <unk>=3); <image> is added after.
SPECIAL_TOKENS = ["<pad>", "<eos>", "<bos>", "<unk>", "<image>"]


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import PaliGemmaConfig, PaliGemmaForConditionalGeneration, PaliGemmaProcessor
    from transformers.models.siglip.image_processing_pil_siglip import SiglipImageProcessorPil

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
        unk_token="<unk>",
        padding_side="left",  # GemmaTokenizer's default, which the real checkpoints use
        extra_special_tokens={"image_token": "<image>"},
    )
    image_processor = SiglipImageProcessorPil(
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        resample=3,
    )
    image_processor.image_seq_length = IMAGE_SEQ_LENGTH  # a key of the real preprocessor_config.json
    processor = PaliGemmaProcessor(image_processor=image_processor, tokenizer=tokenizer)
    hidden = 64
    config = PaliGemmaConfig(
        vision_config={
            "model_type": "siglip_vision_model",
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "image_size": IMAGE_SIZE,
            "patch_size": PATCH,
            "projection_dim": hidden,
        },
        text_config={
            "model_type": "gemma",
            "vocab_size": len(tokenizer),
            "hidden_size": hidden,
            "intermediate_size": hidden * 2,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 1,
            "head_dim": hidden // 4,
            "max_position_embeddings": 4096,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        projection_dim=hidden,
        hidden_size=hidden,
        vocab_size=len(tokenizer),
    )
    torch.manual_seed(seed)
    model = PaliGemmaForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    return save(model, processor, Path(out_dir))
