"""The readers' faults as the commands meet them: each answered in one line (exit 2, no traceback),
with nothing written.

``batch collect`` on a batch manifest with a wrong type at every path, each key missing, an extra
key in every object (generated from a real manifest; which ones are wrong decides the schema);
result lines with lone surrogates; ``hub-results`` (and a release's own ``evaluate.py
hub-results``) on hostile ``eval.yaml`` files; JSON command-line options that are bombs; exports of a
truncated parquet file; a release manifest that is ``/dev/zero``.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator
from support import subprocess_env
from support.cli_contract import refused
from support.fakes.openai_compat import lettered_server

from mvlsib import readers
from mvlsib.cli import build_cli, eval_cli
from mvlsib.evaluation.backends import backend_class


def invoke(cli, *args, env=None):
    return CliRunner(env=env).invoke(cli, [str(a) for a in args])


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------- batch collect


@pytest.fixture(scope="module")
def batch(release_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen-batch") / "batch"
    result = invoke(eval_cli, "batch", "prepare", "--data", release_dir, "--model", "m", "--tasks", "t2s", "--k", "1",
                    "--limit", "2", "--out", out, "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def _paths(doc, at=()):
    yield at, doc
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*at, key))
    elif isinstance(doc, list):
        for n, value in enumerate(doc):
            yield from _paths(value, (*at, n))


def _set(doc, at, value):
    if not at:
        return value
    out = copy.deepcopy(doc)
    node = out
    for part in at[:-1]:
        node = node[part]
    if value is _DELETE:
        del node[at[-1]]
    else:
        node[at[-1]] = value
    return out


_DELETE = object()
_OTHERS = {"null": None, "bool": True, "int": 7, "float": 1.5, "str": "x", "list": [], "dict": {}}


def _kind(value) -> str:
    return {bool: "bool", int: "int", float: "float", str: "str", list: "list", dict: "dict"}.get(type(value), "null")


def _manifest_mutations(manifest: dict):
    """(id, mutated manifest) of every mutation the batch manifest's schema refuses."""
    check = Draft202012Validator(readers.schema("batch_manifest"))
    for at, value in _paths(manifest):
        label = ".".join(map(str, at)) or "(top)"
        if at[:1] in (("fingerprint",), ("command",)) and len(at) > 1:
            continue  # free-form inside (the fingerprint is compared whole)
        for name, other in _OTHERS.items():
            if name != _kind(value):
                doc = _set(manifest, at, other)
                if not check.is_valid(doc):
                    yield f"{label}={name}", doc
        if at and isinstance(at[-1], str):
            doc = _set(manifest, at, _DELETE)
            if not check.is_valid(doc):
                yield f"{label}-missing", doc
        if isinstance(value, dict) and at[:1] != ("fingerprint",):
            doc = _set(manifest, at, {**value, "zz_extra": 1})
            if not check.is_valid(doc):
                yield f"{label}+extra", doc


# The manifest's shape, as prepare writes it (checked against the real one below): the ids are generated
# from it at collection time, the test applies each mutation to the real manifest.
MANIFEST_SHAPE = {
    "format": "mvlsib-batch/1",
    "endpoint": "/v1/chat/completions",
    "toolkit_version": "0.1.0",
    "release_manifest_sha256": "0" * 64,
    "n_requests": 2,
    "fingerprint": {"data": "rel"},
    "fingerprint_sha256": "0" * 64,
    "run": {
        "data": "rel",
        "data_revision": None,
        "model": "m",
        "tasks": ["t2s"],
        "ks": [1],
        "languages": "all",
        "limit": 2,
        "limit_mode": "stratified",
        "order": "prefix",
        "max_new_tokens": 8,
        "backend_options": {"chat_template_kwargs": None, "image_encoding": "source", "request_style": "chat"},
    },
    "limits": {"max_requests": 50000, "max_bytes": 200000000},
    "image_refs": "inline",
    "files": [{"name": "requests-00001.jsonl", "n_requests": 2, "bytes": 10, "sha256": "0" * 64}],
    "command": ["mvlsib-eval"],
}
MUTATIONS = dict(_manifest_mutations(MANIFEST_SHAPE))
# A value of the right type that the command line would refuse: at the run's choices and at every
# backend option that declares choices (generated from the backend's own declarations).
_CHOICE_PATHS = [("run", "order"), ("run", "limit_mode")] + [
    ("run", "backend_options", o.param) for o in backend_class("openai").OPTIONS if o.choices
]
MUTATIONS.update({".".join(at) + "=unknown": _set(MANIFEST_SHAPE, at, "zz-unknown") for at in _CHOICE_PATHS})


def test_the_shape_the_ids_come_from_is_the_real_one(batch):
    real = json.loads((batch / "manifest.json").read_text("utf-8"))

    def skeleton(doc):
        if isinstance(doc, dict):
            return {k: skeleton(v) for k, v in doc.items() if k != "fingerprint"}
        if isinstance(doc, list):
            return [skeleton(doc[0])] if doc else []
        return _kind(doc)

    assert skeleton(real) == skeleton(MANIFEST_SHAPE)
    assert Draft202012Validator(readers.schema("batch_manifest")).is_valid(real)


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_batch_collect_refuses_a_wrong_manifest_before_writing(batch, tmp_path, mutation):
    folder = tmp_path / "batch"
    shutil.copytree(batch, folder)
    real = json.loads((folder / "manifest.json").read_text("utf-8"))
    shape = MUTATIONS[mutation]
    # the same mutation on the real manifest: the real value where the shape's was kept
    doc = _merge(real, MANIFEST_SHAPE, shape)
    (folder / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")
    before = _tree(folder)
    results = tmp_path / "results.jsonl"
    results.write_text('{"custom_id": "x", "error": {"message": "m"}}\n', encoding="utf-8")
    out = tmp_path / "run"
    refused(invoke(eval_cli, "batch", "collect", folder, results, "--out", out), "manifest.json")
    assert not out.exists() and _tree(folder) == before


def _merge(real, shape, mutated):
    """``mutated`` (a mutation of ``shape``) with every value it kept from ``shape`` taken from ``real``."""
    if json.dumps(mutated, sort_keys=True) == json.dumps(shape, sort_keys=True):  # 1 == True in Python
        return copy.deepcopy(real)
    if isinstance(mutated, dict) and isinstance(shape, dict) and isinstance(real, dict):
        out = {}
        for key, value in mutated.items():
            out[key] = _merge(real[key], shape[key], value) if key in shape and key in real else value
        return out
    if isinstance(mutated, list) and isinstance(shape, list) and isinstance(real, list) and len(mutated) == len(shape):
        return [_merge(r, s, m) for r, s, m in zip(real, shape, mutated)]
    return mutated


def test_lone_surrogates_in_result_lines_reach_retry_json_storable(batch, tmp_path):
    folder = tmp_path / "batch"
    shutil.copytree(batch, folder)
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    ids = [json.loads(line)["custom_id"] for f in manifest["files"] for line in (folder / f["name"]).open("rb")]
    lines = [json.dumps({"custom_id": cid, "error": {"message": "bad \ud800 answer"}}) for cid in ids]
    lines.append(json.dumps({"custom_id": "foreign-\udc80-id", "error": "x"}))
    results = tmp_path / "results.jsonl"
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = invoke(eval_cli, "batch", "collect", folder, results, "--out", tmp_path / "run")
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output and result.exit_code == 1, result.output  # incomplete: exit 1
    retry = json.loads((folder / "retry" / "retry.json").read_bytes().decode("utf-8"))
    assert retry["n_requests"] == len(ids) and "foreign-\\udc80-id" in retry["foreign"]
    assert all("\\ud800" in why for why in retry["failed"].values())


_LEAKS = {
    "bearer": "Incorrect API key: Bearer sk-proj-LEAKED0123456789abcdef",
    "userinfo": "see https://user:hunter2pass@api.example.com/v1",
    "query": "see https://api.example.com/v1?token=TOK123SECRET&x=1",
}


@pytest.mark.parametrize("where", ["error", "http-body"])
@pytest.mark.parametrize("leak", sorted(_LEAKS))
def test_a_credential_in_a_failure_never_reaches_retry_json(batch, tmp_path, where, leak):
    """A server's error text is kept as why a request failed, with its credentials masked."""
    folder = tmp_path / "batch"
    shutil.copytree(batch, folder)
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    ids = [json.loads(line)["custom_id"] for f in manifest["files"] for line in (folder / f["name"]).open("rb")]
    text = _LEAKS[leak]
    if where == "error":
        lines = [{"custom_id": cid, "error": {"message": text}} for cid in ids]
    else:
        lines = [{"custom_id": cid, "response": {"status_code": 401, "request_id": "r", "body": {"error": {"message": text}}}}
                 for cid in ids]  # fmt: skip
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = invoke(eval_cli, "batch", "collect", folder, results, "--out", tmp_path / "run")
    assert result.exit_code == 1, result.output
    written = (folder / "retry" / "retry.json").read_text("utf-8") + result.output
    assert not any(s in written for s in ("LEAKED0123", "hunter2pass", "TOK123SECRET")), written
    assert "***" in written


# ---------------------------------------------------------------- eval.yaml


@pytest.fixture(scope="module")
def hub_run(release_dir, tmp_path_factory) -> tuple[Path, Path]:
    """(a copy of the release published as org/mvl-sib, a complete run of it): its eval.yaml is what each
    case replaces."""
    from mvlsib.release.hub import retarget_card

    base = tmp_path_factory.mktemp("gen-hub")
    release = base / "rel"
    shutil.copytree(release_dir, release)
    assert retarget_card(release, json.loads((release / "manifest.json").read_text("utf-8")), "org/mvl-sib")
    out = base / "run"
    with lettered_server(fail_every=0) as server:
        result = CliRunner(env={"OPENAI_API_KEY": "unused"}).invoke(
            eval_cli,
            ["run", "--backend", "openai", "--model", "fake", "--data", str(release), "--tasks", "t2s", "--k", "1",
             "--out", str(out), "--no-progress", "--base-url", server.base_url],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    return release, out


EVAL_YAML_FAULTS = {
    "nested-60000": b"tasks: " + b"[" * 60_000 + b"]" * 60_000 + b"\n",
    "invalid-utf8": b"tasks:\n- id: t2s_k1\n  name: \xff\xfe\n",
    "k-5000-digits": b"tasks:\n- id: t2s_k1\n  k: " + b"7" * 5_000 + b"\n",
    "six-megabytes": b"tasks:\n- id: t2s_k1\n" + b"# " + b"x" * (6 * 1024 * 1024) + b"\n",
    "nan": b"tasks:\n- id: t2s_k1\n  k: .nan\n",
    "alias-bomb": b"a: &a [1, 1]\nb: &b [*a, *a]\ntasks: []\n",
    "wrong-type": b"tasks: {id: t2s_k1}\n",
    "id-not-a-string": b"tasks:\n- id: [t2s_k1]\n",
    "not-yaml": b"tasks: [\n",
}


@pytest.mark.parametrize("fault", sorted(EVAL_YAML_FAULTS))
def test_hub_results_refuses_a_hostile_eval_yaml(hub_run, tmp_path, fault):
    release, run = hub_run
    (release / "eval.yaml").write_bytes(EVAL_YAML_FAULTS[fault])
    out = tmp_path / "out"
    result = invoke(eval_cli, "hub-results", run, "--dataset", "org/mvl-sib", "--out", out,
                    "--source-url", "https://example.org/run", "--hub-endpoint", "http://127.0.0.1:9")  # fmt: skip
    refused(result, "eval.yaml")
    assert not out.exists()


@pytest.mark.parametrize("fault", ["nested-60000", "invalid-utf8", "k-5000-digits", "six-megabytes"])
def test_a_release_s_evaluate_py_hub_results_refuses_it_too(hub_run, tmp_path, fault):
    """The bundled reader (``mvlsib_evaluate/readers.py`` and its schemas) in the release's own evaluator."""
    release, run = hub_run
    (release / "eval.yaml").write_bytes(EVAL_YAML_FAULTS[fault])
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(release / "evaluate.py"), "hub-results", str(run), "--dataset", "org/mvl-sib",
         "--out", str(out), "--source-url", "https://example.org/run", "--hub-endpoint", "http://127.0.0.1:9"],
        capture_output=True, text=True, timeout=300, env=subprocess_env(), cwd=tmp_path,
    )  # fmt: skip
    refused(done, "eval.yaml")
    assert not out.exists()


# ---------------------------------------------------------------- JSON command-line options

JSON_OPTION_FAULTS = {
    "deep-5000": "[" * 5_000 + "]" * 5_000,
    "deep-objects-5000": '{"a":' * 5_000 + "1" + "}" * 5_000,
    "nan": '{"a": NaN}',
    "infinity": '{"a": Infinity}',
    "overflow": '{"a": 1e999}',
    "long-number": '{"a": ' + "1" * 5_000 + "}",
    "not-an-object": "[1, 2]",
    "lone-surrogate": '{"a": "\\udc80"}',
}


@pytest.mark.parametrize("fault", sorted(JSON_OPTION_FAULTS))
@pytest.mark.parametrize(
    "command",
    [
        ("run", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--chat-template-kwargs"),
        ("run", "--backend", "hf", "--processor-kwargs"),
        ("run", "--backend", "hf", "--chat-template-kwargs"),
        ("batch", "prepare", "--chat-template-kwargs"),
    ],
    ids=["run-openai-chat-template-kwargs", "run-hf-processor-kwargs", "run-hf-chat-template-kwargs",
         "batch-prepare-chat-template-kwargs"],
)  # fmt: skip
def test_a_json_option_bomb_is_refused_before_anything_runs(release_dir, tmp_path, command, fault):
    out = tmp_path / "out"
    result = invoke(eval_cli, *command, JSON_OPTION_FAULTS[fault], "--data", release_dir, "--model", "m",
                    "--out", out)  # fmt: skip
    refused(result, command[-1])
    assert not out.exists()


# ---------------------------------------------------------------- release files


@pytest.fixture()
def release_copy(release_dir, tmp_path) -> Path:
    release = tmp_path / "rel"
    shutil.copytree(release_dir, release)
    return release


# inspect and lmms-eval exports only name the release's files, but read them first all the same
@pytest.mark.parametrize("fmt", ["vlmevalkit", "mteb", "lmms-eval", "inspect"])
@pytest.mark.parametrize("table", ["language", "images"])
def test_an_export_of_a_truncated_parquet_is_one_line(release_copy, tmp_path, fmt, table):
    folder = release_copy / "data" / ("eng_Latn" if table == "language" else "images")
    path = next(folder.glob("*.parquet"))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    out = tmp_path / "export"
    result = invoke(build_cli, "export", fmt, "--release", release_copy, "--out", out)
    assert f"{folder.name}/{path.name}" in refused(result)
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["rel"]  # no stage left beside it


def _subprocess(cli: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    code = f"from mvlsib.cli import {cli}; {cli}.main({list(args)!r}, prog_name='x')"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=subprocess_env(), cwd=cwd)  # fmt: skip


@pytest.mark.parametrize("how", ["manifest-is-dev-zero", "manifest-names-dev-zero", "manifest-names-a-link-to-it"])
@pytest.mark.parametrize(
    "command",
    [
        ("eval_cli", "run", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0",
         "--model", "m", "--data", "{rel}", "--out", "{out}"),
        ("eval_cli", "batch", "prepare", "--model", "m", "--data", "{rel}", "--out", "{out}"),
        ("build_cli", "publish", "--release", "{rel}", "--repo-id", "org/name", "--dry-run"),
        ("build_cli", "export", "vlmevalkit", "--release", "{rel}", "--out", "{out}"),
    ],
    ids=["run", "batch-prepare", "publish-dry-run", "export"],
)  # fmt: skip
def test_a_tampered_release_manifest_naming_dev_zero_is_one_line(release_copy, tmp_path, command, how):
    manifest = release_copy / "manifest.json"
    if how == "manifest-is-dev-zero":
        manifest.unlink()
        os.symlink("/dev/zero", manifest)
    else:
        doc = json.loads(manifest.read_text("utf-8"))
        if how == "manifest-names-dev-zero":
            doc["files"]["/dev/zero"] = {"sha256": "0" * 64, "size": 1}
        else:
            os.symlink("/dev/zero", release_copy / "zero.bin")
            doc["files"]["zero.bin"] = {"sha256": "0" * 64, "size": 1}
        manifest.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "out"
    args = [a.format(rel=release_copy, out=out) for a in command[1:]]
    done = _subprocess(command[0], *args, cwd=tmp_path)  # a hang fails by the timeout, not the suite
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    if command[1] == "export" and done.returncode == 0:
        return  # an export reads the data files, not the manifest: nothing of it was read
    refused(done, one_line=False)  # one Error: line; what the command printed before it may stand
    assert not out.exists()


def test_a_hub_eval_yaml_larger_than_its_listing_says_is_refused(tmp_path, monkeypatch):
    """The Hub's listing understates the size: the bound holds on the bytes that arrive."""
    from support.fakes.hub import HubStandIn, StoredFile

    from mvlsib.errors import MvlsibError
    from mvlsib.evaluation.hub import results as hub_results

    folder = tmp_path / "repo"
    folder.mkdir()
    (folder / "eval.yaml").write_text("tasks:\n" + "  - id: x\n" * 200_000, encoding="utf-8")  # 2 MB
    listed = StoredFile.tree_entry
    monkeypatch.setattr(StoredFile, "tree_entry", lambda self, path: {**listed(self, path), "size": 100})
    with HubStandIn("hf_test_token") as hub:
        hub.seed("org/understated", folder)
        with pytest.raises(MvlsibError) as err:
            hub_results.release_task_ids("org/understated", "org/understated", None, endpoint=hub.endpoint)
    message = str(err.value)
    assert "\n" not in message and "eval.yaml" in message and "1,048,576-byte" in message, message
