"""What every tiny family builder needs: a locally trained tokenizer and the prompt vocabulary."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from mvlsib.release_format.mvl_sib import TOPICS

from ..llava import train_bpe

# The English prompt scaffolding of the evaluator and verify-images, so that its words are cheap to encode.
SCAFFOLD = [
    "Each image and each sentence is about one of these topics: " + ", ".join(TOPICS) + ".",
    "Which option matches the topic? Answer with the option's letter from the given choices directly.",
    "Images: Sentences: Options: A. B. C. D. E. F. G. Topic: Image: Sentence:",
    "You are a helpful assistant. user assistant system model",
]


def train_fast_tokenizer(
    texts: Iterable[str],
    special_tokens: Sequence[str],
    *,
    vocab_size: int = 800,
    tokenizer_class=None,
    **named_tokens,
):
    """A byte-level BPE fast tokenizer trained on ``texts`` + the prompt scaffolding.

    ``special_tokens`` become single, never-split tokens (ids in the given order, from 0);
    ``named_tokens`` are passed to the tokenizer class (``bos_token="<s>"``,
    ``extra_special_tokens={...}``, ...). ``tokenizer_class`` defaults to
    ``PreTrainedTokenizerFast``; pass the family's own fast class where its processor checks it.
    """
    from transformers import PreTrainedTokenizerFast

    tok = train_bpe(list(texts) + SCAFFOLD, vocab_size, list(special_tokens))
    cls = tokenizer_class or PreTrainedTokenizerFast
    return cls(tokenizer_object=tok, **named_tokens)


def favour_letters(model, tokenizer, scale: float = 3.0) -> None:
    """Scale the output rows of the tokens ``A``-``D`` so the random model mostly answers a letter
    (which one depends on the input): parsing and scoring then see answers, not only garbage."""
    import torch

    head = model.get_output_embeddings().weight
    typical = head.norm(dim=1).mean()
    with torch.no_grad():
        for letter in "ABCD":
            ids = tokenizer.encode(letter, add_special_tokens=False)
            if len(ids) == 1:
                row = head[ids[0]]
                row *= scale * typical / row.norm()


# A text model's attention at a head dimension vLLM's CPU attention takes (a multiple of 32): 2 query heads
# and 1 key/value head of 64 where the default has 4 heads of 16 (``build(..., wide=True)``).
WIDE_ATTENTION = dict(num_attention_heads=2, num_key_value_heads=1, head_dim=64)

# The vision tower every tiny family uses where its config takes these names.
TINY_VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)


def tiny_llama_text(tokenizer, **overrides) -> dict:
    """A Llama-style text config (hidden size 64, 2 layers) with the tokenizer's special-token ids."""
    return {
        **dict(
            vocab_size=len(tokenizer),
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=4,
            max_position_embeddings=4096,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
        ),
        **overrides,
    }


def finish(model, tokenizer, eos=None) -> None:
    """What every tiny model gets before saving: answers that are often letters, and the
    generation config's special-token ids (``eos``: the checkpoint's stop tokens, default the
    tokenizer's EOS)."""
    favour_letters(model, tokenizer)
    if tokenizer.bos_token_id is not None:
        model.generation_config.bos_token_id = tokenizer.bos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id if eos is None else eos


def save(model, processor, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
