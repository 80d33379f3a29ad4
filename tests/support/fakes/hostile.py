"""Hostile answers a server on 127.0.0.1 can give, as a table shared by the Hub and OpenAI fakes.

A *fault* is ``fault(handler, answer) -> True | value | bytes``: it gets the request's handler and
the answer the fake would have sent (``(status, value)``) and either writes a reply itself
(return True), or returns what to send instead (a JSON value, or bytes sent as they are).

- ``BODIES``: whole answers no server should send where a JSON object or list belongs (HTML,
  ``[]``, ``{}``, deep nesting, 6,000-digit numbers, NaN, lone surrogates, bad UTF-8, ...);
- ``TRANSPORT``: replies broken on the wire (cut short, dripping bytes, huge, redirects, silence);
- ``wrong_types(value)``: every path of a real answer (each key, the first item of each list,
  at every depth) with each value of another JSON type put there: the generated variants.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

DEEP = 200_000
LONG_DIGITS = "1" * 6000

# name -> bytes of a whole answer (each sent with 200 and Content-Type: application/json unless named html)
BODIES: dict[str, bytes] = {
    "html": b"<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
    "empty-list": b"[]",
    "empty-object": b"{}",
    "null": b"null",
    "string": b'"ok"',
    "number": b"5",
    "true": b"true",
    "deep-list": b"[" * DEEP + b"]" * DEEP,
    "deep-object": b'{"a":' * (DEEP // 2) + b"1" + b"}" * (DEEP // 2),
    "deep-in-field": b'{"choices": ' + b"[" * DEEP + b"]" * DEEP + b', "sha": "x", "files": []}',
    "long-int": LONG_DIGITS.encode(),
    "long-int-in-field": b'{"sha": ' + LONG_DIGITS.encode() + b', "index": ' + LONG_DIGITS.encode() + b"}",
    "long-float": b'{"x": 0.' + LONG_DIGITS.encode() + b"}",
    "nan": b'{"sha": NaN, "choices": [NaN]}',
    "infinity": b"[Infinity, -Infinity]",
    "lone-surrogate": b'{"sha": "\\ud800", "id": "\\udfff", "path": "a\\ud83d"}',
    "invalid-utf8": b'{"sha": "\xff\xfe"}',
    "empty-body": b"",
    "two-documents": b"{} {}",
    "bom": b"\xef\xbb\xbf{}",
    "truncated-json": b'{"id": "org/x", "sha": "ab',
    "control-in-string": b'{"sha": "a\x00b"}',
}


def reply(handler, status: int, body: bytes, headers: dict | None = None, length: int | None = None) -> None:
    """Write a whole reply; ``length`` may promise more than ``body`` holds (a cut-off body)."""
    handler.send_response(status)
    for key, value in (headers or {"Content-Type": "application/json"}).items():
        handler.send_header(key, value)
    if length != -1:
        handler.send_header("Content-Length", str(len(body) if length is None else length))
    handler.end_headers()
    try:
        handler.wfile.write(body)
        handler.wfile.flush()
    except OSError:
        pass
    handler.close_connection = True


def body_fault(name: str) -> Callable:
    body = BODIES[name]
    headers = {"Content-Type": "text/html"} if name == "html" else {"Content-Type": "application/json"}

    def fault(handler, answer):
        reply(handler, 200, body, headers)
        return True

    return fault


def drip(body: bytes = b'{"id": "x"}', every: float = 0.25, most: float = 8.0) -> Callable:
    """A byte every ``every`` seconds (each read succeeds: only a whole-request deadline ends it)."""

    def fault(handler, answer):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body) * 1000))
        handler.end_headers()
        end = time.monotonic() + most
        try:
            while time.monotonic() < end:
                for byte in body:
                    handler.wfile.write(bytes([byte]))
                    handler.wfile.flush()
                    time.sleep(every)
        except OSError:
            pass
        handler.close_connection = True
        return True

    return fault


def drip_headers(every: float = 0.25, most: float = 8.0) -> Callable:
    """The status line and then one header byte at a time: the deadline must cover the headers too."""

    def fault(handler, answer):
        end = time.monotonic() + most
        try:
            handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
            while time.monotonic() < end:
                handler.wfile.write(b"X")
                handler.wfile.flush()
                time.sleep(every)
        except OSError:
            pass
        handler.close_connection = True
        return True

    return fault


def silence(most: float = 8.0) -> Callable:
    def fault(handler, answer):
        time.sleep(most)
        handler.close_connection = True
        return True

    return fault


def huge(size: int, chunked_without_length: bool = True) -> Callable:
    """``size`` bytes of a JSON list, streamed without a Content-Length (the cap must stop the read itself)."""

    def fault(handler, answer):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if not chunked_without_length:
            handler.send_header("Content-Length", str(size))
        handler.send_header("Connection", "close")
        handler.end_headers()
        try:
            handler.wfile.write(b"[")
            sent = 1
            block = b"0," * 32768
            while sent < size:
                handler.wfile.write(block)
                sent += len(block)
            handler.wfile.write(b"0]")
        except OSError:
            pass
        handler.close_connection = True
        return True

    return fault


def truncated(body: bytes = b'{"id": "org/x", "sha": "') -> Callable:
    def fault(handler, answer):
        reply(handler, 200, body, length=len(body) + 500)
        return True

    return fault


def close_without_answer() -> Callable:
    def fault(handler, answer):
        handler.close_connection = True
        return True

    return fault


def redirect(location: str, status: int = 302) -> Callable:
    def fault(handler, answer):
        reply(handler, status, b"", {"Location": location})
        return True

    return fault


def huge_content_length() -> Callable:
    """A Content-Length of 5,000 digits (int() of it raises in Python 3.11+)."""

    def fault(handler, answer):
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "9" * 5000)
        handler.end_headers()
        handler.wfile.write(b"{}")
        handler.close_connection = True
        return True

    return fault


def TRANSPORT(redirect_to: str) -> dict[str, Callable]:
    return {
        "truncated": truncated(),
        "close-without-answer": close_without_answer(),
        "huge-content-length": huge_content_length(),
        "redirect-non-http": redirect("file:///etc/passwd"),
        "redirect-elsewhere": redirect(redirect_to),
    }


WRONG_VALUES: tuple = (None, 7, "x", [], {}, True, -1.5)


def _same_kind(a, b) -> bool:
    kinds = (bool, int, float, str, list, dict, type(None))
    return next(k for k in kinds if isinstance(a, k)) is next(k for k in kinds if isinstance(b, k))


def paths(value, prefix: tuple = ()) -> Iterator[tuple]:
    """Every path of a JSON value: each key of each object, the first item of each list, at every depth."""
    yield prefix
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from paths(sub, (*prefix, key))
    elif isinstance(value, list) and value:
        yield from paths(value[0], (*prefix, 0))


def replaced(value, path: tuple, new):
    if not path:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


def wrong_types(value, values: tuple = WRONG_VALUES) -> Iterator[tuple[str, object]]:
    """(label, mutated answer) for every path of ``value`` and every one of ``values`` of another JSON type."""
    for path in paths(value):
        here = value
        for step in path:
            here = here[step]
        for new in values:
            if not _same_kind(here, new):
                label = "/".join(map(str, path)) or "(root)"
                yield f"{label}={json.dumps(new)}", replaced(value, path, new)


def mutate(new) -> Callable:
    """A fault sending ``new`` (a JSON value) where the endpoint's answer was."""

    def fault(handler, answer):
        return json.dumps(new).encode()

    return fault


def outcome(call, baseline, capsys, secret: str, elapsed_limit: float) -> str:
    """'ok' (the normal result) or 'message' (one MvlsibError line); anything else fails the test."""
    from mvlsib.errors import MvlsibError

    start = time.monotonic()
    try:
        result = call()
    except MvlsibError as exc:
        message = str(exc)
        assert "\n" not in message and "Traceback" not in message, message
        assert secret not in message
        outcome = "message"
    else:
        assert result == baseline, "a wrong answer was accepted and changed the result"
        outcome = "ok"
    elapsed = time.monotonic() - start
    assert elapsed < elapsed_limit, f"took {elapsed:.1f} s"
    out, err = capsys.readouterr()
    assert secret not in out + err and "Traceback" not in out + err
    return outcome


def endless_tree_pages() -> Callable:
    """A tree listing that never ends: each page one new entry and a `Link: next` to the next page."""

    def fault(handler, answer):
        from urllib.parse import parse_qs, urlparse

        url = urlparse(handler.path)
        page = int((parse_qs(url.query).get("cursor") or ["0"])[0])
        entry = [{"type": "file", "oid": f"{page:040x}", "size": 1, "path": f"data/x{page}.tsv"}]
        host = handler.headers["Host"]
        nxt = f'<http://{host}{url.path}?recursive=True&cursor={page + 1}>; rel="next"'
        reply(handler, 200, json.dumps(entry).encode(), {"Content-Type": "application/json", "Link": nxt})
        return True

    return fault


def endless_discussions(per_page: int = 0) -> Callable:
    """A discussions listing whose `count` always says there is more, ``per_page`` new items a page."""

    def fault(handler, answer):
        from urllib.parse import parse_qs, urlparse

        page = int((parse_qs(urlparse(handler.path).query).get("p") or ["0"])[0])
        items = [
            {
                "num": page * per_page + i + 1,
                "title": f"spam {page}-{i}",
                "status": "open",
                "isPullRequest": True,
                "createdAt": "2026-11-26T00:00:00.000Z",
                "author": {"name": "someone"},
                "repo": {"name": "org/model", "type": "model"},
            }
            for i in range(per_page)
        ]
        body = {"count": 10**12, "start": page * per_page, "discussions": items}
        reply(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})
        return True

    return fault
