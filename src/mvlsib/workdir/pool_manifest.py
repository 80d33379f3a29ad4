"""The pool manifest: one CSV row per image (``image_id, topic, file, license, author, source_url, sha256``).

Extra columns (``title``, ``licence_evidence``, ...) are kept as they are so that a
curator's notes survive a round trip through the toolkit.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from mvlsib.atomic import atomic_open
from mvlsib.errors import MvlsibError
from mvlsib.workdir import POOL_MANIFEST_FILE

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

    def as_dict(self) -> dict[str, str]:
        d = {c: getattr(self, c) for c in COLUMNS}
        d.update(self.extra)
        return d


def manifest_path(pool: str | Path) -> Path:
    pool = Path(pool)
    return pool if pool.suffix == ".csv" else pool / MANIFEST_NAME


def read_manifest(pool: str | Path) -> list[ManifestRow]:
    """Read a pool's manifest. ``pool`` is the pool folder or the manifest file itself."""
    path = manifest_path(pool)
    if not path.is_file():
        raise MvlsibError(
            f"{path}: no image-pool manifest here. Pass --pool with a folder that holds "
            f"{MANIFEST_NAME} (the repository's bundled pool is 'image_pool'), or create one "
            "with `mvlsib-build images demo-pool --out DIR`."
        )
    try:
        return _read_rows(path)
    except UnicodeDecodeError as exc:
        raise MvlsibError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); save the manifest as UTF-8") from None
    except csv.Error as exc:
        raise MvlsibError(f"{path}: malformed CSV ({exc}); check the quoting") from None


def _read_rows(path: Path) -> list[ManifestRow]:
    # utf-8-sig: spreadsheet programs save CSV with a byte-order mark.
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise MvlsibError(f"{path}: header lacks column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}")
        rows = []
        for lineno, rec in enumerate(reader, start=2):
            if None in rec:
                raise MvlsibError(f"{path}, line {lineno}: more fields than header columns; quote fields that contain commas")
            values = {c: (rec.get(c) or "").strip() for c in COLUMNS}
            if not values["image_id"]:
                raise MvlsibError(f"{path}, line {lineno}: empty image_id")
            extra = {k: v for k, v in rec.items() if k not in COLUMNS and k is not None}
            rows.append(ManifestRow(**values, extra=extra))
    seen: dict[str, int] = {}
    for i, row in enumerate(rows):
        if row.image_id in seen:
            raise MvlsibError(f"{path}: image_id {row.image_id!r} appears twice (rows {seen[row.image_id] + 2} and {i + 2})")
        seen[row.image_id] = i
    return rows


def write_manifest(pool: str | Path, rows: list[ManifestRow]) -> Path:
    """Write rows sorted by (topic, numeric suffix of image_id) so diffs stay small and stable."""
    path = manifest_path(pool)
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


def _sort_key(row: ManifestRow) -> tuple[str, int, str]:
    stem, _, num = row.image_id.rpartition("_")
    return (row.topic, int(num) if num.isdigit() else -1, row.image_id)


def images_by_topic(rows: list[ManifestRow]) -> dict[str, list[str]]:
    """Image ids per topic, in sorted id order (the sampler's canonical input order)."""
    out: dict[str, list[str]] = {}
    for row in rows:
        out.setdefault(row.topic, []).append(row.image_id)
    return {t: sorted(ids) for t, ids in sorted(out.items())}
