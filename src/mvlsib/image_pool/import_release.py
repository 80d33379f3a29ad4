"""`images import-release`: turn an upstream release's image folder into a pool.

Upstream layout: ``data/images/sib200/<category>_<i>.jpg`` with categories ``entertainment,
geography, health, politics, science, sports, travel`` (``science`` is SIB-200's
``science/technology``). Licence facts are not in that folder, so they come from a CSV with
one row per file: ``file`` (file name, e.g. ``science_3.jpg``), ``license``, ``author``,
``source_url`` and optionally ``title``; other columns are kept in the manifest, except one named like
a column the import fills in itself (``image_id``, ``topic``, ``sha256``, ...), which is refused.
Every row is held to the row rules of `images check` (``rows.py``) before any image is written.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from mvlsib.atomic import staged_folder
from mvlsib.csvio import read_dicts
from mvlsib.errors import MvlsibError
from mvlsib.image_pool.licenses import judge_license
from mvlsib.image_pool.normalize import DEFAULT_BOX, DEFAULT_MAX_PIXELS, normalize_image
from mvlsib.image_pool.rows import new_row, row_problems, stored_url
from mvlsib.progress import bar
from mvlsib.release_format.mvl_sib import topic_slug
from mvlsib.workdir.pool_manifest import COLUMNS, MANIFEST_NAME, ManifestRow, write_manifest

UPSTREAM_SUBDIR = Path("data/images/sib200")
CATEGORY_TO_TOPIC = {
    "entertainment": "entertainment",
    "geography": "geography",
    "health": "health",
    "politics": "politics",
    "science": "science/technology",
    "sports": "sports",
    "travel": "travel",
}
_NAME_RE = re.compile(r"(?P<cat>[a-z]+)_(?P<i>[0-9]{1,9})\.(?:jpe?g|png|webp)", re.IGNORECASE)
_KEY_COLUMNS = ("file", "filename", "image", "path")
_FACT_COLUMNS = ("license", "author", "source_url")
# Columns the import writes itself: a licence CSV column of one of these names would override it.
_UPSTREAM_COLUMN = "upstream_file"
RESERVED_COLUMNS = (*COLUMNS, _UPSTREAM_COLUMN)


def find_image_dir(release: Path) -> Path:
    for cand in (release / UPSTREAM_SUBDIR, release / "sib200", release):
        if cand.is_dir() and any(_NAME_RE.fullmatch(p.name) for p in cand.iterdir()):
            return cand
    raise MvlsibError(
        f"{release}: no images named <category>_<i>.jpg under {UPSTREAM_SUBDIR} (the upstream "
        "release layout); pass the release folder"
    )


def read_licence_facts(path: Path) -> dict[str, dict[str, str]]:
    """CSV rows keyed by file name (the basename of the key column)."""
    table = read_dicts(path, "the licence CSV")
    cols = [c.strip() for c in table.fieldnames]
    keys = [c for c in _KEY_COLUMNS if c in cols]
    if len(keys) > 1:
        raise MvlsibError(f"{path}: columns {keys[0]!r} and {keys[1]!r} both name the image file; keep one of them")
    key = keys[0] if keys else None
    missing = [c for c in ("license", "author", "source_url") if c not in cols]
    if key is None or missing:
        need = ([f"one of {'/'.join(_KEY_COLUMNS)}"] if key is None else []) + missing
        raise MvlsibError(
            f"{path}: header lacks {', '.join(need)}; expected columns file, license, author, source_url[, title]"
        )
    reserved = [c for c in cols if c in RESERVED_COLUMNS and c not in (key, *_FACT_COLUMNS)]
    if reserved:
        raise MvlsibError(
            f"{path}: column {reserved[0]!r} names a pool-manifest column the import fills in itself; "
            "rename or remove that column"
        )
    facts: dict[str, dict[str, str]] = {}
    for lineno, rec in table:
        rec = {(k or "").strip(): v.strip() for k, v in rec.items() if k is not None and isinstance(v, str)}
        name = Path(rec.get(key, "").replace("\\", "/")).name
        if not name:
            raise MvlsibError(f"{path}, line {lineno}: empty {key}")
        if name in facts:
            raise MvlsibError(f"{path}, line {lineno}: {name} appears twice")
        facts[name] = rec | {"_key": key, "_line": str(lineno)}
    return facts


def _image_id(m: re.Match) -> str:
    """The pool's id of an upstream file name (``sports_01.jpg`` and ``sports_1.jpg`` both give ``sports_1``)."""
    return f"{topic_slug(CATEGORY_TO_TOPIC[m.group('cat').lower()])}_{int(m.group('i'))}"


def _check_new_pool(pool: Path) -> None:
    if pool.exists() and (not pool.is_dir() or any(pool.iterdir())):
        raise MvlsibError(f"{pool}: exists and is not empty (or not a folder); import into a new folder")


def _fields(image_id: str, topic: str, rec: dict[str, str], upstream: str, *, file: str, sha256: str) -> dict[str, str]:
    """The manifest row of one upstream file and its licence facts (``rec``)."""
    extra = {k: v for k, v in rec.items() if k not in (*_FACT_COLUMNS, rec["_key"], "_key", "_line")}
    verdict = judge_license(rec["license"])
    return {
        "image_id": image_id,
        "topic": topic,
        "file": file,
        "license": verdict.expression or rec["license"],
        "author": rec["author"],
        "source_url": stored_url(rec["source_url"]),
        "sha256": sha256,
        **extra,
        _UPSTREAM_COLUMN: upstream,
    }


def _where(licences_csv: str | Path, rec: dict[str, str]):
    """How a problem of a row's field is named: the licence CSV, its line and column."""
    return lambda field: (
        f"{licences_csv}, line {rec['_line']}, {rec['_key'] if field in ('image_id', 'topic') else field}"
    )


def _row_problems(
    files: list[Path], named: dict[Path, re.Match], facts: dict[str, dict[str, str]], licences_csv
) -> list[str]:
    """The row rules of `images check`, applied to each row before any image is read (the file and its
    hash stand in: they are the import's own)."""
    out = []
    for p in files:
        m, rec = named[p], facts.get(p.name)
        if rec is None or m.group("cat").lower() not in CATEGORY_TO_TOPIC:
            continue  # reported above
        image_id, topic = _image_id(m), CATEGORY_TO_TOPIC[m.group("cat").lower()]
        fields = _fields(image_id, topic, rec, p.name, file=f"{topic_slug(topic)}/{image_id}.jpg", sha256="0" * 64)
        where = _where(licences_csv, rec)
        out += [f"{where(e.field)}: {e.message}" for e in row_problems(fields) if e.severity == "error"]
    return out


def import_release(
    release: str | Path,
    licences_csv: str | Path,
    pool: str | Path,
    *,
    box: tuple[int, int] = DEFAULT_BOX,
    fmt: str = "auto",
    max_pixels: int = DEFAULT_MAX_PIXELS,
    progress: bool = True,
) -> list[ManifestRow]:
    """Build a new pool at ``pool`` from ``release``; the folder appears only when complete."""
    release, pool = Path(release), Path(pool)
    _check_new_pool(pool)
    src_dir = find_image_dir(release)
    facts = read_licence_facts(Path(licences_csv))
    named = {p: m for p in src_dir.iterdir() if (m := _NAME_RE.fullmatch(p.name))}
    files = sorted(named, key=lambda p: (p.name.split("_")[0], int(named[p].group("i"))))
    problems = []
    for p in files:
        cat = named[p].group("cat").lower()
        if cat not in CATEGORY_TO_TOPIC:
            problems.append(f"{p.name}: unknown category {cat!r} (expected {', '.join(CATEGORY_TO_TOPIC)})")
        if p.name not in facts:
            problems.append(f"{p.name}: no row in {licences_csv}; add its license, author and source_url")
    ids: dict[str, str] = {}
    for p in files:
        if named[p].group("cat").lower() in CATEGORY_TO_TOPIC:
            image_id = _image_id(named[p])
            if image_id in ids:
                problems.append(f"{ids[image_id]} and {p.name} would both become {image_id}; rename one of them")
            ids.setdefault(image_id, p.name)
    unused = sorted(set(facts) - {p.name for p in files})
    problems += [f"{licences_csv}: row for {n} but no such image in {src_dir}" for n in unused]
    if problems:
        raise MvlsibError("cannot import the release:", items=problems, shown=len(problems))
    bad_rows = _row_problems(files, named, facts, licences_csv)
    if bad_rows:
        more = f" ({len(bad_rows) - 1} more problem(s) after it)" if len(bad_rows) > 1 else ""
        raise MvlsibError(f"{bad_rows[0]}{more}")

    # The stage carries this process's pid (``.POOL.partial-PID``): a killed import's stage is
    # removed by the next run, and the pool appears only when complete.
    with staged_folder(pool, check=_check_new_pool) as tmp:
        rows = []
        for p in bar(files, desc="importing images", unit="img", enabled=progress):
            m = named[p]
            topic = CATEGORY_TO_TOPIC[m.group("cat").lower()]
            image_id = _image_id(m)
            norm = normalize_image(p, box=box, fmt=fmt, max_pixels=max_pixels)
            rel = f"{topic_slug(topic)}/{image_id}{norm.extension}"
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(norm.data)
            fields = _fields(
                image_id, topic, facts[p.name], p.name, file=rel, sha256=hashlib.sha256(norm.data).hexdigest()
            )
            rows.append(new_row(fields, _where(licences_csv, facts[p.name])))
        write_manifest(tmp / MANIFEST_NAME, rows)
    return rows
