"""What a release is made of, gathered and checked once: the languages' texts, the instances,
the pool's images and where they all come from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

import pyarrow as pa

from mvlsib.errors import MvlsibError
from mvlsib.image_pool.rows import refuse_unshippable
from mvlsib.release.tables import ImageRecord, InstancePlan, plan_instances, read_image_record
from mvlsib.release_format import mvl_sib
from mvlsib.workdir import CORPUS_FILE
from mvlsib.workdir.corpus import Corpus, corpus_texts
from mvlsib.workdir.instances import Instance, instance_records, instances_sha256
from mvlsib.workdir.pool_manifest import ManifestRow, Pool
from mvlsib.workdir.provenance import demo_image_count, pool_kind


@dataclass(frozen=True)
class ReleaseInputs:
    languages: list[str]  # the configs to write, sorted
    index_ids: list[int]  # the sentence ids, sorted
    texts: dict[str, pa.Array]  # language -> its texts in index_ids order
    instances: Sequence[dict]  # the records of instances.jsonl
    instances_sha256: str
    plan: InstancePlan
    manifest: list[ManifestRow]  # the pool manifest's rows
    images: list[ImageRecord]  # their files, read and checked
    pool_manifest_sha256: str
    pool_kind: str  # demo, mixed or curated (workdir.provenance)
    demo_images: int
    source: dict[str, str]  # location, revision, kind, corpus_sha256 of the SIB-200 source(s)


def gather(
    corpus: Corpus,
    instances: Sequence[Instance | dict],
    pool: Pool,
    languages: Sequence[str] | None = None,
) -> ReleaseInputs:
    """Check that the corpus, the instances and the pool fit together; read the pool's images."""
    if not instances:
        raise MvlsibError("no instances; re-run `mvlsib-build sample`")
    refuse_unshippable(pool)  # the images and credits of every row go into the release
    instances = instance_records(instances)
    index_ids, texts = corpus_texts(corpus)
    langs = _languages(sorted(texts), languages)
    manifest = list(pool.rows)
    known = pool.image_topics
    used = sorted({i for inst in instances for i in (*inst["ref_image_ids"], *inst["image_option_ids"])})
    missing = [i for i in used if i not in known]
    if missing:
        raise MvlsibError(
            f"{pool.manifest_file}: image id(s) {', '.join(missing[:5])} used by instances.jsonl are not in this pool; "
            "pass the --pool the instances were sampled with, or re-run `mvlsib-build sample`"
        )
    urls = [r.source_url for r in manifest]
    return ReleaseInputs(
        languages=langs,
        index_ids=index_ids,
        texts=texts,
        instances=instances,
        instances_sha256=instances_sha256(instances),
        plan=plan_instances(list(instances), index_ids),
        manifest=manifest,
        images=[read_image_record(pool.root, r) for r in manifest],
        pool_manifest_sha256=pool.manifest_sha256,
        pool_kind=pool_kind(urls),
        demo_images=demo_image_count(urls),
        source=source_info(corpus.report),
    )


def _languages(available: list[str], wanted: Sequence[str] | None) -> list[str]:
    bad = [lang for lang in available if not mvl_sib.is_language_code(lang)]
    if bad:
        raise MvlsibError(
            f"{CORPUS_FILE}: {', '.join(map(repr, bad))} is not a language code of the form "
            "xxx_Xxxx (e.g. fra_Latn); re-run `mvlsib-build ingest` on a clean SIB-200 folder"
        )
    if not wanted:
        return available
    unknown = sorted(set(wanted) - set(available))
    if unknown:
        raise MvlsibError(f"{CORPUS_FILE}: no language(s) {', '.join(unknown)} in the corpus")
    return sorted(set(wanted))


def public_location(source: dict) -> str:
    """How a published file names a source: a Hub id as it is, a local folder by its name only.

    A folder's absolute path names the machine and user that built the release and would make two
    builds of the same data differ byte for byte; the corpus hash identifies the content instead.
    """
    location = str(source["location"])
    if source.get("kind") == "hub":
        return location
    return PurePath(location).name


def source_info(report: dict) -> dict[str, str]:
    """SIB-200 source location(s), revision(s) and corpus hash as the ingest report records them."""
    sources = [s for s in report.get("sources") or [] if isinstance(s, dict)]
    return {
        "location": ", ".join(public_location(s) for s in sources if s.get("location")),
        "revision": ", ".join(str(s["revision"]) for s in sources if s.get("revision")),
        "kind": ", ".join(str(s.get("kind")) for s in sources if s.get("kind")),
        "corpus_sha256": str(report.get("corpus_sha256") or ""),
    }
