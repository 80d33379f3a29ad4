"""The ingest stage's outputs: ``WORK/corpus.parquet`` and ``WORK/ingest_report.json``.

:class:`Corpus` is the corpus in memory (what ``ingest`` returns and the later stages take);
:func:`save_corpus` / :func:`load_corpus` move it to and from the work folder.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mvlsib import jsonio, readers, textnorm
from mvlsib.atomic import atomic_open, owned_files, sha256_file
from mvlsib.errors import MvlsibError
from mvlsib.limits import MAX_INDEX_ID
from mvlsib.textnorm import normalize_many
from mvlsib.workdir import CORPUS_COLUMNS, CORPUS_FILE, INGEST_REPORT_FILE
from mvlsib.workdir.folder import in_use

# Fixed writer settings: the same rows always give the same bytes (with a given pyarrow).
_CORPUS_WRITER = dict(
    compression="zstd",
    compression_level=3,
    use_dictionary=["language", "split", "topic"],
    write_statistics=True,
    version="2.6",
    data_page_version="1.0",
    row_group_size=1 << 20,
)


class Corpus:
    """The corpus in memory: its arrow table (rows as ``corpus.parquet`` holds them), its columns
    as Python lists (made on first use) and the ingest report (``ingest_report.json``'s content).
    """

    def __init__(
        self,
        table: pa.Table | None = None,
        columns: dict[str, list] | None = None,
        normalized: list[str] | None = None,
        report: dict | None = None,
        *,
        table_of_columns: bool = False,
        sha256: str | None = None,
    ):
        """``table_of_columns``: ``table`` was made from ``columns`` (``corpus_table``), so the two
        hold the same values and column-wise checks may use the table's arrow columns. ``sha256``: of
        the ``corpus.parquet`` the table was read from."""
        self._table = table
        self._columns: dict[str, list] = dict(columns or {})
        self._norm = normalized
        self._blocks: list[tuple[str, int, int]] | None = None
        # columns that are the table's values (made from the table by column(), or it from them)
        self._from_table: set[str] = set(self._columns) if table_of_columns and table is not None else set()
        self.report: dict = dict(report or {})
        self._parquet: bytes | None = None
        self._sha256 = sha256

    @property
    def table(self) -> pa.Table:
        if self._table is None:
            self._table = pa.table({name: self._columns[name] for name in CORPUS_COLUMNS if name in self._columns})
        return self._table

    def parquet_bytes(self) -> bytes:
        """The bytes of ``corpus.parquet`` for this corpus (encoded once: ingest hashes them, save writes them)."""
        if self._parquet is None:
            self._parquet = encode_corpus(self.table)
        return self._parquet

    def sha256(self) -> str:
        """The sha256 of this corpus's ``corpus.parquet``: the file it was read from, else the bytes
        :func:`save_corpus` writes (the sample report records it: what the instances were drawn from)."""
        if self._sha256 is None:
            self._sha256 = hashlib.sha256(self.parquet_bytes()).hexdigest()
        return self._sha256

    def names(self) -> list[str]:
        return list(self._columns) if self._table is None else list(self._table.column_names)

    def column(self, name: str) -> list:
        """One column as a Python list (made once)."""
        values = self._columns.get(name)
        if values is None:
            values = self._columns[name] = self.table.column(name).to_pylist()
            self._from_table.add(name)
        return values

    def arrow_column(self, name: str) -> pa.ChunkedArray | None:
        """The table's column ``name``, unless its values were given as a list (which could differ)."""
        given = name in self._columns and name not in self._from_table
        if given or self._table is None or name not in self._table.column_names:
            return None
        return self._table.column(name)

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
        return {lang: ids for lang, ids in rows.items()}

    def __len__(self) -> int:
        return self._table.num_rows if self._table is not None else len(next(iter(self._columns.values()), []))

    def normalized(self) -> list[str]:
        """``textnorm.normalize_text`` of every text (made once; non-strings give "")."""
        if self._norm is None:
            self._norm = normalize_many(self.column("text"), self.arrow_column("text"))
        return self._norm


def take(values: list, rows: range | list[int]) -> list:
    """``values`` at ``rows`` (a slice when ``rows`` is a range)."""
    if isinstance(rows, range) and rows.step == 1:
        return values[rows.start : rows.stop]
    return [values[n] for n in rows]


# corpus.parquet's column types (corpus_table writes them; load_corpus checks them).
CORPUS_TYPES = (
    ("language", "string"),
    ("index_id", "int64"),
    ("split", "string"),
    ("topic", "string"),
    ("text", "string"),
)


def corpus_table(language: list, index_id: list, split: list, topic: list, text: list) -> pa.Table:
    """The corpus table from its columns (``corpus.parquet``'s column order and types)."""
    columns = {"language": language, "index_id": index_id, "split": split, "topic": topic, "text": text}
    return pa.table({name: pa.array(columns[name], pa.type_for_alias(kind)) for name, kind in CORPUS_TYPES})


def encode_corpus(table: pa.Table) -> bytes:
    """The bytes of ``corpus.parquet`` for ``table`` (fixed settings)."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **_CORPUS_WRITER)
    return bytes(sink.getvalue().to_pybytes())


def save_corpus(workdir: str | os.PathLike[str], corpus: Corpus) -> None:
    """Write ``corpus.parquet`` and, when the corpus has one, ``ingest_report.json``."""
    work = Path(workdir)
    names = [CORPUS_FILE, *([INGEST_REPORT_FILE] if corpus.report else [])]
    with in_use(work), owned_files(work, names, "mvlsib-build ingest", option="--workdir"):
        with atomic_open(work / CORPUS_FILE, "wb") as fh:
            fh.write(corpus.parquet_bytes())
        if corpus.report:
            with atomic_open(work / INGEST_REPORT_FILE) as fh:
                fh.write(jsonio.dumps(corpus.report, sort_keys=True, indent=2, ensure_ascii=False) + "\n")


def load_corpus(workdir: str | os.PathLike[str]) -> Corpus:
    """``WORK/corpus.parquet`` (checked: readable, the corpus columns) and its ingest report, if any."""
    path = Path(workdir) / CORPUS_FILE
    table = _read_table(path, workdir)
    return Corpus(table, report=load_ingest_report(workdir), sha256=sha256_file(path))


def _read_table(path: Path, workdir: str | os.PathLike[str]) -> pa.Table:
    if not path.is_file():
        raise MvlsibError(f"{path}: no corpus here; run `mvlsib-build ingest --workdir {workdir}` first.")
    table = readers.read_parquet("corpus_parquet", path, types=CORPUS_TYPES)
    if tuple(table.column_names) != CORPUS_COLUMNS:
        raise MvlsibError(
            f"{path}: columns are {table.column_names}, expected {list(CORPUS_COLUMNS)}; "
            "run `mvlsib-build ingest` again."
        )
    for name in CORPUS_COLUMNS:  # the stages index by these values: a gap or a wild id is refused here
        if (nulls := table.column(name).null_count) > 0:
            raise MvlsibError(f"{path}: column {name!r} has {nulls} empty value(s); run `mvlsib-build ingest` again.")
    bad = pc.match_substring_regex(table.column("text"), textnorm.CONTROL_IN_TEXT_RE2)
    if table.num_rows and pc.any(bad).as_py():  # the ingest rule, for a corpus made or edited by other means
        row = pc.index(bad, True).as_py()
        problem = textnorm.control_problem(table.column("text")[row].as_py())
        raise MvlsibError(
            f"{path}: the text of {table.column('language')[row].as_py()} index_id "
            f"{table.column('index_id')[row].as_py()} {problem} Run `mvlsib-build ingest` again."
        )
    if table.num_rows:
        low, high = pc.min_max(table.column("index_id")).values()
        if low.as_py() < 0 or high.as_py() > MAX_INDEX_ID:
            raise MvlsibError(
                f"{path}: column 'index_id' holds {low.as_py() if low.as_py() < 0 else high.as_py()}, outside "
                f"0..{MAX_INDEX_ID} (a Flores sentence number); run `mvlsib-build ingest` again."
            )
    return table


def load_ingest_report(workdir: str | os.PathLike[str]) -> dict:
    """``ingest_report.json`` ({} when there is none: a corpus written by other means)."""
    path = Path(workdir) / INGEST_REPORT_FILE
    if not path.is_file():
        return {}
    return readers.read_json("work_report", path)


def corpus_texts(corpus: Corpus, where: str = CORPUS_FILE) -> tuple[list[int], dict[str, pa.Array]]:
    """Sorted sentence ids and, per language, its texts as an arrow array in that id order."""
    table = corpus.table.select(["language", "index_id", "text"])
    table = table.sort_by([("language", "ascending"), ("index_id", "ascending")])
    if not table.num_rows:
        raise MvlsibError(f"{where}: the corpus is empty; re-run `mvlsib-build ingest`")
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
    out: dict[str, pa.Array] = {}
    for lang, s, e in bounds:
        lang_ids = ids.slice(s, e - s).combine_chunks()
        if not lang_ids.equals(ref_ids):
            raise MvlsibError(
                f"{where}: language {lang} has different sentence ids than {first_lang}; "
                "re-run `mvlsib-build ingest` (it checks every language against English)"
            )
        lang_texts = texts.slice(s, e - s).combine_chunks()
        if pc.any(pc.is_null(lang_texts)).as_py():
            raise MvlsibError(f"{where}: language {lang} has missing texts; re-run `mvlsib-build ingest`")
        out[lang] = lang_texts
    return [int(x) for x in ref_ids.to_pylist()], out
