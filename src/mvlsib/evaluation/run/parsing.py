"""Reading the option letter out of a model's response.

Three modes, from the strictest:

- ``strict``: after whitespace and wrapping, the response is one option letter and
  nothing else but closing punctuation (``C``, ``(C)``, ``**A**``, ``B.``).
- ``relaxed`` (the paper's metric, the default): after leading whitespace and wrapping
  (``(``, ``[``, ``*``/``**``, ``_``, quotes, backticks) the response starts with an
  option letter that is not the start of a word (``D. because...`` reads D; ``According
  to ...`` reads nothing).
- ``lenient`` (opt-in): relaxed, else a letter after an explicit cue anywhere
  (``The answer is C``, ``Answer: (B)``, ``option D``).

Invisible format characters (Unicode category Cf: a byte-order mark ``\ufeff``, zero-width
spaces and joiners, direction marks, soft hyphens) are removed first, so ``\ufeffB`` and
``\u200bB`` read B. Letters are read after Unicode NFKC folding (full-width ``Ｃ``, circled ``Ⓒ``,
mathematical ``𝐂``) and after mapping look-alike capitals of other scripts
(Cyrillic ``А В С``, Greek ``Α Β``) to A-D. Lower-case letters count only when they
stand alone (``c``, ``c)``), so the English article ``a`` never reads as A.
``None`` means a format error: no option letter can be read.

Reasoning models think before they answer: a thinking block (``<think>...</think>`` and the
markers of ``REASONING_MARKERS``) is removed before the letter is read, and an answer wrapped
in answer tags (GLM-4.1V's ``<answer>...</answer>``, ``<|begin_of_box|>...<|end_of_box|>``)
is unwrapped. A thinking block that never closes (the token budget ran out while thinking)
leaves no answer: a format error. The raw response is what ``predictions.jsonl`` keeps.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ..backends.reasoning import strip_reasoning
from .prompts import LETTERS

MODES = ("strict", "relaxed", "lenient")

# Capital letters of other scripts that look like (and are typed for) A-D.
_CONFUSABLES = {
    "\u0410": "A",  # CYRILLIC CAPITAL LETTER A
    "\u0412": "B",  # CYRILLIC CAPITAL LETTER VE
    "\u0421": "C",  # CYRILLIC CAPITAL LETTER ES
    "\u0430": "a",  # cyrillic small a
    "\u0441": "c",  # cyrillic small es
    "\u0391": "A",  # GREEK CAPITAL LETTER ALPHA
    "\u0392": "B",  # GREEK CAPITAL LETTER BETA
    "\u03b1": "a",  # greek small alpha (only ever read when standing alone)
    "\u13aa": "A",  # CHEROKEE LETTER GO (looks like A)
    "\u13f4": "B",  # CHEROKEE LETTER YV (looks like B)
    "\u13df": "C",  # CHEROKEE LETTER TLI (looks like C)
    "\u13a0": "D",  # CHEROKEE LETTER A (looks like D)
    "\u0500": "D",  # CYRILLIC CAPITAL LETTER KOMI DE (looks like D)
}
_TRANSLATE = str.maketrans(_CONFUSABLES)

# Opening wrappers stripped before the letter; closing ones allowed after it (strict).
_OPENERS = "([{<*_\"'`“‘«‹„‚「『【〔（［｛"
_CLOSERS = ")]}>*_\"'`”’»›」』】〕）］｝.:,;!。、："
_LEAD = re.compile(r"^[\s" + re.escape(_OPENERS) + r"]*")
# The cue word in any case; the letter itself upper case, so "the answer is a sentence" reads nothing.
_CUE_PATTERN = (
    r"(?i:answer|option|choice|letter)\s*(?i:is|would be|:|=|-)?\s*[\s"
    + re.escape(_OPENERS)
    + r"]*([@LETTERS@])(?![^\W\d_])"
)
_CUE = re.compile(_CUE_PATTERN.replace("@LETTERS@", "A-D"))


@functools.cache
def _cue_for(letters: tuple[str, ...]) -> re.Pattern[str]:
    # Other letter sets (verify-images asks with 7 options, A-G) get their own cue pattern.
    return re.compile(_CUE_PATTERN.replace("@LETTERS@", re.escape("".join(letters))))


def drop_format_characters(text: str) -> str:
    """``text`` without its Unicode format characters (category Cf): they are invisible, so a reader
    sees the letter after them, and a BOM or zero-width space must not hide it from us either."""
    if text.isascii():  # no Cf character is ASCII
        return text
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def normalize(response: str) -> str:
    """Drop format characters, NFKC-fold and map look-alike letters of other scripts onto Latin."""
    return drop_format_characters(unicodedata.normalize("NFKC", response)).translate(_TRANSLATE)


def _letter_at_start(text: str, letters: tuple[str, ...] = LETTERS) -> tuple[str | None, str]:
    """The option letter the text starts with after wrappers, and the rest after it."""
    lead = _LEAD.match(text)  # always matches (possibly nothing)
    body = text[lead.end() if lead else 0 :]
    if not body:
        return None, ""
    first, rest = body[0], body[1:]
    # A letter followed by another letter starts a word ("According", "Apple"), not an answer.
    if rest and (rest[0].isalpha() or rest[0].isdigit()):
        return None, rest
    if first in letters:
        return first, rest
    if first.upper() in letters and first.islower():
        # Lower case only when it stands alone or is closed like an option label ("c", "c)", "c.").
        if not rest.strip() or rest.lstrip()[:1] in tuple(_CLOSERS) and not rest.startswith(" "):
            return first.upper(), rest
    return None, rest


def parse_letter(response: str | None, mode: str = "relaxed", letters: tuple[str, ...] = LETTERS) -> str | None:
    """The option letter (``"A"``-``"D"``, or one of ``letters``) read from ``response``, or ``None``."""
    if mode not in MODES:
        raise ValueError(f"unknown parse mode {mode!r}; expected one of {MODES}")
    if not response:
        return None
    text = normalize(strip_reasoning(response))
    letters = tuple(letters)
    letter, rest = _letter_at_start(text, letters)
    if mode == "strict":
        if letter is None or rest.strip(_CLOSERS + " \t\r\n"):
            return None
        return letter
    if letter is not None:
        return letter
    if mode == "lenient":
        match = (_CUE if letters == LETTERS else _cue_for(letters)).search(text)
        if match:
            return match.group(1).upper()
    return None
