"""Inspect AI tasks for MVL-SIB, written by `mvlsib-build export inspect`.

Generated file, do not edit: regenerate with the export command. Nothing here restates
MVL-SIB's prompts or scoring. Beside this file are the release's loader (``mvl_sib.py``)
and the reference evaluator's own code (``mvlsib_evaluate.zip``, the same archive a
release's ``evaluate.py`` embeds). Prompts come from its ``prompts`` module (text and
images in place, several images in one user message), images are encoded as its OpenAI
backend encodes them, ``--limit`` picks the rows its ``subset`` module picks, letters come
from its ``parsing`` module and every figure from its ``scoring`` module, so Inspect reports
what ``mvlsib-eval run`` reports for the same responses.

Run one task (its name is the Hub's task id in the release's eval.yaml), e.g.
``inspect eval mvl_sib_inspect.py@i2s_k3 --model openai/MODEL``. The scores: ``accuracy``
(relaxed, the paper's), ``strict_accuracy``, ``format_error_rate`` and ``valid_accuracy``,
each the macro average over languages, then the same per language as ``accuracy_eng_Latn`` etc.

API used (inspect-ai 0.3.285, https://inspect.aisi.org.uk/): ``Task``, ``MemoryDataset`` of
``Sample``s whose input is one ``ChatMessageUser`` of ``ContentText``/``ContentImage`` parts,
the ``generate`` solver, a ``@scorer`` and a ``@metric`` returning a dict (Inspect lists each
key as its own metric).
"""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
# The loader first (the bundled evaluator imports `mvl_sib`), then the evaluator archive.
for _path in (_HERE, os.path.join(_HERE, "mvlsib_evaluate.zip")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import mvl_sib  # noqa: E402
from inspect_ai import Task, task  # noqa: E402, F401 (task: the generated @task functions below use it)
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig  # noqa: E402
from inspect_ai.scorer import SampleScore, Score, Target, metric, scorer  # noqa: E402
from inspect_ai.solver import TaskState, generate  # noqa: E402
from mvlsib_evaluate.evaluation.backends.openai import encode_image  # noqa: E402
from mvlsib_evaluate.evaluation.run.parsing import parse_letter  # noqa: E402
from mvlsib_evaluate.evaluation.run.prompts import LETTERS, prompt_for_example  # noqa: E402
from mvlsib_evaluate.evaluation.run.scoring import METRICS, macro, per_language  # noqa: E402
from mvlsib_evaluate.evaluation.run.subset import select_rows  # noqa: E402

with open(os.path.join(_HERE, "export.json"), encoding="utf-8") as _fh:
    EXPORT = json.load(_fh)

# Where the data comes from: the release the export was made from (MVLSIB_RELEASE overrides it,
# e.g. after moving the release folder).
SOURCE = os.environ.get("MVLSIB_RELEASE") or EXPORT["source"]
REVISION = EXPORT.get("revision")
LIMIT = EXPORT.get("limit")
MAX_NEW_TOKENS = EXPORT["max_new_tokens"]


def samples(task_name, k):
    """One Sample per language and instance: the evaluator's single user turn and gold letter."""
    spec = mvl_sib.TASK_BY_NAME[task_name]
    images = mvl_sib.load_images(SOURCE, REVISION) if spec.cross_modal else None
    urls = {}
    out = []
    for language in EXPORT["languages"]:
        rows = select_rows(mvl_sib.load_rows(language, SOURCE, REVISION), LIMIT)
        for example in mvl_sib.build_examples(rows, images, task_name, k):
            content = []
            for part in prompt_for_example(example).parts:
                if part["type"] == "text":
                    content.append(ContentText(text=part["text"]))
                else:
                    image_id = part["image_id"]
                    assert images is not None  # image parts come only in cross-modal tasks
                    if image_id not in urls:
                        urls[image_id] = encode_image(images[image_id])
                    content.append(ContentImage(image=urls[image_id]))
            out.append(
                Sample(
                    id=f"{language}/{example['instance_id']}",
                    input=[ChatMessageUser(content=content)],
                    target=LETTERS[int(example["label"])],
                    metadata={
                        "language": language,
                        "task": task_name,
                        "k": k,
                        "label": int(example["label"]),
                        "instance_id": example["instance_id"],
                    },
                )
            )
    return out


@metric
def mvl_sib_scores():
    """The evaluator's figures: the macro over languages, then each language's, by language code."""

    # Inspect passes SampleScores (with the sample's metadata) only to a metric annotated so.
    def compute(scores: list[SampleScore]):
        records = [{**s.sample_metadata, "response": s.score.metadata["response"]} for s in scores]
        out = {}
        for row in macro(per_language(records)):
            out.update({name: row[name] for name in METRICS})
        for cell in per_language(records):
            out.update({f"{name}_{cell.language}": getattr(cell, name) for name in METRICS})
        return out

    return compute


@scorer(metrics=[mvl_sib_scores()])
def mvl_sib_scorer():
    """Per sample: 1 when the relaxed parser reads the gold letter; the figures come from the metric."""

    async def score(state: TaskState, target: Target) -> Score:
        response = state.output.completion
        letter = parse_letter(response, "relaxed")
        return Score(
            value=1.0 if letter == target.text else 0.0,
            answer=letter,
            metadata={"response": response},
        )

    return score


def mvl_sib_task(task_name, k):
    return Task(
        dataset=MemoryDataset(samples(task_name, k), name=f"mvl_sib_{task_name}_k{k}"),
        solver=generate(),
        scorer=mvl_sib_scorer(),
        # Greedy and short, as the reference evaluator decodes.
        config=GenerateConfig(max_tokens=MAX_NEW_TOKENS, temperature=0),
        name=f"{task_name}_k{k}",
    )


# ---- one task per exported task and k (generated below)
