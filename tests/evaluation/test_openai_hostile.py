"""The openai backend against a hostile OpenAI-compatible server on 127.0.0.1: a table of answer shapes.

Every whole answer of tests/support/fakes/hostile.py (HTML, deep nesting, 6,000-digit numbers, NaN, lone
surrogates, ...), every path of a real chat completion given a value of another JSON type
(generated), broken replies, a table of ``Retry-After`` values and of credentials a header cannot
carry. Outcome: the answer recorded (lone surrogates kept recoverably) or one MvlsibError line;
never another exception, never the key; `mvlsib-eval run` exits 2 with no traceback and the key
in no output and no run file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from support.fakes import hostile
from support.fakes.openai_compat import ANSWERS, completion, first_n_faulty, lettered_server, raw_reply

from mvlsib import httpio, jsonio
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.run.prompts import build_prompt

SECRET = "sk-hostile-7c7c7c-never-print-me"
REAL = json.loads(completion("(C)"))


def _request() -> Request:
    p = build_prompt("s2t", ["A sentence."], ["sports", "travel", "health", "politics"])
    return Request("s2t|k1|eng_Latn|0", tuple(p.messages()))


def _generate(server, **kw) -> list[str]:
    kw.setdefault("backoff", 0.001)
    kw.setdefault("max_retries", 1)
    backend = make_backend("openai", model="m", base_url=server.base_url, **kw)
    backend.set_images({})
    try:
        return backend.generate([_request()])
    finally:
        backend.close()


def _outcome(server, capsys, **kw) -> tuple[str, list[str] | None]:
    try:
        result = _generate(server, **kw)
    except MvlsibError as exc:
        assert "\n" not in str(exc) and SECRET not in str(exc), str(exc)
        out = ("message", None)
    else:
        assert all(isinstance(r, str) and not jsonio.has_lone_surrogate(r) for r in result)
        out = ("ok", result)
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err and "Traceback" not in captured.out + captured.err
    return out


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


@pytest.mark.parametrize("name", sorted(hostile.BODIES))
def test_every_hostile_body_is_a_message(name, capsys):
    with lettered_server(fail_every=0) as server:
        server.fault = lambda handler, n: hostile.body_fault(name)(handler, None)
        kind, _ = _outcome(server, capsys)
    assert kind == "message"


@pytest.mark.parametrize("name", sorted(hostile.BODIES))
def test_a_hostile_body_once_is_retried(name, capsys):
    with lettered_server(fail_every=0) as server:
        server.fault = first_n_faulty(1, lambda h: hostile.body_fault(name)(h, None))
        assert _outcome(server, capsys) == ("ok", [ANSWERS[0][0]])


def test_every_wrong_type_at_every_level_of_a_completion(capsys):
    variants = list(hostile.wrong_types(REAL))
    assert len(variants) >= 40
    seen = {"ok": 0, "message": 0}
    with lettered_server(fail_every=0) as server:
        for label, value in variants:
            body = json.dumps(value).encode()
            server.fault = lambda handler, n, body=body: raw_reply(handler, 200, body) or True
            kind, result = _outcome(server, capsys)
            seen[kind] += 1
            if kind == "ok":
                reads_content = label.startswith("choices/0/message/content") or label.startswith("choices/0/message=")
                # a field the backend does not read changes nothing; a null content is an empty answer
                assert result == ["(C)"] or (reads_content and result == [""]), (label, result)
            elif label.startswith(("id", "object", "choices/0/index", "choices/0/finish_reason")):
                raise AssertionError(f"{label}: a field the answer does not depend on made it fail")
    assert seen["message"] >= 10 and seen["ok"] >= 10, seen


@pytest.mark.parametrize(
    "content",
    ["\ud800", "A\udfff", "\ud83d(C)", "(C)\udc00\ud800", ["\ud800", "x"]],
    ids=["lone-high", "lone-low", "cut-emoji", "two", "in-a-part"],
)
def test_lone_surrogates_are_kept_recoverably(content, capsys):
    parts = [{"type": "text", "text": t} for t in content] if isinstance(content, list) else content
    with lettered_server(fail_every=0) as server:
        server.fault = lambda handler, n: raw_reply(handler, 200, completion(parts)) or True
        kind, result = _outcome(server, capsys)
    assert kind == "ok"
    text = "".join(content) if isinstance(content, list) else content
    assert result == [jsonio.storable(text)] and jsonio.recover(result[0]) == text
    assert result[0].encode("utf-8")  # storable: a predictions line can hold it


RETRY_AFTER = [
    "nan",
    "NaN",
    "inf",
    "-inf",
    "-1",
    "-0",
    "1e9",
    "0x10",
    "9" * 5000,
    "99999999999999999999999999",
    "Wed, 21 Oct 2015 07:28:00 GMT",
    "Fri, 31 Dec 9999 23:59:59 GMT",
    "Mon, 99 Foo 2020 99:99:99 GMT",
    "garbage",
    "",
    " ",
    "\u00b2",
    "\u00bd",
    "1.5.5",
    "0.001",
]


@pytest.mark.parametrize("value", RETRY_AFTER)
def test_retry_after_values(value, capsys, monkeypatch):
    monkeypatch.setattr(httpio, "MAX_RETRY_AFTER_S", 0.3)
    headers = {"Content-Type": "application/json", "Retry-After": value}
    asked = httpio.retry_after(value, cap=float("inf"))
    with lettered_server(fail_every=0) as server:
        server.fault = first_n_faulty(2, lambda h: raw_reply(h, 429, b'{"error": "slow down"}', headers))
        start = time.monotonic()
        outcome = _outcome(server, capsys, max_retries=3)
    # garbage falls back to the backoff; a wait within the cap is waited; a longer one stops the run at once
    # (it resumes) instead of holding every request behind this one
    assert outcome == (("message", None) if asked is not None and asked > 0.3 else ("ok", [ANSWERS[0][0]]))
    assert time.monotonic() - start < 3.0


@pytest.mark.parametrize("value", RETRY_AFTER)
def test_retry_after_parser(value):
    wait = httpio.retry_after(value)
    assert wait is None or 0.0 <= wait <= httpio.MAX_RETRY_AFTER_S


BAD_KEYS = {
    "newline": f"{SECRET}\n",
    "inner-newline": f"sk-abc\n{SECRET}",
    "carriage-return": f"{SECRET}\r",
    "control-a": f"{SECRET}\x01",
    "tab": f"\t{SECRET}",
    "space": f"{SECRET} ",
    "del": f"{SECRET}\x7f",
    "escape": f"\x1b[31m{SECRET}",
    "non-ascii": f"{SECRET}é",
    "zero-width": f"{SECRET}\u200b",
    "line-separator": f"{SECRET}\u2028",
    "nbsp": f"{SECRET}\u00a0",
    "quote": f'"{SECRET}"'.replace('"', "\u201c", 1),
    "undecodable-byte": f"{SECRET}\udcff",
}


@pytest.mark.parametrize("name", sorted(BAD_KEYS))
def test_a_key_no_header_can_carry_is_refused_by_name(name, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", BAD_KEYS[name])
    with lettered_server(fail_every=0) as server:
        with pytest.raises(MvlsibError, match="OPENAI_API_KEY") as info:
            _generate(server)
        assert server.requests == []  # refused before anything was sent
    assert SECRET not in str(info.value) and "sk-abc" not in str(info.value)


@pytest.mark.parametrize("name", sorted(BAD_KEYS))
def test_hf_token_no_header_can_carry_is_refused_by_name(name, monkeypatch, tmp_path):
    from mvlsib.builder.ingest import ingest

    monkeypatch.setenv("HF_TOKEN", BAD_KEYS[name])
    with pytest.raises(MvlsibError, match="HF_TOKEN") as info:
        ingest(sib="Nobody/nothing", endpoint="http://127.0.0.1:9", cache_dir=tmp_path, progress=False)
    assert SECRET not in str(info.value)


# ---------------------------------------------------------------- through the command, as a user runs it

RUN = "from mvlsib.cli import eval_cli; eval_cli()"


def _run(release_dir, out, base_url: str, key: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(OPENAI_API_KEY=key, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    args = ["run", "--backend", "openai", "--base-url", base_url, "--model", "m", "--data", str(release_dir)]
    args += ["--tasks", "s2t", "--k", "1", "--languages", "eng_Latn", "--limit", "2", "--out", str(out)]
    args += ["--retry-backoff", "0.001", "--max-retries", "1", "--no-progress"]
    return subprocess.run([sys.executable, "-c", RUN, *args], env=env, capture_output=True, text=True, timeout=240)


def _no_key_anywhere(res, out) -> None:
    assert SECRET not in res.stdout + res.stderr and "Traceback" not in res.stderr, res.stderr[-2000:]
    for path in out.rglob("*") if out.exists() else ():
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("name", ["deep-list", "long-int-in-field", "nan", "html", "empty-object"])
def test_run_against_a_hostile_server(name, release_dir, tmp_path):
    out = tmp_path / "run"
    with lettered_server(fail_every=0) as server:
        server.fault = lambda handler, n: hostile.body_fault(name)(handler, None)
        res = _run(release_dir, out, server.base_url, SECRET)
    assert res.returncode == 2, res.stderr[-2000:]
    assert len([line for line in res.stderr.splitlines() if line.strip()]) == 1, res.stderr
    _no_key_anywhere(res, out)


def test_run_records_a_lone_surrogate_answer(release_dir, tmp_path):
    out = tmp_path / "run"
    with lettered_server(fail_every=0) as server:
        server.fault = lambda handler, n: raw_reply(handler, 200, completion("\ud800(B)")) or True
        res = _run(release_dir, out, server.base_url, SECRET)
    assert res.returncode == 0, res.stderr[-2000:]
    preds = [json.loads(line) for line in (out / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert len(preds) == 2 and all(jsonio.recover(p["response"]) == "\ud800(B)" for p in preds)
    _no_key_anywhere(res, out)


@pytest.mark.parametrize("name", ["newline", "control-a", "non-ascii"])
def test_run_refuses_a_bad_key_by_name(name, release_dir, tmp_path):
    out = tmp_path / "run"
    with lettered_server(fail_every=0) as server:
        res = _run(release_dir, out, server.base_url, BAD_KEYS[name])
        assert server.requests == []
    assert res.returncode == 2 and "OPENAI_API_KEY" in res.stderr, res.stderr[-2000:]
    _no_key_anywhere(res, out)
