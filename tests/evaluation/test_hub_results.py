"""Turning a finished run into the Hub's ``.eval_results`` entries, and opening the PR on a model repo.

A real complete run (openai backend against the suite's OpenAI-compatible server) of the two
text-only tasks at k=1 over the two-language release built from SIB-200; the Hub is the suite's
stand-in on 127.0.0.1, holding the release's eval.yaml in a dataset repo and a model repo.
The entries' required fields are those of the Hub's results format (huggingface/hub-docs,
eval_results.yaml and docs/hub/eval-results.md), encoded as a JSON Schema below.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from support.fakes.hub import HubStandIn
from support.fakes.openai_compat import lettered_server
from support.planted import planted_records

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.hub import results as hub_results
from mvlsib.evaluation.run.scoring import compute_metrics
from mvlsib.evaluation.run.store import load_run
from mvlsib.release import eval_yaml
from mvlsib.release.hub import retarget_card

TOKEN = "hf_test_5e5e5e_never_print"
DATASET = "org/mvl-sib"
MODEL_REPO = "org/tiny-vlm"
# huggingface/hub-docs eval_results.yaml: required dataset.id, dataset.task_id and value;
# source.url required when source is given; date a string.
ENTRY_SCHEMA = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "required": ["dataset", "value"],
        "properties": {
            "dataset": {
                "type": "object",
                "required": ["id", "task_id"],
                "properties": {"id": {"type": "string"}, "task_id": {"type": "string"}, "revision": {"type": "string"}},
            },
            "value": {"type": "number"},
            "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}"},
            "source": {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}},
            "notes": {"type": "string"},
        },
    },
}


def _run(release_dir: Path, out: Path, *extra: str) -> Path:
    args = ["run", "--backend", "openai", "--model", "fake", "--data", str(release_dir), "--tasks", "t2s,s2t"]
    args += ["--k", "1", "--out", str(out), "--no-progress", "--concurrency", "16", *extra]
    with lettered_server(fail_every=0) as server:
        result = CliRunner(env={"OPENAI_API_KEY": "unused"}).invoke(eval_cli, [*args, "--base-url", server.base_url])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def published_release(release_dir, tmp_path_factory) -> Path:
    """The release as published to DATASET (its card, eval.yaml and manifest.json name the repo), as a
    download of it holds it."""
    release = tmp_path_factory.mktemp("published") / "rel"
    shutil.copytree(release_dir, release)
    assert retarget_card(release, json.loads((release / "manifest.json").read_text("utf-8")), DATASET)
    return release


@pytest.fixture(scope="module")
def full_run(published_release, tmp_path_factory) -> Path:
    return _run(published_release, tmp_path_factory.mktemp("hubres") / "run")


@pytest.fixture(scope="module")
def eval_yaml_text(release_dir) -> str:
    """The release's eval.yaml, as publish wrote it (what the dataset repo on the Hub holds)."""
    return (release_dir / eval_yaml.EVAL_YAML).read_text("utf-8")


@pytest.fixture()
def hub(tmp_path, eval_yaml_text):
    folder = tmp_path / "dataset-repo"
    folder.mkdir()
    (folder / "eval.yaml").write_text(eval_yaml_text, encoding="utf-8")
    with HubStandIn(TOKEN) as hub:
        hub.dataset_commit = hub.seed(DATASET, folder)
        hub.seed_model(MODEL_REPO, {"README.md": b"# tiny\n"})
        yield hub


def _hub_data_run(full_run: Path, tmp_path: Path) -> Path:
    """The run as if made from the Hub release (its data is the repo id): eval.yaml comes from the Hub."""
    run = tmp_path / "hub-run"
    shutil.copytree(full_run, run)
    config = json.loads((run / "config.json").read_text("utf-8"))
    config["fingerprint"]["data"] = DATASET
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return run


def test_entries_are_the_runs_macro_accuracy_under_the_eval_yaml_task_ids(full_run, hub, tmp_path, eval_yaml_text):
    run = _hub_data_run(full_run, tmp_path)
    ids = hub_results.release_task_ids(DATASET, DATASET, hub.dataset_commit, endpoint=hub.endpoint)
    assert ids == [t["id"] for t in yaml.safe_load(eval_yaml_text)["tasks"]]
    files = hub_results.entries(
        run, dataset=DATASET, revision=hub.dataset_commit, task_ids=ids, source_url="https://example.org/config.json"
    )
    # The run covers t2s and s2t at k=1: exactly their two leaderboards.
    assert sorted(files) == ["mvl-sib_s2t_k1.yaml", "mvl-sib_t2s_k1.yaml"]
    metrics = json.loads((full_run / "metrics.json").read_text("utf-8"))
    macro = {f"{r['task']}_k{r['k']}": r["accuracy"] for r in metrics["macro"]}
    written = hub_results.write(tmp_path / "out", run, files, DATASET)
    for path in written:
        if path.suffix != ".yaml":
            continue
        doc = yaml.safe_load(path.read_text("utf-8"))
        jsonschema.validate(doc, ENTRY_SCHEMA)
        (entry,) = doc
        assert entry["dataset"] == {
            "id": DATASET,
            "task_id": path.stem.split("_", 1)[1],
            "revision": hub.dataset_commit,
        }
        assert entry["value"] == macro[entry["dataset"]["task_id"]]
        assert entry["source"]["url"] == "https://example.org/config.json"
    config_copy = tmp_path / "out" / ".eval_results" / hub_results.config_name(DATASET)
    assert config_copy.read_bytes() == (run / "config.json").read_bytes()
    # A run recorded before commands were kept without secrets: its copy (uploaded with --create-pr) has none.
    config = json.loads((run / "config.json").read_text("utf-8"))
    config["command"] += ["--base-url", "http://user:hunter2hunter2@127.0.0.1:8000/v1?api_key=QSECRET77"]
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    hub_results.write(tmp_path / "out2", run, files, DATASET)
    copied = (tmp_path / "out2" / ".eval_results" / hub_results.config_name(DATASET)).read_text("utf-8")
    assert "hunter2" not in copied and "QSECRET77" not in copied and "127.0.0.1:8000/v1?api_key=***" in copied


def test_limit_and_incomplete_runs_are_refused_unless_forced(published_release, full_run, tmp_path, eval_yaml_text):
    ids = hub_results.parse_eval_yaml(eval_yaml_text, "eval.yaml")
    release_dir = published_release
    limited = _run(release_dir, tmp_path / "limited", "--limit", "5")
    with pytest.raises(MvlsibError, match="--limit 5"):
        hub_results.entries(limited, dataset=DATASET, revision=None, task_ids=ids, source_url="u")
    forced = hub_results.entries(limited, dataset=DATASET, revision=None, task_ids=ids, source_url="u", force=True)
    assert all("NOT a full leaderboard run" in e[0]["notes"] for e in forced.values())

    short = tmp_path / "short"
    shutil.copytree(full_run, short)
    lines = (short / "predictions.jsonl").read_text("utf-8").splitlines(keepends=True)
    (short / "predictions.jsonl").write_text("".join(lines[:-10]), encoding="utf-8")
    with pytest.raises(MvlsibError, match="incomplete"):
        hub_results.entries(short, dataset=DATASET, revision=None, task_ids=ids, source_url="u")

    one_language = _run(release_dir, tmp_path / "eng", "--languages", "eng_Latn")
    with pytest.raises(MvlsibError, match="leaves out 1 of the release's languages"):
        hub_results.entries(one_language, dataset=DATASET, revision=None, task_ids=ids, source_url="u")

    with pytest.raises(MvlsibError, match="covers none of the eval.yaml tasks"):
        hub_results.entries(full_run, dataset=DATASET, revision=None, task_ids=["i2s_k3"], source_url="u")


def test_a_pull_request_is_opened_then_updated_and_a_refusal_is_one_line(full_run, hub, tmp_path):
    run = _hub_data_run(full_run, tmp_path)
    ids = hub_results.release_task_ids(DATASET, DATASET, None, endpoint=hub.endpoint)
    files = hub_results.entries(run, dataset=DATASET, revision=None, task_ids=ids, source_url="https://x/c.json")
    written = hub_results.write(tmp_path / "out", run, files, DATASET)
    url = hub_results.open_pr(MODEL_REPO, written, DATASET, token=TOKEN, endpoint=hub.endpoint)
    assert url.endswith(f"/{MODEL_REPO}/discussions/1")
    state = hub.state
    assert [d["num"] for d in state.discussions[MODEL_REPO]] == [1]
    on_pr = state.head_files(MODEL_REPO, "refs/pr/1")
    assert {p for p in on_pr if p.startswith(".eval_results/")} == {f".eval_results/{p.name}" for p in written}
    assert ".eval_results/mvl-sib_t2s_k1.yaml" not in state.head_files(MODEL_REPO, "main")  # a PR, not a push

    # A re-run updates the open PR: no second PR, the same files with the new values.
    entry = files["mvl-sib_t2s_k1.yaml"][0]
    entry["value"] = 0.5
    written = hub_results.write(tmp_path / "out", run, files, DATASET)
    again = hub_results.open_pr(MODEL_REPO, written, DATASET, token=TOKEN, endpoint=hub.endpoint)
    assert again == url and len(state.discussions[MODEL_REPO]) == 1
    updated = yaml.safe_load(state.head_files(MODEL_REPO, "refs/pr/1")[".eval_results/mvl-sib_t2s_k1.yaml"])
    assert updated[0]["value"] == 0.5
    assert len(state.history(MODEL_REPO, "refs/pr/1")) == 3  # initial, the PR's commit, the update

    state.refused.add(MODEL_REPO)
    entry["value"] = 0.25
    written = hub_results.write(tmp_path / "out", run, files, DATASET)
    with pytest.raises(MvlsibError) as err:
        hub_results.open_pr(MODEL_REPO, written, DATASET, token=TOKEN, endpoint=hub.endpoint)
    message = str(err.value)
    assert "\n" not in message and "HTTP 403" in message and "not allowed" in message, message
    assert TOKEN not in message


@pytest.mark.usefixtures("full_run")
def test_a_local_release_s_own_eval_yaml_names_the_tasks(release_dir):
    """A run of a release folder reads that folder's eval.yaml: no Hub needed to write the entries."""
    ids = hub_results.release_task_ids(str(release_dir), DATASET, None, endpoint="http://127.0.0.1:9")
    assert ids == [t["id"] for t in yaml.safe_load((release_dir / "eval.yaml").read_text("utf-8"))["tasks"]]


def test_the_command_writes_opens_the_pr_and_never_prints_the_token(full_run, hub, tmp_path):
    run = _hub_data_run(full_run, tmp_path)
    env = {"HF_TOKEN": TOKEN, "HF_HUB_VERBOSITY": "debug", "HF_HUB_DISABLE_XET": "1"}
    args = ["hub-results", str(run), "--dataset", DATASET, "--revision", hub.dataset_commit]
    args += ["--out", str(tmp_path / "out")]
    args += ["--model-repo", MODEL_REPO, "--create-pr", "--hub-endpoint", hub.endpoint]
    runner = CliRunner(env=env)
    first = runner.invoke(eval_cli, args)
    assert first.exit_code == 0, first.output
    assert f"pull request: {hub.endpoint}/{MODEL_REPO}/discussions/1" in first.output
    again = runner.invoke(eval_cli, args)  # a re-run: the same PR, no second one
    assert again.exit_code == 0, again.output
    assert len(hub.state.discussions[MODEL_REPO]) == 1
    entry = yaml.safe_load(hub.state.head_files(MODEL_REPO, "refs/pr/1")[".eval_results/mvl-sib_s2t_k1.yaml"])[0]
    config_name = hub_results.config_name(DATASET)
    assert entry["source"]["url"] == f"{hub.endpoint}/{MODEL_REPO}/blob/main/.eval_results/{config_name}"
    assert f".eval_results/{config_name}" in hub.state.head_files(MODEL_REPO, "refs/pr/1")

    hub.state.refused.add(MODEL_REPO)
    (tmp_path / "out" / ".eval_results" / "mvl-sib_s2t_k1.yaml").unlink()  # something new to commit
    os.utime(run / "metrics.json", (1_600_000_000, 1_600_000_000))  # another finishing date: new entries
    refused = runner.invoke(eval_cli, args)
    assert refused.exit_code == 2
    (line,) = [ln for ln in refused.output.splitlines() if ln.strip()][-1:]
    assert line.startswith("Error: ") and "org/tiny-vlm refused the pull request (HTTP 403)" in line
    for result in (first, again, refused):
        assert TOKEN not in result.output

    # Without a place for the run config the entries would have no source: refused before any work.
    bare = CliRunner().invoke(eval_cli, ["hub-results", str(run), "--dataset", DATASET, "--out", str(tmp_path / "o")])
    assert bare.exit_code == 2 and "--source-url" in bare.output


def test_a_dataset_without_or_with_a_huge_eval_yaml_is_refused(hub, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "README.md").write_text("# not a benchmark\n", encoding="utf-8")
    hub.seed("org/plain", plain)
    with pytest.raises(MvlsibError, match="has no eval.yaml, so it is not a Benchmark"):
        hub_results.release_task_ids("org/plain", "org/plain", None, endpoint=hub.endpoint)
    huge = tmp_path / "huge"
    huge.mkdir()
    (huge / "eval.yaml").write_text("tasks:\n" + "  - id: x\n" * 200_000, encoding="utf-8")
    hub.seed("org/huge", huge)
    with pytest.raises(MvlsibError, match="larger than"):
        hub_results.release_task_ids("org/huge", "org/huge", None, endpoint=hub.endpoint)
    with pytest.raises(MvlsibError, match="could not read eval.yaml of org/missing"):
        hub_results.release_task_ids("org/missing", "org/missing", None, endpoint=hub.endpoint)


def test_a_password_in_the_hub_endpoint_is_written_and_printed_nowhere(full_run, hub, tmp_path):
    run = _hub_data_run(full_run, tmp_path)
    secret = "PASSWORD-in-the-url"
    endpoint = hub.endpoint.replace("://", f"://someone:{secret}@")
    args = ["hub-results", str(run), "--dataset", DATASET, "--revision", hub.dataset_commit]
    args += ["--out", str(tmp_path / "out"), "--model-repo", MODEL_REPO]
    result = CliRunner(env={"HF_ENDPOINT": endpoint, "HF_HUB_DISABLE_XET": "1"}).invoke(eval_cli, args)
    assert result.exit_code == 0, result.output
    written = [p.read_text("utf-8") for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert written and not any(secret in text for text in written) and secret not in result.output
    entry = yaml.safe_load((tmp_path / "out" / ".eval_results" / "mvl-sib_s2t_k1.yaml").read_text("utf-8"))[0]
    assert entry["source"]["url"].startswith(hub.endpoint + "/")


@pytest.mark.parametrize("field", ["accuracy", "n_languages", "n"])
@pytest.mark.parametrize("command", ["hub-results", "report"])
def test_metrics_that_are_not_the_predictions_are_refused(full_run, tmp_path, command, field):
    """metrics.json is derived: an edited figure is neither published nor reported as the run's."""
    run = tmp_path / "run"
    shutil.copytree(full_run, run)
    metrics = json.loads((run / "metrics.json").read_text("utf-8"))
    metrics["macro"][0][field] = {"accuracy": 0.97, "n_languages": 199, "n": 599388}[field]
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    out = tmp_path / "out"
    args = {"hub-results": ["hub-results", str(run), "--dataset", DATASET, "--source-url", "https://example.org/c.json"],
            "report": ["report", str(run)]}[command]  # fmt: skip
    result = CliRunner().invoke(eval_cli, [*args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "metrics.json" in result.output and "re-run the same command" in result.output
    assert not out.exists()


def _leaves(value, path=()):
    """Every field of a metrics dict, the first row of each table standing for its rows."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        yield from _leaves(value[0], (*path, 0))
    else:
        yield path


def _edited(value):
    if isinstance(value, bool) or value is None:
        return 0.5
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value - 0.01 if value > 0.5 else value + 0.01
    if isinstance(value, str):
        return value + "x"
    return value[:-1]  # a list (the languages): one left out


# Every field metrics.json holds, from the metrics of planted predictions of the same tasks; "ci"
# describes the bootstrap method (the toolkit's constants), not a figure of the predictions.
FIELDS = sorted(
    (
        p
        for p in _leaves(compute_metrics(planted_records(0.6, languages=("eng_Latn", "swh_Latn"), n=4)))
        if p[0] != "ci"
    ),
    key=str,
)


@pytest.mark.parametrize("path", FIELDS, ids=lambda p: ".".join(map(str, p)))
def test_every_figure_of_metrics_json_is_checked_against_the_predictions(full_run, tmp_path, path):
    """Counts, languages, per-language and per-group rows, not the macro accuracy only: each edited alone."""
    run = tmp_path / "run"
    shutil.copytree(full_run, run)
    metrics = json.loads((run / "metrics.json").read_text("utf-8"))
    holder = metrics
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = _edited(holder[path[-1]])
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    with pytest.raises(MvlsibError, match=r"metrics\.json") as err:
        load_run(run)
    # refused by the comparison, naming the field or row, or by the reader (a task that is no task)
    assert str(path[-1]) in str(err.value) or "row" in str(err.value) or "damaged" in str(err.value)


@pytest.mark.parametrize("change", ["row left out", "row added"])
def test_a_row_left_out_or_added_is_refused(full_run, tmp_path, change):
    run = tmp_path / "run"
    shutil.copytree(full_run, run)
    metrics = json.loads((run / "metrics.json").read_text("utf-8"))
    rows = metrics["per_language"]
    if change == "row left out":
        rows.pop()
    else:
        rows.append({**rows[0], "language": "zul_Latn"})
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    with pytest.raises(MvlsibError, match="row per_language"):
        load_run(run)
    shutil.copytree(full_run, tmp_path / "untouched")
    load_run(tmp_path / "untouched")  # as the run wrote it: accepted


def _hub_results(run: Path, out: Path, *extra: str):
    args = ["hub-results", str(run), "--out", str(out), "--source-url", "https://example.org/c.json", *extra]
    return CliRunner().invoke(eval_cli, args)


@pytest.mark.parametrize(
    ("made_on", "named"),
    [
        ("folder of DATASET", ["--release", "someone-else/unrelated-benchmark"]),
        ("folder never published", ["--release", DATASET]),
        ("folder gone", ["--release", DATASET]),
        ("folder rebuilt since", ["--release", DATASET]),
        ("hub DATASET", ["--release", "someone-else/unrelated-benchmark"]),
        ("hub DATASET at a revision", ["--release", DATASET, "--data-revision", "0123456789abcdef" * 2 + "01234567"]),
    ],
)
def test_a_run_of_another_release_is_refused_unless_said(full_run, release_dir, tmp_path, made_on, named):
    """The entry's dataset is the run's release: a local folder's manifest names the repo it was
    published to; a Hub run records the repo id and revision."""
    run = tmp_path / "run"
    shutil.copytree(full_run, run)
    config = json.loads((run / "config.json").read_text("utf-8"))
    fp = config["fingerprint"]
    if made_on == "folder never published":  # the build's own folder: its manifest names ORG/mvl-sib
        fp["data"] = str(release_dir)
        fp["release_manifest_sha256"] = hashlib.sha256((release_dir / "manifest.json").read_bytes()).hexdigest()
    elif made_on == "folder gone":
        fp["data"] = str(tmp_path / "gone")
    elif made_on == "folder rebuilt since":
        fp["release_manifest_sha256"] = "0" * 64
    elif made_on.startswith("hub"):
        fp["data"], fp["data_revision"] = DATASET, ("fedcba98" * 5 if "revision" in made_on else None)
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    out = tmp_path / "out"
    refused = _hub_results(run, out, *named, "--force")
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1, refused.output
    assert "not a result of --release" in refused.output and "--other-release" in refused.output
    assert not out.exists()
    dataset = named[1]
    revision = named[3] if len(named) > 3 else None
    written = hub_results.entries(
        run, dataset=dataset, revision=revision, task_ids=["t2s_k1"], source_url="u", force=True, other_release=True
    )
    assert "NOT a run of this dataset" in written[f"{dataset.split('/')[-1]}_t2s_k1.yaml"][0]["notes"]


def test_a_run_of_the_named_release_is_written(full_run, tmp_path):
    result = _hub_results(full_run, tmp_path / "out", "--release", DATASET, "--force")
    assert result.exit_code == 0, result.output
    notes = [
        yaml.safe_load(p.read_text("utf-8"))[0]["notes"] for p in (tmp_path / "out/.eval_results").glob("*_k1.yaml")
    ]
    assert notes and not any("NOT a run of this dataset" in n for n in notes)
