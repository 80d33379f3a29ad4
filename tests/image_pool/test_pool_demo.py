"""The bundled pool: drawn deterministically by tools/demo_pool.py, committed as drawn, distinct, and
passing `images check`."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from PIL import Image
from support import REPO

from mvlsib.release_format.mvl_sib import TOPICS, topic_slug
from mvlsib.workdir.pool_manifest import read_manifest
from mvlsib.workdir.provenance import DEMO_LICENSE, DEMO_SOURCE_URL
from tools.pictograms import PICTOGRAMS, png_bytes, render, write_demo_pool


def test_committed_pool_is_exactly_what_demo_pool_draws(tmp_path: Path, pool_dir: Path):
    write_demo_pool(tmp_path / "drawn", progress=False)
    assert (tmp_path / "drawn" / "manifest.csv").read_bytes() == (pool_dir / "manifest.csv").read_bytes()
    for row in read_manifest(pool_dir):
        assert (tmp_path / "drawn" / row.file).read_bytes() == (pool_dir / row.file).read_bytes(), row.image_id


def test_drawing_is_byte_identical_across_calls():
    a = png_bytes(render("science/technology", 3))
    b = png_bytes(render("science/technology", 3))
    assert a == b
    assert b"tEXt" not in a and b"tIME" not in a and b"iCCP" not in a and b"eXIf" not in a


def test_manifest_follows_the_contract(pool_dir: Path):
    rows = read_manifest(pool_dir)
    assert len(rows) == 70
    for t in TOPICS:
        ids = sorted(r.image_id for r in rows if r.topic == t)
        assert ids == sorted(f"{topic_slug(t)}_{n}" for n in range(10))
        assert len(PICTOGRAMS[t]) == 10
    for r in rows:
        assert r.license == DEMO_LICENSE and r.author and r.source_url == DEMO_SOURCE_URL
        assert r.file == f"{topic_slug(r.topic)}/{r.image_id}.png"
        assert hashlib.sha256((pool_dir / r.file).read_bytes()).hexdigest() == r.sha256
        assert r.extra["title"]
    assert len({r.sha256 for r in rows}) == 70
    assert sum((pool_dir / r.file).stat().st_size for r in rows) < 4_000_000


def test_bundled_pool_passes_check(demo_report):
    assert demo_report.ok, demo_report.to_text()
    assert demo_report.findings == []
    # The closest pairs are listed even though all pass, and none is a near-duplicate.
    assert len(demo_report.closest_pairs) == 10
    assert not any(p.near_duplicate for p in demo_report.closest_pairs)
    assert all(p.window_phash > 10 or p.window_dhash > 10 for p in demo_report.closest_pairs)


def test_each_topic_uses_varied_backgrounds(pool_dir: Path):
    """The 10 pictograms of a topic differ in their dominant colours, not just in the drawn object."""
    for t in TOPICS:
        corners = set()
        for n in range(10):
            im = Image.open(pool_dir / topic_slug(t) / f"{topic_slug(t)}_{n}.png").convert("RGB")
            corners.add(tuple(v // 24 for v in im.resize((1, 1), Image.Resampling.BOX).getpixel((0, 0))))
        assert len(corners) >= 8, (t, corners)


def test_the_drawer_runs_from_a_checkout(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "demo_pool.py"), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "--out" in done.stdout, done.stderr
    file = tmp_path / "file.txt"
    file.write_text("x")
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "demo_pool.py"), "--out", str(file)], capture_output=True, text=True
    )
    assert done.returncode == 2 and "not a folder" in done.stderr
