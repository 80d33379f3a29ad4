"""Issue #11 faults around releases: the Hub stalling or dropping the commit (defects 7, 10),
publish deleting the user's files or refusing Python caches (6, 17), publish of unvalidated
work folders and folder names that are not languages (4, 13)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import subprocess_env
from support.fakes.hub import HubStandIn
from support.workfolder import publish_from

from mvlsib.errors import MvlsibError
from mvlsib.release.manifest import verify_release

TOKEN = "hf_StandInSecret_faults_0123456789"
REPO_ID = "org/mvl-sib"


def _hub_publish(release: Path, hub: HubStandIn, home: Path, *extra: str) -> subprocess.CompletedProcess:
    # The test releases are built on the demo pictograms: uploading them is on purpose here.
    env = subprocess_env(
        HF_HOME=str(home),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_TOKEN=TOKEN,
        HF_ENDPOINT=hub.endpoint,
    )
    return subprocess.run(
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
        timeout=120,
    )


@pytest.fixture()
def release_copy(release_dir, tmp_path) -> Path:
    out = tmp_path / "release"
    shutil.copytree(release_dir, out)
    return out


def test_hub_that_never_answers_the_commit_times_out(release_copy, tmp_path):
    with HubStandIn(TOKEN) as hub:
        hub.state.commit_fault, hub.state.stall_seconds = "stall", 8.0
        start = time.monotonic()
        res = _hub_publish(release_copy, hub, tmp_path, "--timeout", "1")
        elapsed = time.monotonic() - start
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr and "commit may or may not have landed" in res.stderr
    assert elapsed < 8.0, elapsed  # not until the server gives up
    assert TOKEN not in res.stdout + res.stderr


def test_dropped_connection_after_the_commit_is_a_message_and_rerun_is_safe(release_copy, tmp_path):
    with HubStandIn(TOKEN) as hub:
        hub.state.commit_fault = "drop"
        res = _hub_publish(release_copy, hub, tmp_path, "--timeout", "20")
        assert res.returncode == 2, res.stderr
        assert "Traceback" not in res.stderr
        assert "may or may not have landed" in res.stderr and "Re-run the same command" in res.stderr
        commits = len(hub.state.history(REPO_ID))
        again = _hub_publish(release_copy, hub, tmp_path)
        assert again.returncode == 0, again.stderr
        assert len(hub.state.history(REPO_ID)) == commits  # the commit had landed: nothing new


def test_python_caches_and_os_litter_are_not_part_of_a_release(release_copy, tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", "import mvl_sib"],
        cwd=release_copy,
        capture_output=True,
        env=subprocess_env(PYTHONDONTWRITEBYTECODE=""),
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    (release_copy / "__pycache__").mkdir(exist_ok=True)
    (release_copy / "__pycache__" / "mvl_sib.cpython-311.pyc").write_bytes(b"\0cache")
    (release_copy / "Thumbs.db").write_bytes(b"\0")
    verify_release(release_copy)  # no refusal
    with HubStandIn(TOKEN) as hub:
        res = _hub_publish(release_copy, hub, tmp_path)
        assert res.returncode == 0, res.stderr
        uploaded = hub.state.head_files(REPO_ID)
    assert not any("__pycache__" in p or p.endswith((".pyc", "Thumbs.db")) for p in uploaded)


def test_republishing_keeps_the_users_files(full_workdir, pool_dir, release_copy):
    run = release_copy / "RUN"
    run.mkdir()
    (run / "predictions.jsonl").write_text('{"a": 1}\n')
    before = {p: p.read_bytes() for p in release_copy.rglob("*") if p.is_file()}
    with pytest.raises(MvlsibError, match=r"RUN/predictions.jsonl.*refusing to replace or overwrite them"):
        publish_from(full_workdir, release_copy, pool_dir, languages=["eng_Latn"], progress=False, check=False)
    assert {p: p.read_bytes() for p in release_copy.rglob("*") if p.is_file()} == before
    # and verifying it for upload names the file without advising a rebuild into that folder
    with pytest.raises(MvlsibError, match="RUN/predictions.jsonl: present but not listed") as info:
        verify_release(release_copy)
    assert "Rebuild" not in str(info.value) and "Move them out" in str(info.value)


def _small_workdir(full_workdir: Path, tmp_path: Path) -> Path:
    work = tmp_path / "work"
    shutil.copytree(full_workdir, work)
    return work


def test_publish_refuses_a_wrong_answer_key(full_workdir, pool_dir, tmp_path):
    work = _small_workdir(full_workdir, tmp_path)
    path = work / "instances.jsonl"
    lines = path.read_text("utf-8").splitlines()
    first = json.loads(lines[0])
    first["sentence_label"] = (first["sentence_label"] + 1) % 4  # the key now points at a negative
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    out = tmp_path / "rel"
    with pytest.raises(MvlsibError, match="validation found .* violation"):
        publish_from(work, out, pool_dir, languages=["eng_Latn"], progress=False)
    assert not out.exists()


def test_publish_refuses_a_corpus_language_that_is_not_a_code(full_workdir, pool_dir, tmp_path):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    work = _small_workdir(full_workdir, tmp_path)
    table = pq.read_table(work / "corpus.parquet")
    langs = table.column("language")
    table = table.set_column(
        table.schema.get_field_index("language"),
        "language",
        pc.if_else(pc.equal(langs, "fra_Latn"), "fra_Latn copy", langs),
    )
    pq.write_table(table, work / "corpus.parquet")
    with pytest.raises(MvlsibError, match="'fra_Latn copy' is not a language code"):
        publish_from(work, tmp_path / "rel", pool_dir, progress=False, check=False)


def test_hub_echoing_the_token_in_its_error_is_redacted(release_copy, tmp_path):
    """Issue #11 defect 18 on the Hub path: a 401 whose body repeats the request headers."""
    with HubStandIn("hf_the_right_token_0000") as hub:
        hub.state.echo_headers = True
        res = _hub_publish(release_copy, hub, tmp_path)  # sends TOKEN, which is wrong here
    assert res.returncode == 2, res.stderr
    assert "HTTP 401" in res.stderr and "request headers" in res.stderr  # the echo reached the message
    assert TOKEN not in res.stdout + res.stderr


def test_publish_refuses_a_pool_whose_topics_changed_after_sampling(full_workdir, pool_dir, tmp_path):
    import csv

    pool = tmp_path / "pool"
    shutil.copytree(pool_dir, pool)
    with open(pool / "manifest.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    rows[0]["topic"] = next(r["topic"] for r in rows if r["topic"] != rows[0]["topic"])  # relabelled image
    with open(pool / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    out = tmp_path / "rel"
    with pytest.raises(MvlsibError, match="validation found .* violation"):
        publish_from(full_workdir, out, pool, languages=["eng_Latn"], progress=False)
    assert not out.exists()
