"""Load the package's JSON Schemas and validate records against them."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any, Iterator

SCHEMA_NAMES: tuple[str, ...] = ("corpus_row", "instance", "manifest_row", "release_row", "prediction")


LANGUAGE_CODE_PATTERN = "^[a-z]{3}_[A-Z][a-z]{3}$"
_BASE = "https://mvlsib.org/schema/"


@functools.lru_cache(maxsize=None)
def load_schema(name: str) -> dict[str, Any]:
    if name not in SCHEMA_NAMES:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(SCHEMA_NAMES)}")
    if name == "release_row":
        return release_row_schema()
    schema = json.loads(resources.files("mvlsib.schema").joinpath(f"{name}.schema.json").read_text(encoding="utf-8"))
    if name == "prediction":
        # Task names and k range come from the task table, not from a copy in the file.
        from mvlsib.tasks import K_VALUES, TASKS

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
                props[name] = {"type": "array", "items": text, "minItems": twin["minItems"], "maxItems": twin["maxItems"]}
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


@functools.lru_cache(maxsize=None)
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


@functools.lru_cache(maxsize=None)
def validator(name: str):
    """A compiled Draft 2020-12 validator for one schema (refs between our schemas resolve offline)."""
    from jsonschema import Draft202012Validator

    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(_inline_refs(schema, schema), registry=_registry())


def schema_errors(name: str, record: Any) -> Iterator[str]:
    """Readable messages, one per violation: ``field.path: message``."""
    for err in sorted(validator(name).iter_errors(record), key=lambda e: list(map(str, e.absolute_path))):
        where = ".".join(str(p) for p in err.absolute_path) or "(record)"
        yield f"{where}: {err.message}"


def frame_errors(name: str, frame, label_columns: tuple[str, ...] = (), limit: int = 50) -> list[str]:
    """Validate a table whose rows are flat records, column by column, against schema ``name``.

    Equivalent to validating every row (for schemas whose properties are independent of
    each other, like ``corpus_row``), but each distinct value is checked once: for the
    200k-row corpus this is seconds instead of tens of seconds.
    """
    from jsonschema import Draft202012Validator

    schema = load_schema(name)
    props: dict = schema.get("properties", {})
    errors: list[str] = []
    missing = [c for c in schema.get("required", []) if c not in frame.columns]
    if missing:
        errors.append(f"(table): missing required column(s) {missing}")
    if schema.get("additionalProperties") is False:
        extra = [c for c in frame.columns if c not in props]
        if extra:
            errors.append(f"(table): unexpected column(s) {extra}")
    for col in [c for c in props if c in frame.columns]:
        sub = Draft202012Validator(props[col], registry=_registry())
        # The fast path says "valid" only when jsonschema would; the rest goes to jsonschema.
        fast = compile_fast(validator(name).schema["properties"].get(col)) or (lambda v: False)
        series = frame[col]
        bad_values = []
        for value in series.drop_duplicates().tolist():
            py = value.item() if hasattr(value, "item") else value
            if py is None or (isinstance(py, float) and py != py) or not (fast(py) or sub.is_valid(py)):
                bad_values.append(py)
        for value in bad_values:
            mask = series.isna() if value is None or (isinstance(value, float) and value != value) else series == value
            rows = frame[mask]
            msg = next(iter(sub.iter_errors(value)), None)
            why = msg.message if msg is not None else "missing value"
            for _, row in rows.head(max(0, limit - len(errors))).iterrows():
                where = "/".join(str(row[c]) for c in label_columns) if label_columns else f"row {row.name}"
                errors.append(f"{where}: {col}: {why}")
            if len(errors) >= limit:
                errors.append(f"... stopped after {limit} errors")
                return errors
    return errors


# ---------------------------------------------------------------- fast path

# Keywords that only annotate: they never make a value invalid.
_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description", "examples", "default"})
_HANDLED = _ANNOTATIONS | {"type", "enum", "pattern", "minLength", "maxLength", "minimum", "maximum", "properties",
                           "required", "additionalProperties", "items", "minItems", "maxItems", "uniqueItems"}


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
        if extra not in (True, False):
            return None
        closed = extra is False

        def obj(v):
            if type(v) is not dict:
                return True  # these keywords only apply to objects
            if closed and not v.keys() <= props.keys():
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


@functools.lru_cache(maxsize=None)
def _fast(name: str, column: str | None = None):
    schema = validator(name).schema
    return compile_fast(schema["properties"][column] if column else schema)


def is_valid(name: str, record: Any, column: str | None = None) -> bool:
    """Same answer as the JSON Schema validator of ``name`` (or of one of its columns), fast for
    the plain values of a build; anything the fast path is unsure of goes to jsonschema."""
    fast = _fast(name, column)
    if fast is not None and fast(record):
        return True
    if column is None:
        return validator(name).is_valid(record)
    from jsonschema import Draft202012Validator

    return Draft202012Validator(validator(name).schema["properties"][column], registry=_registry()).is_valid(record)
