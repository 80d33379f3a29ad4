"""Option orders for the topic question: cyclic rotations of the seven topics.

With all seven rotations every topic sits exactly once at every letter A-G, so a model's
preference for a position (always answering "A", say) cannot make an image pass or fail:
it adds the same one correct answer to every image. Fewer rotations are spread evenly
over the cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TypeVar

T = TypeVar("T")

LETTERS: tuple[str, ...] = ("A", "B", "C", "D", "E", "F", "G")


def rotation_shifts(n_rotations: int, n_options: int = 7) -> list[int]:
    """``n_rotations`` distinct shifts in ``0..n_options-1``, evenly spaced, starting at 0."""
    if not 1 <= n_rotations <= n_options:
        raise ValueError(f"the number of rotations must be between 1 and {n_options}, got {n_rotations}")
    return [(j * n_options) // n_rotations for j in range(n_rotations)]


def rotate(items: Sequence[T], shift: int) -> list[T]:
    """``items`` rotated left by ``shift``: the item at index ``shift`` comes first (letter A)."""
    n = len(items)
    return [items[(i + shift) % n] for i in range(n)]


def required_correct(n_orders: int, threshold: float) -> int:
    """Orders that must pick the image's topic: more than ``threshold`` of them (capped at all).

    ``threshold`` 0.5 is a strict majority (4 of 7, 3 of 4, 2 of 2); 1.0 means every order;
    0.0 means at least one.
    """
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"the pass threshold must be between 0 and 1, got {threshold}")
    # Integer arithmetic on a rational threshold so that 0.5 * 7 never rounds the wrong way.
    return min(n_orders, int(Fraction(threshold).limit_denominator(10_000) * n_orders) + 1)
