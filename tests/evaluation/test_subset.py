"""``--limit N``: a deterministic subset of a real release balanced over topics and gold letters."""

from __future__ import annotations

from collections import Counter

from mvlsib.evaluation.run.subset import describe, select_rows, stratified_indices
from mvlsib.release_format import mvl_sib
from mvlsib.release_format.mvl_sib import TOPICS


def test_limit_30_covers_every_topic_and_balances_letters(release_dir):
    rows = mvl_sib.load_rows("eng_Latn", release_dir)
    assert len(rows) == 3012
    first = rows[:30]
    assert len({r["topic"] for r in first}) < len(TOPICS)  # why the first N are not enough
    picked = select_rows(rows, 30)
    assert len(picked) == 30
    topics = Counter(r["topic"] for r in picked)
    assert set(topics) == set(TOPICS) and max(topics.values()) - min(topics.values()) <= 1
    for column in ("sentence_label", "image_label"):
        letters = Counter(r[column] for r in picked)
        assert set(letters) == {0, 1, 2, 3} and max(letters.values()) - min(letters.values()) <= 1, letters
    # release order, no repeats, and the same instances in every language
    ids = [r["instance_id"] for r in picked]
    order = {r["instance_id"]: i for i, r in enumerate(rows)}
    assert ids == sorted(ids, key=order.get) and len(set(ids)) == 30
    arb = mvl_sib.load_rows("arb_Arab", release_dir)
    assert [r["instance_id"] for r in select_rows(arb, 30)] == ids
    # deterministic, nested-free but stable: the same call gives the same subset
    assert stratified_indices(rows, 30) == stratified_indices(rows, 30)
    assert select_rows(rows, 30, "first") == first
    assert select_rows(rows, None) is rows and select_rows(rows, 5000) is rows


def test_small_limits_spread_over_topics(release_dir):
    rows = mvl_sib.load_rows("eng_Latn", release_dir)
    for n in (7, 14, 100):
        picked = select_rows(rows, n)
        topics = Counter(r["topic"] for r in picked)
        assert len(topics) == 7 and max(topics.values()) - min(topics.values()) <= 1


def test_describe():
    assert describe(None, "stratified") == "all instances of each language"
    assert "stratified over topics and gold letters" in describe(30, "stratified", 3012)
    assert "first 30 of 3012" in describe(30, "first", 3012)
