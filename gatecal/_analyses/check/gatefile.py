"""A case-aware gate file checked against the baseline it is used with, by content.

A gate file names its cases and each run's failing count, and both can match another
baseline: swap two cases' labels between the night the gate was made and today (positional
or renamed case ids) and every name and every run's count stays, while the case the file
weighs as flaky is now the one that never failed. So the file is used only with the
baseline it was made from:

- every case's record (failures, runs) must be the given baseline's;
- the healthy rate the file states for each case, derived from the records by the library
  (the case spread's predictive rate), must be the given baseline's to a relative
  :data:`RATE_TOLERANCE` (the fit's last bits may differ on another CPU);
- its known-good runs (each run's failing and missing cases, which the rank rule scores the
  CI run against) must be the given baseline's runs, as a collection: equal counts can hide
  failures moved between runs by hand.

Anything else is refused in one line naming the first case that disagrees. The rank gate
stores no weights: check derives each failure's weight from the known-good runs
(:func:`gatecal._model.rankgate.weight_units`), so equal records and equal runs are equal
weights, to the unit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gatecal._common.validate import ParameterError

if TYPE_CHECKING:
    from gatecal._analyses.recommend.gate import Recommendation
    from gatecal._model.gatefile import RecommendedGate

__all__ = ["RATE_TOLERANCE", "refuse_other_baseline"]

#: A case's healthy rate in the file and the one its record gives in the baseline may
#: differ by this, relative (plus 1e-12 absolute): the same fit, its last bits aside.
RATE_TOLERANCE = 1e-6

_RERUN = "rerun recommend on this baseline"

Runs = Counter[tuple[frozenset[str], frozenset[str]]]


def _runs(
    names: Sequence[str],
    failing: Sequence[Sequence[int]],
    missing: Sequence[Sequence[int]],
) -> Runs:
    """The known-good runs as a collection of (failing cases, missing cases) by name."""
    return Counter(
        (frozenset(names[c] for c in f), frozenset(names[c] for c in m))
        for f, m in zip(failing, missing, strict=True)
    )


def refuse_other_baseline(gate: RecommendedGate, rec: Recommendation) -> None:
    """Refuse a case-aware gate file that was not made from the baseline `rec` measures.

    Parameters
    ----------
    gate : RecommendedGate
        The gate file (a count gate file holds no per-case record: nothing to check).
    rec : Recommendation
        The given baseline as recommend measures it (its case-aware gate: per-case records
        and known-good runs).

    Raises
    ------
    ParameterError
        Named ``gate_from``: the first case whose record, rate or runs disagree.
    """
    fresh = rec.case_gate
    if gate.kind != "cases" or fresh is None:
        return
    ours = {c: i for i, c in enumerate(fresh.cases)}
    if set(ours) != set(gate.case_names):
        return  # other cases: the file's own mismatch says so
    for j, (name, (failures, runs)) in enumerate(zip(gate.case_names, gate.records, strict=True)):
        i = ours[name]
        mine = (fresh.failures[i], fresh.runs[i])
        if (failures, runs) != mine:
            raise ParameterError(
                "gate_from",
                f"was made from another baseline: case {name!r} failed {failures} of {runs} "
                f"known-good runs there, {mine[0]} of {mine[1]} in the baseline given: {_RERUN}",
                gate.source,
            )
        rate, derived = gate.rates[j], fresh.rates[i]
        if not math.isclose(rate, derived, rel_tol=RATE_TOLERANCE, abs_tol=1e-12):
            raise ParameterError(
                "gate_from",
                f"does not check out against its baseline: case {name!r} has the healthy "
                f"rate {rate:.6g} there, but its record gives {derived:.6g} (edited by "
                f"hand?): {_RERUN}",
                gate.source,
            )
    theirs = _runs(gate.case_names, gate.failing, gate.missing)
    mine_runs = _runs(fresh.cases, fresh.failing, fresh.missing)
    if theirs != mine_runs:
        extra = sorted(theirs - mine_runs, key=lambda r: (sorted(r[0]), sorted(r[1])))
        failing, missing = extra[0] if extra else (frozenset(), frozenset())
        first = sorted(failing | missing)[:1] or sorted(gate.case_names)[:1]
        raise ParameterError(
            "gate_from",
            f"was made from other known-good runs: one of its runs, where "
            f"{len(failing)} case(s) failed (case {first[0]!r} among them), is none of the "
            f"baseline given's (failures moved between runs by hand?): {_RERUN}",
            gate.source,
        )
