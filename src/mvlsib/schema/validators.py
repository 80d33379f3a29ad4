"""Load the package's JSON Schemas and validate records against them."""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from typing import Any

from referencing import Registry, Resource

from mvlsib import httpio
from mvlsib.escape import web_url
from mvlsib.readers import schema_validator
from mvlsib.release_format.mvl_sib import LANGUAGE_COLUMNS, TEXT_OF

SCHEMA_NAMES: tuple[str, ...] = (
    "corpus_row",
    "instance",
    "manifest_row",
    "release_row",
)


LANGUAGE_CODE_PATTERN = "^[a-z]{3}_[A-Z][a-z]{3}$"
_BASE = "https://mvlsib.org/schema/"


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    if name not in SCHEMA_NAMES:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(SCHEMA_NAMES)}")
    if name == "release_row":
        return release_row_schema()
    return json.loads(resources.files("mvlsib.schema").joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))


def release_row_schema() -> dict[str, Any]:
    """The JSON Schema of a release row, derived from the release column table.

    Columns that hold instance ids reuse the instance schema's definitions; the columns that
    hold a language's texts (``TEXT_OF``) are non-empty strings shaped like the ids they hold
    the texts of.
    """
    instance = json.loads(resources.files("mvlsib.schema").joinpath("instance.schema.json").read_text("utf-8"))
    text = {"type": "string", "minLength": 1}
    props: dict[str, Any] = {}
    for name, kind in LANGUAGE_COLUMNS:
        if name in instance["properties"]:
            props[name] = {"$ref": f"{_BASE}instance.schema.json#/properties/{name}"}
        elif name == "language":
            props[name] = {"type": "string", "pattern": LANGUAGE_CODE_PATTERN}
        elif name in TEXT_OF:
            twin = instance["properties"][TEXT_OF[name]]
            if kind.startswith("list<"):
                props[name] = {
                    "type": "array",
                    "items": text,
                    "minItems": twin["minItems"],
                    "maxItems": twin["maxItems"],
                }
            else:
                props[name] = dict(text)
        else:  # pragma: no cover - a new column must be given a rule here
            raise KeyError(f"release column {name!r} has no JSON Schema rule; add one in release_row_schema")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{_BASE}release_row.schema.json",
        "title": "MVL-SIB release row",
        "description": "One row of a release's per-language parquet: an instance's ids (as in instances.jsonl) "
        "with its texts in that language. Derived from the release column table (mvl_sib.LANGUAGE_COLUMNS).",
        "type": "object",
        "properties": props,
        "required": [name for name, _ in LANGUAGE_COLUMNS],
        "additionalProperties": False,
    }


@functools.cache
def _registry():
    resources_ = [(load_schema(n)["$id"], Resource.from_contents(load_schema(n))) for n in SCHEMA_NAMES]
    return Registry().with_resources(resources_)


def _inline_refs(node: Any, root: dict[str, Any]) -> Any:
    """Replace every ``$ref`` to one of our schemas by the schema it points at.

    Resolving ``$ref`` through the registry dominates validation time (3,012 instances
    with 10 refs each); our schemas have no recursive refs, so inlining is exact.
    """
    if isinstance(node, list):
        return [_inline_refs(n, root) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node and len(node) == 1:
        base, _, pointer = node["$ref"].partition("#")
        doc = root if not base else load_schema(_name_of(base))
        target: Any = doc
        for part in filter(None, pointer.split("/")):
            target = target[part]
        return _inline_refs(target, doc)
    return {k: _inline_refs(v, root) for k, v in node.items() if k != "$defs"}


def _name_of(schema_id: str) -> str:
    return next(n for n in SCHEMA_NAMES if load_schema(n)["$id"] == schema_id)


@functools.cache
def inlined_schema(name: str) -> dict[str, Any]:
    """Schema ``name`` with its refs inlined: what :func:`validator` checks against."""
    schema = load_schema(name)
    return _inline_refs(schema, schema)


@functools.cache
def validator(name: str):
    """A compiled Draft 2020-12 validator for one schema (refs between our schemas resolve offline)."""
    load_schema(name)
    return schema_validator(inlined_schema(name), registry=_registry())


@functools.cache
def _column_validator(name: str, column: str):
    return schema_validator(inlined_schema(name)["properties"][column], registry=_registry())


_ARRAY_KEYWORDS = {"type", "items", "minItems", "maxItems", "uniqueItems"}


@functools.cache
def _items_validator(name: str, column: str):
    """For a column whose rule is only an array's type, ``items`` (one schema), length and
    uniqueness: the items' validator and the bounds; else None."""
    rule = inlined_schema(name)["properties"][column]
    if rule.get("type") != "array" or not isinstance(rule.get("items"), dict) or set(rule) - _ARRAY_KEYWORDS:
        return None
    items = schema_validator(rule["items"], registry=_registry())
    return items, rule.get("minItems", 0), rule.get("maxItems", math.inf), bool(rule.get("uniqueItems"))


def _lists_pass(name: str, column: str, values: Sequence[Any]) -> bool:
    """Whether every value surely passes an array rule, found item by item: each distinct item
    through jsonschema once, lengths and uniqueness in Python (exact for lists of str and int, whose
    equality is JSON's). False means "not known": the caller checks each value as a whole."""
    rule = _items_validator(name, column)
    if rule is None:
        return False
    items, low, high, unique = rule
    seen: set = set()
    for value in values:
        if type(value) is not list or not low <= len(value) <= high:
            return False
        if not all(type(x) is str or type(x) is int for x in value):  # bool is not int here
            return False
        if unique and len(set(value)) != len(value):
            return False
        seen.update(value)
    return all(items.is_valid(x) for x in seen)


def schema_errors(name: str, record: Any) -> Iterator[str]:
    """Readable messages, one per violation: ``field.path: message``."""
    errors = sorted(validator(name).iter_errors(record), key=lambda e: list(map(str, e.absolute_path)))
    for err in errors:
        where = ".".join(str(p) for p in err.absolute_path) or "(record)"
        yield f"{where}: {err.message}"
    if name in RULES_BEYOND_SCHEMA and isinstance(record, Mapping):
        yield from RULES_BEYOND_SCHEMA[name](record)


def _manifest_row_rules(record: Any) -> Iterator[str]:
    # The pattern admits every http(s) word; the card links only what a browser opens (escape.web_url).
    url = record.get("source_url")
    # (a value the schema's pattern refuses is reported by the schema already)
    if isinstance(url, str) and re.fullmatch(r"https?://\S+", url) and web_url(url) is None:
        if httpio.holds_credential(url):
            yield (
                f"source_url: {httpio.public_url(url)[:200]!r} holds a credential (a user:password@ or a secret "
                "query value, shown as ***), which the card, the gallery and the credits would publish; give "
                "the image's public address"
            )
        else:
            yield f"source_url: {url[:200]!r} is not an address a browser would open"


# What a JSON Schema cannot say about a record, checked wherever the schema is (schema_errors): one rule.
RULES_BEYOND_SCHEMA = {"manifest_row": _manifest_row_rules}


def frame_errors(name: str, frame, label_columns: tuple[str, ...] = (), limit: int = 50) -> list[str]:
    """:func:`column_errors` of a DataFrame (missing values as None; rows named by index label)."""
    columns = {c: frame[c].astype(object).where(frame[c].notna(), None).tolist() for c in frame.columns}
    return column_errors(name, columns, label_columns, limit, row_names=list(frame.index))


def column_errors(
    name: str,
    columns: Mapping[str, Sequence[Any]],
    label_columns: tuple[str, ...] = (),
    limit: int = 50,
    row_names: Sequence[Any] | None = None,
    *,
    suspects: Mapping[str, Sequence[int]] | None = None,
) -> list[str]:
    """Validate a table whose rows are flat records, given as ``{column: list of values}``, column
    by column against schema ``name``: each distinct value of a column once, through jsonschema.

    Equivalent to validating every row for schemas whose properties are independent of each other
    (like ``corpus_row``). ``suspects`` maps a column to the only rows that can break its rule, as a
    column-wise ``pyarrow.compute`` check found them (a corpus has 200k distinct texts).
    """
    schema = load_schema(name)
    props: dict = schema.get("properties", {})
    errors: list[str] = []
    missing = [c for c in schema.get("required", []) if c not in columns]
    if missing:
        errors.append(f"(table): missing required column(s) {missing}")
    if schema.get("additionalProperties") is False:
        extra = [c for c in columns if c not in props]
        if extra:
            errors.append(f"(table): unexpected column(s) {extra}")
    for col in [c for c in props if c in columns]:
        values = columns[col]
        rows = (suspects or {}).get(col, range(len(values)))
        for n, why in _bad_rows(name, col, values, rows):
            if len(errors) >= limit:
                errors.append(f"... stopped after {limit} errors")
                return errors
            if label_columns:
                where = "/".join(str(columns[c][n]) for c in label_columns)
            else:
                where = f"row {row_names[n] if row_names is not None else n}"
            errors.append(f"{where}: {col}: {why}")
    return errors


def _bad_rows(name: str, column: str, values: Sequence[Any], rows: Iterable[int]) -> Iterator[tuple[int, str]]:
    """(row, message) of every row among ``rows`` whose value the column's rule rejects; each
    distinct value is validated once, and rows are looked at only for the values rejected."""
    check = _column_validator(name, column)
    rows = list(rows)
    picked = values if len(rows) == len(values) else [values[n] for n in rows]
    if _lists_pass(name, column, picked):  # a column of id lists: its items are far fewer than its lists
        return
    keys: Sequence[Any]
    if set(map(type, picked)) <= {str, int}:  # the usual column: each value its own key (bool is not int here)
        keys = picked
        distinct: dict[Any, Any] = {v: v for v in dict.fromkeys(picked)}
    else:  # lists, dicts, floats, None: distinct by their _key
        keys = [_key(v) for v in picked]
        distinct = dict(zip(keys, picked))
    bad: dict[Any, str] = {}
    for key, value in distinct.items():
        if value is None or (isinstance(value, float) and math.isnan(value)):
            bad[key] = "missing value"
        else:
            error = next(iter(check.iter_errors(value)), None)
            if error is not None:
                bad[key] = str(error.message)
    if not bad:
        return
    for n, key in zip(rows, keys):
        if key in bad:
            yield n, bad[key]


def _key(value: Any) -> Any:
    """A dict key for a value: lists as tuples; the type kept, so that 1, 1.0 and True stay apart."""
    if isinstance(value, list):
        return (list, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple(sorted((k, _key(v)) for k, v in value.items())))
    if isinstance(value, float) and math.isnan(value):
        return (float, "nan")
    return (type(value), value)


def is_valid(name: str, record: Any) -> bool:
    """Whether schema ``name`` accepts ``record``."""
    return bool(validator(name).is_valid(record))
