"""Letters after invisible characters: every Unicode format character (category Cf: BOM, zero-width
spaces and joiners, direction marks, soft hyphen, ...) anywhere in a response reads as if it were not
there, in every mode. Table-driven over all Cf code points, and hypothesis over where they go."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mvlsib.evaluation.run.parsing import MODES, parse_letter

FORMAT_CHARS = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
# Responses the parser reads (or refuses) in every mode, wrapped the ways models wrap letters.
CASES = ["B", "(C)", "**A**", "D.", "Ｂ", "C. because it is about sports", "The answer is D", "Apple", "no idea", "b)"]


def _insert_everywhere(text: str, ch: str) -> list[str]:
    return [text[:i] + ch + text[i:] for i in range(len(text) + 1)]


def test_the_table_holds_the_known_culprits():
    assert len(FORMAT_CHARS) > 150
    for ch in "\ufeff\u200b\u200c\u200d\u2060\u200e\u200f\u00ad\u202a\u2066":
        assert ch in FORMAT_CHARS


@pytest.mark.parametrize("ch", FORMAT_CHARS, ids=lambda c: f"U+{ord(c):04X}")
def test_every_format_character_anywhere_is_invisible_to_the_parser(ch):
    for case in CASES:
        want = {mode: parse_letter(case, mode) for mode in MODES}
        for planted in _insert_everywhere(case, ch):
            assert {mode: parse_letter(planted, mode) for mode in MODES} == want, (case, planted)


def test_bom_and_zero_width_space_before_the_letter():
    for response in ("\ufeffB", "\u200bB", "\ufeff\u200b(B)", "\u2060**B**"):
        assert parse_letter(response, "strict") == parse_letter(response, "relaxed") == "B"
    assert parse_letter("\ufeff", "relaxed") is None and parse_letter("\u200b" * 5, "lenient") is None


@settings(max_examples=400)
@given(
    st.sampled_from(CASES),
    st.lists(st.tuples(st.integers(0, 60), st.sampled_from(FORMAT_CHARS)), max_size=6),
)
def test_any_mix_of_format_characters_reads_as_without_them(case, inserts):
    planted = case
    for position, ch in inserts:
        position %= len(planted) + 1
        planted = planted[:position] + ch + planted[position:]
    for mode in MODES:
        assert parse_letter(planted, mode) == parse_letter(case, mode), (mode, planted)


@given(st.text(alphabet=st.sampled_from(FORMAT_CHARS), min_size=1, max_size=8), st.sampled_from("ABCD"))
def test_a_word_split_by_format_characters_stays_a_word(invisible, letter):
    # "A<ZWSP>pple" is the word Apple to a reader: not the answer A
    assert parse_letter(letter + invisible + "pple", "relaxed") is None
