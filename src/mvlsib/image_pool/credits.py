"""`images credits`: the attribution list (Markdown) that the dataset card embeds."""

from __future__ import annotations

from pathlib import Path

from mvlsib.escape import md_autolink, md_code, md_link, md_text
from mvlsib.image_pool.licenses import has_value, judge_license, license_url
from mvlsib.workdir.pool_manifest import ManifestRow, image_order, read_manifest


def title_of(row: ManifestRow) -> str:
    title = row.extra.get("title", "").strip()
    return title or Path(row.file).stem.replace("_", " ")


def credit_line(row: ManifestRow) -> str:
    """``- `id` (topic): *Title* by Author, licence [LICENCE](url), source: <url>`` on one line.

    Every manifest field goes through ``mvlsib.escape``: shown literally, never as markup; only
    http(s) URLs become links.
    """
    expr = judge_license(row.license).expression or row.license
    url = license_url(expr)
    lic = md_link(url, md_text(expr)) if url else md_text(expr)
    author = md_text(row.author) if has_value(row.author) else "unknown author"
    source = row.source_url.strip()
    src = f"source: {md_autolink(source)}" if source else "source: not recorded"
    title = md_text(title_of(row)) or "untitled"
    image = md_code(row.image_id, in_table=False)
    return f"- {image} ({md_text(row.topic)}): *{title}* by {author}, licence {lic}, {src}"


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
