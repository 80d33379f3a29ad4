"""lmms-eval task functions for MVL-SIB, written by `mvlsib-build export lmms-eval`.

Generated file, do not edit: regenerate with the export command. Nothing here restates
MVL-SIB's prompts or scoring. Beside this file are the release's loader (``mvl_sib.py``)
and the reference evaluator's own code (``mvlsib_evaluate.zip``, the same archive a
release's ``evaluate.py`` embeds). Prompts come from its ``prompts`` module, letters
from its ``parsing`` module and every metric from its ``scoring`` module, so lmms-eval
reports what ``mvlsib-eval run`` reports for the same responses.

lmms-eval imports this file once per task YAML; what must be loaded once per process
(the decoded images) is therefore kept in a module registered in ``sys.modules``.
"""

import json
import os
import sys
import types
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
# The loader first (the bundled evaluator imports `mvl_sib`), then the evaluator archive.
for _path in (_HERE, os.path.join(_HERE, "mvlsib_evaluate.zip")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import mvl_sib  # noqa: E402
from mvlsib_evaluate.evaluation.run.prompts import LETTERS, prompt_for_example  # noqa: E402
from mvlsib_evaluate.evaluation.run.scoring import METRICS, macro, per_language  # noqa: E402

with open(os.path.join(_HERE, "export.json"), encoding="utf-8") as _fh:
    EXPORT = json.load(_fh)

# Where the images come from: the release the task YAMLs name (MVLSIB_RELEASE overrides it,
# e.g. after moving the release folder).
SOURCE = os.environ.get("MVLSIB_RELEASE") or EXPORT["source"]
REVISION = EXPORT.get("revision")
TASK_FIELD, K_FIELD = "mvl_sib_task", "mvl_sib_k"

_SHARED: Any = sys.modules.setdefault("_mvl_sib_lmms_eval_shared", types.ModuleType("_mvl_sib_lmms_eval_shared"))


def _images():
    if getattr(_SHARED, "images", None) is None:
        _SHARED.images = mvl_sib.load_images(SOURCE, REVISION)
    return _SHARED.images


def _make_process_docs(task, k):
    def process_docs(dataset):
        n = len(dataset)
        return dataset.add_column(TASK_FIELD, [task] * n).add_column(K_FIELD, [k] * n)

    process_docs.__name__ = f"process_docs_{task}_k{k}"
    return process_docs


# One process_docs per task and k (the task YAML templates name them): they tag each doc
# with its task and k, which every function below reads.
for _spec in mvl_sib.TASK_TABLE:
    for _k in _spec.k_values:
        globals()[f"process_docs_{_spec.name}_k{_k}"] = _make_process_docs(_spec.name, _k)


def example(doc):
    """The loader's task example for one doc (a release row tagged by process_docs)."""
    task = doc[TASK_FIELD]
    images = _images() if mvl_sib.TASK_BY_NAME[task].cross_modal else None
    return mvl_sib.build_examples([doc], images, task, int(doc[K_FIELD]))[0]


def prompt(doc):
    return prompt_for_example(example(doc))


def doc_to_visual(doc):
    """The example's images in prompt order (references, then options)."""
    return [img.convert("RGB") for img in example(doc)["images"]]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    """The evaluator's prompt text with the images left out (simple models get the images
    from doc_to_visual, placed by the model wrapper; chat models use doc_to_messages)."""
    return "".join(part["text"] for part in prompt(doc).parts if part["type"] == "text")


def doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """The evaluator's single user turn, each image exactly where the evaluator puts it."""
    p = prompt(doc)
    images = _images()
    content = []
    for part in p.parts:
        if part["type"] == "text":
            content.append({"type": "text", "text": part["text"]})
        else:
            content.append({"type": "image", "url": images[part["image_id"]].convert("RGB")})
    return [{"role": "user", "content": content}]


def doc_to_target(doc):
    return LETTERS[int(example(doc)["label"])]


def process_results(doc, results):
    """One record per metric; the aggregations below score them with the evaluator's scorer."""
    ex = example(doc)
    record = {
        "language": ex["language"],
        "task": ex["task"],
        "k": ex["k"],
        "label": ex["label"],
        "instance_id": ex["instance_id"],
        "response": results[0] if results else "",
    }
    return {metric: record for metric in METRICS}


def _aggregate(metric):
    def aggregate(records):
        rows = macro(per_language(records))
        value = rows[0][metric] if len(rows) == 1 else None
        # lmms-eval averages group members as floats; the scorer's "no valid response" is None.
        return float("nan") if value is None else value

    aggregate.__name__ = f"aggregate_{metric}"
    return aggregate


for _metric in METRICS:
    globals()[f"aggregate_{_metric}"] = _aggregate(_metric)
