"""A stand-in for the Hugging Face Hub on 127.0.0.1: the one Hub fake of the test suite.

It implements the endpoints huggingface_hub 2.x calls to publish a dataset (repo create,
tree listing, YAML validation, preupload, LFS batch + upload + verify, commit, refs, tag,
branch) and to read one (repo info, tree, paths-info, resolve with HEAD/GET/Range); for
model repos, what opening and updating a pull request takes (preupload and commit with
``create_pr``, which makes branch ``refs/pr/N`` and its discussion; discussions listing;
commits to ``refs/pr/N``). It keeps real git-like state (commits with parents, branches, tags, LFS objects checked by
sha256), so tests assert what the client really sent and downloaded. ``serve_folder``
starts it with one repository already holding a local folder's files.

Uploads go through the LFS path: run clients with HF_HUB_DISABLE_XET=1 (Xet needs a CAS
server that the stand-in does not implement).

Hostile modes (``HubState.hostile``): a list of ``(method, path regex, fault)``; the first whose
method and path match a request decides its answer. ``fault(handler, answer)`` gets the answer
the endpoint would have sent (status, JSON value) and either writes a reply itself (``raw``,
``drip``, ``truncated``, ...: return True) or returns a replacement value (``mutate``), sent
as JSON, or bytes sent as they are. See ``tests/test_hub_faults.py`` for the table.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
LFS_THRESHOLD = 10 * 1024 * 1024


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class StoredFile:
    data: bytes
    lfs: bool

    def tree_entry(self, path: str) -> dict:
        sha = hashlib.sha256(self.data).hexdigest()
        if self.lfs:
            pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {len(self.data)}\n".encode()
            return {
                "type": "file",
                "path": path,
                "size": len(self.data),
                "oid": blob_id(pointer),
                "lfs": {"oid": sha, "size": len(self.data), "pointerSize": len(pointer)},
            }
        return {"type": "file", "path": path, "size": len(self.data), "oid": blob_id(self.data)}


@dataclass
class Commit:
    oid: str
    parent: str | None
    summary: str
    description: str
    files: dict[str, StoredFile]


@dataclass
class Repo:
    repo_type: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


class HubState:
    def __init__(self, token: str):
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[tuple[str, str]] = []
        self.auth_seen: list[str] = []
        self.unrouted: list[tuple[str, str]] = []
        self.uploads: list[str] = []  # LFS oids received by PUT
        self.regular_uploads: list[str] = []  # paths received inline in a commit
        # Faults for the next commit request: "stall" (never answer, for `stall_seconds`) or
        # "drop" (apply the commit, then close the connection without answering); used once.
        self.commit_fault: str | None = None
        self.echo_headers = False  # error bodies repeat the request headers (as some proxies do)
        self.stall_seconds = 5.0
        # Hostile modes: (method, compiled path pattern, fault(handler, (status, value)) -> value | bytes | True).
        self.hostile: list[tuple[str, re.Pattern, Callable]] = []
        self.hostile_hits = 0
        self.answers: dict[tuple[str, str], object] = {}  # (method, path) -> the last 2xx JSON answer sent
        # Pull requests per repo (the discussions API's records), and repos whose commits are refused.
        self.discussions: dict[str, list[dict]] = {}
        self.refused: set[str] = set()
        self.lock = threading.Lock()

    def new_commit(self, repo: Repo, parent: str | None, summary: str, description: str, files: dict) -> Commit:
        digest = hashlib.sha1(
            json.dumps(
                [parent, summary, sorted((p, hashlib.sha256(f.data).hexdigest()) for p, f in files.items())]
            ).encode()
        ).hexdigest()
        commit = Commit(digest, parent, summary, description, files)
        repo.commits[digest] = commit
        return commit

    def history(self, repo_id: str, branch: str = "main") -> list[Commit]:
        repo = self.repos[repo_id]
        out, oid = [], repo.branches.get(branch)
        while oid:
            out.append(repo.commits[oid])
            oid = repo.commits[oid].parent
        return out

    def head_files(self, repo_id: str, branch: str = "main") -> dict[str, bytes]:
        repo = self.repos[repo_id]
        return {p: f.data for p, f in repo.commits[repo.branches[branch]].files.items()}


class _Handler(BaseHTTPRequestHandler):
    server_version = "HubStandIn/1.0"
    state: HubState  # set on the subclass

    def log_message(self, *args):  # keep test output quiet
        pass

    # ------------------------------------------------------------ helpers
    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def _send(self, status: int, payload=None, headers: dict | None = None):
        fault = self._hostile_fault()
        if fault is not None:
            payload = fault(self, (status, payload))
            if payload is True:  # the fault wrote its own reply
                return
        elif 200 <= status < 300 and payload is not None:
            self.state.answers[(self.command, unquote(urlparse(self.path).path))] = payload
        body = payload if isinstance(payload, bytes) else b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _hostile_fault(self):
        path = unquote(urlparse(self.path).path)
        for method, pattern, fault in self.state.hostile:
            if method == self.command and pattern.fullmatch(path):
                self.state.hostile_hits += 1
                return fault
        return None

    def _error(self, status: int, code: str, message: str):
        self._send(status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message})

    def _authorized(self) -> bool:
        auth = self.headers.get("Authorization", "")
        self.state.auth_seen.append(auth)
        if auth != f"Bearer {self.state.token}":
            echo = f"; request headers: {dict(self.headers)}" if self.state.echo_headers else ""
            self._error(401, "Unauthorized", f"Invalid credentials in Authorization header{echo}")
            return False
        return True

    def _repo(self, repo_id: str):
        repo = self.state.repos.get(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound", f"Repository not found: {repo_id}")
        return repo

    # ------------------------------------------------------------ routing
    def do_GET(self):
        self._route("GET")

    def do_POST(self):
        self._route("POST")

    def do_PUT(self):
        self._route("PUT")

    def do_HEAD(self):
        self._route("HEAD")

    def _route(self, method: str):
        url = urlparse(self.path)
        path = unquote(url.path)
        query = parse_qs(url.query)
        with self.state.lock:
            self.state.requests.append((method, path))
            routes = [
                ("POST", r"/api/repos/create", self.create_repo),
                ("POST", r"/api/validate-yaml", self.validate_yaml),
                ("GET", r"/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?", self.tree),
                ("POST", r"/api/datasets/([^/]+/[^/]+)/preupload/([^/]+)", self.preupload),
                ("POST", r"/api/datasets/([^/]+/[^/]+)/commit/([^/]+)", self.commit),
                ("GET", r"/api/datasets/([^/]+/[^/]+)/refs", self.refs),
                ("POST", r"/api/datasets/([^/]+/[^/]+)/tag/([^/]+)", self.tag),
                ("POST", r"/api/datasets/([^/]+/[^/]+)/branch/([^/]+)", self.branch),
                ("GET", r"/api/datasets/([^/]+/[^/]+)/revision/([^/]+)", self.revision_info),
                ("GET", r"/api/datasets/([^/]+/[^/]+)", self.repo_info),
                ("POST", r"/datasets/([^/]+/[^/]+)\.git/info/lfs/objects/batch", self.lfs_batch),
                ("PUT", r"/lfs-upload/([0-9a-f]{64})", self.lfs_put),
                ("POST", r"/lfs-verify", self.lfs_verify),
                ("HEAD", r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", self.resolve),
                ("GET", r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", self.resolve),
                ("POST", r"/api/datasets/([^/]+/[^/]+)/paths-info/([^/]+)", self.paths_info),
                ("POST", r"/api/models/([^/]+/[^/]+)/preupload/(.+)", self.preupload),
                ("POST", r"/api/models/([^/]+/[^/]+)/commit/(.+)", self.commit),
                ("GET", r"/api/models/([^/]+/[^/]+)/discussions", self.list_discussions),
                ("GET", r"/api/models/([^/]+/[^/]+)/revision/(.+)", self.revision_info),
            ]
            for m, pattern, fn in routes:
                match = re.fullmatch(pattern, path)
                if m == method and match:
                    return fn(*match.groups(), query=query)
            self.state.unrouted.append((method, path))
            self._error(404, "EntryNotFound", f"stand-in has no route {method} {path}")

    # ------------------------------------------------------------ endpoints
    def create_repo(self, query):
        payload = json.loads(self._body() or b"{}")
        if not self._authorized():
            return
        repo_id = f"{payload.get('organization')}/{payload['name']}"
        url = f"http://{self.headers['Host']}/datasets/{repo_id}"
        if repo_id in self.state.repos:
            return self._send(409, {"error": "You already created this dataset repo", "url": url})
        repo = Repo(
            payload.get("type", "model"), payload.get("visibility") == "private" or bool(payload.get("private"))
        )
        first = self.state.new_commit(
            repo, None, "initial commit", "", {".gitattributes": StoredFile(GITATTRIBUTES, False)}
        )
        repo.branches["main"] = first.oid
        self.state.repos[repo_id] = repo
        self._send(200, {"url": url, "name": repo_id})

    def validate_yaml(self, query):
        import yaml

        content = json.loads(self._body())["content"]
        errors = []
        if content.startswith("---\n"):
            try:
                yaml.safe_load(content[4 : content.index("\n---\n", 4)])
            except Exception as exc:  # report like the Hub does
                errors.append({"message": str(exc)})
        if errors:
            return self._send(400, {"errors": errors})
        self._send(200, {"errors": [], "warnings": []})

    def tree(self, repo_id, rev, sub, query):
        repo = self._repo(repo_id)
        if repo is None:
            return
        oid = self._commit_of(repo, rev)
        if oid is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        files = repo.commits[oid].files
        recursive = query.get("recursive", ["False"])[0].lower() == "true"
        prefix = f"{sub}/" if sub else ""
        entries, dirs = [], set()
        for path in sorted(files):
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix) :]
            if "/" in rest and not recursive:
                dirs.add(prefix + rest.split("/")[0])
                continue
            parts = rest.split("/")
            for i in range(1, len(parts)):
                dirs.add(prefix + "/".join(parts[:i]))
            entries.append(files[path].tree_entry(path))
        entries += [{"type": "directory", "path": d, "oid": "0" * 40, "size": 0} for d in sorted(dirs)]
        self._send(200, entries)

    def preupload(self, repo_id, rev, query):
        payload = json.loads(self._body())
        if not self._authorized():
            return
        repo = self._repo(repo_id)
        if repo is None:
            return
        head = repo.commits[repo.branches[rev]].files if rev in repo.branches else {}
        files = []
        for f in payload["files"]:
            sample = base64.b64decode(f["sample"])
            lfs = f["path"].endswith(".parquet") or f["size"] >= LFS_THRESHOLD or b"\0" in sample
            existing = head.get(f["path"])
            remote_oid = None
            if existing is not None:
                entry = existing.tree_entry(f["path"])
                remote_oid = entry["lfs"]["oid"] if existing.lfs else entry["oid"]
            files.append(
                {"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": remote_oid}
            )
        self._send(200, {"files": files, "commitOid": repo.branches.get(rev)})

    def lfs_batch(self, repo_id, query):
        payload = json.loads(self._body())
        if not self._authorized():
            return
        base = f"http://{self.headers['Host']}"
        objects = []
        for obj in payload["objects"]:
            entry = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.state.lfs:
                entry["actions"] = {
                    "upload": {"href": f"{base}/lfs-upload/{obj['oid']}"},
                    "verify": {"href": f"{base}/lfs-verify"},
                }
            objects.append(entry)
        self._send(200, {"transfer": "basic", "objects": objects})

    def lfs_put(self, oid, query):
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            return self._error(400, "BadRequest", "sha256 of the body does not match the oid")
        self.state.lfs[oid] = data
        self.state.uploads.append(oid)
        self._send(200, {})

    def lfs_verify(self, query):
        payload = json.loads(self._body())
        if payload["oid"] not in self.state.lfs or len(self.state.lfs[payload["oid"]]) != payload["size"]:
            return self._error(404, "EntryNotFound", "object not uploaded")
        self._send(200, {})

    def commit(self, repo_id, rev, query):
        import time

        body = self._body()
        if not self._authorized():
            return
        fault, self.state.commit_fault = self.state.commit_fault, None
        if fault == "stall":
            time.sleep(self.state.stall_seconds)
            self.close_connection = True
            return
        repo = self._repo(repo_id)
        if repo is None:
            return
        if repo_id in self.state.refused:
            return self._error(403, "Forbidden", f"You are not allowed to push or open pull requests on {repo_id}")
        if rev not in repo.branches:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        pr = None
        if query.get("create_pr") == ["1"]:
            # A pull request: a new branch refs/pr/N from the revision, and its discussion.
            prs = self.state.discussions.setdefault(repo_id, [])
            pr = {"num": len(prs) + 1, "status": "open", "base": rev}
            repo.branches[f"refs/pr/{pr['num']}"] = repo.branches[rev]
            rev = f"refs/pr/{pr['num']}"
        parent = repo.branches[rev]
        files = dict(repo.commits[parent].files)
        header = {}
        for line in body.splitlines():
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                header = value
            elif key == "file":
                files[value["path"]] = StoredFile(base64.b64decode(value["content"]), False)
                self.state.regular_uploads.append(value["path"])
            elif key == "lfsFile":
                data = self.state.lfs.get(value["oid"])
                if data is None:
                    return self._error(400, "BadRequest", f"LFS object {value['oid']} was never uploaded")
                files[value["path"]] = StoredFile(data, True)
            elif key == "deletedFile":
                if value["path"] not in files:
                    return self._error(404, "EntryNotFound", "A file with this name doesn't exist")
                del files[value["path"]]
            else:
                return self._error(400, "BadRequest", f"unsupported commit key {key}")
        commit = self.state.new_commit(repo, parent, header.get("summary", ""), header.get("description", ""), files)
        repo.branches[rev] = commit.oid
        if fault == "drop":
            self.close_connection = True
            return
        prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        url = f"http://{self.headers['Host']}/{prefix}{repo_id}/commit/{commit.oid}"
        answer = {"success": True, "commitOid": commit.oid, "commitUrl": url}
        if pr is not None:
            pr["title"] = header.get("summary", "")
            self.state.discussions[repo_id].append(pr)
            answer["pullRequestUrl"] = f"http://{self.headers['Host']}/{prefix}{repo_id}/discussions/{pr['num']}"
        self._send(200, answer)

    def list_discussions(self, repo_id, query):
        if self._repo(repo_id) is None:
            return
        wanted_status = query.get("status", ["all"])[0]
        items = [
            {
                "num": d["num"],
                "title": d["title"],
                "status": d["status"],
                "isPullRequest": True,
                "createdAt": "2026-11-26T00:00:00.000Z",
                "author": {"name": "mvlsib-tester"},
                "repo": {"name": repo_id, "type": "model"},
            }
            for d in self.state.discussions.get(repo_id, [])
            if wanted_status in ("all", d["status"])
        ]
        self._send(200, {"count": len(items), "start": 0, "discussions": items})

    def refs(self, repo_id, query):
        repo = self._repo(repo_id)
        if repo is None:
            return
        branches = [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": c} for b, c in sorted(repo.branches.items())]
        tags = [{"name": t, "ref": f"refs/tags/{t}", "targetCommit": c} for t, c in sorted(repo.tags.items())]
        self._send(200, {"branches": branches, "converts": [], "tags": tags})

    def tag(self, repo_id, rev, query):
        payload = json.loads(self._body())
        if not self._authorized():
            return
        repo = self._repo(repo_id)
        if repo is None:
            return
        if payload["tag"] in repo.tags:
            return self._error(409, "Conflict", "Tag already exists")
        repo.tags[payload["tag"]] = repo.branches[rev]
        self._send(200, {})

    def branch(self, repo_id, name, query):
        payload = json.loads(self._body() or b"{}")
        if not self._authorized():
            return
        repo = self._repo(repo_id)
        if repo is None:
            return
        if name in repo.branches:
            return self._error(409, "Conflict", "Branch already exists")
        repo.branches[name] = repo.branches[payload.get("startingPoint") or "main"]
        self._send(200, {})

    def _commit_of(self, repo: Repo, rev: str) -> str | None:
        return repo.branches.get(rev) or repo.tags.get(rev) or (rev if rev in repo.commits else None)

    def resolve(self, repo_id, rev, path, query):
        """File download (what hf_hub_download and HfFileSystem read), with the headers the client checks."""
        repo = self._repo(repo_id)
        if repo is None:
            return
        oid = self._commit_of(repo, rev)
        if oid is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        stored = repo.commits[oid].files.get(path)
        if stored is None:
            return self._error(404, "EntryNotFound", f"{path} does not exist at {rev}")
        fault = self._hostile_fault()
        if fault is not None and fault(self, (200, stored.data)) is True:
            return
        entry = stored.tree_entry(path)
        etag = entry["lfs"]["oid"] if stored.lfs else entry["oid"]
        data = stored.data
        status, headers = 200, {"X-Repo-Commit": oid, "ETag": f'"{etag}"', "Accept-Ranges": "bytes"}
        if stored.lfs:
            headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(data))})
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start_s, _, end_s = rng[6:].partition("-")
            start = int(start_s) if start_s else max(0, len(data) - int(end_s))
            end = min(int(end_s), len(data) - 1) if (end_s and start_s) else len(data) - 1
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start : end + 1], 206
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def paths_info(self, repo_id, rev, query):
        body = self._body()
        repo = self._repo(repo_id)
        if repo is None:
            return
        oid = self._commit_of(repo, rev)
        if oid is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        try:
            paths = json.loads(body)["paths"]
        except (ValueError, KeyError):
            paths = parse_qs(body.decode()).get("paths", [])
        files = repo.commits[oid].files
        out = []
        for p in paths:
            p = p.strip("/")
            if p in files:
                out.append(files[p].tree_entry(p))
            elif any(f.startswith(p + "/") for f in files) or p == "":
                out.append({"type": "directory", "path": p, "oid": "0" * 40, "size": 0})
        self._send(200, out)

    def repo_info(self, repo_id, query):
        return self.revision_info(repo_id, "main", query)

    def revision_info(self, repo_id, rev, query):
        repo = self._repo(repo_id)
        if repo is None:
            return
        oid = self._commit_of(repo, rev)
        if oid is None:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        siblings = [{"rfilename": p} for p in sorted(repo.commits[oid].files)]
        self._send(200, {"id": repo_id, "sha": oid, "private": repo.private, "siblings": siblings})


class HubStandIn:
    """``with HubStandIn(token) as hub: hub.endpoint ...``"""

    def __init__(self, token: str):
        self.state = HubState(token)
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.endpoint = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> HubStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def seed(self, repo_id: str, folder: Path, lfs_suffixes: tuple[str, ...] = (".parquet",)) -> str:
        """Create dataset repo ``repo_id`` holding ``folder``'s files on main; returns the commit id."""
        files = {
            p.relative_to(folder).as_posix(): StoredFile(p.read_bytes(), p.suffix in lfs_suffixes)
            for p in sorted(Path(folder).rglob("*"))
            if p.is_file()
        }
        with self.state.lock:
            repo = Repo("dataset", False)
            commit = self.state.new_commit(repo, None, "initial commit", "", files)
            repo.branches["main"] = commit.oid
            self.state.repos[repo_id] = repo
        return commit.oid

    def seed_model(self, repo_id: str, files: dict[str, bytes]) -> str:
        """Create model repo ``repo_id`` holding ``files`` on main; returns the commit id."""
        with self.state.lock:
            repo = Repo("model", False)
            stored = {path: StoredFile(data, False) for path, data in files.items()}
            commit = self.state.new_commit(repo, None, "initial commit", "", stored)
            repo.branches["main"] = commit.oid
            self.state.repos[repo_id] = repo
        return commit.oid

    @property
    def requests(self) -> list[tuple[str, str]]:
        return self.state.requests


def serve_folder(repo_id: str, folder: Path, token: str = "hf_unused") -> HubStandIn:
    """A stand-in whose dataset repo ``repo_id`` holds ``folder`` (``hub.commit`` is its head)."""
    hub = HubStandIn(token)
    hub.commit = hub.seed(repo_id, folder)
    return hub


# (method, path pattern) of every request `publish --repo-id` makes of the Hub, in order: each may be
# refused or answered wrongly by a test (tests/release/test_hub_publish_faults.py, test_hub_failed_publish.py).
INFO_PATH = r"/api/datasets/[^/]+/[^/]+(?:/revision/[^/]+)?"
PUBLISH_REQUESTS = {
    "create": ("POST", r"/api/repos/create"),
    "info": ("GET", INFO_PATH),
    "preupload": ("POST", r"/api/datasets/[^/]+/[^/]+/preupload/.*"),
    "lfs-batch": ("POST", r"/datasets/[^/]+/[^/]+\.git/info/lfs/objects/batch"),
    "lfs-upload": ("PUT", r"/lfs-upload/.*"),
    "commit": ("POST", r"/api/datasets/[^/]+/[^/]+/commit/.*"),
    "refs": ("GET", r"/api/datasets/[^/]+/[^/]+/refs"),
    "tag": ("POST", r"/api/datasets/[^/]+/[^/]+/tag/.*"),
}
