"""Readers of the ingest stage's outputs: ``WORK/corpus.parquet`` and ``WORK/ingest_report.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from mvlsib.errors import MvlsibError
from mvlsib.workdir import CORPUS_COLUMNS, CORPUS_FILE, INGEST_REPORT_FILE as REPORT_FILE

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def read_corpus(workdir: str | os.PathLike[str]) -> "pd.DataFrame":
    """``WORK/corpus.parquet`` as a DataFrame: language, index_id, split, topic, text (string/int64 dtypes)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(workdir) / CORPUS_FILE
    if not path.is_file():
        raise MvlsibError(f"{path}: no corpus here; run `mvlsib-build ingest --workdir {workdir}` first.")
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow's error types differ between versions
        raise MvlsibError(f"{path}: not a readable parquet file ({exc}); run `mvlsib-build ingest` again.") from None
    if tuple(table.column_names) != CORPUS_COLUMNS:
        raise MvlsibError(
            f"{path}: columns are {table.column_names}, expected {list(CORPUS_COLUMNS)}; "
            "run `mvlsib-build ingest` again."
        )
    df = table.to_pandas(types_mapper={pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()}.get)
    df["index_id"] = df["index_id"].astype("int64")
    return df


def read_ingest_report(workdir: str | os.PathLike[str]) -> dict:
    path = Path(workdir) / REPORT_FILE
    if not path.is_file():
        raise MvlsibError(f"{path}: no ingest report here; run `mvlsib-build ingest --workdir {workdir}` first.")
    return json.loads(path.read_text(encoding="utf-8"))


def _require(path: Path, how: str) -> Path:
    if not path.is_file():
        raise MvlsibError(f"{path}: missing; {how}")
    return path


def read_corpus_texts(workdir: Path) -> tuple[list[int], dict[str, object]]:
    """Sorted sentence ids and, per language, its texts as an arrow array in that id order."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = _require(Path(workdir) / CORPUS_FILE, "run `mvlsib-build ingest --workdir W` first")
    try:
        table = pq.read_table(path, columns=["language", "index_id", "text"])
    except Exception as exc:
        raise MvlsibError(f"{path}: cannot be read as the corpus (columns language, index_id, text): {exc}") from exc
    table = table.sort_by([("language", "ascending"), ("index_id", "ascending")])
    langs = table.column("language").to_pylist()
    if not langs:
        raise MvlsibError(f"{path}: the corpus is empty; re-run `mvlsib-build ingest`")
    bounds: list[tuple[str, int, int]] = []
    start = 0
    for i in range(1, len(langs) + 1):
        if i == len(langs) or langs[i] != langs[start]:
            bounds.append((langs[start], start, i))
            start = i
    ids = table.column("index_id")
    texts = table.column("text")
    first_lang, s0, e0 = bounds[0]
    ref_ids = ids.slice(s0, e0 - s0).combine_chunks()
    out: dict[str, object] = {}
    for lang, s, e in bounds:
        lang_ids = ids.slice(s, e - s).combine_chunks()
        if not lang_ids.equals(ref_ids):
            raise MvlsibError(
                f"{path}: language {lang} has different sentence ids than {first_lang}; "
                "re-run `mvlsib-build ingest` (it checks every language against English)"
            )
        lang_texts = texts.slice(s, e - s).combine_chunks()
        if pc.any(pc.is_null(lang_texts)).as_py():
            raise MvlsibError(f"{path}: language {lang} has missing texts; re-run `mvlsib-build ingest`")
        out[lang] = lang_texts
    return [int(x) for x in ref_ids.to_pylist()], out
