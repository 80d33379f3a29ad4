"""The one way the toolkit opens a user's CSV file (pool manifest, licence facts, groupings, topic names)."""

from __future__ import annotations

import os
from typing import IO


def open_csv(path: str | os.PathLike[str]) -> IO[str]:
    """Open a CSV file for ``csv.reader``/``DictReader``.

    utf-8-sig: spreadsheet programs save CSV with a byte-order mark, which would otherwise
    stick to the first column's name. newline="": the csv module handles line endings,
    including newlines inside quoted fields.
    """
    return open(path, newline="", encoding="utf-8-sig")
