"""Tiny random-weight Qwen3-VL with the real Qwen3-VL-*-Thinking chat template.

Same architecture and processor as ``qwen3_vl``; the template differs: its generation
prompt is ``<|im_start|>assistant\\n<think>\\n``, so the model's answer comes after a
reasoning block it has to close with ``</think>`` (a random model rarely does: the
evaluator must handle an answer that is all "thinking"). ``<think>``/``</think>`` are
single, non-special tokens as in the real tokenizer, so ``skip_special_tokens`` keeps them.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from .qwen3_vl import build_with_template

FAMILY = "qwen3_vl_thinking"
KIND = "generative"
TEMPLATE_SOURCE = (
    "Hub Qwen/Qwen3-VL-8B-Thinking (and -4B-Thinking) chat_template.json (render_content macro, "
    "'<think>\\n' generation prompt); public copies: an LM Studio per-model config (jinjaPromptTemplate) "
    "and the Mano-CUA agent's template_str (a Qwen3-VL-4B derivative), identical; stored verbatim in "
    "qwen3_vl_thinking.jinja"
)
CHAT_TEMPLATE = files(__package__).joinpath("qwen3_vl_thinking.jinja").read_text(encoding="utf-8")


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    return build_with_template(out_dir, texts, CHAT_TEMPLATE, seed=seed)
