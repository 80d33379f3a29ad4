"""Portable, seedable pseudo-randomness: every random choice is a sort by a SHA-256 key.

Python's and numpy's generator streams have changed between versions before, and
``hash()`` depends on PYTHONHASHSEED. A SHA-256 digest of a canonical string does
not depend on anything but its input, so the sampler can be re-implemented in any
language from ``docs/sampling.md`` and give the same instances.
"""

from __future__ import annotations

import hashlib
from collections import deque
from itertools import repeat
from operator import itemgetter

SEP = "\x1f"  # ASCII unit separator: cannot occur in ids, topics or purposes.


def hkey(seed: int, purpose: str, *parts: object) -> int:
    """64-bit key = first 8 bytes (big-endian) of SHA-256(seed ␟ purpose ␟ part ␟ ...)."""
    text = SEP.join([str(int(seed)), purpose, *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def key_bytes(encoded_items, seed: int, purpose: str, *context: object) -> list[bytes]:
    """``hkey(seed, purpose, *context, item)`` of each item, as its 8 big-endian bytes (which
    compare like the integers); ``encoded_items`` are ``str(item).encode()``.

    The shared prefix is hashed once and its state copied per item; copy/update/digest run
    through ``map`` (no Python frame per item: the sampler computes 1.8 M keys).
    """
    prefix = (SEP.join([str(int(seed)), purpose, *map(str, context)]) + SEP).encode("utf-8")
    states = list(map(_COPY, repeat(hashlib.sha256(prefix), len(encoded_items))))
    deque(map(_UPDATE, states, encoded_items), maxlen=0)
    return list(map(_FIRST8, map(_DIGEST, states)))


def hash_sorted(items, seed: int, purpose: str, *context: object) -> list:
    """``items`` ordered by ``(hkey(seed, purpose, *context, item), str(item))``.

    The string tie-break makes the order total even in the (astronomically unlikely)
    event of a 64-bit key collision.
    """
    return list(hash_order(items, seed, purpose, *context))


def hash_order(items, seed: int, purpose: str, *context: object, texts=None, encoded=None):
    """Iterate ``items`` in :func:`hash_sorted` order, sorting only when more than the first
    item is asked for (the sampler mostly takes the first). ``texts``/``encoded`` are
    ``str(item)`` and its UTF-8 bytes, when the caller has them already."""
    if type(items) is not list:
        items = list(items)
    if not items:
        return
    if texts is None:
        texts = list(map(str, items))
    if encoded is None:
        encoded = list(map(str.encode, texts))
    keys = key_bytes(encoded, seed, purpose, *context)
    first = min(keys)
    if keys.count(first) == 1:  # a unique smallest key: the first item needs no sort
        yield items[keys.index(first)]
        position = dict(zip(keys, range(len(keys))))
        if len(position) == len(keys):  # no two keys alike: the keys alone give the order
            for key in sorted(keys)[1:]:
                yield items[position[key]]
            return
        skip = 1
    else:
        skip = 0
    # Ties on the key: the text, then the position (as a stable sort would) decide.
    for _, _, n in sorted(zip(keys, texts, range(len(items))))[skip:]:
        yield items[n]


_HASH = type(hashlib.sha256())
_COPY, _UPDATE, _DIGEST = _HASH.copy, _HASH.update, _HASH.digest
_FIRST8 = itemgetter(slice(0, 8))
