"""`publish --repo-id` against a hostile Hub on 127.0.0.1: every endpoint a publish reads, a table of
answer shapes (tests/support/fakes/hostile.py; the ingest side is tests/test_hub_faults.py). The outcome
must be the normal result or one MvlsibError line; never another exception, never the token."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from support.fakes import hostile
from support.fakes.hub import PUBLISH_REQUESTS, HubStandIn

from mvlsib.errors import MvlsibError

TOKEN = "hf_HostileHubSecret_4d1c8e"
TIMEOUT = 1.5
TREE = r"/api/datasets/[^/]+/[^/]+/tree/.*"


def _outcome(call, baseline, capsys) -> str:
    return hostile.outcome(call, baseline, capsys, TOKEN, 4 * TIMEOUT + 6)


def _answer(answers: dict, method: str, pattern: str):
    return next(v for (m, p), v in answers.items() if m == method and re.fullmatch(pattern, p))


REPO_ID = "org/mvl-sib"
PUBLISH_LANGS = ["eng_Latn", "fra_Latn"]
# (method, path pattern) of every endpoint a publish reads an answer from
PUBLISH_ENDPOINTS = {k: v for k, v in PUBLISH_REQUESTS.items() if k not in ("lfs-upload", "tag")}


@pytest.fixture(scope="module")
def publish_release(full_workdir: Path, pool_dir: Path, tmp_path_factory) -> Path:
    from support.workfolder import publish_from

    out = tmp_path_factory.mktemp("hostile-publish") / "release"
    publish_from(full_workdir, out, pool_dir, languages=PUBLISH_LANGS, progress=False)
    return out


@pytest.fixture(scope="module", autouse=True)
def _lfs_uploads():
    from huggingface_hub import constants

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(constants, "HF_HUB_DISABLE_XET", True)  # the stand-in speaks LFS, not Xet
        yield


def _publish(hub, release: Path, tmp: Path, dry_run: bool = False):
    """`publish --repo-id` on a copy of the release; its result as the lines it prints, less commit ids."""
    from mvlsib.release.hub import publish_to_hub

    copy = tmp / "release"
    if not copy.exists():
        shutil.copytree(release, copy)
    result = publish_to_hub(
        copy,
        REPO_ID,
        endpoint=hub.endpoint,
        token=TOKEN,
        timeout=TIMEOUT,
        tag="v1",
        dry_run=dry_run,
        allow_demo_pool=True,
    )
    return [re.sub(r"[0-9a-f]{40}", "<oid>", line) for line in result.lines()]


@pytest.fixture(scope="module")
def publish_baseline(publish_release, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("publish-baseline")
    with HubStandIn(TOKEN) as hub:
        lines = _publish(hub, publish_release, tmp)
        answers = dict(hub.state.answers)
        dry = _publish(hub, publish_release, tmp / "dry", dry_run=True)
        answers.update(hub.state.answers)
    # answers name the baseline server (LFS upload links): each variant's server is put in its place
    rebased = {key: json.dumps(value).replace(hub.endpoint, "{ENDPOINT}") for key, value in answers.items()}
    return lines, dry, {key: json.loads(value) for key, value in rebased.items()}


def _rebased(value, hub):
    return json.loads(json.dumps(value).replace("{ENDPOINT}", hub.endpoint))


BODY_SAMPLE = ["html", "empty-list", "empty-object", "null", "deep-list", "long-int-in-field", "nan", "lone-surrogate"]


@pytest.mark.parametrize("endpoint", sorted(PUBLISH_ENDPOINTS))
@pytest.mark.parametrize("name", BODY_SAMPLE + ["truncated", "close-without-answer", "redirect-non-http"])
def test_publish_against_hostile_answers(endpoint, name, publish_release, publish_baseline, tmp_path, capsys):
    method, pattern = PUBLISH_ENDPOINTS[endpoint]
    fault = hostile.body_fault(name) if name in hostile.BODIES else hostile.TRANSPORT("http://127.0.0.1:9/")[name]
    with HubStandIn(TOKEN) as hub:
        hub.state.hostile = [(method, re.compile(pattern), fault)]
        outcome = _outcome(lambda: _publish(hub, publish_release, tmp_path), publish_baseline[0], capsys)
        assert hub.state.hostile_hits >= 1
    assert outcome == "message"


def test_publish_dry_run_against_every_wrong_type_of_the_tree(publish_release, publish_baseline, tmp_path, capsys):
    _, dry, answers = publish_baseline
    variants = list(hostile.wrong_types(_answer(answers, "GET", TREE)))
    assert len(variants) >= 25
    with HubStandIn(TOKEN) as hub:
        _publish(hub, publish_release, tmp_path)
        for i, (label, value) in enumerate(variants):
            hub.state.hostile = [("GET", re.compile(TREE), hostile.mutate(value))]
            folder = tmp_path / str(i)
            try:
                _outcome(lambda folder=folder: _publish(hub, publish_release, folder, dry_run=True), dry, capsys)
            except AssertionError as exc:
                raise AssertionError(f"tree {label}: {exc}") from None


@pytest.mark.parametrize("endpoint", ["preupload", "commit", "lfs-batch", "create"])
def test_publish_against_every_wrong_type_at_every_level(endpoint, publish_release, publish_baseline, tmp_path, capsys):
    lines, _, answers = publish_baseline
    method, pattern = PUBLISH_ENDPOINTS[endpoint]
    real = next(v for (m, p), v in answers.items() if m == method and re.fullmatch(pattern, p))
    variants = list(hostile.wrong_types(real, (None, "x", 7, [])))  # each variant is a whole upload
    assert len(variants) >= 10
    for i, (label, value) in enumerate(variants):
        with HubStandIn(TOKEN) as hub:
            hub.state.hostile = [(method, re.compile(pattern), hostile.mutate(_rebased(value, hub)))]
            folder = tmp_path / str(i)
            try:
                _outcome(lambda folder=folder: _publish(hub, publish_release, folder), lines, capsys)
            except AssertionError as exc:
                raise AssertionError(f"{endpoint} {label}: {exc}") from None


@pytest.mark.parametrize("name", ["drip", "drip-headers", "silence"])
def test_publish_deadline_is_per_request(name, publish_release, tmp_path, capsys):
    faults = {"drip": hostile.drip(), "drip-headers": hostile.drip_headers(), "silence": hostile.silence()}
    with HubStandIn(TOKEN) as hub:
        hub.state.hostile = [("POST", re.compile(PUBLISH_ENDPOINTS["preupload"][1]), faults[name])]
        start = time.monotonic()
        with pytest.raises(MvlsibError):
            _publish(hub, publish_release, tmp_path)
        assert time.monotonic() - start < 4 * TIMEOUT + 2
    assert TOKEN not in "".join(capsys.readouterr())


def _foreign_commits(real: dict) -> dict[str, dict]:
    """The commit answer made to name a commit that is not one of REPO_ID's, each way it can."""
    url, oid = real["commitUrl"], real["commitOid"]
    other = "e" * 40
    return {
        "another repo": {**real, "commitUrl": url.replace(f"/datasets/{REPO_ID}/", "/datasets/evil/other/")},
        "a model repo": {**real, "commitUrl": url.replace("/datasets/", "/models/")},
        "another commit in the url": {**real, "commitUrl": url.replace(oid, other)},
        "a prefix of the repo": {**real, "commitUrl": url.replace(f"/datasets/{REPO_ID}/", "/datasets/org/mvl-si/")},
        "no git id": {**real, "commitOid": "HEAD", "commitUrl": url.replace(oid, "HEAD")},
    }


@pytest.mark.parametrize("variant", list(_foreign_commits({"commitUrl": "", "commitOid": ""})))
def test_a_commit_of_another_repo_is_no_publish(variant, publish_release, publish_baseline, tmp_path, capsys):
    """The folder is retargeted to the repo only on the Hub's word that the commit is that repo's: an
    answer naming another repo, type or commit is one message, and the release folder stays as it was."""
    lines, _, answers = publish_baseline
    method, pattern = PUBLISH_ENDPOINTS["commit"]
    real = _answer(answers, method, pattern)
    with HubStandIn(TOKEN) as hub:
        wrong = _foreign_commits(_rebased(real, hub))[variant]
        hub.state.hostile = [(method, re.compile(pattern), hostile.mutate(wrong))]
        copy = tmp_path / "release"
        shutil.copytree(publish_release, copy)
        before = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
        assert _outcome(lambda: _publish(hub, publish_release, tmp_path), lines, capsys) == "message"
    assert {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before
