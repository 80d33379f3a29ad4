"""The schema fast path (issue #15): it may only say "valid" where jsonschema does, and
``is_valid`` gives jsonschema's answer for every value, valid or not."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from mvlsib.schema.validators import SCHEMA_NAMES, compile_column, compile_fast, is_valid, load_schema, validator

INSTANCE = {
    "instance_id": "12-1",
    "index_id": 12,
    "topic": "sports",
    "ref_sentence_ids": [12, 40, 7, 99, 3],
    "ref_image_ids": ["sports_1", "sports_4", "sports_0", "sports_9", "sports_2"],
    "neg_topics": ["health", "travel", "politics"],
    "sentence_option_ids": [5, 12, 80, 33],
    "sentence_label": 1,
    "image_option_ids": ["health_2", "sports_1", "travel_0", "politics_7"],
    "topic_options": ["health", "sports", "travel", "politics"],
    "image_label": 1,
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 2100)
    | st.floats(allow_nan=False)
    | st.sampled_from([0.0, 1.0, 3.0, True, False, "", " ", "sports", "sports_1", "12-1", "eng_Latn", "x\u00a0", "ab"])
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=400)
@given(field=st.sampled_from(sorted(INSTANCE) + ["extra"]), value=json_values, drop=st.booleans())
def test_instance_fast_path_agrees_with_jsonschema(field, value, drop):
    _agrees_on_one_change("instance", INSTANCE, field, value, drop)


def _agrees_on_one_change(schema: str, record: dict, field: str, value, drop: bool) -> None:
    """``record`` with ``field`` set to ``value`` (or removed): the fast path says "valid" only
    where jsonschema does, and ``is_valid`` is jsonschema's answer."""
    rec = copy.deepcopy(record)
    if drop and field in rec:
        del rec[field]
    else:
        rec[field] = value
    truth = validator(schema).is_valid(rec)
    fast = compile_fast(validator(schema).schema)
    assert fast is not None and fast(record)
    if fast(rec):
        assert truth, rec
    assert is_valid(schema, rec) == truth


@settings(max_examples=300)
@given(name=st.sampled_from(SCHEMA_NAMES), value=json_values)
def test_every_column_fast_path_agrees_with_jsonschema(name, value):
    from jsonschema import Draft202012Validator

    for column, rule in validator(name).schema["properties"].items():
        truth = Draft202012Validator(rule).is_valid(value)
        fast = compile_fast(rule)
        if fast is not None and fast(value):
            assert truth, (name, column, value)
        assert is_valid(name, value, column) == truth


def test_fast_path_accepts_real_records_and_rejects_broken_ones():
    fast = compile_fast(validator("instance").schema)
    assert fast(INSTANCE)
    for field, bad in [
        ("ref_sentence_ids", [12, 12, 7, 99, 3]),
        ("sentence_label", 4),
        ("topic", "cooking"),
        ("ref_image_ids", ["sports_1"] * 5),
        ("instance_id", "12-3"),
    ]:
        rec = {**INSTANCE, field: bad}
        assert not fast(rec) and not is_valid("instance", rec)
    corpus = compile_fast(load_schema("corpus_row")["properties"]["text"])
    assert corpus("Ein Satz.") and not corpus("") and not corpus("   ")


MANIFEST_ROW = {
    "image_id": "sports_1",
    "topic": "sports",
    "file": "sports/sports_1.jpg",
    "license": "CC-BY-4.0",
    "author": "A. Photographer",
    "source_url": "https://example.org/x",
    "sha256": "0" * 64,
    "title": "A race",
}


@settings(max_examples=300)
@given(
    field=st.sampled_from(sorted(MANIFEST_ROW) + ["notes"]),
    value=json_values | st.sampled_from(["../x.png", "/etc/x", "C:x", "a/../b", "a/..", "ok/..x"]),
    drop=st.booleans(),
)
def test_manifest_fast_path_agrees_with_jsonschema(field, value, drop):
    """The manifest schema ("not" on the file path, typed extra columns) is decided by the fast path too."""
    _agrees_on_one_change("manifest_row", MANIFEST_ROW, field, value, drop)


@settings(max_examples=300)
@given(name=st.sampled_from(SCHEMA_NAMES), values=st.lists(json_values, max_size=5))
def test_whole_column_check_only_passes_valid_columns(name, values):
    """compile_column says "valid" for a column only when jsonschema accepts every value."""
    from jsonschema import Draft202012Validator

    for column, rule in validator(name).schema["properties"].items():
        whole = compile_column(rule)
        if whole is not None and whole(values):
            assert all(Draft202012Validator(rule).is_valid(v) for v in values), (name, column, values)


def test_whole_column_check_on_the_real_corpus(full_corpus):
    """The corpus columns of a real build pass whole; one bad value anywhere makes the column fail."""
    rules = load_schema("corpus_row")["properties"]
    columns = {c: full_corpus[c].astype(object).tolist() for c in rules}
    for column, rule in rules.items():
        check = compile_column(rule)
        assert check is not None and check(columns[column]), column
    texts = columns["text"]
    assert not compile_column(rules["text"])(texts[:-1] + ["\u00a0 "])
    assert not compile_column(rules["index_id"])(columns["index_id"][:-1] + [2009])
    assert not compile_column(rules["index_id"])(columns["index_id"][:-1] + [True])
    assert not compile_column(rules["topic"])(columns["topic"][:-1] + ["cooking"])


def test_the_text_rule_shortcut_is_the_regex_for_every_character():
    """compile_column decides the corpus text rule (pattern \\S) with str.isspace: the same answer
    as re for every code point, alone and among other characters."""
    import re

    search = re.compile(r"\S").search
    for code in range(0x110000):
        c = chr(code)
        assert (search(c) is None) == c.isspace(), hex(code)
    check = compile_column(load_schema("corpus_row")["properties"]["text"])
    assert check(["a", " a", "a\u3000", "\u200b"])  # a zero-width space is not whitespace to re
    for bad in ["", " ", "\u3000", "\u00a0 \u2009", "\t\n", "\x1c\x1f\x85"]:
        assert not check(["Ein Satz.", bad]), repr(bad)


@settings(max_examples=300)
@given(
    changes=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from(sorted(INSTANCE) + ["extra"]), json_values, st.booleans()),
        max_size=3,
    )
)
def test_all_valid_only_for_all_valid_records(changes):
    """all_valid (instances checked a column at a time) agrees with jsonschema record by record."""
    from mvlsib.schema.validators import all_valid

    records = [copy.deepcopy(INSTANCE) for _ in range(4)]
    for n, field, value, drop in changes:
        if drop and field in records[n]:
            del records[n][field]
        else:
            records[n][field] = value
    truth = all(validator("instance").is_valid(r) for r in records)
    if all_valid("instance", records):
        assert truth, records
    if not changes:
        assert all_valid("instance", records)
