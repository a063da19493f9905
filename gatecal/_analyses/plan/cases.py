"""Plans for a suite whose cases differ (``noise.case_spread``, ``noise.systematic``).

A suite drawn from a spread has one rate per case, drawn from the Beta and kept in every
run and call. The plan quotes false alarm and detection averaged over such suites (a case's
average pass probability is exact by Gauss rules over its rate, and cases are independent,
so the averaged pass count of one attempt is a Poisson-binomial of at most three kinds of
case: spread, systematic, broken), and how much one drawn suite varies around that average
(:func:`suite_variation`: the share of suites over the false-alarm target and under the
detection target). Each size is computed exactly in turn, up to :data:`CASES_DIFFER_MAX_CASES`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gatecal._analyses.plan._search import SuitePlan, SuiteSpread, plan_from_pmfs
from gatecal._analyses.policies.rules import Policy, case_outcomes
from gatecal._analyses.policies.spread import chebyshev_points, polynomial_curve
from gatecal._common.defaults import SPREAD_SEED, SPREAD_SUITES
from gatecal._engines.exact import grouped_pass_count_pmf, pass_count_pmfs
from gatecal._model.arrays import Floats
from gatecal._model.regression import Regression
from gatecal._model.suite import JudgeNoise, Suite, beta_shape, systematic_count

__all__ = [
    "CASES_DIFFER_LIMIT",
    "CASES_DIFFER_MAX_CASES",
    "SPREAD_SEED",
    "SPREAD_SUITES",
    "plan_cases_differ",
    "suite_pass_probabilities",
    "suite_variation",
]


#: The largest suite a plan tries by default when cases differ (each size is its own
#: exact pmf; a --max-cases asks for more).
CASES_DIFFER_MAX_CASES = 1000
#: The largest --max-cases when cases differ: a search that finds no size costs about
#: 9 s a policy up to 1,000 cases and grows with the square of the largest size (35 s to
#: 2,000 on a shared 2-core machine).
CASES_DIFFER_LIMIT = 2000


def suite_pass_probabilities(
    noise: JudgeNoise, policy: Policy, cases: int, failing: int, judge_checks: int, code_checks: int
) -> tuple[Floats, Floats, Floats]:
    """Per case of a suite of `cases` whose cases differ: P(it passes one attempt of
    `policy`) in the healthy build and in the regressed one (its first `failing` cases
    broken), and its expected judge calls in the healthy build (reruns of failing cases
    included), each averaged over suites drawn from the spread. A case's average depends
    only on whether it is systematic and whether it is broken, so one proxy case of each
    kind is computed (:func:`~gatecal._analyses.policies.rules.case_outcomes`)."""
    stuck = systematic_count(cases, noise.systematic)
    kinds = {}
    for build in ("healthy", "regressed"):  # two proxy cases: a spread one, a systematic one
        proxy = Suite.uniform(
            cases=2,
            judge_checks=judge_checks,
            code_checks=code_checks,
            failing=2 if build == "regressed" else 0,
        )
        kinds[build] = case_outcomes(proxy, build, replace(noise, systematic=0.5), policy)
    (q_h, calls_h), (q_r, _) = kinds["healthy"], kinds["regressed"]
    is_stuck = np.arange(cases) >= cases - stuck
    healthy = np.where(is_stuck, q_h[1], q_h[0])
    regressed = healthy.copy()
    regressed[:failing] = np.where(is_stuck[:failing], q_r[1], q_r[0])
    return healthy, regressed, np.where(is_stuck, calls_h[1], calls_h[0])


def suite_variation(
    noise: JudgeNoise,
    plan: SuitePlan,
    judge_checks: int,
    code_checks: int,
    *,
    false_alarm: float,
    detection: float,
    suites: int = SPREAD_SUITES,
    seed: int = SPREAD_SEED,
) -> SuiteSpread:
    """How the plan's gate fares on single suites drawn from the spread, not on average.

    Draws `suites` suites (each case its own rate from the Beta, seeded), computes each
    suite's false alarm and detection of the plan's gate exactly (its cases' pass
    probabilities at their drawn rates, :func:`~gatecal._engines.exact.pass_count_pmfs`),
    and returns their shares beyond the targets and their quantiles. A case's probability
    at rate x is a polynomial of known degree, so it is read off its values at Chebyshev
    points of [0, 1] by barycentric interpolation, exactly up to rounding.
    """
    n, f, policy = plan.cases, plan.failing, plan.policy
    stuck = systematic_count(n, noise.systematic)
    m = n - stuck
    degree = judge_checks * policy.majority * (1 + policy.confirm) * policy.repeat
    degree *= policy.rerun_failing + 1
    points = chebyshev_points(degree)
    curves = {}
    for build in ("healthy", "regressed"):
        proxy = Suite.uniform(
            cases=points.size,
            judge_checks=judge_checks,
            code_checks=code_checks,
            failing=points.size if build == "regressed" else 0,
        )
        per_case = {
            name: (float(x), float(x) if noise.fnr == noise.fpr else noise.fpr)
            for name, x in zip(proxy.cases, points, strict=True)
        }
        plain = JudgeNoise(fnr=noise.fnr, fpr=noise.fpr, unparseable=noise.unparseable)
        q, _ = case_outcomes(proxy, build, replace(plain, per_case=per_case), policy)
        curves[build] = polynomial_curve(points, q)
    rng = np.random.default_rng(seed)
    a, b = beta_shape(noise.fnr, noise.case_spread)
    x = np.full((suites, m), noise.fnr)
    if 0.0 < noise.fnr < 1.0:
        x = rng.beta(a, b, size=(suites, m))
    stuck_q = suite_pass_probabilities(noise, policy, n, f, judge_checks, code_checks)
    rates = {}
    for build in ("healthy", "regressed"):
        q = np.empty((suites, n))
        broken = f if build == "regressed" else 0
        q[:, :m] = np.clip(curves["healthy"](x), 0.0, 1.0)
        if broken:
            q[:, : min(broken, m)] = np.clip(curves["regressed"](x[:, : min(broken, m)]), 0.0, 1.0)
        q[:, m:] = (stuck_q[0] if build == "healthy" else stuck_q[1])[m:]
        pmfs = pass_count_pmfs(q)
        single = np.clip(pmfs[:, : plan.k_min].sum(axis=1), 0.0, 1.0)
        rates[build] = single ** (policy.rerun + 1)
    fa, det = rates["healthy"], rates["regressed"]
    return SuiteSpread(
        suites=suites,
        seed=seed,
        false_alarm_mean=float(fa.mean()),
        false_alarm_over=float(np.mean(fa > false_alarm)),
        false_alarm_high=float(np.quantile(fa, 0.9)),
        detection_mean=float(det.mean()),
        detection_under=float(np.mean(det < detection)),
        detection_low=float(np.quantile(det, 0.1)),
    )


def plan_cases_differ(
    noise: JudgeNoise,
    policy: Policy,
    reg: Regression,
    alpha: float,
    power: float,
    judge_checks: int,
    code_checks: int,
    sizes: range,
) -> SuitePlan | None:
    """The smallest size in `sizes` whose strictest gate within `alpha` (all attempts
    failing) detects the regression at least `power` of the time, each size exact."""
    for n in sizes:
        f = reg.failing(n)
        if f < 1 or f > n:
            continue
        healthy, regressed, calls = suite_pass_probabilities(
            noise, policy, n, f, judge_checks, code_checks
        )
        pmf_h, pmf_r = (grouped_pass_count_pmf(q, max_groups=q.size) for q in (healthy, regressed))
        found = plan_from_pmfs(n, f, policy, pmf_h, pmf_r, float(calls.sum()), alpha, power)
        if found is not None:
            if noise.case_spread <= 0:  # systematic cases alone: every suite is the same
                return found
            spread = suite_variation(
                noise, found, judge_checks, code_checks, false_alarm=alpha, detection=power
            )
            return replace(found, spread=spread)
    return None
