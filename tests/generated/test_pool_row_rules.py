"""One rule per pool-manifest field, generated: every value `images check` reports as an error in a
row is refused by `images add` (naming the option) and `images import-release` (naming the licence
CSV, its line and column) before anything is written; every value they accept passes the check."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image
from support.cli_contract import changed, refused, scene_state
from support.upstream_release import import_release, upstream_release

from mvlsib.cli import build_cli
from mvlsib.image_pool.check import CheckOptions, check_pool
from mvlsib.image_pool.rows import row_problems, stored_url

VALUES = {
    "tag": "<b>x</b>",
    "script": "<script>alert(1)</script>",
    "link": "[click](http://evil.example)",
    "image": "![x](http://evil.example/x.png)",
    "entity": "Tom &amp; Jerry",
    "script-url": "javascript:alert(1)",
    "esc": "a\x1b]0;pwned\x07b",
    "newline": "two\nlines",
    "tab": "a\tb",
    "c1": "a\x85b",
    "plain": "Ann Example",
    "formula": '=HYPERLINK("http://evil.example","x")',
    "spaces": "https://example.org/a photo.jpg",
    "url": "https://example.org/p",
}
GOOD = {
    "image_id": "sports_5",
    "topic": "sports",
    "file": "sports/sports_5.jpg",
    "license": "CC-BY-4.0",
    "author": "Ann",
    "source_url": "https://example.org/p",
    "sha256": "0" * 64,
    "title": "A stadium",
}
ADD_OPTIONS = {
    "image_id": "--image-id",
    "license": "--license",
    "author": "--author",
    "source_url": "--source-url",
    "title": "--title",
}
# the licence CSV's columns (image_id and topic come from the file name; notes is any extra column)
CSV_COLUMNS = ("license", "author", "source_url", "title", "notes")


def _refused_by_check(field: str, value: str) -> bool:
    stored = stored_url(value) if field == "source_url" else value
    row = GOOD | {field: stored.strip() if field == "author" else stored}
    return any(p.field == field and p.severity == "error" for p in row_problems(row))


ADD_CASES = [(f, n) for f in ADD_OPTIONS for n in VALUES]
CSV_CASES = [(f, n) for f in CSV_COLUMNS for n in VALUES]


def test_every_field_has_values_both_ways():
    """The generated cases hold, for every field, values the check refuses (and, but for the fields with
    a fixed form, values it accepts)."""
    for field in {*ADD_OPTIONS, *CSV_COLUMNS}:
        verdicts = {_refused_by_check(field, v) for v in VALUES.values()}
        assert verdicts == {True, False} or (field in ("license", "image_id") and verdicts == {True}), field


@pytest.fixture(scope="module")
def photo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("src") / "photo.jpg"
    Image.radial_gradient("L").resize((640, 480)).convert("RGB").save(path, quality=90)
    return path


@pytest.mark.parametrize(("field", "name"), ADD_CASES, ids=[f"{f}-{n}" for f, n in ADD_CASES])
def test_images_add_refuses_what_check_refuses(field, name, photo: Path, tmp_path: Path):
    value = VALUES[name]
    pool = tmp_path / "pool"
    pool.mkdir()
    values = {"image_id": "sports_5", "license": "CC-BY-4.0", "author": "Ann", "source_url": GOOD["source_url"]}
    values |= {"title": "A stadium", field: value}
    args = ["images", "add", str(photo), "--pool", str(pool), "--topic", "sports"]
    for f, option in ADD_OPTIONS.items():
        args += [option, values[f]]
    before = scene_state(tmp_path)
    res = CliRunner().invoke(build_cli, args)
    if _refused_by_check(field, value):
        refused(res, ADD_OPTIONS[field], moved=changed(before, scene_state(tmp_path)))
        return
    assert res.exit_code == 0, res.output
    _check_passes(pool)


def _check_passes(pool: Path) -> None:
    report = check_pool(pool, CheckOptions(expected_per_topic=None))
    assert report.ok, [f.message for f in report.errors]


_release, _import = upstream_release, import_release


@pytest.mark.parametrize(("field", "name"), CSV_CASES, ids=[f"{f}-{n}" for f, n in CSV_CASES])
def test_import_release_refuses_what_check_refuses(field, name, photo: Path, tmp_path: Path):
    value = VALUES[name]
    facts = {"license": "CC-BY-4.0", "author": "Ann", "source_url": GOOD["source_url"], "title": "t", "notes": "n"}
    release, lic = _release(tmp_path, photo, facts | {field: value})
    before = scene_state(tmp_path)
    res = _import(release, lic, tmp_path / "pool")
    stored = value.strip()  # the licence CSV's cells are stripped
    moved = changed(before, scene_state(tmp_path))
    if _refused_by_check(field, stored):
        refused(res, str(lic), repr(field) if _CONTROL in res.output else f"line 2, {field}", moved=moved)
        return
    if res.exit_code != 0:  # the licence CSV's reader refuses a control character in any column
        assert _CONTROL in refused(res, str(lic), repr(field), moved=moved)
        return
    _check_passes(tmp_path / "pool")


_CONTROL = "holds a control character"
