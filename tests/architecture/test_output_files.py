"""Every single file a command writes on request goes through ``params.OutputFile`` (refused as the
option is parsed when a file of that name is the user's) and ``atomic.output_file`` (the write).

Both command trees are walked as click built them: a path option or argument that need not exist
and cannot be a folder is an output file, so its type must be ``params.OutputFile``; the only
exceptions are listed with their reason. ``tests/cli/test_output_folders.py`` plants the user's
file at every such option the walk finds and runs the command."""

from __future__ import annotations

import ast

from support import REPO
from support.cli_tree import NOT_OUTPUTS, output_params

from mvlsib import params


def test_every_output_file_option_is_an_output_file():
    bad = [
        f"{where} {p.opts[0]}: {type(p.type).__name__}"
        for where, p in output_params()
        if (where, p.opts[0]) not in NOT_OUTPUTS and not isinstance(p.type, params.OutputFile)
    ]
    assert not bad, "\n".join(bad)
    assert len(output_params()) >= 6  # the walk sees them: --json, --script, --out FILE


def test_single_files_are_written_only_through_output_file():
    """In the modules that write a requested file, no ``atomic_open`` of a path that came from an
    option: the commands and the library writers they call use ``output_file``."""
    writers = [
        "src/mvlsib/evaluation/analysis/compare.py",
        "src/mvlsib/evaluation/analysis/correlate.py",
        "src/mvlsib/image_pool/check.py",
        "src/mvlsib/evaluation/scale/plan.py",
        *sorted(str(p.relative_to(REPO)) for p in (REPO / "src/mvlsib/cli").rglob("*.py")),
    ]
    bad = []
    for rel in writers:
        tree = ast.parse((REPO / rel).read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "atomic_open":
                bad.append(f"{rel}:{node.lineno}")
    assert not bad, "atomic_open where output_file belongs:\n" + "\n".join(bad)
