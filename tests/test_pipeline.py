"""`build` hands each stage what the previous one wrote instead of reading it back (issue #15):
the in-memory corpus and instances must be exactly what the files hold, and a build must equal
the stages run one by one from the files."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

LANGS = "eng_Latn,arb_Arab,zho_Hans"


def _same_tree(a: Path, b: Path) -> list[str]:
    diffs = []
    for path in sorted(p for p in a.rglob("*") if p.is_file()):
        other = b / path.relative_to(a)
        if not other.is_file() or not filecmp.cmp(path, other, shallow=False):
            diffs.append(str(path.relative_to(a)))
    extra = {p.relative_to(b) for p in b.rglob("*") if p.is_file()} - {
        p.relative_to(a) for p in a.rglob("*") if p.is_file()
    }
    return diffs + sorted(map(str, extra))


@pytest.fixture(scope="module")
def staged(sib_dir, pool_dir, tmp_path_factory):
    """The stages run one by one, each reading the previous stage's files."""
    from mvlsib.builder.ingest import ingest
    from mvlsib.builder.sample import sample
    from mvlsib.release.publish import publish

    base = tmp_path_factory.mktemp("staged")
    ingest(base / "work", sib=sib_dir, languages=LANGS, progress=False)
    sample(base / "work", seed=0, pool=pool_dir)
    publish(base / "work", base / "rel", pool_dir, seed=0, progress=False, versions={"pinned": "1"})
    return base


def test_in_memory_corpus_and_instances_equal_the_files(sib_dir, pool_dir, tmp_path):
    from mvlsib.builder.ingest import ingest_corpus
    from mvlsib.builder.sample import sample_corpus
    from mvlsib.textnorm import normalize_text
    from mvlsib.validation.invariants import validate_workdir
    from mvlsib.workdir import CORPUS_COLUMNS
    from mvlsib.workdir.corpus import load_corpus
    from mvlsib.workdir.instances import read_instances

    _, corpus = ingest_corpus(tmp_path, sib=sib_dir, languages=LANGS, progress=False)
    on_disk = load_corpus(tmp_path)
    assert corpus.table.equals(on_disk.table)
    for name in CORPUS_COLUMNS:
        assert corpus.column(name) == on_disk.column(name), name
    assert corpus.normalized() == on_disk.normalized() == [normalize_text(t) for t in on_disk.column("text")]
    assert [lang for lang, _, _ in corpus.language_blocks()] == sorted(LANGS.split(","))

    _, instances = sample_corpus(tmp_path, seed=0, pool=pool_dir, corpus=corpus)
    records = [inst.as_dict() for inst in instances]
    assert records == read_instances(tmp_path)
    records[0]["ref_sentence_ids"].append(1)  # the records do not share lists with the instances
    assert len(instances[0].ref_sentence_ids) == 5

    from_memory = validate_workdir(tmp_path, pool_dir, corpus=corpus, instances=[i.as_dict() for i in instances])
    from_files = validate_workdir(tmp_path, pool_dir)
    assert from_memory.ok and from_files.ok and from_memory.summary == from_files.summary


def test_build_equals_the_stages_run_from_files(staged, sib_dir, pool_dir, tmp_path):
    """Also: the build runs with fewer cycle-collector passes and gives the caller's thresholds back."""
    import gc

    import mvlsib.release.manifest as manifest
    from mvlsib.pipeline import _GC_YOUNG_THRESHOLD, build

    real = manifest.library_versions
    manifest.library_versions = lambda: {"pinned": "1"}  # as `staged` pinned them
    before = gc.get_threshold()
    seen: list[int] = []

    def record(phase, info):
        if phase == "start":
            seen.append(gc.get_threshold()[0])

    gc.set_threshold(700, 10, 10)
    gc.callbacks.append(record)
    try:
        build(
            str(sib_dir),
            tmp_path / "rel",
            workdir=tmp_path / "work",
            pool=pool_dir,
            languages=LANGS.split(","),
            progress=False,
        )
        gc.callbacks.remove(record)
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        manifest.library_versions = real
        gc.set_threshold(*before)
        if record in gc.callbacks:
            gc.callbacks.remove(record)
    # Without the raised threshold this 3-language build makes dozens of passes at 700. Once the
    # thresholds are given back, the allocations counted so far may start one pass at once.
    assert set(seen[:-1]) <= {_GC_YOUNG_THRESHOLD}, seen
    assert _same_tree(staged / "rel", tmp_path / "rel") == []
    for name in ("corpus.parquet", "instances.jsonl", "ingest_report.json"):
        assert filecmp.cmp(staged / "work" / name, tmp_path / "work" / name, shallow=False), name


def test_validation_of_the_in_memory_corpus_still_finds_problems(sib_dir, pool_dir, tmp_path):
    """The whole-column shortcuts give way to the detailed checks on a bad corpus."""
    from mvlsib.builder.ingest import ingest_corpus
    from mvlsib.builder.sample import sample_corpus
    from mvlsib.validation.invariants import validate_workdir
    from mvlsib.workdir.corpus import Corpus

    _, corpus = ingest_corpus(tmp_path, sib=sib_dir, languages=LANGS, progress=False)
    _, instances = sample_corpus(tmp_path, seed=0, pool=pool_dir, corpus=corpus)
    columns = {name: list(corpus.column(name)) for name in corpus.names()}
    n = columns["language"].index("zho_Hans") + 3
    columns["text"][n] = "\u3000"  # whitespace only: empty to a reader
    columns["topic"][n + 1] = "cooking"
    bad = Corpus(columns=columns)
    result = validate_workdir(tmp_path, pool_dir, corpus=bad, instances=[i.as_dict() for i in instances])
    rules = {v.rule for v in result.violations}
    assert {"schema", "corpus-empty-text", "corpus-parallel"} <= rules, rules
    assert any("zho_Hans" in v.detail and "text" in v.detail for v in result.violations if v.rule == "schema")


def test_fewer_gc_passes_keeps_a_callers_choice():
    import gc

    from mvlsib.pipeline import _GC_YOUNG_THRESHOLD, _fewer_gc_passes

    before = gc.get_threshold()
    try:
        for given, during in [
            ((700, 10, 10), (_GC_YOUNG_THRESHOLD, 10, 10)),
            ((0, 10, 10), (0, 10, 10)),  # automatic passes turned off stay off
            ((500_000, 5, 5), (500_000, 5, 5)),
        ]:  # a higher threshold is kept
            gc.set_threshold(*given)
            with pytest.raises(RuntimeError):
                with _fewer_gc_passes():
                    assert gc.get_threshold() == during
                    raise RuntimeError("a stage failed")
            assert gc.get_threshold() == given
    finally:
        gc.set_threshold(*before)
