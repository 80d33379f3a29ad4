"""The upload goes through `HfApi.upload_folder` (against the Hub stand-in): only the files
manifest.json lists go up, unchanged files are not re-sent, an unchanged release makes no commit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.fakes.hub import HubStandIn

TOKEN = "hf_StandInSecret_upload_folder_77"


@pytest.fixture(scope="module")
def release(full_workdir: Path, pool_dir: Path, tmp_path_factory) -> Path:
    from support.workfolder import publish_from

    out = tmp_path_factory.mktemp("upload") / "rel"
    publish_from(full_workdir, out, pool_dir, languages=["eng_Latn", "fra_Latn"], progress=False, repo_hint="org/up")
    return out


def test_upload_folder_sends_the_release_and_nothing_else(release, tmp_path):
    from huggingface_hub import HfApi

    from mvlsib.release.hub import publish_to_hub

    rel = tmp_path / "rel"
    shutil.copytree(release, rel)
    (rel / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")  # OS litter beside the release: never uploaded
    calls = []
    real = HfApi.upload_folder

    def spy(self, **kw):
        calls.append(kw)
        return real(self, **kw)

    with HubStandIn(TOKEN) as hub, pytest.MonkeyPatch.context() as mp:
        mp.setattr("huggingface_hub.constants.HF_HUB_DISABLE_XET", True)
        mp.setattr(HfApi, "upload_folder", spy)
        first = publish_to_hub(rel, "org/up", endpoint=hub.endpoint, token=TOKEN, allow_demo_pool=True)
        remote = hub.state.head_files("org/up")
        assert first.commit_oid == hub.state.repos["org/up"].branches["main"]
        assert ".DS_Store" not in remote
        remote.pop(".gitattributes")
        local = {
            p.relative_to(rel).as_posix(): p.read_bytes()
            for p in rel.rglob("*")
            if p.is_file() and p.name != ".DS_Store"
        }
        assert remote == local
        n_uploads, n_commits = len(hub.state.uploads), len(hub.state.history("org/up"))
        # the uploaded card passes huggingface_hub's own validation (the Hub's validate-yaml endpoint)
        from huggingface_hub import DatasetCard

        mp.setattr("huggingface_hub.constants.ENDPOINT", hub.endpoint)
        DatasetCard(remote["README.md"].decode("utf-8")).validate(repo_type="dataset")
        assert any(p.endswith("/api/validate-yaml") for m, p in hub.requests if m == "POST")

        second = publish_to_hub(rel, "org/up", endpoint=hub.endpoint, token=TOKEN, allow_demo_pool=True)
        assert second.commit_oid is None and "nothing changed: no commit made" in second.lines()
        assert len(hub.state.uploads) == n_uploads and len(hub.state.history("org/up")) == n_commits
        commits = [p for m, p in hub.requests if m == "POST" and "/commit/" in p]
        preuploads = [p for m, p in hub.requests if m == "POST" and "/preupload/" in p]
    assert len(calls) == 2 and all(c["repo_type"] == "dataset" for c in calls)
    assert len(commits) == 1 and len(preuploads) >= 2  # the second run asked, found nothing new, committed nothing
