"""Searches over whole counts (of runs, of cases) shared by the analyses."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["smallest_enough"]


def smallest_enough(enough: Callable[[int], bool], start: int, limit: int) -> int | None:
    """The smallest count from `start` up to `limit` that is `enough` (of runs, of cases),
    by doubling and then bisection (taking `enough` as monotone); None if `limit` is not."""
    if enough(start):
        return start
    low, high = start, min(2 * start, limit)
    while not enough(high):
        if high >= limit:
            return None
        low, high = high, min(2 * high, limit)
    while high - low > 1:  # enough(high), not enough(low)
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high
