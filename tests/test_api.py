"""The Python API as README.md shows it: ``from mvlsib import ingest, sample, validate, publish``
chains on values (what ``sample`` returns goes straight into ``validate`` and ``publish``), and the
release it writes is the one ``mvlsib-build build`` writes from the same inputs."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

LANGS = ("eng_Latn", "fra_Latn")


def _hashes(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def two_languages(sib_dir, tmp_path_factory) -> Path:
    """A SIB-200 folder in the repository layout holding two real languages (links to ../shared)."""
    root = tmp_path_factory.mktemp("sib2")
    annotated = root / "data" / "annotated"
    annotated.mkdir(parents=True)
    for lang in LANGS:
        (annotated / lang).symlink_to(Path(sib_dir) / "data" / "annotated" / lang, target_is_directory=True)
    return root


def test_the_readme_chain_equals_the_build_command(two_languages, tmp_path):
    from mvlsib import BUNDLED_POOL, ingest, publish, sample, validate

    # The chain of README.md ("The pipeline"), word for word but for the folders.
    corpus = ingest(str(two_languages), progress=False)
    instances = sample(corpus, BUNDLED_POOL, seed=0)
    result = validate(corpus, instances, BUNDLED_POOL)
    assert result.ok, result.violations[:5]
    assert result.summary["instances"] == 3012 and result.summary["languages"] == len(LANGS)
    publish(corpus, instances, BUNDLED_POOL, tmp_path / "api", seed=0, progress=False)

    cli = CliRunner().invoke(
        __import__("mvlsib.cli", fromlist=["build_cli"]).build_cli,
        ["build", "--sib", str(two_languages), "--seed", "0", "--out", str(tmp_path / "cli")],
    )
    assert cli.exit_code == 0, cli.output
    # manifest.json included: it records parameters, hashes and library versions (the same in one
    # process), no timings or temporary paths.
    api, built = _hashes(tmp_path / "api"), _hashes(tmp_path / "cli")
    assert sorted(api) == sorted(built)
    assert [name for name in api if api[name] != built[name]] == []
    assert {f"data/{lang}/test.parquet" for lang in LANGS} <= set(api)


def test_validate_and_publish_take_what_sample_returns_and_the_file_records(two_languages, tmp_path):
    """Instances and the dicts of instances.jsonl are the same input to validate and publish."""
    from mvlsib import BUNDLED_POOL, ingest, load_pool, sample, validate
    from mvlsib.workdir.instances import Instance, load_instances, save_instances

    corpus = ingest(str(two_languages), progress=False)
    pool = load_pool(BUNDLED_POOL)
    instances = sample(corpus, pool, seed=0)
    assert all(isinstance(inst, Instance) for inst in instances)
    save_instances(tmp_path, instances)
    records = load_instances(tmp_path)
    assert records == [inst.as_dict() for inst in instances]
    from_values, from_records = validate(corpus, instances, pool), validate(corpus, records, pool)
    assert from_values.ok and from_records.ok and from_values.summary == from_records.summary
    # a planted fault is found in either form
    bad = [type(instances[0])(**{**instances[0].as_dict(), "sentence_label": 7}), *instances[1:]]
    assert {v.rule for v in validate(corpus, bad, pool).violations} >= {"schema"}
