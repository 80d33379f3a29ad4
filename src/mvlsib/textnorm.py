"""The one text normalisation used to decide whether two sentences read the same."""

from __future__ import annotations

import unicodedata


def normalize_text(text: str) -> str:
    """NFC, then every run of whitespace collapsed to one space, ends stripped.

    Two sentences with the same normalised text cannot be told apart by a reader,
    so an instance that contains both would have two correct answers.
    """
    return " ".join(unicodedata.normalize("NFC", text).split())
