"""The array types the model and the analyses pass around, named once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["Floats", "Ints"]

#: An array of float64: probabilities, pmfs, rates, weights.
Floats = npt.NDArray[np.float64]
#: An array of int64: counts.
Ints = npt.NDArray[np.int64]
