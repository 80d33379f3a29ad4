"""A full work folder (all languages of ../shared/sib-200, seed 0), built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def full_workdir(sib_dir: Path, pool_dir: Path, tmp_path_factory) -> Path:
    from mvlsib.builder.ingest import ingest
    from mvlsib.builder.sample import sample

    work = tmp_path_factory.mktemp("work-full")
    ingest(work, sib=sib_dir, progress=False)
    sample(work, seed=0, pool=pool_dir)
    return work


@pytest.fixture(scope="session")
def full_corpus(full_workdir: Path):
    from mvlsib.builder.ingest import read_corpus

    return read_corpus(full_workdir)


@pytest.fixture(scope="session")
def full_instances(full_workdir: Path) -> list[dict]:
    from mvlsib.builder.sample import read_instances

    return read_instances(full_workdir)
