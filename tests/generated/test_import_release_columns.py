"""A licence-CSV column named like a pool-manifest column `images import-release` fills in itself
(``image_id``, ``topic``, ``file``, ``sha256``, ``upstream_file``), generated over every such column: refused
naming the file and the column, before any image is read, never copied over the real column (a manifest
with a column twice, which no command can read). Two columns naming the image file are refused too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from support.cli_contract import changed, refused, scene_state
from support.upstream_release import import_release, upstream_release

from mvlsib.image_pool.import_release import RESERVED_COLUMNS
from mvlsib.workdir.pool_manifest import COLUMNS, ManifestRow, read_manifest

GOOD = {"source_url": "https://example.org/p"}
# the licence CSV's own columns: the facts it gives, and extra ones (kept in the manifest)
CSV_COLUMNS = ("license", "author", "source_url", "title", "notes")


@pytest.fixture(scope="module")
def photo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("src") / "photo.jpg"
    Image.radial_gradient("L").resize((640, 480)).convert("RGB").save(path, quality=90)
    return path


_release, _import = upstream_release, import_release


FILLED_IN = [(c, key) for c in RESERVED_COLUMNS for key in ("file", "filename") if c not in (key, *CSV_COLUMNS)]


@pytest.mark.parametrize(("column", "key"), FILLED_IN, ids=[f"{c}-key-{k}" for c, k in FILLED_IN])
def test_import_release_refuses_a_column_it_fills_in(column, key, photo: Path, tmp_path: Path):
    """A licence-CSV column named like a pool-manifest column the import writes (sha256, topic, image_id,
    file, upstream_file) is refused naming it, before any image is read: never copied over the real one."""
    release, lic = _release(tmp_path, photo, {"license": "CC0-1.0", "author": "A", "source_url": GOOD["source_url"]})
    rows = lic.read_text(encoding="utf-8").splitlines()
    header = rows[0].replace("file", key, 1) + f",{column}"
    lic.write_text("\n".join([header, rows[1] + ",x"]) + "\n", encoding="utf-8")
    before = scene_state(tmp_path)
    refused(
        _import(release, lic, tmp_path / "pool"), str(lic), repr(column), moved=changed(before, scene_state(tmp_path))
    )


def test_a_clean_import_keeps_its_extra_columns(photo: Path, tmp_path: Path):
    facts = {"license": "CC0-1.0", "author": "A", "source_url": GOOD["source_url"], "title": "t", "notes": "n"}
    release, lic = _release(tmp_path, photo, facts)
    res = _import(release, lic, tmp_path / "pool")
    assert res.exit_code == 0, res.output
    (row,) = read_manifest(tmp_path / "pool")
    assert row.extra == {"title": "t", "notes": "n", "upstream_file": "sports_1.jpg"}
    assert set(COLUMNS).isdisjoint(row.extra)


@pytest.mark.parametrize("column", COLUMNS)
def test_a_row_never_holds_an_extra_column_named_like_a_core_one(column):
    with pytest.raises(ValueError, match=repr(column)):
        ManifestRow("sports_0", "sports", "f.jpg", "CC0-1.0", "", "", "0" * 64, extra={column: "x"})
