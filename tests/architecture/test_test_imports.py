"""Test modules share code only through ``tests/support/``: no test module imports another.

A test module imported by another runs its module-level code (fixtures, marks, tables) twice and
ties two files together that nothing declares; shared fixtures, tables and checks live in the
support package instead, and helper modules live nowhere else.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# Beside tests/support, only these non-test modules may sit in tests/: pytest's own and the tiny model
# builders, which tools/ and benchmarks/ use as well.
ALLOWED_HELPERS = {"conftest.py", "__init__.py"}
HELPER_PACKAGES = {"support", "tiny_models"}


def _imported(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            names += [f"{node.module}.{a.name}" for a in node.names]
    return names


def test_no_test_module_imports_another():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name in _imported(tree):
            if any(part.startswith("test_") for part in name.split(".")):
                offenders.append(f"{path.relative_to(TESTS)} imports {name}")
    assert offenders == []


def test_helpers_live_in_the_support_package():
    stray = [
        path.relative_to(TESTS).as_posix()
        for path in sorted(TESTS.rglob("*.py"))
        if not path.name.startswith("test_")
        and path.name not in ALLOWED_HELPERS
        and path.relative_to(TESTS).parts[0] not in HELPER_PACKAGES
    ]
    assert stray == [], "helper modules belong in tests/support/"
