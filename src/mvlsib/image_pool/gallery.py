"""`images gallery`: what a reviewer looks at before a release.

One self-contained HTML file (thumbnails embedded as data URIs, no external requests) with
the images grouped by topic, each with its id, title, licence, author, source link, check
findings, nearest neighbour by perceptual hash, and, when a `verify-images` report is given,
each model's verdict. Plus one contact-sheet PNG per topic for quick side-by-side viewing.
"""

from __future__ import annotations

import base64
import io
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from PIL import Image, ImageDraw, ImageFont, ImageOps

from mvlsib import readers
from mvlsib.atomic import atomic_open, atomic_path
from mvlsib.errors import MvlsibError
from mvlsib.escape import html_href, html_text, url_text
from mvlsib.image_pool.check import CheckOptions, CheckReport, check_pool
from mvlsib.image_pool.credits import title_of
from mvlsib.image_pool.licenses import judge_license, license_url
from mvlsib.release_format.mvl_sib import TOPICS, topic_slug
from mvlsib.workdir.pool_manifest import ManifestRow, pool_root, read_manifest, resolve_in_pool

THUMB = (320, 240)
SHEET_THUMB = (256, 192)
SHEET_COLS = 5


@dataclass(frozen=True)
class GalleryResult:
    html: Path
    contact_sheets: list[Path]
    report: CheckReport


def read_verification(path: str | Path) -> dict:
    """A `verify-images` report: {"models": [...], "images": [{"image_id", "topic", "results": {...}}]}."""
    p = Path(path)
    data = readers.read_json("verify_report", p)
    by_id, verified = {}, {}
    for i, rec in enumerate(data["images"]):
        if not isinstance(rec, dict) or "image_id" not in rec or not isinstance(rec.get("results", {}), dict):
            raise MvlsibError(f"{p}: images[{i}] lacks image_id or has a malformed 'results' object")
        by_id[str(rec["image_id"])] = rec.get("results", {})
        verified[str(rec["image_id"])] = rec.get("sha256")
    models = [str(m) for m in data.get("models", [])] or sorted({m for r in by_id.values() for m in r})
    return {"models": models, "by_id": by_id, "sha256": verified}


def _thumb(path: Path, size: tuple[int, int]) -> Image.Image:
    with readers.open_input(path) as fh, Image.open(fh) as opened:
        im = ImageOps.exif_transpose(opened).convert("RGB")
        im.thumbnail(size, Image.Resampling.LANCZOS)
        return im


def _data_uri(im) -> str:
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=82)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _font(size: int):
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def contact_sheet(rows: list[ManifestRow], root: Path, topic: str, out: Path) -> Path:
    """A grid of the topic's images with their ids (and licence) under each."""
    tw, th = SHEET_THUMB
    label_h = 40
    cols = SHEET_COLS
    n = max(len(rows), 1)
    nrows = (n + cols - 1) // cols
    sheet = Image.new("RGB", (cols * (tw + 12) + 12, 50 + nrows * (th + label_h + 12)), (248, 248, 250))
    d = ImageDraw.Draw(sheet)
    d.text((12, 12), f"{topic} ({len(rows)} images)", fill=(20, 20, 30), font=_font(22))
    small = _font(13)
    for k, row in enumerate(rows):
        x = 12 + (k % cols) * (tw + 12)
        y = 50 + (k // cols) * (th + label_h + 12)
        d.rectangle((x, y, x + tw - 1, y + th - 1), fill=(225, 225, 230))
        path, _ = resolve_in_pool(root, row.file)
        try:
            im = _thumb(path, SHEET_THUMB) if path else None
        except Exception:  # a broken file shows as an empty tile; check reports why
            im = None
        if im is not None:
            sheet.paste(im, (x + (tw - im.width) // 2, y + (th - im.height) // 2))
        else:
            d.text((x + 10, y + th // 2), "cannot display", fill=(180, 0, 0), font=small)
        d.text((x, y + th + 4), row.image_id, fill=(20, 20, 30), font=small)
        d.text(
            (x, y + th + 21),
            (judge_license(row.license).expression or row.license)[:34],
            fill=(90, 90, 100),
            font=small,
        )
    with atomic_path(out) as tmp:
        sheet.save(tmp, format="PNG")
    return out


CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:24px;background:#f6f7f9;color:#1d1f24}
h1{font-size:24px;margin:0 0 4px} h2{font-size:20px;margin:28px 0 10px;border-bottom:2px solid #d6d9e0;padding-bottom:4px}
.summary{margin:6px 0 14px;color:#444} .bad{color:#b3261e;font-weight:600} .good{color:#1e7b34;font-weight:600}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:14px}
.card{background:#fff;border:1px solid #dde0e6;border-radius:8px;overflow:hidden;display:flex;flex-direction:column}
.card.err{border:2px solid #b3261e}
.card img{width:100%;aspect-ratio:4/3;object-fit:contain;background:#e9ebef;display:block}
.meta{padding:8px 10px;font-size:13px;line-height:1.45}
.id{font-weight:700;font-size:14px;font-family:ui-monospace,'DejaVu Sans Mono',monospace}
.title{color:#333;font-style:italic} .lic a{font-weight:600}
.nn{color:#555} .nn.near{color:#b3261e;font-weight:600}
.finding{color:#b3261e} .warn{color:#8a5a00}
.models{margin-top:4px} .pass{color:#1e7b34} .fail{color:#b3261e}
.topicnote{color:#555;font-size:13px;margin:-4px 0 8px}
a{color:#1a56b0;word-break:break-all}
"""


def _short_url(url: str) -> str:
    """host/…/last-part: enough to recognise the source; the link keeps the full address."""
    u = urlparse(url)
    parts = [p for p in u.path.split("/") if p]
    if len(parts) <= 2:
        return u.netloc + u.path
    return f"{u.netloc}/{parts[0]}/…/{unquote(parts[-1])}"


def _card(row: ManifestRow, root: Path, report: CheckReport, verification: dict | None) -> str:
    e = html_text
    path, _ = resolve_in_pool(root, row.file)
    try:
        src = _data_uri(_thumb(path, THUMB)) if path and path.is_file() else ""
    except Exception:
        src = ""
    img = (
        f'<img src="{src}" alt="{e(row.image_id)}">'
        if src
        else '<div class="finding" style="padding:40px">cannot display</div>'
    )
    expr = judge_license(row.license).expression or row.license
    url = license_url(expr)
    lic_href = html_href(url)
    lic = f'<a href="{lic_href}">{e(expr)}</a>' if lic_href else e(expr or "(none)")
    href = html_href(row.source_url)
    source = (
        f'<a href="{href}" title="{href}">{e(_short_url(row.source_url))}</a>'
        if href
        else e(url_text(row.source_url) or "(no source)")
    )
    findings = [f for f in report.findings if f.image_id == row.image_id]
    fhtml = "".join(
        f'<div class="{"finding" if f.severity == "error" else "warn"}">{e(f.severity)}: [{e(f.code)}] '
        f"{e(f.message)}</div>"
        for f in findings
    )
    nn = report.nearest.get(row.image_id)
    if nn:
        other = nn.b if nn.a == row.image_id else nn.a
        cls = "nn near" if nn.near_duplicate else "nn"
        nn_html = (
            f'<div class="{cls}">nearest: {e(other)} &middot; pHash {nn.phash}, dHash {nn.dhash}'
            f" (best crop window {nn.window_phash}/{nn.window_dhash}, segments {nn.crop_segments})</div>"
        )
    else:
        nn_html = '<div class="nn">nearest: (no other decodable image)</div>'
    models = ""
    if verification is not None:
        res = verification["by_id"].get(row.image_id)
        if res is None:
            models = '<div class="models warn">not in the verification report</div>'
        elif verification["sha256"].get(row.image_id) != row.sha256:
            # the report's verdicts are about the image it hashed: another file under this id is unverified
            models = '<div class="models warn">not verified: the image is not the one the report verified</div>'
        else:
            parts = []
            for m in verification["models"]:
                r = res.get(m)
                if not isinstance(r, dict):
                    parts.append(f'<div class="warn">{e(m)}: no result</div>')
                    continue
                ok = bool(r.get("passed"))
                preds = _prediction_summary(r.get("predictions") or [], r.get("margin"))
                parts.append(
                    f'<div class="{"pass" if ok else "fail"}">{"&#10004;" if ok else "&#10008;"} {e(m)}: '
                    f"{'passed' if ok else 'failed'}{' &middot; predicted ' + e(preds) if preds else ''}</div>"
                )
            models = '<div class="models">' + "".join(parts) + "</div>"
    err = " err" if any(f.severity == "error" for f in findings) else ""
    return (
        f'<div class="card{err}" id="{e(row.image_id)}">{img}<div class="meta">'
        f'<div class="id">{e(row.image_id)}</div><div class="title">{e(title_of(row))}</div>'
        f'<div class="lic">licence: {lic}</div><div>author: {e(row.author or "(none)")}</div>'
        f"<div>source: {source}</div>{nn_html}{models}{fhtml}</div></div>"
    )


def _prediction_summary(predictions: list, margin: object = None) -> str:
    """Readable summary of verify-images predictions: topic counts over the orders, plus the margin."""
    topics = [
        p.get("predicted_topic") or p.get("letter") or "unreadable" if isinstance(p, dict) else str(p)
        for p in predictions
    ]
    counts = Counter(str(t) for t in topics)
    text = ", ".join(f"{t} {n}/{len(topics)}" if len(topics) > 1 else t for t, n in counts.most_common())
    if isinstance(margin, (int, float)):
        text += f" (margin {margin:+.2f})"
    return text


def render_html(rows: list[ManifestRow], root: Path, report: CheckReport, verification: dict | None) -> str:
    e = html_text
    topics = [t for t in TOPICS if any(r.topic == t for r in rows)] + sorted({r.topic for r in rows} - set(TOPICS))
    n_topic = len([f for f in report.errors if not f.image_id])
    parts = ([f"{len(report.offending_ids)} image(s) marked in red"] if report.offending_ids else []) + (
        [f"{n_topic} about topic counts"] if n_topic else []
    )
    status = (
        '<span class="good">images check passes</span>'
        if report.ok
        else f'<span class="bad">images check: {len(report.errors)} problem(s): {", ".join(parts)}</span>'
    )
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Image pool gallery: {e(root.name)}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>Image pool gallery: {e(root.name)}</h1>",
        f'<div class="summary">{len(rows)} images in {len(topics)} topics &middot; {status}'
        + (
            f" &middot; verification by {len(verification['models'])} model(s): {e(', '.join(verification['models']))}"
            if verification
            else ""
        )
        + "</div>",
    ]
    nav = " &middot; ".join(
        f'<a href="#{e(topic_slug(t))}">{e(t)} ({sum(r.topic == t for r in rows)})</a>' for t in topics
    )
    licences: dict[str, int] = {}
    for r in rows:
        key = judge_license(r.license).expression or r.license or "(none)"
        licences[key] = licences.get(key, 0) + 1
    out.append(f'<div class="summary">topics: {nav}</div>')
    if report.offending_ids:
        links = " ".join(f'<a href="#{e(i)}">{e(i)}</a>' for i in report.offending_ids)
        out.append(f'<div class="summary bad">to fix: {links}</div>')
    out.append(
        '<div class="summary">licences: '
        + ", ".join(f"{e(k)} &times;{v}" for k, v in sorted(licences.items()))
        + "</div>"
    )
    topic_findings = [f for f in report.errors if not f.image_id]
    for t in topics:
        trows = [r for r in rows if r.topic == t]
        out.append(f'<h2 id="{e(topic_slug(t))}">{e(t)} ({len(trows)})</h2>')
        for f in topic_findings:
            if f.topic == t:
                out.append(f'<div class="topicnote bad">{e(f.message)}</div>')
        out.append('<div class="grid">' + "".join(_card(r, root, report, verification) for r in trows) + "</div>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def build_gallery(
    pool: str | Path,
    out: str | Path,
    *,
    verification_report: str | Path | None = None,
    options: CheckOptions | None = None,
    hash_cache: dict | None = None,
    progress: bool = False,
) -> GalleryResult:
    root = pool_root(pool)
    rows = read_manifest(pool)
    verification = read_verification(verification_report) if verification_report else None
    report = check_pool(pool, options or CheckOptions(), hash_cache=hash_cache, progress=progress)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    html_path = out / "gallery.html"
    with atomic_open(html_path) as fh:
        fh.write(render_html(rows, root, report, verification))
    sheets = []
    for t in TOPICS:
        trows = [r for r in rows if r.topic == t]
        if trows:
            sheets.append(contact_sheet(trows, root, t, out / f"contact_{topic_slug(t)}.png"))
    return GalleryResult(html_path, sheets, report)
