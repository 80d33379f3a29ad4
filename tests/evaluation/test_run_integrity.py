"""Run-folder integrity: one writer per run folder, duplicate keys refused, completeness shown
by report and merge. Runs use the openai backend against the local fake (no model to load)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.fakes.openai_compat import ChatServer, lettered_server
from support.other_holder import held_elsewhere

from mvlsib.cli import eval_cli

BASE = [
    "--backend",
    "openai",
    "--model",
    "served-vlm",
    "--tasks",
    "s2t",
    "--k",
    "1",
    "--languages",
    "eng_Latn",
    "--limit",
    "4",
    "--concurrency",
    "1",
    "--retry-backoff",
    "0.01",
    "--no-progress",
]


def run(release_dir, server, out, *extra):
    return CliRunner().invoke(
        eval_cli, ["run", "--data", str(release_dir), "--base-url", server.base_url, "--out", str(out), *BASE, *extra]
    )


def lines(path: Path) -> list[str]:
    return path.read_text("utf-8").splitlines()


def test_second_run_on_the_same_folder_is_refused_while_the_first_runs(release_dir, tmp_path):
    out = tmp_path / "run"

    def slow(_payload, _n):
        time.sleep(0.4)
        return "A"

    with ChatServer(slow) as server:
        first = {}
        thread = threading.Thread(target=lambda: first.setdefault("r", run(release_dir, server, out)))
        thread.start()
        lock = out / ".run.lock"
        deadline = time.monotonic() + 10
        while not (lock.is_file() and lock.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.02)
        second = run(release_dir, server, out, "--model", "another-model")
        thread.join(30)
    assert second.exit_code == 2, second.output
    assert "is in use by another run (pid" in second.output and "Traceback" not in second.output
    assert first["r"].exit_code == 0, first["r"].output
    recs = [json.loads(x) for x in lines(out / "predictions.jsonl")]
    assert len(recs) == 4 and len({r["instance_id"] for r in recs}) == 4  # one model, each key once
    assert json.loads((out / "config.json").read_text())["fingerprint"]["model"] == "served-vlm"


def test_lock_is_held_for_the_whole_run(release_dir, tmp_path):
    out = tmp_path / "run"
    with lettered_server(fail_every=0) as server, held_elsewhere(out, ".run.lock"):
        result = run(release_dir, server, out)
        assert result.exit_code == 2 and "in use by another run" in result.output
        assert server.requests == []  # refused before any model call
    with lettered_server(fail_every=0) as server:  # released: the run goes ahead
        assert run(release_dir, server, out).exit_code == 0


def test_duplicate_keys_are_refused_on_resume_and_in_report(release_dir, tmp_path):
    out = tmp_path / "run"
    with lettered_server(fail_every=0) as server:
        assert run(release_dir, server, out).exit_code == 0
        pred = out / "predictions.jsonl"
        pred.write_text(pred.read_text("utf-8") + lines(pred)[0] + "\n", encoding="utf-8")
        before = pred.read_bytes()
        resumed = run(release_dir, server, out)
    assert resumed.exit_code == 2 and "1 keys appear more than once" in resumed.output, resumed.output
    assert pred.read_bytes() == before
    report = CliRunner().invoke(eval_cli, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert report.exit_code == 2 and "appear more than once" in report.output, report.output


@pytest.mark.parametrize("which", ["first", "last"])
def test_a_resumed_run_refuses_predictions_whose_gold_is_not_the_release_s(release_dir, tmp_path, which):
    """Gold labels edited to the model's letter would score every kept prediction as correct."""
    out = tmp_path / "run"
    with lettered_server(fail_every=0) as server:
        assert run(release_dir, server, out).exit_code == 0
        pred = out / "predictions.jsonl"
        records = [json.loads(x) for x in lines(pred)][:2]  # killed after two: two left to do
        (out / "metrics.json").unlink()
        edited = records[0 if which == "first" else -1]
        edited["label"] = (edited["label"] + 1) % 4
        pred.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        before = pred.read_bytes()
        resumed = run(release_dir, server, out)
    assert resumed.exit_code == 2 and "gold label is not the release's" in resumed.output, resumed.output
    assert pred.read_bytes() == before


def test_report_shows_an_incomplete_run(release_dir, tmp_path):
    out = tmp_path / "run"
    with lettered_server(fail_every=0) as server:
        assert run(release_dir, server, out).exit_code == 0
    pred = out / "predictions.jsonl"
    pred.write_text("\n".join(lines(pred)[:1]) + "\n", encoding="utf-8")  # 1 of 4 left
    (out / "metrics.json").unlink()  # as a killed run has none: it is written when the run completes
    result = CliRunner().invoke(eval_cli, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    assert "is incomplete: 1 of 4 predictions" in result.output  # said on stderr, not only in the file
    md = (tmp_path / "rep" / "report.md").read_text("utf-8")
    assert "| run | 1 | 4 | **NO** |" in md
    assert "| run | eng\\_Latn | s2t | 1 | 1 / 4 |" in md


def test_partial_merge_is_not_complete(release_dir, tmp_path):
    out = tmp_path / "run"
    with lettered_server(fail_every=0) as server:
        assert run(release_dir, server, out, "--shard", "0/2").exit_code == 0
    merged = tmp_path / "merged"
    result = CliRunner().invoke(eval_cli, ["merge", str(out), "--out", str(merged), "--allow-partial"])
    assert result.exit_code == 0, result.output
    assert "INCOMPLETE: 2 of 4" in result.output
    config = json.loads((merged / "config.json").read_text())
    assert config["complete"] is False and config["n_expected"] == 4 and config["missing_shards"] == ["1/2"]
    report = CliRunner().invoke(eval_cli, ["report", str(merged), "--out", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.output
    assert "| merged | 2 | 4 | **NO** |" in (tmp_path / "rep" / "report.md").read_text("utf-8")


# ---------------------------------------------------------------- defect 11: the release is checked first


def _with_label(release_dir: Path, tmp_path: Path, value) -> Path:
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    rel = tmp_path / "rel"
    shutil.copytree(release_dir, rel)
    path = rel / "data" / "eng_Latn" / "test.parquet"
    table = pq.read_table(path)
    column = table.column("image_label").to_pylist()
    column[0] = value
    idx = table.schema.get_field_index("image_label")
    table = table.set_column(idx, pa.field("image_label", pa.int64(), nullable=True), pa.array(column, pa.int64()))
    pq.write_table(table, path)
    return rel


def test_tampered_release_is_refused_before_any_model_call(release_dir, tmp_path):
    rel = _with_label(release_dir, tmp_path, 3)
    with lettered_server(fail_every=0) as server:
        result = run(rel, server, tmp_path / "run")
        assert server.requests == []
    assert result.exit_code == 2, result.output
    assert "data/eng_Latn/test.parquet: size" in result.output or "data/eng_Latn/test.parquet: sha256" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("value", [None, 7, -1])
def test_bad_label_without_manifest_is_a_message(release_dir, tmp_path, value):
    rel = _with_label(release_dir, tmp_path, value)
    (rel / "manifest.json").unlink()
    with lettered_server(fail_every=0) as server:
        result = run(rel, server, tmp_path / "run")
        assert server.requests == []
    assert result.exit_code == 2, result.output
    assert f"image_label is {value!r}, not an option index 0..3" in result.output


# ------------------------------------------------- one run per folder; merge checks what it merges


def _scene(tmp_path: Path, release_dir: Path) -> tuple[Path, Path]:
    """An unsharded run and a two-shard run (both complete), of one model and the same settings."""
    whole, shards = tmp_path / "whole", tmp_path / "shards"
    with lettered_server(fail_every=0) as server:
        assert run(release_dir, server, whole).exit_code == 0
        for i in range(2):
            assert run(release_dir, server, shards, "--shard", f"{i}/2").exit_code == 0
    return whole, shards


@pytest.mark.parametrize(
    "first, second",
    [("whole", ["--shard", "0/2", "--model", "other"]), ("whole", ["--shard", "1/2"]),
     ("shards", []), ("shards", ["--model", "other"]), ("shards", ["--shard", "0/3"])],
    ids=["shard-of-another-model-by-a-run", "shard-by-a-whole-run", "whole-by-shards", "other-model-by-shards",
         "another-split-by-shards"],
)  # fmt: skip
def test_a_folder_holding_one_run_takes_no_part_of_another(release_dir, tmp_path, first, second):
    """Every run config in the folder (the whole run's and each shard's) must be the run's own: two
    runs in one folder would be merged or reported as one."""
    folders = dict(zip(("whole", "shards"), _scene(tmp_path, release_dir)))
    out = folders[first]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    extra = list(second)
    if "--model" in extra:
        i = extra.index("--model")
        base = [a for a in BASE]
        base[base.index("--model") + 1] = extra[i + 1]
        del extra[i : i + 2]
        with lettered_server(fail_every=0) as server:
            res = CliRunner().invoke(eval_cli, ["run", "--data", str(release_dir), "--base-url", server.base_url,
                                                "--out", str(out), *base, *extra])  # fmt: skip
    else:
        with lettered_server(fail_every=0) as server:
            res = run(release_dir, server, out, *extra)
    assert res.exit_code == 2 and "holds a run" in res.output, res.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize("field", ["label-first", "label-last"])
def test_merge_refuses_shards_whose_gold_labels_are_not_the_release_s(release_dir, tmp_path, field):
    """As a resumed run does: shards edited to make every answer correct are not merged and scored."""
    _, shards = _scene(tmp_path, release_dir)
    path = shards / ("predictions.shard-0-of-2.jsonl" if field == "label-first" else "predictions.shard-1-of-2.jsonl")
    records = [json.loads(x) for x in lines(path)]
    edited = records[0 if field == "label-first" else -1]
    edited["label"] = (edited["label"] + 1) % 4
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    merged = tmp_path / "merged"
    res = CliRunner().invoke(eval_cli, ["merge", str(shards), "--out", str(merged)])
    assert res.exit_code == 2 and "the release gives" in res.output, res.output
    assert not merged.exists()


@pytest.mark.parametrize("fault", ["sizes-disagree", "shard-field", "gold-label"])
def test_a_refused_merge_leaves_out_as_it_was(release_dir, tmp_path, fault):
    """Everything is checked before the first file is written: a correct merge into the same folder
    then works."""
    _, shards = _scene(tmp_path, release_dir)
    bad = tmp_path / "bad"
    import shutil

    shutil.copytree(shards, bad)
    cfg = bad / "config.shard-1-of-2.json"
    config = json.loads(cfg.read_text("utf-8"))
    if fault == "sizes-disagree":
        config["n_expected_run"] += 2
        cfg.write_text(json.dumps(config), encoding="utf-8")
    elif fault == "shard-field":
        config["shard"] = "0/2"
        cfg.write_text(json.dumps(config), encoding="utf-8")
    else:
        path = bad / "predictions.shard-1-of-2.jsonl"
        records = [json.loads(x) for x in lines(path)]
        records[0]["label"] = (records[0]["label"] + 1) % 4
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "merged"
    out.mkdir()
    res = CliRunner().invoke(eval_cli, ["merge", str(bad), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert list(out.iterdir()) == []
    again = CliRunner().invoke(eval_cli, ["merge", str(shards), "--out", str(out)])
    assert again.exit_code == 0, again.output
