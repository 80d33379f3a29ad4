"""`publish --release DIR --repo-id ORG/NAME` end to end against a Hub stand-in on 127.0.0.1.

The stand-in implements the endpoints huggingface_hub 2.x calls to publish a dataset
(repo create, tree listing, YAML validation, preupload, LFS batch + upload + verify,
commit, refs, tag, branch) and keeps real git-like state (commits with parents,
branches, tags, LFS objects checked by sha256), so the tests assert what the client
really sent. Uploads go through the LFS path: HF_HUB_DISABLE_XET=1 (Xet needs a CAS
server that the stand-in does not implement).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import WITHOUT_MVLSIB, subprocess_env
from support.fakes.hub import HubStandIn

# ====================================================================== tests

TOKEN = "hf_StandInSecret_9f3b2c71d0e54a8b"
REPO_ID = "org/mvl-sib"
LANGS = ["eng_Latn", "fra_Latn", "deu_Latn"]


@pytest.fixture(scope="module")
def small_release(full_workdir: Path, pool_dir: Path, tmp_path_factory) -> Path:
    from support.workfolder import publish_from

    out = tmp_path_factory.mktemp("hub") / "release"
    publish_from(full_workdir, out, pool_dir, languages=LANGS, progress=False)
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
        # the shared release is built on the demo pool (tests/release/test_provenance.py covers the refusal)
        [
            sys.executable,
            "-m",
            "mvlsib",
            "publish",
            "--release",
            str(release),
            "--repo-id",
            REPO_ID,
            "--allow-demo-pool",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
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
        assert len(hub.state.uploads) == len(parquet) == len(LANGS) + 2  # parquet files (+ images, preview) via LFS
        assert f"Bearer {TOKEN}" in hub.state.auth_seen

        second = _publish(small_release, _env(hub, tmp_path), "--tag", "v1.0")
        assert second.returncode == 0, second.stderr
        assert len(hub.state.history(REPO_ID)) == 2  # no new commit
        assert len(hub.state.uploads) == len(parquet)  # nothing re-uploaded
        assert "nothing changed: no commit made" in second.stdout
        assert "to add" not in second.stdout  # our own plan is made for --dry-run only
    for res in (first, second):
        assert TOKEN not in res.stdout + res.stderr


def test_changed_release_uploads_only_what_changed(full_workdir, pool_dir, small_release, tmp_path):
    from support.workfolder import publish_from

    from mvlsib.release.hub import publish_to_hub

    other = tmp_path / "other"
    publish_from(full_workdir, other, pool_dir, languages=["eng_Latn", "fra_Latn", "spa_Latn"], progress=False)
    os.environ.pop("HF_TOKEN", None)
    with HubStandIn(TOKEN) as hub, pytest.MonkeyPatch.context() as mp:
        mp.setattr("huggingface_hub.constants.HF_HUB_DISABLE_XET", True)
        publish_to_hub(small_release, REPO_ID, endpoint=hub.endpoint, token=TOKEN, allow_demo_pool=True)
        uploaded_before = list(hub.state.uploads)

        dry = publish_to_hub(other, REPO_ID, endpoint=hub.endpoint, token=None, dry_run=True)
        assert dry.plan.added == ["data/spa_Latn/test.parquet"]
        assert dry.plan.deleted == ["data/deu_Latn/test.parquet"]
        # eval.yaml: a dry run does not retarget, so its quoted repo id still differs from the remote's.
        assert dry.plan.changed == ["README.md", "eval.yaml", "manifest.json"]
        assert "data/eng_Latn/test.parquet" in dry.plan.unchanged and "data/images/test.parquet" in dry.plan.unchanged
        assert len(hub.state.history(REPO_ID)) == 2  # the dry run wrote nothing

        res = publish_to_hub(other, REPO_ID, endpoint=hub.endpoint, token=TOKEN, allow_demo_pool=True)
        assert res.commit_oid == hub.state.repos[REPO_ID].branches["main"]
        new = hub.state.uploads[len(uploaded_before) :]
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


_HUB_LOADER = (
    WITHOUT_MVLSIB
    + r"""
import mvl_sib
out = {}
for task, k in (("i2s", 3), ("s2t", 2)):
    ex = mvl_sib.load_task(task, "fra_Latn", k=k, source=sys.argv[1], revision=sys.argv[2])
    out[task] = [{**{key: e[key] for key in e if key != "images"}, "sizes": [im.size for im in e["images"]]} for e in ex]
assert "mvlsib" not in sys.modules
print(json.dumps(out))
"""
)


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
        got = subprocess.run(
            [sys.executable, "-c", _HUB_LOADER, REPO_ID, "v1.0"],
            cwd=loader_dir,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert got.returncode == 0, got.stderr[-3000:]
        downloaded = {p for m, p in hub.state.requests if m == "GET" and "/resolve/" in p}
    assert any(p.endswith("/data/fra_Latn/test.parquet") for p in downloaded)
    assert any(p.endswith("/data/images/test.parquet") for p in downloaded)
    remote = json.loads(got.stdout)
    for task, k in (("i2s", 3), ("s2t", 2)):
        local = mvl_sib.load_task(task, "fra_Latn", k=k, source=small_release)
        expected = [
            {**{key: e[key] for key in e if key != "images"}, "sizes": [list(im.size) for im in e["images"]]}
            for e in local
        ]
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
