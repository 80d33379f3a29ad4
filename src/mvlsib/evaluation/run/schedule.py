"""The order in which pending requests are sent: prompts that share a prefix go together.

Every MVL-SIB prompt starts with the task instruction, then its references (for ``i2s``
the same reference images in every language), then language-specific text. Sent in the
canonical order (language first), a server's prefix cache (vLLM's automatic prefix
caching, SGLang's radix cache) sees the shared prefix of two prompts only when both are
still cached; across languages they are a whole language apart and long evicted.

``prefix_order`` sorts the prompts by their content: the chat messages flattened to one
string, text as it is and each image as a marker with its id. Sorting strings is a
depth-first walk of their trie, so any two prompts with a common prefix (in characters,
hence in tokens up to the last token boundary inside it) are contiguous with every prompt
between them sharing that prefix too: the order a prefix cache of any size does best
with when prompts are sent one after another.

Only the processing order changes. Keys, prompts, responses and the final predictions
file (rewritten in canonical order when a run completes) are the same; shard selection
still happens on the canonical order before this sort, and resume skips done keys
before it, so both are unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

ORDERS = ("prefix", "canonical")
# Prompts a run holds at once (about 3.2 KB each: ~1.6 GB); a run or shard with more goes in waves,
# each a round-robin share of its canonical order, prefix-ordered on its own. The full benchmark
# (5,993,880 prompts, ~23 GB if held at once) takes 12.
MAX_PROMPTS = 500_000

# Below every printable character: an image sorts before text at the same position,
# and an image id never runs into the text after it.
_IMAGE_OPEN = "\x00"
_IMAGE_CLOSE = "\x01"


def prefix_key(messages: Sequence[dict[str, Any]]) -> str:
    """The prompt as one string in the order a model reads it (roles, text, image ids)."""
    out: list[str] = []
    for message in messages:
        out.append(_IMAGE_CLOSE + str(message.get("role", "")) + _IMAGE_CLOSE)
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
            continue
        for part in content or ():
            if part.get("type") == "image":
                out.append(_IMAGE_OPEN + str(part.get("image_id")) + _IMAGE_CLOSE)
            else:
                out.append(str(part.get("text", "")))
    return "".join(out)


def prefix_order(items: list, messages_of=lambda item: item.request.messages) -> list:
    """``items`` sorted by prompt content; equal prompts keep their relative (canonical) order."""
    keyed = [(prefix_key(messages_of(it)), n) for n, it in enumerate(items)]
    keyed.sort()
    return [items[n] for _, n in keyed]


def order_items(items: list, order: str) -> list:
    if order == "canonical":
        return list(items)
    if order == "prefix":
        return prefix_order(items)
    raise ValueError(f"unknown order {order!r}; expected one of {ORDERS}")
