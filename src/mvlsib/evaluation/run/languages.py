"""Language metadata for grouping results: name, ISO 639-3, script, family, resource class.

The table is package data (``data/languages.csv``, one row per SIB-200 / Flores-200 code
plus the Flores+ codes listed in docs/analysis.md) and is bundled into every release's
``evaluate.py``. Columns and sources:

- ``language``, ``name``: the FLORES-200 language table (code and English name, as in the
  FLORES-200 README of facebookresearch/flores; N'Ko from SIB-200).
- ``iso639_3``, ``script``: the two parts of the code (ISO 639-3 and ISO 15924);
  ``script_name``: the ISO 15924 English name of the script.
- ``family``: the top-level family of Glottolog's classification (creoles are grouped as
  ``Creole``; Glottolog does not place them in their lexifier's family).
- ``joshi_class``: the class 0-5 of Joshi et al. (2020), "The State and Fate of Linguistic
  Diversity" (their ``lang2tax.txt`` list), as mapped to ISO 639-3 codes by MaLA-LM/LangResourceAtlas
  (``Joshi-et-al/Joshi-et-al-6-classes.json``), matched to each code by ISO 639-3 code and English
  name (macrolanguage entries such as Arabic, Mandarin, Swahili, Malay only for the standard
  variety); the languages the paper itself names as class examples take the paper's class.
  docs/analysis.md has the matching rules.

A value no source gives is ``unknown``. A user CSV (column ``language`` plus any of the
columns above, or new ones) overrides or extends rows: ``read_overrides``.
"""

from __future__ import annotations

import csv
import io
import pkgutil
from collections.abc import Mapping
from pathlib import Path

from .._compat import MvlsibError, read_csv

COLUMNS = ("language", "name", "iso639_3", "script", "script_name", "family", "joshi_class")
UNKNOWN = "unknown"
# The groupings reports make out of the box: grouping name -> how a row's group is named.
GROUPINGS = {
    "script": lambda row: row["script"],
    "family": lambda row: row["family"],
    "resource": lambda row: UNKNOWN if row["joshi_class"] == UNKNOWN else f"Joshi class {row['joshi_class']}",
}

_TABLE: dict[str, dict[str, str]] | None = None


def table() -> dict[str, dict[str, str]]:
    """The packaged metadata table, code -> row (read once)."""
    global _TABLE
    if _TABLE is None:
        data = pkgutil.get_data(__package__, "data/languages.csv")
        if data is None:  # pragma: no cover - a broken installation
            raise MvlsibError("the language metadata table (data/languages.csv) is missing from the installation")
        _TABLE = {row["language"]: row for row in csv.DictReader(io.StringIO(data.decode("utf-8")))}
    return _TABLE


def info(language: str, overrides: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, str]:
    """Metadata of one code; a code outside the table still gets its ISO 639-3 code and script."""
    row = dict(table().get(language) or {})
    if not row:
        iso, _, script = language.partition("_")
        row = {c: UNKNOWN for c in COLUMNS}
        row.update(language=language, iso639_3=iso or UNKNOWN, script=script or UNKNOWN)
    if overrides and language in overrides:
        row.update({k: v for k, v in overrides[language].items() if v})
    return row


def read_overrides(path: str | Path) -> dict[str, dict[str, str]]:
    """A user's metadata CSV: column ``language`` and any metadata columns -> {code: {column: value}}."""
    path = Path(path)
    table = read_csv(path, "the language metadata CSV")
    if "language" not in table.fieldnames:
        raise MvlsibError(f"{path}: a language metadata CSV needs a 'language' column")
    out: dict[str, dict[str, str]] = {}
    for lineno, row in table:
        code = (row.pop("language") or "").strip()
        if not code:
            raise MvlsibError(f"{path}, line {lineno}: empty language")
        out[code] = {k: v.strip() for k, v in row.items() if k and isinstance(v, str)}
    return out


def groupings(languages, overrides: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, dict[str, str]]:
    """{grouping: {language: group}} for script, family, resource class and every extra override column."""
    rows = {lang: info(lang, overrides) for lang in languages}
    out = {name: {lang: fn(row) for lang, row in rows.items()} for name, fn in GROUPINGS.items()}
    extra = sorted({k for o in (overrides or {}).values() for k in o} - set(COLUMNS))
    for column in extra:
        out[column] = {lang: row.get(column) or UNKNOWN for lang, row in rows.items()}
    return out
