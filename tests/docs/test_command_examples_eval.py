"""The command examples that run the hf backend (torch): on the tiny LLaVA, in the eval session."""

from __future__ import annotations

import pytest
from support.command_examples import params, run_example

pytestmark = pytest.mark.eval


@pytest.mark.parametrize(("where", "command"), params("eval"))
def test_example_runs(where, command, request, tmp_path):
    run_example(where, command, request, tmp_path)
