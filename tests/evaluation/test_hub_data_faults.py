"""`mvlsib-eval run --data ORG/NAME` against a hostile Hub on 127.0.0.1 (tests/support/fakes/hostile.py).

The Hub-data path goes through ``datasets`` and huggingface_hub; every request of it is bounded
and every answer checked (``hubio.session``), so each planted answer ends in exit 2 with one
line naming ``--data``, or a correct run; never a traceback, never the token."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import subprocess_env
from support.fakes import hostile
from support.fakes.hub import serve_folder
from support.fakes.openai_compat import lettered_server

RUN = "from mvlsib.cli import eval_cli; eval_cli()"
TOKEN = "hf_HostileDataSecret_77aa11"
REPO = "org/mvl-sib"
ENDPOINTS = {
    "info": ("GET", r"/api/datasets/[^/]+/[^/]+(?:/revision/[^/]+)?"),
    "tree": ("GET", r"/api/datasets/[^/]+/[^/]+/tree/.*"),
    "card": ("GET", r"/datasets/[^/]+/[^/]+/resolve/[^/]+/README\.md"),
    "parquet": ("GET", r"/datasets/[^/]+/[^/]+/resolve/[^/]+/data/.*\.parquet"),
}


def _run(hub, home: Path, out: Path, base_url: str) -> subprocess.CompletedProcess:
    env = subprocess_env(
        HF_HOME=str(home),
        HF_ENDPOINT=hub.endpoint,
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_XET="1",
        HF_TOKEN=TOKEN,
        OPENAI_API_KEY="sk-unused",
        MVLSIB_HUB_TIMEOUT="2",
    )
    args = ["run", "--data", REPO, "--languages", "all", "--tasks", "s2t", "--k", "1", "--limit", "2"]
    args += ["--backend", "openai", "--base-url", base_url, "--model", "m", "--out", str(out), "--no-progress"]
    return subprocess.run([sys.executable, "-c", RUN, *args], env=env, capture_output=True, text=True, timeout=240)


@pytest.mark.parametrize("endpoint", sorted(ENDPOINTS))
@pytest.mark.parametrize("name", ["html", "empty-list", "deep-list", "long-int-in-field", "nan", "drip"])
def test_run_data_against_a_hostile_hub(endpoint, name, release_dir, tmp_path):
    method, pattern = ENDPOINTS[endpoint]
    fault = hostile.drip() if name == "drip" else hostile.body_fault(name)
    out = tmp_path / "run"
    with serve_folder(REPO, release_dir, token=TOKEN) as hub, lettered_server() as server:
        hub.state.hostile = [(method, re.compile(pattern), fault)]
        start = time.monotonic()
        res = _run(hub, tmp_path / "home", out, server.base_url)
        elapsed = time.monotonic() - start
        hits = hub.state.hostile_hits
    assert hits >= 1, f"{endpoint} was not called: the table no longer matches what datasets requests"
    assert "Traceback" not in res.stderr and TOKEN not in res.stdout + res.stderr, res.stderr[-3000:]
    assert res.returncode == 2, res.stderr[-3000:]
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and REPO in lines[0], res.stderr[-3000:]
    assert not (out / "metrics.json").exists()
    assert elapsed < 60, elapsed


@pytest.mark.parametrize("name", sorted(hostile.BODIES))
def test_hub_results_task_ids_against_hostile_paths_info(name, release_dir, monkeypatch):
    """`hub-results` reads the release's eval.yaml from the Hub: a hostile paths-info answer is one message."""
    from mvlsib.errors import MvlsibError
    from mvlsib.evaluation.hub import results as hub_results

    monkeypatch.setenv("MVLSIB_HUB_TIMEOUT", "2")
    with serve_folder(REPO, release_dir, token=TOKEN) as hub:
        hub.state.hostile = [("POST", re.compile(r"/api/datasets/[^/]+/[^/]+/paths-info/.*"), hostile.body_fault(name))]
        with pytest.raises(MvlsibError) as info:
            hub_results.release_task_ids("no-such-folder", REPO, None, endpoint=hub.endpoint)
        assert hub.state.hostile_hits >= 1
    assert "\n" not in str(info.value) and REPO in str(info.value)
