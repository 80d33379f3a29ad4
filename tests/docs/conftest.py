"""Fixtures of the command-example tests (tests/support/command_examples.py): built once per session."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import EVAL_LANGUAGES, subprocess_env
from support.command_examples import _exe


@pytest.fixture(scope="session")
def photo_release(tmp_path_factory, sib_dir, topic_photos_dir) -> Path:
    """The two-language release on the topic photographs (what an upload needs)."""
    from mvlsib.pipeline import build

    base = tmp_path_factory.mktemp("photo-release")
    build(str(sib_dir), base / "rel", workdir=base / "work", pool=topic_photos_dir, languages=EVAL_LANGUAGES,
          progress=False)  # fmt: skip
    return base / "rel"


@pytest.fixture(scope="session")
def complete_run(release_dir, tmp_path_factory) -> Path:
    """A complete run (no --limit) of t2s k=1 over both languages, served by the fake server."""
    from support.fakes.openai_compat import content_server

    out = tmp_path_factory.mktemp("complete-run") / "run"
    with content_server() as server:
        res = subprocess.run(
            [_exe("mvlsib-eval"), "run", "--backend", "openai", "--base-url", server.base_url, "--model", "served",
             "--release", str(release_dir), "--tasks", "t2s", "--k", "1", "--concurrency", "16", "--out", str(out),
             "--no-progress"],
            env=subprocess_env(OPENAI_API_KEY="sk-unused"), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    assert res.returncode == 0, res.stderr[-3000:]
    return out
