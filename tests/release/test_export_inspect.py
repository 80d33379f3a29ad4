"""The Inspect AI export, run by Inspect itself against the suite's OpenAI-compatible server.

Inspect runs from its own virtual environment (``$MVLSIB_HARNESS_VENVS/inspect``, made by
``nox -s harnesses`` from ``scripts/harness/inspect.txt``; docs/exports.md); it is never
installed into the test interpreter. The same server answers ``mvlsib-eval run`` with the
openai backend: an answer is a function of the prompt alone (its text and which images it
shows), so both runs get the same answer to the same prompt, and their scores must be equal.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from support import EVAL_LANGUAGES
from support.fakes.openai_compat import ANSWERS, ChatServer, images_of, thumb

from mvlsib.cli import eval_cli
from mvlsib.evaluation.run.prompts import prompt_for_example
from mvlsib.evaluation.run.scoring import METRICS
from mvlsib.evaluation.run.subset import select_rows
from mvlsib.release_format import mvl_sib

pytestmark = pytest.mark.harness

VENVS = Path(os.environ.get("MVLSIB_HARNESS_VENVS", Path.home() / ".cache" / "mvlsib" / "harness-venvs"))
LIMIT = 7
# Several images in one message (i2s k=3, s2i), and a text-only task.
RUNS = (("i2s", 3), ("s2i", 1), ("t2s", 1))


def _inspect_bin() -> Path:
    path = VENVS / "inspect" / "bin" / "inspect"
    if not path.is_file():
        msg = f"{path} not found: run nox -s harnesses (docs/exports.md) to run the real harness"
        if os.environ.get("CI"):
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    return path


class PromptKeyed:
    """Answers from ANSWERS by a hash of the prompt as the evaluator builds it: its text parts
    and the ids of the images it shows (recognised by their pixels, whatever the encoding)."""

    def __init__(self, images: dict) -> None:
        self.ids = sorted(images)
        self.thumbs = np.stack([thumb(images[i]) for i in self.ids])

    def prompt(self, payload: dict) -> list[list[str]]:
        seen = iter(
            self.ids[int(np.argmin(np.abs(self.thumbs - thumb(img)).sum(axis=1)))] for img in images_of(payload)
        )
        parts = [p for m in payload["messages"] for p in m["content"]]
        return [["text", p["text"]] if p["type"] == "text" else ["image", next(seen)] for p in parts]

    def __call__(self, payload: dict, n: int) -> str:
        digest = hashlib.sha256(json.dumps(self.prompt(payload)).encode("utf-8")).digest()
        return ANSWERS[digest[0] % len(ANSWERS)][0]


@pytest.fixture(scope="module")
def images(release_dir):
    return mvl_sib.load_images(release_dir)


@pytest.fixture(scope="module")
def inspect_dir(release_dir, tmp_path_factory) -> Path:
    from mvlsib.release.exports.inspect_eval import export_inspect

    out = tmp_path_factory.mktemp("inspect") / "task"
    export_inspect(release_dir, out, tasks="i2s,s2i,t2s", ks=[1, 3], limit=LIMIT)
    return out


def _expected_prompts(release_dir, images, task: str, k: int) -> list[list[list[str]]]:
    out = []
    for lang in EVAL_LANGUAGES:
        rows = select_rows(mvl_sib.load_rows(lang, release_dir), LIMIT)
        for ex in mvl_sib.build_examples(rows, images, task, k):
            parts = prompt_for_example(ex).parts
            out.append([[p["type"], p["text"] if p["type"] == "text" else p["image_id"]] for p in parts])
    return out


def _mvlsib_eval(server, release_dir, out: Path, task: str, k: int) -> dict:
    args = ["run", "--backend", "openai", "--base-url", server.base_url, "--model", "fake"]
    args += ["--data", str(release_dir), "--tasks", task, "--k", str(k), "--languages", ",".join(EVAL_LANGUAGES)]
    args += ["--limit", str(LIMIT), "--out", str(out), "--no-progress"]
    result = CliRunner(env={"OPENAI_API_KEY": "unused"}).invoke(eval_cli, args)
    assert result.exit_code == 0, result.output
    return json.loads((out / "metrics.json").read_text("utf-8"))


def _inspect_eval(server, inspect_dir: Path, logs: Path, task: str, k: int) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    # Inspect's provider for any OpenAI-compatible server: openai-api/SERVICE/MODEL, with the
    # server's URL and key in SERVICE_BASE_URL and SERVICE_API_KEY.
    env.update(LOCAL_BASE_URL=server.base_url, LOCAL_API_KEY="unused", INSPECT_DISPLAY="plain")
    cmd = [str(_inspect_bin()), "eval", f"{inspect_dir / 'mvl_sib_inspect.py'}@{task}_k{k}"]
    cmd += [
        "--model",
        "openai-api/local/fake",
        "--log-dir",
        str(logs),
        "--log-format",
        "json",
        "--max-connections",
        "4",
    ]
    res = subprocess.run(cmd, cwd=logs.parent, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-3000:]
    (log_file,) = logs.glob("*.json")
    log = json.loads(log_file.read_text("utf-8"))
    # Inspect exits 0 on an interrupted run too: its log says whether it finished.
    assert log["status"] == "success", json.dumps(log.get("error"))[:2000]
    (scores,) = log["results"]["scores"]
    return {name: m["value"] for name, m in scores["metrics"].items()}


@pytest.mark.parametrize("task,k", RUNS)
def test_inspect_eval_sends_the_evaluator_prompts_and_scores_like_it(
    release_dir, images, inspect_dir, tmp_path, task, k
):
    answer = PromptKeyed(images)
    with ChatServer(answer) as server:
        inspect_scores = _inspect_eval(server, inspect_dir, tmp_path / "logs", task, k)
        inspect_requests = list(server.requests)
    with ChatServer(answer) as server:
        metrics = _mvlsib_eval(server, release_dir, tmp_path / "run", task, k)
        eval_requests = list(server.requests)

    expected = sorted(map(json.dumps, _expected_prompts(release_dir, images, task, k)))
    assert len(expected) == LIMIT * len(EVAL_LANGUAGES)
    # The same prompts, each image in its place (instances may share a prompt: compared as multisets).
    assert sorted(json.dumps(answer.prompt(p)) for p in inspect_requests) == expected
    assert sorted(json.dumps(answer.prompt(p)) for p in eval_requests) == expected
    assert all(p["max_tokens"] == 8 and p["temperature"] == 0 for p in inspect_requests)

    (row,) = metrics["macro"]
    for name in METRICS:
        assert inspect_scores[name] == pytest.approx(row[name]), name
    cells = {c["language"]: c for c in metrics["per_language"]}
    assert set(cells) == set(EVAL_LANGUAGES)
    for lang, cell in cells.items():
        for name in METRICS:
            if cell[name] is None:
                assert f"{name}_{lang}" not in inspect_scores
            else:
                assert inspect_scores[f"{name}_{lang}"] == pytest.approx(cell[name]), (lang, name)
    # The answers exercise right, wrong and unreadable responses.
    assert 0 < row["format_error_rate"] < 1 and 0 < row["accuracy"] < 1


@pytest.mark.usefixtures("release_dir")
def test_inspect_export_folder(inspect_dir):
    from mvlsib.release.bundle import bundle_zip
    from mvlsib.release.exports.inspect_eval import TASK_TEMPLATE

    info = json.loads((inspect_dir / "export.json").read_text("utf-8"))
    assert info["format"] == "inspect" and info["limit"] == LIMIT
    assert info["inspect_tasks"] == ["i2s_k1", "i2s_k3", "s2i_k1", "s2i_k3", "t2s_k1"]
    text = (inspect_dir / "mvl_sib_inspect.py").read_text("utf-8")
    assert text.startswith(TASK_TEMPLATE.read_text("utf-8"))
    assert all(f"@task\ndef {name}():" in text for name in info["inspect_tasks"])
    # One source of truth: the evaluator's code and the loader are copied, never restated.
    assert (inspect_dir / "mvlsib_evaluate.zip").read_bytes() == bundle_zip()
    assert (inspect_dir / "mvl_sib.py").read_bytes() == Path(mvl_sib.__file__).read_bytes()


def test_export_command_writes_the_inspect_folder_and_limit_is_for_inspect_only(release_dir, tmp_path):
    from mvlsib.cli import build_cli

    out = tmp_path / "inspect"
    args = ["export", "inspect", "--release", str(release_dir), "--out", str(out), "--tasks", "s2t", "--k", "3"]
    result = CliRunner().invoke(build_cli, [*args, "--limit", "4"])
    assert result.exit_code == 0, result.output
    info = json.loads((out / "export.json").read_text("utf-8"))
    assert info["inspect_tasks"] == ["s2t_k3"] and info["limit"] == 4
    assert "def s2t_k3():" in (out / "mvl_sib_inspect.py").read_text("utf-8")

    other = CliRunner().invoke(
        build_cli, ["export", "lmms-eval", "--release", str(release_dir), "--out", str(tmp_path / "l"), "--limit", "4"]
    )
    assert other.exit_code == 2 and "--limit applies to inspect only" in other.output
    assert not (tmp_path / "l").exists()
    zero = CliRunner().invoke(build_cli, [*args, "--limit", "0"])
    assert zero.exit_code == 2 and "--limit" in zero.output
