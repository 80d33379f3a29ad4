"""Publishing a release from a work folder in-process, as `mvlsib-build publish --out` does:
load the work folder's files, validate them (unless told not to), publish."""

from __future__ import annotations

from pathlib import Path

from mvlsib.release.publish import publish
from mvlsib.release.summary import ReleaseSummary
from mvlsib.validation.invariants import refuse_if_invalid, validate
from mvlsib.workdir.corpus import load_corpus
from mvlsib.workdir.instances import load_instances, recorded_seed


def publish_from(
    workdir: Path, out: Path, pool: Path, *, check: bool = True, seed: int | None = None, **options
) -> ReleaseSummary:
    corpus, instances = load_corpus(workdir), load_instances(workdir)
    if check:
        refuse_if_invalid(validate(corpus, instances, pool), workdir)
    seed = seed if seed is not None else recorded_seed(workdir)
    return publish(corpus, instances, pool, out, seed=seed, **options)
