"""`images check`: every planted problem is named with its image id; real photos pass the duplicate checks."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image

from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError
from mvlsib.image_pool.check import CheckOptions, check_pool
from mvlsib.image_pool.hashes import compare, hashes_of_bytes
from mvlsib.workdir.pool_manifest import read_manifest, write_manifest


def _edit(pool: Path, image_id: str, **changes) -> None:
    rows = read_manifest(pool)
    rows = [dataclasses.replace(r, **changes) if r.image_id == image_id else r for r in rows]
    write_manifest(pool, rows)


def _replace_file(pool: Path, image_id: str, data: bytes, rel: str | None = None) -> None:
    row = next(r for r in read_manifest(pool) if r.image_id == image_id)
    rel = rel or row.file
    if rel != row.file:
        (pool / row.file).unlink()
    (pool / rel).write_bytes(data)
    _edit(pool, image_id, file=rel, sha256=hashlib.sha256(data).hexdigest())


def _resized_copy(path: Path, factor: float = 0.9, quality: int = 85) -> bytes:
    im = Image.open(path).convert("RGB")
    im = im.resize((round(im.width * factor), round(im.height * factor)), Image.Resampling.BICUBIC)
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def _cropped_copy(path: Path, box=(0.1, 0.1, 0.9, 0.9)) -> bytes:
    im = Image.open(path).convert("RGB")
    w, h = im.size
    im = im.crop((round(box[0] * w), round(box[1] * h), round(box[2] * w), round(box[3] * h)))
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=88)
    return buf.getvalue()


def _codes(report, image_id):
    return {f.code for f in report.errors if f.image_id == image_id}


def test_acceptance_five_planted_problems_are_all_named(pool_copy: Path, tmp_path: Path, hash_cache_file: Path):
    _edit(pool_copy, "entertainment_1", license="CC-BY-NC-4.0")
    _edit(pool_copy, "geography_2", license="CC-BY-4.0", author="")
    _replace_file(pool_copy, "health_3", _resized_copy(pool_copy / "sports/sports_0.png"), "health/health_3.jpg")
    data = (pool_copy / "politics/politics_4.png").read_bytes()
    _replace_file(pool_copy, "politics_4", data[: len(data) * 6 // 10])
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "travel_5.png").write_bytes((pool_copy / "travel/travel_5.png").read_bytes())
    _edit(pool_copy, "travel_5", file="../outside/travel_5.png")

    cache = ["--hash-cache", str(hash_cache_file)]  # unchanged files are not re-hashed
    res = CliRunner().invoke(build_cli, ["images", "check", "--pool", str(pool_copy), "--json", *cache])
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    planted = {
        "entertainment_1": "licence",
        "geography_2": "attribution",
        "health_3": "near-duplicate",
        "politics_4": "decode",
        "travel_5": "path",
    }
    assert set(planted) <= set(report["offending_ids"])
    # Only the copy's original may be named besides the five planted ones.
    assert set(report["offending_ids"]) - set(planted) <= {"sports_0"}
    for image_id, code in planted.items():
        assert any(f["image_id"] == image_id and f["code"] == code for f in report["findings"]), image_id
    near = next(f for f in report["findings"] if f["image_id"] == "health_3" and f["code"] == "near-duplicate")
    assert "sports_0" in near["message"]

    text = CliRunner().invoke(build_cli, ["images", "check", "--pool", str(pool_copy), *cache])
    assert text.exit_code == 1
    for image_id in planted:
        assert image_id in text.output
    assert "FAILED" in text.output and "closest pairs" in text.output


def test_bundled_pool_check_cli_exits_zero(pool_dir: Path, repo_root: Path):
    # The acceptance command as a user runs it: a fresh process from this checkout, no cache.
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(repo_root / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run(
        [sys.executable, "-m", "mvlsib", "images", "check", "--pool", str(pool_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "OK: 70 images" in res.stdout


def test_hash_cache_round_trip(tmp_path: Path, pool_dir: Path, demo_report, hash_cache_file: Path):
    from mvlsib.image_pool.hashes import load_hash_cache

    cache, note = load_hash_cache(hash_cache_file)
    assert note == "" and len(cache) >= 70
    again = check_pool(pool_dir, hash_cache=cache)
    assert [p.as_dict() for p in again.closest_pairs] == [p.as_dict() for p in demo_report.closest_pairs]
    # A file that is not a cache of ours (the user's notes, another tool's JSON) is refused, never
    # recomputed over; one of ours made with other settings is recomputed.
    for text in ("{not json", '{"my": "settings"}', "[]", ""):
        broken = tmp_path / "broken.json"
        broken.write_text(text, encoding="utf-8")
        with pytest.raises(MvlsibError, match="not a hash cache of this toolkit"):
            load_hash_cache(broken)
        assert broken.read_text(encoding="utf-8") == text
    older = tmp_path / "older.json"
    older.write_text('{"format": "mvlsib-image-hashes/0", "hashes": {}}', encoding="utf-8")
    cache, note = load_hash_cache(older)
    assert cache == {} and "other settings" in note


def test_path_escapes(pool_copy: Path, tmp_path: Path, hash_cache):
    secret = tmp_path / "secret.png"
    secret.write_bytes((pool_copy / "sports/sports_1.png").read_bytes())
    os.symlink(secret, pool_copy / "sports" / "link.png")
    _edit(pool_copy, "sports_1", file="sports/link.png")
    _edit(pool_copy, "sports_2", file=str(secret))  # absolute
    _edit(pool_copy, "sports_3", file="sports/../../secret.png")
    _edit(pool_copy, "sports_4", file="sports/nope.png")
    os.symlink(pool_copy / "sports" / "sports_5.png", pool_copy / "sports" / "inside_link.png")
    _edit(pool_copy, "sports_5", file="sports/inside_link.png")  # a symlink inside the pool is fine
    report = check_pool(pool_copy, hash_cache=hash_cache)
    assert _codes(report, "sports_1") == {"path"}
    assert "outside the pool" in next(f.message for f in report.errors if f.image_id == "sports_1")
    assert _codes(report, "sports_2") == {"path"}
    assert "absolute" in next(f.message for f in report.errors if f.image_id == "sports_2")
    assert _codes(report, "sports_3") == {"path"}
    assert _codes(report, "sports_4") == {"missing"}
    assert _codes(report, "sports_5") == set()


def test_file_problems(pool_copy: Path, hash_cache):
    small = io.BytesIO()
    Image.new("RGB", (200, 150), (10, 200, 10)).save(small, format="PNG")
    _replace_file(pool_copy, "health_1", small.getvalue())
    gif = io.BytesIO()
    Image.new("RGB", (400, 300), (200, 10, 10)).save(gif, format="GIF")
    _replace_file(pool_copy, "health_2", gif.getvalue(), "health/health_2.gif")
    bomb = io.BytesIO()
    Image.new("1", (12_000, 12_000)).save(bomb, format="PNG")
    _replace_file(pool_copy, "health_4", bomb.getvalue())
    _edit(pool_copy, "health_5", sha256="0" * 64)
    dup = (pool_copy / "health/health_7.png").read_bytes()
    _replace_file(pool_copy, "health_6", dup)
    (pool_copy / "health/health_8.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    report = check_pool(pool_copy, hash_cache=hash_cache)
    assert _codes(report, "health_1") == {"size"}
    assert _codes(report, "health_2") == {"format"}
    assert _codes(report, "health_4") == {"pixels"}
    assert _codes(report, "health_5") == {"sha256"}
    assert _codes(report, "health_6") == {"duplicate"} and _codes(report, "health_7") == {"duplicate"}
    assert "decode" in _codes(report, "health_8") and "sha256" in _codes(report, "health_8")
    assert _codes(report, "health_0") == set()
    strict = check_pool(pool_copy, CheckOptions(min_side=100), hash_cache=hash_cache)
    assert _codes(strict, "health_1") == set()


def test_cropped_copy_and_cc_by_without_author(pool_copy: Path, hash_cache):
    _replace_file(pool_copy, "travel_1", _cropped_copy(pool_copy / "geography/geography_0.png"), "travel/travel_1.jpg")
    _edit(pool_copy, "travel_2", license="CC BY-SA 4.0", author="unknown", source_url="")
    report = check_pool(pool_copy, hash_cache=hash_cache)
    assert _codes(report, "travel_1") == {"near-duplicate"}
    assert _codes(report, "geography_0") == {"near-duplicate"}
    msg = next(f.message for f in report.errors if f.image_id == "travel_2")
    assert "author and source_url are missing" in msg
    assert set(report.offending_ids) == {"travel_1", "geography_0", "travel_2"}


def test_orphan_files_are_reported_as_warnings(pool_copy: Path, hash_cache):
    rows = [r for r in read_manifest(pool_copy) if r.image_id != "travel_9"]
    write_manifest(pool_copy, rows)
    report = check_pool(pool_copy, CheckOptions(expected_per_topic=None), hash_cache=hash_cache)
    assert report.ok
    warn = [f for f in report.findings if f.code == "orphan"]
    assert len(warn) == 1 and "travel/travel_9.png" in warn[0].message and warn[0].severity == "warning"
    assert "WARNING pool: [orphan]" in report.to_text()


def test_topics_and_counts(pool_copy: Path, hash_cache):
    rows = read_manifest(pool_copy)
    rows = [
        dataclasses.replace(r, topic="science_technology") if r.image_id == "science_technology_0" else r
        for r in rows
        if r.image_id != "travel_9"
    ]
    write_manifest(pool_copy, rows)
    report = check_pool(pool_copy, hash_cache=hash_cache)
    f = next(f for f in report.errors if f.image_id == "science_technology_0")
    assert f.code == "topic" and "science/technology" in f.message
    counts = {f.topic: f.message for f in report.errors if f.code == "count"}
    assert set(counts) == {"travel", "science/technology"}
    assert "has 9 image(s), expected 10" in counts["travel"]
    relaxed = check_pool(pool_copy, CheckOptions(expected_per_topic=None), hash_cache=hash_cache)
    assert not any(f.code == "count" for f in relaxed.findings)


def test_allow_list_options_via_cli(pool_copy: Path, tmp_path: Path, hash_cache_file: Path):
    _edit(pool_copy, "sports_9", license="MIT")
    allow = tmp_path / "allow.txt"
    allow.write_text("# only public domain\nCC0-1.0\n", encoding="utf-8")
    res = CliRunner().invoke(
        build_cli,
        [
            "images",
            "check",
            "--pool",
            str(pool_copy),
            "--allow-list",
            str(allow),
            "--allow-license",
            "MIT",
            "--json",
            "--hash-cache",
            str(hash_cache_file),
        ],
    )
    report = json.loads(res.stdout)
    assert res.exit_code == 0, report["findings"]
    assert report["settings"]["allowed_licenses"] == ["CC0-1.0", "MIT"]


# ---------------------------------------------------------------- real photographs


def test_real_photos_pass_all_but_the_uneven_counts(photo_report):
    assert {f.code for f in photo_report.errors} == {"count"}, photo_report.to_text()
    counts = {f.topic: f.message for f in photo_report.errors}
    assert set(counts) == {"health", "politics", "sports", "geography"}
    assert "has 8 image(s)" in counts["health"] and "has 12 image(s)" in counts["sports"]
    assert photo_report.n_images == 69


def test_no_two_real_photos_are_near_duplicates(photo_report):
    assert not any(f.code in ("near-duplicate", "duplicate") for f in photo_report.findings)
    closest = photo_report.closest_pairs[0]
    assert not closest.near_duplicate
    # Margin to the threshold (10/10): the closest genuinely different photos stay clearly above it.
    assert closest.window_phash + closest.window_dhash >= 24
    for p in photo_report.nearest.values():
        assert p.phash >= 16 and p.dhash >= 11


def test_copies_of_real_photos_are_caught(photo_pool: Path, photo_report):
    rows = read_manifest(photo_pool)
    caught = 0
    for r in rows[::7]:
        orig = photo_report.hashes[r.image_id]
        resized = hashes_of_bytes(_resized_copy(photo_pool / r.file))
        assert compare(r.image_id, orig, "copy", resized).near_duplicate, r.image_id
        cropped = hashes_of_bytes(_cropped_copy(photo_pool / r.file))
        caught += compare(r.image_id, orig, "crop", cropped).near_duplicate
    assert caught >= 8  # of 10: a 80 % centre crop is caught on nearly every photo


def test_real_photo_pool_manifest_carries_licences(photo_pool: Path, photo_rows):
    rows = {r.image_id: r for r in read_manifest(photo_pool)}
    assert len(rows) == 69
    for src in photo_rows:
        row = rows[src["image_id"]]
        assert row.license == src["license"] and row.author == src["author"]
        im = Image.open(photo_pool / row.file)
        assert max(im.size) <= 640 and min(im.size) <= 480 and not im.getexif()


def test_check_json_file_and_unreadable_manifest(photo_pool: Path, tmp_path: Path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.csv").write_text("image_id,topic\nx,sports\n", encoding="utf-8")
    res = CliRunner().invoke(build_cli, ["images", "check", "--pool", str(bad)])
    assert res.exit_code != 0 and "header lacks" in res.output and "Traceback" not in res.output
    with open(photo_pool / "manifest.csv", newline="", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 69
