"""The JSON Schemas are valid Draft 2020-12, ship as package data, and accept/reject real records."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from mvlsib.schema.validators import SCHEMA_NAMES, frame_errors, load_schema, schema_errors

GOOD_INSTANCE = {
    "instance_id": "431-2",
    "index_id": 431,
    "topic": "geography",
    "ref_sentence_ids": [431, 1, 2, 3, 4],
    "ref_image_ids": ["geography_0", "geography_3", "geography_1", "geography_9", "geography_5"],
    "neg_topics": ["sports", "science/technology", "health"],
    "sentence_option_ids": [10, 431, 11, 12],
    "sentence_label": 1,
    "image_option_ids": ["sports_1", "geography_0", "science_technology_2", "health_4"],
    "topic_options": ["sports", "geography", "science/technology", "health"],
    "image_label": 1,
}


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_is_valid_2020_12(name):
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith(f"/{name}.schema.json")


def test_instance_schema():
    assert list(schema_errors("instance", GOOD_INSTANCE)) == []
    bad = dict(GOOD_INSTANCE, ref_image_ids=GOOD_INSTANCE["ref_image_ids"][:4], instance_id="431-3", colour="red")
    msgs = list(schema_errors("instance", bad))
    assert any(m.startswith("ref_image_ids:") for m in msgs)
    assert any(m.startswith("instance_id:") for m in msgs)
    assert any("colour" in m for m in msgs)


def test_release_row_reuses_instance_definitions():
    row = dict(
        GOOD_INSTANCE,
        language="eng_Latn",
        sentence="Turkey is encircled by seas.",
        ref_sentences=["a", "b", "c", "d", "e"],
        sentence_options=["w", "x", "y", "z"],
    )
    assert list(schema_errors("release_row", row)) == []
    assert any(m.startswith("sentence_label:") for m in schema_errors("release_row", dict(row, sentence_label=4)))
    assert any("language" in m for m in schema_errors("release_row", dict(row, language="English")))


def test_manifest_row_rejects_escaping_paths():
    row = {
        "image_id": "sports_0",
        "topic": "sports",
        "file": "sports/sports_0.png",
        "license": "CC0-1.0",
        "author": "x",
        "source_url": "https://example.org/a",
        "sha256": "0" * 64,
        "title": "extra columns are fine",
    }
    assert list(schema_errors("manifest_row", row)) == []
    for path in ("../outside.png", "/etc/passwd", "sports/../../x.png", "C:/x.png"):
        assert any(m.startswith("file:") for m in schema_errors("manifest_row", dict(row, file=path))), path


def test_prediction_schema():
    from jsonschema import Draft202012Validator

    from mvlsib.evaluation.run.run_files import json_schema

    check = Draft202012Validator(json_schema("prediction"))
    pred = {
        "task": "i2s",
        "k": 3,
        "language": "eng_Latn",
        "instance_id": "0-1",
        "prompt_sha256": "a" * 64,
        "response": "(C)",
        "letter": "C",
        "correct": True,
    }
    assert not check.is_valid(pred)  # no label
    pred["label"] = 2
    assert check.is_valid(pred)
    assert check.is_valid(dict(pred, letter=None, correct=False))
    assert not check.is_valid(dict(pred, task="x2y"))
    assert not check.is_valid(dict(pred, task="t2s", k=3))  # t2s has k = 1 only
    assert check.is_valid(dict(pred, image_ids=["a", "b", "c"]))
    assert not check.is_valid(dict(pred, image_ids=["a", "b"]))  # an i2s prompt with k = 3 shows 3 images


def test_frame_errors_matches_row_validation():
    import pandas as pd

    frame = pd.DataFrame(
        {
            "language": ["eng_Latn", "fra_Latn", "xx"],
            "index_id": [0, 1, 5000],
            "split": ["train", "dev", "valid"],
            "topic": ["sports", "health", "cooking"],
            "text": ["A sentence.", " ", "ok"],
        }
    )
    errors = frame_errors("corpus_row", frame, label_columns=("language", "index_id"))
    row_errors = [m for rec in frame.to_dict("records") for m in schema_errors("corpus_row", rec)]
    assert len(errors) == len(row_errors) == 5
    assert "fra_Latn/1: text: ' ' does not match '\\\\S'" in errors
    assert frame_errors("corpus_row", frame.iloc[:1]) == []


LIST_FAULTS = [
    ("ref_sentence_ids", [431, 1, 2, 3]),  # too short
    ("ref_sentence_ids", [431, 1, 2, 3, 3]),  # repeated
    ("ref_sentence_ids", [431, 1, 2, 3, True]),  # a bool is not an integer
    ("ref_sentence_ids", [431, 1, 2, 3, 4.5]),
    ("ref_sentence_ids", [431, 1, 2, 3, 5000]),  # out of range
    ("ref_sentence_ids", [431, 1, 2, 3, [4]]),
    ("ref_image_ids", ["geography_0", "geography_3", "geography_1", "geography_9", "Geography 5"]),
    ("neg_topics", ["sports", "science/technology", "cooking"]),
    ("sentence_option_ids", "10, 431, 11, 12"),
    ("sentence_option_ids", None),
    ("topic_options", ["sports", "geography", "science/technology", "health", "travel"]),
    ("sentence_option_ids", [1, True, 2, 3]),
]


@pytest.mark.parametrize(("field", "value"), LIST_FAULTS)
def test_column_errors_of_list_columns_equal_the_whole_value_check(field, value, monkeypatch):
    """The item-by-item shortcut for id lists finds what jsonschema finds list by list, and then
    the messages are jsonschema's own."""
    import mvlsib.schema.validators as v

    records = [GOOD_INSTANCE, dict(GOOD_INSTANCE, **{field: value}), GOOD_INSTANCE]
    columns = {name: [rec[name] for rec in records] for name in GOOD_INSTANCE}
    fast = v.column_errors("instance", columns)
    monkeypatch.setattr(v, "_lists_pass", lambda *a: False)
    assert fast == v.column_errors("instance", columns) != []
    assert all(m.startswith(f"row 1: {field}: ") for m in fast)
    monkeypatch.undo()
    good = {name: [GOOD_INSTANCE[name]] * 3 for name in GOOD_INSTANCE}
    assert v.column_errors("instance", good) == []
