"""`publish --release DIR --repo-id ORG/NAME` end to end against a Hub stand-in on 127.0.0.1.

The stand-in implements the endpoints huggingface_hub 2.x calls to publish a dataset
(repo create, tree listing, YAML validation, preupload, LFS batch + upload + verify,
commit, refs, tag, branch) and keeps real git-like state (commits with parents,
branches, tags, LFS objects checked by sha256), so the tests assert what the client
really sent. Uploads go through the LFS path: HF_HUB_DISABLE_XET=1 (Xet needs a CAS
server that the stand-in does not implement).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

import pytest

from support import WITHOUT_MVLSIB, subprocess_env

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
        body = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, code: str, message: str):
        self._send(status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message})

    def _authorized(self) -> bool:
        auth = self.headers.get("Authorization", "")
        self.state.auth_seen.append(auth)
        if auth != f"Bearer {self.state.token}":
            self._error(401, "Unauthorized", "Invalid credentials in Authorization header")
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
                ("POST", r"/datasets/([^/]+/[^/]+)\.git/info/lfs/objects/batch", self.lfs_batch),
                ("PUT", r"/lfs-upload/([0-9a-f]{64})", self.lfs_put),
                ("POST", r"/lfs-verify", self.lfs_verify),
                ("HEAD", r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", self.resolve),
                ("GET", r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", self.resolve),
                ("POST", r"/api/datasets/([^/]+/[^/]+)/paths-info/([^/]+)", self.paths_info),
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
        repo = Repo(payload.get("type", "model"), payload.get("visibility") == "private" or bool(payload.get("private")))
        first = self.state.new_commit(repo, None, "initial commit", "", {".gitattributes": StoredFile(GITATTRIBUTES, False)})
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
            files.append({"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False, "oid": remote_oid})
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
        body = self._body()
        if not self._authorized():
            return
        repo = self._repo(repo_id)
        if repo is None:
            return
        if rev not in repo.branches:
            return self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
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
        url = f"http://{self.headers['Host']}/datasets/{repo_id}/commit/{commit.oid}"
        self._send(200, {"success": True, "commitOid": commit.oid, "commitUrl": url})

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

    def __enter__(self) -> "HubStandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


# ====================================================================== tests

TOKEN = "hf_StandInSecret_9f3b2c71d0e54a8b"
REPO_ID = "org/mvl-sib"
LANGS = ["eng_Latn", "fra_Latn", "deu_Latn"]


@pytest.fixture(scope="module")
def small_release(full_workdir: Path, pool_dir: Path, tmp_path_factory) -> Path:
    from mvlsib.release.publish import publish

    out = tmp_path_factory.mktemp("hub") / "release"
    publish(full_workdir, out, pool_dir, languages=LANGS, progress=False)
    return out


def _env(hub: HubStandIn | None, home: Path, token: str | None = TOKEN) -> dict[str, str]:
    env = subprocess_env(
        HF_HOME=str(home),  # no stored login from the machine
        HF_HUB_DISABLE_XET="1",
        HF_HUB_VERBOSITY="debug",  # the most the library logs; the token must still not appear
        HF_HUB_DISABLE_TELEMETRY="1",
    )
    env.pop("HF_TOKEN", None)
    if token is not None:
        env["HF_TOKEN"] = token
    if hub is not None:
        env["HF_ENDPOINT"] = hub.endpoint
    return env


def _publish(release: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mvlsib", "publish", "--release", str(release), "--repo-id", REPO_ID, *extra],
        env=env, capture_output=True, text=True, timeout=300,
    )


def _local_files(release: Path) -> dict[str, bytes]:
    return {p.relative_to(release).as_posix(): p.read_bytes() for p in release.rglob("*") if p.is_file()}


def test_publish_uploads_every_file_then_commits_nothing(small_release, tmp_path):
    with HubStandIn(TOKEN) as hub:
        first = _publish(small_release, _env(hub, tmp_path), "--tag", "v1.0")
        assert first.returncode == 0, first.stderr
        history = hub.state.history(REPO_ID)
        assert len(history) == 2  # the repo's initial commit + the release
        remote = hub.state.head_files(REPO_ID)
        assert remote.pop(".gitattributes")
        assert remote == _local_files(small_release)  # every file, byte for byte
        commit = history[0]
        assert commit.summary.startswith("MVL-SIB release: seed 0, mvlsib-build ")
        assert "3 languages" in commit.summary
        build = json.loads(commit.description.split("\n\n", 1)[1])
        assert build["languages"] == sorted(LANGS) and build["seed"] == 0
        assert hub.state.repos[REPO_ID].tags == {"v1.0": commit.oid}
        parquet = sorted(p for p in remote if p.endswith(".parquet"))
        assert len(hub.state.uploads) == len(parquet) == len(LANGS) + 1  # parquet files went through LFS
        assert f"Bearer {TOKEN}" in hub.state.auth_seen

        second = _publish(small_release, _env(hub, tmp_path), "--tag", "v1.0")
        assert second.returncode == 0, second.stderr
        assert len(hub.state.history(REPO_ID)) == 2  # no new commit
        assert len(hub.state.uploads) == len(parquet)  # nothing re-uploaded
        assert "nothing changed: no commit made" in second.stdout
        assert "0 to add, 0 to change, 0 to delete" in second.stdout
    for res in (first, second):
        assert TOKEN not in res.stdout + res.stderr


def test_changed_release_uploads_only_what_changed(full_workdir, pool_dir, small_release, tmp_path):
    from mvlsib.release.hub import publish_to_hub
    from mvlsib.release.publish import publish

    other = tmp_path / "other"
    publish(full_workdir, other, pool_dir, languages=["eng_Latn", "fra_Latn", "spa_Latn"], progress=False)
    os.environ.pop("HF_TOKEN", None)
    with HubStandIn(TOKEN) as hub, pytest.MonkeyPatch.context() as mp:
        mp.setattr("huggingface_hub.constants.HF_HUB_DISABLE_XET", True)
        publish_to_hub(small_release, REPO_ID, endpoint=hub.endpoint, token=TOKEN)
        uploaded_before = list(hub.state.uploads)

        dry = publish_to_hub(other, REPO_ID, endpoint=hub.endpoint, token=None, dry_run=True)
        assert dry.plan.added == ["data/spa_Latn/test.parquet"]
        assert dry.plan.deleted == ["data/deu_Latn/test.parquet"]
        assert dry.plan.changed == ["README.md", "manifest.json"]
        assert "data/eng_Latn/test.parquet" in dry.plan.unchanged and "data/images/test.parquet" in dry.plan.unchanged
        assert len(hub.state.history(REPO_ID)) == 2  # the dry run wrote nothing

        res = publish_to_hub(other, REPO_ID, endpoint=hub.endpoint, token=TOKEN)
        assert res.commit_oid == hub.state.repos[REPO_ID].branches["main"]
        new = hub.state.uploads[len(uploaded_before):]
        spa = hashlib.sha256((other / "data/spa_Latn/test.parquet").read_bytes()).hexdigest()
        assert new == [spa]  # unchanged parquet files were not sent again
        remote = hub.state.head_files(REPO_ID)
        remote.pop(".gitattributes")
        assert remote == _local_files(other)


def test_dry_run_needs_no_token_and_writes_nothing(small_release, tmp_path):
    with HubStandIn(TOKEN) as hub:
        hub_env = _env(hub, tmp_path, token=None)
        res = _publish(small_release, hub_env, "--dry-run")
        assert res.returncode == 0, res.stderr
        assert "add    data/eng_Latn/test.parquet" in res.stdout
        assert "dry run: nothing was written to the Hub" in res.stdout
        assert REPO_ID not in hub.state.repos
        assert all(method == "GET" for method, _ in hub.state.requests)

        no_token = _publish(small_release, hub_env)
        assert no_token.returncode == 2
        assert "no Hugging Face token: set HF_TOKEN" in no_token.stderr
        assert "Traceback" not in no_token.stderr

        wrong = _publish(small_release, _env(hub, tmp_path, token="hf_wrong_token_123456"))
        assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
        assert "the Hub refused the request (HTTP 401)" in wrong.stderr
        assert "hf_wrong_token_123456" not in wrong.stdout + wrong.stderr


@pytest.mark.parametrize("damage", ["missing", "corrupted", "extra"])
def test_release_not_matching_its_manifest_is_refused(small_release, tmp_path, damage):
    bad = tmp_path / "bad"
    shutil.copytree(small_release, bad)
    target = bad / "data" / "fra_Latn" / "test.parquet"
    if damage == "missing":
        target.unlink()
    elif damage == "corrupted":
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0xFF  # same size, different content
        target.write_bytes(bytes(data))
    else:
        (bad / "notes.txt").write_text("not part of the release\n")
    with HubStandIn(TOKEN) as hub:
        res = _publish(bad, _env(hub, tmp_path))
        assert res.returncode == 2, res.stdout + res.stderr
        assert res.stderr.startswith("Error: ")
        expected = {
            "missing": "data/fra_Latn/test.parquet: listed in manifest.json but missing",
            "corrupted": "data/fra_Latn/test.parquet: sha256 differs from manifest.json",
            "extra": "notes.txt: present but not listed in manifest.json",
        }[damage]
        assert expected in res.stderr
        assert "refusing" in res.stderr and "Traceback" not in res.stderr
        assert hub.state.requests == []  # refused before contacting the Hub


_HUB_LOADER = WITHOUT_MVLSIB + r"""
import mvl_sib
out = {}
for task, k in (("i2s", 3), ("s2t", 2)):
    ex = mvl_sib.load_task(task, "fra_Latn", k=k, source=sys.argv[1], revision=sys.argv[2])
    out[task] = [{**{key: e[key] for key in e if key != "images"}, "sizes": [im.size for im in e["images"]]} for e in ex]
assert "mvlsib" not in sys.modules
print(json.dumps(out))
"""


def test_loader_reads_the_published_repo(small_release, tmp_path):
    """`mvl_sib.load_task(..., source="ORG/NAME")` goes through datasets + the Hub API (here the stand-in)."""
    from mvlsib.release_format import mvl_sib

    with HubStandIn(TOKEN) as hub:
        res = _publish(small_release, _env(hub, tmp_path), "--tag", "v1.0")
        assert res.returncode == 0, res.stderr
        loader_dir = tmp_path / "elsewhere"
        loader_dir.mkdir()
        shutil.copyfile(small_release / "mvl_sib.py", loader_dir / "mvl_sib.py")
        env = {k: v for k, v in _env(hub, tmp_path / "home").items() if k != "PYTHONPATH"}
        got = subprocess.run([sys.executable, "-c", _HUB_LOADER, REPO_ID, "v1.0"], cwd=loader_dir, env=env,
                             capture_output=True, text=True, timeout=300)
        assert got.returncode == 0, got.stderr[-3000:]
        downloaded = {p for m, p in hub.state.requests if m == "GET" and "/resolve/" in p}
    assert any(p.endswith("/data/fra_Latn/test.parquet") for p in downloaded)
    assert any(p.endswith("/data/images/test.parquet") for p in downloaded)
    remote = json.loads(got.stdout)
    for task, k in (("i2s", 3), ("s2t", 2)):
        local = mvl_sib.load_task(task, "fra_Latn", k=k, source=small_release)
        expected = [{**{key: e[key] for key in e if key != "images"}, "sizes": [list(im.size) for im in e["images"]]}
                    for e in local]
        assert remote[task] == expected


def test_revision_publishes_to_a_new_branch(small_release, tmp_path):
    with HubStandIn(TOKEN) as hub:
        res = _publish(small_release, _env(hub, tmp_path), "--revision", "candidate", "--private")
        assert res.returncode == 0, res.stderr
        repo = hub.state.repos[REPO_ID]
        assert repo.private and sorted(repo.branches) == ["candidate", "main"]
        assert set(hub.state.head_files(REPO_ID, "main")) == {".gitattributes"}  # main untouched
        remote = hub.state.head_files(REPO_ID, "candidate")
        remote.pop(".gitattributes")
        assert remote == _local_files(small_release)
        assert "revision candidate" in res.stdout
