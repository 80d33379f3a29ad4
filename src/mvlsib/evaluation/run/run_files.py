"""The one reader of each file of a run folder: predictions (``predictions*.jsonl``), ``config*.json``
and ``metrics.json``.

A run folder may have been edited, torn, copied from elsewhere or planted; everything downstream
(scoring, report, compare, items, correlate, merge, resume) indexes records by their fields. So a
file is parsed through ``readers`` (size, depth and number-length bounds, no NaN) and every
record is checked field by field against the rules below before anything else sees it; the first
violation becomes one ``MvlsibError`` naming the file, the line and the field, and what to do.

Each file kind is declared once, here, as a table of fields and their rules (``PREDICTION_FIELDS``,
``CONFIG_FIELDS`` with ``FINGERPRINT_FIELDS``, ``METRICS_FIELDS``). A rule is both a check written without
``jsonschema`` (the evaluator ships in releases with no dependency beyond its own leaves) and the same rule
as a JSON Schema fragment, from which ``json_schema(kind)`` builds each file's JSON Schema (what the docs
publish and the tests validate with ``jsonschema``; ``tests/schema/test_run_files_schema.py`` checks on
generated records that both halves of every rule agree).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .._compat import TASK_BY_NAME, TASK_TABLE, TASKS, MvlsibError, readers
from .parsing import MODES as PARSE_MODES
from .prompts import LETTERS as LETTER_VALUES
from .subset import SUBSET_MODES

# A response of a reasoning model with a large token budget stays far below this; a line above it
# is not one of ours.
MAX_LINE_BYTES = readers.KINDS["prediction_line"].max_bytes
MAX_JSON_FILE_BYTES = readers.KINDS["run_config"].max_bytes
MAX_IMAGE_IDS = 64
K_RANGE = (
    min(k for t in TASK_BY_NAME.values() for k in t.k_values),
    max(k for t in TASK_BY_NAME.values() for k in t.k_values),
)

_LANGUAGE = re.compile(r"[a-z]{3}_[A-Z][a-z]{3}")
_INSTANCE = re.compile(r"[0-9]{1,9}-[0-2]")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# At most this many shards (a run has fewer prompts than that): the one bound for --shard, the
# environment's SLURM/torchrun counts and the shard fields of the files written.
MAX_SHARDS = 999_999
_SHARD = re.compile(rf"[0-9]{{1,{len(str(MAX_SHARDS))}}}/[0-9]{{1,{len(str(MAX_SHARDS))}}}")

Check = Callable[[Any], "str | None"]  # None when the value is fine, else what is wrong with it


class Rule:
    """One field's rule, declared once: ``check(value)`` says what is wrong (None: nothing) and ``schema`` is
    the same rule as a JSON Schema fragment."""

    __slots__ = ("check", "schema")

    def __init__(self, check: Check, schema: dict[str, Any]) -> None:
        self.check, self.schema = check, schema

    def __call__(self, value: Any) -> str | None:
        return self.check(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _string(pattern: re.Pattern[str] | None = None, what: str = "a string") -> Rule:
    def check(value: Any) -> str | None:
        if not isinstance(value, str) or (pattern is not None and not pattern.fullmatch(value)):
            return f"must be {what}, got {_shown(value)}"
        return None

    return Rule(check, {"type": "string", **({"pattern": f"^{pattern.pattern}$"} if pattern is not None else {})})


def _one_of(choices: tuple, what: str) -> Rule:
    def check(value: Any) -> str | None:
        # `True in (1,)` holds in Python; a bool is never one of our choices
        if isinstance(value, bool) or not isinstance(value, (str, int, type(None))) or value not in choices:
            return f"must be {what}, got {_shown(value)}"
        return None

    return Rule(check, {"enum": list(choices)})


def _integer(low: int, high: int | None = None, *, null: bool = False) -> Rule:
    def check(value: Any) -> str | None:
        if value is None and null:
            return None
        if not _is_int(value) or value < low or (high is not None and value > high):
            span = f"{low}..{high}" if high is not None else f">= {low}"
            return f"must be an integer {span}{' or null' if null else ''}, got {_shown(value)}"
        return None

    schema: dict[str, Any] = {"type": ["integer", "null"] if null else "integer", "minimum": low}
    if high is not None:
        schema["maximum"] = high
    return Rule(check, schema)


_boolean = Rule(
    lambda value: None if isinstance(value, bool) else f"must be true or false, got {_shown(value)}",
    {"type": "boolean"},
)


def _nullable(rule: Rule) -> Rule:
    return Rule(lambda value: None if value is None else rule(value), {"anyOf": [rule.schema, {"type": "null"}]})


def _list_of(item: Rule, what: str, max_items: int | None = None) -> Rule:
    def check(value: Any) -> str | None:
        if not isinstance(value, list):
            return f"must be a list of {what}, got {_shown(value)}"
        if max_items is not None and len(value) > max_items:
            return f"must hold at most {max_items} items, got {len(value)}"
        for n, v in enumerate(value):
            why = item(v)
            if why is not None:
                return f"item {n} {why}"
        return None

    return Rule(check, {"type": "array", "items": item.schema, **({"maxItems": max_items} if max_items else {})})


def _object(what: str = "an object") -> Rule:
    return Rule(
        lambda value: None if isinstance(value, dict) else f"must be {what}, got {_shown(value)}", {"type": "object"}
    )


def _check_task_k(value: Any) -> str | None:
    if not (isinstance(value, list) and len(value) == 2 and value[0] in TASKS and _is_int(value[1])):
        return f"must be a [task, k] pair with a task of {', '.join(TASKS)}, got {_shown(value)}"
    if value[1] not in TASK_BY_NAME[value[0]].k_values:
        return f"has k={value[1]}, which task {value[0]} does not have"
    return None


_task_k = Rule(
    _check_task_k,
    {
        "type": "array",
        "minItems": 2,
        "maxItems": 2,
        "anyOf": [
            {"prefixItems": [{"const": t.name}, {"type": "integer", "enum": list(t.k_values)}]} for t in TASK_TABLE
        ],
    },
)


def _check_groups(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f"must be an object {{grouping: {{language: group}}}}, got {_shown(value)}"
    for name, table in value.items():
        if not isinstance(table, dict) or not all(isinstance(g, str) for g in table.values()):
            return f"grouping {_shown(name)} must map languages to group names, got {_shown(table)}"
    return None


_groups = Rule(
    _check_groups,
    {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": {"type": "string"}}},
)


# One row per field: (name, required, rule). Extra fields are allowed (older and newer runs add some).
Fields = tuple[tuple[str, bool, Rule], ...]


def object_schema(fields: Fields) -> dict[str, Any]:
    """The JSON Schema of a record with these fields (others allowed)."""
    return {
        "type": "object",
        "properties": {name: rule.schema for name, _, rule in fields},
        "required": [name for name, required, _ in fields if required],
        "additionalProperties": True,
    }


PREDICTION_FIELDS: Fields = (
    ("task", True, _one_of(TASKS, f"a task of {', '.join(TASKS)}")),
    ("k", True, _integer(*K_RANGE)),
    ("language", True, _string(_LANGUAGE, "a language code like eng_Latn")),
    ("instance_id", True, _string(_INSTANCE, "an instance id like 12-0")),
    ("prompt_sha256", True, _string(_SHA256, "64 lower-case hex digits")),
    ("response", True, _string()),
    ("letter", True, _one_of((*LETTER_VALUES, None), f"one of {', '.join(LETTER_VALUES)} or null")),
    ("label", True, _integer(0, len(LETTER_VALUES) - 1)),
    ("correct", True, _boolean),
    ("image_ids", False, _list_of(_string(), "image ids", MAX_IMAGE_IDS)),
)

FINGERPRINT_FIELDS: Fields = (
    ("data", False, _nullable(_string())),
    ("model", False, _nullable(_string())),
    ("backend", False, _nullable(_string())),
    ("languages", False, _list_of(_string(_LANGUAGE, "a language code like eng_Latn"), "language codes")),
    ("tasks", False, _list_of(_task_k, "[task, k] pairs")),
    ("limit", False, _integer(1, null=True)),
    ("limit_mode", False, _one_of(SUBSET_MODES, f"one of {', '.join(SUBSET_MODES)}")),
    ("shard_count", False, _integer(1)),
    ("max_new_tokens", False, _integer(1, null=True)),
    ("prompts_sha256", False, _nullable(_string())),
    ("release_manifest_sha256", False, _nullable(_string())),
)

CONFIG_FIELDS: Fields = (
    # an object here; its fields are checked after the config's own (config_error names them fingerprint.NAME)
    ("fingerprint", True, Rule(_object().check, object_schema(FINGERPRINT_FIELDS))),
    ("n_expected", False, _integer(0, null=True)),
    ("n_expected_run", False, _integer(0, null=True)),
    ("complete", False, _boolean),
    ("parse_mode", False, _one_of(PARSE_MODES, f"one of {', '.join(PARSE_MODES)}")),
    ("groups", False, _nullable(_groups)),
    ("shard", False, _nullable(_string(_SHARD, "a shard I/N"))),
    ("missing_shards", False, _list_of(_string(_SHARD, "a shard I/N"), "shards")),
    ("backend", False, _nullable(_object())),
)


_fraction = Rule(
    lambda value: (
        None
        if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1)
        else f"must be a number 0..1 or null, got {_shown(value)}"
    ),
    {"type": ["number", "null"], "minimum": 0, "maximum": 1},
)

# A macro row: what hub-results turns into a leaderboard entry and the run summary prints.
MACRO_ROW_FIELDS: Fields = (
    ("task", True, _one_of(TASKS, f"a task of {', '.join(TASKS)}")),
    ("k", True, _integer(*K_RANGE)),
    ("accuracy", False, _fraction),
    ("n", False, _integer(0)),
    ("n_languages", False, _integer(0)),
)


def _check_macro_rows(value: Any) -> str | None:
    if not isinstance(value, list):
        return f"must be a list of rows, got {_shown(value)}"
    for n, row in enumerate(value):
        found = field_error(row, MACRO_ROW_FIELDS)
        if found is not None:
            return f"row {n}: {found[0]} {found[1]}"
    return None


METRICS_FIELDS: Fields = (
    ("n_predictions", False, _integer(0)),
    ("macro", False, Rule(_check_macro_rows, {"type": "array", "items": object_schema(MACRO_ROW_FIELDS)})),
    ("per_language", False, _list_of(_object(), "objects")),
)


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a run file kind (``prediction``, ``run_config``, ``run_metrics``), built from the
    field tables above, with a predictions record's rules across fields (each task's own k values; as many
    ``image_ids``, when recorded, as the prompt shows)."""
    fields, title, description = _DOCUMENTS[kind]
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://mvlsib.org/schema/{kind}.schema.json",
        "title": title,
        "description": description,
        **object_schema(fields),
    }
    if kind == "prediction":
        schema["allOf"] = [
            {
                "if": {"properties": {"task": {"const": t.name}}, "required": ["task"]},
                "then": {"properties": {"k": {"enum": list(t.k_values)}}},
            }
            for t in TASK_TABLE
        ] + [
            {
                "if": {"properties": {"task": {"const": t.name}, "k": {"const": k}}, "required": ["task", "k"]},
                "then": {"properties": {"image_ids": {"anyOf": [{"maxItems": 0}, {"minItems": n, "maxItems": n}]}}},
            }
            for t in TASK_TABLE
            for k in t.k_values
            for n in [image_count(t, k)]
        ]
    return schema


_DOCUMENTS: dict[str, tuple[Fields, str, str]] = {
    "prediction": (
        PREDICTION_FIELDS,
        "MVL-SIB evaluator prediction",
        "One line of RUN/predictions.jsonl: one model response to one (task, k, language, instance).",
    ),
    "run_config": (
        CONFIG_FIELDS,
        "MVL-SIB evaluator run config",
        "RUN/config.json or RUN/config.shard-I-of-N.json: what a run is (its fingerprint) and how far it got. "
        "Fields not listed (versions, command, merged_from, a backend's own fingerprint entries) are free-form.",
    ),
    "run_metrics": (
        METRICS_FIELDS,
        "MVL-SIB evaluator metrics",
        "RUN/metrics.json as the evaluator writes it (scoring.compute_metrics); the fields downstream code reads "
        "are typed, the rest is free-form.",
    ),
}


def field_error(record: Any, fields: Fields) -> tuple[str, str] | None:
    """(field, what is wrong) of the first field of ``record`` that breaks its rule, or None."""
    if not isinstance(record, dict):
        return "(record)", f"must be a JSON object, got {_shown(record)}"
    for name, required, check in fields:
        if name not in record:
            if required:
                return name, "is missing"
            continue
        why = check(record[name])
        if why is not None:
            return name, why
    return None


def prediction_error(record: Any) -> tuple[str, str] | None:
    """(field, what is wrong) of a predictions record, or None; k is checked against its task's k values, and
    ``image_ids``, when recorded (older runs have none, or an empty list), against the images its prompt shows."""
    found = field_error(record, PREDICTION_FIELDS)
    if found is not None:
        return found
    task = TASK_BY_NAME[record["task"]]
    if record["k"] not in task.k_values:
        return "k", f"is {record['k']}, which task {task.name} does not have"
    shown = len(record.get("image_ids") or [])
    if shown and shown != image_count(task, record["k"]):
        # the item analysis picks the gold image out of this list by the label
        return (
            "image_ids",
            f"holds {shown} images, but a {task.name} prompt with k={record['k']} shows {image_count(task, record['k'])}",
        )
    return None


def image_count(task, k: int) -> int:
    """How many images a prompt of ``task`` with ``k`` references shows (the prompt's image columns)."""
    return (k if task.references == "ref_image_ids" else 0) + (
        len(LETTER_VALUES) if task.options == "image_option_ids" else 0
    )


def config_error(config: Any) -> tuple[str, str] | None:
    """(field, what is wrong) of a run config (its fingerprint's fields named ``fingerprint.NAME``), or None."""
    found = field_error(config, CONFIG_FIELDS)
    if found is not None:
        return found
    inner = field_error(config["fingerprint"], FINGERPRINT_FIELDS)
    return None if inner is None else (f"fingerprint.{inner[0]}", inner[1])


_ADVICE = {
    ".jsonl": readers.KINDS["prediction_line"].fix,
    ".json": readers.KINDS["run_config"].fix,
}


def _refuse(path: Path, where: str, found: tuple[str, str]) -> None:
    field, why = found
    raise MvlsibError(f"{path}{where}, field {field}: {why}; {_ADVICE.get(path.suffix, '')}")


def parse_prediction_lines(path: Path, lines: Iterable[bytes]) -> list[dict]:
    """The checked records of the complete ``lines`` of predictions file ``path``."""
    records = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f", line {lineno}"
        rec = readers.parse_json("prediction_line", line, str(path), where)
        found = prediction_error(rec)
        if found is not None:
            _refuse(path, where, found)
        records.append(rec)
    return records


def _read_json(name: str, path: Path) -> Any:
    return readers.read_json(name, path)


def read_config(path: str | Path) -> dict:
    """A run's (or a shard's) ``config.json``, checked."""
    path = Path(path)
    config = _read_json("run_config", path)
    found = config_error(config)
    if found is not None:
        _refuse(path, "", found)
    return config


def read_metrics(path: str | Path) -> dict:
    """A run's ``metrics.json``, checked for the shape the evaluator writes."""
    path = Path(path)
    metrics = _read_json("run_metrics", path)
    found = field_error(metrics, METRICS_FIELDS)
    if found is not None:
        _refuse(path, "", found)
    return metrics


def read_release_manifest(path: str | Path) -> Any:
    """A release's ``manifest.json`` within the JSON bounds (None when there is none); the loader's
    ``manifest_problems`` then checks the files it lists."""
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return None
    return readers.read_json("release_manifest", path)  # a device, a pipe, a folder: refused there


def release_manifest_sha256(data: str) -> str | None:
    """The sha256 of a release folder's manifest.json (what a run records as its release), or None."""
    manifest = Path(data) / "manifest.json"
    if manifest.is_file():
        kind = readers.KINDS["release_manifest"]
        return hashlib.sha256(readers.read_limited(manifest, kind.max_bytes, fix=kind.fix)).hexdigest()
    return None
