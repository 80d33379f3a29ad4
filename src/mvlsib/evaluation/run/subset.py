"""Which instances ``--limit N`` evaluates: a deterministic subset balanced over topics and gold letters.

The release's rows are in ``index_id`` order, and the SIB-200 sentences cluster by topic
there, so the first 30 instances cover only 3 of the 7 topics. ``stratified`` instead:

1. puts each row in the bucket of its topic (topics in sorted order);
2. orders every bucket by a rotation over the 16 (sentence_label, image_label) pairs,
   ranked by ``((sentence_label - image_label) mod 4, (sentence_label - t) mod 4)`` for the
   topic's position t in sorted order, so that any 4 consecutive picks of a topic use each
   gold letter once for the sentence tasks (i2s, t2s) and once for the image/topic tasks
   (s2i, s2t), and the topics that get one pick more than others add different letters;
   within a pair, rows keep release order;
3. takes one row from each topic in turn until N rows are taken (a topic that runs out is skipped);
4. returns the chosen rows in release order.

It reads only ids, topics and labels, which are the same in every language, so every
language gets the same instances. ``first`` keeps the old behaviour (the first N rows).
"""

from __future__ import annotations

from collections import defaultdict

from .. import _compat

SUBSET_MODES = ("stratified", "first")


def _pair_rank(sentence_label: int, image_label: int, shift: int) -> tuple[int, int]:
    return ((sentence_label - image_label) % 4, (sentence_label - shift) % 4)


def stratified_indices(rows: list[dict], n: int) -> list[int]:
    """Positions (in release order) of the ``n`` rows the stratified subset takes."""
    by_topic: dict[str, dict[tuple, list[int]]] = defaultdict(lambda: defaultdict(list))
    shift = {topic: n for n, topic in enumerate(sorted({row["topic"] for row in rows}))}
    for i, row in enumerate(rows):
        # Labels checked as the loader checks them: a damaged key stops the run before any model call.
        check = _compat.LOADER.check_label
        pair = _pair_rank(check(row, "sentence_label"), check(row, "image_label"), shift[row["topic"]])
        by_topic[row["topic"]][pair].append(i)
    queues = {}
    for topic, pairs in by_topic.items():
        # Round-robin over the pairs in rank order: 1st row of each pair, then 2nd of each, ...
        order = sorted(pairs)
        seq: list[int] = []
        depth = 0
        while len(seq) < sum(len(v) for v in pairs.values()):
            for pair in order:
                if depth < len(pairs[pair]):
                    seq.append(pairs[pair][depth])
            depth += 1
        queues[topic] = seq
    chosen: list[int] = []
    depth = 0
    topics = sorted(queues)
    while len(chosen) < min(n, len(rows)):
        for topic in topics:
            if depth < len(queues[topic]) and len(chosen) < n:
                chosen.append(queues[topic][depth])
        depth += 1
    return sorted(chosen)


def select_rows(rows: list[dict], limit: int | None, mode: str = "stratified") -> list[dict]:
    """The rows a run with ``--limit`` evaluates (all rows without a limit)."""
    if limit is None or limit >= len(rows):
        return rows
    if mode == "first":
        return rows[:limit]
    return [rows[i] for i in stratified_indices(rows, limit)]


def describe(limit: int | None, mode: str, n_release: int | None = None) -> str:
    """One line for report headers: which instances a run covers."""
    if limit is None:
        return "all instances of each language"
    of = f" of {n_release}" if n_release else ""
    if mode == "first":
        return f"the first {limit}{of} instances of each language (release order, not balanced: --limit-mode first)"
    return f"{limit}{of} instances per language, stratified over topics and gold letters (--limit {limit})"
