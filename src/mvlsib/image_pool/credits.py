"""`images credits`: the attribution list (Markdown) that the dataset card embeds."""

from __future__ import annotations

import re
from pathlib import Path

from mvlsib.image_pool.licenses import has_value, judge_license, license_url
from mvlsib.workdir.pool_manifest import ManifestRow, read_manifest
from mvlsib.topics import TOPICS


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
    order = {t: i for i, t in enumerate(TOPICS)}
    rows = sorted(rows, key=lambda r: (order.get(r.topic, len(order)), r.topic, _num(r.image_id), r.image_id))
    lines = [f"## {heading}", "", f"{len(rows)} images. Each image keeps its own licence; "
             "the licence link explains what it permits.", ""]
    lines += [credit_line(r) for r in rows]
    return "\n".join(lines) + "\n"


def _num(image_id: str) -> int:
    tail = image_id.rpartition("_")[2]
    return int(tail) if tail.isdigit() else -1


def pool_credits(pool: str | Path) -> str:
    return credits_markdown(read_manifest(pool))
