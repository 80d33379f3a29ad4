"""All pictograms by topic, rendered to PNG bytes and written as a pool with its manifest."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from PIL import Image
from tqdm import tqdm

from mvlsib.atomic import atomic_open, refuse_foreign
from mvlsib.errors import MvlsibError
from mvlsib.release_format.mvl_sib import TOPICS, topic_slug
from mvlsib.workdir.pool_manifest import MANIFEST_NAME, ManifestRow, pool_lock, read_manifest, write_manifest
from mvlsib.workdir.provenance import DEMO_AUTHOR, DEMO_LICENSE, DEMO_SOURCE_URL, pool_kind

from . import entertainment, geography, health, politics, science, sports, travel
from .pen import HEIGHT, SCALE, WHITE, WIDTH, Pen, Pictogram

PICTOGRAMS: dict[str, tuple[Pictogram, ...]] = {
    "entertainment": entertainment.PICTOGRAMS,
    "geography": geography.PICTOGRAMS,
    "health": health.PICTOGRAMS,
    "politics": politics.PICTOGRAMS,
    "science/technology": science.PICTOGRAMS,
    "sports": sports.PICTOGRAMS,
    "travel": travel.PICTOGRAMS,
}

PNG_SAVE_OPTIONS = {"format": "PNG", "optimize": False, "compress_level": 9}


def render(topic: str, n: int) -> Image.Image:
    """Draw pictogram ``n`` of ``topic`` as a 640x480 RGB PIL image."""
    pic = PICTOGRAMS[topic][n]
    img = Image.new("RGB", (WIDTH * SCALE, HEIGHT * SCALE), WHITE)
    pic.draw(Pen(img))
    return img.resize((WIDTH, HEIGHT), Image.Resampling.LANCZOS)


def png_bytes(img: Image.Image) -> bytes:
    """PNG bytes with fixed settings and no metadata chunks (no time, text or ICC)."""
    buf = io.BytesIO()
    img.save(buf, **PNG_SAVE_OPTIONS)
    return buf.getvalue()


def write_demo_pool(out: str | Path, *, progress: bool = True) -> Path:
    """Draw all pictograms into ``out`` with a manifest; returns the manifest path.

    Files are written atomically one by one and the manifest last, so an interrupted run
    never leaves a manifest that names missing files.
    """
    out = Path(out)
    with pool_lock(out):  # the one lock of every pool writer: no add or import meanwhile
        return _draw(out, progress)


def _draw(out: Path, progress: bool) -> Path:
    refuse_foreign(out, demo_pool_files(out))
    out.mkdir(parents=True, exist_ok=True)
    jobs = [(t, n) for t in TOPICS for n in range(len(PICTOGRAMS[t]))]
    rows = []
    for topic, n in tqdm(jobs, desc="drawing pictograms", unit="img", disable=not progress, file=None):
        slug = topic_slug(topic)
        rel = f"{slug}/{slug}_{n}.png"
        data = png_bytes(render(topic, n))
        with atomic_open(out / rel, "wb") as fh:
            fh.write(data)
        rows.append(
            ManifestRow(
                image_id=f"{slug}_{n}",
                topic=topic,
                file=rel,
                license=DEMO_LICENSE,
                author=DEMO_AUTHOR,
                source_url=DEMO_SOURCE_URL,
                sha256=hashlib.sha256(data).hexdigest(),
                extra={"title": PICTOGRAMS[topic][n].title},
            )
        )
    return write_manifest(out, rows)


def demo_pool_files(out: Path) -> set[str]:
    """The files of ``out`` an earlier draw wrote: a demo pool's manifest and the images it lists.

    A demo manifest is its own ledger (no extra file in the package data). A curated or mixed
    pool, or a folder without a manifest, holds nothing of ours, so drawing there is refused.
    """
    if not (out / MANIFEST_NAME).is_file():
        return set()
    try:
        rows = read_manifest(out)
    except MvlsibError:
        return set()
    if pool_kind(row.source_url for row in rows) != "demo":
        return set()
    return {MANIFEST_NAME, *(row.file for row in rows)}
