"""Optional dependencies by construction: no module imports one when it is imported.

The core install (``pip install mvlsib-build``) has none of ``OPTIONAL_DEPENDENCIES``; every
command, ``--help`` included, must load without them. So an optional library may be imported
only inside the function that uses it (or under ``TYPE_CHECKING``): then a missing one surfaces
where it is needed, and the error boundary names the extra to install. Read from the source with
``ast``, so a new module cannot go around the rule; the ``core`` test session checks the same
thing by running every command in an environment that lacks them (tests/cli/test_core_walk.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support import REPO

from mvlsib.errors import OPTIONAL_DEPENDENCIES

SRC = REPO / "src" / "mvlsib"


def _module_level_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, top-level package) of every import that runs when the module is imported."""
    found: list[tuple[int, str]] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.Import):
                found.extend((node.lineno, alias.name.split(".")[0]) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((node.lineno, node.module.split(".")[0]))
            elif isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, (ast.Try, ast.With, ast.ClassDef)):
                for part in ("body", "orelse", "finalbody"):
                    visit(getattr(node, part, []) or [])
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(tree.body)
    return found


def _sources() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.relative_to(SRC).as_posix())
def test_no_optional_dependency_is_imported_at_module_level(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    bad = [f"line {line}: {name}" for line, name in _module_level_imports(tree) if name in OPTIONAL_DEPENDENCIES]
    assert not bad, f"{path.relative_to(REPO)} imports optional dependencies at module level: {bad}"


def test_the_rule_sees_what_it_must():
    """The reader finds imports nested in if/try/class bodies and ignores functions and TYPE_CHECKING."""
    tree = ast.parse(
        "import os\n"
        "try:\n    import torch\nexcept ImportError:\n    pass\n"
        "if True:\n    from transformers import AutoModel\n"
        "if TYPE_CHECKING:\n    import jinja2\n"
        "class A:\n    import matplotlib\n"
        "def f():\n    import timm\n"
    )
    assert [name for _, name in _module_level_imports(tree)] == ["os", "torch", "transformers", "matplotlib"]


def _imports_anywhere(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_progress_bars_come_from_one_module():
    """Every bar goes through ``mvlsib.progress.bar`` (drawn on a terminal only): no other module imports tqdm."""
    owners = [
        path.relative_to(SRC).as_posix()
        for path in _sources()
        if "tqdm" in _imports_anywhere(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert owners == ["progress.py"], owners
