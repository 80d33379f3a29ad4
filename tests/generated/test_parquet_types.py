"""Parquet files read with their declared column types (``readers.read_parquet(types=...)``): a column
of the wrong type is one line naming the file and the column, before any work, for every column of
the work folder's corpus and of a release's tables. Generated from the type tables the writers use
(``workdir.corpus.CORPUS_TYPES``, ``mvl_sib.LANGUAGE_COLUMNS`` / ``IMAGE_COLUMNS``), not listed here.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from support.cli_contract import refused

from mvlsib.cli import build_cli
from mvlsib.release_format import mvl_sib
from mvlsib.workdir.corpus import CORPUS_TYPES


def invoke(*args):
    return CliRunner().invoke(build_cli, [str(a) for a in args])


def _other(column: pa.ChunkedArray) -> pa.Array:
    """The column's values as another type: numbers as text, text as numbers, lists as their lengths."""
    values = column.to_pylist()
    if pa.types.is_integer(column.type):
        return pa.array([None if v is None else str(v) for v in values], pa.string())
    if pa.types.is_list(column.type):
        return pa.array([None if v is None else len(v) for v in values], pa.int64())
    return pa.array([len(v or "") for v in values], pa.int64())


def _retype(path: Path, column: str) -> None:
    table = pq.read_table(path)
    i = table.schema.get_field_index(column)
    pq.write_table(table.set_column(i, column, _other(table.column(column))), path)


@pytest.fixture(scope="module")
def workdir(sib_dir, tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("typed-work") / "work"
    result = invoke("ingest", "--sib", sib_dir, "--languages", "eng_Latn", "--workdir", work, "--no-progress")
    assert result.exit_code == 0, result.output
    return work


@pytest.mark.parametrize("command", ["sample", "validate"])
@pytest.mark.parametrize("column", [name for name, _ in CORPUS_TYPES])
def test_a_corpus_column_of_another_type_is_one_line(workdir, tmp_path, column, command):
    work = tmp_path / "work"
    shutil.copytree(workdir, work)
    _retype(work / "corpus.parquet", column)
    before = sorted(p.name for p in work.iterdir())
    line = refused(invoke(command, "--workdir", work, "--no-progress"))
    assert "corpus.parquet" in line and repr(column) in line, line
    assert sorted(p.name for p in work.iterdir()) == before  # nothing written


_CHECKED = {"string", "int64", "list<int64>", "list<string>"}
_RELEASE_COLUMNS = [("eng_Latn", c) for c, t in mvl_sib.LANGUAGE_COLUMNS if t in _CHECKED] + [
    ("images", c) for c, t in mvl_sib.IMAGE_COLUMNS if t in _CHECKED
]


def _relist(release: Path, rel: str) -> None:
    manifest = json.loads((release / "manifest.json").read_text("utf-8"))
    data = (release / rel).read_bytes()
    manifest["files"][rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    (release / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True), "utf-8")


def test_a_release_file_changed_after_its_manifest_is_one_line_for_every_export(release_dir, tmp_path):
    release = tmp_path / "rel"
    shutil.copytree(release_dir, release)
    _retype(release / "data" / "eng_Latn" / "test.parquet", "topic")
    for fmt in ("vlmevalkit", "mteb", "lmms-eval", "inspect"):
        out = tmp_path / fmt
        line = refused(invoke("export", fmt, "--release", release, "--out", out))
        assert "manifest.json" in line and "data/eng_Latn/test.parquet" in line, line
        assert not out.exists()


@pytest.mark.parametrize(("config", "column"), _RELEASE_COLUMNS, ids=lambda v: str(v))
def test_a_release_column_of_another_type_is_one_line(release_dir, tmp_path, config, column):
    release = tmp_path / "rel"
    shutil.copytree(release_dir, release)
    _retype(release / "data" / config / "test.parquet", column)
    _relist(release, f"data/{config}/test.parquet")  # a release made so, not one changed after its manifest
    out = tmp_path / "export"
    line = refused(invoke("export", "vlmevalkit", "--release", release, "--out", out))
    assert f"{config}/test.parquet" in line and repr(column) in line, line
    assert not out.exists()


def _with(path: Path, column: str, at: int, value) -> None:
    table = pq.read_table(path)
    values = table.column(column).to_pylist()
    values[at] = value
    i = table.schema.get_field_index(column)
    pq.write_table(table.set_column(i, column, pa.array(values, table.schema.field(column).type)), path)


_VALUE_FAULTS = [(name, None) for name, _ in CORPUS_TYPES] + [
    ("index_id", -1),
    ("index_id", 10**9),
    ("index_id", 2**62),
]


@pytest.mark.parametrize("command", ["sample", "validate"])
@pytest.mark.parametrize(("column", "value"), _VALUE_FAULTS, ids=lambda v: str(v))
def test_a_corpus_value_the_stages_cannot_index_is_one_line(workdir, tmp_path, column, value, command):
    work = tmp_path / "work"
    shutil.copytree(workdir, work)
    _with(work / "corpus.parquet", column, 3, value)
    line = refused(invoke(command, "--workdir", work, "--no-progress"))
    assert "corpus.parquet" in line and repr(column) in line, line


_CONTROLS = {f"U+{c:04X}": chr(c) for c in (0x00, 0x07, 0x1B, 0x7F, 0x90, 0x9B, 0x9D)}


# publish: the ledger refuses an edited corpus.parquet first (tests/release/test_publish_work_inputs.py)
@pytest.mark.parametrize("command", ["sample", "validate"])
@pytest.mark.parametrize("control", sorted(_CONTROLS))
def test_a_corpus_text_with_a_terminal_control_is_refused_as_ingest_refuses_it(workdir, tmp_path, control, command):
    """One rule for a sentence, whoever wrote the corpus: ingest refuses the file, every later stage
    refuses the same text in corpus.parquet (an export would carry it to a terminal)."""
    work = tmp_path / "work"
    shutil.copytree(workdir, work)
    text = pq.read_table(work / "corpus.parquet").column("text")[5].as_py()
    _with(work / "corpus.parquet", "text", 5, f"{text[:3]}{_CONTROLS[control]}]0;owned\x07{text[3:]}")
    line = refused(invoke(command, "--workdir", work, "--no-progress"))
    assert "corpus.parquet" in line and f"control character {control}" in line, line


def _instance_faults():
    from mvlsib.schema.validators import load_schema

    for field in load_schema("instance")["required"]:
        for label in ("null", "other-type", "missing"):
            yield pytest.param(field, label, id=f"{field}={label}")


@pytest.fixture(scope="module")
def sampled(workdir, tmp_path_factory):
    from mvlsib.workdir.corpus import load_corpus
    from mvlsib.workdir.instances import load_instances

    work = tmp_path_factory.mktemp("sampled") / "work"
    shutil.copytree(workdir, work)
    assert invoke("sample", "--workdir", work, "--no-progress").exit_code == 0
    return load_corpus(work), load_instances(work)


@pytest.mark.parametrize(("field", "fault"), list(_instance_faults()))
def test_publish_without_validation_still_refuses_an_instance_of_the_wrong_shape(
    sampled, pool_dir, tmp_path, field, fault
):
    """Publishing skips the invariants when told to (--no-validate), never the instance schema: the
    release's tables are typed by it (a wrong type was a pyarrow traceback, a wrong value written)."""
    import copy

    from mvlsib.errors import MvlsibError
    from mvlsib.release.publish import publish

    corpus, instances = sampled
    records = copy.deepcopy(instances)
    first = records[0]
    if fault == "missing":
        del first[field]
    else:
        first[field] = None if fault == "null" else (7 if isinstance(first[field], str) else "x")
    with pytest.raises(MvlsibError, match="violation") as err:
        publish(corpus, records, pool_dir, tmp_path / "rel", progress=False)
    assert "schema" in "\n".join(err.value.items), err.value.items
    assert not (tmp_path / "rel").exists()
