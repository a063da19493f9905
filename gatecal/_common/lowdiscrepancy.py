"""The base-2 van der Corput sequence: points (and orders) spread evenly at every length."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["spread_order", "van_der_corput"]


def van_der_corput(count: int) -> npt.NDArray[np.float64]:
    """The first `count` points of the base-2 van der Corput sequence, from 1/2 (each a
    dyadic fraction, exact in binary floating point)."""
    i = np.arange(1, count + 1, dtype=np.int64)
    u = np.zeros(count)
    scale = 0.5
    while np.any(i):
        u += (i & 1) * scale
        i >>= 1
        scale /= 2
    return u


def spread_order(count: int) -> npt.NDArray[np.intp]:
    """A permutation of ``range(count)`` whose every prefix is spread over the whole range:
    position i holds the rank of the i-th van der Corput point among the first `count`
    (0, then the middle, then the quarters, ...). Exact: the points are dyadic and
    distinct."""
    ranks = np.empty(count, dtype=np.intp)
    ranks[np.argsort(van_der_corput(count), kind="stable")] = np.arange(count)
    return ranks
