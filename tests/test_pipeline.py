"""`build` chains the stages' values; each stage run alone from the work folder's files (load ->
stage -> save, as the one-stage commands do) must give the same files, and the values handed on
must be exactly what the files hold."""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest
from click.testing import CliRunner

from mvlsib.builder.ingest import ingest
from mvlsib.builder.sample import sample
from mvlsib.cli import build_cli
from mvlsib.textnorm import normalize_text
from mvlsib.validation.invariants import validate
from mvlsib.workdir import CORPUS_COLUMNS
from mvlsib.workdir.corpus import Corpus, load_corpus, save_corpus
from mvlsib.workdir.instances import load_instances, save_instances

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
    """The one-stage commands run one by one, each reading the previous stage's files."""
    base = tmp_path_factory.mktemp("staged")
    work, runner = str(base / "work"), CliRunner()
    steps = [
        ["ingest", "--sib", str(sib_dir), "--languages", LANGS, "--workdir", work, "--no-progress"],
        ["sample", "--seed", "0", "--pool", str(pool_dir), "--workdir", work, "--no-progress"],
        ["validate", "--pool", str(pool_dir), "--workdir", work],
        ["publish", "--workdir", work, "--pool", str(pool_dir), "--out", str(base / "rel")],
    ]
    for args in steps:
        result = runner.invoke(build_cli, args)
        assert result.exit_code == 0, (args[0], result.output)
    return base


def test_stage_values_equal_the_files(sib_dir, pool_dir, tmp_path):
    corpus = ingest(sib_dir, languages=LANGS, progress=False)
    save_corpus(tmp_path, corpus)
    on_disk = load_corpus(tmp_path)
    assert corpus.table.equals(on_disk.table)
    assert corpus.report == on_disk.report
    for name in CORPUS_COLUMNS:
        assert corpus.column(name) == on_disk.column(name), name
    assert corpus.normalized() == on_disk.normalized() == [normalize_text(t) for t in on_disk.column("text")]
    assert [lang for lang, _, _ in corpus.language_blocks()] == sorted(LANGS.split(","))

    instances = sample(corpus, pool_dir, seed=0)
    records = [inst.as_dict() for inst in instances]
    save_instances(tmp_path, records)
    assert records == load_instances(tmp_path)
    records[0]["ref_sentence_ids"].append(1)  # the records do not share lists with the instances
    assert len(instances[0].ref_sentence_ids) == 5

    from_memory = validate(corpus, [i.as_dict() for i in instances], pool_dir)
    from_files = validate(load_corpus(tmp_path), load_instances(tmp_path), pool_dir)
    assert from_memory.ok and from_files.ok and from_memory.summary == from_files.summary


def test_build_equals_the_stages_run_from_files(staged, sib_dir, pool_dir, tmp_path):
    from mvlsib.pipeline import build

    build(
        str(sib_dir),
        tmp_path / "rel",
        workdir=tmp_path / "work",
        pool=pool_dir,
        languages=LANGS.split(","),
        progress=False,
    )
    # The library versions in manifest.json are the same in one process, so the trees compare whole.
    assert _same_tree(staged / "rel", tmp_path / "rel") == []
    for name in ("corpus.parquet", "instances.jsonl", "ingest_report.json"):
        assert filecmp.cmp(staged / "work" / name, tmp_path / "work" / name, shallow=False), name


def test_validation_of_a_bad_corpus_names_the_problems(sib_dir, pool_dir):
    """The corpus checks find what the column-wise screen lets through to jsonschema."""
    corpus = ingest(sib_dir, languages=LANGS, progress=False)
    instances = [inst.as_dict() for inst in sample(corpus, pool_dir, seed=0)]
    columns = {name: list(corpus.column(name)) for name in corpus.names()}
    n = columns["language"].index("zho_Hans") + 3
    columns["text"][n] = "\u3000"  # whitespace only: empty to a reader
    columns["topic"][n + 1] = "cooking"
    for bad in (Corpus(columns=columns), Corpus(Corpus(columns=columns).table)):  # lists, and an arrow table
        result = validate(bad, instances, pool_dir)
        rules = {v.rule for v in result.violations}
        assert {"schema", "corpus-empty-text", "corpus-parallel"} <= rules, rules
        assert any("zho_Hans" in v.detail and "text" in v.detail for v in result.violations if v.rule == "schema")


def test_the_build_refuses_invalid_instances_with_one_summary(sib_dir, pool_dir, tmp_path, monkeypatch):
    import mvlsib.pipeline as pipeline
    from mvlsib.errors import MvlsibError

    def swap_labels(corpus, pool, seed, **kw):
        out = sample(corpus, pool, seed, **kw)
        return [type(i)(**{**i.as_dict(), "sentence_label": (i.sentence_label + 1) % 4}) for i in out[:12]] + out[12:]

    monkeypatch.setattr(pipeline, "sample", swap_labels)
    with pytest.raises(MvlsibError, match=r"validation found \d+ violation\(s\); no release was written") as err:
        pipeline.build(str(sib_dir), tmp_path / "rel", workdir=tmp_path / "w", pool=pool_dir, languages=["eng_Latn"])
    assert "... and" in str(err.value) and not (tmp_path / "rel").exists()


def test_a_build_reads_the_pool_once_and_finds_partners_once(sib_dir, pool_dir, tmp_path, monkeypatch):
    """`mvlsib-build build` reads the pool manifest once and hands the `Pool` to every stage; the
    duplicate partners are found once for the sampler and its report."""
    import mvlsib.builder.sample as sample_module
    import mvlsib.pipeline as pipeline
    import mvlsib.workdir.pool_manifest as pool_manifest

    reads, partner_runs = [], []
    real_read, real_partners = pool_manifest._manifest_bytes, sample_module.duplicate_partners

    def counted_read(path):
        reads.append(path)
        return real_read(path)

    def counted_partners(corpus):
        partner_runs.append(1)
        return real_partners(corpus)

    monkeypatch.setattr(pool_manifest, "_manifest_bytes", counted_read)
    monkeypatch.setattr(sample_module, "duplicate_partners", counted_partners)
    monkeypatch.setattr(pipeline, "duplicate_partners", counted_partners)
    args = ["build", "--sib", str(sib_dir), "--languages", "eng_Latn", "--pool", str(pool_dir)]
    result = CliRunner().invoke(build_cli, [*args, "--out", str(tmp_path / "rel"), "--workdir", str(tmp_path / "w")])
    assert result.exit_code == 0, result.output
    assert len(reads) == 1 and len(partner_runs) == 1, (reads, partner_runs)
