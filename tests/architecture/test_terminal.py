"""Everything the package prints goes through ``mvlsib.terminal``, with its values as arguments.

``terminal.echo/warn/note/line`` take a literal template and the values separately, so no value can
reach a terminal without ``terminal.visible``; the only other way to print would be ``print``,
``click.echo``/``secho`` or a write to ``sys.stdout``/``sys.stderr``, which this test finds anywhere else.
"""

from __future__ import annotations

import ast

import pytest
from support import REPO

SRC = REPO / "src" / "mvlsib"
# Modules allowed to print by other means, each with its reason.
ALLOWED = {
    "terminal.py": "the one writer",
    # Ships alone in every release (no mvlsib beside it); prints a count and the repr() of an example.
    "release_format/mvl_sib.py": "standalone loader",
}
TEMPLATED = {"echo", "warn", "note", "line"}


def _modules():
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _is(node: ast.AST, dotted: str) -> bool:
    parts = dotted.split(".")
    while len(parts) > 1 and isinstance(node, ast.Attribute) and node.attr == parts[-1]:
        node, parts = node.value, parts[:-1]
    return len(parts) == 1 and isinstance(node, ast.Name) and node.id == parts[0]


def _printing_calls(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for dotted in ("print", "click.echo", "click.secho", "sys.stdout.write", "sys.stderr.write"):
            if _is(node.func, dotted):
                found.append((node.lineno, dotted))
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(SRC).as_posix())
def test_nothing_prints_around_the_terminal_module(path):
    rel = path.relative_to(SRC).as_posix()
    if rel in ALLOWED:
        return
    calls = _printing_calls(ast.parse(path.read_text("utf-8")))
    assert calls == [], f"{rel}: print through mvlsib.terminal (echo/warn/note), not {calls}"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(SRC).as_posix())
def test_every_template_is_a_literal(path):
    """A template built from values (an f-string, a concatenation) would put them on the terminal raw."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in TEMPLATED
            and _is(node.func.value, "terminal")
        ):
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                bad.append(node.lineno)
    assert bad == [], f"{path.relative_to(SRC)}: terminal.* templates must be string literals (lines {bad})"


def test_the_finder_finds_what_it_looks_for():
    tree = ast.parse("import click, sys\nprint(1)\nclick.echo(x)\nclick.secho(x)\nsys.stderr.write(x)\nf.write(x)\n")
    assert [d for _, d in _printing_calls(tree)] == ["print", "click.echo", "click.secho", "sys.stderr.write"]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(SRC).as_posix())
def test_an_error_message_is_one_line_with_its_list_apart(path):
    """A list under an error goes in ``items``: the boundary shows each line safely only if they are apart."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Call) and _is(node.func, "MvlsibError") and node.args:
            pieces = [
                n.value for n in ast.walk(node.args[0]) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
            if any("\n" in piece for piece in pieces):
                bad.append(node.lineno)
    assert bad == [], f"{path.relative_to(SRC)}: MvlsibError message with a line break (lines {bad}); use items="
