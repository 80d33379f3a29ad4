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


def hash_sorted(items, seed: int, purpose: str, *context: object) -> list:
    """``items`` ordered by ``(hkey(seed, purpose, *context, item), str(item))``.

    The string tie-break makes the order total even in the (astronomically unlikely)
    event of a 64-bit key collision.
    """
    # Same keys as hkey(seed, purpose, *context, item). The shared prefix is hashed once and its
    # state copied per item; copy/update/digest run through map (no Python frame per item: the
    # sampler sorts 1.8 M keys); the first 8 digest bytes compare like the big-endian integer,
    # and the position breaks full ties the way a stable sort does.
    items = list(items)
    texts = list(map(str, items))
    prefix = (SEP.join([str(int(seed)), purpose, *map(str, context)]) + SEP).encode("utf-8")
    states = list(map(_COPY, repeat(hashlib.sha256(prefix), len(items))))
    deque(map(_UPDATE, states, map(str.encode, texts)), maxlen=0)
    keys = map(_FIRST8, map(_DIGEST, states))
    return [items[n] for _, _, n in sorted(zip(keys, texts, range(len(items))))]


_HASH = type(hashlib.sha256())
_COPY, _UPDATE, _DIGEST = _HASH.copy, _HASH.update, _HASH.digest
_FIRST8 = itemgetter(slice(0, 8))
