"""Greedy decoding, thinking blocks and reading the answer back: what every batch's ``generate`` shares.

- ``NEUTRAL_DECODING``: greedy whatever the checkpoint's generation_config ships;
- ``opens_thinking``: does the chat template (or its kwargs) turn thinking on (a reasoning model),
  which then gets its own new-token budget or is refused;
- ``TokenDecoder``: new tokens to text, special tokens dropped except reasoning markers;
- ``library_failures``: an exception inside the model's own code as one line naming family, library, version;
- ``outputs_differ``: the comparison behind the self-checks of the feature cache and KV-prefix reuse.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..._compat import MvlsibError
from ..base import one_line
from ..reasoning import REASONING_MARKERS
from .inputs import template_reads

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
# Prompt markers by which a template turns thinking on without opening the block itself: the model
# opens it in its response (Gemma 4: "<|think|>" at the top of the system turn, then the model writes
# "<|channel>thought ... <channel|>"; google/gemma-4-*-it chat template).
THINKING_SWITCHES = ("<|think|>",)
# Template kwargs that turn thinking on when true (Qwen3, Qwen3.5, GLM, Gemma 4: enable_thinking;
# DeepSeek-V3.1: thinking).
THINKING_KWARGS = ("enable_thinking", "thinking")
# Tokens kept when decoding although a tokenizer may have made them special: parsing needs them.
REASONING_TOKENS = frozenset(marker for pair in REASONING_MARKERS for marker in pair)


def opens_thinking(processor: Any, template_kwargs: dict[str, Any], max_new_tokens: int, thinking_budget: int) -> bool:
    """Is thinking on: does the generation prompt open a thinking block, carry a marker that turns
    thinking on (the model then opens the block itself), or do the template kwargs ask for it? Then
    the model reasons before it answers and needs a budget for it; with none
    (``--thinking-max-new-tokens 0``) it is refused."""
    probe = [{"role": "user", "content": [{"type": "text", "text": "Answer with the letter."}]}]
    try:
        text = processor.apply_chat_template(
            probe, add_generation_prompt=True, tokenize=False, **template_reads(processor, template_kwargs)
        )
    except Exception as exc:  # a template error is the user's to fix: say which
        raise MvlsibError(f"the chat template cannot be rendered: {one_line(exc)}") from None
    opens = (
        text.rstrip().endswith(THINKING_OPENERS)
        or any(switch in text for switch in THINKING_SWITCHES)
        or any(template_kwargs.get(name) is True for name in THINKING_KWARGS)
    )
    if opens and thinking_budget < 1:
        raise MvlsibError(
            "the chat template opens a thinking block (or turns thinking on for the model to open one), so the "
            f"model reasons before it answers and {max_new_tokens} new tokens never reach an answer; give "
            "--thinking-max-new-tokens "
            "N (e.g. 2048), or switch thinking off if the template allows it "
            "(--chat-template-kwargs '{\"enable_thinking\": false}')"
        )
    return opens


def stopped(row: Any, eos: Any) -> bool:
    """Did this row of new tokens end on a stop token (rather than run out of budget)?"""
    stops = set(eos) if isinstance(eos, (list, tuple)) else {eos}
    return any(int(t) in stops for t in row)


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


@contextlib.contextmanager
def library_failures(model: Any) -> Iterator[None]:
    """An exception raised inside the model's own code (its forward or generate, in transformers, the
    model's remote code or torch beneath them) becomes one line naming the family and the libraries'
    versions: a library bug (Llama 4 in transformers 5.24) is no traceback of ours, and the run folder
    keeps every answer written so far, to be resumed by the same command. Our own faults (the deepest
    frame outside those libraries) and running out of memory are left as they are."""
    try:
        yield
    except MvlsibError:
        raise
    except Exception as exc:
        where = _failing_code(exc)
        if where is None or type(exc).__name__ == "OutOfMemoryError":
            raise
        config = getattr(model, "config", None)
        family = getattr(config, "model_type", None) or "?"
        versions = f"transformers {_version('transformers')}, torch {_version('torch')}"
        raise MvlsibError(
            f"the model's own code failed ({family}, {type(model).__name__}; {versions}; in {where}): "
            f"{type(exc).__name__}: {one_line(exc).rstrip('.')}. This is a fault of the model's code or of the "
            "libraries it runs on, not of the inputs: try another transformers version or report it there; "
            "the answers written so far are kept and the same command resumes the run"
        ) from None


LIBRARIES = ("transformers_modules", "transformers", "torch")  # the model's remote code, transformers, torch


def _failing_code(exc: BaseException) -> str | None:
    """Where the model's code was (file:line) when ``exc`` was raised inside the libraries it runs on
    (the deepest frame in torch, transformers or the model's remote code), else None: ours, or a test's."""
    frames = traceback.extract_tb(exc.__traceback__)
    packages = [next((p for p in LIBRARIES if p in Path(f.filename).parts), None) for f in frames]
    if not frames or packages[-1] is None:
        return None
    model_frames = [f for f, p in zip(frames, packages) if p in ("transformers", "transformers_modules")]
    frame = (model_frames or frames)[-1]
    where = f"{Path(frame.filename).name}:{frame.lineno}"
    return f"the model's remote code {where}" if "transformers_modules" in Path(frame.filename).parts else where


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"
