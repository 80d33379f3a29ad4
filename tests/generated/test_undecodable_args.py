"""A command-line argument that is not UTF-8 (Python hands its bytes over as lone surrogates) is
refused by every command, in one line, before any work: no lock file, record or path can hold it.
Generated over both command trees, at the first and the last place of the command line."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from support import cli_tree

from mvlsib.cli import build_cli, eval_cli

TREES = {"mvlsib-build": build_cli, "mvlsib-eval": eval_cli}


@pytest.mark.parametrize("where", [w for w, _ in cli_tree.commands()])
@pytest.mark.parametrize("at", ["after-the-command", "as-an-option-value"])
def test_an_undecodable_argument_is_one_line(where, at, tmp_path):
    tool, *path = where.split()
    bad = "run\udcff"
    args = [*path, bad] if at == "after-the-command" else [*path, "--out", str(tmp_path / bad)]
    result = CliRunner().invoke(TREES[tool], args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "is not valid UTF-8 text" in result.output and "\udcff" not in result.output
    assert list(tmp_path.iterdir()) == []
