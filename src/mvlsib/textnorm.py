"""The one text normalisation used to decide whether two sentences read the same."""

from __future__ import annotations

import functools
import unicodedata


def normalize_text(text: str) -> str:
    """NFC, then every run of whitespace collapsed to one space, ends stripped.

    Two sentences with the same normalised text cannot be told apart by a reader,
    so an instance that contains both would have two correct answers.
    """
    return " ".join(unicodedata.normalize("NFC", text).split())


def collapse_whitespace(text: str) -> str:
    """Every run of whitespace collapsed to one space, ends stripped (no NFC)."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        # isprintable() is False for every character str.split() splits on except the space,
        # so such a text has single inner spaces only: split/join would return it unchanged.
        return text
    return " ".join(text.split())


def normalize_many(texts) -> list[str]:
    """``normalize_text`` of each text (non-strings give ""): the ~200k texts of a build in a few
    tenths of a second (NFC in C; split/join only for texts ``collapse_whitespace`` cannot skip)."""
    texts = list(texts)
    if set(map(type, texts)) - {str}:
        return [normalize_text(t) if type(t) is str else "" for t in texts]
    nfc = map(functools.partial(unicodedata.normalize, "NFC"), texts)
    # collapse_whitespace inlined: one Python call fewer per text.
    return [t if t.isprintable() and "  " not in t and t[:1] != " " and t[-1:] != " " else " ".join(t.split())
            for t in nfc]
