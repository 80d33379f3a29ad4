"""The corpus text rule (a string with a non-space character, ``\\S``) is screened column-wise with
arrow's ``utf8_is_space``; only the rows it flags go through jsonschema. The screen must flag every
text the rule rejects: arrow's whitespace must be Python's (``str.isspace``, what ``re``'s ``\\s`` uses)."""

from __future__ import annotations

import re
import sys

import pyarrow as pa
import pyarrow.compute as pc

from mvlsib.schema.validators import column_errors
from mvlsib.validation.invariants import _text_suspects
from mvlsib.workdir.corpus import Corpus, corpus_table


def test_arrow_whitespace_is_pythons_on_every_code_point():
    chars = [chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]
    arrow = pc.utf8_is_space(pa.array(chars)).to_pylist()
    differ = [c for c, a in zip(chars, arrow) if a != c.isspace()]
    assert differ == [], [hex(ord(c)) for c in differ]
    assert all((re.search(r"\S", c) is None) == c.isspace() for c in chars)


def test_screen_flags_exactly_the_texts_the_schema_rejects():
    texts = ["a", "", " ", "\u3000", "\u2028 \t", " b ", "\u200b", "\x85"]
    n = len(texts)
    corpus = Corpus(corpus_table(["eng_Latn"] * n, list(range(n)), ["dev"] * n, ["travel"] * n, texts))
    flagged = _text_suspects(corpus)["text"]
    assert [texts[i] for i in flagged] == ["", " ", "\u3000", "\u2028 \t", "\x85"]
    columns = {name: corpus.column(name) for name in corpus.names()}
    screened = column_errors("corpus_row", columns, suspects={"text": flagged})
    assert screened == column_errors("corpus_row", columns)  # the same findings as every row checked
    assert len(screened) == 5
