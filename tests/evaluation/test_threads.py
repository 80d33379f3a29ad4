"""--threads: one torch thread per test worker, and a default that follows
OMP_NUM_THREADS or takes half the CPUs."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from mvlsib.cli import build_cli, eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends.hf.loading import apply_threads, default_threads

pytestmark = pytest.mark.eval


def test_test_workers_run_one_torch_thread():
    import torch

    assert os.environ["OMP_NUM_THREADS"] == "1"
    assert torch.get_num_threads() == 1


def test_default_follows_omp_num_threads_else_half_the_cpus(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5})
    assert default_threads() == 3
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert default_threads() == 1


def test_apply_threads_sets_torch_on_cpu_only(monkeypatch):
    import torch

    before = torch.get_num_threads()
    try:
        assert apply_threads(2, "cpu") == 2 and torch.get_num_threads() == 2
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        assert apply_threads(0, "cpu") == 1 and torch.get_num_threads() == 1
        assert apply_threads(4, "cuda:0") == 0 and torch.get_num_threads() == 1
        with pytest.raises(MvlsibError, match="--threads"):
            apply_threads(-1, "cpu")
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("cli,args", [(eval_cli, ["run", "--help"]), (build_cli, ["verify-images", "--help"])])
def test_threads_option_is_documented(cli, args):
    out = CliRunner().invoke(cli, args).output
    assert "--threads" in out and "OMP_NUM_THREADS" in out
