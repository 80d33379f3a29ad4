"""eval.yaml: a release built from the real SIB-200 files is a Hub Benchmark the spec accepts.

The spec's required fields are encoded below as a JSON Schema, from the two places that define
them: the Hub's "Eval.yaml specification" (huggingface/hub-docs, docs/hub/eval-results.md, read
2026-11-26) with its list of framework values (huggingface/huggingface.js,
packages/tasks/src/eval.ts), and, for ``inspect-ai`` tasks, Inspect AI's own model of a task
(``HFTask`` in inspect-ai 0.3.285, inspect_ai/_eval/task/hf.py: no keys beyond its fields, at
least one solver and one scorer, names from its lists). Inspect's model itself is also run on
the file, in Inspect's venv.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pyarrow.parquet as pq
import pytest
import yaml

from mvlsib.release.eval_yaml import EVAL_YAML, TASK_ID_PATTERN, leaderboards, render
from mvlsib.release_format import mvl_sib

VENVS = Path(os.environ.get("MVLSIB_HARNESS_VENVS", Path.home() / ".cache" / "mvlsib" / "harness-venvs"))
# huggingface.js packages/tasks/src/eval.ts, EVALUATION_FRAMEWORKS (2026-08-21).
FRAMEWORKS = [
    "exgentic", "inspect-ai", "math-arena", "mteb", "olmocr-bench", "harbor", "ifstruct", "pier", "redline-bench",
    "archipelago", "benchflow", "apex-evals", "screenspot-pro", "swe-bench", "swe-bench-pro", "nemo-evaluator",
    "yc-bench", "open-asr-leaderboard", "mdpbench", "real5-omnidocbench", "parsebench", "video-mme-v2", "claw-eval",
    "researchclawbench", "pbench", "wildclawbench", "wbench", "nanofold", "mmmu", "extractbench",
]  # fmt: skip
_NAMED = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "args": {"type": "object"}},
}
INSPECT_TASK = {
    "type": "object",
    "required": ["field_spec", "solvers", "scorers"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string"},
        "config": {"type": "string"},
        "split": {"type": "string"},
        "field_spec": {
            "type": "object",
            "required": ["input", "target"],
            "properties": {k: {"type": "string"} for k in ("input", "target", "choices", "input_image")},
        },
        "shuffle_choices": {"type": "boolean"},
        "epochs": {"type": "integer", "minimum": 1},
        "epoch_reducer": {"type": "string"},
        "solvers": {
            "type": "array",
            "minItems": 1,
            "items": {
                **_NAMED,
                "properties": {
                    **_NAMED["properties"],
                    "name": {
                        "enum": [
                            "prompt_template",
                            "system_message",
                            "user_message",
                            "chain_of_thought",
                            "use_tools",
                            "generate",
                            "self_critique",
                            "multiple_choice",
                        ]
                    },
                },
            },
        },  # fmt: skip
        "scorers": {
            "type": "array",
            "minItems": 1,
            "items": {
                **_NAMED,
                "properties": {
                    **_NAMED["properties"],
                    "name": {
                        "enum": [
                            "includes",
                            "match",
                            "pattern",
                            "answer",
                            "exact",
                            "f1",
                            "model_graded_qa",
                            "model_graded_fact",
                            "choice",
                            "math",
                        ]
                    },
                },
            },
        },  # fmt: skip
    },
}
EVAL_YAML_SCHEMA = {
    "type": "object",
    "required": ["name", "description", "evaluation_framework", "tasks"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "description": {"type": "string", "minLength": 1},
        "evaluation_framework": {"enum": FRAMEWORKS},
        "tasks": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id"],
                "properties": {
                    "id": {"type": "string", "minLength": 1},
                    "config": {"type": "string"},
                    "split": {"type": "string"},
                },
            },
        },  # fmt: skip
    },
    "if": {"properties": {"evaluation_framework": {"const": "inspect-ai"}}},
    "then": {"properties": {"tasks": {"items": INSPECT_TASK}}},
}


@pytest.fixture(scope="module")
def eval_yaml(release_dir) -> tuple[str, dict]:
    """The eval.yaml publish wrote into the release built from SIB-200 (ingest -> sample -> publish)."""
    text = (release_dir / EVAL_YAML).read_text("utf-8")
    return text, yaml.safe_load(text)


def test_publish_writes_it_from_the_task_table_and_lists_it_in_the_manifest(release_dir, eval_yaml):
    text, _ = eval_yaml
    assert text == render(mvl_sib.languages(release_dir), "ORG/mvl-sib")
    manifest = json.loads((release_dir / "manifest.json").read_text("utf-8"))
    entry = manifest["files"][EVAL_YAML]
    assert entry["sha256"] == hashlib.sha256(text.encode("utf-8")).hexdigest() and entry["size"] == len(text.encode())


def test_the_upload_retargets_it_like_the_card(release_dir, tmp_path):
    from mvlsib.release.hub import retarget_card
    from mvlsib.release.manifest import verify_release

    copy = tmp_path / "rel"
    shutil.copytree(release_dir, copy)
    manifest = json.loads((copy / "manifest.json").read_text("utf-8"))
    assert retarget_card(copy, manifest, "my-org/mvl-sib-v2")
    text = (copy / EVAL_YAML).read_text("utf-8")
    assert '"my-org/mvl-sib-v2"' in text and "ORG/mvl-sib" not in text
    assert yaml.safe_load(text) == yaml.safe_load((release_dir / EVAL_YAML).read_text("utf-8"))
    assert '"my-org/mvl-sib-v2"' in (copy / "README.md").read_text("utf-8")
    verify_release(copy)  # the manifest agrees with the rewritten files


def test_the_schema_rejects_what_the_spec_rejects():
    good = {"name": "B", "description": "d", "evaluation_framework": "math-arena", "tasks": [{"id": "t"}]}
    jsonschema.validate(good, EVAL_YAML_SCHEMA)
    bad = [
        {k: v for k, v in good.items() if k != "evaluation_framework"},
        {**good, "evaluation_framework": "mvl-sib"},  # not in the Hub's list
        {**good, "tasks": [{"config": "x"}]},  # a task without id
        {**good, "evaluation_framework": "inspect-ai"},  # inspect-ai without field_spec/solvers/scorers
    ]
    for doc in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(doc, EVAL_YAML_SCHEMA)


def test_eval_yaml_is_valid_and_names_what_the_release_holds(eval_yaml, release_dir):
    text, doc = eval_yaml
    jsonschema.validate(doc, EVAL_YAML_SCHEMA)
    images = mvl_sib.load_images(release_dir)
    assert doc["evaluation_framework"] == "inspect-ai"
    ids = [t["id"] for t in doc["tasks"]]
    assert len(ids) == len(set(ids)) == 10  # i2s, s2i, s2t at k=1,3,5; t2s at k=1
    assert {"i2s_k1", "i2s_k3", "i2s_k5", "s2i_k3", "t2s_k1", "s2t_k5"} <= set(ids)
    for hub_task in doc["tasks"]:
        match = TASK_ID_PATTERN.match(hub_task["id"])
        task, k = match["task"], int(match["k"])
        spec = mvl_sib.TASK_BY_NAME[task]
        assert k in spec.k_values
        # The config and split exist in the release, and the field_spec names its columns.
        data = release_dir / "data" / hub_task["config"] / f"{hub_task['split']}.parquet"
        assert data.is_file(), data
        columns = set(pq.read_schema(data).names)
        assert set(hub_task["field_spec"].values()) <= columns, hub_task
        # The loader builds this task at this k from that config.
        rows = mvl_sib.load_rows(hub_task["config"], release_dir)[:2]
        assert len(mvl_sib.build_examples(rows, images if spec.cross_modal else None, task, k)) == 2
    assert [(m["task"], int(m["k"])) for m in map(TASK_ID_PATTERN.match, ids)] == leaderboards()
    # The repo id is quoted once, so the upload's retargeting rewrites it like the card's snippets.
    assert text.count('"ORG/mvl-sib"') == 1


@pytest.mark.harness
def test_inspect_accepts_every_task(eval_yaml, tmp_path):
    """Inspect AI's own HFTask model (what `inspect eval hf/ORG/NAME` validates) accepts each task."""
    py = VENVS / "inspect" / "bin" / "python"
    if not py.is_file():
        msg = f"{py} not found: run nox -s harnesses (docs/exports.md)"
        if os.environ.get("CI"):
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    text, doc = eval_yaml
    (tmp_path / "eval.yaml").write_text(text, encoding="utf-8")
    probe = (
        "import sys, json\n"
        "from inspect_ai._eval.task.hf import HFTask, _load_eval_yaml\n"
        "doc = _load_eval_yaml(sys.argv[1])\n"
        "print(json.dumps([HFTask.model_validate(t).id for t in doc['tasks']]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([str(py), "-c", probe, str(tmp_path / "eval.yaml")], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert json.loads(res.stdout) == [t["id"] for t in doc["tasks"]]
