"""The sequential designs as maths, and the registry that picks among them.

Each design of :data:`gatecal._model.sequential.SEQUENTIAL_DESIGNS` (its name, spelling and
summary, which every help text and error is built from) maps here to the function that
designs its gate for a suite's healthy and regressed one-run pmfs. A new design is its own
module, its line in that registry of names and its line in :data:`DESIGNERS` below.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from gatecal._analyses.sequential.designs import (
    RatePmfs,
    SequentialGate,
    SharedBinomial,
    design_sequential,
)
from gatecal._analyses.sequential.evalue import evalue_gate
from gatecal._common.validate import ParameterError
from gatecal._model.sequential import design_names

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["DESIGNERS", "design_gate"]

#: ``designer(looks, healthy_pmf, regressed_pmf, *, false_alarm, detection)`` by name.
DESIGNERS: dict[str, Callable[..., SequentialGate]] = {
    "sprt": functools.partial(design_sequential, "sprt"),
    "pocock": functools.partial(design_sequential, "pocock"),
    "obf": functools.partial(design_sequential, "obf"),
    "evalue": evalue_gate,
}


def design_gate(
    design: str,
    looks: int,
    healthy_pmf: npt.ArrayLike | RatePmfs | SharedBinomial,
    regressed_pmf: npt.ArrayLike | RatePmfs | SharedBinomial,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.8,
) -> SequentialGate:
    """The gate a sequential policy names: the boundary search
    :func:`gatecal.design_sequential` for ``sprt``, ``pocock`` and ``obf``, the e-process
    :func:`gatecal.evalue_gate` for ``evalue``. A plain pmf: runs independent draws of
    it; :class:`RatePmfs` or :class:`SharedBinomial`: the runs of a build share one rate."""
    try:
        designer = DESIGNERS[design]
    except KeyError:
        rule = f"must be one of {', '.join(design_names())}"
        raise ParameterError("design", rule, design) from None
    return designer(looks, healthy_pmf, regressed_pmf, false_alarm=false_alarm, detection=detection)
