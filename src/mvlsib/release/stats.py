"""Statistics of a release, shown in the dataset card: topics, label balance, image use."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from mvlsib.release_format.mvl_sib import OPTION_LETTERS, TOPICS
from mvlsib.workdir.pool_manifest import image_order

LETTERS = "".join(OPTION_LETTERS)


@dataclass(frozen=True)
class ImageUse:
    image_id: str
    topic: str
    as_reference: int  # times in ref_image_ids (all 5 positions)
    as_option: int  # times in image_option_ids


@dataclass(frozen=True)
class ReleaseStats:
    num_instances: int
    per_topic: dict[str, int]
    sentence_labels: dict[str, int]
    image_labels: dict[str, int]
    images: list[ImageUse] = field(default_factory=list)

    def reference_spread(self) -> dict[str, tuple[int, int]]:
        """Per topic: (min, max) of how often one image is a positive reference."""
        out: dict[str, tuple[int, int]] = {}
        for topic in TOPICS:
            uses = [u.as_reference for u in self.images if u.topic == topic]
            if uses:
                out[topic] = (min(uses), max(uses))
        return out


def compute_stats(instances: list[dict], image_topics: dict[str, str]) -> ReleaseStats:
    per_topic = Counter(inst["topic"] for inst in instances)
    sent = Counter(LETTERS[inst["sentence_label"]] for inst in instances)
    img = Counter(LETTERS[inst["image_label"]] for inst in instances)
    refs: Counter[str] = Counter()
    opts: Counter[str] = Counter()
    for inst in instances:
        refs.update(inst["ref_image_ids"])
        opts.update(inst["image_option_ids"])
    uses = [
        ImageUse(image_id, topic, refs.get(image_id, 0), opts.get(image_id, 0))
        for image_id, topic in sorted(image_topics.items(), key=lambda kv: (kv[1], _id_key(kv[0])))
    ]
    return ReleaseStats(
        num_instances=len(instances),
        per_topic={t: per_topic.get(t, 0) for t in TOPICS},
        sentence_labels={c: sent.get(c, 0) for c in LETTERS},
        image_labels={c: img.get(c, 0) for c in LETTERS},
        images=uses,
    )


def _id_key(image_id: str) -> tuple[str, int, str]:
    return image_order("", image_id)
