"""The answer parser: worked examples and hypothesis properties."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mvlsib.evaluation.run.parsing import MODES, parse_letter

LETTERS = "ABCD"

EXAMPLES = [
    # response, strict, relaxed, lenient
    ("C", "C", "C", "C"),
    ("(C)", "C", "C", "C"),
    ("**A**", "A", "A", "A"),
    ("*B*", "B", "B", "B"),
    ("[D]", "D", "D", "D"),
    ('"B"', "B", "B", "B"),
    ("'A'.", "A", "A", "A"),
    ("`C`", "C", "C", "C"),
    ("  \n B.", "B", "B", "B"),
    ("C)", "C", "C", "C"),
    ("D. because the sentence is about sports", None, "D", "D"),
    ("A: the images show a stadium", None, "A", "A"),
    ("B\n\nExplanation: ...", None, "B", "B"),
    ("c", "C", "C", "C"),
    ("b)", "B", "B", "B"),
    # letters written in other scripts
    ("С", "C", "C", "C"),  # Cyrillic Es
    ("А.", "A", "A", "A"),  # Cyrillic A
    ("(В)", "B", "B", "B"),  # Cyrillic Ve
    ("Β", "B", "B", "B"),  # Greek Beta
    ("Α) politics", None, "A", "A"),  # Greek Alpha
    ("Ｄ", "D", "D", "D"),  # full-width
    ("（Ｃ）", "C", "C", "C"),  # full-width parentheses
    ("Ⓑ", "B", "B", "B"),  # circled
    ("𝐀", "A", "A", "A"),  # mathematical bold
    # format errors
    ("", None, None, None),
    ("E", None, None, None),
    ("According to the images", None, None, None),
    ("a sentence about sports", None, None, None),
    ("Apple", None, None, None),
    ("AAAA", None, None, None),
    ("I cannot tell.", None, None, None),
    # only the opt-in lenient fallback reads cues
    ("The answer is C", None, None, "C"),
    ("Answer: (B)", None, None, "B"),
    ("I would pick option D.", None, None, "D"),
    ("the answer is a sentence", None, None, None),
]


@pytest.mark.parametrize("response,strict,relaxed,lenient", EXAMPLES)
def test_examples(response, strict, relaxed, lenient):
    assert parse_letter(response, "strict") == strict
    assert parse_letter(response, "relaxed") == relaxed
    assert parse_letter(response, "lenient") == lenient


def test_none_and_bad_mode():
    assert parse_letter(None) is None
    with pytest.raises(ValueError, match="parse mode"):
        parse_letter("A", "fuzzy")


OPENERS = st.sampled_from(["", "(", "[", "*", "**", '"', "'", "`", "“", "« ", "_", "  ", "\n", "**(", "（"])
CLOSERS = st.sampled_from(["", ")", "]", "*", "**", '"', "'", ".", ":", "）", ").", "**."])
LETTER_FORMS = {
    "A": ["A", "Ａ", "Ⓐ", "А", "Α", "𝐀"],
    "B": ["B", "Ｂ", "Ⓑ", "В", "Β"],
    "C": ["C", "Ｃ", "Ⓒ", "С"],
    "D": ["D", "Ｄ", "Ⓓ"],
}


@st.composite
def wrapped(draw):
    letter = draw(st.sampled_from(LETTERS))
    form = draw(st.sampled_from(LETTER_FORMS[letter]))
    return letter, draw(OPENERS) + form + draw(CLOSERS)


@given(wrapped())
def test_wrapped_letter_is_read_strictly(case):
    letter, response = case
    assert parse_letter(response, "strict") == letter
    assert parse_letter(response, "relaxed") == letter


@given(wrapped(), st.sampled_from([" ", "\n", ". ", ": ", ") "]), st.text(min_size=1, max_size=40))
def test_relaxed_reads_letter_before_any_explanation(case, sep, tail):
    letter, response = case
    assert parse_letter(response + sep + tail, "relaxed") == letter


@given(st.sampled_from(LETTERS), st.text(alphabet=st.characters(categories=["Ll", "Lu"]), min_size=1, max_size=10))
def test_letter_that_starts_a_word_is_not_an_answer(letter, rest):
    assert parse_letter(letter + rest, "relaxed") is None
    assert parse_letter(letter + rest, "strict") is None


# Text without any character that folds or maps to an option letter. The parser NFKC-folds
# first, so every character whose NFKC form contains a-d (ª, ᵃ, ⓐ, ᴬ, ...) is excluded too.
def _folds_to_letter(ch: str) -> bool:
    return bool(set(unicodedata.normalize("NFKC", ch).lower()) & set("abcd"))


_NO_LETTERS = st.text(
    alphabet=st.characters(
        blacklist_characters="АВСасΑΒαᎪᏴᏟᎠԀ",
        blacklist_categories=["Cs"],
        max_codepoint=0x2FFF,
    ).filter(lambda ch: not _folds_to_letter(ch)),
    max_size=60,
)


@given(_NO_LETTERS)
def test_text_without_letters_is_a_format_error(text):
    for mode in MODES:
        assert parse_letter(text, mode) is None


@settings(max_examples=300)
@given(st.text(max_size=80))
def test_modes_are_nested_and_never_raise(text):
    strict, relaxed, lenient = (parse_letter(text, m) for m in MODES)
    for value in (strict, relaxed, lenient):
        assert value is None or value in LETTERS
    if strict is not None:
        assert relaxed == strict
    if relaxed is not None:
        assert lenient == relaxed
