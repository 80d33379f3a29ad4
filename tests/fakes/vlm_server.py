"""An OpenAI-compatible server on 127.0.0.1 that really looks at the images.

It decodes each request's image, finds the nearest bundled-pool image (mean absolute
difference of 16x16 thumbnails), reads the lettered options out of the question and
answers like a model would. What it answers is decided per served model name:

- ``oracle``: the letter of the image's topic, in a format that depends on the option
  order (so the same image gets every format across the rotations, deterministically);
- ``always-a``: ``A``, whatever it is shown (pure position bias);
- any model: for the images in ``wrong``, the letter of the topic given there.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from PIL import Image

# One format per rotation shift 0..6; the last is readable only by the lenient parser.
# {W} is the full-width letter (NFKC folds it), {l} the lower-case one.
FORMATS = ["{L}", "({L})", "**{L}**", "{L}. {name}", " {l})", "{W}", "The answer is {L}."]
LENIENT_ONLY_SHIFT = 6

_OPTION = re.compile(r"^([A-G])\. (.+)$", re.M)


def thumb(image: Image.Image):
    import numpy as np

    return np.asarray(image.convert("L").resize((16, 16), Image.BILINEAR), dtype=np.int32).ravel()


class TopicServer:
    def __init__(self, pool_images: dict[str, tuple[str, Image.Image]], names: dict[str, str] | None = None,
                 wrong: dict[str, str] | None = None) -> None:
        """``pool_images``: image id -> (topic, image); ``names``: shown name -> canonical topic."""
        import numpy as np

        self.thumbs = {i: (topic, thumb(im)) for i, (topic, im) in pool_images.items()}
        self._ids = sorted(self.thumbs)
        self._matrix = np.stack([self.thumbs[i][1] for i in self._ids])
        self.names = names or {}
        self.wrong = wrong or {}
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append(payload)
                text = server.answer(payload)
                data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data.encode())))
                self.end_headers()
                self.wfile.write(data.encode())

        class Server(ThreadingHTTPServer):
            # The default backlog (5) drops connections when the client opens 8 at once,
            # which the backend then retries after a back-off second.
            request_queue_size = 64
            daemon_threads = True

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def identify(self, image: Image.Image) -> str:
        import numpy as np

        distances = np.abs(self._matrix - thumb(image)).sum(axis=1)
        return self._ids[int(np.argmin(distances))]  # argmin takes the first (sorted id) on ties

    def answer(self, payload: dict) -> str:
        parts = payload["messages"][0]["content"]
        url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
        image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
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
        fmt = FORMATS[shift]
        return fmt.format(L=letter, l=letter.lower(), W=chr(0xFF21 + "ABCDEFG".index(letter)),
                          name=options[canonical.index(topic)][1])

    def __enter__(self) -> "TopicServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
