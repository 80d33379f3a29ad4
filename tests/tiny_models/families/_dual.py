"""Shared builder of the tiny SigLIP-style dual encoders (``siglip``, ``siglip2``)."""

from __future__ import annotations

from pathlib import Path

from ._common import train_fast_tokenizer

# Facts of the real checkpoints (google/siglip-base-patch16-224, google/siglip2-base-patch16-naflex):
# texts are padded to 64 tokens, the pad token is also the EOS-less filler, the text tower has no
# attention mask, so the padding length changes the embedding.
TEXT_LENGTH = 64
SPECIAL_TOKENS = ["<pad>", "</s>", "<unk>", "<bos>", "<eos>"]


def tokenizer_for(texts: list[str], *, model_max_length: int):
    return train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        vocab_size=600,
        pad_token="<pad>",
        eos_token="</s>",
        unk_token="<unk>",
        model_max_length=model_max_length,
    )


def towers(vocab: int, pad_id: int, eos_id: int) -> tuple[dict, dict]:
    text = dict(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=TEXT_LENGTH,
        pad_token_id=pad_id,
        eos_token_id=eos_id,
        bos_token_id=None,
    )
    vision = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
    return text, vision


def save(model, processor, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
