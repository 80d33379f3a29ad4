"""A stand-in batch runner: what a hosted batch API or ``vllm run-batch`` does with a request file.

It reads request files in the OpenAI batch input format (one JSON object a line: ``custom_id``,
``method``, ``url``, ``body``), POSTs each body to an OpenAI-compatible server (the suite's
``ChatServer`` on 127.0.0.1) exactly once, with no retry, and writes one line per request in the
batch output format that both share (OpenAI's batch output file; vLLM's ``BatchRequestOutput``,
vllm/entrypoints/openai/batch/protocol.py): ``id``, ``custom_id``, ``response`` =
``{status_code, request_id, body}`` and ``error``. An HTTP error keeps its status and body in
``response`` (as the hosted API does); a transport failure has ``response: null`` and an ``error``.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit


def _post(base_url: str, url: str, body: dict, timeout: float) -> tuple[int, dict]:
    """POST ``body`` to ``url`` (``/v1/chat/completions``) on the server of ``base_url``."""
    parts = urlsplit(base_url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        conn.request("POST", url, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def run_batch(request_files: Iterable[Path], output: Path, base_url: str, *, timeout: float = 30.0) -> dict[str, int]:
    """Execute every request line of ``request_files`` against the server; write ``output``.

    Returns counts: ``requests``, ``ok`` (HTTP 200) and ``failed``.
    """
    counts = {"requests": 0, "ok": 0, "failed": 0}
    with open(output, "w", encoding="utf-8", newline="\n") as out:
        for path in request_files:
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    request = json.loads(line)
                    if request["method"] != "POST":
                        raise ValueError(f"{path}: method {request['method']!r}; a batch line is a POST")
                    n = counts["requests"] = counts["requests"] + 1
                    result: dict = {"id": f"batch_req_{n:06d}", "custom_id": request["custom_id"]}
                    try:
                        status, body = _post(base_url, request["url"], request["body"], timeout)
                    except OSError as exc:
                        result.update(response=None, error={"code": "connection_error", "message": str(exc)})
                        counts["failed"] += 1
                    else:
                        result.update(
                            response={"status_code": status, "request_id": f"req_{n:06d}", "body": body},
                            error=None,
                        )
                        counts["ok" if status == 200 else "failed"] += 1
                    out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return counts
