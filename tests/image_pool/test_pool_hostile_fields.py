"""Hostile manifest fields, generated: `images check` flags them, `images credits` and the gallery
show them literally.

Each example writes a real pool (two of the bundled pictograms, named by every row) whose manifest
rows carry generated hostile text in every field, runs the real check, credits and gallery code on
it, and parses the Markdown (markdown-it-py, CommonMark + GFM tables, as the Hub renders) and the
HTML (the standard library's parser).
"""

from __future__ import annotations

import dataclasses
import shutil
import time
import urllib.parse
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.hostile import FRAGMENTS, MD, URLS, parse_html

from mvlsib.cli import build_cli
from mvlsib.escape import flat, has_markup, web_url
from mvlsib.image_pool.check import CheckOptions, check_pool
from mvlsib.image_pool.credits import credits_markdown
from mvlsib.image_pool.gallery import render_html
from mvlsib.image_pool.licenses import has_value
from mvlsib.schema.validators import schema_errors
from mvlsib.workdir.pool_manifest import ManifestRow, read_manifest, write_manifest

ROWS_PER_POOL = 8
EXAMPLES = 25  # pools per property: EXAMPLES x ROWS_PER_POOL generated rows
NO_COUNT = CheckOptions(expected_per_topic=None)
# Manifest text: no NUL (a CSV cell cannot hold one), otherwise the hostile alphabet of test_escape.
TEXT = st.lists(
    st.one_of(st.sampled_from(list("\\`*_[]<>|~&!#$()=+-@\"' \t\n\u2028\u200baZé中")), FRAGMENTS), max_size=8
).map("".join)
ROW = st.fixed_dictionaries(
    {
        "image_id": TEXT,
        "topic": st.one_of(st.sampled_from(["sports", "travel", "science/technology"]), TEXT),
        "license": st.one_of(st.sampled_from(["CC-BY-4.0", "CC0-1.0", "CC BY-SA 4.0"]), TEXT),
        "author": TEXT,
        # no NUL (a CSV cell cannot hold one) and no lone CR: csv.writer with "\n" line ends (the pool
        # manifest's writer) leaves a CR unquoted, and the manifest reads back as a different row
        "source_url": URLS.map(lambda u: u.replace("\x00", "").replace("\r", "")),
        "title": TEXT,
    }
)


def _pool(base: Path, pool_dir: Path, rows: list[dict]) -> Path:
    """A fresh pool folder whose rows name two real images (so each row is really checked)."""
    if base.exists():
        shutil.rmtree(base)
    (base / "img").mkdir(parents=True)
    files = []
    for src in sorted((pool_dir / "sports").glob("*.png"))[:2]:
        shutil.copyfile(src, base / "img" / src.name)
        files.append(f"img/{src.name}")
    manifest = [
        ManifestRow(
            image_id=f"{r['image_id']}_{i}",
            topic=r["topic"],
            file=files[i % 2],
            license=r["license"],
            author=r["author"],
            source_url=r["source_url"],
            sha256="",
            extra={"title": r["title"]},
        )
        for i, r in enumerate(rows)
    ]
    write_manifest(base, manifest)
    return base


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(rows=st.lists(ROW, min_size=ROWS_PER_POOL, max_size=ROWS_PER_POOL))
def test_check_flags_urls_and_markup_and_outputs_stay_literal(rows, tmp_path: Path, pool_dir: Path, hash_cache):
    pool = _pool(tmp_path / "pool", pool_dir, rows)
    manifest = read_manifest(pool)
    report = check_pool(pool, NO_COUNT, hash_cache=hash_cache)
    codes: dict[str, set[str]] = {}
    for f in report.findings:
        codes.setdefault(f.image_id, set()).add(f.code)
    for row in manifest:
        got = codes.get(row.image_id, set())
        url = row.source_url.strip()
        # the pool manifest schema's rule, which validate applies (a javascript: URL is never a web URL)
        url_fails = any(m.startswith("source_url:") for m in schema_errors("manifest_row", row.as_dict()))
        assert ("url" in got) == url_fails, (row.source_url, got)
        assert url_fails or not has_value(url) or web_url(url) is not None
        fields = [row.image_id, row.topic, row.license, row.author, *row.extra.values()]
        assert ("markup" in got) == any(has_markup(v) for v in fields if v), (fields, got)
        assert "duplicate" in got  # every row shares its file with another row
    _credits_are_literal(manifest)
    _gallery_is_literal(manifest, pool, report)


def _credits_are_literal(manifest: list[ManifestRow]) -> None:
    doc = parse_html(MD.render(credits_markdown(manifest)))
    assert set(doc.tags) <= {"h2", "p", "ul", "li", "code", "em", "a"}
    items = doc.cells[1:]  # the paragraph under the heading, then one item per row
    assert len(items) == len(manifest)
    for row in manifest:
        item = next(i for i in items if i.startswith(flat(row.image_id) + " ("))
        assert f"by {flat(row.author)}," in item or not has_value(row.author)
        assert flat(row.extra["title"]) in item
    for href in doc.hrefs:  # licence pages and sources: http(s) only
        assert urllib.parse.urlsplit(href).scheme in ("http", "https"), href


def _gallery_is_literal(manifest: list[ManifestRow], pool: Path, report) -> None:
    page = render_html(manifest, pool, report, None)
    doc = parse_html(page)
    allowed = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "div", "span", "a", "img"}
    assert set(doc.tags) <= allowed
    assert doc.tags.count("img") == len(manifest)  # the thumbnails, nothing from a field
    for href in doc.hrefs:
        assert href.startswith("#") or urllib.parse.urlsplit(href).scheme in ("http", "https"), href
    for row in manifest:
        for value in (row.author, row.extra["title"].strip(), row.image_id):
            assert value in doc.text or not value


def test_check_cli_names_javascript_url_and_html_author(pool_copy: Path, hash_cache_file: Path):
    rows = read_manifest(pool_copy)
    rows[0] = dataclasses.replace(rows[0], source_url="javascript:alert(1)")
    rows[1] = dataclasses.replace(rows[1], author="<img src=x onerror=alert(1)>")
    write_manifest(pool_copy, rows)
    res = CliRunner().invoke(
        build_cli, ["images", "check", "--pool", str(pool_copy), "--hash-cache", str(hash_cache_file)]
    )
    assert res.exit_code == 1, res.output
    assert f"{rows[0].image_id}: [url] source_url 'javascript:alert(1)' is not an http(s) address" in res.output
    assert f"{rows[1].image_id}: [markup] author '<img src=x onerror=alert(1)>' holds HTML" in res.output


def test_check_is_linear_in_rows(tmp_path: Path, pool_dir: Path, hash_cache):
    """20,000 rows naming the same two files: each file read and decoded once, no pair per copy."""
    timings = []
    for n in (2_000, 20_000):
        pool = _pool(tmp_path / f"pool{n}", pool_dir, [{**_PLAIN, "image_id": "sports"}] * n)
        t = time.perf_counter()
        report = check_pool(pool, NO_COUNT, hash_cache=hash_cache)
        timings.append(time.perf_counter() - t)
        assert report.n_images == n
        dup = [f for f in report.findings if f.code == "duplicate"]
        assert len(dup) == n and all(len(f.message) < 200 for f in dup)
        assert len(report.nearest) == n
    # 10x the rows: linear is ~10x; the quadratic steps made it ~100x
    assert timings[1] < 30 * timings[0] + 2, timings


_PLAIN = {
    "topic": "sports",
    "license": "CC0-1.0",
    "author": "A",
    "source_url": "https://example.org/a",
    "title": "t",
}


CONTROLS = ["\x1b]0;pwned\x07", "\x1b[2J", "line\nbreak", "tab\there", "\r", "\x85", "\x7f"]


def test_a_control_character_in_author_or_title_is_one_rule_for_add_check_and_validate(
    pool_copy: Path, hash_cache_file: Path, tmp_path: Path
):
    """What `images add` refuses, `images check` and `validate` (the manifest row schema) refuse too."""
    from PIL import Image

    from mvlsib.workdir.pool_manifest import manifest_path

    source = tmp_path / "photo.png"
    Image.new("RGB", (640, 640), (200, 30, 30)).save(source)
    before = manifest_path(pool_copy).read_bytes()
    for control in CONTROLS:
        for flag in ("--author", "--title"):
            values = {"--author": "Ann", "--title": "Red"} | {flag: f"a{control}b"}
            args = ["images", "add", str(source), "--pool", str(pool_copy), "--topic", "travel", "--license", "CC0-1.0"]
            args += [
                "--source-url",
                "https://example.org/p",
                "--author",
                values["--author"],
                "--title",
                values["--title"],
            ]
            res = CliRunner().invoke(build_cli, args)
            # refused as the command line is read (params.TEXT), naming the option
            assert res.exit_code == 2 and flag in res.output.splitlines()[-1], (control, flag, res.output)
            assert "\x1b" not in res.output and "\r" not in res.output, res.output
            assert manifest_path(pool_copy).read_bytes() == before
    rows = read_manifest(pool_copy)
    rows[0] = dataclasses.replace(rows[0], author="Evil\x1b]0;pwned\x07")
    rows[1] = dataclasses.replace(rows[1], extra={**rows[1].extra, "title": "two\nlines"})
    write_manifest(pool_copy, rows)
    assert [m.split(":", 1)[0] for m in schema_errors("manifest_row", rows[0].as_dict())] == ["author"]
    assert [m.split(":", 1)[0] for m in schema_errors("manifest_row", rows[1].as_dict())] == ["title"]
    res = CliRunner().invoke(
        build_cli, ["images", "check", "--pool", str(pool_copy), "--hash-cache", str(hash_cache_file)]
    )
    assert res.exit_code == 1 and "\x1b" not in res.output, res.output
    assert rows[0].image_id in res.output and rows[1].image_id in res.output, res.output
