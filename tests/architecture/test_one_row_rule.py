"""A pool-manifest row is made in one place that applies its rules (``image_pool/rows.py`` ``new_row``):
the manifest's reader (``workdir/pool_manifest.py``) parses rows, and no other module constructs one, so
no writer of a pool can store a row `images check` would then report. Read with ``ast``."""

from __future__ import annotations

import ast

from support import REPO

SRC = REPO / "src" / "mvlsib"
# module -> why it may construct a ManifestRow itself
MAKERS = {
    "workdir/pool_manifest.py": "the manifest's reader: rows as they are in the file, judged by images check",
    "image_pool/rows.py": "new_row: the row rules first",
}


def _constructions(tree: ast.AST) -> list[int]:
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == "ManifestRow" or getattr(node.func, "attr", None) == "ManifestRow")
    ]


def test_manifest_rows_are_made_only_through_the_row_rules():
    stray = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel not in MAKERS:
            stray += [f"{rel}:{line}" for line in _constructions(ast.parse(path.read_text("utf-8")))]
    assert not stray, f"make a pool-manifest row with image_pool.rows.new_row (it applies the row rules): {stray}"


def test_every_maker_still_makes_rows():
    for rel in MAKERS:
        assert _constructions(ast.parse((SRC / rel).read_text("utf-8"))), f"{rel}: drop it from MAKERS"


def test_the_scan_sees_both_spellings():
    tree = ast.parse("from x import ManifestRow\nimport m\nManifestRow(1)\nm.ManifestRow(2)\n")
    assert _constructions(tree) == [3, 4]
