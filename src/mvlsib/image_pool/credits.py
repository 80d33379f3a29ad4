"""`images credits`: the attribution list (Markdown) that the dataset card embeds."""

from __future__ import annotations

import re
from pathlib import Path

from mvlsib.image_pool.licenses import has_value, judge_license, license_url
from mvlsib.workdir.pool_manifest import ManifestRow, image_order, read_manifest


def _md(text: str) -> str:
    """Escape characters that would turn a plain name into Markdown formatting or links."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", " ".join(text.split()))


def title_of(row: ManifestRow) -> str:
    title = row.extra.get("title", "").strip()
    return title or Path(row.file).stem.replace("_", " ")


def credit_line(row: ManifestRow) -> str:
    """``- `id` — *Title* by Author, [LICENCE](url), source: <url>`` (one line, no line breaks)."""
    expr = judge_license(row.license).expression or row.license
    url = license_url(expr)
    lic = f"[{_md(expr)}]({url})" if url else _md(expr)
    author = _md(row.author) if has_value(row.author) else "unknown author"
    src = f"source: <{row.source_url}>" if row.source_url.strip() else "source: not recorded"
    return f"- `{row.image_id}` ({row.topic}): *{_md(title_of(row))}* by {author}, licence {lic}, {src}"


def credits_markdown(rows: list[ManifestRow], heading: str = "Image credits") -> str:
    rows = sorted(rows, key=lambda r: image_order(r.topic, r.image_id))
    lines = [
        f"## {heading}",
        "",
        f"{len(rows)} images. Each image keeps its own licence; the licence link explains what it permits.",
        "",
    ]
    lines += [credit_line(r) for r in rows]
    return "\n".join(lines) + "\n"


def pool_credits(pool: str | Path) -> str:
    return credits_markdown(read_manifest(pool))
