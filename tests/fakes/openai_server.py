"""A small OpenAI-compatible chat-completions server on 127.0.0.1 for the tests.

It records every request, answers in varied formats (cycling through ``ANSWERS``)
and, to exercise retries, answers some requests first with 429 or 503.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image

# (response text, letter the relaxed parser must read)
ANSWERS = [("(C)", "C"), ("**A**", "A"), ("D. because the sentence is about sports", "D"),
           ("Ｂ", "B"), ("I am not sure.", None), (" b)", "B")]


class FakeOpenAI:
    def __init__(self, fail_every: int = 3, stall_first: float = 0.0) -> None:
        self.requests: list[dict] = []
        self.auth_headers: list[str | None] = []
        self.failures = 0
        self.fail_every = fail_every
        self.stall_first = stall_first  # seconds the very first request hangs (a timeout to retry)
        self._lock = threading.Lock()
        self._seen = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                payload = json.loads(body)
                with server._lock:
                    server._seen += 1
                    n = server._seen
                if n == 1 and server.stall_first:
                    time.sleep(server.stall_first)
                    return  # the client has given up by now
                with server._lock:
                    # every fail_every-th arrival is refused first: 429 (with Retry-After) or 503
                    if server.fail_every and n % server.fail_every == 0:
                        server.failures += 1
                        status = 429 if server.failures % 2 else 503
                        self._send(status, {"error": {"message": "slow down"}},
                                   {"Retry-After": "0"} if status == 429 else {})
                        return
                    server.requests.append(payload)
                    server.auth_headers.append(self.headers.get("Authorization"))
                    text, _ = ANSWERS[(len(server.requests) - 1) % len(ANSWERS)]
                self._send(200, {"id": "x", "object": "chat.completion", "model": payload["model"],
                                 "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                              "finish_reason": "stop"}]})

            def _send(self, status, obj, headers=None):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def images_of(payload: dict) -> list[Image.Image]:
    """Decode the data-URL images of one request, in order."""
    out = []
    for message in payload["messages"]:
        for part in message["content"]:
            if part["type"] == "image_url":
                header, b64 = part["image_url"]["url"].split(",", 1)
                assert header in ("data:image/jpeg;base64", "data:image/png;base64")
                out.append(Image.open(io.BytesIO(base64.b64decode(b64))))
    return out


def text_of(payload: dict) -> str:
    return "".join(p.get("text", "") for m in payload["messages"] for p in m["content"] if p["type"] == "text")
