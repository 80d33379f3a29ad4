"""What ``publish --workdir`` reads from a work folder, each file checked before it reaches a release.

A release records the corpus hash, the SIB-200 source, the seed and the pool as the work folder's
reports give them, so a report must be the one the stage wrote, about the files beside it: every
file is checked against the folder's ledger (a file the ledger records with another content was
edited since), and each report against the file it describes (``ingest_report.json``'s
``corpus_sha256`` against the sha256 of ``corpus.parquet``, ``sample_report.json``'s
``instances_sha256`` against that of ``instances.jsonl``), in a work folder without a ledger too.
:data:`READS` names every work file read here; a test edits each one in turn.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mvlsib.atomic import edited_since, sha256_file
from mvlsib.errors import MvlsibError
from mvlsib.workdir import CORPUS_FILE, INGEST_REPORT_FILE, INSTANCES_FILE, SAMPLE_REPORT_FILE
from mvlsib.workdir.corpus import Corpus, load_corpus
from mvlsib.workdir.instances import load_instances, load_sample_report, recorded_seed
from mvlsib.workdir.pool_manifest import Pool, PoolLike, sampled_pool

# Every work-folder file publish reads, and the stage that writes it (what to run again).
READS = {
    CORPUS_FILE: "ingest",
    INGEST_REPORT_FILE: "ingest",
    INSTANCES_FILE: "sample",
    SAMPLE_REPORT_FILE: "sample",
}


@dataclass(frozen=True)
class WorkInputs:
    corpus: Corpus
    instances: Sequence[dict]
    pool: Pool
    seed: int | None


def load_release_inputs(workdir: str | os.PathLike[str], pool: PoolLike | None, seed: int | None) -> WorkInputs:
    """The corpus, instances, pool and seed of ``workdir`` for a release, checked (module docstring)."""
    work = Path(workdir)
    edited = edited_since(work, READS)
    if edited:
        name = edited[0]
        raise MvlsibError(
            f"{work / name}: edited since `mvlsib-build {READS[name]}` wrote it (the work folder's ledger records "
            f"other content), so what it says cannot go into a release; run `mvlsib-build {READS[name]} --workdir "
            f"{work}` again"
        )
    corpus = load_corpus(work)
    _same_hash(work, INGEST_REPORT_FILE, corpus.report, "corpus_sha256", CORPUS_FILE)
    instances = load_instances(work)
    _same_hash(work, SAMPLE_REPORT_FILE, load_sample_report(work), "instances_sha256", INSTANCES_FILE)
    return WorkInputs(
        corpus=corpus,
        instances=instances,
        pool=sampled_pool(work, pool),
        seed=seed if seed is not None else recorded_seed(work),
    )


def _same_hash(work: Path, report_name: str, report: dict, field: str, described: str) -> None:
    """Refuse ``report_name`` when its ``field`` is not the sha256 of the file ``described``."""
    if not report:
        return  # no report: a corpus or instances written by other means; nothing recorded to trust
    recorded = report.get(field)
    actual = sha256_file(work / described)
    if recorded != actual:
        shown = f"sha256 {recorded[:12]}" if isinstance(recorded, str) and recorded else f"no {field}"
        raise MvlsibError(
            f"{work / report_name}: records {shown}, but {work / described} has sha256 {actual[:12]}: the report "
            f"is not about this file; run `mvlsib-build {READS[described]} --workdir {work}` again"
        )
