"""plan when cases differ (gatecal/_analyses/plan/cases.py), against brute force: each
case's pass probability averaged over its Beta rate by the Beta's moments in exact fractions
(not the plan's Gauss rule), every subset of passing cases enumerated."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

import gatecal
from gatecal._common.validate import ParameterError
from gatecal._model.suite import systematic_count


def _beta_mean(poly: list[Fraction], a: Fraction, b: Fraction) -> Fraction:
    """E[poly(X)], X ~ Beta(a, b), from the moments E[X^k] = prod_{i<k} (a+i)/(a+b+i)."""
    total, moment = Fraction(0), Fraction(1)
    for k, c in enumerate(poly):
        total += c * moment
        moment *= (a + k) / (a + b + k)
    return total


def _mul(p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, x in enumerate(p):
        for j, y in enumerate(q):
            out[i + j] += x * y
    return out


def _power(p: list[Fraction], k: int) -> list[Fraction]:
    out = [Fraction(1)]
    for _ in range(k):
        out = _mul(out, p)
    return out


def _case_pass(flip: float, spread: float, policy: str, judge_checks: int) -> Fraction:
    """P(a healthy case passes one attempt), averaged over its rate X ~ Beta exactly: the
    pass probability as a polynomial in X (fractions), integrated by the Beta's moments."""
    one = [Fraction(1), Fraction(-1)]  # 1 - X: one call says pass
    x = [Fraction(0), Fraction(1)]
    if policy == "majority-3":  # at least 2 of 3 calls say pass
        one = [
            a + b for a, b in itertools.zip_longest(
                _power(one, 3), [3 * c for c in _mul(_power(one, 2), x)], fillvalue=Fraction(0)
            )
        ]  # fmt: skip
    case = _power(one, judge_checks)
    if policy == "rerun-failing-1":  # 1 - (1 - case)^2
        fail = [-c for c in case]
        fail[0] += 1
        case = [-c for c in _power(fail, 2)]
        case[0] += 1
    scale = (1 - Fraction(spread)) / Fraction(spread)
    return _beta_mean(case, Fraction(flip) * scale, (1 - Fraction(flip)) * scale)


def gate_fail_probabilities(probs: list[Fraction]) -> list[Fraction]:
    """P(fewer than k pass), k = 0..n: the pass count's pmf by the product of the cases'
    generating polynomials (1 - q + q t), multiplied out in exact fractions."""
    pmf = [Fraction(1)]
    for q in probs:
        pmf = _mul(pmf, [1 - q, q])
    return [sum(pmf[:k], Fraction(0)) for k in range(len(probs) + 1)]


def _brute(n, flip, spread, systematic, policy, share, alpha):
    """(k_min, false alarm, detection) of the strictest gate within `alpha` at n cases,
    averaged over suites drawn from the spread: cases are then independent, each with its
    averaged pass probability (a systematic case never passes)."""
    stuck = systematic_count(n, systematic)
    q = _case_pass(flip, spread, policy, 2)
    healthy = [Fraction(0) if i >= n - stuck else q for i in range(n)]
    f = int(share * n + Fraction(1, 2))
    regressed = [Fraction(0)] * f + healthy[f:]  # the first f fail a code check
    fa, det = gate_fail_probabilities(healthy), gate_fail_probabilities(regressed)
    k = max(k for k in range(n + 1) if fa[k] <= alpha)
    return k, fa[k], det[k]


@pytest.mark.parametrize(
    ("spread", "systematic", "policy"),
    [
        (0.5, 0.0, "single"),
        (0.5, 0.0, "majority-3"),
        (0.3, 0.1, "rerun-failing-1"),
        (0.1, 0.0, "single"),
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
        max_cases=80,
    )
    plan = plans.plans[0]
    assert plan is not None and plan.cases <= 80
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


def test_how_much_one_suite_varies_is_measured_around_the_exact_average():
    """The plan's figures are averages over suites; its spread draws 2,000 suites and
    computes each exactly: their mean must agree with the exact average within 4 standard
    errors, and the share over the target is a share of those suites."""
    import numpy as np

    from gatecal._analyses.plan.cases import suite_variation

    noise = gatecal.JudgeNoise(fnr=0.05, fpr=0.05, case_spread=0.5, systematic=0.1)
    plans = gatecal.plan_suite(
        noise=noise, regression="0.1", policies=[gatecal.parse_policy("single")]
    )
    plan = plans.plans[0]
    assert plan is not None and plan.spread is not None
    spread = plan.spread
    # the same draws again, each suite's false alarm kept: the mean's standard error
    again = suite_variation(noise, plan, 2, 1, false_alarm=0.05, detection=0.95)
    assert again == spread  # seeded
    assert 0.0 < spread.false_alarm_over < 1.0  # some suites over the target, not all
    assert spread.false_alarm_high > plan.false_alarm  # a suite can be worse than average
    for mean, exact in (
        (spread.false_alarm_mean, plan.false_alarm),
        (spread.detection_mean, plan.detection),
    ):  # a variable in [0, 1] with mean m has sd at most sqrt(m (1 - m)) (Bhatia-Davis)
        se = np.sqrt(exact * (1 - exact) / spread.suites)
        assert abs(mean - exact) <= 4 * se


def test_a_rerun_of_the_whole_suite_is_refused_when_cases_spread():
    """Its attempts ask the same drawn cases again: not one case's average."""
    noise = gatecal.JudgeNoise(fnr=0.05, fpr=0.05, case_spread=0.4)
    with pytest.raises(ParameterError) as info:
        gatecal.plan_suite(
            noise=noise, regression="0.25", policies=[gatecal.parse_policy("rerun-1")]
        )
    assert info.value.name == "policies" and "same cases" in info.value.rule
