"""The runs behind a recommendation: the known-good runs' outcomes, the regression each
gate is judged against (measured from regressed runs, or assumed), and how many known-good
runs would let a stricter gate be certified (:func:`runs_for_gate`). ``gate.py`` builds the
:class:`~gatecal._analyses.recommend.gate.Recommendation` from them.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from gatecal._analyses.noise.bounds import NoiseBounds, noise_bounds
from gatecal._analyses.noise.tails import gate_fail_probabilities
from gatecal._analyses.recommend.choice import (
    MoreRuns,
    regressed_rates,
)
from gatecal._common.defaults import RUNS_FOR_GATE_MAX
from gatecal._common.search import smallest_enough
from gatecal._common.validate import ParameterError, check_probability
from gatecal._engines.exact import beta_binomial_pmf
from gatecal._model.arrays import Floats, Ints
from gatecal._model.gates import strictest_within
from gatecal._model.regression import Regression, RegressionLike, as_regression
from gatecal.readers._data import RunsData

__all__ = ["runs_for_gate"]


def _more_runs(
    bounds: NoiseBounds,
    failures_per_run: Ints,
    cases_per_run: Ints,
    detections: Floats,
    failing: int | None,
    alpha: float,
    power: float,
    level: float,
) -> MoreRuns:
    """The strictest gate within budget at the estimate and the runs that would certify it
    (`failing` None: the regression is measured, its detection does not tighten)."""
    n = len(detections) - 1
    over = bounds.overdispersion
    fa = gate_fail_probabilities(beta_binomial_pmf(n, over.mean, over.icc)[::-1])
    k = strictest_within(list(fa), alpha)
    if failing is None:
        det = float(detections[k])
    else:
        rest = beta_binomial_pmf(n - failing, over.mean, over.icc)[::-1]
        det = float(gate_fail_probabilities(np.concatenate((rest, np.zeros(failing))))[k])
    meets = k >= 1 and det >= power
    runs = None
    if meets:
        runs = runs_for_gate(
            failures_per_run,
            cases_per_run,
            cases=n,
            false_alarm=alpha,
            k_min=k,
            confidence_level=level,
            detection=None if failing is None else power,
            failing=failing,
            bounds=bounds,
        )
    return MoreRuns(
        k_min=k if meets else None,
        runs=runs,
        measured_runs=len(failures_per_run),
        false_alarm=float(fa[k]),
        detection=det,
    )


def _healthy_outcomes(data: RunsData) -> tuple[list[str], list[str], npt.NDArray[np.int8]]:
    """The known-good runs and cases (short names) observed at least once, and the
    outcome matrix (1 pass, 0 fail, -1 not observed), runs by cases."""
    runs, cases, outcome = data.outcome_array("healthy")
    # a case never observed in a good run is no case
    seen_case: npt.NDArray[np.bool_] = np.asarray((outcome >= 0).any(axis=0))
    seen_run: npt.NDArray[np.bool_] = np.asarray((outcome >= 0).any(axis=1))
    if not seen_case.any():
        raise ParameterError(
            "runs",
            "must include at least one observed known-good verdict",
            f"{len(runs)} runs, all missing",
        )
    names = data.short_names()
    return (
        [run for run, keep in zip(runs, seen_run.tolist(), strict=True) if keep],
        [names[c] for c, keep in zip(cases, seen_case.tolist(), strict=True) if keep],
        outcome[seen_run][:, seen_case],
    )


_Regressed = tuple[Floats, str, float, Regression]


def _measured_regression(data: RunsData, cases: list[str], low_rate: float) -> _Regressed:
    """Detection of every gate against the measured regressed runs, with the words, the
    failing cases and the regression a bigger suite would keep."""
    from gatecal._engines.exact import pass_count_pmf

    n = len(cases)
    regressed_runs = len(data.runs("regressed"))
    reg_rate = regressed_rates(data, cases, low_rate)
    detections = gate_fail_probabilities(pass_count_pmf(1.0 - reg_rate))
    failing_cases = float(np.sum(reg_rate > 0.5))
    majority_failing = max(1, int(failing_cases))
    plan_regression = Regression(
        text=f"{majority_failing}/{n}", share=Fraction(majority_failing, n)
    )
    text = f"measured: {regressed_runs} regressed runs"
    return detections, text, failing_cases, plan_regression


def _assumed_regression(
    regression: RegressionLike | None, n: int, bounds: NoiseBounds
) -> _Regressed:
    """Detection of every gate when `regression` cases fail a code check (a quarter by
    default), the smallest over the noise region."""
    reg = as_regression("0.25" if regression is None else regression)
    f = reg.failing(n)
    if f < 1 or f > n:
        raise ParameterError("regression", f"must make between 1 and {n} cases fail", reg.text)
    text = f"{reg.describe()} ({f} of {n}, a code check)"
    # a bigger suite keeps the regression's share of the cases, not its count
    return (
        bounds.detections(n, f),
        text,
        float(f),
        Regression(text=f"{f}/{n}", share=Fraction(f, n)),
    )


def runs_for_gate(
    failures_per_run: npt.ArrayLike,
    cases_per_run: npt.ArrayLike,
    *,
    cases: int,
    false_alarm: float,
    k_min: int,
    confidence_level: float = 0.95,
    limit: int = RUNS_FOR_GATE_MAX,
    detection: float | None = None,
    failing: int | None = None,
    bounds: NoiseBounds | None = None,
) -> int | None:
    """How many known-good runs in all would let the strictest gate within `false_alarm`
    reach "at least `k_min` of `cases` pass", if later runs fail as these did; with
    `detection`, also its detection bound of `failing` cases failing a code check must
    reach that target (the gate is then certified for both).

    The measured runs are repeated in turn (run i + R fails as run i did), so the estimate
    stays where it is and only each gate's bound tightens; the answer is the fewest
    runs, found by doubling and then bisection, whose bounds allow the gate; None if
    not even `limit` runs would. `bounds`: the measured runs' own :func:`noise_bounds`
    at `confidence_level`, when already found (not fitted again).
    """
    f = np.asarray(failures_per_run, dtype=np.int64)
    m = np.asarray(cases_per_run, dtype=np.int64)
    level = check_probability("confidence_level", confidence_level)
    if detection is not None and failing is None:
        raise ParameterError("failing", "must be given with detection", failing)

    @functools.cache
    def enough(total: int) -> bool:
        reps = -(-total // len(f))
        at = (
            bounds
            if bounds is not None and total == len(f)
            else noise_bounds(
                np.tile(f, reps)[:total], np.tile(m, reps)[:total], confidence_level=level
            )
        )
        if at.false_alarm(cases, k_min) > false_alarm:
            return False
        return detection is None or at.detection(cases, failing or 0, k_min) >= detection

    if not enough(len(f)) and not enough(limit):
        return None  # not even `limit` runs would: no search up to it (enough is monotone)
    return smallest_enough(enough, len(f), limit)
