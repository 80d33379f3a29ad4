"""A credential the process holds never leaves it through a writer, whatever shape it has.

Masking by shape (``sk-...``, ``hf_...``, ``?token=``) misses a key of any other shape that a peer
echoes back (a server quoting the ``Authorization`` header into its answer). ``credentials``
remembers the values where they enter; every writer (JSON, YAML, the terminal, CSV, Markdown, HTML)
hides them. Generated: every writer x every key shape, then a real run against a server that
echoes the header.
"""

from __future__ import annotations

import base64
import html
import io
import json
import urllib.parse

import pytest
from click.testing import CliRunner
from support.fakes.openai_compat import ChatServer

from mvlsib import credentials, csvio, escape, httpio, jsonio, terminal
from mvlsib.cli import eval_cli

SHAPES = {
    "openai": "sk-proj-Zq8x1LmN0pQ",
    "plain": "correcthorsebattery",
    "slash-plus": "aB3/dE6+gH9=kL",
    "quote-backslash": 'pa"ss\\word99',
    "unicode": "schlüssel-geheim-7",
}

WRITERS = {
    "json": lambda t: jsonio.dumps({"k": t}),
    "json-unicode": lambda t: jsonio.dumps({t: [t]}, ensure_ascii=False, indent=2),
    "yaml": lambda t: jsonio.yaml_dumps({"k": t, "l": [t]}),
    "terminal-visible": terminal.visible,
    "terminal-line": lambda t: terminal.line("got {}", t),
    "terminal-block": terminal.block,
    "csv": lambda t: _csv(t),
    "md-flat": escape.flat,
    "md-text": escape.md_text,
    "md-code": escape.md_code,
    "md-code-block": escape.md_code_block,
    "html": escape.html_text,
    "redact": httpio.redact,
}


# How a peer may echo a key: encoded alone or inside a longer value (its bytes at each offset of a
# base64 group, followed by 0-2 bytes), escaped, or wrapped across lines. Each maps key -> echoed text.
def _b64(prefix: bytes, suffix: bytes, urlsafe: bool = False):
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return lambda k: encode(prefix + k.encode() + suffix).decode()


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _wrapped(at: float, brk: str):
    return lambda k: k[: int(len(k) * at)] + brk + k[int(len(k) * at) :]


ENCODINGS = {
    **{f"base64-{len(p)}-{len(s)}": _b64(p, s) for p in (b"", b"a", b"ab") for s in (b"", b"x", b"xy")},
    **{f"base64url-{len(p)}": _b64(p, b"", urlsafe=True) for p in (b"", b"u:", b"usr:")},
    "base64-folded": lambda k: "\r\n".join(_chunks(base64.b64encode(k.encode() * 4).decode(), 8)),
    "percent": lambda k: urllib.parse.quote(k, safe=""),
    "percent-path": urllib.parse.quote,
    "percent-plus": urllib.parse.quote_plus,
    "percent-lower": lambda k: "".join(f"%{b:02x}" for b in k.encode()),
    "hex": lambda k: k.encode().hex(),
    "json-ascii": lambda k: json.dumps({"k": k}),
    "json-slash": lambda k: json.dumps(k).replace("/", "\\/"),
    "json-of-base64": lambda k: json.dumps(base64.b64encode(k.encode()).decode()),
    **{
        f"wrapped-{at}-{name}": _wrapped(at, brk)
        for at in (0.2, 0.5, 0.8)
        for name, brk in (("lf", "\n"), ("crlf", "\r\n"), ("indent", "\n    "), ("json-lf", "\\n"))
    },
}
# No run of this many characters of an echo survives (its framing, a base64 padding, stays shorter).
SURVIVING = 8


def _csv(text: str) -> str:
    fh = io.StringIO()
    csvio.write_dicts(fh, [{"a": text}], ["a"])
    return fh.getvalue()


@pytest.fixture(autouse=True)
def held():
    credentials.forget_all()
    yield
    credentials.forget_all()


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_no_writer_shows_a_held_credential(writer, shape):
    secret = SHAPES[shape]
    credentials.remember(secret)
    shown = WRITERS[writer](f"the server said: Bearer {secret}, twice: {secret}.")
    assert secret not in shown and "***" in shown.replace("\\", ""), shown  # md_text writes \*
    for spelling in (json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]):
        assert spelling not in shown, shown


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_no_writer_shows_an_encoded_credential(writer, shape, encoding):
    secret = SHAPES[shape]
    echoed = ENCODINGS[encoding](secret)
    credentials.remember(secret)
    shown = WRITERS[writer](f"the server said: {echoed}.")
    # undo the writers' own escaping, so that it cannot hide a leak from this check
    plain = html.unescape(shown).replace("\\", "")
    assert "***" in plain, shown
    for i in range(len(echoed) - SURVIVING + 1):
        assert echoed[i : i + SURVIVING] not in plain, (echoed, shown)


def test_a_short_value_is_not_taken_for_a_credential():
    credentials.remember_environment({"TOKENIZERS_PARALLELISM": "false", "HF_TOKEN": "hf_" + "x" * 20})
    assert jsonio.dumps({"a": "false"}) == '{"a": "false"}'
    assert "x" * 20 not in terminal.visible("hf_" + "x" * 20)


def test_every_checked_credential_is_held():
    """A key or token read anywhere passes ``httpio.check_credential`` (whatever its variable's name)."""
    assert httpio.env_credential("LLM_ACCESS", {"LLM_ACCESS": "opaque-value-42"}) == "opaque-value-42"
    assert "opaque-value-42" not in jsonio.dumps(["opaque-value-42"])


def _run_against(server, key: str, release_dir, out, monkeypatch):
    """A two-prompt run of the openai backend against ``server``, with ``key`` as the API key."""
    args = ["run", "--backend", "openai", "--model", "m", "--data", str(release_dir), "--tasks", "s2t", "--k", "1",
            "--languages", "eng_Latn", "--limit", "2", "--out", str(out), "--no-progress"]  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with server:
        result = CliRunner().invoke(eval_cli, [*args, "--base-url", server.base_url])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("key", ["k3y-of-no-known-shape", "sk-proj-Zq8x1LmN0pQabcdefgh"])
def test_a_key_the_server_echoes_is_written_nowhere(key, release_dir, tmp_path, monkeypatch):
    server = ChatServer(lambda payload, n: "")
    server.answer = lambda payload, n: f"(A) you sent {server.auth_headers[n]}"
    out = tmp_path / "run"
    result = _run_against(server, key, release_dir, out, monkeypatch)
    assert server.auth_headers and all(h == f"Bearer {key}" for h in server.auth_headers)
    assert key not in result.output
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "predictions.jsonl" for p in written)
    for path in written:
        assert key.encode() not in path.read_bytes(), path
    answers = [json.loads(line)["response"] for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert answers and all(a == "(A) you sent Bearer ***" for a in answers), answers


@pytest.mark.parametrize("encoding", ["base64-1-2", "base64url-2", "percent", "hex", "wrapped-0.5-lf", "json-ascii"])
def test_a_key_the_server_echoes_encoded_is_written_nowhere(encoding, release_dir, tmp_path, monkeypatch):
    key = "sk-ab/cd+ef=gh&ij%klmn0123"
    echoed = ENCODINGS[encoding](key)
    server = ChatServer(lambda payload, n: f"(A) you sent {echoed}")
    out = tmp_path / "run"
    result = _run_against(server, key, release_dir, out, monkeypatch)
    texts = {"output": result.output, **{str(p): p.read_text() for p in out.rglob("*") if p.is_file()}}
    assert "***" in texts[str(out / "predictions.jsonl")]
    for where, text in texts.items():
        for i in range(len(echoed) - SURVIVING + 1):
            run = echoed[i : i + SURVIVING]
            assert run not in text and json.dumps(run)[1:-1] not in text, where  # as it is, or as JSON writes it
