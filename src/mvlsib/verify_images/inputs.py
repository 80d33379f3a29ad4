"""What verify-images reads: the pool's images and the topic names to ask with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PIL import Image

from mvlsib import readers
from mvlsib.csvio import read_dicts
from mvlsib.errors import MvlsibError
from mvlsib.limits import MAX_PIXELS
from mvlsib.release_format.mvl_sib import TOPICS
from mvlsib.workdir.pool_manifest import manifest_path, pool_file, read_manifest

DEFAULT_LANGUAGE = "eng_Latn"


def read_topic_names(path: str | Path) -> dict[str, tuple[str, ...]]:
    """A CSV with a ``language`` column and one column per topic (SIB spelling or slug).

    Returns language -> the seven names in ``TOPICS`` order, in file order.
    """
    path = Path(path)
    table = read_dicts(path, "the --topic-names CSV")
    header = [h.strip() for h in table.fieldnames]
    columns: dict[str, str] = {}
    for h in header:
        topic = h.replace("_", "/") if h.replace("_", "/") in TOPICS else h
        if topic in TOPICS:
            columns[topic] = h
    missing = [t for t in TOPICS if t not in columns]
    if "language" not in header or missing:
        raise MvlsibError(
            f"{path}, line 1: the header must have a 'language' column and one column per topic "
            f"({', '.join(TOPICS)}; slugs like science_technology work too); "
            f"missing: {', '.join((['language'] if 'language' not in header else []) + missing)}"
        )
    out: dict[str, tuple[str, ...]] = {}
    for lineno, rec in table:
        rec = {(k or "").strip(): v.strip() for k, v in rec.items() if k is not None and isinstance(v, str)}
        lang = rec.get("language", "")
        if not lang:
            raise MvlsibError(f"{path}, line {lineno}: empty language")
        if lang in out:
            raise MvlsibError(f"{path}, line {lineno}: language {lang!r} appears twice")
        names = tuple(rec.get(columns[t], "") for t in TOPICS)
        empty = [t for t, n in zip(TOPICS, names) if not n]
        if empty:
            raise MvlsibError(f"{path}, line {lineno} ({lang}): no name for {', '.join(empty)}")
        folded = [n.casefold() for n in names]
        clash = sorted({n for n in folded if folded.count(n) > 1})
        if clash:
            raise MvlsibError(
                f"{path}, line {lineno} ({lang}): two topics share the name {clash[0]!r}; the model "
                "could not tell them apart"
            )
        out[lang] = names
    if not out:
        raise MvlsibError(f"{path}: no language rows under the header")
    return out


def load_pool_images(pool: str | Path) -> list[tuple[Any, Any]]:
    """(manifest row, RGB PIL image) for every image of the pool, in manifest order."""
    rows = read_manifest(pool)
    if not rows:
        raise MvlsibError(f"{manifest_path(pool)}: the manifest lists no images")
    out = []
    for lineno, row in enumerate(rows, start=2):
        if row.topic not in TOPICS:
            raise MvlsibError(
                f"{manifest_path(pool)}, line {lineno}: image {row.image_id} has topic {row.topic!r}; "
                f"expected one of {', '.join(TOPICS)}"
            )
        file = pool_file(pool, row, lineno)
        try:
            with readers.open_input(file) as fh, Image.open(fh) as im:
                if im.width * im.height > MAX_PIXELS:
                    raise MvlsibError(
                        f"{file}: {im.width}x{im.height} pixels is more than {MAX_PIXELS:,}; "
                        "normalise the pool first (mvlsib-build images)"
                    )
                im.load()
                out.append((row, _rgb(im)))
        except (OSError, Image.DecompressionBombError) as exc:
            raise MvlsibError(f"{file} (image {row.image_id}): cannot decode it: {exc}") from None
    return out


def _rgb(im):
    if im.mode in ("RGBA", "LA", "P") and ("transparency" in im.info or im.mode != "P"):
        # Transparent pixels become white, as an image viewer shows them.
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return im.convert("RGB")
