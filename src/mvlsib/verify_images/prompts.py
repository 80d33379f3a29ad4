"""The question verify-images asks about each image, in every option order and language."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mvlsib.evaluation.backends import Request
from mvlsib.release_format.mvl_sib import TOPICS

from .rotations import LETTERS, rotate


def question_text(names: Sequence[str]) -> str:
    """The question shown after the image; ``names`` in presented order (A first)."""
    options = "\n".join(f"{LETTERS[i]}. {name}" for i, name in enumerate(names))
    return (
        "Which of these topics does the image show?\n"
        f"{options}\n"
        "Answer with the option's letter from the given choices directly."
    )


@dataclass(frozen=True)
class Ask:
    """One prompt: ``image_id`` asked in ``language`` with the topics rotated by ``shift``."""

    image_id: str
    language: str
    shift: int
    order: tuple[str, ...]  # canonical topics in presented order (A first)
    names: tuple[str, ...]  # the names shown, in presented order


def plan_asks(
    image_ids: Sequence[str], names_by_language: dict[str, tuple[str, ...]], shifts: Sequence[int]
) -> list[Ask]:
    return [
        Ask(image_id, lang, shift, tuple(rotate(TOPICS, shift)), tuple(rotate(names, shift)))
        for image_id in image_ids
        for lang, names in names_by_language.items()
        for shift in shifts
    ]


def ask_request(ask: Ask) -> Request:
    content = [{"type": "image", "image_id": ask.image_id}, {"type": "text", "text": question_text(ask.names)}]
    return Request(
        key=f"{ask.image_id}|{ask.language}|{ask.shift}",
        messages=({"role": "user", "content": content},),
        image_ids=(ask.image_id,),
    )
