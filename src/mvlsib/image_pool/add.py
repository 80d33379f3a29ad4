"""`images add`: normalise one image and append it to a pool, atomically."""

from __future__ import annotations

import contextlib
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from mvlsib.atomic import atomic_path
from mvlsib.errors import MvlsibError
from mvlsib.image_pool.fetch import DEFAULT_MAX_BYTES, DEFAULT_TIMEOUT_S, read_source
from mvlsib.image_pool.licenses import judge_license
from mvlsib.image_pool.normalize import DEFAULT_BOX, DEFAULT_MAX_PIXELS, normalize_image
from mvlsib.image_pool.rows import new_row, refuse_problems, stored_url
from mvlsib.limits import MIN_SIDE
from mvlsib.release_format.mvl_sib import topic_slug
from mvlsib.workdir.pool_manifest import MANIFEST_NAME, ManifestRow, pool_lock, read_manifest, write_manifest

DEFAULT_MIN_SIDE = MIN_SIDE


@dataclass(frozen=True)
class AddRequest:
    source: str
    topic: str
    license: str
    author: str
    source_url: str
    title: str = ""
    image_id: str = ""
    box: tuple[int, int] = DEFAULT_BOX
    fmt: str = "auto"
    min_side: int = DEFAULT_MIN_SIDE
    max_pixels: int = DEFAULT_MAX_PIXELS
    max_bytes: int = DEFAULT_MAX_BYTES
    timeout: float = DEFAULT_TIMEOUT_S


def next_image_id(rows: list[ManifestRow], topic: str) -> str:
    """``<topic_slug>_<n>`` with n one above the highest n used for the topic's slug."""
    slug = topic_slug(topic)
    used = [int(m.group(1)) for r in rows if (m := re.fullmatch(re.escape(slug) + r"_(\d+)", r.image_id))]
    return f"{slug}_{max(used) + 1 if used else 0}"


_OPTION_OF = {
    "image_id": "--image-id",
    "topic": "--topic",
    "author": "--author",
    "source_url": "--source-url",
    "license": "--license",
    "title": "--title",
}


def _fields(req: AddRequest, image_id: str, *, file: str, sha256: str, extra: dict[str, str]) -> dict[str, str]:
    """The manifest row ``req`` makes, as :func:`rows.new_row` takes it."""
    title = {"title": req.title} if req.title or "title" in extra else {}
    return {
        "image_id": image_id,
        "topic": req.topic,
        "file": file,
        "license": judge_license(req.license).expression or req.license,
        "author": req.author.strip(),
        "source_url": stored_url(req.source_url),
        "sha256": sha256,
        **extra,
        **title,
    }


def _option(field: str) -> str:
    return _OPTION_OF.get(field, field)


def _validate(req: AddRequest, rows: list[ManifestRow]) -> str:
    # The row's rules (rows.py) decide, as they do for `images check` and `validate`: a row added
    # here never fails there. The file name and hash are not known yet; their stand-ins are valid.
    if not req.image_id:  # the id is made from the topic: a bad topic is said as itself, not as the id
        stand_in = _fields(req, "derived_0", file="derived/derived_0.jpg", sha256="0" * 64, extra={})
        refuse_problems(stand_in, _option)
    image_id = req.image_id or next_image_id(rows, req.topic)
    provisional = _fields(req, image_id, file=f"{topic_slug(req.topic)}/{image_id}.jpg", sha256="0" * 64, extra={})
    refuse_problems(provisional, _option)
    if any(r.image_id == image_id for r in rows):
        raise MvlsibError(f"image id {image_id!r} is already in the pool; choose another --image-id or remove the row")
    return image_id


def add_image(pool: str | Path, req: AddRequest, *, create: bool = True) -> ManifestRow:
    """Normalise ``req.source`` into ``pool`` and append its manifest row.

    Nothing changes on failure: the image is written under a temporary name and renamed,
    then the manifest is replaced atomically; if that fails the new image is removed. The
    pool is locked from reading the manifest to replacing it.
    """
    pool = Path(pool)
    _validate(req, _rows(pool, create))  # fail fast, before any download
    data = read_source(req.source, timeout=req.timeout, max_bytes=req.max_bytes)
    norm = normalize_image(data, box=req.box, fmt=req.fmt, max_pixels=req.max_pixels, what=req.source)
    if min(norm.width, norm.height) < req.min_side:
        raise MvlsibError(
            f"{req.source}: {norm.width}x{norm.height} after fitting into {req.box[0]}x{req.box[1]} "
            f"has a shorter side under {req.min_side} px; use a larger image"
        )
    # Read, choose the id, write: one process at a time, or two adds lose a manifest row (and an
    # import making the pool anew would move this image aside with its old folder).
    with pool_lock(pool):
        return _add_locked(pool, req, norm, create)


def _rows(pool: Path, create: bool) -> list[ManifestRow]:
    if (pool / MANIFEST_NAME).is_file():
        return read_manifest(pool)
    if create:
        return []
    raise MvlsibError(f"{pool}: no {MANIFEST_NAME}; create the pool first")


def _add_locked(pool: Path, req: AddRequest, norm, create: bool) -> ManifestRow:
    rows = _rows(pool, create)
    image_id = _validate(req, rows)
    sha = hashlib.sha256(norm.data).hexdigest()
    dup = next((r for r in rows if r.sha256 == sha), None)
    if dup is not None:
        raise MvlsibError(f"{req.source}: identical to {dup.image_id} already in the pool")
    rel = f"{topic_slug(req.topic)}/{image_id}{norm.extension}"
    target = pool / rel
    if target.exists():
        raise MvlsibError(f"{target} already exists but no manifest row names it; move it away first")
    extra_keys: list[str] = []
    for r in rows:
        extra_keys += [k for k in r.extra if k not in extra_keys]
    row = new_row(_fields(req, image_id, file=rel, sha256=sha, extra=dict.fromkeys(extra_keys, "")), _option)
    with atomic_path(target) as tmp:
        tmp.write_bytes(norm.data)
    try:
        write_manifest(pool, [*rows, row])
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
        with contextlib.suppress(OSError):
            target.parent.rmdir()  # only succeeds if this add created it and left it empty
        raise
    return row
