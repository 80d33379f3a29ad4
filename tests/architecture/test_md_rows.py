"""The report's Markdown tables are made by one row builder, ``escape.md_row``, which escapes every cell.

A row built by hand (an f-string starting with ``|``) takes a value as it is: a language name or a
``--language-metadata`` column became raw HTML that way. This finds any such literal in the modules
that write ``report.md``, ``leaderboard.md`` and ``items.md``; a table's delimiter row comes from ``md_table_head`` too.
"""

from __future__ import annotations

import ast

import pytest
from support import REPO

ANALYSIS = REPO / "src" / "mvlsib" / "evaluation" / "analysis"
WRITERS = ("report.py", "leaderboard.py", "report_format.py", "items.py")


@pytest.mark.parametrize("name", WRITERS)
def test_no_table_row_is_built_by_hand(name):
    found = []
    for node in ast.walk(ast.parse((ANALYSIS / name).read_text("utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lstrip().startswith("|"):
            found.append(f"{name}:{node.lineno}: {node.value[:40]!r}")
    assert found == [], "build table rows with escape.md_row / md_table_head"
