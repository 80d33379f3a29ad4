"""The command examples of README.md, docs/**/*.md and the --help texts that need only the core
(tests/support/command_examples.py finds and runs them; the hf-backend ones are in test_command_examples_eval.py)."""

from __future__ import annotations

import pytest
from support.command_examples import check_every_example_is_run_or_listed, check_examples_are_found, params, run_example


def test_examples_are_found():
    check_examples_are_found()


def test_every_example_is_run_or_listed():
    check_every_example_is_run_or_listed()


@pytest.mark.parametrize(("where", "command"), params("core"))
def test_example_runs(where, command, request, tmp_path):
    run_example(where, command, request, tmp_path)
