"""The prompt templates of the four MVL-SIB tasks, written once.

Every prompt is a single user turn made of content parts (text and images, in the
order the model sees them). Backends turn the parts into their own format: the
``hf`` backend passes them through the processor's chat template, the ``openai``
backend sends them as chat-completion content parts. ``render_prompt_text`` shows a
prompt as plain text (``<image>`` where an image goes) for the dataset card and the
snapshot tests, which freeze the exact wording.

Design (see docs/evaluation/run.md, "fidelity notes"): the instruction is English and
always lists the seven topics; references come first, then the four options lettered
A-D; the prompt ends with the CVQA/M3Exam-style instruction to answer with the
option's letter directly, as in MVL-SIB's evaluation suite.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._compat import TASK_BY_NAME, TASK_TABLE, TASKS, TOPICS

LETTERS = ("A", "B", "C", "D")
IMAGE_PLACEHOLDER = "<image>"

# Bump when the wording changes; the snapshot tests fail until the snapshots are updated.
TEMPLATE_VERSION = 1

_TOPIC_LIST = ", ".join(TOPICS)
# Cross-modal tasks talk about images and sentences, their text-only mirrors about sentences only.
TOPIC_LINE_CROSS_MODAL = f"Each image and each sentence is about one of these topics: {_TOPIC_LIST}."
TOPIC_LINE_TEXT = f"Each sentence is about one of these topics: {_TOPIC_LIST}."
ANSWER_LINE = "Answer with the option's letter from the given choices directly."


@dataclass(frozen=True)
class Prompt:
    """One user turn: ``parts`` are ``{"type": "text", "text": ...}`` or ``{"type": "image", "image_id": ...}``."""

    parts: tuple[dict[str, str], ...]
    image_ids: tuple[str, ...] = field(default=())

    def messages(self) -> list[dict[str, Any]]:
        return [{"role": "user", "content": [dict(p) for p in self.parts]}]

    def text(self) -> str:
        return "".join(p["text"] if p["type"] == "text" else IMAGE_PLACEHOLDER for p in self.parts)


class _Builder:
    def __init__(self) -> None:
        self.parts: list[dict[str, str]] = []
        self.image_ids: list[str] = []

    def text(self, s: str) -> None:
        if self.parts and self.parts[-1]["type"] == "text":
            self.parts[-1] = {"type": "text", "text": self.parts[-1]["text"] + s}
        else:
            self.parts.append({"type": "text", "text": s})

    def image(self, image_id: str) -> None:
        self.parts.append({"type": "image", "image_id": str(image_id)})
        self.image_ids.append(str(image_id))

    def build(self) -> Prompt:
        return Prompt(tuple(self.parts), tuple(self.image_ids))


def _plural(k: int, one: str, many: str) -> str:
    return one if k == 1 else f"{k} {many}"


def _text_options(b: _Builder, options: Sequence[str]) -> None:
    for letter, option in zip(LETTERS, options):
        b.text(f"{letter}. {option}\n")


# How a references block is introduced, by the kind of reference (the task table's column).
_REFERENCE_HEADER = {"ref_image_ids": ("Image:", "images:"), "ref_sentences": ("Sentence:", "sentences:")}
_IMAGE_COLUMNS = ("ref_image_ids", "image_option_ids")


def build_prompt(task: str, references: Sequence[str], options: Sequence[str]) -> Prompt:
    """The prompt of one example: ``references``/``options`` as the loader gives them
    (image ids for images, texts for sentences, topic names for topics).

    The layout follows the task's row of the task table: its reference and option kinds
    decide how each is shown, its ``question`` is asked between them.
    """
    spec = TASK_BY_NAME.get(task)
    if spec is None:
        raise ValueError(f"unknown task {task!r}; expected one of {TASKS}")
    if len(options) != len(LETTERS):
        raise ValueError(f"{task}: expected {len(LETTERS)} options, got {len(options)}")
    k = len(references)
    if k < 1:
        raise ValueError(f"{task}: at least one reference is needed")
    b = _Builder()
    b.text((TOPIC_LINE_CROSS_MODAL if spec.cross_modal else TOPIC_LINE_TEXT) + "\n")
    if spec.references == "topic":
        b.text(f"Topic: {references[0]}\n")
    else:
        b.text(_plural(k, *_REFERENCE_HEADER[spec.references]).capitalize() + "\n")
        for reference in references:
            if spec.references in _IMAGE_COLUMNS:
                b.image(reference)
                b.text("\n")
            else:
                b.text(f"{reference}\n")
    one, many = spec.question
    b.text((one if k == 1 else many.format(k=k)) + "\nOptions:\n")
    if spec.options in _IMAGE_COLUMNS:
        for letter, image_id in zip(LETTERS, options):
            b.text(f"{letter}. ")
            b.image(image_id)
            b.text("\n")
    else:
        _text_options(b, options)
    b.text(ANSWER_LINE)
    return b.build()


def prompt_for_example(example: dict[str, Any]) -> Prompt:
    """The prompt of a loader example (``mvl_sib.load_task`` output)."""
    return build_prompt(example["task"], list(example["references"]), list(example["options"]))


def render_prompt_text(
    task: str, k: int = 1, references: Sequence[str] | None = None, options: Sequence[str] | None = None
) -> str:
    """A prompt as plain text, ``<image>`` where an image goes.

    Without ``references``/``options`` it renders the template with placeholders
    (``{SENTENCE 1}``, ``{OPTION A}``, ...): what the dataset card shows.
    """
    spec = TASK_BY_NAME[task]
    if references is None:
        if spec.references in _IMAGE_COLUMNS:
            references = [f"image_{i + 1}" for i in range(k)]
        elif spec.references == "topic":
            references = ["{TOPIC}"]
        else:
            references = [f"{{SENTENCE {i + 1}}}" for i in range(k)]
    if options is None:
        if spec.options in _IMAGE_COLUMNS:
            options = [f"option_{letter}" for letter in LETTERS]
        elif spec.options == "topic_options":
            options = [f"{{TOPIC {letter}}}" for letter in LETTERS]
        else:
            options = [f"{{SENTENCE {letter}}}" for letter in LETTERS]
    return build_prompt(task, references, options).text()


def template_renderings() -> dict[str, str]:
    """Every template (task x k) rendered with placeholders: what ``prompts_hash`` fingerprints."""
    out = {}
    for spec in TASK_TABLE:
        for k in spec.k_values:
            out[f"{spec.name}/k{k}"] = render_prompt_text(spec.name, k)
    return out


def prompts_hash() -> str:
    """sha256 of the templates; recorded in every run's config.json and checked on resume/merge."""
    payload = json.dumps(
        {"version": TEMPLATE_VERSION, "templates": template_renderings()}, ensure_ascii=False, sort_keys=True
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
