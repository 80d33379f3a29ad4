"""Write a release folder: parquet configs, loader, evaluator, card, eval.yaml, manifest.

The folder is written into a staging folder beside ``out`` and moved into place only when
complete, so a failure never leaves a half-written release.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from mvlsib.release.bundle import write_evaluate_script
from mvlsib.release.card.sections import release_card
from mvlsib.release.data import write_data
from mvlsib.release.eval_yaml import write_eval_yaml
from mvlsib.release.inputs import gather
from mvlsib.release.manifest import build_record, staged_release, write_release_manifest
from mvlsib.release.summary import ReleaseSummary
from mvlsib.release_format import mvl_sib
from mvlsib.validation.invariants import instance_shape_violations, refuse_violations
from mvlsib.workdir.corpus import Corpus
from mvlsib.workdir.instances import Instance
from mvlsib.workdir.pool_manifest import PoolLike, as_pool

LOADER_NAME = "mvl_sib.py"
EVALUATE_NAME = "evaluate.py"
README_NAME = "README.md"


def publish(
    corpus: Corpus,
    instances: Sequence[Instance | dict],
    pool: PoolLike,
    out: str | os.PathLike[str],
    *,
    seed: int | None = None,
    languages: Sequence[str] | None = None,
    repo_hint: str = "ORG/mvl-sib",
    versions: dict[str, str] | None = None,
    progress: bool = True,
) -> ReleaseSummary:
    """Write the release ``out`` of ``languages`` (default: all) from validated inputs.

    ``instances`` are what ``sample`` returns or the records of ``instances.jsonl``; ``pool`` a
    ``Pool`` or its folder.

    ``seed`` is the sampling seed the card records; ``versions`` replaces the library versions
    written to manifest.json (tests pin them to compare manifests across machines).
    """
    records = [i.as_dict() if isinstance(i, Instance) else i for i in instances]
    # the shape of every instance, whatever was skipped before: the tables are typed by it
    refuse_violations(instance_shape_violations(records), "instances.jsonl")
    inputs = gather(corpus, records, as_pool(pool), languages)
    with staged_release(Path(out)) as stage:
        sizes = write_data(stage, inputs, progress=progress)
        shutil.copyfile(mvl_sib.__file__, stage / LOADER_NAME)
        write_evaluate_script(stage / EVALUATE_NAME)
        card = release_card(inputs, sizes, seed=seed, repo_hint=repo_hint)
        (stage / README_NAME).write_text(card, encoding="utf-8", newline="\n")
        write_eval_yaml(stage, inputs.languages, repo_hint)
        write_release_manifest(stage, build_record(inputs, seed=seed, repo_hint=repo_hint), versions)
        files = [p for p in stage.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
    return ReleaseSummary(
        Path(out), inputs.languages, len(instances), len(inputs.images), size, inputs.instances_sha256, len(files)
    )
