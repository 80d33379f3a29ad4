"""What ``publish --workdir`` reads from a work folder, each file checked before it reaches a release.

A release records the corpus hash, the SIB-200 source, the seed and the pool as the work folder's
reports give them, so a report must be the one the stage wrote, about the files beside it: every
file is checked against the folder's ledger (a file the ledger records with another content was
edited since), and each report against every file it describes (:data:`DESCRIBES`: the corpus an
ingest report is about, the instances a sample report is about and the corpus they were drawn
from), in a work folder without a ledger too. A file made again by its stage (a second ``ingest``)
is no edit, so only the second check sees that ``instances.jsonl`` was drawn from the corpus before.
:data:`READS` names every work file read here; a test edits each one in turn, another replaces each
described file by one its stage wrote.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mvlsib.atomic import edited_since, sha256_file
from mvlsib.errors import MvlsibError
from mvlsib.workdir import CORPUS_FILE, INGEST_REPORT_FILE, INSTANCES_FILE, SAMPLE_REPORT_FILE
from mvlsib.workdir.corpus import Corpus, load_corpus, load_ingest_report
from mvlsib.workdir.instances import load_instances, load_sample_report, recorded_seed
from mvlsib.workdir.pool_manifest import Pool, PoolLike, sampled_pool

# Every work-folder file publish reads, and the stage that writes it (what to run again).
READS = {
    CORPUS_FILE: "ingest",
    INGEST_REPORT_FILE: "ingest",
    INSTANCES_FILE: "sample",
    SAMPLE_REPORT_FILE: "sample",
}

# What each report records of a file beside it: (report, field holding that file's sha256, the file,
# what a mismatch means). The stage to run again is the report's (READS).
DESCRIBES = (
    (INGEST_REPORT_FILE, "corpus_sha256", CORPUS_FILE, "the report is not about this file"),
    (SAMPLE_REPORT_FILE, "instances_sha256", INSTANCES_FILE, "the report is not about this file"),
    (
        SAMPLE_REPORT_FILE,
        "corpus_sha256",
        CORPUS_FILE,
        f"{INSTANCES_FILE} was sampled from another corpus (ingest ran again since)",
    ),
)
# The rows about what the instances were drawn from: what `validate` checks too (it reports an edited
# instances file's faults itself, so the instances' own hash is publish's alone).
SAMPLED_FROM = tuple(row for row in DESCRIBES if row[0] == SAMPLE_REPORT_FILE and row[2] != INSTANCES_FILE)


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
    instances = load_instances(work)
    check_described(work, DESCRIBES, corpus_sha256=corpus.sha256())
    return WorkInputs(
        corpus=corpus,
        instances=instances,
        pool=sampled_pool(work, pool),
        seed=sampled_seed(work, seed),
    )


def check_described(
    workdir: str | os.PathLike[str], rows: Sequence[tuple[str, str, str, str]], *, corpus_sha256: str | None = None
) -> None:
    """Refuse the first report of ``rows`` (of :data:`DESCRIBES`) whose recorded sha256 is not that of
    the file it describes. ``corpus_sha256``: the corpus as the caller read it (not hashed again)."""
    work = Path(workdir)
    load_report = {INGEST_REPORT_FILE: load_ingest_report, SAMPLE_REPORT_FILE: load_sample_report}
    reports: dict[str, dict] = {}
    hashes: dict[str, str] = {CORPUS_FILE: corpus_sha256} if corpus_sha256 else {}
    for report_name, field, described, meaning in rows:
        if report_name not in reports:
            reports[report_name] = load_report[report_name](work)
        if not reports[report_name]:
            continue  # no report: a corpus or instances written by other means; nothing recorded to trust
        recorded = reports[report_name].get(field)
        if described not in hashes:
            hashes[described] = sha256_file(work / described)
        actual = hashes[described]
        if recorded != actual:
            shown = f"sha256 {recorded[:12]}" if isinstance(recorded, str) and recorded else f"no {field}"
            raise MvlsibError(
                f"{work / report_name}: records {shown} of {described}, but {work / described} has sha256 "
                f"{actual[:12]}: {meaning}; run `mvlsib-build {READS[report_name]} --workdir {work}` again"
            )


def sampled_seed(workdir: str | os.PathLike[str], seed: int | None) -> int | None:
    """The seed a release records: the one ``sample`` recorded. A ``seed`` given is a claim about the
    instances, so it must be that one (the card says the instances are rebuilt from it)."""
    work = Path(workdir)
    recorded = recorded_seed(work)
    if seed is None or seed == recorded:
        return recorded
    if recorded is None:
        raise MvlsibError(
            f"--seed {seed}: {work / SAMPLE_REPORT_FILE} records no seed, so nothing shows that {INSTANCES_FILE} "
            f"was sampled with it; run `mvlsib-build sample --seed {seed} --workdir {work}` (it records the seed)"
        )
    raise MvlsibError(
        f"--seed {seed}: {work / INSTANCES_FILE} was sampled with seed {recorded} ({work / SAMPLE_REPORT_FILE}); "
        f"leave --seed out, or run `mvlsib-build sample --seed {seed} --workdir {work}` first"
    )
