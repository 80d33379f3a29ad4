"""Load the package's JSON Schemas and validate records against them."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

SCHEMA_NAMES: tuple[str, ...] = ("corpus_row", "instance", "manifest_row", "release_row", "prediction")


LANGUAGE_CODE_PATTERN = "^[a-z]{3}_[A-Z][a-z]{3}$"
_BASE = "https://mvlsib.org/schema/"


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    if name not in SCHEMA_NAMES:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(SCHEMA_NAMES)}")
    if name == "release_row":
        return release_row_schema()
    schema = json.loads(resources.files("mvlsib.schema").joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))
    if name == "prediction":
        # Task names and k range come from the task table, not from a copy in the file.
        from mvlsib.release_format.mvl_sib import K_VALUES, TASKS

        schema["properties"]["task"] = {"enum": list(TASKS)}
        schema["properties"]["k"] = {"type": "integer", "minimum": min(K_VALUES), "maximum": max(K_VALUES)}
    return schema


def release_row_schema() -> dict[str, Any]:
    """The JSON Schema of a release row, derived from the release column table.

    Columns that hold instance ids reuse the instance schema's definitions; the columns that
    hold a language's texts (``TEXT_OF``) are non-empty strings shaped like the ids they hold
    the texts of.
    """
    from mvlsib.release_format.mvl_sib import LANGUAGE_COLUMNS, TEXT_OF

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
    from referencing import Registry, Resource

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
    """Schema ``name`` with its refs inlined: what :func:`validator` checks against (and the fast
    path compiles) without importing jsonschema."""
    schema = load_schema(name)
    return _inline_refs(schema, schema)


@functools.cache
def validator(name: str):
    """A compiled Draft 2020-12 validator for one schema (refs between our schemas resolve offline)."""
    from jsonschema import Draft202012Validator

    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(inlined_schema(name), registry=_registry())


def _column_validator(name: str, column: str):
    from jsonschema import Draft202012Validator

    return Draft202012Validator(inlined_schema(name)["properties"][column], registry=_registry())


def schema_errors(name: str, record: Any) -> Iterator[str]:
    """Readable messages, one per violation: ``field.path: message``."""
    for err in sorted(validator(name).iter_errors(record), key=lambda e: list(map(str, e.absolute_path))):
        where = ".".join(str(p) for p in err.absolute_path) or "(record)"
        yield f"{where}: {err.message}"


def frame_errors(name: str, frame, label_columns: tuple[str, ...] = (), limit: int = 50) -> list[str]:
    """:func:`column_errors` of a DataFrame (missing values as None; rows named by index label)."""
    columns = {c: frame[c].astype(object).where(frame[c].notna(), None).tolist() for c in frame.columns}
    return column_errors(name, columns, label_columns, limit, row_names=list(frame.index))


def column_errors(
    name: str, columns, label_columns: tuple[str, ...] = (), limit: int = 50, row_names=None
) -> list[str]:
    """Validate a table whose rows are flat records, given as ``{column: list of values}``,
    column by column against schema ``name``.

    Equivalent to validating every row (for schemas whose properties are independent of
    each other, like ``corpus_row``): a column is first checked whole (:func:`compile_column`,
    which only ever says "valid" where jsonschema would); a column it cannot vouch for has each
    distinct value checked once, by the fast path and then jsonschema, whose messages are used.
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
    inlined = inlined_schema(name)["properties"]
    for col in [c for c in props if c in columns]:
        values = columns[col]
        whole = compile_column(inlined[col])
        if whole is not None and whole(values):
            continue
        fast = compile_fast(inlined[col]) or (lambda v: False)
        sub = None
        bad_values = []
        for value in dict.fromkeys(_hashable(v) for v in values):
            if value is None or (isinstance(value, float) and value != value) or not fast(value):
                sub = sub or _column_validator(name, col)
                if value is None or (isinstance(value, float) and value != value) or not sub.is_valid(value):
                    bad_values.append(value)
        for value in bad_values:
            is_missing = value is None or (isinstance(value, float) and value != value)
            msg = None if is_missing else next(iter(sub.iter_errors(value)), None)
            why = msg.message if msg is not None else "missing value"
            rows = [
                n
                for n, v in enumerate(values)
                if (v is None or (isinstance(v, float) and v != v) if is_missing else _hashable(v) == value)
            ]
            for n in rows[: max(0, limit - len(errors))]:
                if label_columns:
                    where = "/".join(str(columns[c][n]) for c in label_columns)
                else:
                    where = f"row {row_names[n] if row_names is not None else n}"
                errors.append(f"{where}: {col}: {why}")
            if len(errors) >= limit:
                errors.append(f"... stopped after {limit} errors")
                return errors
    return errors


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


def compile_column(schema: Any):
    """A predicate over a whole column (a list of values) that returns True only when the JSON
    Schema accepts every value, or None for schemas beyond plain type/enum/pattern/length/range
    rules. Each rule is one pass in C over the column (``map``, ``set``, ``min``), so the 200k
    texts of a build are checked in milliseconds; False means "look closer", not "invalid"."""
    import re

    if isinstance(schema, dict) and schema.get("type") == "array":
        return _compile_array_column(schema)
    if isinstance(schema, dict) and schema.get("type") == "object":
        return _compile_record_column(schema)
    simple = {"type", "enum", "pattern", "minLength", "maxLength", "minimum", "maximum"}
    if not isinstance(schema, dict) or not set(schema) <= (simple | _ANNOTATIONS):
        return None
    kind = schema.get("type")
    if kind not in (None, "string", "integer") or (
        "enum" in schema and not all(type(a) is str for a in schema["enum"])
    ):
        return None
    if kind is None and "enum" not in schema:
        return None
    want = str if kind == "string" or "enum" in schema else int
    if kind == "integer" and "enum" in schema:
        return None

    def check(values) -> bool:
        if not values:
            return True
        if set(map(type, values)) != {want}:  # bool is not int here, as in JSON Schema
            return False
        if "enum" in schema and not set(values) <= set(schema["enum"]):
            return False
        if want is str:
            if "minLength" in schema and min(map(len, values)) < schema["minLength"]:
                return False
            if "maxLength" in schema and max(map(len, values)) > schema["maxLength"]:
                return False
            if "pattern" in schema:
                if schema["pattern"] == r"\S":
                    # re's \S is "not str.isspace()" character by character (both use
                    # Py_UNICODE_ISSPACE), so a value matches exactly when it is not empty and not
                    # all whitespace: two passes in C instead of a regex call per text.
                    if not all(values) or any(map(str.isspace, values)):
                        return False
                elif not all(map(re.compile(schema["pattern"]).search, set(values))):  # each distinct value once
                    return False
        else:
            if "minimum" in schema and min(values) < schema["minimum"]:
                return False
            if "maximum" in schema and max(values) > schema["maximum"]:
                return False
        return True

    return check


# ---------------------------------------------------------------- fast path

# Keywords that only annotate: they never make a value invalid.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description", "examples", "default"})
_HANDLED = _ANNOTATIONS | {
    "type",
    "enum",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "not",
}


def compile_fast(schema: Any):
    """A predicate that returns True only for values the JSON Schema accepts, or None when the
    schema uses something it does not handle. It may return False for a valid value that needs
    JSON Schema's finer rules (an integral float, a bool in an enum): callers then ask jsonschema,
    so the findings are the validator's own."""
    import re

    if not isinstance(schema, dict) or not set(schema) <= _HANDLED:
        return None
    checks = []
    kind = schema.get("type")
    if kind is not None:
        simple = {"string": str, "object": dict, "array": list}
        if kind == "integer":
            checks.append(lambda v: type(v) is int)
        elif kind in simple:
            t = simple[kind]
            checks.append(lambda v, t=t: type(v) is t)
        else:
            return None
    if "enum" in schema:
        allowed = schema["enum"]
        if not all(type(a) is str for a in allowed):
            return None
        allowed_set = frozenset(allowed)
        checks.append(lambda v: type(v) is str and v in allowed_set)
    if "pattern" in schema:
        search = re.compile(schema["pattern"]).search
        checks.append(lambda v: type(v) is not str or search(v) is not None)
    if "not" in schema:
        # Only {"not": {"pattern": P}} (the manifest's file rule), whose inner answer is exact:
        # a non-string matches any pattern rule, so "not" rejects it.
        if set(schema["not"]) - _ANNOTATIONS != {"pattern"}:
            return None
        forbidden = re.compile(schema["not"]["pattern"]).search
        checks.append(lambda v: type(v) is str and forbidden(v) is None)
    if "minLength" in schema:
        checks.append(lambda v, n=schema["minLength"]: type(v) is not str or len(v) >= n)
    if "maxLength" in schema:
        checks.append(lambda v, n=schema["maxLength"]: type(v) is not str or len(v) <= n)
    if "minimum" in schema:
        checks.append(lambda v, n=schema["minimum"]: type(v) is not int or v >= n)
    if "maximum" in schema:
        checks.append(lambda v, n=schema["maximum"]: type(v) is not int or v <= n)
    if {"properties", "required", "additionalProperties"} & set(schema):
        props = {k: compile_fast(s) for k, s in schema.get("properties", {}).items()}
        if any(p is None for p in props.values()):
            return None
        required = tuple(schema.get("required", ()))
        extra = schema.get("additionalProperties", True)
        if isinstance(extra, dict):
            extra = compile_fast(extra)
            if extra is None:
                return None
        elif extra not in (True, False):
            return None
        closed = extra is False
        extra_check = extra if callable(extra) else None

        def obj(v):
            if type(v) is not dict:
                return True  # these keywords only apply to objects
            if closed and not v.keys() <= props.keys():
                return False
            if extra_check is not None and not all(extra_check(v[k]) for k in v.keys() - props.keys()):
                return False
            for name in required:
                if name not in v:
                    return False
            for name, check in props.items():
                if name in v and not check(v[name]):
                    return False
            return True

        checks.append(obj)
    if {"items", "minItems", "maxItems", "uniqueItems"} & set(schema):
        item = compile_fast(schema["items"]) if "items" in schema else (lambda v: True)
        if item is None:
            return None
        lo, hi = schema.get("minItems", 0), schema.get("maxItems")
        unique = schema.get("uniqueItems", False)

        def arr(v):
            if type(v) is not list:
                return True
            if len(v) < lo or (hi is not None and len(v) > hi):
                return False
            if unique:
                # Only str or int items are compared here (jsonschema's equality differs for bools/floats).
                if not all(type(x) is str or type(x) is int for x in v) or len(set(v)) != len(v):
                    return False
            return all(item(x) for x in v)

        checks.append(arr)
    if not checks:
        return lambda v: True
    combined = checks[0]
    for check in checks[1:]:  # a chain of `and`s: no generator per value (200k texts per build)
        combined = (lambda a, b: lambda v: a(v) and b(v))(combined, check)
    return combined


def _compile_array_column(schema: dict):
    """compile_column for ``{"type": "array", "items", "minItems", "maxItems", "uniqueItems"}``."""
    import itertools

    if not set(schema) <= {"type", "items", "minItems", "maxItems", "uniqueItems"} | _ANNOTATIONS:
        return None
    items = compile_column(schema["items"]) if "items" in schema else (lambda values: True)
    if items is None:
        return None
    lo, hi, unique = schema.get("minItems", 0), schema.get("maxItems"), schema.get("uniqueItems", False)

    def check(values) -> bool:
        if not values:
            return True
        if set(map(type, values)) != {list}:
            return False
        lengths = list(map(len, values))
        if min(lengths) < lo or (hi is not None and max(lengths) > hi):
            return False
        flat = list(itertools.chain.from_iterable(values))
        if unique:
            # Only str or int items are compared here (jsonschema's equality differs for bools/floats).
            if not set(map(type, flat)) <= {str, int} or list(map(len, map(set, values))) != lengths:
                return False
        return items(flat)

    return check


def _compile_record_column(schema: dict):
    """compile_column for a column of records (``{"type": "object", "properties", "required",
    "additionalProperties": bool}``): each property's values are checked as one column."""
    if not set(schema) <= {"type", "properties", "required", "additionalProperties"} | _ANNOTATIONS:
        return None
    extra = schema.get("additionalProperties", True)
    if extra not in (True, False):
        return None
    props = {name: compile_column(sub) for name, sub in schema.get("properties", {}).items()}
    if any(check is None for check in props.values()):
        return None
    required = frozenset(schema.get("required", ()))

    def check(records) -> bool:
        if not records:
            return True
        if set(map(type, records)) != {dict}:
            return False
        key_sets = set(map(frozenset, records))
        for keys in key_sets:
            if not required <= keys or (extra is False and not keys <= props.keys()):
                return False
        for name, column in props.items():
            if all(name in keys for keys in key_sets):
                values = [record[name] for record in records]
            else:
                values = [record[name] for record in records if name in record]
            if not column(values):
                return False
        return True

    return check


def all_valid(name: str, records: list) -> bool:
    """True only when schema ``name`` accepts every record (False: check them one by one)."""
    check = _records_check(name)
    return check is not None and check(records)


@functools.cache
def _records_check(name: str):
    return compile_column(inlined_schema(name))


@functools.cache
def _fast(name: str, column: str | None = None):
    schema = inlined_schema(name)
    return compile_fast(schema["properties"][column] if column else schema)


def is_valid(name: str, record: Any, column: str | None = None) -> bool:
    """Same answer as the JSON Schema validator of ``name`` (or of one of its columns), fast for
    the plain values of a build; anything the fast path is unsure of goes to jsonschema."""
    fast = _fast(name, column)
    if fast is not None and fast(record):
        return True
    if column is None:
        return validator(name).is_valid(record)
    return _column_validator(name, column).is_valid(record)
