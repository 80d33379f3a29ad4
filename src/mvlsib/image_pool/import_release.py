"""`images import-release`: turn an upstream release's image folder into a pool.

Upstream layout: ``data/images/sib200/<category>_<i>.jpg`` with categories ``entertainment,
geography, health, politics, science, sports, travel`` (``science`` is SIB-200's
``science/technology``). Licence facts are not in that folder, so they come from a CSV with
one row per file: ``file`` (file name, e.g. ``science_3.jpg``), ``license``, ``author``,
``source_url`` and optionally ``title``; other columns are kept in the manifest, except one named like
a column the import fills in itself (``image_id``, ``topic``, ``sha256``, ...), which is refused.
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
        facts[name] = rec | {"_key": key}
    return facts


def _image_id(m: re.Match) -> str:
    """The pool's id of an upstream file name (``sports_01.jpg`` and ``sports_1.jpg`` both give ``sports_1``)."""
    return f"{topic_slug(CATEGORY_TO_TOPIC[m.group('cat').lower()])}_{int(m.group('i'))}"


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
    if pool.exists() and any(pool.iterdir()):
        raise MvlsibError(f"{pool}: exists and is not empty; import into a new folder")
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

    # The stage carries this process's pid (``.POOL.partial-PID``): a killed import's stage is
    # removed by the next run, and the pool appears only when complete.
    with staged_folder(pool) as tmp:
        rows = []
        for p in bar(files, desc="importing images", unit="img", enabled=progress):
            m = named[p]
            topic = CATEGORY_TO_TOPIC[m.group("cat").lower()]
            image_id = _image_id(m)
            norm = normalize_image(p, box=box, fmt=fmt, max_pixels=max_pixels)
            rel = f"{topic_slug(topic)}/{image_id}{norm.extension}"
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(norm.data)
            rec = facts[p.name]
            extra = {k: v for k, v in rec.items() if k not in (*_FACT_COLUMNS, rec["_key"], "_key")}
            extra[_UPSTREAM_COLUMN] = p.name
            verdict = judge_license(rec["license"])
            rows.append(
                ManifestRow(
                    image_id,
                    topic,
                    rel,
                    verdict.expression or rec["license"],
                    rec["author"],
                    rec["source_url"],
                    hashlib.sha256(norm.data).hexdigest(),
                    extra,
                )
            )
        write_manifest(tmp / MANIFEST_NAME, rows)
    return rows
