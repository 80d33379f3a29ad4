"""Export a release as VLMEvalKit multiple-choice TSVs (one per language x task x k).

Columns: ``index, question, A, B, C, D, answer, category, l2-category, image_path,
instance_id`` (VLMEvalKit's MCQ columns; extra columns are carried along; the text-only
tasks have no ``image_path``, so VLMEvalKit takes them as text MCQ datasets). ``question`` is
the reference evaluator's whole prompt text with ``<image>`` where each image goes, in the
order of ``image_path``; ``A``-``D`` are the options (sentence or topic texts, image ids for
image options) so VLMEvalKit's answer matching can read them; ``answer`` is the gold letter.

Images are written once to ``images/`` and referenced by absolute path: base64 in every
row would repeat each image in thousands of rows (``export.json`` records both sizes).
VLMEvalKit's default MCQ prompt differs from ours (docs/exports.md says how to match it).
"""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

from mvlsib.evaluation.run.prompts import LETTERS, prompt_for_example
from mvlsib.release.exports.common import (
    Selection,
    image_suffix,
    load_image_bytes,
    load_rows,
    select,
    staging,
    write_info,
)
from mvlsib.release_format import mvl_sib

FORMAT = "vlmevalkit"
COLUMNS = ("index", "question", *LETTERS, "answer", "category", "l2-category", "image_path", "instance_id")
IMAGES_DIR = "images"


def tsv_name(task: str, k: int, language: str) -> str:
    return f"MVLSIB_{task}_k{k}_{language}.tsv"


class _IdImages(dict):
    """The loader wants images for cross-modal tasks; the TSV needs only their ids."""

    def __missing__(self, key):
        return key


def rows_for(sel: Selection, task: str, k: int, language: str, rows: list[dict], paths: dict[str, str]) -> list[dict]:
    """The TSV rows of one language, task and k (``paths``: image id -> path written in the TSV)."""
    examples = mvl_sib.build_examples(rows, _IdImages(), task, k)
    out = []
    for index, ex in enumerate(examples):
        prompt = prompt_for_example(ex)
        row = {"index": index, "question": prompt.text()}
        row.update(zip(LETTERS, ex["options"]))
        row.update(
            {
                "answer": LETTERS[ex["label"]],
                "category": f"{task}_k{k}",
                "l2-category": language,
                "image_path": json.dumps([paths[i] for i in prompt.image_ids]) if prompt.image_ids else "",
                "instance_id": ex["instance_id"],
            }
        )
        out.append(row)
    return out


def columns_of(task: str) -> tuple[str, ...]:
    """A text-only task's TSV has no image column: VLMEvalKit then reads it as a text MCQ
    dataset (an empty ``image_path`` would stop its image datasets)."""
    return COLUMNS if mvl_sib.TASK_BY_NAME[task].cross_modal else tuple(c for c in COLUMNS if c != "image_path")


def _tsv(task: str, rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(
        buf, fieldnames=columns_of(task), delimiter="\t", lineterminator="\n", extrasaction="ignore"
    )
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def export_vlmevalkit(release, out, *, languages=None, tasks=None, ks=None, revision=None) -> dict:
    """Write the TSVs and ``images/`` to ``out``; returns what ``export.json`` records."""
    sel = select(release, languages=languages, tasks=tasks, ks=ks, revision=revision)
    images = load_image_bytes(sel)
    final = Path(out).resolve()
    info = sel.info(FORMAT)
    files, tsv_bytes, base64_bytes = {}, 0, 0
    with staging(out) as stage:
        (stage / IMAGES_DIR).mkdir()
        paths = {}
        for image_id, (data, _topic) in images.items():
            name = f"{image_id}{image_suffix(data)}"
            (stage / IMAGES_DIR / name).write_bytes(data)
            paths[image_id] = str(final / IMAGES_DIR / name)
        b64_len = {paths[i]: len(base64.b64encode(data)) for i, (data, _t) in images.items()}
        for lang in sel.languages:
            lang_rows = load_rows(sel, lang)
            for task, k in sel.task_ks:
                rows = rows_for(sel, task, k, lang, lang_rows, paths)
                text = _tsv(task, rows)
                name = tsv_name(task, k, lang)
                (stage / name).write_text(text, encoding="utf-8", newline="")
                files[name] = len(rows)
                tsv_bytes += len(text.encode("utf-8"))
                # What the same TSV would weigh with every image inlined as base64 (VLMEvalKit's `image`).
                base64_bytes += sum(
                    sum(b64_len[i] for i in json.loads(r["image_path"])) if r["image_path"] else 0 for r in rows
                )
        info.update(
            {
                "files": files,
                "tsv_bytes": tsv_bytes,
                "images_bytes": sum(len(d) for d, _t in images.values()),
                "base64_image_bytes_if_inlined": base64_bytes,
            }
        )
        write_info(stage, info)
    return info
