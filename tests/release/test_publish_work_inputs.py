"""`publish --workdir` takes nothing from a work folder on trust: generated over every file it reads.

Each file of ``release_inputs.READS`` is edited in turn (still readable, so only the check can catch
it): with the folder's ledger, the edit is refused naming the file; without a ledger (a work folder
written by other means), each report is checked against the file it describes, so an edited report
or an edited data file is refused naming the report. Exit 2, one line, no release written. Before,
an edited ``ingest_report.json`` put a false corpus hash and source into the release, exit 0.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from support import write_workdir
from support.cli_contract import changed, refused, scene_state

import mvlsib.workdir
from mvlsib.atomic import LEDGER, edited_since, sha256_file
from mvlsib.builder.ingest import ingest
from mvlsib.builder.sample import sample
from mvlsib.cli import build_cli
from mvlsib.workdir import BUNDLED_POOL, CORPUS_FILE, INGEST_REPORT_FILE, INSTANCES_FILE, SAMPLE_REPORT_FILE
from mvlsib.workdir.corpus import load_corpus, save_corpus
from mvlsib.workdir.instances import recorded_pool, save_instances
from mvlsib.workdir.pool_manifest import load_pool
from mvlsib.workdir.release_inputs import DESCRIBES, READS, SAMPLED_FROM

LANGS = ["eng_Latn", "fra_Latn"]


def _edit_corpus(path: Path) -> None:
    table = pq.read_table(path)
    texts = table.column("text")
    first = texts[0].as_py()
    table = table.set_column(4, "text", pc.if_else(pc.equal(texts, first), first + " (edited)", texts))
    pq.write_table(table, path)


def _edit_json(field: str, value) -> Callable[[Path], None]:
    def edit(path: Path) -> None:
        data = json.loads(path.read_text("utf-8"))
        data[field] = value
        if field == "corpus_sha256":
            data["sources"] = [{"kind": "hub", "location": "someone-else/not-sib200", "revision": "deadbeef"}]
        path.write_text(json.dumps(data), encoding="utf-8")

    return edit


def _edit_instances(path: Path) -> None:
    lines = path.read_text("utf-8").splitlines()
    first = json.loads(lines[0])
    first["sentence_label"] = (first["sentence_label"] + 1) % 4
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")


# One edit per file publish reads; a report's edit changes the hash it records of its file.
EDITS = {
    "corpus.parquet": _edit_corpus,
    "ingest_report.json": _edit_json("corpus_sha256", "f" * 64),
    "instances.jsonl": _edit_instances,
    "sample_report.json": _edit_json("instances_sha256", "e" * 64),
}
# Without a ledger, which file the refusal names: the report that no longer describes its file.
NAMED_WITHOUT_LEDGER = {
    "corpus.parquet": "ingest_report.json",
    "ingest_report.json": "ingest_report.json",
    "instances.jsonl": "sample_report.json",
    "sample_report.json": "sample_report.json",
}


def test_every_file_publish_reads_is_edited_here():
    contract = {v for k, v in vars(mvlsib.workdir).items() if k.endswith("_FILE") and k != "POOL_MANIFEST_FILE"}
    assert set(READS) == contract == set(EDITS) == set(NAMED_WITHOUT_LEDGER)


@pytest.fixture(scope="module")
def small_work(tmp_path_factory, sib_dir, pool_dir) -> Path:
    return write_workdir(tmp_path_factory.mktemp("publish-inputs") / "work", sib_dir, pool_dir, languages=LANGS)


@pytest.fixture()
def scene(small_work, tmp_path) -> Path:
    shutil.copytree(small_work, tmp_path / "work")
    return tmp_path


def _publish(scene: Path):
    return CliRunner().invoke(
        build_cli, ["publish", "--workdir", str(scene / "work"), "--out", str(scene / "rel"), "--no-progress"]
    )


def test_an_unedited_work_folder_publishes(scene):
    res = _publish(scene)
    assert res.exit_code == 0, res.output
    manifest = json.loads((scene / "rel/manifest.json").read_text("utf-8"))
    assert manifest["build"]["source"]["corpus_sha256"] == sha256_file(scene / "work/corpus.parquet")


@pytest.mark.parametrize("name", sorted(EDITS))
def test_an_edited_work_file_is_refused(name, scene):
    EDITS[name](scene / "work" / name)
    before = scene_state(scene)
    line = refused(_publish(scene), str(scene / "work" / name), "edited since", "--workdir")
    assert changed(before, scene_state(scene)) == [], line
    assert not (scene / "rel").exists()


@pytest.mark.parametrize("name", sorted(EDITS))
def test_without_a_ledger_each_report_is_checked_against_its_file(name, scene):
    (scene / "work" / LEDGER).unlink()
    EDITS[name](scene / "work" / name)
    before = scene_state(scene)
    named = scene / "work" / NAMED_WITHOUT_LEDGER[name]
    line = refused(_publish(scene), str(named), "is not about this file", "--workdir")
    assert changed(before, scene_state(scene)) == [], line
    assert not (scene / "rel").exists()


# Each described file made again by its own writer, the report beside it left as it was: no edit the
# ledger sees, only the report's record of the file tells. (A second `ingest` writes a new corpus and
# its report, so only the sample report's record of the corpus is then out of date.)
def _corpus_without_report(work: Path, sib: Path) -> None:
    corpus = ingest(str(sib), languages=["eng_Latn"], progress=False)
    corpus.report = {}
    save_corpus(work, corpus)


def _ingest_again(work: Path, sib: Path) -> None:
    save_corpus(work, ingest(str(sib), languages=["eng_Latn"], progress=False))


def _sample_again(work: Path, _sib: Path) -> None:
    corpus = load_corpus(work)
    pool, _ = recorded_pool(work) or (BUNDLED_POOL, "")
    save_instances(work, sample(corpus, load_pool(pool), 1, progress=False))


REMADE = {
    (INGEST_REPORT_FILE, CORPUS_FILE): _corpus_without_report,
    (SAMPLE_REPORT_FILE, INSTANCES_FILE): _sample_again,
    (SAMPLE_REPORT_FILE, CORPUS_FILE): _ingest_again,
}


def test_every_record_a_report_holds_is_remade_here():
    assert set(REMADE) == {(report, described) for report, _, described, _ in DESCRIBES}
    assert SAMPLED_FROM == tuple(
        row for row in DESCRIBES if row[:3] == (SAMPLE_REPORT_FILE, "corpus_sha256", CORPUS_FILE)
    )


@pytest.mark.parametrize(("report", "described"), sorted(REMADE), ids=lambda v: v)
def test_a_file_made_again_beside_an_old_report_is_refused(report, described, scene, sib_dir):
    REMADE[report, described](scene / "work", sib_dir)
    assert edited_since(scene / "work", READS) == []  # each file is its stage's: only the report can tell
    before = scene_state(scene)
    stage = READS[report]
    line = refused(_publish(scene), str(scene / "work" / report), described, f"mvlsib-build {stage} --workdir")
    assert changed(before, scene_state(scene)) == [], line
    assert not (scene / "rel").exists()


def test_the_sample_report_records_the_corpus_sampled(scene):
    report = json.loads((scene / "work" / SAMPLE_REPORT_FILE).read_text("utf-8"))
    assert report["corpus_sha256"] == sha256_file(scene / "work" / CORPUS_FILE)


@pytest.mark.parametrize("json_out", [False, True], ids=["plain", "json"])
def test_validate_refuses_instances_sampled_from_another_corpus(json_out, scene, sib_dir):
    """Drawn from another corpus of the same sentence ids, the instances pass every invariant; only the
    sample report's record of the corpus tells."""
    _ingest_again(scene / "work", sib_dir)
    before = scene_state(scene)
    args = ["validate", "--workdir", str(scene / "work"), "--no-progress"]
    args += ["--json", str(scene / "v.json")] if json_out else []
    refused(
        CliRunner().invoke(build_cli, args),
        str(scene / "work" / SAMPLE_REPORT_FILE),
        "sampled from another corpus",
        moved=changed(before, scene_state(scene)),
    )
    # sampled again, the same folder validates
    res = CliRunner().invoke(build_cli, ["sample", "--workdir", str(scene / "work"), "--no-progress"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(build_cli, args)
    assert res.exit_code == 0, res.output
    assert _publish(scene).exit_code == 0
