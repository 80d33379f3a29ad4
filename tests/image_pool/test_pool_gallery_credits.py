"""Gallery, contact sheets, credits and import-release on the real photographs."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError
from mvlsib.image_pool.credits import credits_markdown
from mvlsib.image_pool.gallery import build_gallery
from mvlsib.image_pool.import_release import import_release
from mvlsib.release_format.mvl_sib import TOPICS, topic_slug
from mvlsib.workdir.pool_manifest import read_manifest


def _verification(rows) -> dict:
    return {
        "models": ["tiny-clip", "tiny-llava"],
        "images": [
            {
                "image_id": r.image_id,
                "topic": r.topic,
                "sha256": r.sha256,
                "results": {
                    "tiny-clip": {"passed": i % 3 != 0, "predictions": [r.topic if i % 3 else "politics"]},
                    "tiny-llava": {"passed": True, "predictions": ["A"]},
                },
            }
            for i, r in enumerate(rows)
        ],
    }


@pytest.fixture(scope="module")
def photo_gallery(photo_pool: Path, tmp_path_factory, hash_cache):
    rows = read_manifest(photo_pool)
    out = tmp_path_factory.mktemp("gallery")
    report = out.parent / "verify.json"
    report.write_text(json.dumps(_verification(rows)), encoding="utf-8")
    return build_gallery(photo_pool, out, verification_report=report, hash_cache=hash_cache), rows


def test_gallery_html_has_every_image_with_its_facts(photo_gallery):
    res, rows = photo_gallery
    html = res.html.read_text(encoding="utf-8")
    assert html.count('<div class="card') == 69
    assert len(re.findall(r'src="data:image/jpeg;base64,[A-Za-z0-9+/=]{500,}"', html)) == 69
    assert "http://" not in html.split("<body>")[0] and "<script" not in html  # self-contained, no JS
    for r in rows:
        card = html.split(f'id="{r.image_id}"', 1)[1].split('<div class="card', 1)[0]
        assert r.license in card
        assert r.source_url.replace("&", "&amp;") in card
        assert "nearest: " in card and "pHash" in card
        assert "tiny-clip" in card and "tiny-llava" in card
    for t in TOPICS:
        assert f'<h2 id="{topic_slug(t)}">' in html
    assert "has 8 image(s), expected 10" in html  # the uneven counts are shown to the reviewer
    assert html.count("&#10008; tiny-clip") == len([i for i in range(69) if i % 3 == 0])


@pytest.mark.parametrize("stale", ["another-image", "no-hash"])
def test_a_verdict_about_another_image_is_shown_as_unverified(photo_pool: Path, tmp_path: Path, hash_cache, stale):
    """The report's verdicts are about the files it hashed: an image replaced under the same id since
    (the manifest updated, images check clean), or a report that hashed nothing, is not 'passed'."""
    rows = read_manifest(photo_pool)
    report = _verification(rows)
    changed = report["images"][1]
    if stale == "another-image":
        changed["sha256"] = "0" * 64
    else:
        del changed["sha256"]
    path = tmp_path / "verify.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    html = build_gallery(photo_pool, tmp_path / "g", verification_report=path, hash_cache=hash_cache).html
    cards = html.read_text("utf-8").split('<div class="card')
    card = next(c for c in cards if f'id="{changed["image_id"]}"' in c)
    assert "not verified" in card and "tiny-clip" not in card
    other = next(c for c in cards if f'id="{report["images"][2]["image_id"]}"' in c)
    assert "not verified" not in other and "tiny-clip" in other


def test_contact_sheets(photo_gallery):
    res, rows = photo_gallery
    assert sorted(p.name for p in res.contact_sheets) == sorted(f"contact_{topic_slug(t)}.png" for t in TOPICS)
    sports = Image.open(next(p for p in res.contact_sheets if p.name == "contact_sports.png"))
    assert sports.format == "PNG" and sports.width >= 1000
    assert sports.height > Image.open(next(p for p in res.contact_sheets if p.name == "contact_health.png")).height
    assert len(sports.convert("RGB").resize((64, 64)).getcolors(1 << 16)) > 500  # real thumbnails, not blank tiles


def test_gallery_cli_and_bad_report(pool_dir: Path, tmp_path: Path, hash_cache_file: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"images": "nope"}', encoding="utf-8")
    res = CliRunner().invoke(
        build_cli,
        [
            "images",
            "gallery",
            "--pool",
            str(pool_dir),
            "--out",
            str(tmp_path / "g"),
            "--report",
            str(bad),
            "--hash-cache",
            str(hash_cache_file),
        ],
    )
    assert res.exit_code != 0 and "not a verify-images report" in res.output
    res = CliRunner().invoke(
        build_cli,
        [
            "images",
            "gallery",
            "--pool",
            str(pool_dir),
            "--out",
            str(tmp_path / "g"),
            "--hash-cache",
            str(hash_cache_file),
        ],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "g" / "gallery.html").is_file() and len(list((tmp_path / "g").glob("contact_*.png"))) == 7


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")),
    reason="headless Chromium not installed (apt-get install chromium)",
)
def test_gallery_renders_in_headless_chromium(photo_gallery, tmp_path: Path):
    res, _ = photo_gallery
    shot = tmp_path / "shot.png"
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tempfile.mkdtemp()}",
            f"--screenshot={shot}",
            "--window-size=1280,1600",
            res.html.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    im = Image.open(shot).convert("RGB")
    assert im.size == (1280, 1600)
    assert len(im.resize((128, 160)).getcolors(1 << 16)) > 2000  # photographs were drawn, not an empty page


def test_credits_one_line_per_image(photo_pool: Path):
    rows = read_manifest(photo_pool)
    md = credits_markdown(rows)
    lines = [line for line in md.splitlines() if line.startswith("- ")]
    assert len(lines) == 69
    line = next(line for line in lines if "`travel_8`" in line)
    assert "LBM1948" in line and "[CC-BY-SA-4.0](https://creativecommons.org/licenses/by-sa/4.0/)" in line
    assert "source: <https://github.com/" in line and "*anam sidi-bou-said*" in line.replace("\\", "")
    pd = next(line for line in lines if "`science_technology_1`" in line)
    assert "[LicenseRef-PublicDomain](https://en.wikipedia.org/wiki/Public_domain)" in pd


def test_credits_cli_escapes_markdown(pool_copy: Path, tmp_path: Path):
    import dataclasses

    from mvlsib.workdir.pool_manifest import write_manifest

    rows = [
        dataclasses.replace(r, author="A_b *c* [d]") if r.image_id == "sports_0" else r
        for r in read_manifest(pool_copy)
    ]
    write_manifest(pool_copy, rows)
    out = tmp_path / "credits.md"
    res = CliRunner().invoke(build_cli, ["images", "credits", "--pool", str(pool_copy), "--out", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text(encoding="utf-8")
    assert r"A\_b \*c\* \[d\]" in text
    assert len([line for line in text.splitlines() if line.startswith("- ")]) == 70


# ---------------------------------------------------------------- import-release

CATEGORY = {"science/technology": "science"}


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory, topic_photos_dir: Path, photo_rows):
    """An upstream-style release folder built from the real photos (3 per topic), plus its licence CSV."""
    root = tmp_path_factory.mktemp("release")
    img_dir = root / "data" / "images" / "sib200"
    img_dir.mkdir(parents=True)
    facts = []
    for t in TOPICS:
        for i, r in enumerate([r for r in photo_rows if r["topic"] == t][:3]):
            name = f"{CATEGORY.get(t, t)}_{i}.jpg"
            src = topic_photos_dir / r["file"]
            if src.suffix.lower() == ".png":
                Image.open(src).convert("RGB").save(img_dir / name, quality=90)
            else:
                shutil.copyfile(src, img_dir / name)
            facts.append(
                {
                    "file": name,
                    "license": r["license"],
                    "author": r["author"],
                    "source_url": r["source_url"],
                    "title": Path(r["file"]).stem,
                }
            )
    csv_path = root / "licences.csv"
    with open(csv_path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=["file", "license", "author", "source_url", "title"])
        w.writeheader()
        w.writerows(facts)
    return root, csv_path


def test_import_release(release_dir, tmp_path: Path):
    root, csv_path = release_dir
    res = CliRunner().invoke(
        build_cli,
        ["images", "import-release", str(root), "--licences", str(csv_path), "--pool", str(tmp_path / "pool")],
    )
    assert res.exit_code == 0, res.output
    rows = read_manifest(tmp_path / "pool")
    assert len(rows) == 21
    sci = next(r for r in rows if r.extra["upstream_file"] == "science_2.jpg")
    assert sci.image_id == "science_technology_2" and sci.topic == "science/technology"
    assert sci.file == "science_technology/science_technology_2.jpg"
    im = Image.open(tmp_path / "pool" / sci.file)
    assert max(im.size) <= 640 and not im.getexif()
    assert {r.topic for r in rows} == set(TOPICS) and all(r.extra["title"] for r in rows)


def test_import_release_refuses_incomplete_facts(release_dir, tmp_path: Path):
    root, csv_path = release_dir
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    partial = tmp_path / "partial.csv"
    partial.write_text("\n".join([lines[0], *lines[2:]]) + "\n", encoding="utf-8")
    with pytest.raises(MvlsibError, match=r"entertainment_0.jpg: no row"):
        import_release(root, partial, tmp_path / "pool", progress=False)
    assert not (tmp_path / "pool").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".pool.")]  # no half-built pool left
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("", encoding="utf-8")
    with pytest.raises(MvlsibError, match="not empty"):
        import_release(root, csv_path, tmp_path / "full", progress=False)
