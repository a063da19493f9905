"""A case-aware gate file checked against the baseline it is used with, by content.

A gate file names its cases and each run's failing count, and both can match another
baseline: swap two cases' labels between the night the gate was made and today (positional
or renamed case ids) and every name and every run's count stays, while the case the file
weighs as flaky is now the one that never failed. So the file is used only with the
baseline it was made from: every case's record (failures, runs) must be the given
baseline's, the weights the file derives from those records must be the ones the library
derives (:func:`gatecal._analyses.noise.casegate.weights`, never a copy of its formula),
and its tail the one the baseline gives. Anything else is refused in one line naming the
first case that disagrees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gatecal._common.validate import ParameterError

if TYPE_CHECKING:
    from gatecal._analyses.recommend.gate import Recommendation
    from gatecal._model.gatefile import RecommendedGate

__all__ = ["TAIL_TOLERANCE", "WEIGHT_TOLERANCE", "refuse_other_baseline"]

#: A case's weight in the file (its units times the unit, in log-likelihood ratio) may
#: differ from the weight derived from the baseline by half a unit (the rounding to whole
#: units) plus this relative slack (a last bit of a logarithm on another CPU).
WEIGHT_TOLERANCE = 1e-9
#: The file's tail and the baseline's may differ by this, relative (plus 1e-12 absolute):
#: both are sums of the same terms, possibly in another order.
TAIL_TOLERANCE = 1e-6

_RERUN = "rerun recommend on this baseline"


def refuse_other_baseline(gate: RecommendedGate, rec: Recommendation) -> None:
    """Refuse a case-aware gate file that was not made from the baseline `rec` measures.

    Parameters
    ----------
    gate : RecommendedGate
        The gate file (a count gate file holds no per-case record: nothing to check).
    rec : Recommendation
        The given baseline as recommend measures it (its per-case records and gate).

    Raises
    ------
    ParameterError
        Named ``gate_from``: the first case whose record, weight or the tail disagrees.
    """
    import numpy as np

    from gatecal._analyses.noise.casegate import weights

    spread, fresh = rec.case_spread, rec.case_gate
    if gate.kind != "cases" or spread is None or fresh is None:
        return
    ours = {r.case: r for r in spread.records}
    position = {r.case: j for j, r in enumerate(spread.records)}
    if set(ours) != set(gate.case_names):
        return  # other cases: the file's own mismatch says so
    for name, (failures, runs) in zip(gate.case_names, gate.records, strict=True):
        mine = ours[name]
        if (failures, runs) != (mine.failures, mine.runs):
            raise ParameterError(
                "gate_from",
                f"was made from another baseline: case {name!r} failed {failures} of {runs} "
                f"known-good runs there, {mine.failures} of {mine.runs} in the baseline "
                f"given: {_RERUN}",
                gate.source,
            )
    order = [position[name] for name in gate.case_names]
    derived = weights(spread.rates()[order], fresh.eps)
    for name, units, weight in zip(gate.case_names, gate.units, derived.tolist(), strict=True):
        allowed = gate.unit / 2 + WEIGHT_TOLERANCE * max(1.0, abs(weight))
        if not abs(units * gate.unit - weight) <= allowed:
            raise ParameterError(
                "gate_from",
                f"does not check out against its baseline: case {name!r} weighs "
                f"{units * gate.unit:.2f} in the file, but its record gives {weight:.2f} "
                f"(edited by hand?): {_RERUN}",
                gate.source,
            )
    at = dict(zip(fresh.cases, fresh.units, strict=True))
    if tuple(at[name] for name in gate.case_names) != gate.units:
        return  # a weight on a rounding edge, within the tolerance: the tails differ in length
    mine_tail = np.asarray(fresh.tail, dtype=np.float64)
    file_tail = np.asarray(gate.tail, dtype=np.float64)
    if mine_tail.shape != file_tail.shape or not np.allclose(
        file_tail, mine_tail, rtol=TAIL_TOLERANCE, atol=1e-12
    ):
        raise ParameterError(
            "gate_from",
            "does not check out against its baseline: its tail (the healthy build's chance "
            f"of each weight) is not the one its records give (edited by hand?): {_RERUN}",
            gate.source,
        )
