"""Runs made on different releases are analysed together only when the user says so, by every
analysis command alike (``analysis/runs.py``): the same key may hold another instance there."""

from __future__ import annotations

import ast
import json
import shutil

import pytest
from click.testing import CliRunner
from support import REPO
from support.cli_contract import problems
from support.planted import copy_run

from mvlsib.cli import eval_cli


@pytest.fixture(scope="module")
def two_releases(release_dir, tmp_path_factory):
    """A served run, and a copy that recorded another release manifest."""
    from support.fakes.openai_compat import lettered_server

    base = tmp_path_factory.mktemp("mix")
    with lettered_server() as server:
        res = CliRunner().invoke(
            eval_cli,
            ["run", "--data", str(release_dir), "--backend", "openai", "--base-url", server.base_url, "--model",
             "m", "--limit", "4", "--languages", "eng_Latn", "--tasks", "t2s", "--k", "1", "--out",
             str(base / "a"), "--no-progress"],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    shutil.copytree(base / "a", base / "b")
    config = json.loads((base / "b" / "config.json").read_text("utf-8"))
    config["fingerprint"]["release_manifest_sha256"] = "0" * 64
    (base / "b" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    scores = base / "scores.csv"
    scores.write_text("model,benchmark,score\na,x,0.1\nb,x,0.2\n", encoding="utf-8")
    return base, release_dir, scores


COMMANDS = {
    "report": lambda b, rel, scores, out: ["report", str(b / "a"), str(b / "b"), "--out", str(out)],
    "items": lambda b, rel, scores, out: ["items", str(b / "a"), str(b / "b"), "--out", str(out)],
    "compare": lambda b, rel, scores, out: ["compare", str(b / "a"), str(b / "b"), "--json", str(out)],
    "correlate": lambda b, rel, scores, out: ["correlate", str(b / "a"), str(b / "b"), "--scores", str(scores),
                                              "--out", str(out)],
}  # fmt: skip


def test_every_command_reading_several_runs_is_listed():
    """A new analysis command over several runs belongs in COMMANDS (its RUNS argument is the shared one)."""
    several = {name for name, cmd in eval_cli.commands.items() if any(p.name == "runs" for p in cmd.params)}
    assert several | {"compare"} == set(COMMANDS), several


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_runs_of_two_releases_are_refused_unless_allowed_and_then_marked(two_releases, command, tmp_path):
    base, rel, scores = two_releases
    out = tmp_path / "out"
    args = COMMANDS[command](base, rel, scores, out)
    res = CliRunner().invoke(eval_cli, args)
    assert not problems(res, "different releases"), res.output
    assert not out.exists()
    allowed = CliRunner().invoke(eval_cli, [*args, "--different-releases"])
    assert allowed.exit_code == 0, allowed.output
    if command == "report":
        assert "made on different releases" in (out / "report.md").read_text("utf-8")
    if command == "compare":
        assert "different releases" in allowed.output


@pytest.mark.parametrize("command", ["report", "items"])
def test_a_release_folder_not_the_runs_own_is_refused(two_releases, command, tmp_path):
    """--release must be the release the runs were made on: its texts would sit under other keys."""
    base, rel, _ = two_releases
    other = tmp_path / "other"
    shutil.copytree(rel, other)
    (other / "manifest.json").write_text((other / "manifest.json").read_text("utf-8") + " ", encoding="utf-8")
    res = CliRunner().invoke(
        eval_cli, [command, str(base / "a"), "--out", str(tmp_path / "o"), "--release", str(other)]
    )
    assert not problems(res, "not the release the runs were made on"), res.output
    ok = CliRunner().invoke(eval_cli, [command, str(base / "a"), "--out", str(tmp_path / "p"), "--release", str(rel)])
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("command", ["report", "items"])
def test_a_release_folder_whose_files_are_not_its_manifest_s_is_refused(two_releases, command, tmp_path):
    """The runs' own manifest, but a data file replaced: its texts would be shown under the runs' keys."""
    base, rel, _ = two_releases
    other = tmp_path / "other"
    shutil.copytree(rel, other)
    table = next((other / "data").glob("*/test.parquet"))
    table.write_bytes(table.read_bytes()[:-1] + b"\0")
    res = CliRunner().invoke(
        eval_cli, [command, str(base / "a"), "--out", str(tmp_path / "o"), "--release", str(other)]
    )
    assert res.exit_code == 2 and "does not match its manifest.json" in res.output, res.output
    assert "test.parquet: sha256 differs" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()


def test_analysis_reads_runs_only_through_load_runs():
    """``load_run`` in evaluation/analysis/ only inside runs.py: no command can skip the release check."""
    bad = []
    for path in sorted((REPO / "src/mvlsib/evaluation/analysis").glob("*.py")):
        if path.name == "runs.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Name) and node.id == "load_run":
                bad.append(f"{path.name}:{node.lineno}")
    assert not bad, bad


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_reading_runs_says_one_is_incomplete(two_releases, command, tmp_path):
    """A killed run (fewer predictions than its config expects) is said by every analysis command."""
    base, rel, scores = two_releases
    short = copy_run(base / "a", tmp_path / "b", model="another")
    lines = (short / "predictions.jsonl").read_text("utf-8").splitlines(keepends=True)
    (short / "predictions.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    (short / "metrics.json").unlink(missing_ok=True)  # a killed run has none: it is written when complete
    args = COMMANDS[command](base, rel, scores, tmp_path / "out")
    args = [str(short) if a == str(base / "b") else a for a in args]
    res = CliRunner().invoke(eval_cli, args)
    assert res.exit_code == 0, res.output
    assert f"warning: {short} is incomplete: 2 of 4 predictions" in res.output, res.output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_runs_of_a_release_without_a_manifest_are_told_apart_by_their_gold_answers(two_releases, command, tmp_path):
    """A release folder without manifest.json records no sha256: the gold answer under each key shows
    another release (another seed gives other labels), and every command refuses as it does by sha256."""
    base, rel, scores = two_releases
    mix = tmp_path / "mix"
    shutil.copytree(base / "a", mix / "a")
    shutil.copytree(base / "a", mix / "b")
    for run in ("a", "b"):
        config = json.loads((mix / run / "config.json").read_text("utf-8"))
        config["fingerprint"]["release_manifest_sha256"] = None
        (mix / run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    lines = [json.loads(x) for x in (mix / "b" / "predictions.jsonl").read_text("utf-8").splitlines()]
    lines[-1]["label"] = (lines[-1]["label"] + 1) % 4
    lines[-1]["correct"] = lines[-1]["letter"] == "ABCD"[lines[-1]["label"]]
    (mix / "b" / "predictions.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    (mix / "b" / "metrics.json").unlink()
    out = tmp_path / "out"
    res = CliRunner().invoke(eval_cli, COMMANDS[command](mix, rel, scores, out))
    assert not problems(res, "other instances under the same key"), res.output
    assert not out.exists()
