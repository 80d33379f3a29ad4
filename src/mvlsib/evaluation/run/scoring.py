"""Metrics from predictions: per language x task x k, macro averages and groups.

- ``accuracy``: relaxed accuracy (the paper's), correct / n; a format error counts as wrong.
- ``strict_accuracy``: the same with the strict parser.
- ``format_error_rate``: share of responses without a readable option letter (Kaleidoscope).
- ``valid_accuracy``: correct / responses with a readable letter (``None`` when there are none).

Groups out of the box: script, family and resource class from the packaged language
metadata (``languages``); more from a user's grouping CSV or metadata override.

Macro averages weigh every language the same: the mean over languages of the
per-language figure, per task and k. Accuracy carries a bootstrap confidence interval
(``ci_low``, ``ci_high``; the method is in ``stats`` and stored under ``ci`` in metrics.json). Groups are macro averages over the languages of
a group: by script (the SIB-200 code's suffix, ``urd_Arab`` -> ``Arab``) and by any
user grouping CSV (columns ``language,group``, e.g. resource tiers).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from .._compat import TASKS, MvlsibError, read_csv
from .languages import groupings
from .parsing import parse_letter
from .prompts import LETTERS
from .stats import cell_interval, macro_interval, method_note

METRICS = ("accuracy", "strict_accuracy", "format_error_rate", "valid_accuracy")
TASK_ORDER = {name: n for n, name in enumerate(TASKS)}


@dataclass
class Cell:
    language: str
    task: str
    k: int
    n: int
    accuracy: float
    strict_accuracy: float
    format_error_rate: float
    valid_accuracy: float | None
    ci_low: float | None = None
    ci_high: float | None = None


def _cell_key(rec: Mapping) -> tuple:
    return (rec["language"], TASK_ORDER.get(rec["task"], 9), rec["task"], int(rec["k"]))


def per_language(records: Iterable[Mapping], mode: str = "relaxed") -> list[Cell]:
    """One cell per (language, task, k), sorted by language, task, k. Letters are re-read
    from the responses, so changing the parse mode never needs a rerun."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # n, correct, strict, valid
    for rec in records:
        gold = LETTERS[int(rec["label"])]
        letter = parse_letter(rec["response"], mode)
        c = counts[_cell_key(rec)]
        c[0] += 1
        c[1] += letter == gold
        c[2] += parse_letter(rec["response"], "strict") == gold
        c[3] += letter is not None
    out = []
    for key in sorted(counts):
        language, _, task, k = key
        n, correct, strict, valid = counts[key]
        lo, hi = cell_interval(correct, n, (language, task, k))
        out.append(
            Cell(
                language, task, k, n, correct / n, strict / n, 1 - valid / n, correct / valid if valid else None, lo, hi
            )
        )
    return out


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def macro(cells: Iterable[Cell], languages: Iterable[str] | None = None) -> list[dict]:
    """Macro averages over languages per (task, k), optionally over a subset of languages."""
    keep = set(languages) if languages is not None else None
    by_tk: dict[tuple, list[Cell]] = defaultdict(list)
    for c in cells:
        if keep is None or c.language in keep:
            by_tk[(TASK_ORDER.get(c.task, 9), c.task, c.k)].append(c)
    out = []
    for key in sorted(by_tk):
        group = by_tk[key]
        row = {"task": key[1], "k": key[2], "n_languages": len(group), "n": sum(c.n for c in group)}
        for m in METRICS:
            row[m] = _mean([getattr(c, m) for c in group])
        row["ci_low"], row["ci_high"] = macro_interval(
            [(round(c.accuracy * c.n), c.n) for c in group], (key[1], key[2], *sorted(c.language for c in group))
        )
        out.append(row)
    return out


def script_of(language: str) -> str:
    """Script subtag of a SIB-200 language code (``eng_Latn`` -> ``Latn``)."""
    return language.rsplit("_", 1)[1] if "_" in language else "unknown"


def read_groups_csv(path: str | Path) -> dict[str, str]:
    """A grouping CSV with columns ``language`` and ``group`` -> {language: group}."""
    path = Path(path)
    table = read_csv(path, "the grouping CSV")
    missing = {"language", "group"} - set(table.fieldnames)
    if missing:
        raise MvlsibError(
            f"{path}: grouping CSV needs the columns language,group; missing {', '.join(sorted(missing))}"
        )
    out: dict[str, str] = {}
    for lineno, row in table:
        lang, group = (row["language"] or "").strip(), (row["group"] or "").strip()
        if not lang or not group:
            raise MvlsibError(f"{path}, line {lineno}: empty language or group")
        if lang in out and out[lang] != group:
            raise MvlsibError(f"{path}, line {lineno}: {lang} is already in group {out[lang]!r}")
        out[lang] = group
    return out


def grouped(cells: list[Cell], mapping: Mapping[str, str]) -> list[dict]:
    """Macro averages per group of languages; languages missing from ``mapping`` are left out."""
    members: dict[str, set[str]] = defaultdict(set)
    for c in cells:
        if c.language in mapping:
            members[mapping[c.language]].add(c.language)
    out = []
    for group in sorted(members):
        for row in macro(cells, members[group]):
            out.append({"group": group, **row})
    return out


def compute_metrics(
    records: Iterable[Mapping],
    mode: str = "relaxed",
    groups: Mapping[str, Mapping[str, str]] | None = None,
    metadata: Mapping[str, Mapping[str, str]] | None = None,
) -> dict:
    """The content of ``metrics.json``; ``metadata`` overrides rows of the language table."""
    cells = per_language(records, mode)
    langs = sorted({c.language for c in cells})
    all_groups = {name: grouped(cells, mapping) for name, mapping in groupings(langs, metadata).items()}
    for name, mapping in (groups or {}).items():
        all_groups[name] = grouped(cells, mapping)
    return {
        "parse_mode": mode,
        "ci": method_note(),
        "n_predictions": sum(c.n for c in cells),
        "languages": langs,
        "per_language": [asdict(c) for c in cells],
        "macro": macro(cells),
        "groups": all_groups,
    }
