"""The openai backend continues a response cut off inside a thinking block, as the hf backend does.

A server on 127.0.0.1 plays a reasoning model that thinks for ``THOUGHT`` tokens, weighing a wrong
letter (A) inside its thinking block, and then answers B. It honours the request's token limit:
a response longer than ``max_tokens`` / ``max_completion_tokens`` is cut there with
``finish_reason: "length"``. Two shapes, as servers send them:

- the thinking inline in ``content`` with the family's own markers: Qwen3.5's ``<think>``, Gemma 4's
  thought channel ``<|channel>thought ... <channel|>``, Kimi's ``◁think▷ ... ◁/think▷``;
- a reasoning parser (vLLM, SGLang): the thinking in ``message.reasoning_content``, the answer in
  ``content`` (empty while the model is still thinking).

With ``--max-new-tokens 8`` every first response is cut while thinking; the backend asks once more
with ``--thinking-max-new-tokens`` and reads the letter after the block. A budget still too small
leaves the block unfinished: stored unclosed, scored as a format error, the run completes.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.fakes.openai_compat import ChatServer

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.run.prompts import build_prompt

THOUGHT = 30  # tokens of thinking before the block closes

# (opener, closer) as each family writes them in its response.
STYLES = {
    "qwen3_5": ("<think>\n", "\n</think>\n\n"),
    "gemma4": ("<|channel>thought\n", "<channel|>"),
    "kimi": ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
}


def _tokens(opener: str, closer: str) -> list[str]:
    """The model's whole response, token by token: thinking that weighs A, then the answer B."""
    return [opener] + ["A? " if i % 5 == 0 else "hmm " for i in range(THOUGHT - 2)] + [closer, "B"]


def thinking_server(style: str, parser: bool = False) -> ChatServer:
    opener, closer = STYLES[style]
    full = _tokens(opener, closer)

    def answer(payload: dict, _n: int) -> dict:
        limit = payload.get("max_tokens") or payload["max_completion_tokens"]
        said = full[:limit]
        finish = "length" if len(said) < len(full) else "stop"
        if not parser:
            return {"content": "".join(said), "finish_reason": finish}
        # A reasoning parser: the block's inside apart, the rest (nothing while still thinking) as content.
        thinking_done = closer in said
        inside = said[1 : said.index(closer)] if thinking_done else said[1:]
        rest = said[said.index(closer) + 1 :] if thinking_done else []
        return {"reasoning_content": "".join(inside), "content": "".join(rest) or None, "finish_reason": finish}

    return ChatServer(answer)


def _run(release_dir, out, server: ChatServer, thinking_budget: int) -> CliRunner:
    args = ["run", "--data", release_dir, "--model", "thinker", "--backend", "openai"]
    args += ["--base-url", server.base_url, "--out", out, "--tasks", "s2t", "--k", "1", "--languages", "eng_Latn"]
    args += ["--limit", "3", "--max-new-tokens", "8", "--thinking-max-new-tokens", thinking_budget, "--no-progress"]
    return CliRunner().invoke(eval_cli, [str(a) for a in args])


def _records(out) -> list[dict]:
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]


CASES = [("qwen3_5", False), ("gemma4", False), ("kimi", False), ("qwen3_5", True), ("gemma4", True)]


@pytest.mark.parametrize(("style", "parser"), CASES)
def test_a_cut_off_thinking_block_is_continued_and_the_letter_after_it_read(style, parser, release_dir, tmp_path):
    with thinking_server(style, parser) as server:
        result = _run(release_dir, tmp_path / "run", server, 64)
        limits = [r.get("max_tokens") for r in server.requests]
    assert result.exit_code == 0, result.output
    records = _records(tmp_path / "run")
    assert len(records) == 3 and all(r["letter"] == "B" for r in records), records
    # each prompt: once with the answer budget, cut inside the block; once with the thinking budget
    assert sorted(limits) == [8] * 3 + [64] * 3
    opener, closer = STYLES[style]
    kept = ("<think>", "</think>") if parser else (opener, closer)
    assert all(r["response"].startswith(kept[0]) and kept[1] in r["response"] for r in records)
    config = json.loads((tmp_path / "run" / "config.json").read_text("utf-8"))
    assert config["backend"]["thinking_max_new_tokens"] == 64, config["backend"]


@pytest.mark.parametrize(("style", "parser"), CASES)
def test_a_block_still_unfinished_is_a_format_error_and_the_run_completes(style, parser, release_dir, tmp_path):
    with thinking_server(style, parser) as server:
        result = _run(release_dir, tmp_path / "run", server, 16)
        assert sorted(r.get("max_tokens") for r in server.requests) == [8] * 3 + [16] * 3
    assert result.exit_code == 0, result.output
    records = _records(tmp_path / "run")
    assert len(records) == 3 and all(r["letter"] is None for r in records), records
    opener, closer = ("<think>", "</think>") if parser else STYLES[style]
    # stored as the model left it: the block open, the wrong letter inside it never read
    assert all(r["response"].startswith(opener) and closer not in r["response"] for r in records), records
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text("utf-8"))
    assert '"format_error_rate": 1.0' in json.dumps(metrics), metrics


def _text_request(key: str = "s2t") -> Request:
    p = build_prompt("s2t", ["The match was played.", "Tourism matters."], ["sports", "travel", "health", "politics"])
    return Request(key, tuple(p.messages()), p.image_ids)


@pytest.mark.usefixtures("release_dir")
def test_stats_and_a_budget_no_larger_than_the_answers_asks_once():
    """The backend's own counts; a thinking budget not above --max-new-tokens asks nothing more."""
    with thinking_server("gemma4") as server:
        backend = make_backend("openai", model="m", base_url=server.base_url, max_new_tokens=8, max_retries=0)
        backend.set_images({})
        assert backend.generate([_text_request()]) == ["".join(_tokens(*STYLES["gemma4"]))]
        assert backend.stats.thinking_continued == 1 and backend.stats.thinking_unfinished == 0
        backend.close()
        small = make_backend(
            "openai", model="m", base_url=server.base_url, max_new_tokens=8, thinking_max_new_tokens=8, max_retries=0
        )
        small.set_images({})
        (response,) = small.generate([_text_request()])
        assert len(server.requests) == 3 and response.startswith("<|channel>thought") and "<channel|>" not in response
        assert small.stats.thinking_continued == 0 and small.stats.thinking_unfinished == 1
        assert small.describe()["thinking_continuation"].startswith("none (")
        small.close()


@pytest.mark.usefixtures("release_dir")
def test_a_thinking_budget_of_0_refuses_with_the_fix():
    with thinking_server("kimi", parser=False) as server:
        backend = make_backend(
            "openai", model="m", base_url=server.base_url, max_new_tokens=8, thinking_max_new_tokens=0, max_retries=0
        )
        backend.set_images({})
        with pytest.raises(MvlsibError, match="still thinking.*--thinking-max-new-tokens"):
            backend.generate([_text_request()])
        backend.close()
        assert len(server.requests) == 1
