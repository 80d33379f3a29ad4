"""The ``preview`` config: a few dozen rendered examples for the Hub's Dataset Viewer.

Language configs hold image ids and the ``images`` config holds the images once, so
the Viewer shows neither what a model sees. This small config does: each row is one
task example in English with its prompt text (``<image>`` where each image goes) and
the images embedded in prompt order, so a visitor sees the benchmark at a glance.
It repeats some image bytes (it is a preview, a few MB); the benchmark's data are the
language and ``images`` configs, and the evaluator never reads this one.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mvlsib.evaluation.run.prompts import prompt_for_example
from mvlsib.release import tables as rt
from mvlsib.release.stats import LETTERS
from mvlsib.release_format import mvl_sib
from mvlsib.release_format.mvl_sib import PREVIEW_CONFIG

PREVIEW_LANGUAGE = "eng_Latn"
PER_TASK = 6  # examples per task: 4 tasks -> 24 rows
PREVIEW_K = 3
# The preview's columns: (name, release column type as in release_format's tables).
PREVIEW_COLUMNS = (
    ("task", "string"),
    ("k", "int64"),
    ("language", "string"),
    ("instance_id", "string"),
    ("prompt", "string"),
    ("images", "list<image>"),
    ("options", "list<string>"),
    ("answer", "string"),
)


def preview_rows(rows: list[dict], image_files: dict[str, tuple[bytes, str]]) -> list[dict]:
    """The preview's rows from a language's first instances and each image's (encoded bytes, file name)."""
    out = []
    for spec in mvl_sib.TASK_TABLE:
        k = PREVIEW_K if PREVIEW_K in spec.k_values else spec.k_values[0]
        # The loader only looks images up by id: ids stand in for them, bytes are attached below.
        ids = {image_id: image_id for image_id in image_files}
        for ex in mvl_sib.build_examples(rows[:PER_TASK], ids, spec.name, k, with_prompt=False):
            out.append(
                {
                    "task": spec.name,
                    "k": k,
                    "language": ex["language"],
                    "instance_id": ex["instance_id"],
                    "prompt": prompt_for_example(ex).text(),
                    "images": [{"bytes": image_files[i][0], "path": image_files[i][1]} for i in ex["image_ids"]],
                    "options": [str(o) for o in ex["options"]],
                    "answer": LETTERS[ex["label"]],
                }
            )
    return out


def write_preview(out: Path, language_rows: list[dict], image_files: dict[str, tuple[bytes, str]]):
    """Write ``data/preview/test.parquet``; returns its ConfigSize for the card."""
    features = {name: rt._feature(kind) for name, kind in PREVIEW_COLUMNS}
    schema = pa.schema(
        [(name, rt._arrow_type(kind)) for name, kind in PREVIEW_COLUMNS], metadata=rt._hf_metadata(features)
    )
    rows = preview_rows(language_rows, image_files)
    table = pa.table({f.name: pa.array([row.get(f.name) for row in rows], f.type) for f in schema}, schema=schema)
    path = rt.write_table(
        table, rt.config_path(out, PREVIEW_CONFIG), row_group_size=rt.IMAGE_ROW_GROUP, no_stats=("images",)
    )
    return rt.ConfigSize(num_examples=table.num_rows, num_bytes=table.nbytes, download_size=path.stat().st_size)
