"""The sampling procedure itself: SIB sentence topics + image ids + seed -> MVL-SIB instances.

The algorithm is specified in ``docs/sampling.md``; keep the two in step. Every random
choice is a sort by a SHA-256 key (``hashing.hkey``), and every loop runs over lists in
a documented order, so the output depends only on the inputs and the seed. This module needs
only the standard library (the cross-version test runs it on bare Pythons).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

from mvlsib.builder.hashing import hash_order, hash_sorted, key_bytes
from mvlsib.errors import MvlsibError
from mvlsib.release_format.mvl_sib import TOPICS
from mvlsib.workdir.instances import Instance  # the record of instances.jsonl (re-exported here)

__all__ = ["Instance", "sample_instances"]

INSTANCES_PER_SENTENCE = 3
N_POSITIVE_IMAGES = 5
N_REF_SENTENCES = 5  # the instance's own sentence + 4 more of its topic
N_NEG_TOPICS = 3
N_OPTIONS = 4
MAX_NEGATIVE_RETRIES = 1000


# --------------------------------------------------------------------------- sampling


class _Usage:
    """Per-image counters that keep image use even (least-used first, hash breaks ties)."""

    def __init__(self, images: Iterable[str]):
        self.count = Counter({img: 0 for img in images})
        self.encoded = {img: img.encode() for img in self.count}

    def pick(self, candidates: Sequence[str], n: int, seed: int, purpose: str, iid: str) -> list[str]:
        # (count, hkey(seed, purpose, iid, img), img), the key as its 8 big-endian bytes; the tuples
        # differ in img, so the smallest is the first of the sort
        keys = key_bytes(list(map(self.encoded.__getitem__, candidates)), seed, purpose, iid)
        ranked = zip(map(self.count.__getitem__, candidates), keys, candidates)
        chosen = [min(ranked)[2]] if n == 1 and candidates else [img for _, _, img in sorted(ranked)[:n]]
        for img in chosen:
            self.count[img] += 1
        return chosen


class _Candidates:
    """A topic's sentence ids with ``str(id)`` and its bytes, made once (the keys hash them)."""

    def __init__(self, ids: Sequence[int]):
        self.ids = list(ids)
        self.texts = list(map(str, self.ids))
        self.encoded = list(map(str.encode, self.texts))


def _pick_sentences(
    candidates: _Candidates | Sequence[int],
    n: int,
    taken: list[int],
    partners: Mapping[int, frozenset[int]],
    seed: int,
    purpose: str,
    iid: str,
    attempt: int = 0,
) -> list[int]:
    """First ``n`` candidates in hash order that clash with nothing already in the instance."""
    if not isinstance(candidates, _Candidates):
        candidates = _Candidates(candidates)
    out: list[int] = []
    context = (iid,) if attempt == 0 else (iid, attempt)
    empty: frozenset[int] = frozenset()
    for cand in hash_order(candidates.ids, seed, purpose, *context, texts=candidates.texts, encoded=candidates.encoded):
        if cand in taken or cand in out:
            continue
        clash = partners.get(cand, empty)
        if clash and (any(t in clash for t in taken) or any(o in clash for o in out)):
            continue
        out.append(cand)
        if len(out) == n:
            return out
    raise MvlsibError(
        f"instance {iid}: found only {len(out)} of {n} sentences for {purpose!r} whose text differs from the "
        "instance's other sentences in every language; the corpus has too few distinct sentences for this topic"
    )


def sample_instances(
    topics_by_id: Mapping[int, str],
    images_by_topic: Mapping[str, Sequence[str]],
    seed: int = 0,
    partners: Mapping[int, frozenset[int]] | None = None,
    progress: bool = False,
) -> list[Instance]:
    """Sample ``3 × len(topics_by_id)`` instances. Pure function of its arguments."""
    partners = partners or {}
    seed = int(seed)
    _check_inputs(topics_by_id, images_by_topic)
    topics = sorted({*topics_by_id.values()})
    by_topic: dict[str, list[int]] = {t: sorted(i for i, tt in topics_by_id.items() if tt == t) for t in topics}
    candidates = {t: _Candidates(by_topic[t]) for t in topics}
    images = {t: sorted(images_by_topic[t]) for t in topics}

    pos_use = {t: _Usage(images[t]) for t in topics}
    first_use = {t: _Usage(images[t]) for t in topics}
    neg_use = {t: _Usage(images[t]) for t in topics}

    draft: dict[str, dict] = {}
    negatives_seen: dict[int, list[tuple]] = defaultdict(list)
    bar = _progress(sum(len(v) for v in by_topic.values()) * INSTANCES_PER_SENTENCE, progress)
    for topic in topics:
        iids = [f"{i}-{r}" for i in by_topic[topic] for r in range(INSTANCES_PER_SENTENCE)]
        for iid in hash_sorted(iids, seed, "order"):
            index_id = int(iid.split("-")[0])
            positives = pos_use[topic].pick(images[topic], N_POSITIVE_IMAGES, seed, "pos-image", iid)
            first = first_use[topic].pick(positives, 1, seed, "first-image", iid)[0]
            rest = hash_sorted([p for p in positives if p != first], seed, "image-order", iid)
            refs = [index_id] + _pick_sentences(
                candidates[topic], N_REF_SENTENCES - 1, [index_id], partners, seed, "ref-sentence", iid
            )
            neg_topics, neg_sents = _pick_negatives(
                topics, topic, refs, candidates, partners, seed, iid, negatives_seen[index_id]
            )
            neg_images = [neg_use[nt].pick(images[nt], 1, seed, "neg-image", iid)[0] for nt in neg_topics]
            draft[iid] = dict(
                index_id=index_id,
                topic=topic,
                refs=refs,
                ref_images=[first, *rest],
                neg_topics=neg_topics,
                neg_sents=neg_sents,
                neg_images=neg_images,
            )
            bar.update(1)
    bar.close()

    return _assemble(
        draft, _balanced_labels(draft, seed, "sentence-label"), _balanced_labels(draft, seed, "image-label")
    )


def _pick_negatives(
    topics: list[str],
    topic: str,
    refs: list[int],
    candidates: Mapping[str, _Candidates],
    partners: Mapping[int, frozenset[int]],
    seed: int,
    iid: str,
    seen: list[tuple],
) -> tuple[list[str], list[int]]:
    """The negative topics and one sentence of each; ``seen`` holds the sibling instances' choices.

    Invariant 3: the three instances of a sentence must differ; distinct negatives guarantee it.
    """
    for attempt in range(MAX_NEGATIVE_RETRIES):
        others = [t for t in topics if t != topic]
        ctx = (iid,) if attempt == 0 else (iid, attempt)
        neg_topics = hash_sorted(others, seed, "neg-topic", *ctx)[:N_NEG_TOPICS]
        taken = list(refs)
        neg_sents = []
        for nt in neg_topics:
            got = _pick_sentences(candidates[nt], 1, taken, partners, seed, "neg-sentence", iid, attempt)[0]
            neg_sents.append(got)
            taken.append(got)
        signature = (tuple(neg_topics), tuple(neg_sents))
        if signature not in seen:
            seen.append(signature)
            return neg_topics, neg_sents
    # only a corpus with a single sentence per topic gets here
    raise MvlsibError(f"instance {iid}: could not find negatives different from its sibling instances")


def _assemble(
    draft: Mapping[str, dict], sentence_labels: Mapping[str, int], image_labels: Mapping[str, int]
) -> list[Instance]:
    """The instances in id order, each correct option inserted at its dealt label."""
    out = []
    for iid in sorted(draft, key=_iid_key):
        d = draft[iid]
        s_label, i_label = sentence_labels[iid], image_labels[iid]
        s_opts = list(d["neg_sents"])
        s_opts.insert(s_label, d["index_id"])
        i_opts = list(d["neg_images"])
        i_opts.insert(i_label, d["ref_images"][0])
        t_opts = list(d["neg_topics"])
        t_opts.insert(i_label, d["topic"])
        out.append(
            Instance(
                instance_id=iid,
                index_id=d["index_id"],
                topic=d["topic"],
                ref_sentence_ids=d["refs"],
                ref_image_ids=d["ref_images"],
                neg_topics=d["neg_topics"],
                sentence_option_ids=s_opts,
                sentence_label=s_label,
                image_option_ids=i_opts,
                topic_options=t_opts,
                image_label=i_label,
            )
        )
    return out


def _balanced_labels(draft: Mapping[str, dict], seed: int, purpose: str) -> dict[str, int]:
    """Deal labels 0,1,2,3,0,1,... over instances sorted by (topic, hash key).

    Over all 3,012 instances each label occurs exactly 753 times, and within each topic
    the four counts differ by at most one.
    """
    iids = list(draft)
    keys = key_bytes([iid.encode() for iid in iids], seed, purpose)  # hkey(seed, purpose, iid) as bytes
    order = [iid for _, _, iid in sorted(zip((draft[iid]["topic"] for iid in iids), keys, iids))]
    return {iid: pos % N_OPTIONS for pos, iid in enumerate(order)}


def _iid_key(iid: str) -> tuple[int, int]:
    a, b = iid.split("-")
    return int(a), int(b)


def _check_inputs(topics_by_id: Mapping[int, str], images_by_topic: Mapping[str, Sequence[str]]) -> None:
    if not topics_by_id:
        raise MvlsibError("corpus is empty: nothing to sample (did `mvlsib-build ingest` run?)")
    unknown = sorted({*topics_by_id.values()} - set(TOPICS))
    if unknown:
        raise MvlsibError(f"corpus has unknown topic(s) {unknown}; expected {list(TOPICS)}")
    for topic in sorted({*topics_by_id.values()}):
        have = len(images_by_topic.get(topic, ()))
        if have < N_POSITIVE_IMAGES:
            raise MvlsibError(
                f"image pool has {have} image(s) for topic {topic!r}; sampling needs at least "
                f"{N_POSITIVE_IMAGES} per topic (the release uses 10). Add images with `mvlsib-build images add`."
            )
    if len({*topics_by_id.values()}) < N_NEG_TOPICS + 1:
        raise MvlsibError(f"corpus has fewer than {N_NEG_TOPICS + 1} topics; every instance needs 3 negative topics")


class _NoProgress:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool):
    # The pure sampler must run on a bare Python (the cross-version test does that): no bar, no tqdm import.
    if not enabled:
        return _NoProgress()
    from mvlsib.progress import bar

    return bar(total=total, desc="sample", unit="inst", leave=False)
