"""The sequential designs as maths, and the registry that picks among them.

Each design of :data:`gatecal._model.sequential.SEQUENTIAL_DESIGNS` (its name, spelling and
summary, which every help text and error is built from) maps here to the function that
designs its gate for a suite's healthy and regressed one-run pmfs (:func:`designer` looks
it up). A new design is its own module, its line in that registry of names and its line in
:data:`DESIGNERS` below.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from gatecal._analyses.sequential.designs import SequentialGate, design_sequential
from gatecal._analyses.sequential.evalue import evalue_gate
from gatecal._common.validate import ParameterError
from gatecal._model.sequential import design_names

__all__ = ["DESIGNERS", "designer"]

#: ``designer(looks, healthy_pmf, regressed_pmf, *, false_alarm, detection)`` by name.
DESIGNERS: dict[str, Callable[..., SequentialGate]] = {
    "sprt": functools.partial(design_sequential, "sprt"),
    "pocock": functools.partial(design_sequential, "pocock"),
    "obf": functools.partial(design_sequential, "obf"),
    "evalue": evalue_gate,
}


def designer(design: str) -> Callable[..., SequentialGate]:
    """The function that designs the gate a sequential policy names, called as
    ``designer(design)(looks, healthy_pmf, regressed_pmf, *, false_alarm, detection)``:
    the boundary search :func:`gatecal.design_sequential` for ``sprt``, ``pocock`` and
    ``obf``, the e-process :func:`gatecal.evalue_gate` for ``evalue`` (their docstrings
    say what each pmf may be). An unknown name is a ParameterError naming them all."""
    try:
        return DESIGNERS[design]
    except KeyError:
        rule = f"must be one of {', '.join(design_names())}"
        raise ParameterError("design", rule, design) from None
