"""The seven SIB-200 topics, spelled exactly as SIB-200 spells them."""

from __future__ import annotations

# Sorted order is the canonical order wherever the toolkit lists topics. The list lives in the
# standalone release reader, which ships alone in every release and must know it too.
from mvlsib.release_format.mvl_sib import TOPICS  # noqa: E402


def topic_slug(topic: str) -> str:
    """File- and id-safe form of a topic (``science/technology`` -> ``science_technology``)."""
    return topic.replace("/", "_")


SLUG_TO_TOPIC: dict[str, str] = {topic_slug(t): t for t in TOPICS}


def topic_from_slug(slug: str) -> str:
    try:
        return SLUG_TO_TOPIC[slug]
    except KeyError:
        raise ValueError(f"unknown topic slug {slug!r}; expected one of {sorted(SLUG_TO_TOPIC)}") from None
