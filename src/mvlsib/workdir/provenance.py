"""Where a pool's images come from: drawn demo pictograms or curated photographs.

A pool manifest row is a demo pictogram exactly when its ``source_url`` is ``DEMO_SOURCE_URL``,
the address the demo drawer (``tools/demo_pool.py``) gives every image it draws and no curated
photograph has. The address keeps the drawer's original location: it is written into every
release's images table, so changing it would change released bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

DEMO_SOURCE_URL = "https://github.com/mvlsib/mvlsib-build/blob/main/src/mvlsib/image_pool/demo.py"
DEMO_LICENSE = "CC0-1.0"
DEMO_AUTHOR = "mvlsib-build contributors"


def demo_image_count(source_urls: Iterable[object]) -> int:
    """How many of these images are drawn demo pictograms."""
    return sum(str(url).strip() == DEMO_SOURCE_URL for url in source_urls)


def pool_kind(source_urls: Iterable[object]) -> str:
    """``demo`` (all drawn pictograms), ``mixed`` or ``curated`` (none drawn)."""
    urls = list(source_urls)
    n = demo_image_count(urls)
    return "demo" if urls and n == len(urls) else ("mixed" if n else "curated")
