"""``mvlsib-build build``: ingest -> sample -> validate -> publish-to-folder in one go."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mvlsib.errors import MvlsibError
from mvlsib.workdir import BUNDLED_POOL

STAGES = ("ingest", "sample", "validate", "publish")


# CPython's cycle collector runs a young-generation pass every 700 net container allocations.
# A build allocates millions of short-lived tuples, lists and dicts and makes almost no cycles,
# so with the default about 600 passes (a few of them over the whole heap) cost ~0.2 CPU s of a
# ~6.5 s build and free nothing (docs/performance.md, section 3). Peak memory is unchanged.
_GC_YOUNG_THRESHOLD = 100_000


@contextlib.contextmanager
def _fewer_gc_passes():
    """Raise the young-generation threshold for the duration; the caller's thresholds come back."""
    before = gc.get_threshold()
    if 0 < before[0] < _GC_YOUNG_THRESHOLD:  # 0 means the caller turned automatic passes off
        gc.set_threshold(_GC_YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@dataclass(frozen=True)
class BuildSummary:
    release: object  # publish.ReleaseSummary
    seconds: dict[str, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        times = ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        return [*self.release.lines(), f"time: {sum(self.seconds.values()):.1f}s ({times})"]


@_fewer_gc_passes()
def build(
    sib: str,
    out: str | os.PathLike[str],
    *,
    seed: int = 0,
    workdir: str | os.PathLike[str] | None = None,
    pool: str | os.PathLike[str] = BUNDLED_POOL,
    languages: Sequence[str] | None = None,
    revision: str | None = None,
    flores: str | os.PathLike[str] | None = None,
    annotation: str | os.PathLike[str] | None = None,
    repo_hint: str = "ORG/mvl-sib",
    progress: bool = True,
) -> BuildSummary:
    """Run every stage; the work folder is temporary unless ``workdir`` is given.

    ``flores``/``annotation`` add languages built from raw Flores files (e.g. N'Ko) to those of ``sib``.
    """
    from mvlsib.progress import tqdm_class

    tqdm = tqdm_class()

    from mvlsib.builder.ingest import ingest_corpus
    from mvlsib.builder.sample import sample_corpus
    from mvlsib.release.publish import publish
    from mvlsib.validation.invariants import validate_workdir

    seconds: dict[str, float] = {}
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="mvlsib-build-"))
        work = Path(workdir)
        work.mkdir(parents=True, exist_ok=True)
        bar = stack.enter_context(
            tqdm(total=len(STAGES), desc="build", unit="stage", file=sys.stderr, disable=not progress)
        )

        def stage(name: str, fn, *args, **kwargs):
            bar.set_description(f"build: {name}")
            t0 = time.perf_counter()
            result = fn(*args, **kwargs)
            seconds[name] = time.perf_counter() - t0
            bar.update(1)
            return result

        ingest_kwargs = {"sib": sib, "progress": progress}
        if languages:
            ingest_kwargs["languages"] = list(languages)
        if revision:
            ingest_kwargs["revision"] = revision
        if flores is not None:
            ingest_kwargs.update(flores=flores, annotation=annotation)
        # Each stage writes its files into the work folder as when run alone; the next stage is
        # handed what was written (the corpus, the instance records) instead of reading it back.
        _, corpus = stage("ingest", ingest_corpus, work, **ingest_kwargs)
        _, sampled = stage("sample", sample_corpus, work, seed=seed, pool=pool, progress=progress, corpus=corpus)
        instances = [inst.as_dict() for inst in sampled]
        violations = stage("validate", validate_workdir, work, pool, corpus=corpus, instances=instances).violations
        if violations:
            shown = "\n  - ".join(str(v).strip() for v in list(violations)[:20])
            more = f"\n  ... and {len(violations) - 20} more" if len(violations) > 20 else ""
            raise MvlsibError(
                f"{work}: validation found {len(violations)} violation(s); no release was written:\n  - {shown}{more}"
            )
        release = stage(
            "publish",
            publish,
            work,
            out,
            pool,
            seed=seed,
            repo_hint=repo_hint,
            progress=progress,
            validate=False,  # just validated above
            corpus=corpus,
            instances=instances,
        )
    return BuildSummary(release=release, seconds=seconds)
