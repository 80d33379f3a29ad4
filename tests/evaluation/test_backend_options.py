"""Backends own their options: each backend class refuses its own bad options and says what of them
goes into a run's fingerprint; the runner and the commands only pass them through."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import BACKENDS, backend_class
from mvlsib.evaluation.run.runner import RunOptions, fingerprint, resolve_tasks_ks

SRC = Path(__file__).resolve().parents[2] / "src" / "mvlsib" / "evaluation"
# The fields every run config's fingerprint has held, whatever the backend: a resumed run compares them.
FINGERPRINT_FIELDS = {
    "data",
    "data_revision",
    "release_manifest_sha256",
    "backend",
    "model",
    "model_revision",
    "dtype",
    "max_new_tokens",
    "tasks",
    "languages",
    "limit",
    "prompts_sha256",
    "prompt_template_version",
    "shard_count",
}


def test_openai_refuses_a_run_without_a_server(release_dir, tmp_path):
    with pytest.raises(MvlsibError, match="needs --base-url"):
        backend_class("openai").check_options({})
    result = CliRunner().invoke(
        eval_cli,
        ["run", "--backend", "openai", "--model", "m", "--data", str(release_dir), "--out", str(tmp_path / "r")],
    )
    assert result.exit_code == 2 and "needs --base-url" in result.output
    assert not (tmp_path / "r").exists()
    with pytest.raises(MvlsibError, match="--base-url must start with http"):
        backend_class("openai").check_options({"base_url": "ftp://host/v1"})
    with pytest.raises(MvlsibError, match="--concurrency"):
        backend_class("openai").check_options({"base_url": "http://127.0.0.1:1/v1", "concurrency": 0})


@pytest.mark.parametrize(
    "base_url", ["http://127.0.0.1:1/v1#access_token=S3CRETv4l", "http://127.0.0.1:1/v1?key=S3CRETv4l", "http://h/v1?"]
)
def test_openai_refuses_a_base_url_that_the_request_path_cannot_follow(base_url):
    """/chat/completions goes after the base URL: after a query or fragment it would be sent elsewhere."""
    with pytest.raises(MvlsibError, match="query or #fragment") as caught:
        backend_class("openai").check_options({"base_url": base_url})
    assert "S3CRETv4l" not in str(caught.value)


def test_hf_refuses_bad_options_without_loading_anything():
    hf = backend_class("hf")
    for options, message in (
        ({"dtype": "float8"}, "--dtype"),
        ({"device": "gpu"}, "--device"),
        ({"batch_size": 0}, "--batch-size"),
        ({"threads": -1}, "--threads"),
        ({"feature_cache_mb": -1}, "--feature-cache-mb"),
        ({"processor_kwargs": "[1]"}, "--processor-kwargs: not a JSON object"),
    ):
        with pytest.raises(MvlsibError, match=message):
            hf.check_options(options)
    hf.check_options({})  # the defaults are fine


def test_fingerprints_keep_the_fields_configs_have_always_held(release_dir, tmp_path):
    template = tmp_path / "template.jinja"
    template.write_text("{{ messages }}", encoding="utf-8")
    pairs = resolve_tasks_ks(("i2s",), (1,))
    for backend in BACKENDS:
        plain = fingerprint(RunOptions(data=str(release_dir), model="m", out=tmp_path, backend=backend), pairs, ["x"])
        assert set(plain) == FINGERPRINT_FIELDS
        assert plain["model_revision"] is None and plain["dtype"] == "auto"
    hf = backend_class("hf").fingerprint(
        {
            "revision": "abc",
            "dtype": "float32",
            "chat_template": str(template),
            "chat_template_kwargs": '{"enable_thinking": false}',
            "processor_kwargs": None,
        }
    )
    assert hf == {
        "model_revision": "abc",
        "dtype": "float32",
        "chat_template_kwargs": {"enable_thinking": False},
        "chat_template_sha256": hashlib.sha256(template.read_bytes()).hexdigest(),
    }
    openai = backend_class("openai").fingerprint({"base_url": "http://x/v1", "chat_template_kwargs": {"a": 1}})
    assert openai == {"model_revision": None, "dtype": "auto", "chat_template_kwargs": {"a": 1}}
    json.dumps(hf)  # goes into config.json as it is


def test_the_runner_and_the_commands_name_no_backend():
    for module in ("evaluation/run/runner.py", "cli/eval/run.py", "cli/options.py"):
        text = (SRC.parent / module).read_text("utf-8")
        for name in BACKENDS:
            assert f'"{name}"' not in text, f"{module} names the {name} backend"
        assert "backends.hf" not in text and "base_url" not in text
