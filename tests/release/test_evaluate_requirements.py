"""A release's evaluate.py needs what its docstring says, per path, and no more.

One venv, made by uv from the package index, holds exactly the packages that the docstring's
first line names (read from ``mvlsib.evaluation.requirements``, the table the docstring is written
from): no mvlsib, no torch. In it, a copy of a release made by the real pipeline answers every
``--help``, runs with ``--backend openai`` against the suite's OpenAI-compatible server on
127.0.0.1 (whole, and as two shards that ``merge`` combines), and ``report``, ``compare``,
``items``, ``correlate``, ``plan`` and ``batch prepare`` / ``collect`` run on that run: every
command exits 0. The hf path is refused in one line naming what to install, exit status 2.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import click
import pytest
from support.fakes.batch_runner import run_batch
from support.fakes.openai_compat import lettered_server
from support.venvs import clean_env, fresh_venv, installed, run

from mvlsib.cli.eval import COMMANDS
from mvlsib.evaluation.requirements import IMPORT_NAMES, PATHS, pip_line
from mvlsib.release.bundle import evaluate_script

pytestmark = pytest.mark.slow

CORE = PATHS[0][1]
SELECTION = ["--tasks", "i2s,s2i,t2s,s2t", "--k", "1,3", "--languages", "eng_Latn", "--limit", "3"]
NOT_CORE = {package for _, packages in PATHS[1:] for package in packages}


@pytest.fixture(scope="module")
def python(tmp_path_factory) -> Path:
    """A venv with the first path's requirements only, as the docstring names them."""
    return fresh_venv(tmp_path_factory.mktemp("evaluate-venv") / "venv", *CORE)


@pytest.fixture(scope="module")
def release(tmp_path_factory, release_dir) -> Path:
    rel = tmp_path_factory.mktemp("evaluate-release") / "rel"
    shutil.copytree(release_dir, rel)
    return rel


def evaluate(python: Path, release: Path, *args) -> subprocess.CompletedProcess:
    return run([python, "evaluate.py", *args], release, clean_env(), timeout=300)


def test_the_docstring_names_each_path_and_its_packages():
    text = evaluate_script()
    doc = text.split('"""')[1]
    assert pip_line(CORE) in doc  # the line to paste, whole
    for path, packages in PATHS[1:]:
        assert f"{path}: + {' '.join(packages)}" in doc
    # The openai backend needs neither torch nor transformers; the hf backend needs jinja2 as well.
    assert not {"torch", "transformers"} & set(CORE)
    hf = next(packages for path, packages in PATHS if "--backend hf" in path)
    assert {"torch", "transformers", "safetensors", "jinja2"} <= set(hf)


def test_the_venv_holds_the_first_line_and_nothing_heavier(python: Path):
    names = installed(python)
    assert set(CORE) <= names
    assert not names & (NOT_CORE | {"mvlsib-build", "matplotlib", "torchvision"}), names & NOT_CORE
    for module in ("mvlsib", *(IMPORT_NAMES.get(p, p) for p in NOT_CORE)):
        proc = subprocess.run([python, "-c", f"import {module}"], capture_output=True, env=clean_env())
        assert proc.returncode != 0, f"{module} is importable in the venv"


def test_every_help(python: Path, release: Path):
    assert "report" in evaluate(python, release, "--help").stdout
    for command in COMMANDS:
        evaluate(python, release, command.name, "--help")
        if isinstance(command, click.Group):
            for sub in command.commands:
                evaluate(python, release, command.name, sub, "--help")


def test_openai_run_and_the_commands_on_it(python: Path, release: Path, tmp_path: Path):
    runs = tmp_path / "runs"
    with lettered_server(fail_every=0) as server:
        openai = ["--backend", "openai", "--base-url", server.base_url, "--model", "served-vlm", "--no-progress"]
        whole = evaluate(python, release, *openai, "--data", ".", *SELECTION, "--out", runs / "whole")
        assert "21 new predictions" in whole.stdout  # (i2s, s2i, s2t at k 1, 3; t2s at k 1) x 3
        for shard in ("0/2", "1/2"):
            evaluate(python, release, "run", *openai, *SELECTION, "--shard", shard, "--out", runs / "shards")
        evaluate(python, release, "merge", runs / "shards", "--out", runs / "merged")

        evaluate(python, release, "batch", "prepare", "--data", ".", "--model", "served-vlm", *SELECTION,
                 "--out", tmp_path / "batch", "--no-progress")  # fmt: skip
        requests = sorted((tmp_path / "batch").glob("*.jsonl"))
        assert requests
        counts = run_batch(requests, tmp_path / "results.jsonl", server.base_url)
        assert counts["failed"] == 0
    evaluate(python, release, "batch", "collect", tmp_path / "batch", tmp_path / "results.jsonl",
             "--out", runs / "batch", "--no-progress")  # fmt: skip

    report = evaluate(python, release, "report", runs / "whole", runs / "merged", "--out", tmp_path / "report")
    assert (tmp_path / "report" / "report.md").is_file() and "report.md" in report.stdout
    assert "figures skipped: install matplotlib" in (tmp_path / "report" / "report.md").read_text("utf-8")
    evaluate(python, release, "compare", runs / "whole", runs / "merged")
    evaluate(python, release, "items", runs / "whole", runs / "batch", "--out", tmp_path / "items")
    scores = tmp_path / "scores.csv"
    scores.write_text("model,benchmark,score\nwhole,other,0.5\n", encoding="utf-8")
    evaluate(python, release, "correlate", runs / "whole", "--scores", scores)
    evaluate(python, release, "plan", *SELECTION, "--gpus", "2")
    assert not list(release.rglob("__pycache__"))


def test_the_hf_path_names_what_to_install(python: Path, release: Path, tmp_path: Path):
    proc = subprocess.run(
        [python, "evaluate.py", "--data", ".", "--model", "some/model", *SELECTION, "--out", tmp_path / "run"],
        cwd=release,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    hf = next(packages for path, packages in PATHS if "--backend hf" in path)
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "which is not installed" in lines[0] and lines[0].endswith(pip_line(hf)), lines[0]
