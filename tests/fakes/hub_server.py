"""A tiny stand-in for the Hugging Face Hub on 127.0.0.1, serving one dataset repo from a local folder.

It answers the requests huggingface_hub 2.x makes for ``dataset_info``, ``list_repo_files`` /
``list_repo_tree`` and ``snapshot_download``/``hf_hub_download`` (HEAD + GET on ``resolve``), and records
every request so that tests can check that only the wanted files were downloaded.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class FakeHub:
    def __init__(self, repo_id: str, folder: Path, branch: str = "main") -> None:
        self.repo_id = repo_id
        self.folder = folder
        self.branch = branch
        self.requests: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_GET(self):
                hub._handle(self, send_body=True)

            def do_HEAD(self):
                hub._handle(self, send_body=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeHub":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def files(self) -> list[str]:
        return sorted(p.relative_to(self.folder).as_posix() for p in self.folder.rglob("*") if p.is_file())

    def _revision_ok(self, rev: str) -> bool:
        return rev in (self.branch, COMMIT)

    def _send(self, h, status: int, body: bytes, headers: dict[str, str], send_body: bool) -> None:
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if send_body:
            h.wfile.write(body)

    def _json(self, h, obj, send_body: bool, status: int = 200) -> None:
        self._send(h, status, json.dumps(obj).encode(), {"Content-Type": "application/json"}, send_body)

    def _error(self, h, status: int, code: str, msg: str, send_body: bool) -> None:
        self._send(
            h, status, json.dumps({"error": msg}).encode(),
            {"Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": msg}, send_body,
        )

    def _handle(self, h, send_body: bool) -> None:
        url = urlsplit(h.path)
        path = unquote(url.path)
        self.requests.append((h.command, path))
        api = f"/api/datasets/{self.repo_id}/"
        resolve = f"/datasets/{self.repo_id}/resolve/"
        if path == api.rstrip("/") or path.startswith(api + "revision/"):
            rev = path[len(api + "revision/"):] if path.startswith(api) else self.branch
            if not self._revision_ok(rev):
                return self._error(h, 404, "RevisionNotFound", f"Invalid rev id: {rev}", send_body)
            files = self.files()
            return self._json(
                h,
                {
                    "_id": "fake", "id": self.repo_id, "author": self.repo_id.split("/")[0], "sha": COMMIT,
                    "private": False, "gated": False, "disabled": False, "downloads": 0, "likes": 0,
                    "tags": [], "lastModified": "2024-01-01T00:00:00.000Z",
                    "createdAt": "2024-01-01T00:00:00.000Z", "siblings": [{"rfilename": f} for f in files],
                },
                send_body,
            )
        if path.startswith(api + "tree/"):
            rest = path[len(api + "tree/"):]
            rev, _, sub = rest.partition("/")
            if not self._revision_ok(rev):
                return self._error(h, 404, "RevisionNotFound", f"Invalid rev id: {rev}", send_body)
            entries = []
            for f in self.files():
                if sub and not f.startswith(sub.rstrip("/") + "/"):
                    continue
                data = (self.folder / f).read_bytes()
                entries.append({"type": "file", "oid": _git_blob_sha(data), "size": len(data), "path": f})
            return self._json(h, entries, send_body)
        if path.startswith(resolve):
            rest = path[len(resolve):]
            rev, _, file = rest.partition("/")
            target = (self.folder / file).resolve()
            if not self._revision_ok(rev) or self.folder.resolve() not in target.parents or not target.is_file():
                return self._error(h, 404, "EntryNotFound", f"{file} not found", send_body)
            data = target.read_bytes()
            return self._send(
                h, 200, data,
                {"ETag": f'"{_git_blob_sha(data)}"', "X-Repo-Commit": COMMIT, "Content-Type": "text/plain"},
                send_body,
            )
        if path.startswith("/api/datasets/"):
            return self._error(h, 404, "RepoNotFound", "Repository not found", send_body)
        return self._error(h, 404, "EntryNotFound", "not found", send_body)


def _git_blob_sha(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
