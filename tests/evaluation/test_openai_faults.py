"""Faults planted in a local OpenAI-compatible server: redirects, slow drips, malformed
bodies, oversized bodies, echoed credentials (defects 1, 7, 8, 18)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.fakes.openai_compat import ANSWERS, completion, first_n_faulty, lettered_server, raw_reply

from mvlsib import httpio
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.run.prompts import build_prompt

SECRET = "sk-test-5e5e5e-do-not-print"


def _request() -> Request:
    p = build_prompt("s2t", ["A sentence."], ["sports", "travel", "health", "politics"])
    return Request("k", tuple(p.messages()))


def _backend(server, **kw):
    kw.setdefault("backoff", 0.001)
    backend = make_backend("openai", model="m", base_url=server.base_url, **kw)
    backend.set_images({})
    return backend


class _Catcher:
    """Another origin on 127.0.0.1 that records what it was sent."""

    def __init__(self):
        self.seen: list[tuple[str, str | None]] = []
        catcher = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _any(self):
                catcher.seen.append((self.command, self.headers.get("Authorization")))
                raw_reply(self, 200, completion("A"))

            do_GET = do_POST = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/steal"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize("status", [301, 302, 307])
def test_redirect_is_refused_and_key_not_forwarded(status, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    catcher = _Catcher()
    try:
        fault = first_n_faulty(99, lambda h: raw_reply(h, status, b"", {"Location": catcher.url}))
        with lettered_server(fail_every=0) as server:
            server.fault = fault
            backend = _backend(server)
            with pytest.raises(MvlsibError, match=f"HTTP {status} redirecting to {catcher.url}") as info:
                backend.generate([_request()])
            backend.close()
    finally:
        catcher.close()
    assert catcher.seen == []  # nothing, and certainly not the key, reached the other host
    assert SECRET not in str(info.value)


def test_whole_request_deadline_against_a_drip():
    """A server sending one byte every 0.2 s: per-read timeouts never fire; the deadline does."""

    def drip(handler):
        body = completion("A")
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        try:
            for byte in body:
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    with lettered_server(fail_every=0) as server:
        server.fault = first_n_faulty(99, drip)
        backend = _backend(server, timeout=0.6, max_retries=1)
        start = time.monotonic()
        with pytest.raises(MvlsibError, match="no complete answer within 0.6 s"):
            backend.generate([_request()])
        elapsed = time.monotonic() - start
        backend.close()
    assert elapsed < 3.0, elapsed  # 2 attempts x 0.6 s, not len(body) x 0.2 s


@pytest.mark.parametrize(
    "name,fault",
    [
        ("invalid utf-8", lambda h: raw_reply(h, 200, b'{"choices": [{"message": {"content": "\xff\xfe"}}]}')),
        ("non-string content", lambda h: raw_reply(h, 200, completion({"text": 5}))),
        ("non-string part", lambda h: raw_reply(h, 200, completion([{"type": "text", "text": 7}]))),
        ("truncated body", lambda h: raw_reply(h, 200, completion("A")[:20], length=200)),
        ("not json", lambda h: raw_reply(h, 200, b"<html>gateway</html>")),
    ],
)
def test_malformed_answers_are_retried(name, fault):
    with lettered_server(fail_every=0) as server:
        server.fault = first_n_faulty(1, fault)
        backend = _backend(server)
        assert backend.generate([_request()]) == [ANSWERS[0][0]], name
        assert backend.stats.retries == 1
        backend.close()


def test_malformed_answers_end_in_a_message_not_a_traceback():
    with lettered_server(fail_every=0) as server:
        server.fault = first_n_faulty(99, lambda h: raw_reply(h, 200, completion(12)))
        backend = _backend(server, max_retries=2)
        with pytest.raises(MvlsibError, match="giving up after 3 attempts.*content is a int"):
            backend.generate([_request()])
        backend.close()


def test_response_size_is_capped(monkeypatch):
    monkeypatch.setattr(httpio, "MAX_RESPONSE_BYTES", 1000)
    big = completion("A" * 5000)

    def streamed(handler):  # no Content-Length: the cap must stop the read itself
        handler.send_response(200)
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        try:
            handler.wfile.write(big)
        except OSError:
            pass

    with lettered_server(fail_every=0) as server:
        server.fault = first_n_faulty(99, streamed)
        backend = _backend(server)
        with pytest.raises(MvlsibError, match="over the 1,000-byte limit"):
            backend.generate([_request()])
        backend.close()


def test_echoed_key_is_redacted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)

    def echo(handler):  # a proxy that echoes request headers into its error page
        raw_reply(handler, 400, f"bad request; headers: {dict(handler.headers)}".encode())

    with lettered_server(fail_every=0) as server:
        server.fault = first_n_faulty(99, echo)
        backend = _backend(server)
        with pytest.raises(MvlsibError, match="HTTP 400") as info:
            backend.generate([_request()])
        backend.close()
    assert SECRET not in str(info.value)
    assert "Bearer ***" in str(info.value)


def test_redact_hides_token_shapes():
    text = "Authorization: Bearer abc.def-123 token=hf_AbCdEfGhIjKl key sk-proj-1234567890"
    out = httpio.redact(text, ("abc.def-123",))
    assert "abc.def" not in out and "hf_AbCd" not in out and "sk-proj" not in out
    assert json.dumps(out)  # still plain text


def test_http_proxy_from_the_environment_is_used(monkeypatch):
    """The transport honours http_proxy/no_proxy as urllib did (clusters reach servers through proxies)."""
    import http.client

    seen = []

    class Proxy(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            seen.append(self.path)  # absolute-form: the proxy is asked for the full URL
            body = self.rfile.read(int(self.headers["Content-Length"]))
            target = self.path.split("://", 1)[1]
            hostport, _, path = target.partition("/")
            conn = http.client.HTTPConnection(hostport, timeout=10)
            conn.request("POST", "/" + path, body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            raw_reply(self, resp.status, resp.read())
            conn.close()

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.server_address[1]}")
        monkeypatch.setenv("no_proxy", "example.invalid")
        for name in ("HTTP_PROXY", "NO_PROXY", "all_proxy", "ALL_PROXY"):
            monkeypatch.delenv(name, raising=False)
        with lettered_server(fail_every=0) as server:
            backend = _backend(server)
            assert backend.generate([_request()]) == [ANSWERS[0][0]]
            backend.close()
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert seen == [f"{server.base_url}/chat/completions"]
