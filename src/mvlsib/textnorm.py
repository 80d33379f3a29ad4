"""The one text normalisation used to decide whether two sentences read the same."""

from __future__ import annotations

import unicodedata


def normalize_text(text: str) -> str:
    """NFC, then every run of whitespace collapsed to one space, ends stripped.

    Two sentences with the same normalised text cannot be told apart by a reader,
    so an instance that contains both would have two correct answers.
    """
    return " ".join(unicodedata.normalize("NFC", text).split())


# Normalised texts of the last corpus seen: the build's sample and validate stages normalise
# the same ~200k texts; in one process (``mvlsib-build build``) the second stage reuses them.
_MEMO: dict[str, str] = {}
_MEMO_LIMIT = 1 << 20


def normalize_many(texts) -> list[str]:
    """``normalize_text`` of each text (non-strings give ""), remembered for the next call."""
    memo = _MEMO
    if len(memo) > _MEMO_LIMIT:
        memo.clear()
    out = []
    append = out.append
    for t in texts:
        n = memo.get(t) if type(t) is str else ""
        if n is None:
            n = memo[t] = normalize_text(t)
        append(n)
    return out
