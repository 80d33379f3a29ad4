"""Every name pattern matches the whole value: a trailing line break is not part of a name.

Python's ``$`` also matches before a final ``\\n``, so ``^ORG/NAME$`` passes ``"org/name\\n"`` and a
task id ``"t2s_k1\\n"`` becomes a file name. In the package a regular expression ends with ``\\Z``
or is used with ``fullmatch``; the JSON Schemas' ``pattern`` keeps JSON Schema's own (ECMA-262)
meaning of ``$`` because every validator is made by ``readers.schema_validator``."""

from __future__ import annotations

import ast

import pytest
from support import REPO

from mvlsib import readers

SRC = REPO / "src" / "mvlsib"
RE_CALLS = {"compile", "match", "search", "fullmatch", "sub", "findall", "finditer", "split"}


def _patterns():
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in RE_CALLS
                and getattr(node.func.value, "id", None) == "re"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                yield path.relative_to(SRC).as_posix(), node.lineno, node.func.attr, node.args[0].value


def test_no_pattern_ends_in_a_dollar_that_also_matches_before_a_line_break():
    bad = [
        f"{rel}:{line}: re.{fn}({pattern!r})"
        for rel, line, fn, pattern in _patterns()
        if fn != "fullmatch" and pattern.endswith("$") and not pattern.endswith("\\$")
    ]
    assert not bad, "end with \\Z (or use fullmatch):\n" + "\n".join(bad)


def test_schema_validators_are_made_in_one_place():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            name = getattr(node, "attr", None) or getattr(node, "id", None)
            if name in ("Draft202012Validator", "Draft7Validator", "validator_for") or (
                isinstance(node, ast.Attribute)
                and node.attr == "validate"
                and getattr(node.value, "id", "") == "jsonschema"
            ):
                if path.name != "readers.py":
                    bad.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not bad, bad


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\n\n", " \n"])
@pytest.mark.parametrize("kind", ["eval_yaml", "batch_manifest"])
def test_schema_patterns_refuse_a_trailing_line_break_in_every_patterned_field(kind, ending):
    """Generated over every ``pattern`` of the schema: a value that matches, plus a line break, fails."""
    import re

    schema = readers.schema(kind)
    found = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                found.append(node["pattern"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    assert found
    for pattern in found:
        validator = readers.schema_validator({"type": "string", "pattern": pattern})
        sample = {"^[0-9a-f]{64}$": "a" * 64, "^requests-[0-9]{5,}\\.jsonl$": "requests-00001.jsonl"}.get(
            pattern, "t2s_k1"
        )
        assert re.search(pattern, sample), (pattern, sample)
        assert validator.is_valid(sample) and not validator.is_valid(sample + ending), pattern
