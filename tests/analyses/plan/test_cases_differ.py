"""plan when cases differ (gatecal/_analyses/plan/cases.py), against brute force: every
subset of passing cases enumerated in exact fractions from each case's own rate."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

import gatecal
from gatecal._common.validate import ParameterError
from gatecal._model.suite import case_flip_rates, systematic_count


def _case_pass(rate: Fraction, policy: str, judge_checks: int, stuck: bool) -> Fraction:
    """P(a healthy case passes one attempt), exactly: every judge check says pass."""
    one = 1 - rate
    if policy == "majority-3":
        one = one**3 + 3 * one**2 * rate  # at least 2 of 3 calls say pass
    case = one**judge_checks
    if policy == "rerun-failing-1":
        case = 1 - (1 - case) ** 2
    return Fraction(0) if stuck else case


def _below(probs: list[Fraction]) -> list[Fraction]:
    """P(fewer than k pass), k = 0..n, by enumerating every outcome."""
    n = len(probs)
    pmf = [Fraction(0)] * (n + 1)
    for outcome in itertools.product((0, 1), repeat=n):
        p = Fraction(1)
        for passed, q in zip(outcome, probs, strict=True):
            p *= q if passed else 1 - q
        pmf[sum(outcome)] += p
    return [sum(pmf[:k], Fraction(0)) for k in range(n + 1)]


def _brute(n, flip, spread, systematic, policy, share, alpha):
    """(k_min, false alarm, detection) of the strictest gate within `alpha` at n cases."""
    rates = [Fraction(float(r)) for r in case_flip_rates(n, flip, spread, systematic)]
    stuck = systematic_count(n, systematic)
    healthy = [_case_pass(r, policy, 2, i >= n - stuck) for i, r in enumerate(rates)]
    f = int(share * n + Fraction(1, 2))
    regressed = [Fraction(0)] * f + healthy[f:]  # the first f fail a code check
    fa, det = _below(healthy), _below(regressed)
    k = max(k for k in range(n + 1) if fa[k] <= alpha)
    return k, fa[k], det[k]


@pytest.mark.parametrize(
    ("spread", "systematic", "policy"),
    [
        (0.5, 0.0, "single"),
        (0.5, 0.0, "majority-3"),
        (0.3, 0.1, "rerun-failing-1"),
        (0.9, 0.0, "single"),
    ],
)
def test_the_plan_is_the_smallest_size_brute_force_allows(spread, systematic, policy):
    alpha, power, share = Fraction(1, 20), Fraction(19, 20), Fraction(1, 4)
    noise = gatecal.JudgeNoise(fnr=0.08, fpr=0.08, case_spread=spread, systematic=systematic)
    plans = gatecal.plan_suite(
        noise=noise,
        regression="0.25",
        false_alarm=0.05,
        detection=0.95,
        policies=[gatecal.parse_policy(policy)],
        max_cases=12,
    )
    plan = plans.plans[0]
    assert plan is not None and plan.cases <= 12
    k, fa, det = _brute(plan.cases, 0.08, spread, systematic, policy, share, alpha)
    assert plan.k_min == k
    # a case's pass probability is held as q near 1: a failure of 1e-7 keeps ~1e-9 of it
    assert plan.false_alarm == pytest.approx(float(fa), rel=1e-8, abs=1e-300)
    assert plan.detection == pytest.approx(float(det), rel=1e-8)
    for smaller in range(1, plan.cases):  # none smaller meets both targets
        f = int(share * smaller + Fraction(1, 2))
        if 1 <= f <= smaller:
            assert _brute(smaller, 0.08, spread, systematic, policy, share, alpha)[2] < power


def test_sequential_plans_and_icc_are_refused_when_cases_differ():
    noise = gatecal.JudgeNoise(fnr=0.08, fpr=0.08, case_spread=0.4)
    with pytest.raises(ParameterError) as info:
        gatecal.plan_suite(
            noise=noise, regression="0.25", policies=[gatecal.parse_policy("sprt-5")]
        )
    assert info.value.name == "policies"


def test_a_search_too_long_to_wait_for_is_refused():
    """Each size is its own exact pmf: past 2,000 cases a search that finds none would
    take many minutes."""
    noise = gatecal.JudgeNoise(fnr=0.3, fpr=0.3, case_spread=0.3)
    with pytest.raises(ParameterError) as info:
        gatecal.plan_suite(noise=noise, regression="0.02", max_cases=5000)
    assert info.value.name == "max_cases" and "2,000 when cases differ" in info.value.rule
