"""The two halves of each rule of the run files (``evaluation/run/run_files.py``: a check written without
jsonschema, since it ships in releases, and its JSON Schema fragment, from which ``json_schema(kind)``
builds the ``prediction``, ``run_config`` and ``run_metrics`` schemas): on generated records, whatever the
schema refuses the reader refuses too, and the reader refuses nothing the schema accepts except integral
floats (``1.0`` as a k or a label), which JSON Schema counts as integers and the reader, on purpose, does not."""

from __future__ import annotations

import functools
import math

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mvlsib.evaluation.run.run_files import METRICS_FIELDS, config_error, field_error, json_schema, prediction_error


@functools.cache
def _validator(kind: str) -> Draft202012Validator:
    schema = json_schema(kind)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def is_valid(kind: str, record) -> bool:
    return _validator(kind).is_valid(record)


PREDICTION = {
    "task": "s2i",
    "k": 3,
    "language": "eng_Latn",
    "instance_id": "12-1",
    "prompt_sha256": "0" * 64,
    "response": "(C)",
    "letter": "C",
    "label": 2,
    "correct": True,
    "image_ids": ["a", "b", "c", "d"],
}
CONFIG = {
    "fingerprint": {
        "data": "/data/rel",
        "model": "m",
        "backend": "openai",
        "languages": ["eng_Latn", "arb_Arab"],
        "tasks": [["s2t", 1], ["t2s", 1], ["i2s", 5]],
        "limit": 3,
        "limit_mode": "stratified",
        "shard_count": 2,
        "max_new_tokens": 8,
        "prompts_sha256": "ab",
        "release_manifest_sha256": None,
        "dtype": "float32",
    },
    "n_expected": 6,
    "n_expected_run": 12,
    "complete": False,
    "parse_mode": "relaxed",
    "groups": {"family": {"eng_Latn": "Germanic"}},
    "shard": "0/2",
    "missing_shards": [],
    "backend": None,
    "versions": {"mvlsib": "1"},
}
METRICS = {
    "n_predictions": 12,
    "macro": [{"task": "s2t", "k": 1, "accuracy": 0.5, "n": 6, "n_languages": 2}],
    "per_language": [],
}

# Values a field could be planted with: each field's legal neighbours and every JSON type.
DOMAIN = [
    None, True, False, 0, 1, 3, 5, 6, -1, 99, 1.0, 2.5, "", "A", "E", "a", "s2t", "t2s", "x2y", "eng_Latn",
    "english", "12-1", "12-3", "0/2", "zero", "relaxed", "loose", "first", "random", "0" * 64, "G" * 64,
    [], ["x"], [1], [None], [["s2t", 1]], [["t2s", 3]], [["x2y", 1]], ["s2t"], ["eng_Latn"], ["0/2"],
    {}, {"a": 1}, {"g": {"eng_Latn": "x"}}, {"g": {"eng_Latn": 1}}, {"g": "eng_Latn"},
]  # fmt: skip
VALUES = st.one_of(st.sampled_from(DOMAIN), st.text(max_size=8), st.integers(-5, 70), st.floats(allow_nan=False))


def _integral_float(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value) and value == int(value)
    if isinstance(value, list):
        return any(_integral_float(v) for v in value)
    if isinstance(value, dict):
        return any(_integral_float(v) for v in value.values())
    return False


def _agree(schema: str, reader_ok: bool, record, changed) -> None:
    schema_ok = is_valid(schema, record)
    assert schema_ok or not reader_ok, f"the reader accepts what {schema} refuses: {record}"
    assert reader_ok or not schema_ok or _integral_float(changed), f"the reader refuses a valid record: {record}"


def test_the_examples_are_valid():
    assert prediction_error(PREDICTION) is None and is_valid("prediction", PREDICTION)
    assert config_error(CONFIG) is None and is_valid("run_config", CONFIG)
    assert field_error(METRICS, METRICS_FIELDS) is None and is_valid("run_metrics", METRICS)


@settings(max_examples=600)
@given(st.sampled_from([*PREDICTION, "extra"]), st.one_of(VALUES, st.just(KeyError)))
def test_prediction_reader_agrees_with_the_schema(field, value):
    record = dict(PREDICTION)
    if value is KeyError:
        record.pop(field, None)
    else:
        record[field] = value
    _agree("prediction", prediction_error(record) is None, record, value)


@settings(max_examples=600)
@given(
    st.sampled_from([*CONFIG, *(f"fingerprint.{f}" for f in CONFIG["fingerprint"])]),
    st.one_of(VALUES, st.just(KeyError)),
)
def test_config_reader_agrees_with_the_schema(field, value):
    record = {**CONFIG, "fingerprint": dict(CONFIG["fingerprint"])}
    node, name = (record["fingerprint"], field.split(".")[1]) if "." in field else (record, field)
    if value is KeyError:
        node.pop(name, None)
    else:
        node[name] = value
    _agree("run_config", config_error(record) is None, record, value)


@settings(max_examples=300)
@given(st.sampled_from([*METRICS, "extra"]), st.one_of(VALUES, st.just(KeyError)))
def test_metrics_reader_agrees_with_the_schema(field, value):
    record = dict(METRICS)
    if value is KeyError:
        record.pop(field, None)
    else:
        record[field] = value
    _agree("run_metrics", field_error(record, METRICS_FIELDS) is None, record, value)
