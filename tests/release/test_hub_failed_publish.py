"""A failed `publish --release REL --repo-id` leaves REL byte-identical: generated over every step.

The card of a release names the repo it was built for; uploading it to another makes the card,
eval.yaml and manifest.json name that repo. That rewrite goes into a staged copy the upload is made
from, and REL takes the rewritten files only once the Hub has them. Each step of a publish fails
here in turn (no token, the Hub out of reach, a 4xx from each endpoint, the commit's answer lost, the
tag refused): the call is one ``MvlsibError`` line, REL is as it was, and no staged copy is left
beside it. Before, REL was rewritten before the token was even looked at.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from support.cli_contract import changed, scene_state
from support.fakes import hostile
from support.fakes.hub import PUBLISH_REQUESTS, HubStandIn

from mvlsib.errors import MvlsibError
from mvlsib.release.manifest import verify_release

TOKEN = "hf_FailedPublishSecret_0123456789"
REPO_ID = "org/mvl-sib-elsewhere"

# (method, path pattern) of every request a publish makes, each refused in turn with a 403.
STEPS = PUBLISH_REQUESTS


@pytest.fixture(scope="module", autouse=True)
def _lfs_uploads():
    from huggingface_hub import constants

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(constants, "HF_HUB_DISABLE_XET", True)  # the stand-in speaks LFS, not Xet
        yield


@pytest.fixture()
def scene(release_dir, tmp_path) -> Path:
    shutil.copytree(release_dir, tmp_path / "rel")
    assert json.loads((tmp_path / "rel/manifest.json").read_text("utf-8"))["build"]["repo_hint"] != REPO_ID
    return tmp_path


def _publish(rel: Path, endpoint: str, token: str | None = TOKEN):
    from mvlsib.release.hub import publish_to_hub

    return publish_to_hub(rel, REPO_ID, endpoint=endpoint, token=token, timeout=2, tag="v1", allow_demo_pool=True)


def _refused(scene: Path, call) -> str:
    before = scene_state(scene)
    with pytest.raises(MvlsibError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and TOKEN not in message, message
    assert changed(before, scene_state(scene)) == [], message  # REL as it was, no staged copy beside it
    return message


def _forbidden(handler, _answer):
    hostile.reply(
        handler,
        403,
        b'{"error": "forbidden here"}',
        {"Content-Type": "application/json", "X-Error-Message": "forbidden here"},
    )
    return True


def test_every_step_of_a_publish_is_failed_here():
    assert set(STEPS) >= {"create", "preupload", "commit", "tag"}


@pytest.mark.parametrize("step", sorted(STEPS))
def test_a_step_refused_by_the_hub_leaves_the_release_as_it_was(step, scene):
    method, pattern = STEPS[step]
    with HubStandIn(TOKEN) as hub:
        hub.state.hostile = [(method, re.compile(pattern), _forbidden)]
        _refused(scene, lambda: _publish(scene / "rel", hub.endpoint))
        assert hub.state.hostile_hits >= 1, step


def test_the_commit_answer_lost_leaves_the_release_as_it_was_and_a_rerun_adopts_it(scene):
    with HubStandIn(TOKEN) as hub:
        hub.state.commit_fault = "drop"  # the commit lands, its answer never comes
        message = _refused(scene, lambda: _publish(scene / "rel", hub.endpoint))
        assert "may or may not have landed" in message
        result = _publish(scene / "rel", hub.endpoint)  # the re-run: nothing left to commit, the folder follows
        assert result.commit_oid is None
        uploaded = hub.state.head_files(REPO_ID)
    manifest = verify_release(scene / "rel")
    assert manifest["build"]["repo_hint"] == REPO_ID
    for name in ("README.md", "eval.yaml", "manifest.json"):
        assert uploaded[name] == (scene / "rel" / name).read_bytes(), name
    assert sorted(p.name for p in scene.iterdir()) == ["rel"]


def test_no_token_leaves_the_release_as_it_was(scene, monkeypatch):
    import huggingface_hub

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)  # no stored login either
    message = _refused(scene, lambda: _publish(scene / "rel", "http://127.0.0.1:9", token=None))
    assert "no Hugging Face token" in message


def test_an_unreachable_hub_leaves_the_release_as_it_was(scene):
    message = _refused(scene, lambda: _publish(scene / "rel", "http://127.0.0.1:9"))
    assert "cannot talk to the Hub" in message


def test_a_successful_publish_leaves_the_folder_as_uploaded(scene):
    with HubStandIn(TOKEN) as hub:
        result = _publish(scene / "rel", hub.endpoint)
        assert result.commit_oid
        uploaded = hub.state.head_files(REPO_ID)
    assert verify_release(scene / "rel")["build"]["repo_hint"] == REPO_ID
    for name in ("README.md", "eval.yaml", "manifest.json"):
        assert uploaded[name] == (scene / "rel" / name).read_bytes(), name
    assert sorted(p.name for p in scene.iterdir()) == ["rel"]  # the staged copy is gone


@pytest.mark.parametrize("hint", ["test", "a/b/c", "ORG/mvl-sib\n", 7])
def test_a_repo_hint_that_is_no_repo_id_is_refused_before_the_hub(hint, scene):
    path = scene / "rel/manifest.json"
    manifest = json.loads(path.read_text("utf-8"))
    manifest["build"]["repo_hint"] = hint
    path.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    with HubStandIn(TOKEN) as hub:
        message = _refused(scene, lambda: _publish(scene / "rel", hub.endpoint))
        assert hub.state.requests == []
    assert str(path) in message and "repo_hint" in message
