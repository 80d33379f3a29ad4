"""The pool manifest: one CSV row per image (``image_id, topic, file, license, author, source_url, sha256``).

Extra columns (``title``, ``licence_evidence``, ...) are kept as they are so that a
curator's notes survive a round trip through the toolkit.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

from mvlsib import csvio, readers
from mvlsib.atomic import atomic_open, replacing
from mvlsib.errors import MvlsibError
from mvlsib.workdir import BUNDLED_POOL, POOL_MANIFEST_FILE

MANIFEST_NAME = POOL_MANIFEST_FILE
COLUMNS: tuple[str, ...] = ("image_id", "topic", "file", "license", "author", "source_url", "sha256")


@dataclass(frozen=True)
class ManifestRow:
    image_id: str
    topic: str
    file: str
    license: str
    author: str
    source_url: str
    sha256: str
    extra: dict[str, str] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        # an extra column named like a core one would override it in as_dict and twice in the header
        clash = [k for k in self.extra if k in COLUMNS]
        if clash:
            raise ValueError(f"extra column {clash[0]!r} of image {self.image_id!r} is a core manifest column")

    def as_dict(self) -> dict[str, str]:
        d = {c: getattr(self, c) for c in COLUMNS}
        d.update(self.extra)
        return d


def manifest_path(pool: str | os.PathLike[str]) -> Path:
    pool = Path(pool)
    return pool if pool.suffix == ".csv" else pool / MANIFEST_NAME


@dataclass(frozen=True, eq=False)
class Pool:
    """An image pool as the stages use it, read once (:func:`load_pool`): its folder, the parsed
    rows of its manifest, the manifest's sha256 and the image ids per topic and topic per image."""

    root: Path  # the pool folder (image files are relative to it)
    manifest_file: Path  # its manifest.csv
    rows: tuple[ManifestRow, ...]
    manifest_sha256: str  # of the manifest's bytes (the card and manifest.json record it)
    images_by_topic: Mapping[str, list[str]]  # topic -> image ids, sorted (the sampler's input order)
    image_topics: Mapping[str, str]  # image id -> topic, in manifest order


PoolLike = Pool | str | os.PathLike
"""What a stage accepts as its pool: a :class:`Pool`, or the pool folder / manifest file to load."""


def load_pool(pool: str | os.PathLike[str]) -> Pool:
    """Read the pool at ``pool`` (the folder or its manifest file): the manifest file is read once,
    hashed and parsed from the same bytes."""
    path = manifest_path(pool)
    data = _manifest_bytes(path)
    rows = tuple(_parse_manifest(path, data))
    return Pool(
        root=path.parent,
        manifest_file=path,
        rows=rows,
        manifest_sha256=hashlib.sha256(data).hexdigest(),
        images_by_topic=images_by_topic(list(rows)),
        image_topics={r.image_id: r.topic for r in rows},
    )


def as_pool(pool: PoolLike) -> Pool:
    """``pool`` itself when it is a :class:`Pool`, else the pool loaded from that path (the edge where
    the Python API's paths become values)."""
    return pool if isinstance(pool, Pool) else load_pool(pool)


def read_manifest(pool: str | os.PathLike[str]) -> list[ManifestRow]:
    """Read a pool's manifest. ``pool`` is the pool folder or the manifest file itself."""
    path = manifest_path(pool)
    return _parse_manifest(path, _manifest_bytes(path))


def _manifest_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise MvlsibError(
            f"{path}: no image-pool manifest here. Pass --pool with a folder that holds "
            f"{MANIFEST_NAME} (or leave --pool out for the bundled demo pool), or create one "
            "with `python tools/demo_pool.py --out DIR` from a checkout."
        )
    kind = readers.KINDS["pool_manifest"]
    return readers.read_limited(path, kind.max_bytes, fix=kind.fix)


def _parse_manifest(path: Path, data: bytes) -> list[ManifestRow]:
    return _read_rows(path, csvio.parse_dicts(data, str(path), "the pool manifest", fields_checked=True))


def _read_rows(path: Path, table: csvio.CsvRows) -> list[ManifestRow]:
    missing = [c for c in COLUMNS if c not in table.fieldnames]
    if missing:
        raise MvlsibError(f"{path}: header lacks column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}")
    rows = []
    for lineno, (_, rec) in enumerate(table, start=2):  # row numbers, as the duplicate check below counts
        if None in rec:
            raise MvlsibError(
                f"{path}, line {lineno}: more fields than header columns; quote fields that contain commas"
            )
        values = {c: (rec.get(c) or "").strip() for c in COLUMNS}
        if not values["image_id"]:
            raise MvlsibError(f"{path}, line {lineno}: empty image_id")
        extra = {k: v for k, v in rec.items() if k not in COLUMNS and k is not None}
        rows.append(ManifestRow(**values, extra=extra))
    _refuse_twice(path, rows)
    return rows


def _refuse_twice(path: Path, rows: list[ManifestRow]) -> None:
    """An image_id named by two rows: refused when the manifest is read and before it is written (two rows
    naming one file are a finding of `images check`, which lists them)."""
    for column in ("image_id",):
        seen: dict[str, int] = {}
        for i, row in enumerate(rows):
            value = getattr(row, column)
            if value in seen:
                raise MvlsibError(f"{path}: {column} {value!r} appears twice (rows {seen[value] + 2} and {i + 2})")
            seen[value] = i


# How long a pool writer waits for another (an add takes a second; an import a few minutes).
POOL_LOCK_WAIT_S = 60.0


def pool_lock(pool: str | os.PathLike[str], *, wait: float | None = None):
    """The one lock of an image pool, held by every command that writes one from its first read to its
    last write: the lock beside the folder that ``atomic.staged_folder`` takes to make it anew (an
    ``images import-release`` into ``P``), so an ``images add`` into ``P`` meanwhile waits for it, and
    the import never moves an added image aside with the old folder. Re-entrant; ``write_manifest``
    takes it too. Another holder beyond ``wait`` seconds (default ``POOL_LOCK_WAIT_S``): ``MvlsibError``
    naming it."""
    return replacing(pool, wait=POOL_LOCK_WAIT_S if wait is None else wait)


def write_manifest(pool: str | Path, rows: list[ManifestRow]) -> Path:
    """Write rows sorted by (topic, numeric suffix of image_id) so diffs stay small and stable, under the
    pool's lock (held already by the command that read the rows)."""
    path = manifest_path(pool)
    _refuse_twice(path, rows)
    with pool_lock(path.parent):
        return _write_rows(path, rows)


def _write_rows(path: Path, rows: list[ManifestRow]) -> Path:
    extra_cols: list[str] = []
    for row in rows:
        for k in row.extra:
            if k not in extra_cols:
                extra_cols.append(k)
    with atomic_open(path) as fh:
        writer = csv.DictWriter(fh, fieldnames=[*COLUMNS, *extra_cols], lineterminator="\n")
        writer.writeheader()
        for row in sorted(rows, key=_sort_key):
            writer.writerow({**{k: "" for k in extra_cols}, **row.as_dict()})
    return path


def image_order(topic: str, image_id: str) -> tuple[str, int, str]:
    """The order images are listed in everywhere (manifest, card, credits, images parquet): topic,
    then the id's numeric suffix (``sports_2`` before ``sports_10``)."""
    _, _, num = image_id.rpartition("_")
    return (topic, int(num) if num.isdigit() else -1, image_id)


def _sort_key(row: ManifestRow) -> tuple[str, int, str]:
    return image_order(row.topic, row.image_id)


def pool_root(pool: str | Path) -> Path:
    """The pool folder of ``pool`` (the folder, or the folder of a manifest file)."""
    return manifest_path(pool).parent


def resolve_in_pool(root: Path, rel: str) -> tuple[Path | None, str]:
    """The file a manifest ``file`` value names, or None with the reason it is refused.

    The one place that decides which paths a manifest may name: relative, no ``..``, and not
    leading out of the pool folder through a symlink.
    """
    if not rel:
        return None, "empty file field"
    if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute() or PureWindowsPath(rel).drive:
        return None, f"absolute path {rel!r}; files must be relative to the pool folder"
    parts = re.split(r"[\\/]", rel)
    if ".." in parts:
        return None, f"path {rel!r} climbs out of the pool folder with '..'"
    path = root / rel
    try:
        real = path.resolve(strict=False)
        inside = real.is_relative_to(root.resolve())
    except (OSError, RuntimeError) as exc:  # symlink loops
        return None, f"path {rel!r} cannot be resolved ({exc})"
    if not inside:
        return None, f"path {rel!r} leads outside the pool folder (symlink to {real})"
    return path, ""


def pool_file(pool: str | Path, row: ManifestRow, lineno: int | None = None) -> Path:
    """The file of a manifest row, or MvlsibError naming the manifest line and why it is refused."""
    path, why = resolve_in_pool(pool_root(pool), row.file)
    if path is None:
        where = f"{manifest_path(pool)}, line {lineno}" if lineno else f"{manifest_path(pool)}: image {row.image_id}"
        raise MvlsibError(f"{where}: file {row.file!r} lies outside the pool folder ({why}); fix the manifest row")
    return path


def images_by_topic(rows: list[ManifestRow]) -> dict[str, list[str]]:
    """Image ids per topic, in sorted id order (the sampler's canonical input order)."""
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(row.topic, []).append(row.image_id)
    return {t: sorted(ids) for t, ids in sorted(out.items())}


def sampled_pool(workdir: str | os.PathLike[str], pool: PoolLike | None) -> Pool:
    """The pool ``publish --workdir`` uses: the one ``sample`` recorded in the work folder when none is
    given, and a given one only when its manifest is the recorded one (a release must show the images
    its instances were drawn from, and two pools share ids such as ``sports_0``)."""
    from mvlsib.workdir.instances import recorded_pool

    recorded = recorded_pool(workdir)
    if recorded is None:  # a work folder of an older toolkit: the caller's pool, as before
        return as_pool(BUNDLED_POOL if pool is None else pool)
    where, sha256 = recorded
    if pool is None:
        if not Path(where).exists():
            raise MvlsibError(
                f"{workdir}: sample used the pool {where}, which is gone; give it with --pool (or sample again)"
            )
        pool = where
    chosen = as_pool(pool)
    if chosen.manifest_sha256 != sha256:
        raise MvlsibError(
            f"--pool {chosen.root}: its manifest.csv is not the one sample used ({where}, manifest sha256 "
            f"{sha256[:12]}); give --pool {where}, or sample again with this pool"
        )
    return chosen
