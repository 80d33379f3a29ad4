"""The one text normalisation, computed the fast way for a whole corpus, must equal
`normalize_text` text by text."""

from __future__ import annotations

import unicodedata

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mvlsib.textnorm import SPACES, normalize_many, normalize_text

EVERY_CHARACTER = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def test_spaces_are_what_str_split_splits_on():
    assert set(SPACES) == {c for c in EVERY_CHARACTER if c.isspace()}
    assert all(len(f"a{c}b".split()) == 2 for c in SPACES)


def test_nfc_neither_makes_nor_removes_whitespace():
    """The premise of looking for whitespace before NFC: no character decomposes to whitespace
    unless it is whitespace, and whitespace stays whitespace."""
    for c in EVERY_CHARACTER:
        decomposed = unicodedata.normalize("NFD", c)
        assert any(x.isspace() for x in decomposed) == c.isspace(), hex(ord(c))
        if c.isspace():
            assert all(x.isspace() for x in unicodedata.normalize("NFC", c)), hex(ord(c))


ALPHABET = st.sampled_from(
    [
        " ",
        "  ",
        *SPACES,
        "a",
        "e",
        "Z",
        "\u0301",
        "\u0308",
        "\u0323",
        "\u00e9",
        "\u1e9b",
        "\u200b",
        "\u200c",
        "\u00ad",
        "\u0915",
        "\u093f",
        "\u3042",
        "\U0001f600",
        "\u2126",
        "\u212b",
        "\uac00",
        "\u1100",
        "\u1161",
        "x\u0301 ",
        "\u0000",
        "\x7f",
    ]
)
TEXTS = st.lists(st.lists(ALPHABET, max_size=12).map("".join), max_size=30)


@settings(max_examples=400, deadline=None)
@given(texts=TEXTS)
def test_every_way_gives_normalize_text(texts):
    expected = [normalize_text(t) for t in texts]
    assert normalize_many(texts) == expected
    assert normalize_many(texts, pa.array(texts, pa.string())) == expected
    assert normalize_many(texts, pa.chunked_array([pa.array(texts, pa.string())], pa.string())) == expected


def test_non_strings_and_a_wrong_arrow_column():
    assert normalize_many(["a  b", None, 3]) == ["a b", "", ""]
    with pytest.raises(ValueError, match="2 arrow texts for 3 texts"):
        normalize_many(["a", "b", "c"], pa.array(["a", "b"], pa.string()))


def test_a_corpus_normalises_the_texts_it_hands_out():
    """Corpus.normalized uses the table's text column for the arrow pass only when its text list
    came from that table; a list given beside a table is normalised as given."""
    from mvlsib.workdir.corpus import Corpus

    table = pa.table(
        {
            "language": ["eng_Latn"] * 2,
            "index_id": [1, 2],
            "split": ["dev"] * 2,
            "topic": ["health"] * 2,
            "text": ["a  b", "c"],
        }
    )
    assert Corpus(table).normalized() == ["a b", "c"]
    given = Corpus(table, columns={"text": ["x", " y  z "]})
    assert given.normalized() == ["x", "y z"]
