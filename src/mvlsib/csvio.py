"""The one reader of a user's CSV file (pool manifest, licence facts, groupings, language metadata,
scores, topic names).

Every CSV goes through ``read_dicts`` (a file) or ``parse_dicts`` (bytes already read within a
bound): at most ``MAX_BYTES`` of a regular file (a FIFO, a device or ``/dev/zero`` is refused by
what was read), UTF-8 with or without the byte-order mark spreadsheet programs save, and any
``csv.Error`` (an unclosed quote, a field over the csv module's limit) as one line naming the file
and the line. ``tests/architecture/test_one_reader.py`` finds a ``csv.reader``/``DictReader``
anywhere else.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from . import escape, readers
from .errors import MvlsibError

# A grouping or metadata table is a few hundred lines; a pool manifest a few thousand.
MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class CsvRows:
    """A CSV file read whole: its header and its records, each with the line it ends on."""

    source: str
    fieldnames: list[str]
    records: list[tuple[int, dict]] = field(repr=False)

    def __iter__(self) -> Iterator[tuple[int, dict]]:
        return iter(self.records)


def read_dicts(path: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_BYTES, fix: str = "") -> CsvRows:
    """The CSV file ``path`` (``what`` it is, for messages: "the grouping CSV") as ``CsvRows``."""
    data = readers.read_limited(path, max_bytes, fix=fix or f"check that it is {what}")
    return parse_dicts(data, os.fspath(path), what)


def parse_dicts(data: bytes, source: str, what: str, *, fields_checked: bool = False) -> CsvRows:
    """``data`` (the bytes of ``source``) as ``CsvRows``; bad text or CSV is one ``MvlsibError`` line,
    and so is a control character in any cell, unless ``fields_checked``: the caller's schema checks
    every field and reports each (the pool manifest: ``images check`` lists every row at fault)."""
    try:
        # utf-8-sig: a spreadsheet's byte-order mark would otherwise stick to the first column's name.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MvlsibError(
            f"{source}: {what} is not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
        ) from None
    # newline="": the csv module handles line endings, including newlines inside quoted fields.
    reader = csv.DictReader(io.StringIO(text, newline=""))
    records: list[tuple[int, dict]] = []
    try:
        fieldnames = list(reader.fieldnames or [])
        for record in reader:
            records.append((reader.line_num, record))
    except csv.Error as exc:
        # line_num counts the lines read whole: the one the error is on is the next
        raise MvlsibError(
            f"{source}, line {reader.line_num + 1}: {what} is malformed CSV ({exc}); check its quoting"
        ) from None
    twice = sorted({n for n in fieldnames if fieldnames.count(n) > 1 and n.strip()})
    if twice:  # DictReader would keep the last column of the name and drop the other silently
        raise MvlsibError(f"{source}, line 1: {what} has the column {twice[0]!r} more than once; keep one of them")
    for lineno, record in [] if fields_checked else [(1, dict.fromkeys(fieldnames, "")), *records]:
        for name, value in record.items():
            for cell in (name, *(value if isinstance(value, list) else [value])):
                if isinstance(cell, str) and (bad := _CONTROL.search(cell)):
                    raise MvlsibError(
                        f"{source}, line {lineno}: {what} holds a control character (U+{ord(bad.group()):04X}) in "
                        f"{'the column name' if cell is name else 'column ' + repr(name)}; a value that reaches a "
                        "terminal, a figure or a file must not act on it: remove it"
                    )
    return CsvRows(source, fieldnames, records)


# C0 and C1 controls (tab and line breaks included: no value of these tables spans lines) and the
# bidirectional embeddings, overrides and isolates, which reorder what follows; the marks
# (U+200E, U+200F) that right-to-left text legitimately holds stay.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def write_dicts(fh: IO[str], rows: Iterable[Mapping[str, Any]], fields: Sequence[str]) -> None:
    """A table written as CSV, every header and cell through ``escape.csv_cell`` (a value starting like
    a formula is text in a spreadsheet; a control or bidi character is shown as an escape); None is empty.
    The one CSV writer of tables that hold others' values (run names, model ids, labels)."""
    w = csv.DictWriter(fh, fieldnames=[escape.csv_cell(f) for f in fields], lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({escape.csv_cell(k): ("" if r.get(k) is None else escape.csv_cell(r.get(k))) for k in fields})
