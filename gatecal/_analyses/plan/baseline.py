"""How many known-good runs a planned suite needs before ``recommend`` can certify its gate.

``plan`` knows the noise; a team measuring it from its own runs does not, and
``recommend`` only allows a gate whose false-alarm *bound* over the measured noise is
within budget (and, for a number of cases failing a code check, whose detection bound
meets the target). With few runs the bound is wide and the gate ``plan`` found is not
yet allowed. This module answers, per plan: how many known-good runs would let the
bounds certify the planned gate for both targets, and, for a given number of runs,
the smallest suite whose gate they would certify.

The runs are the planned noise's *representative* runs: run i fails as many cases as
the quantile of one run's failing-case count at the level ``u_i`` of the van der
Corput sequence (1/2, 1/4, 3/4, 1/8, ...), so any first T of them spread evenly over
the distribution and the estimate sits at the planned rate and icc. Real runs scatter
around it: of random sets of that many runs drawn from the plan's own model, between a
quarter and 70% certified the gate (``reports/plan-baseline-runs.md``, from
``experiments/plan_baseline_runs.py``), so that answer is the typical number of runs, not a
guarantee. With ``share`` the module also answers by simulation: the count at which at
least that share of random sets (``plan`` asks 80%) certify the gate, with the share
measured.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._analyses.noise.bounds import noise_bounds
from gatecal._analyses.plan._search import PLAN_MAX_CASES, SuitePlan, SuitePlans
from gatecal._analyses.plan.suite import healthy_pass_pmf, is_sequential
from gatecal._common.contracts import FieldsJSON
from gatecal._common.defaults import RUNS_FOR_GATE_MAX
from gatecal._common.lowdiscrepancy import van_der_corput
from gatecal._common.search import smallest_enough
from gatecal._common.validate import check_count, check_instance, check_probability
from gatecal._model.arrays import Ints

__all__ = ["BaselineRuns", "baseline_runs", "representative_failures"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineRuns(FieldsJSON):
    """The known-good runs behind one plan's gate; see :func:`baseline_runs`.

    Attributes
    ----------
    policy : str
        The plan's policy.
    cases, k_min, failing : int
        The plan: its suite, its gate (at least `k_min` pass) and the regression's cases.
    needed : int or None
        The fewest representative known-good runs whose bounds certify the planned gate
        for both targets; None when not even `limit` runs would, or `reason` says why
        it was not asked.
    limit : int
        The most runs tried.
    runs : int or None
        The known-good runs asked about (``plan --baseline-runs N``), else None.
    suite, suite_k_min : int or None
        With `runs` runs: the smallest suite (from the plan's up to `suite_limit`) whose
        strictest gate within the false-alarm bound also meets the detection bound, and
        that gate; None when no suite up to `suite_limit` does (or no `runs`).
    suite_false_alarm, suite_detection : float or None
        That gate's false-alarm and detection bounds from `runs` runs.
    suite_limit : int
        The largest suite tried.
    share : float or None
        The share of baseline sets asked for (``plan`` asks 0.8), None when not asked.
    needed_share : int or None
        The fewest runs, on the grid ``needed x 1.25^k``, at which at least `share` of
        `sets` random sets of that many runs drawn from the plan's own model certify the
        planned gate, plus one standard error (simulated, seeded); None when not asked or
        not reached by `limit`.
    share_hits, sets : int
        How many of the `sets` sets certified it at `needed_share` (the measured share).
    reason : str or None
        Why the plan has no answer (a sequential gate, a rerun of the whole suite, a
        regression that can still pass its check), else None.
    """

    policy: str
    cases: int
    k_min: int
    failing: int
    needed: int | None
    limit: int
    runs: int | None = None
    suite: int | None = None
    suite_k_min: int | None = None
    suite_false_alarm: float | None = None
    suite_detection: float | None = None
    suite_limit: int = 0
    share: float | None = None
    needed_share: int | None = None
    share_hits: int = 0
    sets: int = 0
    reason: str | None = None


def representative_failures(failing_pmf: npt.ArrayLike, runs: int) -> Ints:
    """Failing cases of `runs` representative runs: the quantiles of `failing_pmf` (one
    run's failing-case count, 0..n) at the first `runs` van der Corput levels."""
    pmf = np.asarray(failing_pmf, dtype=np.float64)
    cdf = np.cumsum(pmf)
    cdf[-1] = 1.0  # the top count takes whatever rounding left above the last sum
    # (the smallest count whose cdf reaches u; the levels are dyadic, so a cdf within
    # rounding of one of them is the only place the last bits could matter)
    return np.searchsorted(cdf, van_der_corput(runs), side="left").astype(np.int64)


def baseline_runs(
    plans: SuitePlans,
    *,
    runs: int | None = None,
    confidence_level: float = 0.95,
    limit: int = RUNS_FOR_GATE_MAX,
    suite_limit: int = PLAN_MAX_CASES,
    share: float | None = None,
    sets: int = 50,
    seed: int = 0,
) -> tuple[BaselineRuns | None, ...]:
    """Per plan of `plans` (None where it has none): the known-good runs its gate needs.

    ``needed`` is the fewest representative runs (see the module) whose bounds, as
    ``recommend`` computes them (:func:`gatecal.noise_bounds` at `confidence_level`),
    allow the planned gate within the false-alarm target and, the regression being
    cases failing a code check, its detection bound at the detection target; found by
    doubling and bisection from 2 runs, as recommend's "more known-good runs". With
    `runs`, also the smallest suite (doubling and bisection from the plan's size up to
    `suite_limit`) that `runs` representative runs certify for both targets.

    The representative count is typical: random sets of that many runs certify the gate
    in 26% to 70% of cases (``reports/plan-baseline-runs.md``). With `share`, also the
    count that certifies it in at least that share of `sets` random sets drawn from the
    plan's own model (seeded by `seed`), searched on the grid ``needed x 1.25^k``: a
    measured share, with its binomial standard error, not a bound.

    Parameters
    ----------
    plans : SuitePlans
        What :func:`gatecal.plan_suite` returned.
    runs : int, optional
        A number of known-good runs you have or plan to have, in [2, `limit`]: the result
        also gives the smallest suite they certify. Default: not asked.
    confidence_level : float, default 0.95
        The level of the noise bounds, as in ``recommend``.
    limit : int, default 5000
        The most known-good runs tried, at least 2.
    suite_limit : int, default 500
        The largest suite tried with `runs`, at least 1.
    share : float, optional
        A share in [0, 1] of random baseline sets that must certify the gate; default not
        asked (``plan`` asks 0.8).
    sets : int, default 50
        Random baseline sets drawn per candidate count when `share` is given, at least 1.
    seed : int, default 0
        The seed of those draws, at least 0.

    Returns
    -------
    tuple of BaselineRuns or None
        One per plan of `plans`, None where it has none: the runs needed, and what was
        asked with `runs` and `share`.

    Raises
    ------
    ParameterError
        If `plans` is not a SuitePlans, or a count, level or share is out of range.
    """
    check_instance("plans", plans, SuitePlans, "a gatecal.SuitePlans (from gatecal.plan_suite)")
    level = check_probability("confidence_level", confidence_level)
    top = check_count("limit", limit, low=2)
    given = None if runs is None else check_count("runs", runs, low=2, high=top)
    widest = check_count("suite_limit", suite_limit, low=1)
    wanted = None if share is None else check_probability("share", share)
    draws = check_count("sets", sets, low=1)
    root = check_count("seed", seed, low=0)
    return tuple(
        None
        if plan is None
        else _baseline(plans, plan, given, level, top, widest, (wanted, draws, root))
        for plan in plans.plans
    )


def _baseline(
    plans: SuitePlans,
    plan: SuitePlan,
    given: int | None,
    level: float,
    top: int,
    widest: int,
    simulated: tuple[float | None, int, int] = (None, 0, 0),
) -> BaselineRuns:
    """:func:`baseline_runs` of one plan."""
    fields: dict[str, Any] = {}
    reason = _why_not(plans, plan)
    wanted, sets, seed = simulated
    if reason is None:
        certify = _Certify(plans, plan, level)
        fields["needed"] = smallest_enough(
            lambda total: certify.gate(plan.cases, total, plan.k_min) is not None, 2, top
        )
        if wanted is not None and fields["needed"] is not None:
            found = _needed_share(certify, plan, fields["needed"], top, wanted, sets, seed)
            fields.update(share=wanted, sets=sets)
            if found is not None:
                fields.update(needed_share=found[0], share_hits=found[1])
        if given is not None and plan.cases <= widest:
            suite = smallest_enough(
                lambda n: certify.gate(n, given) is not None, plan.cases, widest
            )
            if suite is not None:
                k, fa, det = certify.gate(suite, given) or (None, None, None)
                fields.update(suite=suite, suite_k_min=k, suite_false_alarm=fa, suite_detection=det)
    return BaselineRuns(
        policy=plan.policy.describe(),
        cases=plan.cases,
        k_min=plan.k_min,
        failing=plan.failing,
        needed=fields.pop("needed", None),
        limit=top,
        runs=given,
        suite_limit=widest,
        reason=reason,
        **fields,
    )


class _Certify:
    """What representative known-good runs of one plan's policy certify."""

    def __init__(self, plans: SuitePlans, plan: SuitePlan, level: float):
        self._plans, self._policy, self._level = plans, plan.policy, level
        self._pmfs: dict[int, npt.NDArray[np.float64]] = {}

    def _failing_pmf(self, n: int) -> npt.NDArray[np.float64]:
        if n not in self._pmfs:
            self._pmfs[n] = healthy_pass_pmf(self._plans, self._policy, n)[::-1]
        return self._pmfs[n]

    def random(self, n: int, total: int, k_min: int, rng: np.random.Generator) -> bool:
        """Do `total` random runs of `n` cases (each failing count an independent draw of
        the plan's one-run pmf) certify the gate `k_min` for both targets?"""
        pmf = self._failing_pmf(n)
        failures = rng.choice(n + 1, size=total, p=pmf / pmf.sum())
        return self._certified(failures, n, k_min) is not None

    def gate(self, n: int, total: int, k_min: int | None = None) -> tuple[int, float, float] | None:
        """With `total` runs of `n` cases: the gate `k_min` (default: the strictest within
        the false-alarm bound) with its two bounds, if it meets both targets, else None."""
        failures = representative_failures(self._failing_pmf(n), total)
        return self._certified(failures, n, k_min)

    def _certified(
        self, failures: npt.NDArray[np.int64], n: int, k_min: int | None
    ) -> tuple[int, float, float] | None:
        plans = self._plans
        bounds = noise_bounds(failures, n, confidence_level=self._level)
        alpha, power = plans.targets.false_alarm, plans.targets.detection
        if k_min is None:
            k_min = bounds.strictest_gate(n, alpha)
        if k_min < 1:
            return None
        fa = bounds.false_alarm(n, k_min)
        f = plans.regression.failing(n)
        if fa > alpha or not 1 <= f <= n:
            return None
        det = bounds.detection(n, f, k_min)
        return (k_min, fa, det) if det >= power else None


#: Each step of the search for the count that certifies a share of baseline sets.
_SHARE_STEP = 1.25


def _needed_share(
    certify: _Certify,
    plan: SuitePlan,
    start: int,
    top: int,
    wanted: float,
    sets: int,
    seed: int,
) -> tuple[int, int] | None:
    """The first count on ``start x 1.25^k`` (up to `top`) at which the share of `sets`
    random sets that certify the plan's gate is at least `wanted` plus one binomial
    standard error (43 of 50 for 80%: a count whose true share is below `wanted` rarely
    passes), and how many did."""
    need = wanted * sets + math.sqrt(wanted * (1 - wanted) * sets)
    total, step = start, 0
    while total <= top:
        # the plan's own stream: the same plan gets the same answer wherever it is listed
        rng = np.random.default_rng([seed, plan.cases, plan.k_min, total])
        hits = sum(certify.random(plan.cases, total, plan.k_min, rng) for _ in range(sets))
        if hits >= need - 1e-9:
            return total, hits
        step += 1
        total = max(total + 1, int(np.ceil(start * _SHARE_STEP**step)))
    return None


def _why_not(plans: SuitePlans, plan: SuitePlan) -> str | None:
    """Why recommend's bounds do not apply to this plan's gate, or None."""
    policy = plan.policy
    if is_sequential(policy):
        return "a sequential gate: recommend certifies a fixed gate"
    if policy.rerun:
        return "a rerun of the whole suite: recommend bounds one attempt"
    if plans.code_checks == 0 and plans.noise.fpr > 0:
        return (
            "the regressed cases fail a judge check and can still pass it; recommend's "
            "detection bound assumes they fail a code check"
        )
    return None
