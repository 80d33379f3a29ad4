"""An OpenAI-compatible chat-completions server on 127.0.0.1: the one such fake of the test suite.

``ChatServer`` is the server: it records every accepted request and its Authorization
header, refuses every ``fail_every``-th arrival first (429 with Retry-After, or 503, in
turn) and can hang on the very first request (``stall_first`` seconds) to exercise
timeouts. What it answers is a policy, a callable ``(payload, n) -> text`` where ``n``
counts the accepted requests from 0:

- ``lettered_server``: cycles through ``ANSWERS`` (varied answer formats, one unreadable);
- ``content_server``: picks from ``ANSWERS`` by a hash of the prompt (text and image bytes), so the
  answer to a prompt does not depend on when it arrives (for tests that reorder requests);
- ``topic_server``: really looks at the image (nearest bundled-pool image by 16x16
  thumbnail), reads the lettered options out of the question and answers like a model
  would (see ``TopicAnswerer``).
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image

# (response text, letter the relaxed parser must read)
ANSWERS = [
    ("(C)", "C"),
    ("**A**", "A"),
    ("D. because the sentence is about sports", "D"),
    ("Ｂ", "B"),
    ("I am not sure.", None),
    (" b)", "B"),
]


class ChatServer:
    def __init__(
        self,
        answer: Callable[[dict, int], str],
        fail_every: int = 0,
        stall_first: float = 0.0,
        fault: Callable[[BaseHTTPRequestHandler, int], bool] | None = None,
    ) -> None:
        self.answer = answer
        # fault(handler, n): may answer arrival n itself (return True) with something a real server got wrong
        self.fault = fault
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
                if server.fault is not None and server.fault(self, n):
                    return
                if n == 1 and server.stall_first:
                    time.sleep(server.stall_first)
                    return  # the client has given up by now
                with server._lock:
                    if server.fail_every and n % server.fail_every == 0:
                        server.failures += 1
                        status = 429 if server.failures % 2 else 503
                        self._send(
                            status, {"error": {"message": "slow down"}}, {"Retry-After": "0"} if status == 429 else {}
                        )
                        return
                    server.requests.append(payload)
                    server.auth_headers.append(self.headers.get("Authorization"))
                    index = len(server.requests) - 1
                answer = server.answer(payload, index)
                # A policy answers with the text, or with the whole message (e.g. a reasoning parser's
                # reasoning_content beside the content) and optionally its finish_reason.
                message = dict(answer) if isinstance(answer, dict) else {"content": answer}
                finish = message.pop("finish_reason", "stop")
                self._send(
                    200,
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "model": payload["model"],
                        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
                    },
                )

            def _send(self, status, obj, headers=None):
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            # The default backlog (5) drops connections when a client opens 8 at once.
            request_queue_size = 64
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ChatServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def raw_reply(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict | None = None, length: int | None = None
) -> None:
    """Write a response by hand; ``length`` may promise more bytes than ``body`` has (a cut-off body)."""
    handler.send_response(status)
    for k, v in (headers or {"Content-Type": "application/json"}).items():
        handler.send_header(k, v)
    handler.send_header("Content-Length", str(len(body) if length is None else length))
    handler.end_headers()
    handler.wfile.write(body)
    handler.wfile.flush()
    if length is not None and length > len(body):
        handler.close_connection = True


def completion(content) -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        }
    ).encode()


def first_n_faulty(n_faulty: int, fault: Callable[[BaseHTTPRequestHandler], None]):
    """A ``fault`` policy: arrivals 1..n_faulty get ``fault``, later ones the normal answer."""

    def policy(handler, n):
        if n <= n_faulty:
            fault(handler)
            return True
        return False

    return policy


def lettered_server(fail_every: int = 3, stall_first: float = 0.0) -> ChatServer:
    return ChatServer(lambda payload, n: ANSWERS[n % len(ANSWERS)][0], fail_every, stall_first)


def content_server(fail_every: int = 0) -> ChatServer:
    import hashlib

    def answer(payload: dict, n: int) -> str:
        digest = hashlib.sha256(json.dumps(payload["messages"], sort_keys=True).encode("utf-8")).digest()
        return ANSWERS[digest[0] % len(ANSWERS)][0]

    return ChatServer(answer, fail_every)


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


# ---------------------------------------------------------------- an answerer that looks at the image

# One format per rotation shift 0..6; the last is readable only by the lenient parser.
# {W} is the full-width letter (NFKC folds it), {l} the lower-case one.
FORMATS = ["{L}", "({L})", "**{L}**", "{L}. {name}", " {l})", "{W}", "The answer is {L}."]
LENIENT_ONLY_SHIFT = 6

_OPTION = re.compile(r"^([A-G])\. (.+)$", re.M)


def thumb(image: Image.Image):
    import numpy as np

    return np.asarray(image.convert("L").resize((16, 16), Image.BILINEAR), dtype=np.int32).ravel()


class TopicAnswerer:
    """Answers per served model name:

    - ``oracle``: the letter of the image's topic, in a format that depends on the option
      order (so the same image gets every format across the rotations, deterministically);
    - ``always-a``: ``A``, whatever it is shown (pure position bias);
    - any model: for the images in ``wrong``, the letter of the topic given there.
    """

    def __init__(
        self,
        pool_images: dict[str, tuple[str, Image.Image]],
        names: dict[str, str] | None = None,
        wrong: dict[str, str] | None = None,
    ) -> None:
        """``pool_images``: image id -> (topic, image); ``names``: shown name -> canonical topic."""
        import numpy as np

        self.thumbs = {i: (topic, thumb(im)) for i, (topic, im) in pool_images.items()}
        self._ids = sorted(self.thumbs)
        self._matrix = np.stack([self.thumbs[i][1] for i in self._ids])
        self.names = names or {}
        self.wrong = wrong or {}

    def identify(self, image: Image.Image) -> str:
        import numpy as np

        distances = np.abs(self._matrix - thumb(image)).sum(axis=1)
        return self._ids[int(np.argmin(distances))]  # argmin takes the first (sorted id) on ties

    def __call__(self, payload: dict, n: int = 0) -> str:
        parts = payload["messages"][0]["content"]
        image = images_of(payload)[0]
        image_id = self.identify(image)
        if payload["model"] == "always-a":
            return "A"
        question = "".join(p["text"] for p in parts if p["type"] == "text")
        options = [(letter, name) for letter, name in _OPTION.findall(question)]
        topic = self.wrong.get(image_id, self.thumbs[image_id][0])
        canonical = [self.names.get(name, name) for _, name in options]
        letter = options[canonical.index(topic)][0]
        # rotate(TOPICS, shift) puts entertainment (topic 0) at position (7 - shift) % 7
        shift = (7 - canonical.index("entertainment")) % 7
        return FORMATS[shift].format(
            L=letter, l=letter.lower(), W=chr(0xFF21 + "ABCDEFG".index(letter)), name=options[canonical.index(topic)][1]
        )


def topic_server(
    pool_images: dict[str, tuple[str, Image.Image]],
    names: dict[str, str] | None = None,
    wrong: dict[str, str] | None = None,
) -> ChatServer:
    server = ChatServer(TopicAnswerer(pool_images, names, wrong))
    server.identify = server.answer.identify
    return server
