"""One rule per pool-manifest field, generated: every value `images check` reports as an error in a
row is refused by `images add` (naming the option) and `images import-release` (naming the licence
CSV, its line and column) before anything is written; every value they accept passes the check. The
commands that ship a pool (`build`, `publish --out`) refuse a pool holding such a row, naming the
manifest's line, and write nothing."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from PIL import Image
from support.cli_contract import changed, refused, scene_state
from support.upstream_release import import_release, upstream_release

from mvlsib.builder.ingest import ingest
from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError
from mvlsib.image_pool.check import CheckOptions, check_pool
from mvlsib.image_pool.rows import refuse_unshippable, row_problems, stored_url
from mvlsib.workdir.corpus import save_corpus
from mvlsib.workdir.pool_manifest import load_pool

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


# ---------------------------------------------------------------- the commands that ship a pool

# Licence and attribution values on top of VALUES: what a release may not redistribute, and what it may.
LICENCES = {
    "nc-nd": "CC-BY-NC-ND-4.0",
    "nc": "CC BY-NC 4.0",
    "nd": "CC-BY-ND-4.0",
    "all-rights": "All rights reserved",
    "gpl": "GPL-3.0-only",
    "empty": "",
    "cc0": "CC0-1.0",
    "by-sa": "CC BY-SA 4.0",
}
SHIP_CASES = {
    **{f"license-{n}": ("license", v) for n, v in LICENCES.items()},
    **{f"{f}-{n}": (f, v) for f in ("author", "source_url", "title") for n, v in VALUES.items()},
    # the planted row's licence is CC-BY-4.0 (below): attribution required
    "author-empty": ("author", ""),
    "source_url-empty": ("source_url", ""),
}


def _plant(pool_dir: Path, dest: Path, field: str, value: str) -> Path:
    """The bundled pool with its first row's ``field`` set to ``value`` (the licence CC-BY-4.0, by a
    named author at a web page, so that an empty author or source_url is an attribution error)."""
    shutil.copytree(pool_dir, dest)
    with open(dest / "manifest.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    fields = list(rows[0]) + (["title"] if "title" not in rows[0] else [])
    rows[0] |= {"license": "CC-BY-4.0", "author": "Ann", "source_url": GOOD["source_url"], "title": "t"}
    rows[0][field] = value
    with open(dest / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n", restval="")
        writer.writeheader()
        writer.writerows(rows)
    return dest


def _verdict_of_check(pool: Path) -> bool:
    """Whether `images check` reports an error about a row of the manifest."""
    report = check_pool(pool, CheckOptions(expected_per_topic=None))
    return any(f.code in ROW_CODES for f in report.errors)


ROW_CODES = {"licence", "attribution", "url", "markup", "schema", "topic", "id"}


@pytest.mark.parametrize("case", sorted(SHIP_CASES))
def test_build_ships_no_row_check_refuses(case, pool_dir: Path, sib_dir: Path, tmp_path: Path):
    """One rule set: `build` refuses exactly the pools whose rows `images check` reports as errors, before
    any stage runs; the pools it accepts pass the library's refusal as well (a build is published below)."""
    field, value = SHIP_CASES[case]
    try:
        pool = _plant(pool_dir, tmp_path / "pool", field, value)
        refused_by_check = _verdict_of_check(pool)
    except MvlsibError:  # the manifest's reader refuses the value (a control character): so does build
        refused_by_check = True
    if not refused_by_check:
        refuse_unshippable(load_pool(pool))
        return
    before = scene_state(tmp_path)
    args = ["build", "--sib", str(sib_dir), "--languages", "eng_Latn", "--pool", str(pool)]
    res = CliRunner().invoke(build_cli, [*args, "--out", str(tmp_path / "rel"), "--no-progress"])
    refused(res, str(pool / "manifest.csv"), moved=changed(before, scene_state(tmp_path)))


@pytest.fixture(scope="module")
def corpus_work(sib_dir: Path, tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("ship") / "work"
    save_corpus(work, ingest(str(sib_dir), languages=["eng_Latn", "fra_Latn"], progress=False))
    return work


@pytest.mark.parametrize(
    ("licence", "author"),
    [("nc-nd", "plain"), ("empty", "plain"), ("cc0", "tag"), ("by-sa", "empty"), ("cc0", "plain")],
)
def test_publish_ships_no_row_check_refuses(licence, author, pool_dir: Path, corpus_work: Path, tmp_path: Path):
    """`sample` draws from any pool (a curator's work in progress); `publish` ships only a clean one."""
    pool = _plant(pool_dir, tmp_path / "pool", "license", LICENCES[licence])
    _plant_again(pool, "author", "" if author == "empty" else VALUES[author])
    work = tmp_path / "work"
    shutil.copytree(corpus_work, work)
    res = CliRunner().invoke(build_cli, ["sample", "--workdir", str(work), "--pool", str(pool), "--no-progress"])
    assert res.exit_code == 0, res.output
    before = scene_state(tmp_path)
    res = CliRunner().invoke(build_cli, ["publish", "--workdir", str(work), "--out", str(tmp_path / "rel")])
    if not _verdict_of_check(pool):
        assert res.exit_code == 0, res.output
        return
    refused(res, str(pool / "manifest.csv"), "line 2", moved=changed(before, scene_state(tmp_path)))


def _plant_again(pool: Path, field: str, value: str) -> None:
    with open(pool / "manifest.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    rows[0][field] = value
    with open(pool / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
