from __future__ import annotations

from pathlib import Path

import pytest

from mvlsib.errors import MvlsibError
from mvlsib.workdir.pool_manifest import images_by_topic, read_manifest, write_manifest

HEADER = "image_id,topic,file,license,author,source_url,sha256"


def test_round_trip_keeps_extra_columns_and_sorts(tmp_path: Path):
    (tmp_path / "manifest.csv").write_text(
        "\ufeff" + HEADER + ",title,licence_evidence\n"
        'sports_10,sports,sports/b.jpg,CC0-1.0,B,https://x/b,ab,"Ball, goal",README says CC0\n'
        "sports_2,sports,sports/a.jpg,CC0-1.0,A,https://x/a,cd,,\n",
        encoding="utf-8",
    )
    rows = read_manifest(tmp_path)
    assert [r.image_id for r in rows] == ["sports_10", "sports_2"]
    assert rows[0].extra == {"title": "Ball, goal", "licence_evidence": "README says CC0"}
    write_manifest(tmp_path, rows)
    again = read_manifest(tmp_path)
    assert [r.image_id for r in again] == ["sports_2", "sports_10"]  # numeric order
    assert again[1].extra["title"] == "Ball, goal"
    assert images_by_topic(again) == {"sports": ["sports_10", "sports_2"]}


@pytest.mark.parametrize(
    "body, message",
    [
        (HEADER + "\nx,sports,a.jpg,CC0-1.0,A,u,s\nx,sports,b.jpg,CC0-1.0,A,u,s\n", "appears twice"),
        ("image_id,topic\nx,sports\n", "header lacks"),
        (HEADER + "\nx,sports,a.jpg,CC0-1.0,A,u,s,extra\n", "line 2: more fields"),
        (HEADER + "\n,sports,a.jpg,CC0-1.0,A,u,s\n", "line 2: empty image_id"),
    ],
)
def test_bad_manifests_are_named(tmp_path: Path, body, message):
    (tmp_path / "manifest.csv").write_text(body, encoding="utf-8")
    with pytest.raises(MvlsibError, match=message):
        read_manifest(tmp_path)


def test_not_utf8_and_missing(tmp_path: Path):
    (tmp_path / "manifest.csv").write_bytes((HEADER + "\nx,sports,a.jpg,CC0-1.0,J\xf6rg,u,s\n").encode("latin-1"))
    with pytest.raises(MvlsibError, match="not UTF-8"):
        read_manifest(tmp_path)
    with pytest.raises(MvlsibError, match="no image-pool manifest"):
        read_manifest(tmp_path / "nowhere")
