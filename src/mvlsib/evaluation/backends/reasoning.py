"""Thinking blocks: how the reasoning families mark them, and the part of a response that answers.

A backend needs these to budget and cut thinking (``hf``) or to tell an empty answer from one
still thinking (``openai``); answer parsing (``run/parsing.py``) strips them before reading a letter.
"""

from __future__ import annotations

# (open, close) markers of a thinking block, as the reasoning families' chat templates write them:
# Qwen3 / Qwen3.5 / Qwen3-VL-Thinking / GLM-4.1V-Thinking / DeepSeek-R1 style, Kimi-VL-Thinking, and
# Gemma 4's thought channel (google/gemma-4-*-it template: "<|channel>thought\n...<channel|>").
REASONING_MARKERS = (
    ("<think>", "</think>"),
    ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
    ("<|channel>", "<channel|>"),
)
# Tags some reasoning templates put around the final answer (GLM-4.1V).
ANSWER_WRAPPERS = (("<answer>", "</answer>"), ("<|begin_of_box|>", "<|end_of_box|>"))


def opens_unclosed_thinking(response: str) -> bool:
    """Does the response open a thinking block it never closes (the model was cut off while thinking)?"""
    return any(opener in response and closer not in response for opener, closer in REASONING_MARKERS)


def strip_reasoning(response: str) -> str:
    """The part of a response that answers: thinking blocks removed, answer tags unwrapped.

    The prompt may already have opened the block (a template whose generation prompt ends
    in ``<think>``), so a close marker without its opener also ends the thinking; an opener
    that is never closed means the model was still thinking: nothing is answered.
    """
    for opener, closer in REASONING_MARKERS:
        if closer in response:
            response = response[response.rindex(closer) + len(closer) :]
        elif opener in response:
            response = response[: response.index(opener)]
    for opener, closer in ANSWER_WRAPPERS:
        start = response.find(opener)
        if start != -1:
            end = response.find(closer, start)
            response = response[start + len(opener) : end if end != -1 else len(response)]
    return response
