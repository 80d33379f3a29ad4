"""`mvlsib-eval run --data ORG/NAME --languages all`: the languages come from the Hub repo's card
(one `get_dataset_config_names` call), here against the Hub stand-in on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import EVAL_LANGUAGES, subprocess_env
from support.fakes.hub import serve_folder
from support.fakes.openai_compat import lettered_server

RUN = "from mvlsib.cli import eval_cli; eval_cli()"


def _env(hub, home: Path) -> dict[str, str]:
    env = subprocess_env(
        HF_HOME=str(home),
        HF_ENDPOINT=hub.endpoint,
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_XET="1",
        OPENAI_API_KEY="sk-unused",
    )
    env.pop("HF_TOKEN", None)
    return env


def _run(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", RUN, "run", *args], env=env, capture_output=True, text=True, timeout=240
    )


def test_languages_all_for_a_hub_repo(release_dir, tmp_path):
    out = tmp_path / "run"
    with serve_folder("org/mvl-sib", release_dir) as hub, lettered_server() as server:
        res = _run(
            _env(hub, tmp_path / "home"),
            "--data",
            "org/mvl-sib",
            "--languages",
            "all",
            "--tasks",
            "s2t",
            "--k",
            "1",
            "--limit",
            "2",
            "--backend",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            "served",
            "--out",
            str(out),
            "--no-progress",
        )
        assert res.returncode == 0, res.stderr[-3000:]
        fetched = [p for m, p in hub.requests if m == "GET" and "/resolve/" in p]
    config = json.loads((out / "config.json").read_text("utf-8"))
    assert config["fingerprint"]["languages"] == sorted(EVAL_LANGUAGES)  # every language config, not images
    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert sorted({p["language"] for p in preds}) == sorted(EVAL_LANGUAGES) and len(preds) == 4
    assert any(p.endswith("/README.md") for p in fetched)


def test_languages_all_for_a_missing_hub_repo(release_dir, tmp_path):
    with serve_folder("org/mvl-sib", release_dir) as hub:
        res = _run(
            _env(hub, tmp_path / "home"),
            "--data",
            "org/nothing-here",
            "--languages",
            "all",
            "--tasks",
            "s2t",
            "--k",
            "1",
            "--backend",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
            "--out",
            str(tmp_path / "run"),
            "--no-progress",
        )
    assert res.returncode == 2, res.stderr[-2000:]
    assert "org/nothing-here" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize(
    "config_name",
    ['"zz\\e[31m"', '"a b"', '"../x"', '"eng_Latn/"', '"eng_latn"', '"abc_Latn\\u202e"'],
    ids=["escape", "space", "dot-dot", "trailing-slash", "lower-script", "bidi"],
)
def test_a_hub_card_config_that_is_no_language_code_is_refused(release_dir, tmp_path, config_name):
    """The card is the Hub's answer: its config names become task and file names, so one that is not a
    language code (as a local folder's data/ would not list it) is refused, naming it harmlessly."""
    import shutil

    served = tmp_path / "served"
    shutil.copytree(release_dir, served)
    card = served / "README.md"
    text = card.read_text("utf-8")
    extra = f"- config_name: {config_name}\n  data_files:\n  - split: test\n    path: data/eng_Latn/test.parquet\n"
    card.write_text(text.replace("configs:\n", "configs:\n" + extra, 1), "utf-8")
    out = tmp_path / "run"
    with serve_folder("org/mvl-sib", served) as hub:
        res = _run(_env(hub, tmp_path / "home"), "--data", "org/mvl-sib", "--languages", "all", "--tasks", "s2t",
                   "--k", "1", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                   "--out", str(out), "--no-progress")  # fmt: skip
    assert res.returncode == 2, res.stderr[-2000:]
    # a name with "/" is refused by datasets itself as it reads the card: a refusal all the same
    said = "not a language code" if "/" not in config_name else "talking to the Hub failed"
    assert said in res.stderr and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "\x1b" not in res.stderr and "\u202e" not in res.stderr
    assert not out.exists()
