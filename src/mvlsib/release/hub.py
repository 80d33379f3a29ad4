"""Upload a release folder to the Hugging Face Hub as a dataset repository.

The upload is ``HfApi.upload_folder``: the Hub's preupload check tells which files differ,
only those are sent, and an unchanged release makes no commit at all. ``--dry-run`` keeps
our own plan (``plan_upload``): the release's manifest.json gives every local sha256, and
the Hub's tree listing gives the LFS sha256 (large files) or the git blob id (small files)
of every remote file, so it needs no token for a public repo and writes nothing.

The token comes from ``HF_TOKEN`` or the stored login (``hf auth login``); it is
handed to ``HfApi`` and never printed, logged or written by this module.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import re
import shutil
import tempfile
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mvlsib import httpio, hubio, readers
from mvlsib.atomic import atomic_open, atomic_path, remove_stale, sha256_file
from mvlsib.errors import MvlsibError
from mvlsib.limits import HUB_TIMEOUT_S
from mvlsib.release.eval_yaml import EVAL_YAML, retarget
from mvlsib.release.manifest import MANIFEST_NAME, save_release_manifest, verify_release
from mvlsib.release.tables import config_path
from mvlsib.release_format import mvl_sib
from mvlsib.release_format.mvl_sib import IMAGES_CONFIG
from mvlsib.workdir.provenance import demo_image_count

REPO_TYPE = "dataset"
# Files the Hub creates or manages itself; never deleted by a publish.
_HUB_OWNED = {".gitattributes"}


@dataclass(frozen=True)
class UploadPlan:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.deleted)

    def lines(self) -> list[str]:
        out = []
        for label, paths in (("add", self.added), ("change", self.changed), ("delete", self.deleted)):
            out += [f"{label:7s}{p}" for p in paths]
        out.append(
            f"{len(self.added)} to add, {len(self.changed)} to change, {len(self.deleted)} to delete, "
            f"{len(self.unchanged)} unchanged"
        )
        return out


@dataclass(frozen=True)
class HubResult:
    repo_id: str
    revision: str
    plan: UploadPlan | None  # our own comparison: made for --dry-run only
    dry_run: bool
    commit_oid: str | None = None
    commit_url: str | None = None
    commit_message: str | None = None
    tag: str | None = None
    tag_created: bool = False

    def lines(self) -> list[str]:
        out = [f"repository: {self.repo_id} (dataset), revision {self.revision}"]
        if self.plan is not None:
            out += self.plan.lines()
        if self.dry_run:
            out.append("dry run: nothing was written to the Hub")
        elif self.commit_oid:
            out.append(f"commit {self.commit_oid}: {self.commit_message}")
        else:
            out.append("nothing changed: no commit made")
        if self.tag:
            out.append(f"tag {self.tag}: {'created' if self.tag_created else 'already at this commit'}")
        return out


def git_blob_id(path: Path) -> str:
    """The git object id of a file (what the Hub reports as ``oid`` for non-LFS files)."""
    h = hashlib.sha1()
    h.update(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def commit_message(manifest: dict) -> tuple[str, str]:
    """Summary line and description naming the build parameters."""
    build = manifest.get("build", {})
    seed = build.get("seed")
    summary = (
        f"MVL-SIB release: seed {seed if seed is not None else 'unrecorded'}, "
        f"mvlsib-build {build.get('toolkit_version', '?')}, {len(build.get('languages', []))} languages, "
        f"instances sha256 {str(build.get('instances_sha256', ''))[:12]}"
    )
    description = "Build parameters (from manifest.json):\n\n" + json.dumps(build, indent=2, sort_keys=True)
    return summary, description


DEFAULT_REPO_HINT = "ORG/mvl-sib"


def demo_images_in(release: Path) -> int:
    """Drawn demo pictograms in the release's images table (whose bytes verify_release has checked)."""
    path = config_path(release, IMAGES_CONFIG)
    if not path.is_file():
        return 0
    return demo_image_count(
        readers.read_parquet("release_parquet", path, columns=["source_url"], types=mvl_sib.IMAGE_COLUMNS)
        .column("source_url")
        .to_pylist()
    )


def refuse_demo_pool(release: Path, repo_id: str) -> None:
    n = demo_images_in(release)
    if n:
        raise MvlsibError(
            f"{release}: {n} of its images are the toolkit's drawn demo pictograms, so this is a demo build, not "
            f"the MVL-SIB benchmark; uploading it to {repo_id} would publish pictograms as if they were the "
            "benchmark's images. Build with a curated pool (--pool DIR, see docs/image_pool.md), or pass "
            "--allow-demo-pool to upload the demo on purpose (its card says it is one)."
        )


def retarget_card(release: Path, manifest: dict, repo_id: str) -> bool:
    """Make the card's snippets and eval.yaml name ``repo_id``: rewrite them and their manifest.json entries.

    The release folder then holds exactly what goes to the Hub, so the upload plan, the
    manifest and the Hub page agree. Returns whether anything changed. Every file is replaced
    by a rename, never written in place (``staged_upload`` hands it a folder of hard links).
    """
    if not needs_retarget(release, manifest, repo_id):
        return False
    build = manifest.setdefault("build", {})
    old = _repo_hint(release, manifest)
    # Snippets quote the id ("ORG/NAME"); replacing only the quoted form leaves prose alone.
    # eval.yaml quotes it the same way (in its comment), so it is retargeted alike.
    for name in RETARGETED:
        path = release / name
        if name not in manifest["files"]:
            continue
        text = path.read_text("utf-8")
        new_text = retarget(text, old, repo_id)
        if new_text != text:
            with atomic_open(path) as fh:
                fh.write(new_text)
            manifest["files"][name] = {"sha256": sha256_file(path), "size": path.stat().st_size}
    build["repo_hint"] = repo_id
    save_release_manifest(release, manifest)
    return True


# The files retarget_card rewrites, manifest.json last (it lists the others' sha256).
RETARGETED = ("README.md", EVAL_YAML)


def needs_retarget(release: Path, manifest: dict, repo_id: str) -> bool:
    """Whether the card (and manifest.json) of ``release`` name another repo than ``repo_id``."""
    return _repo_hint(release, manifest) != repo_id and "README.md" in manifest["files"]


def _repo_hint(release: Path, manifest: dict) -> str:
    """The repo id the card's snippets name now (manifest.json's ``build.repo_hint``), checked: each
    quoted occurrence of it is rewritten, so it must be a repo id, never a word such as "test"."""
    old = manifest.get("build", {}).get("repo_hint") or DEFAULT_REPO_HINT
    if not isinstance(old, str) or (old != DEFAULT_REPO_HINT and mvl_sib.hub_id_problem(old) is not None):
        raise MvlsibError(
            f"{release / MANIFEST_NAME}: build.repo_hint {old!r} is not the Hub repo id ORG/NAME the card names, "
            "so the card cannot be made to name --repo-id; restore manifest.json, or rebuild the release "
            "(mvlsib-build publish --workdir W --out DIR)"
        )
    return old


@contextlib.contextmanager
def staged_upload(release: Path, manifest: dict, repo_id: str) -> Iterator[tuple[Path, dict, bool]]:
    """The folder to upload: ``release`` itself when its card names ``repo_id`` already, else a copy
    beside it (hard links, or copies across file systems) whose card, eval.yaml and manifest.json
    are retargeted. ``release`` is not touched here: ``adopt_upload`` moves the retargeted files in
    once the upload has succeeded, so a failed publish leaves the folder as it was. The copy is
    removed when the block ends (a killed run's by the next one)."""
    if not needs_retarget(release, manifest, repo_id):
        yield release, manifest, False
        return
    staged = copy.deepcopy(manifest)
    remove_stale(release.parent, f".{release.name}.upload-")
    try:  # beside the release, where hard links cost nothing; else (a read-only parent) in the temporary folder
        stage = Path(tempfile.mkdtemp(prefix=f".{release.name}.upload-{os.getpid()}-", dir=release.parent))
    except OSError:
        stage = Path(tempfile.mkdtemp(prefix=f"mvlsib-upload-{os.getpid()}-"))
    try:
        for rel in sorted([*manifest["files"], MANIFEST_NAME]):
            target = stage / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(release / rel, target)
            except OSError:
                shutil.copyfile(release / rel, target)
        retarget_card(stage, staged, repo_id)
        yield stage, staged, True
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def adopt_upload(release: Path, stage: Path) -> None:
    """After a successful upload from ``stage``: its retargeted files replace the release's, each by
    a rename, manifest.json last, so the folder holds exactly what is on the Hub."""
    for name in (*RETARGETED, MANIFEST_NAME):
        if (stage / name).is_file():
            with atomic_path(release / name) as tmp:
                shutil.copyfile(stage / name, tmp)


def resolve_token(token: str | None = None) -> str | None:
    try:  # refused by its source before any use: the value must never reach a header or a message
        return hubio.resolve_token(token)
    except httpio.CredentialError as exc:
        raise MvlsibError(str(exc)) from None


def _remote_files(api, repo_id: str, revision: str) -> dict | None:
    """{path: RepoFile} of the remote revision; None when the repo or revision does not exist yet."""
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    try:
        items = api.list_repo_tree(repo_id, recursive=True, revision=revision, repo_type=REPO_TYPE)
        return {item.path: item for item in items if hasattr(item, "blob_id")}
    except RevisionNotFoundError:
        return None
    except RepositoryNotFoundError:
        return None


def plan_upload(release: Path, manifest: dict, remote: dict | None) -> UploadPlan:
    remote = remote or {}
    local = sorted([*manifest["files"], "manifest.json"])
    added: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    for rel in local:
        item = remote.get(rel)
        if item is None:
            added.append(rel)
            continue
        if item.lfs is not None and rel in manifest["files"]:
            same = item.lfs.sha256 == manifest["files"][rel]["sha256"]
        elif item.lfs is not None:
            same = item.lfs.sha256 == sha256_file(release / rel)
        else:
            same = item.blob_id == git_blob_id(release / rel)
        (unchanged if same else changed).append(rel)
    deleted = sorted(p for p in remote if p not in set(local) and p not in _HUB_OWNED)
    return UploadPlan(added=added, changed=changed, deleted=deleted, unchanged=unchanged)


def publish_to_hub(
    release: str | os.PathLike[str],
    repo_id: str,
    *,
    revision: str | None = None,
    private: bool = False,
    tag: str | None = None,
    dry_run: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
    timeout: float = HUB_TIMEOUT_S,
    allow_demo_pool: bool = False,
) -> HubResult:
    """Upload ``release`` to the dataset repo ``repo_id``; see the module docstring.

    Every Hub request ends within ``timeout`` seconds in all (not per read) and every answer is
    checked before huggingface_hub reads it (``hubio.session``); a bad one is one message.
    """
    try:
        with hubio.session(f"--repo-id {repo_id}", timeout):
            return _publish_to_hub(
                release,
                repo_id,
                revision=revision,
                private=private,
                tag=tag,
                dry_run=dry_run,
                endpoint=endpoint,
                token=token,
                timeout=timeout,
                allow_demo_pool=allow_demo_pool,
            )
    except (hubio.HubProblem, MvlsibError) as exc:  # one line, whatever the library's messages hold
        raise MvlsibError(httpio.redact(hubio.one_line(str(exc)), (token, os.environ.get("HF_TOKEN")))) from None


def _publish_to_hub(
    release, repo_id, *, revision, private, tag, dry_run, endpoint, token, timeout, allow_demo_pool
) -> HubResult:
    import httpx2
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    release = Path(release)
    if (problem := mvl_sib.hub_id_problem(repo_id)) is not None:
        raise MvlsibError(f"--repo-id: {problem}, e.g. my-org/mvl-sib")
    # The cheap checks first, and none of them changes anything: the token, the release, the demo pool.
    tok = resolve_token(token)
    if tok is None and not dry_run:
        raise MvlsibError(
            "no Hugging Face token: set HF_TOKEN or log in with `hf auth login` (a token with write access "
            f"to {repo_id}), or use --dry-run to only list the changes"
        )
    manifest = verify_release(release)
    if not dry_run:
        needs_retarget(release, manifest, repo_id)  # a manifest.json whose repo_hint is no repo id is refused now
    if not allow_demo_pool and not dry_run:
        refuse_demo_pool(release, repo_id)
    branch = revision or "main"
    api = HfApi(endpoint=endpoint, token=tok if tok is not None else False)
    try:
        if dry_run:
            plan = plan_upload(release, manifest, _remote_files(api, repo_id, branch))
            return HubResult(repo_id, branch, plan, dry_run=True, tag=None)
        # The upload goes from a retargeted copy; the release takes its files only once the Hub has them.
        with staged_upload(release, manifest, repo_id) as (folder, uploaded, retargeted):
            result = _commit(api, folder, uploaded, repo_id, revision, private=private, tag=tag, token=tok)
            if retargeted:
                adopt_upload(release, folder)
        return result
    except HfHubHTTPError as exc:
        # The message names the URL and the server's reason; it never contains the token.
        status = exc.response.status_code if exc.response is not None else "?"
        # A server (or a proxy) may echo request headers into its error: never print the token.
        raise MvlsibError(
            httpio.redact(f"the Hub refused the request (HTTP {status}) for {repo_id}: {exc}", (tok,))
        ) from None
    except (httpx2.TransportError, OSError) as exc:  # connect failures, timeouts, dropped connections
        kind = "no answer within the timeout" if isinstance(exc, httpx2.TimeoutException) else type(exc).__name__
        raise MvlsibError(
            f"cannot talk to the Hub for {repo_id} ({kind}; {timeout:g} s per request); "
            "check the network or HF_ENDPOINT and re-run: nothing is committed twice"
        ) from None


def _commit(
    api, release: Path, manifest: dict, repo_id: str, revision: str | None, *, private: bool, tag, token
) -> HubResult:
    """Create the repository (and branch) if needed, upload what differs, tag; one commit at most."""
    import httpx2

    branch = revision or "main"
    api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
    before = _head(api, repo_id, branch)
    if before is None and revision:
        api.create_branch(repo_id, branch=revision, repo_type=REPO_TYPE, exist_ok=True)
    summary, description = commit_message(manifest)
    # upload_folder asks the Hub which files differ (preupload), sends only those, and makes no
    # commit when nothing changed. Only the files manifest.json lists go up (never caches or
    # litter beside them); remote files the release does not have are deleted.
    try:
        info = api.upload_folder(
            repo_id=repo_id,
            folder_path=str(release),
            repo_type=REPO_TYPE,
            revision=branch,
            commit_message=summary,
            commit_description=description,
            allow_patterns=[_literal_pattern(p) for p in sorted([*manifest["files"], MANIFEST_NAME])],
            delete_patterns="*",
        )
    except Exception as exc:
        # The commit may have reached the Hub before the answer was lost (a dropped connection, a
        # deadline passed, an answer cut short); a re-run compares files and commits only what
        # still differs, so it never duplicates. Anything else is not about the answer: raise it.
        network = isinstance(exc, (httpx2.TransportError, OSError))
        problem = exc if network else hubio.translated(exc, "its answer")
        if problem is None:
            raise
        what = f"the connection to the Hub failed ({type(problem).__name__}" if network else f"({problem.args[0]}"
        raise MvlsibError(
            httpio.redact(
                f"the upload to {repo_id} did not end cleanly: {what}"
                f"{'' if not str(problem) or not network else ': ' + str(problem)[:200]}); the commit may or may "
                "not have landed. "
                "Re-run the same command: it uploads only what is still missing and makes no duplicate commit",
                (token,),
            )
        ) from None
    _refuse_foreign_commit(info, repo_id, before)
    committed = info.oid != before
    created = _ensure_tag(api, repo_id, tag, branch, summary) if tag else False
    return HubResult(
        repo_id,
        branch,
        None,
        dry_run=False,
        commit_oid=info.oid if committed else None,
        commit_url=info.commit_url if committed else None,
        commit_message=summary if committed else None,
        tag=tag,
        tag_created=created,
    )


def _refuse_foreign_commit(info: object, repo_id: str, before: str | None) -> None:
    """The commit the Hub answered with must be one of ``repo_id`` (its URL names the repo and the
    commit, its id is a git id): any other answer is not evidence that the release is there, and the
    folder would be rewritten to name a repo that may not hold it."""
    oid = getattr(info, "oid", None)
    path = urllib.parse.urlsplit(str(getattr(info, "commit_url", "") or "")).path
    ours = isinstance(oid, str) and re.fullmatch(r"[0-9a-f]{40}", oid) is not None
    if ours and oid != before:
        ours = path.endswith(f"/{REPO_TYPE}s/{repo_id}/commit/{oid}")
    if not ours:
        raise MvlsibError(
            f"the Hub answered the upload to {repo_id} with a commit that is not one of it "
            f"({ascii(str(getattr(info, 'commit_url', '')))[:120]}); nothing is recorded as published: check "
            "HF_ENDPOINT and re-run (only what is still missing is uploaded)"
        )


def _literal_pattern(path: str) -> str:
    """``path`` as an fnmatch pattern that matches only itself."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def _head(api, repo_id: str, branch: str) -> str | None:
    """The commit at the head of ``branch``; None when the branch does not exist yet."""
    from huggingface_hub.errors import RevisionNotFoundError

    try:
        return api.repo_info(repo_id, repo_type=REPO_TYPE, revision=branch).sha
    except RevisionNotFoundError:
        return None


def _ensure_tag(api, repo_id: str, tag: str, branch: str, message: str) -> bool:
    """Create ``tag`` at the head of ``branch``; fine if it is already there, an error if it points elsewhere."""
    refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    heads = {b.name: b.target_commit for b in refs.branches}
    tags = {t.name: t.target_commit for t in refs.tags}
    if tag in tags:
        if tags[tag] == heads.get(branch):
            return False
        raise MvlsibError(
            f"tag {tag!r} already exists on {repo_id} at commit {tags[tag]}, not at the head of {branch}; "
            "choose a new tag (tags of published releases should not move)"
        )
    api.create_tag(repo_id, tag=tag, tag_message=message, revision=branch, repo_type=REPO_TYPE)
    return True
