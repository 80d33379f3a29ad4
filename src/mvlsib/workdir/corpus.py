"""Readers of the ingest stage's outputs: ``WORK/corpus.parquet`` and ``WORK/ingest_report.json``."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from mvlsib.errors import MvlsibError
from mvlsib.workdir import CORPUS_COLUMNS, CORPUS_FILE
from mvlsib.workdir import INGEST_REPORT_FILE as REPORT_FILE

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def read_corpus(workdir: str | os.PathLike[str]) -> pd.DataFrame:
    """``WORK/corpus.parquet`` as a DataFrame: language, index_id, split, topic, text (string/int64 dtypes)."""
    import pandas as pd
    import pyarrow as pa

    table = _read_table(Path(workdir) / CORPUS_FILE, workdir)
    df = table.to_pandas(types_mapper={pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()}.get)
    df["index_id"] = df["index_id"].astype("int64")
    return df


class Corpus:
    """The corpus in memory: its arrow table (rows as ``corpus.parquet`` holds them) and its
    columns as Python lists, made on first use.

    ``mvlsib-build build`` hands the corpus ingest has just written to the later stages instead
    of reading the file back; a stage run alone gets the same object from :func:`load_corpus`.
    """

    def __init__(self, table=None, columns: dict[str, list] | None = None, normalized: list[str] | None = None):
        self._table = table
        self._columns: dict[str, list] = dict(columns or {})
        self._norm = normalized
        self._blocks: list[tuple[str, int, int]] | None = None
        self._from_table: set[str] = set()  # columns made from the table by column()

    @classmethod
    def from_frame(cls, frame) -> Corpus:
        """From a DataFrame with the corpus columns (missing values become None)."""
        columns = {}
        for name in CORPUS_COLUMNS:
            if name in frame.columns:
                values = frame[name].astype(object).where(frame[name].notna(), None).tolist()
                columns[name] = [int(v) for v in values] if name == "index_id" else values
        return cls(columns=columns)

    @property
    def table(self):
        if self._table is None:
            import pyarrow as pa

            self._table = pa.table({name: self._columns[name] for name in CORPUS_COLUMNS if name in self._columns})
        return self._table

    def names(self) -> list[str]:
        return list(self._columns) if self._table is None else list(self._table.column_names)

    def column(self, name: str) -> list:
        """One column as a Python list (made once)."""
        values = self._columns.get(name)
        if values is None:
            values = self._columns[name] = self.table.column(name).to_pylist()
            self._from_table.add(name)
        return values

    def language_blocks(self) -> list[tuple[str, int, int]]:
        """``(language, start, end)`` of each run of rows of one language, in row order (one run
        per language when the rows are grouped by language, as ``corpus.parquet`` holds them)."""
        if self._blocks is not None:
            return self._blocks
        out = []
        start = 0
        for language, run in itertools.groupby(self.column("language")):
            end = start + sum(1 for _ in run)
            out.append((language, start, end))
            start = end
        self._blocks = out
        return out

    def language_rows(self) -> dict[str, range | list[int]]:
        """language -> its row positions in row order (a ``range`` when its rows are one run)."""
        blocks = self.language_blocks()
        if len({lang for lang, _, _ in blocks}) == len(blocks):
            return {lang: range(start, end) for lang, start, end in blocks}
        rows: dict[str, list[int]] = {}
        for lang, start, end in blocks:
            rows.setdefault(lang, []).extend(range(start, end))
        return rows

    def __len__(self) -> int:
        return self._table.num_rows if self._table is not None else len(next(iter(self._columns.values()), []))

    def normalized(self) -> list[str]:
        """``textnorm.normalize_text`` of every text (made once; non-strings give "")."""
        if self._norm is None:
            from mvlsib.textnorm import normalize_many

            # The table's text column lets normalize_many find the texts to collapse in one arrow
            # pass; only when the text list was not given separately (it could differ).
            given = "text" in self._columns and "text" not in self._from_table
            arrow = (
                None
                if given or self._table is None or "text" not in self._table.column_names
                else self._table.column("text")
            )
            self._norm = normalize_many(self.column("text"), arrow)
        return self._norm


def take(values: list, rows: range | list[int]) -> list:
    """``values`` at ``rows`` (a slice when ``rows`` is a range)."""
    if isinstance(rows, range) and rows.step == 1:
        return values[rows.start : rows.stop]
    return [values[n] for n in rows]


def as_corpus(corpus) -> Corpus:
    """A :class:`Corpus` from a Corpus or a DataFrame (what ``read_corpus`` returns)."""
    return corpus if isinstance(corpus, Corpus) else Corpus.from_frame(corpus)


def load_corpus(workdir: str | os.PathLike[str]) -> Corpus:
    """``WORK/corpus.parquet`` as a :class:`Corpus` (checked like :func:`read_corpus`, without pandas)."""
    return Corpus(_read_table(Path(workdir) / CORPUS_FILE, workdir))


def _read_table(path: Path, workdir):
    import pyarrow.parquet as pq

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
    return table


def read_ingest_report(workdir: str | os.PathLike[str]) -> dict:
    path = Path(workdir) / REPORT_FILE
    if not path.is_file():
        raise MvlsibError(f"{path}: no ingest report here; run `mvlsib-build ingest --workdir {workdir}` first.")
    return json.loads(path.read_text(encoding="utf-8"))


def _require(path: Path, how: str) -> Path:
    if not path.is_file():
        raise MvlsibError(f"{path}: missing; {how}")
    return path


def read_corpus_texts(workdir: Path, table=None) -> tuple[list[int], dict[str, object]]:
    """Sorted sentence ids and, per language, its texts as an arrow array in that id order.

    ``table``: the corpus table as ``corpus.parquet`` holds it, when the caller has it in memory.
    """
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = Path(workdir) / CORPUS_FILE
    if table is not None:
        table = table.select(["language", "index_id", "text"])
    else:
        _require(path, "run `mvlsib-build ingest --workdir W` first")
        try:
            table = pq.read_table(path, columns=["language", "index_id", "text"])
        except Exception as exc:
            raise MvlsibError(
                f"{path}: cannot be read as the corpus (columns language, index_id, text): {exc}"
            ) from exc
    table = table.sort_by([("language", "ascending"), ("index_id", "ascending")])
    if not table.num_rows:
        raise MvlsibError(f"{path}: the corpus is empty; re-run `mvlsib-build ingest`")
    # Sorted by language, each language's rows are one run: its bounds follow from the counts
    # (in arrow, no Python step per row). A null language sorts last, as a run of its own.
    counts = pc.value_counts(table.column("language")).to_pylist()
    bounds: list[tuple[str, int, int]] = []
    start = 0
    for lang, n in sorted(((c["values"], c["counts"]) for c in counts), key=lambda lc: (lc[0] is None, lc[0] or "")):
        bounds.append((lang, start, start + n))
        start += n
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
