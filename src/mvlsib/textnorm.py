"""The one text normalisation used to decide whether two sentences read the same."""

from __future__ import annotations

import functools
import re
import unicodedata

import pyarrow.compute as pc

# Control characters a sentence may not hold, the one rule for every reader of texts (SIB-200 and Flores
# files at ingest, a corpus.parquet at every stage after): C0 (a tab is a character of the text, a
# line break is refused on its own), DEL, and the C1 controls that open a terminal sequence (DCS, SOS,
# CSI, OSC, PM, APC). SIB-200 itself holds other C1 characters (cp1252 quotes and dashes read as
# Latin-1, in cat_Latn): they stay, as the data has them.
_CONTROL_RANGES = ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x7F), (0x90, 0x90), (0x98, 0x98), (0x9B, 0x9B), (0x9D, 0x9F))
CONTROL_IN_TEXT = re.compile("[" + "".join(f"\\x{a:02x}-\\x{b:02x}" for a, b in _CONTROL_RANGES) + "]")
# The same class for arrow's RE2 (a column searched at once).
CONTROL_IN_TEXT_RE2 = "[" + "".join(f"\\x{{{a:02x}}}-\\x{{{b:02x}}}" for a, b in _CONTROL_RANGES) + "]"


def control_problem(text: str) -> str | None:
    """What is wrong with a sentence holding a terminal control character (the end of a message), or None."""
    if (bad := CONTROL_IN_TEXT.search(text)) is None:
        return None
    return (
        f"holds the control character U+{ord(bad.group()):04X} at position {bad.start()}, which a terminal acts "
        "on when the card or an export is shown; remove it from the file."
    )


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


# What str.split() splits on (Py_UNICODE_ISSPACE): the same 29 characters in Python 3.10-3.13
# (tests/test_textnorm.py compares this with str.isspace over every code point).
SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + "\u2028\u2029\u202f\u205f\u3000"
)
# A text needs its whitespace collapsed exactly when this RE2 pattern finds something in it.
_NEEDS_COLLAPSE = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in SPACES if c != " ") + "]|  |^ | $"


def normalize_many(texts, arrow_texts=None) -> list[str]:
    """``normalize_text`` of each text (non-strings give ""): the ~200k texts of a build in about
    a quarter of a CPU second. NFC in C (CPython returns an NFC text as it is). Then, given
    ``arrow_texts`` (the same texts as an arrow string array or column, which a build has), one RE2
    pass finds the texts with whitespace to collapse and only those are split and joined; NFC
    neither makes nor removes whitespace (it maps U+2000/U+2001 to other spaces), so the pass may
    look at the texts before NFC. Without it, a Python pass skips the texts ``collapse_whitespace``
    would return unchanged (converting them to arrow would cost more than it saves)."""
    texts = list(texts)
    if set(map(type, texts)) - {str}:
        return [normalize_text(t) if type(t) is str else "" for t in texts]
    nfc = list(map(functools.partial(unicodedata.normalize, "NFC"), texts))
    if arrow_texts is not None:
        if len(arrow_texts) != len(texts):
            raise ValueError(f"normalize_many: {len(arrow_texts)} arrow texts for {len(texts)} texts")
        mask = pc.match_substring_regex(arrow_texts, _NEEDS_COLLAPSE)
        if hasattr(mask, "combine_chunks"):
            mask = mask.combine_chunks()
        for n in pc.indices_nonzero(mask).to_pylist():
            nfc[n] = " ".join(nfc[n].split())
        return nfc
    # collapse_whitespace inlined: one Python call fewer per text.
    return [
        t if t.isprintable() and "  " not in t and t[:1] != " " and t[-1:] != " " else " ".join(t.split()) for t in nfc
    ]
