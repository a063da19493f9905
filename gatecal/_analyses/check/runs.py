"""The current runs of a check, case by case, and how a policy combines them.

Each current run gives each baseline case a state: passed, failed, error or missing (a case
that lacks one of the checks the baseline ran on it is missing: missing evidence). A policy
(rerun-failing-R, rerun-R, repeat-K-of-N) combines several runs into one final state per case,
with the reasons the runs do not fit it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gatecal._analyses.policies.parse import CHECK_POLICIES
from gatecal._model.evidence import ERROR, FAIL, MISSING, PASS

if TYPE_CHECKING:
    from gatecal._analyses.policies.rules import Policy
    from gatecal.readers.run_states import RunStates


__all__ = ["CHECK_POLICIES", "_combine"]


@dataclass(frozen=True, slots=True)
class _Combined:
    final: Any  # int8 per baseline case: its final state's code (passed, failed, error, missing)
    errors: Any  # bool per baseline case: an error in an attempt that counted
    reasons: list[str]  # incomplete evidence
    attempt: int  # the attempt the decision rests on (rerun-R)


def _combine(policy: Policy, states: RunStates, k_min: int) -> _Combined:
    """Apply the policy to the current runs, in order; see :func:`check_gate`."""
    import numpy as np

    runs, cases, codes = states.runs, states.cases, states.codes[:, : states.n]
    reasons: list[str] = []
    if policy.repeat > 1:
        if len(runs) != policy.repeat:
            reasons.append(
                f"repeat-{policy.need}-of-{policy.repeat} needs {policy.repeat} "
                f"current runs ({len(runs)} given)"
            )
        passes = (codes == PASS).sum(axis=0)
        final = np.where(
            (codes == MISSING).any(axis=0), MISSING, np.where(passes >= policy.need, PASS, FAIL)
        )
        return _Combined(final.astype(np.int8), (codes == ERROR).any(axis=0), reasons, 0)
    if policy.rerun_failing:
        limit = policy.rerun_failing + 1
        name = f"rerun-failing-{policy.rerun_failing}"
        if len(runs) > limit:
            reasons.append(f"{name} allows {limit} attempts ({len(runs)} current runs given)")
        # each case's attempts in turn, while it did not pass and the next attempt has it
        state, tries = codes[0].copy(), np.ones(codes.shape[1], dtype=np.int64)
        errors = state == ERROR
        going = np.ones(codes.shape[1], dtype=bool)
        for attempt in codes[1:]:
            going &= (state <= ERROR) & (attempt != MISSING)  # failed or error, and rerun
            state[going] = attempt[going]
            tries[going] += 1
            errors |= going & (state == ERROR)
        short = min(limit, len(codes))
        for j in np.flatnonzero((state <= ERROR) & (tries < limit)).tolist():
            t = int(tries[j])
            if t < short:
                reasons.append(
                    f"{cases[j]} did not pass attempt {t} and is missing from "
                    f"attempt {t + 1} ({name} reruns what did not pass)"
                )
            else:
                reasons.append(
                    f"{cases[j]} did not pass in {t} attempt(s) and {name} allows "
                    f"{limit}: the rerun is missing"
                )
        return _Combined(state, errors, reasons, 0)
    if policy.rerun:
        limit = policy.rerun + 1
        if len(runs) > limit:
            reasons.append(
                f"rerun-{policy.rerun} allows {limit} attempts ({len(runs)} current runs given)"
            )
        best, best_k = 0, -1
        for t, attempt in enumerate(codes):
            k = int((attempt == PASS).sum())
            if k > best_k:
                best, best_k = t, k
            if k >= k_min and not (attempt == MISSING).any():
                best = t
                break
        else:
            if len(codes) < limit:
                reasons.append(
                    f"every attempt given failed the gate, and rerun-{policy.rerun} "
                    f"allows {limit} attempts ({len(codes)} given)"
                )
        used = codes[: best + 1] if best_k < k_min else codes[best : best + 1]
        return _Combined(codes[best].copy(), (used == ERROR).any(axis=0), reasons, best)
    if len(runs) > 1:
        reasons.append(
            f"{len(runs)} current runs with no policy: name how they combine ({CHECK_POLICIES})"
        )
    return _Combined(codes[0].copy(), codes[0] == ERROR, reasons, 0)
