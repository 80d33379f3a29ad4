"""Greedy decoding, thinking blocks and reading the answer back: what every batch's ``generate`` shares.

- ``NEUTRAL_DECODING``: greedy whatever the checkpoint's generation_config ships;
- ``opens_thinking``: does the chat template open a thinking block (a reasoning model), which
  then gets its own new-token budget or is refused;
- ``TokenDecoder``: new tokens to text, special tokens dropped except reasoning markers;
- ``outputs_differ``: the comparison behind the self-checks of the feature cache and KV-prefix reuse.
"""

from __future__ import annotations

from typing import Any

from ..._compat import MvlsibError
from ...parsing import REASONING_MARKERS
from ..base import one_line

# Generation settings that make decoding greedy whatever the checkpoint's generation_config says
# (a shipped repetition penalty or n-gram block would otherwise change answers silently).
NEUTRAL_DECODING = {
    "do_sample": False,
    "num_beams": 1,
    "temperature": 1.0,
    "top_p": 1.0,
    "top_k": 50,
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "length_penalty": 1.0,
    "min_new_tokens": 0,
}

# A template whose generation prompt ends in one of these has opened a thinking block.
THINKING_OPENERS = tuple(opener for opener, _ in REASONING_MARKERS)
# Tokens kept when decoding although a tokenizer may have made them special: parsing needs them.
REASONING_TOKENS = frozenset(marker for pair in REASONING_MARKERS for marker in pair)


def opens_thinking(processor: Any, template_kwargs: dict[str, Any], max_new_tokens: int, thinking_budget: int) -> bool:
    """Does the generation prompt open a thinking block? Then the model reasons before it
    answers and needs a budget for it; with none (``--thinking-max-new-tokens 0``) it is refused."""
    probe = [{"role": "user", "content": [{"type": "text", "text": "Answer with the letter."}]}]
    try:
        text = processor.apply_chat_template(probe, add_generation_prompt=True, tokenize=False, **template_kwargs)
    except Exception as exc:  # a template error is the user's to fix: say which
        raise MvlsibError(f"the chat template cannot be rendered: {one_line(exc)}") from None
    opens = text.rstrip().endswith(THINKING_OPENERS)
    if opens and thinking_budget < 1:
        raise MvlsibError(
            "the chat template opens a thinking block, so the model reasons before it answers and "
            f"{max_new_tokens} new tokens never reach an answer; give --thinking-max-new-tokens N "
            "(e.g. 2048), or switch thinking off if the template allows it "
            "(--chat-template-kwargs '{\"enable_thinking\": false}')"
        )
    return opens


def decoding(model: Any, tokenizer: Any, budget: int) -> dict[str, Any]:
    """The ``generate`` settings of a batch: greedy, ``budget`` new tokens, the model's own EOS."""
    gen = getattr(model, "generation_config", None)
    eos = getattr(gen, "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    return {**NEUTRAL_DECODING, "max_new_tokens": budget, "pad_token_id": tokenizer.pad_token_id, "eos_token_id": eos}


class TokenDecoder:
    """New tokens to text: special tokens dropped, except reasoning markers a tokenizer may have made special."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._dropped: frozenset[int] | None = None

    def __call__(self, token_ids: Any) -> str:
        if self._dropped is None:
            self._dropped = frozenset(
                i
                for i in (getattr(self.tokenizer, "all_special_ids", None) or [])
                if self.tokenizer.convert_ids_to_tokens(i) not in REASONING_TOKENS
            )
        ids = [int(t) for t in token_ids if int(t) not in self._dropped]
        return self.tokenizer.decode(ids, skip_special_tokens=False)


def outputs_differ(plain: Any, plain_width: int, ours: Any, our_width: int, dtype: Any) -> str | None:
    """What differs between two ``generate`` outputs (``return_dict_in_generate``, ``output_logits``)
    of one batch: the new tokens exactly, the first step's logits beyond allclose. None: nothing."""
    import torch

    a_tokens, b_tokens = plain.sequences[:, plain_width:], ours.sequences[:, our_width:]
    if tuple(a_tokens.shape) != tuple(b_tokens.shape) or not torch.equal(a_tokens, b_tokens):
        return "generated tokens differ"
    a, b = plain.logits[0].float(), ours.logits[0].float()
    # fp32 on the same device: differences only from summation order; bf16/fp16 round far more.
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    if not torch.allclose(a, b, rtol=tol, atol=tol * max(1.0, float(a.abs().max()))):
        return f"first-step logits differ (max {float((a - b).abs().max()):.3g})"
    return None


# Asked for when a batch runs both ways (plain and with a reuse) to compare them.
COMPARED = {"return_dict_in_generate": True, "output_logits": True}
