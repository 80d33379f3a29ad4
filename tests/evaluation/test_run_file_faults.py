"""Planted faults in run folders: every field of every record type (a predictions line, config.json,
metrics.json, a shard's predictions and config) with wrong types, out-of-range values, missing,
nested 100,000 deep, numbers of 60 digits, NaN and Infinity; and whole records that are not objects,
torn, or not UTF-8. Each variant is planted into a copy of a run folder made by a real run (the
openai backend against the local fake server on 127.0.0.1, on a release built by the real
pipeline) and given to every command that reads that file: report, compare, items, correlate,
hub-results, merge and a resumed run. Each must exit 2 with one message naming the file, the line (for a
predictions file) and the field (when the fault is a field's value), and no traceback; an extra
field and a missing optional field are accepted.

The faults are generated from the table of field rules below (written from the JSON Schemas in
mvlsib/schema/, not from the reader's code), so a new field gets its faults by one row here.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import EVAL_LANGUAGES
from support.fakes.openai_compat import lettered_server

from mvlsib.cli import eval_cli

LANGUAGES = ",".join(EVAL_LANGUAGES)
BASE = ["--backend", "openai", "--model", "served-vlm", "--tasks", "s2t,i2s", "--k", "1", "--languages", LANGUAGES]
BASE += ["--limit", "3", "--concurrency", "1", "--retry-backoff", "0.01", "--no-progress"]
LINE = 3  # the predictions line a field fault is planted on

# Values that parse but no rule accepts, common to every field (each field adds its own out-of-range ones).
WRONG_TYPES = {"int": 7, "float": 1.5, "string": "x", "list": [1], "object": {"a": 1}, "null": None, "bool": True}


def _except(*names: str) -> dict:
    return {k: v for k, v in WRONG_TYPES.items() if k not in names}


# field -> (is it required, {variant name: a value the schema refuses})
PREDICTION_RULES: dict[str, tuple[bool, dict]] = {
    "task": (True, {**_except(), "unknown": "x2y", "upper": "S2T", "empty": ""}),
    "k": (True, {**_except("int"), "zero": 0, "six": 6, "negative": -1, "string-int": "1", "float-int": 1.0}),
    "language": (True, {**_except(), "lower-script": "eng_latn", "word": "english", "empty": ""}),
    "instance_id": (True, {**_except(), "r3": "1-3", "no-r": "12", "list-of-id": ["1-0"], "letters": "a-0"}),
    "prompt_sha256": (True, {**_except(), "short": "abc", "upper-hex": "A" * 64, "non-hex": "g" * 64}),
    "response": (True, _except("string")),
    "letter": (True, {**_except("null", "string"), "E": "E", "lower": "a", "empty": ""}),
    "label": (True, {**_except("int"), "B": "B", "99": 99, "minus": -1, "four": 4, "float-int": 1.0}),
    "correct": (True, {**_except("bool"), "zero": 0, "true-string": "true"}),
    "image_ids": (False, {**_except("list"), "ints": [1], "nulls": [None], "too-many": ["x"] * 65}),
}
CONFIG_RULES: dict[str, tuple[bool, dict]] = {
    "fingerprint": (True, _except("object")),
    "n_expected": (False, {**_except("int", "null"), "minus": -1}),
    "n_expected_run": (False, {**_except("int", "null"), "minus": -1}),
    "complete": (False, {**_except("bool"), "one": 1}),
    "parse_mode": (False, {**_except(), "unknown": "loose"}),
    "groups": (False, {**_except("object", "null"), "flat": {"g": "eng_Latn"}, "nested-int": {"g": {"eng_Latn": 1}}}),
    "backend": (False, _except("object", "null")),
    "fingerprint.languages": (False, {**_except("list"), "bad-code": ["english"], "ints": [1]}),
    "fingerprint.tasks": (False, {**_except("list"), "unknown": [["x2y", 1]], "bad-k": [["t2s", 3]], "flat": ["s2t"]}),
    "fingerprint.limit": (False, {**_except("int", "null"), "zero": 0}),
    "fingerprint.limit_mode": (False, {**_except(), "unknown": "random"}),
    "fingerprint.model": (False, _except("string", "null")),
    "fingerprint.data": (False, _except("string", "null")),
}
SHARD_CONFIG_RULES: dict[str, tuple[bool, dict]] = {
    **CONFIG_RULES,
    "shard": (False, {**_except("string", "null"), "word": "first", "swapped": "1/2"}),
    "missing_shards": (False, {**_except("list"), "bad": ["one"]}),
}
METRICS_RULES: dict[str, tuple[bool, dict]] = {
    "n_predictions": (False, {**_except("int"), "minus": -1}),
    "macro": (
        False,
        {
            **_except("list"),
            "ints": [1],
            "row-task-int": [{"task": 1, "k": 1}],
            "row-no-k": [{"task": "s2t"}],
            "row-k-string": [{"task": "s2t", "k": "1"}],
            "row-accuracy-string": [{"task": "s2t", "k": 1, "accuracy": "high"}],
            "row-accuracy-2": [{"task": "s2t", "k": 1, "accuracy": 2.0}],
            "row-n-minus": [{"task": "s2t", "k": 1, "n": -1}],
        },
    ),
    "per_language": (False, {**_except("list"), "strings": ["x"]}),
}

# Faults no field rule is needed for: the parser's bounds. Written as raw JSON text for the value.
DEEP = "[" * 100_000 + "]" * 100_000
PARSE_FAULTS = {
    "deep": DEEP,
    "huge-int": "1" + "0" * 60,
    "huge-float": "1." + "5" * 60,
    "nan": "NaN",
    "inf": "Infinity",
}
# Whole records that are not objects, or not JSON.
RECORD_FAULTS = {
    "list": b"[1, 2]",
    "number": b"3",
    "string": b'"s2t"',
    "null": b"null",
    "torn": b'{"task": "s2t", ',
    "not-utf8": b'{"task": "\xff"}',
    "deep": DEEP.encode(),
    "nan": b"NaN",
}


def _set(record: dict, dotted: str, value) -> dict:
    *outer, last = dotted.split(".")
    node = record
    for name in outer:
        node = node[name]
    if value is _MISSING:
        node.pop(last, None)
    else:
        node[last] = value
    return record


_MISSING = object()


def _with_raw(record: dict, dotted: str, raw: str) -> bytes:
    """``record`` as JSON with the value of ``dotted`` replaced by the raw JSON text ``raw``."""
    marker = "@@RAW@@"
    return json.dumps(_set(record, dotted, marker)).replace(f'"{marker}"', raw).encode()


def field_variants(rules: dict[str, tuple[bool, dict]]):
    """(variant id, field, how to change a record: value or raw text, whether the field must be named)."""
    for field, (required, bad) in rules.items():
        for name, value in bad.items():
            yield f"{field}={name}", field, ("value", value), True
        if required:
            yield f"{field}=missing", field, ("value", _MISSING), True
        for name, raw in PARSE_FAULTS.items():
            yield f"{field}={name}", field, ("raw", raw), False


def plant(record: dict, field: str, change) -> bytes:
    kind, payload = change
    record = json.loads(json.dumps(record))
    if kind == "raw":
        return _with_raw(record, field, payload)
    return json.dumps(_set(record, field, payload)).encode()


# ------------------------------------------------------------------------------------------ the runs


@pytest.fixture(scope="module")
def made(release_dir, tmp_path_factory):
    """A complete run, the same run as two shards, and a scores CSV; the fake server stays up (resume)."""
    base = tmp_path_factory.mktemp("run-faults")
    with lettered_server(fail_every=0) as server:

        def run(out: Path, *extra: str):
            args = ["run", "--data", str(release_dir), "--base-url", server.base_url, "--out", str(out), *BASE]
            result = CliRunner().invoke(eval_cli, [*args, *extra])
            assert result.exit_code == 0, result.output
            return args

        run_args = run(base / "whole")
        for i in range(2):
            run(base / "sharded", "--shard", f"{i}/2")
        scores = base / "scores.csv"
        scores.write_text("model,benchmark,score\nrun,other,50\nwhole,other,40\n", encoding="utf-8")
        yield {"base": base, "run_args": run_args, "scores": scores, "server": server}


def copy_run(made, name: str, tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(made["base"] / name, dst, ignore=shutil.ignore_patterns(".*.lock"))
    return dst


def invoke(args):
    return CliRunner().invoke(eval_cli, [str(a) for a in args])


def commands_on_run(made, run: Path, out: Path, *, metrics: bool = True):
    """(command name, arguments) of every command that reads a finished run folder."""
    yield "report", ["report", run, "--out", out / "report"]
    yield "compare", ["compare", run, made["base"] / "whole"]
    yield "items", ["items", run, "--out", out / "items"]
    yield "correlate", ["correlate", run, "--scores", made["scores"]]
    hub = ["--dataset", "org/mvl-sib", "--out", out / "hub", "--source-url", "https://example.org/config.json"]
    yield "hub-results", ["hub-results", run, *hub, "--force"]
    if not metrics:
        args = list(made["run_args"])
        args[args.index("--out") + 1] = str(run)
        yield "resume", args


def assert_refused(result, path: Path, *, line: int | None, field: str | None, what: str) -> None:
    out = result.output
    assert result.exit_code == 2, f"{what}: exit {result.exit_code}\n{out}"
    assert "Traceback" not in out, f"{what}: a traceback\n{out}"
    assert result.exception is None or isinstance(result.exception, SystemExit), f"{what}: {result.exception!r}"
    assert str(path) in out, f"{what}: the file is not named\n{out}"
    if line is not None:
        assert f"line {line}" in out, f"{what}: the line is not named\n{out}"
    if field is not None:
        assert f"field {field}" in out, f"{what}: the field is not named\n{out}"


# ------------------------------------------------------------------------------------------ the tests

PLANTED: dict[str, int] = {}  # record type -> variants planted (the docs quote these counts)


def _replace_line(path: Path, line: int, data: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = data
    path.write_bytes(b"\n".join(lines))


def test_every_field_of_a_predictions_record(made, tmp_path):
    record = json.loads((made["base"] / "whole" / "predictions.jsonl").read_text("utf-8").splitlines()[LINE - 1])
    assert set(PREDICTION_RULES) <= set(record)  # the rules cover every field a real run writes ...
    assert set(record) <= set(PREDICTION_RULES)  # ... and nothing a real run writes goes unplanted
    variants = [(v, f, plant(record, f, c), named) for v, f, c, named in field_variants(PREDICTION_RULES)]
    variants += [(f"record={name}", None, raw, False) for name, raw in RECORD_FAULTS.items()]
    # one image more than the prompt showed (the item analysis picks the gold image by the label)
    shown = record["image_ids"] + ["x"]
    variants.append(("image_ids=one-more", "image_ids", plant(record, "image_ids", ("value", shown)), True))
    runs = 0
    for n, (what, field, data, named) in enumerate(variants):
        run = copy_run(made, "whole", tmp_path / str(n))
        _replace_line(run / "predictions.jsonl", LINE, data)
        for command, args in commands_on_run(made, run, tmp_path / str(n), metrics=False):
            result = invoke(args)
            assert_refused(
                result, run / "predictions.jsonl", line=LINE, field=field if named else None, what=f"{command} {what}"
            )
            runs += 1
    PLANTED["predictions"] = len(variants)
    assert len(variants) > 120 and runs == 6 * len(variants)


@pytest.mark.parametrize(("name", "rules"), [("config.json", CONFIG_RULES), ("metrics.json", METRICS_RULES)])
def test_every_field_of_a_run_json_file(made, tmp_path, name, rules):
    original = json.loads((made["base"] / "whole" / name).read_text("utf-8"))
    for field in rules:
        assert field.split(".")[0] in original, f"{name} of a real run has no {field}"
    variants = [(v, f, plant(original, f, c), named) for v, f, c, named in field_variants(rules)]
    variants += [(f"file={kind}", None, raw, False) for kind, raw in RECORD_FAULTS.items()]
    for n, (what, field, data, named) in enumerate(variants):
        run = copy_run(made, "whole", tmp_path / str(n))
        (run / name).write_bytes(data)
        # a resumed run reads config.json, never metrics.json
        for command, args in commands_on_run(made, run, tmp_path / str(n), metrics=name == "metrics.json"):
            assert_refused(
                invoke(args), run / name, line=None, field=field if named else None, what=f"{command} {what}"
            )
    PLANTED[name] = len(variants)
    assert len(variants) > 30


def _merge(made, tmp_path: Path, n: int, target: str, data: bytes, line: int | None):
    """merge of the sharded run with ``data`` planted as ``line`` of ``target`` (the whole file: None)."""
    run = copy_run(made, "sharded", tmp_path / str(n))
    path = run / target
    if line is None:
        path.write_bytes(data)
    else:
        _replace_line(path, line, data)
    out = tmp_path / str(n) / "merged"
    result = invoke(["merge", run, "--out", out])
    return result, path, out


def test_every_field_of_a_shard_file_through_merge(made, tmp_path):
    shard_pred = "predictions.shard-0-of-2.jsonl"
    shard_cfg = "config.shard-0-of-2.json"
    record = json.loads((made["base"] / "sharded" / shard_pred).read_text("utf-8").splitlines()[LINE - 1])
    config = json.loads((made["base"] / "sharded" / shard_cfg).read_text("utf-8"))
    n = 0
    pred_variants = [(v, f, plant(record, f, c), named) for v, f, c, named in field_variants(PREDICTION_RULES)]
    pred_variants += [(f"record={name}", None, raw, False) for name, raw in RECORD_FAULTS.items()]
    for what, field, data, named in pred_variants:
        n += 1
        result, path, out = _merge(made, tmp_path, n, shard_pred, data, LINE)
        assert_refused(result, path, line=LINE, field=field if named else None, what=f"merge {what}")
        assert not (out / "predictions.jsonl").exists()
    cfg_variants = [(v, f, plant(config, f, c), named) for v, f, c, named in field_variants(SHARD_CONFIG_RULES)]
    cfg_variants += [(f"file={kind}", None, raw, False) for kind, raw in RECORD_FAULTS.items()]
    for what, field, data, named in cfg_variants:
        n += 1
        result, path, out = _merge(made, tmp_path, n, shard_cfg, data, None)
        assert_refused(result, path, line=None, field=field if named else None, what=f"merge {what}")
        assert not (out / "predictions.jsonl").exists()
    PLANTED["shard files"] = n
    assert n > 170


def _substitutions(record: dict, others: list[dict]):
    """Keys a damaged or mixed-up shard could hold in place of ``record``'s own: every field of the
    key changed to a value of another record of the run, and to values no record of the run has."""
    for field in ("language", "task", "instance_id"):
        for value in sorted({o[field] for o in others} - {record[field]}):
            yield f"{field}->{value}", {**record, field: value}
    yield "language->fra_Latn", {**record, "language": "fra_Latn"}
    yield "instance->999-0", {**record, "instance_id": "999-0"}
    yield "task->t2s", {**record, "task": "t2s", "k": 1}
    yield "k->3", {**record, "k": 3}


def test_merge_refuses_a_shard_holding_a_key_in_place_of_its_own(made, tmp_path):
    sharded = made["base"] / "sharded"
    name = "predictions.shard-0-of-2.jsonl"
    own = [json.loads(x) for x in (sharded / name).read_text("utf-8").splitlines()]
    others = own + [json.loads(x) for x in (sharded / "predictions.shard-1-of-2.jsonl").read_text("utf-8").splitlines()]
    clean = invoke(["merge", sharded, "--out", tmp_path / "clean"])
    assert clean.exit_code == 0 and json.loads((tmp_path / "clean" / "config.json").read_text())["complete"]
    assert (tmp_path / "clean" / "predictions.jsonl").read_text("utf-8").count("\n") == len(others)
    n = 0
    for line, record in enumerate(own, start=1):
        for what, changed in _substitutions(record, others):
            # With shard 1 gone, the overlap check cannot see it: the plan must. Without the release
            # (Hub data, a release moved away) the plan is unknown: the cells must agree.
            for partial, release in ((False, True), (True, True), (False, False)):
                n += 1
                run = copy_run(made, "sharded", tmp_path / str(n))
                _replace_line(run / name, line, json.dumps(changed).encode())
                if not release:
                    for cfg in run.glob("config.shard-*.json"):
                        config = json.loads(cfg.read_text("utf-8"))
                        config["fingerprint"]["data"] = str(tmp_path / "moved-away")
                        cfg.write_text(json.dumps(config), encoding="utf-8")
                if partial:
                    (run / "predictions.shard-1-of-2.jsonl").unlink()
                    (run / "config.shard-1-of-2.json").unlink()
                args = ["merge", run, "--out", tmp_path / str(n) / "merged", *(["--allow-partial"] if partial else [])]
                result = invoke(args)
                label = f"line {line} {what}{' --allow-partial' if partial else ''}{'' if release else ' no release'}"
                assert result.exit_code == 2, f"{label}: exit {result.exit_code}\n{result.output}"
                assert "Traceback" not in result.output and "predictions.shard-" in result.output, label
                assert not (tmp_path / str(n) / "merged" / "predictions.jsonl").exists(), label
    PLANTED["merge substitutions"] = n
    assert n >= 6 * 3 * 7


# Runs a release's evaluate.py with every `mvlsib` import failing: the readers must hold in the bundle too.
BLOCKED = r"""
import runpy, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "mvlsib" or name.startswith("mvlsib."):
            raise ImportError(f"{name} is blocked in this test")
        return None
sys.meta_path.insert(0, Block())
sys.argv = ["evaluate.py", *sys.argv[1:]]
runpy.run_path("evaluate.py", run_name="__main__")
"""


def test_the_bundled_evaluator_reads_through_the_same_readers(made, release_dir, tmp_path):
    import subprocess
    import sys

    record = json.loads((made["base"] / "whole" / "predictions.jsonl").read_text("utf-8").splitlines()[LINE - 1])
    picked = [
        ("label=B", "label", plant(record, "label", ("value", "B"))),
        ("response=int", "response", plant(record, "response", ("value", 7))),
        ("record=deep", None, RECORD_FAULTS["deep"]),
        ("language=huge-int", None, plant(record, "language", ("raw", PARSE_FAULTS["huge-int"]))),
    ]
    for n, (what, field, data) in enumerate(picked):
        run = copy_run(made, "whole", tmp_path / str(n))
        _replace_line(run / "predictions.jsonl", LINE, data)
        shards = copy_run(made, "sharded", tmp_path / f"s{n}")
        _replace_line(shards / "predictions.shard-0-of-2.jsonl", LINE, data)
        for command in (["report", run, "--out", tmp_path / str(n) / "r"], ["merge", shards, "--out", tmp_path / "m"]):
            proc = subprocess.run(
                [sys.executable, "-c", BLOCKED, *map(str, command)],
                cwd=release_dir,
                capture_output=True,
                text=True,
                timeout=120,
            )
            out = proc.stdout + proc.stderr
            assert proc.returncode == 2 and "Traceback" not in out, f"{command[0]} {what}\n{out}"
            assert f"line {LINE}" in out and (field is None or f"field {field}" in out), f"{command[0]} {what}\n{out}"
    assert not (tmp_path / "m" / "predictions.jsonl").exists()


def test_extra_fields_and_missing_optional_ones_are_accepted(made, tmp_path):
    """The readers refuse what is wrong, not what is new: an extra field in a record and in config.json,
    and a record without image_ids (runs before the field existed), go through every command."""
    run = copy_run(made, "whole", tmp_path / "extra")
    lines = (run / "predictions.jsonl").read_text("utf-8").splitlines()
    records = [json.loads(x) for x in lines]
    records[0]["note"] = {"by": "a later version"}
    del records[1]["image_ids"]
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    config = json.loads((run / "config.json").read_text("utf-8"))
    config["future_field"] = [1, 2]
    (run / "config.json").write_text(json.dumps(config), encoding="utf-8")
    for command, args in commands_on_run(made, run, tmp_path / "out", metrics=False):
        if command == "hub-results":  # needs the dataset's eval.yaml from the Hub: its own tests
            continue
        result = invoke(args)
        assert result.exit_code == 0, f"{command}: {result.output}"
    assert (tmp_path / "out" / "report" / "report.md").is_file()


@pytest.mark.parametrize("fault", ["deep", "nan", "huge-int"])
def test_a_release_manifest_out_of_bounds_is_named_before_any_model_call(made, release_dir, tmp_path, fault):
    data = tmp_path / "release"
    shutil.copytree(release_dir, data)
    manifest = json.loads((data / "manifest.json").read_text("utf-8"))
    (data / "manifest.json").write_bytes(_with_raw(manifest, "files", PARSE_FAULTS[fault]))
    args = list(made["run_args"])
    args[args.index("--data") + 1] = str(data)
    args[args.index("--out") + 1] = str(tmp_path / "run")
    before = len(made["server"].requests)
    result = invoke(args)
    assert_refused(result, data / "manifest.json", line=None, field=None, what=f"run manifest={fault}")
    assert len(made["server"].requests) == before and not (tmp_path / "run").exists()
