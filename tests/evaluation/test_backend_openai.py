"""The openai backend end to end against a local OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.fakes.openai_compat import ANSWERS, images_of, lettered_server, text_of

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.run.parsing import parse_letter
from mvlsib.evaluation.run.prompts import build_prompt

SECRET = "sk-test-5e5e5e-do-not-print"


def test_run_against_local_server(release_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    out = tmp_path / "run"
    with lettered_server(fail_every=3) as server:
        result = CliRunner().invoke(
            eval_cli,
            [
                "run",
                "--backend",
                "openai",
                "--base-url",
                server.base_url,
                "--model",
                "served-vlm",
                "--data",
                str(release_dir),
                "--tasks",
                "i2s,s2i",
                "--k",
                "3",
                "--languages",
                "eng_Latn",
                "--limit",
                "6",
                "--out",
                str(out),
                "--concurrency",
                "3",
                "--retry-backoff",
                "0.01",
                "--no-progress",
            ],
        )
        assert result.exit_code == 0, result.output
        assert server.failures >= 3, "the server must have refused some requests (429/503)"
    # every refused request was retried: 12 answered requests, one per prediction
    assert len(server.requests) == 12
    by_task = {"i2s": [], "s2i": []}
    for payload in server.requests:
        assert payload["model"] == "served-vlm" and payload["temperature"] == 0
        task = "s2i" if "Which image" in text_of(payload) else "i2s"
        by_task[task].append(payload)
    assert len(by_task["i2s"]) == len(by_task["s2i"]) == 6
    assert all(len(images_of(p)) == 3 for p in by_task["i2s"])  # k=3 reference images
    assert all(len(images_of(p)) == 4 for p in by_task["s2i"])  # 4 image options
    assert all(im.size[0] > 0 for p in by_task["s2i"] for im in images_of(p))
    assert set(server.auth_headers) == {f"Bearer {SECRET}"}

    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert len(preds) == 12
    expected = dict(ANSWERS)
    assert {p["response"] for p in preds} <= set(expected)
    for p in preds:
        assert p["letter"] == expected[p["response"]]
        assert p["correct"] == (p["letter"] == "ABCD"[p["label"]])
    metrics = json.loads((out / "metrics.json").read_text("utf-8"))
    n_fe = sum(p["letter"] is None for p in preds)
    fe = sum(c["format_error_rate"] * c["n"] for c in metrics["per_language"])
    assert fe == pytest.approx(n_fe)
    # the key never leaves the Authorization header
    for f in out.iterdir():
        assert SECRET not in f.read_text("utf-8"), f
    assert SECRET not in result.output


def test_gives_up_with_a_clear_message():
    with lettered_server(fail_every=1) as server:  # refuses everything
        backend = make_backend("openai", model="m", base_url=server.base_url, max_retries=2, backoff=0.001)
        backend.set_images({})
        p = build_prompt("s2t", ["A sentence."], ["sports", "travel", "health", "politics"])
        with pytest.raises(MvlsibError, match="giving up after 3 attempts; last error: HTTP (429|503)"):
            backend.generate([Request("k", tuple(p.messages()))])
        backend.close()


def test_client_errors_are_not_retried():
    with lettered_server(fail_every=0) as server:
        backend = make_backend("openai", model="m", base_url=server.base_url.replace("/v1", "/v2"), backoff=5)
        backend.set_images({})
        p = build_prompt("s2t", ["A sentence."], ["sports", "travel", "health", "politics"])
        with pytest.raises(MvlsibError, match="HTTP 404.*not retrying"):
            backend.generate([Request("k", tuple(p.messages()))])
        backend.close()


def test_answers_parse_as_documented():
    for text, letter in ANSWERS:
        assert parse_letter(text) == letter


def test_timeouts_are_retried():
    with lettered_server(fail_every=0, stall_first=1.5) as server:
        backend = make_backend("openai", model="m", base_url=server.base_url, timeout=0.3, backoff=0.01)
        backend.set_images({})
        p = build_prompt("s2t", ["A sentence."], ["sports", "travel", "health", "politics"])
        assert backend.generate([Request("k", tuple(p.messages()))]) == [ANSWERS[0][0]]
        assert backend.stats["retries"] == 1
        backend.close()
