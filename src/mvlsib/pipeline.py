"""``mvlsib-build build``: ingest -> sample -> validate -> publish in one go.

Each stage's value is handed to the next; the work-folder files are written as well, so any
stage can be rerun alone on them (``mvlsib-build sample``, ``validate``, ``publish``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mvlsib import progress as progress_bars
from mvlsib.atomic import refuse_nested, refuse_theirs, replacing
from mvlsib.builder.ingest import ingest
from mvlsib.builder.sample import duplicate_partners, sample, sample_report
from mvlsib.image_pool.rows import refuse_unshippable
from mvlsib.release.manifest import check_release_out
from mvlsib.release.publish import publish
from mvlsib.release.summary import ReleaseSummary
from mvlsib.validation.invariants import refuse_if_invalid, validate
from mvlsib.workdir import BUNDLED_POOL, CORPUS_FILE, INGEST_REPORT_FILE, INSTANCES_FILE, SAMPLE_REPORT_FILE
from mvlsib.workdir.corpus import save_corpus
from mvlsib.workdir.folder import in_use
from mvlsib.workdir.instances import save_instances, save_sample_report
from mvlsib.workdir.pool_manifest import PoolLike, as_pool

STAGES = ("ingest", "sample", "validate", "publish")


@dataclass(frozen=True)
class BuildSummary:
    release: ReleaseSummary
    seconds: dict[str, float] = field(default_factory=dict)

    def lines(self) -> list[str]:
        times = ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        return [*self.release.lines(), f"time: {sum(self.seconds.values()):.1f}s ({times})"]


class _Stages:
    """Runs each stage under the progress bar and records its wall time."""

    def __init__(self, bar: Any):
        self.bar = bar
        self.seconds: dict[str, float] = {}

    def run(self, name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self.bar.set_description(f"build: {name}")
        t0 = time.perf_counter()
        result = fn(*args, **kwargs)
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0
        return result

    def done(self) -> None:
        self.bar.update(1)


def build(
    sib: str,
    out: str | os.PathLike[str],
    *,
    seed: int = 0,
    workdir: str | os.PathLike[str] | None = None,
    pool: PoolLike = BUNDLED_POOL,
    languages: Sequence[str] | None = None,
    revision: str | None = None,
    flores: str | os.PathLike[str] | None = None,
    annotation: str | os.PathLike[str] | None = None,
    repo_hint: str = "ORG/mvl-sib",
    progress: bool = True,
) -> BuildSummary:
    """Run every stage; the work folder is temporary unless ``workdir`` is given.

    ``flores``/``annotation`` add languages built from raw Flores files (e.g. N'Ko) to those of ``sib``.
    ``pool`` is a ``Pool`` or its folder, read once here and handed to every stage.
    """
    check_release_out(out)  # a foreign --out is refused before minutes of work, not after
    if workdir is not None:  # so is a work folder that is the release's
        refuse_nested(("--out", out), [("--workdir", workdir)])
    pool = as_pool(pool)
    refuse_unshippable(pool)  # publish refuses it too, after minutes of work
    # A temporary work folder is gone when the refusal is read: name the release instead.
    where = str(workdir) if workdir is not None else f"{out} (add --workdir DIR to keep the work files)"
    with contextlib.ExitStack() as stack:
        if workdir is not None:  # held from the check to the last write, so no other command slips in between
            stack.enter_context(in_use(workdir))
            # a work file the user placed or edited is refused before minutes of work, not after
            refuse_theirs(
                workdir, [CORPUS_FILE, INGEST_REPORT_FILE, INSTANCES_FILE, SAMPLE_REPORT_FILE], option="--workdir"
            )
        stack.enter_context(replacing(out))  # a second build of this release is refused now, not at the end
        if workdir is None:
            workdir = stack.enter_context(tempfile.TemporaryDirectory(prefix="mvlsib-build-"))
            stack.enter_context(in_use(workdir))
        work = Path(workdir)
        bar = stack.enter_context(progress_bars.bar(total=len(STAGES), desc="build", unit="stage", enabled=progress))
        stages = _Stages(bar)
        corpus = stages.run(
            "ingest",
            ingest,
            sib,
            revision=revision,
            flores=flores,
            annotation=annotation,
            languages=list(languages) if languages else None,
            progress=progress,
        )
        stages.run("ingest", save_corpus, work, corpus)
        stages.done()
        partners = stages.run("sample", duplicate_partners, corpus)
        instances = stages.run("sample", sample, corpus, pool, seed, partners=partners, progress=progress)
        digest = stages.run("sample", save_instances, work, instances)
        report = stages.run("sample", sample_report, corpus, pool, instances, seed, partners=partners, digest=digest)
        stages.run("sample", save_sample_report, work, report.to_dict())
        stages.done()
        result = stages.run("validate", validate, corpus, instances, pool)
        refuse_if_invalid(result, where)
        stages.done()
        release = stages.run(
            "publish", publish, corpus, instances, pool, out, seed=seed, repo_hint=repo_hint, progress=progress
        )
        stages.done()
    return BuildSummary(release=release, seconds=stages.seconds)
