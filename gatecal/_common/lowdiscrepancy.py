"""The base-2 van der Corput sequence: points spread evenly at every length."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["van_der_corput"]


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
