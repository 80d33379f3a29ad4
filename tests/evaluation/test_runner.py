"""The evaluator end to end on a real release (ingest -> sample -> publish) and the tiny LLaVA:
the acceptance run, resume after kill -9, config checks, sharding and merge, report."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import EVAL_LANGUAGES as LANGUAGES
from support import subprocess_env

from mvlsib.cli import eval_cli

pytestmark = pytest.mark.eval

RUN_ARGS = [
    "--tasks",
    "i2s,s2i,t2s,s2t",
    "--k",
    "1,3",
    "--languages",
    ",".join(LANGUAGES),
    "--limit",
    "10",
    "--max-new-tokens",
    "1",
    "--batch-size",
    "8",
    "--device",
    "cpu",
    "--no-progress",
]
COMBOS = [("i2s", 1), ("i2s", 3), ("s2i", 1), ("s2i", 3), ("t2s", 1), ("s2t", 1), ("s2t", 3)]


def invoke(*args):
    result = CliRunner().invoke(eval_cli, [str(a) for a in args])
    return result


def read_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, release_dir, tiny_llava):
    out = tmp_path_factory.mktemp("run") / "run"
    result = invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", out, *RUN_ARGS)
    assert result.exit_code == 0, result.output
    return out


def test_acceptance_run(run_dir, release_dir, tiny_llava):
    preds = read_lines(run_dir / "predictions.jsonl")
    assert len(preds) == 140  # 7 task-k combos x 2 languages x 10 instances
    keys = Counter((p["task"], p["k"], p["language"], p["instance_id"]) for p in preds)
    assert max(keys.values()) == 1
    per_combo = Counter((p["task"], p["k"], p["language"]) for p in preds)
    assert per_combo == {(t, k, lang): 10 for t, k in COMBOS for lang in LANGUAGES}
    from jsonschema import Draft202012Validator

    from mvlsib.evaluation.run.run_files import json_schema

    check = Draft202012Validator(json_schema("prediction"))
    for p in preds:
        assert check.is_valid(p), p
        assert p["correct"] == (p["letter"] == "ABCD"[p["label"]])
        assert len(p["image_ids"]) == {"i2s": p["k"], "s2i": 4}.get(p["task"], 0)
    # --limit's stratified subset of the release, in release order
    eng_i2s = [p["instance_id"] for p in preds if (p["task"], p["k"], p["language"]) == ("i2s", 1, "eng_Latn")]
    from mvlsib.evaluation.run.subset import select_rows
    from mvlsib.release_format import mvl_sib

    rows = mvl_sib.load_rows("eng_Latn", release_dir)
    assert eng_i2s == [r["instance_id"] for r in select_rows(rows, 10)]
    assert len({r["topic"] for r in select_rows(rows, 10)}) == 7

    metrics = json.loads((run_dir / "metrics.json").read_text("utf-8"))
    for cell in metrics["per_language"]:
        mine = [p for p in preds if (p["language"], p["task"], p["k"]) == (cell["language"], cell["task"], cell["k"])]
        assert cell["n"] == 10
        assert cell["accuracy"] == pytest.approx(sum(p["correct"] for p in mine) / 10)
        assert cell["format_error_rate"] == pytest.approx(sum(p["letter"] is None for p in mine) / 10)
    assert {(r["task"], r["k"]) for r in metrics["macro"]} == set(COMBOS)
    assert {g["group"] for g in metrics["groups"]["script"]} == {"Arab", "Latn"}

    config = json.loads((run_dir / "config.json").read_text("utf-8"))
    fp = config["fingerprint"]
    assert fp["model"] == str(tiny_llava) and fp["backend"] == "hf"
    manifest = release_dir / "manifest.json"
    assert fp["release_manifest_sha256"] == hashlib.sha256(manifest.read_bytes()).hexdigest()
    from mvlsib.evaluation.run.prompts import prompts_hash

    assert fp["prompts_sha256"] == prompts_hash()
    assert config["complete"] is True and config["backend"]["model_class"] == "LlavaForConditionalGeneration"
    assert config["versions"]["transformers"] and config["versions"]["torch"]


def test_rerun_adds_nothing(run_dir, release_dir, tiny_llava):
    before = (run_dir / "predictions.jsonl").read_bytes()
    result = invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", run_dir, *RUN_ARGS)
    assert result.exit_code == 0, result.output
    assert "0 new predictions (140 already done)" in result.output
    assert (run_dir / "predictions.jsonl").read_bytes() == before


def test_resume_refuses_a_different_command(run_dir, release_dir, tiny_llava):
    args = list(RUN_ARGS)
    args[args.index("--k") + 1] = "1,5"
    result = invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", run_dir, *args)
    assert result.exit_code == 2
    assert "holds a run with different tasks" in result.output


def test_kill_9_and_resume_gives_each_key_once(tmp_path, release_dir, tiny_llava, run_dir):
    out = tmp_path / "killed"
    args = list(RUN_ARGS)
    args[args.index("--batch-size") + 1] = "1"  # one result per generate call: many writes to interrupt
    cmd = [
        sys.executable,
        "-c",
        "from mvlsib.cli import eval_cli; eval_cli()",
        "run",
        "--data",
        str(release_dir),
        "--model",
        str(tiny_llava),
        "--out",
        str(out),
        *args,
    ]
    proc = subprocess.Popen(cmd, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pred = out / "predictions.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if pred.exists() and pred.read_bytes().count(b"\n") >= 12:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    n_before = pred.read_bytes().count(b"\n")
    assert 12 <= n_before < 140
    # A kill in the middle of a write leaves a torn last line; make sure there is one.
    with open(pred, "ab") as fh:
        fh.write(b'{"task": "s2t", "k": 3, "language": "eng_La')
    result = invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", out, *args)
    assert result.exit_code == 0, result.output
    preds = read_lines(pred)
    keys = Counter((p["task"], p["k"], p["language"], p["instance_id"]) for p in preds)
    assert len(preds) == 140 and set(keys.values()) == {1}

    def prompts(records):
        return {(p["task"], p["k"], p["language"], p["instance_id"]): p["prompt_sha256"] for p in records}

    assert prompts(preds) == prompts(read_lines(run_dir / "predictions.jsonl"))
    # a finished run's file is in canonical order, whatever order the answers arrived in
    assert (out / "predictions.jsonl").read_bytes() == (run_dir / "predictions.jsonl").read_bytes() or [
        (p["language"], p["task"], p["k"]) for p in preds
    ] == [(p["language"], p["task"], p["k"]) for p in read_lines(run_dir / "predictions.jsonl")]
    assert json.loads((out / "metrics.json").read_text("utf-8"))["n_predictions"] == 140


SHARD_ARGS = [
    "--tasks",
    "t2s,s2t",
    "--k",
    "1,3",
    "--languages",
    ",".join(LANGUAGES),
    "--limit",
    "5",
    "--max-new-tokens",
    "1",
    "--device",
    "cpu",
    "--no-progress",
]


@pytest.fixture(scope="module")
def sharded(tmp_path_factory, release_dir, tiny_llava):
    out = tmp_path_factory.mktemp("sharded") / "run"
    r0 = invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", out, "--shard", "0/2", *SHARD_ARGS)
    assert r0.exit_code == 0, r0.output
    # the second shard takes its rank from the environment, as under torchrun/accelerate
    result = CliRunner().invoke(
        eval_cli,
        ["run", "--data", str(release_dir), "--model", str(tiny_llava), "--out", str(out), *SHARD_ARGS],
        env={"RANK": "1", "WORLD_SIZE": "2"},
    )
    assert result.exit_code == 0, result.output
    return out


def test_shards_and_merge(sharded, tmp_path, release_dir, tiny_llava):
    s0 = read_lines(sharded / "predictions.shard-0-of-2.jsonl")
    s1 = read_lines(sharded / "predictions.shard-1-of-2.jsonl")
    assert len(s0) == len(s1) == 15  # (t2s k1 + s2t k1,k3) x 2 languages x 5 / 2
    assert not (sharded / "predictions.jsonl").exists()
    result = invoke("merge", sharded, "--out", sharded)
    assert result.exit_code == 0, result.output
    merged = read_lines(sharded / "predictions.jsonl")
    assert len(merged) == 30
    assert {json.dumps(p, sort_keys=True) for p in merged} == {json.dumps(p, sort_keys=True) for p in s0 + s1}
    single = tmp_path / "single"
    assert invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", single, *SHARD_ARGS).exit_code == 0
    ref = read_lines(single / "predictions.jsonl")
    assert [(p["task"], p["k"], p["language"], p["instance_id"], p["prompt_sha256"]) for p in merged] == sorted(
        [(p["task"], p["k"], p["language"], p["instance_id"], p["prompt_sha256"]) for p in ref],
        key=lambda t: (t[2], ["i2s", "s2i", "t2s", "s2t"].index(t[0]), t[1], tuple(map(int, t[3].split("-")))),
    )
    metrics = json.loads((sharded / "metrics.json").read_text("utf-8"))
    assert metrics["n_predictions"] == 30
    cfg = json.loads((sharded / "config.json").read_text("utf-8"))
    assert [m["shard"] for m in cfg["merged_from"]] == ["0/2", "1/2"]


def _copy_shards(src: Path, dst: Path) -> Path:
    dst.mkdir()
    for f in src.glob("*.shard-*"):
        (dst / f.name).write_bytes(f.read_bytes())
    return dst


def test_merge_refuses_inconsistent_shards(sharded, tmp_path, release_dir, tiny_llava):
    # a missing shard
    lone = tmp_path / "lone"
    lone.mkdir()
    for name in ("predictions.shard-0-of-2.jsonl", "config.shard-0-of-2.json"):
        (lone / name).write_bytes((sharded / name).read_bytes())
    r = invoke("merge", lone, "--out", tmp_path / "m1")
    assert r.exit_code == 2 and "shards 1/2 are missing" in r.output
    # a shard of another command (different --limit)
    other = tmp_path / "other"
    args = list(SHARD_ARGS)
    args[args.index("--limit") + 1] = "4"
    assert (
        invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", other, "--shard", "1/2", *args).exit_code
        == 0
    )
    r = invoke("merge", lone, other, "--out", tmp_path / "m2")
    assert r.exit_code == 2 and "is from a different run" in r.output and "limit" in r.output
    # overlapping shards: shard 1 claims a key of shard 0
    bad = _copy_shards(sharded, tmp_path / "overlap")
    lines0 = (bad / "predictions.shard-0-of-2.jsonl").read_text("utf-8").splitlines(keepends=True)
    lines1 = (bad / "predictions.shard-1-of-2.jsonl").read_text("utf-8").splitlines(keepends=True)
    (bad / "predictions.shard-1-of-2.jsonl").write_text("".join(lines1[:-1] + lines0[:1]), encoding="utf-8")
    r = invoke("merge", bad, "--out", tmp_path / "m3")
    assert r.exit_code == 2 and "the shards overlap" in r.output
    # an incomplete shard
    short = _copy_shards(sharded, tmp_path / "short")
    (short / "predictions.shard-1-of-2.jsonl").write_text("".join(lines1[:-2]), encoding="utf-8")
    r = invoke("merge", short, "--out", tmp_path / "m4")
    assert r.exit_code == 2 and "shard 1/2 is incomplete: 13 of 15" in r.output
    assert invoke("merge", short, "--out", tmp_path / "m5", "--allow-partial").exit_code == 0


def test_bad_inputs_are_clear(tmp_path, release_dir, tiny_llava):
    r = invoke(
        "run",
        "--data",
        release_dir,
        "--model",
        tiny_llava,
        "--out",
        tmp_path / "x",
        "--languages",
        "xxx_Latn",
        "--no-progress",
    )
    assert r.exit_code == 2 and "xxx_Latn" in r.output and "Traceback" not in r.output
    r = invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", tmp_path / "x", "--tasks", "v2v")
    assert r.exit_code == 2 and "unknown task 'v2v'" in r.output
    r = invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", tmp_path / "x", "--shard", "2/2")
    assert r.exit_code == 2 and "shard index must be in 0..N-1" in r.output
    r = invoke("run", "--data", release_dir, "--model", tiny_llava, "--out", tmp_path / "x", "--k", "6")
    assert r.exit_code == 2 and "'--k'" in r.output and "6 is not in the range 1<=x<=5" in r.output


def test_report_side_by_side(run_dir, sharded, tmp_path):
    groups = tmp_path / "tiers.csv"
    groups.write_text("language,group\neng_Latn,high\narb_Arab,high\n", encoding="utf-8")
    merged = tmp_path / "merged"
    assert invoke("merge", sharded, "--out", merged).exit_code == 0
    out = tmp_path / "report"
    r = invoke("report", run_dir, merged, "--out", out, "--groups", groups, "--name", "full", "--name", "text")
    assert r.exit_code == 0, r.output
    md = (out / "report.md").read_text("utf-8")
    assert "| full acc | FE | valid | text acc | FE | valid |" in md
    assert "10 of 3012 instances per language, stratified over topics and gold letters" in md
    assert "## Groups: script" in md and "## Groups: tiers" in md
    import csv

    rows = list(csv.DictReader(open(out / "per_language.csv", encoding="utf-8")))
    assert len([r for r in rows if r["run"] == "full"]) == 14 and len([r for r in rows if r["run"] == "text"]) == 6
    macro = [r for r in csv.DictReader(open(out / "macro.csv", encoding="utf-8")) if r["run"] == "full"]
    metrics = json.loads((run_dir / "metrics.json").read_text("utf-8"))
    assert [float(r["accuracy"]) for r in macro] == pytest.approx([m["accuracy"] for m in metrics["macro"]])
    from PIL import Image

    for name in (
        "accuracy_by_language_family.png",
        "task_k_heatmap.png",
        "gap_text_vs_crossmodal.png",
        "topic_confusion.png",
    ):
        with Image.open(out / name) as im:
            assert im.format == "PNG" and im.width > 300
        assert (out / name).with_suffix(".svg").is_file()


def test_a_model_that_cannot_load_is_refused_before_any_prompt_is_built(release_dir, tmp_path, monkeypatch):
    """Building every prompt of a full run takes minutes and, for all 199 languages, more memory
    than a 24 GB machine has: a wrong --model must be said before that (backend preflight)."""
    from mvlsib.evaluation.run import runner

    def never(*_args, **_kwargs):
        raise AssertionError("prompts were built for a model that cannot load")

    monkeypatch.setattr(runner, "prompt_for_example", never)
    text_only = tmp_path / "gpt2-like"
    text_only.mkdir()
    (text_only / "config.json").write_text(json.dumps({"model_type": "gpt2"}), encoding="utf-8")
    for model, says in [(tmp_path / "no-such-model", "cannot load"), (text_only, "not an image-text-to-text")]:
        out = tmp_path / f"run-{model.name}"
        result = invoke("run", "--data", release_dir, "--model", model, "--out", out)
        assert result.exit_code == 2, result.output
        assert says in result.output and "Traceback" not in result.output
        assert not out.exists()
