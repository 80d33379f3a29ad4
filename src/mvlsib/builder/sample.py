"""``mvlsib-build sample``: the corpus and the image pool -> the MVL-SIB instances (ids only; the
same in every language), by the procedure of :mod:`mvlsib.builder.sampler`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace

from mvlsib.builder.sampler import sample_instances
from mvlsib.errors import MvlsibError
from mvlsib.workdir import BUNDLED_POOL
from mvlsib.workdir.corpus import Corpus, take
from mvlsib.workdir.instances import Instance, instances_sha256
from mvlsib.workdir.pool_manifest import PoolLike, as_pool


@dataclass
class SampleReport:
    seed: int
    n_instances: int
    n_sentences: int
    n_languages: int
    instances_sha256: str
    sentence_label_counts: dict[str, int]
    image_label_counts: dict[str, int]
    instances_per_topic: dict[str, int]
    positive_image_use: dict[str, dict[str, int]]
    positive_image_spread: dict[str, int]
    first_image_use: dict[str, dict[str, int]]
    negative_image_use: dict[str, dict[str, int]]
    duplicate_text_pairs: int
    output: str = ""
    # The pool the instances were drawn from: publish --workdir uses it (and refuses another).
    pool: str = ""
    pool_manifest_sha256: str = ""
    # The corpus.parquet they were drawn from: publish and validate refuse the instances beside another.
    corpus_sha256: str = ""
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------- inputs


def sentence_topics(corpus: Corpus) -> dict[int, str]:
    """index_id -> topic, insisting that every language agrees (ingest checks this too)."""
    ids, topics_col = corpus.column("index_id"), corpus.column("topic")
    blocks = list(corpus.language_rows().values())
    if blocks and isinstance(blocks[0], range) and blocks[0].start == 0:
        # The usual corpus: the first language's rows come first, its ids are unique and every
        # language lists the same ids and topics in the same order. Then those rows are exactly
        # the pairs below, in the same order, found with list comparisons instead of 200k tuples.
        ref_ids, ref_topics = take(ids, blocks[0]), take(topics_col, blocks[0])
        if len(set(ref_ids)) == len(ref_ids) and all(
            take(ids, rows) == ref_ids and take(topics_col, rows) == ref_topics for rows in blocks[1:]
        ):
            return {int(i): str(t) for i, t in zip(ref_ids, ref_topics)}
    pairs = list(dict.fromkeys(zip(ids, topics_col)))
    topics: dict[int, str] = {}
    clashing: set[int] = set()
    for i, t in pairs:
        if topics.setdefault(i, t) != t:
            clashing.add(i)
    if clashing:
        iid = next(i for i, _ in pairs if i in clashing)
        shown = sorted(t for i, t in pairs if i == iid)
        raise MvlsibError(
            f"corpus: sentence {iid} has different topics in different languages ({', '.join(shown)}); "
            "re-run `mvlsib-build ingest`, which rejects such input"
        )
    return {int(i): str(t) for i, t in pairs}


def duplicate_partners(corpus: Corpus) -> dict[int, frozenset[int]]:
    """For each sentence id, the ids whose text equals its text (normalised) in some language."""
    norm, index_ids = corpus.normalized(), corpus.column("index_id")
    groups: dict[tuple, list[int]] = defaultdict(list)
    for language, rows in corpus.language_rows().items():
        block = take(norm, rows)
        if len(set(block)) == len(block):
            continue
        repeated = {key for key, count in Counter(block).items() if count > 1}
        for n in rows:
            if norm[n] in repeated:
                groups[language, norm[n]].append(int(index_ids[n]))
    partners: dict[int, set[int]] = defaultdict(set)
    for ids in groups.values():
        for a in ids:
            partners[a].update(b for b in ids if b != a)
    return {k: frozenset(v) for k, v in sorted(partners.items())}


# --------------------------------------------------------------------------- the stage


def sample(
    corpus: Corpus,
    pool: PoolLike = BUNDLED_POOL,
    seed: int = 0,
    *,
    partners: Mapping[int, frozenset[int]] | None = None,
    progress: bool = False,
) -> list[Instance]:
    """The instances of ``corpus`` with the images of ``pool`` (a ``Pool`` or its folder) and ``seed``.

    ``partners`` is ``duplicate_partners(corpus)`` when the caller has it already (the build
    computes it once for the sampler and the report)."""
    return sample_instances(
        sentence_topics(corpus),
        as_pool(pool).images_by_topic,
        seed=seed,
        partners=duplicate_partners(corpus) if partners is None else partners,
        progress=progress,
    )


def sample_report(
    corpus: Corpus,
    pool: PoolLike,
    instances: Sequence[Instance],
    seed: int,
    *,
    partners: Mapping[int, frozenset[int]] | None = None,
    digest: str | None = None,
) -> SampleReport:
    """What ``sample_report.json`` says about ``instances`` (label and image use, duplicates).

    ``partners`` and ``digest`` (the sha256 of ``instances.jsonl``, as ``save_instances`` returns it)
    are computed here when not given."""
    pool = as_pool(pool)
    report = build_report(
        instances,
        pool.images_by_topic,
        seed,
        instances_sha256(instances) if digest is None else digest,
        duplicate_partners(corpus) if partners is None else partners,
        n_languages=len(set(corpus.column("language"))),
    )
    return replace(
        report,
        pool=str(pool.root.resolve()),
        pool_manifest_sha256=pool.manifest_sha256,
        corpus_sha256=corpus.sha256(),
    )


def build_report(
    instances: Sequence[Instance],
    pool_images: Mapping[str, Sequence[str]],
    seed: int,
    digest: str,
    partners: Mapping[int, frozenset[int]],
    n_languages: int,
) -> SampleReport:
    letters = "ABCD"
    pos: dict[str, Counter] = {t: Counter({i: 0 for i in pool_images.get(t, ())}) for t in sorted(pool_images)}
    first: dict[str, Counter] = {t: Counter({i: 0 for i in pool_images.get(t, ())}) for t in sorted(pool_images)}
    neg: dict[str, Counter] = {t: Counter({i: 0 for i in pool_images.get(t, ())}) for t in sorted(pool_images)}
    for inst in instances:
        pos[inst.topic].update(inst.ref_image_ids)
        first[inst.topic][inst.ref_image_ids[0]] += 1
        for j, img in enumerate(inst.image_option_ids):
            if j != inst.image_label:
                neg[inst.topic_options[j]][img] += 1
    used_topics = sorted({inst.topic for inst in instances})
    return SampleReport(
        seed=int(seed),
        n_instances=len(instances),
        n_sentences=len({inst.index_id for inst in instances}),
        n_languages=int(n_languages),
        instances_sha256=digest,
        sentence_label_counts={letters[k]: v for k, v in sorted(Counter(i.sentence_label for i in instances).items())},
        image_label_counts={letters[k]: v for k, v in sorted(Counter(i.image_label for i in instances).items())},
        instances_per_topic=dict(sorted(Counter(i.topic for i in instances).items())),
        positive_image_use={t: dict(sorted(pos[t].items())) for t in used_topics},
        positive_image_spread={t: max(pos[t].values()) - min(pos[t].values()) for t in used_topics},
        first_image_use={t: dict(sorted(first[t].items())) for t in used_topics},
        negative_image_use={t: dict(sorted(neg[t].items())) for t in used_topics},
        duplicate_text_pairs=sum(len(v) for v in partners.values()) // 2,
    )
