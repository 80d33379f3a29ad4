"""The batch route end to end: ``batch prepare`` -> a stand-in batch runner against the suite's
OpenAI-compatible server on 127.0.0.1 -> ``batch collect``, compared with ``run --backend openai``
against the same server; the request lines checked with the openai SDK's own types; the
result-file faults (missing, duplicated, failed, foreign ids) and the retry that completes a run;
SLURM array shards and ``plan``."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import typing
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import POOL_DIR, SIB_DIR, subprocess_env
from support.fakes.batch_runner import run_batch
from support.fakes.openai_compat import content_server

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.pipeline import build

# Four scripts, one right-to-left: the release every test here uses.
LANGUAGES = ("eng_Latn", "arb_Arab", "zho_Hans", "hin_Deva")
SELECTION = ["--tasks", "i2s,s2i,t2s,s2t", "--k", "1,3", "--limit", "3"]
MODEL = "served-vlm"
# Per language: i2s 2 + s2i 2 + t2s 1 + s2t 2 cells of 3 instances.
N_PROMPTS = len(LANGUAGES) * 7 * 3


def invoke(*args, env=None):
    return CliRunner().invoke(eval_cli, [str(a) for a in args], env=env)


def run_online(base_url, release, out, env=None):
    """``mvlsib-eval run`` of the SELECTION against the server at ``base_url``."""
    args = ["run", "--backend", "openai", "--base-url", base_url, "--model", MODEL, "--data", release, *SELECTION]
    return invoke(*args, "--out", out, "--no-progress", env=env)


def ok(result):
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """A release of four languages made by the real pipeline."""
    base = tmp_path_factory.mktemp("batch-release")
    build(str(SIB_DIR), base / "rel", workdir=base / "work", pool=POOL_DIR, languages=LANGUAGES, progress=False)
    return base / "rel"


@pytest.fixture(scope="module")
def server():
    # Answers by a hash of the prompt: the same prompt gets the same answer whenever it arrives.
    with content_server() as s:
        yield s


@pytest.fixture(scope="module")
def online_run(tmp_path_factory, release, server) -> Path:
    out = tmp_path_factory.mktemp("online") / "run"
    ok(run_online(server.base_url, release, out))
    server.online_payloads = list(server.requests)
    return out


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, release) -> Path:
    out = tmp_path_factory.mktemp("batch") / "batch"
    # 20 requests a file: the split is exercised on a small run.
    ok(
        invoke(
            "batch",
            "prepare",
            "--data",
            release,
            "--model",
            MODEL,
            *SELECTION,
            "--out",
            out,
            "--max-requests",
            20,
            "--no-progress",
        )
    )
    return out


def request_files(folder: Path) -> list[Path]:
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    return [folder / f["name"] for f in manifest["files"]]


def lines_of(paths) -> list[dict]:
    return [json.loads(line) for p in paths for line in Path(p).read_text("utf-8").splitlines()]


def test_round_trip_equals_the_online_run(release, prepared, online_run, server, tmp_path):
    manifest = json.loads((prepared / "manifest.json").read_text("utf-8"))
    assert manifest["n_requests"] == N_PROMPTS
    assert [f["n_requests"] for f in manifest["files"]] == [20, 20, 20, 20, 4]
    requests = lines_of(request_files(prepared))
    assert len({r["custom_id"] for r in requests}) == N_PROMPTS
    # The bodies are exactly what the openai backend sent for the same prompts (the server saw both).
    online_bodies = sorted(json.dumps(p, sort_keys=True) for p in server.online_payloads)
    assert sorted(json.dumps(r["body"], sort_keys=True) for r in requests) == online_bodies

    results = tmp_path / "results.jsonl"
    counts = run_batch(request_files(prepared), results, server.base_url)
    assert counts == {"requests": N_PROMPTS, "ok": N_PROMPTS, "failed": 0}
    out = tmp_path / "run"
    result = ok(invoke("batch", "collect", prepared, results, "--out", out, "--no-progress"))
    assert "complete" in result.output
    for name in ("predictions.jsonl", "metrics.json"):
        assert (out / name).read_bytes() == (online_run / name).read_bytes(), name
    batch_cfg = json.loads((out / "config.json").read_text("utf-8"))
    online_cfg = json.loads((online_run / "config.json").read_text("utf-8"))
    # The differences are the documented ones: the command, and how the answers were fetched.
    for key in set(batch_cfg) | set(online_cfg):
        if key not in ("command", "backend"):
            assert batch_cfg.get(key) == online_cfg.get(key), key
    b, o = batch_cfg["backend"], online_cfg["backend"]
    assert {k for k in set(b) | set(o) if b.get(k) != o.get(k)} == {
        "base_url",
        "concurrency",
        "route",
        "batch_manifest_sha256",
        # online only: a response cut off inside a thinking block is asked for again (a batch is answered once)
        "thinking_max_new_tokens",
        "thinking_continuation",
    }
    # The collected run is an ordinary run: the online runner resumes it and finds nothing to do.
    again = ok(run_online("http://127.0.0.1:9/v1", release, out))
    assert f"0 new predictions ({N_PROMPTS} already done)" in again.output


def test_request_lines_validate_with_the_openai_sdk(prepared):
    """The SDK's own types: the batch endpoint literal and the chat-completion create params."""
    pydantic = pytest.importorskip("pydantic")
    from openai.types.batch_create_params import BatchCreateParams
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    endpoints = typing.get_args(
        typing.get_args(typing.get_type_hints(BatchCreateParams, include_extras=True)["endpoint"])[0]
    )
    adapter = pydantic.TypeAdapter(CompletionCreateParamsNonStreaming)
    known = set(typing.get_type_hints(CompletionCreateParamsNonStreaming))
    for line in lines_of(request_files(prepared)):
        assert set(line) == {"custom_id", "method", "url", "body"}
        assert line["method"] == "POST" and line["url"] in endpoints
        assert set(line["body"]) <= known, set(line["body"]) - known
        body = adapter.validate_python(line["body"])
        # The SDK's Iterable fields validate lazily: walk them so every message and part is checked.
        for message in body["messages"]:
            parts = list(message["content"])
            assert parts and all(p["type"] in ("text", "image_url") for p in parts)
            for p in parts:
                if p["type"] == "image_url":
                    assert p["image_url"]["url"].startswith(("data:image/jpeg;base64,", "data:image/png;base64,"))


def test_refuses_a_folder_it_did_not_write(release, tmp_path):
    out = tmp_path / "b"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = invoke("batch", "prepare", "--data", release, "--model", MODEL, *SELECTION, "--out", out)
    assert result.exit_code == 2 and "notes.txt" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_an_edited_request_file_is_never_replaced(release, prepared, tmp_path):
    batch = tmp_path / "batch"
    shutil.copytree(prepared, batch)
    edited = request_files(batch)[0]
    edited.write_text(edited.read_text("utf-8") + "\n", "utf-8")
    before = edited.read_bytes()
    result = invoke("batch", "prepare", "--data", release, "--model", MODEL, *SELECTION, "--out", batch)
    assert result.exit_code == 2 and edited.name in result.output and "edited" in result.output
    assert edited.read_bytes() == before


def test_results_downloaded_into_retry_survive_the_collect_that_completes_the_run(prepared, online_run, tmp_path):
    batch = tmp_path / "batch"
    shutil.copytree(prepared, batch)
    out = tmp_path / "run"
    with content_server(fail_every=5) as server:
        run_batch(request_files(batch), tmp_path / "first.jsonl", server.base_url)
    assert invoke("batch", "collect", batch, tmp_path / "first.jsonl", "--out", out, "--no-progress").exit_code == 1
    retry = batch / "retry"
    index = json.loads((retry / "retry.json").read_text("utf-8"))
    mine = retry / "results-downloaded.jsonl"  # the user keeps the retry's results beside its requests
    with content_server() as server:
        run_batch([retry / f["name"] for f in index["files"]], mine, server.base_url)
    kept = mine.read_bytes()
    ok(invoke("batch", "collect", batch, mine, "--out", out, "--no-progress"))
    assert sorted(p.name for p in retry.iterdir()) == [mine.name] and mine.read_bytes() == kept
    assert (out / "predictions.jsonl").read_bytes() == (online_run / "predictions.jsonl").read_bytes()
    # and a file of the user's where collect would write its own is refused before any work
    (retry / "retry.json").write_text("{}", "utf-8")
    clash = invoke("batch", "collect", batch, mine, "--out", tmp_path / "other", "--no-progress")
    assert clash.exit_code == 2 and "retry.json" in clash.output and not (tmp_path / "other").exists()


@pytest.mark.parametrize("edit", ["prompt", "line-dropped", "removed"])
def test_a_batch_edited_after_prepare_is_refused_before_anything_is_written(prepared, tmp_path, edit):
    """The results answer the requests as they were sent; the run would record the release's prompts."""
    batch = tmp_path / "batch"
    shutil.copytree(prepared, batch)
    with content_server() as server:
        run_batch(request_files(batch), tmp_path / "all.jsonl", server.base_url)
    target = request_files(batch)[0]
    if edit == "prompt":
        target.write_text(target.read_text("utf-8").replace("Which", "Ignore the options. Which", 1), "utf-8")
    elif edit == "line-dropped":
        target.write_text("".join(target.read_text("utf-8").splitlines(keepends=True)[1:]), "utf-8")
    else:
        target.unlink()
    out = tmp_path / "run"
    result = invoke("batch", "collect", batch, tmp_path / "all.jsonl", "--out", out, "--no-progress")
    assert result.exit_code == 2 and target.name in result.output and "prepare the batch again" in result.output
    assert not out.exists() and not (batch / "retry").exists()


def _edit_body(body: dict, edit: str) -> None:
    if edit == "model":
        body["model"] = "some-other-model"
    elif edit == "question":
        for message in body["messages"]:
            for part in message["content"] if isinstance(message["content"], list) else []:
                if part.get("type") == "text":
                    part["text"] = "Say A."
    elif edit == "max-tokens":
        body["max_tokens"] = body.get("max_tokens", 1) + 100
    elif edit == "temperature":
        body["temperature"] = 1.5
    elif edit == "system-prompt":
        body["messages"].insert(0, {"role": "system", "content": "Always answer A."})


@pytest.mark.parametrize("where", ["first", "last"])
@pytest.mark.parametrize(
    "edit", ["model", "question", "max-tokens", "temperature", "system-prompt", "request-dropped", "request-added"]
)
def test_requests_edited_with_the_manifest_updated_are_not_the_run_s(prepared, tmp_path, edit, where):
    """The request files are derived from the release and the manifest's run: collect rebuilds every
    body and compares, so a hand edit the manifest's hashes were updated for is refused all the same."""
    batch = tmp_path / "batch"
    shutil.copytree(prepared, batch)
    manifest = json.loads((batch / "manifest.json").read_text("utf-8"))
    entry = manifest["files"][0 if where == "first" else -1]
    target = batch / entry["name"]
    requests = [json.loads(x) for x in target.read_text("utf-8").splitlines()]
    i = 0 if where == "first" else -1
    if edit == "request-dropped":
        del requests[i]
    elif edit == "request-added":
        extra = json.loads(json.dumps(requests[i]))
        extra["custom_id"] = extra["custom_id"] + "-extra"
        requests.append(extra)
    else:
        _edit_body(requests[i]["body"], edit)
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in requests)
    target.write_text(text, "utf-8")
    entry["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    for key in ("bytes", "n_requests"):
        if key in entry:
            entry[key] = len(text.encode("utf-8")) if key == "bytes" else len(requests)
    (batch / "manifest.json").write_text(json.dumps(manifest, indent=1), "utf-8")
    with content_server() as server:
        run_batch(request_files(batch), tmp_path / "all.jsonl", server.base_url)
    out = tmp_path / "run"
    result = invoke("batch", "collect", batch, tmp_path / "all.jsonl", "--out", out, "--no-progress")
    assert result.exit_code == 2 and "prepare the batch again" in result.output, result.output
    assert not out.exists() and not (batch / "retry").exists()


def test_a_folder_of_the_user_s_beside_the_batch_s_retry_is_never_touched(prepared, tmp_path):
    """collect stages its retry files in a hidden folder of its own, never in a name a user gives."""
    batch = tmp_path / "batch"
    shutil.copytree(prepared, batch)
    with content_server(fail_every=4) as server:
        run_batch(request_files(batch), tmp_path / "some.jsonl", server.base_url)
    for name in ("retry.new", "retry.old", "retry.tmp"):
        (batch / name).mkdir()
        (batch / name / "mine.txt").write_text("precious", "utf-8")
    result = invoke("batch", "collect", batch, tmp_path / "some.jsonl", "--out", tmp_path / "run", "--no-progress")
    assert result.exit_code == 1 and (batch / "retry" / "retry.json").is_file(), result.output
    for name in ("retry.new", "retry.old", "retry.tmp"):
        assert (batch / name / "mine.txt").read_text("utf-8") == "precious"
    assert not [p for p in batch.iterdir() if ".partial-" in p.name or p.name.endswith(".lock")]


def test_a_batch_prepared_with_a_relative_release_collects_from_anywhere(release, tmp_path, monkeypatch):
    """The manifest records the release folder by its absolute path, as a run's config does."""
    work = tmp_path / "work"
    shutil.copytree(release, work / "rel")
    monkeypatch.chdir(work)
    ok(invoke("batch", "prepare", "--data", "rel", "--model", MODEL, *SELECTION, "--limit", "2", "--out", "batch"))
    with content_server() as server:
        run_batch(request_files(work / "batch"), tmp_path / "all.jsonl", server.base_url)
    monkeypatch.chdir(tmp_path)
    ok(invoke("batch", "collect", work / "batch", tmp_path / "all.jsonl", "--out", tmp_path / "run", "--no-progress"))


def _write_lines(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return path


def test_faults_are_named_and_the_retry_completes_the_run(prepared, online_run, tmp_path):
    """A batch whose server refused every 5th request, with a line lost, two given twice (once with
    another answer) and one from another batch: each is named; the retry file completes the run."""
    flaky = tmp_path / "flaky.jsonl"
    with content_server(fail_every=5) as server:
        counts = run_batch(request_files(prepared), flaky, server.base_url)
    assert counts["failed"] >= 10
    lines = lines_of([flaky])
    good = [x for x in lines if x["response"] and x["response"]["status_code"] == 200]
    failed_ids = sorted(x["custom_id"] for x in lines if x not in good)
    lost, same, other = good[0], good[1], good[2]
    changed = json.loads(json.dumps(other))
    changed["response"]["body"]["choices"][0]["message"]["content"] = "Z) surely not the same"
    foreign = json.loads(json.dumps(good[3]))
    foreign["custom_id"] = "i2s|k1|xxx_Latn|1-1"
    kept = [x for x in lines if x is not lost] + [same, changed, foreign]
    results = _write_lines(tmp_path / "results.jsonl", kept)

    out = tmp_path / "run"
    result = invoke("batch", "collect", prepared, results, "--out", out, "--no-progress")
    assert result.exit_code == 1, result.output  # the run is incomplete: not a success
    text = result.output
    assert "INCOMPLETE" in text and f"missing 1: {lost['custom_id']}" in text
    for cid in failed_ids[:5]:
        assert cid in text
    assert same["custom_id"] in text and other["custom_id"] in text  # duplicated, both named
    assert "foreign 1: i2s|k1|xxx_Latn|1-1" in text
    retry = prepared / "retry"
    report = json.loads((retry / "retry.json").read_text("utf-8"))
    assert report["missing"] == [lost["custom_id"]]
    assert sorted(report["failed"]) == sorted(failed_ids + [other["custom_id"]])
    assert set(report["duplicated"]) == {same["custom_id"], other["custom_id"]}
    assert report["foreign"] == ["i2s|k1|xxx_Latn|1-1"]
    retry_lines = lines_of(retry / f["name"] for f in report["files"])
    assert sorted(x["custom_id"] for x in retry_lines) == sorted(failed_ids + [lost["custom_id"], other["custom_id"]])
    # The retry lines are the original request lines, byte for byte.
    originals = {
        json.loads(line)["custom_id"]: line
        for p in request_files(prepared)
        for line in p.read_text("utf-8").splitlines()
    }
    for p in (retry / f["name"] for f in report["files"]):
        for line in p.read_text("utf-8").splitlines():
            assert line == originals[json.loads(line)["custom_id"]]
    config = json.loads((out / "config.json").read_text("utf-8"))
    assert config["complete"] is False and not (out / "metrics.json").exists()

    retried = tmp_path / "retried.jsonl"
    with content_server() as server:
        run_batch([retry / f["name"] for f in report["files"]], retried, server.base_url)
    result = ok(invoke("batch", "collect", prepared, retried, "--out", out, "--no-progress"))
    assert not retry.exists(), "nothing left to retry"
    for name in ("predictions.jsonl", "metrics.json"):
        assert (out / name).read_bytes() == (online_run / name).read_bytes(), name


@pytest.mark.parametrize(
    "line, what",
    [
        ("not json", "not valid JSON"),
        ("[" * 100 + "]" * 100, "nested 100 deep"),
        ('{"id": "x", "response": null, "error": null}', "'custom_id' is missing"),
        ('{"id": "x", "custom_id": "a", "response": {"status_code": "200"}, "error": null}', "status_code"),
    ],
)
def test_a_malformed_result_line_is_named_and_nothing_is_written(prepared, tmp_path, line, what):
    results = tmp_path / "r.jsonl"
    results.write_text('{"id": "x", "custom_id": "a", "response": null, "error": {"message": "x"}}\n' + line + "\n")
    out = tmp_path / "run"
    result = invoke("batch", "collect", prepared, results, "--out", out)
    assert result.exit_code == 2, result.output
    assert f"{results}, line 2" in result.output and what in result.output
    assert not out.exists()


# ---------------------------------------------------------------- shards from the environment


def slurm(task_id: int, count: int = 4, minimum: int = 0) -> dict[str, str]:
    return {
        "SLURM_ARRAY_TASK_ID": str(task_id),
        "SLURM_ARRAY_TASK_COUNT": str(count),
        "SLURM_ARRAY_TASK_MIN": str(minimum),
        "SLURM_ARRAY_TASK_MAX": str(minimum + count - 1),
    }


def test_parse_shard_reads_slurm_and_refuses_conflicts():
    from mvlsib.errors import MvlsibError
    from mvlsib.evaluation.run.shards import Shard, parse_shard

    assert parse_shard(None, slurm(2)) == Shard(2, 4)
    assert parse_shard(None, slurm(12, minimum=10)) == Shard(2, 4)  # --array=10-13
    assert parse_shard("1/4", slurm(2)) == Shard(1, 4)  # the explicit --shard wins
    assert parse_shard(None, {**slurm(2), "RANK": "2", "WORLD_SIZE": "4"}) == Shard(2, 4)
    with pytest.raises(MvlsibError, match="SLURM_ARRAY_TASK_ID.*RANK"):
        parse_shard(None, {**slurm(2), "RANK": "0", "WORLD_SIZE": "2"})
    with pytest.raises(MvlsibError, match="SLURM_ARRAY_TASK_COUNT"):
        parse_shard(None, {"SLURM_ARRAY_TASK_ID": "1"})
    with pytest.raises(MvlsibError, match="0..N-1"):
        parse_shard(None, slurm(7))


def test_a_slurm_array_and_merge_give_the_one_process_run(release, online_run, server, tmp_path):
    out = tmp_path / "sharded"
    for task in range(4):
        env = slurm(task + 3, minimum=3)  # --array=3-6: the offset is taken off
        ok(run_online(server.base_url, release, out, env=env))
    assert sorted(p.name for p in out.glob("predictions.shard-*")) == [
        f"predictions.shard-{i}-of-4.jsonl" for i in range(4)
    ]
    (out / "predictions.shard-1-of-4.jsonl").rename(tmp_path / "held-back.jsonl")
    missing = invoke("merge", out, "--out", tmp_path / "m")
    assert missing.exit_code == 2 and "1/4" in missing.output
    (tmp_path / "held-back.jsonl").rename(out / "predictions.shard-1-of-4.jsonl")
    ok(invoke("merge", out, "--out", tmp_path / "merged"))
    for name in ("predictions.jsonl", "metrics.json"):
        assert (tmp_path / "merged" / name).read_bytes() == (online_run / name).read_bytes(), name


def test_plan_counts_prompts_and_writes_an_array_script_that_runs(release, online_run, server, tmp_path):
    script = tmp_path / "eval.sbatch"
    run = tmp_path / "run"
    result = ok(
        invoke("plan", "--data", release, *SELECTION, "--gpus", 4, "--model", MODEL, "--out", run,
               "--script", script, "--prompts-per-second", "0.01")
    )  # fmt: skip
    text = result.output
    assert f"= {N_PROMPTS} prompts" in text
    for task, k in (("i2s", 1), ("i2s", 3), ("s2i", 1), ("s2i", 3), ("t2s", 1), ("s2t", 1), ("s2t", 3)):
        assert f"{task:<5} {k:>2} {len(LANGUAGES) * 3:>12,}" in text
    assert [f"shard {i}/4: {N_PROMPTS // 4} prompts (~0.6 h)" in text for i in range(4)] == [True] * 4
    body = script.read_text("utf-8")
    assert "#SBATCH --array=0-3" in body and "#SBATCH --time=1:00:00" in body
    # The script as SLURM would run it: each array task (here --array=0-3) a process of its own.
    for task in range(4):
        subprocess.run(
            ["bash", str(script), "--backend", "openai", "--base-url", server.base_url],
            check=True,
            capture_output=True,
            env=subprocess_env(**slurm(task)),
            timeout=120,
        )
    merge = re.search(r"#   (mvlsib-eval merge .*)", body).group(1)
    subprocess.run(["bash", "-c", merge], check=True, capture_output=True, env=subprocess_env(), timeout=120)
    for name in ("predictions.jsonl", "metrics.json"):
        assert (run / name).read_bytes() == (online_run / name).read_bytes(), name


def test_plan_refuses_more_shards_than_prompts(release, tmp_path):
    result = invoke("plan", "--data", release, "--tasks", "t2s", "--k", "1", "--languages", LANGUAGES[0],
                    "--limit", "1", "--gpus", 6, "--model", MODEL, "--out", tmp_path / "run")  # fmt: skip
    assert result.exit_code == 2 and "--gpus 6" in result.output and "give --gpus 1 or fewer" in result.output


def test_decoding_options_reach_the_body_as_the_backend_sends_them(release, tmp_path):
    """--request-style reasoning, --max-new-tokens and --chat-template-kwargs: the prepared bodies equal
    what the openai backend sends with the same options (the server records both)."""
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    options = [
        "--request-style", "reasoning", "--max-new-tokens", "64",
        "--chat-template-kwargs", '{"enable_thinking": false}',
    ]  # fmt: skip
    selection = ["--tasks", "i2s,s2t", "--k", "3", "--languages", "arb_Arab", "--limit", "2"]
    with content_server() as server:
        ok(
            invoke(
                "run", "--backend", "openai", "--base-url", server.base_url, "--model", MODEL, "--data", release,
                *selection, *options, "--out", tmp_path / "run", "--no-progress",
            )
        )  # fmt: skip
        sent = sorted(json.dumps(p, sort_keys=True) for p in server.requests)
    out = tmp_path / "batch"
    ok(invoke("batch", "prepare", "--data", release, "--model", MODEL, *selection, *options, "--out", out))
    bodies = [line["body"] for line in lines_of(request_files(out))]
    assert sorted(json.dumps(b, sort_keys=True) for b in bodies) == sent
    known = set(typing.get_type_hints(CompletionCreateParamsNonStreaming))
    for body in bodies:
        assert body["max_completion_tokens"] == 64 and "max_tokens" not in body and "temperature" not in body
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
        # chat_template_kwargs is vLLM's and SGLang's extension, not an OpenAI field: send it only to them.
        assert set(body) - known == {"chat_template_kwargs"}


def test_waves_and_a_second_prepare_give_the_same_requests(release, prepared, tmp_path):
    """--max-prompts 10 plans the run in waves (as run does): the same request lines; preparing again
    into a folder of its own replaces it whole."""
    out = tmp_path / "waves"
    for _ in range(2):
        ok(invoke("batch", "prepare", "--data", release, "--model", MODEL, *SELECTION, "--out", out,
                  "--max-prompts", 10, "--no-progress"))  # fmt: skip
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "requests-00001.jsonl"]
    ours = sorted(line for p in request_files(out) for line in p.read_text("utf-8").splitlines())
    theirs = sorted(line for p in request_files(prepared) for line in p.read_text("utf-8").splitlines())
    assert ours == theirs
    assert not list(tmp_path.glob(".waves.*")), "no staging folder left behind"


def test_images_referenced_as_files(prepared, tmp_path):
    """image_refs="files": each image written once under OUT/images/ (the release's own bytes, named by
    their sha256) and named by a file:// URL; otherwise the very requests of the inline folder. A second
    prepare into the folder replaces it; an unknown mode is refused."""
    import base64
    from urllib.parse import unquote, urlsplit

    from mvlsib.evaluation.scale.prepare import options_from, prepare

    manifest = json.loads((prepared / "manifest.json").read_text("utf-8"))
    out = tmp_path / "files"
    for _ in range(2):
        prepare(options_from(manifest["run"], out), out, image_refs="files", max_requests=20)
    assert json.loads((out / "manifest.json").read_text("utf-8"))["image_refs"] == "files"
    inline = {r["custom_id"]: r for r in lines_of(request_files(prepared))}
    files = lines_of(request_files(out))
    assert len(files) == len(inline) == N_PROMPTS
    written = {p.name for p in (out / "images").iterdir()}
    for line in files:
        want = inline[line["custom_id"]]
        for got_msg, want_msg in zip(line["body"]["messages"], want["body"]["messages"], strict=True):
            for got, part in zip(got_msg["content"], want_msg["content"], strict=True):
                if part["type"] != "image_url":
                    assert got == part
                    continue
                path = Path(unquote(urlsplit(got["image_url"]["url"]).path))
                assert got["image_url"]["url"].startswith("file:///") and path.parent == (out / "images").resolve()
                data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
                assert path.read_bytes() == data and path.name in written
    with pytest.raises(MvlsibError, match="--image-refs must be one of inline, files"):
        prepare(options_from(manifest["run"], tmp_path / "x"), tmp_path / "x", image_refs="links")
