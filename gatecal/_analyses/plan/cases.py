"""Plans for a suite whose cases differ (``noise.case_spread``, ``noise.systematic``).

A suite of n cases then has n rates of its own (:func:`gatecal._model.suite.case_flip_rates`),
fixed in every run: the pass count of one attempt is a Poisson-binomial, not a binomial,
and the rates change with n, so the binomial screen of :mod:`gatecal._analyses.plan.suite`
does not apply. Each size is computed exactly in turn, from its distinct rates (at most
65: the Beta's strata and the systematic cases), up to :data:`CASES_DIFFER_MAX_CASES`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from gatecal._analyses.plan._search import SuitePlan, plan_from_pmfs
from gatecal._analyses.policies.rules import Policy, _case_try
from gatecal._engines.exact import grouped_pass_count_pmf
from gatecal._model.regression import Regression
from gatecal._model.suite import JudgeNoise, Suite, case_flip_rates, systematic_count

__all__ = [
    "CASES_DIFFER_LIMIT",
    "CASES_DIFFER_MAX_CASES",
    "plan_cases_differ",
    "suite_pass_probabilities",
]

Floats = npt.NDArray[np.float64]

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
    included). Computed once per distinct rate."""
    rates = case_flip_rates(cases, noise.fnr, noise.case_spread, noise.systematic)
    stuck = np.zeros(cases, dtype=bool)
    stuck[cases - systematic_count(cases, noise.systematic) :] = True
    keys = np.stack([rates, stuck.astype(np.float64)])
    distinct, inverse = np.unique(keys, axis=1, return_inverse=True)
    inverse = inverse.reshape(-1)
    g = distinct.shape[1]
    symmetric = noise.fnr == noise.fpr
    out = []
    for build in ("healthy", "regressed"):  # one proxy case per distinct rate
        proxy = Suite.uniform(
            cases=g,
            judge_checks=judge_checks,
            code_checks=code_checks,
            failing=g if build == "regressed" else 0,
        )
        per_case = {
            name: (
                float(rate),
                0.0 if is_stuck else (float(rate) if symmetric else noise.fpr),
            )
            for name, rate, is_stuck in zip(proxy.cases, distinct[0], distinct[1], strict=True)
        }
        plain = replace(noise, case_spread=0.0, systematic=0.0, per_case=per_case)
        q, per_try = _case_try(proxy, build, plain, policy)
        fail = 1.0 - q
        tries = sum(fail**t for t in range(policy.rerun_failing + 1))
        out.append((1.0 - fail ** (policy.rerun_failing + 1), per_try * tries))
    (q_h, calls_h), (q_r, _) = out
    healthy, regressed = q_h[inverse], q_h[inverse].copy()
    regressed[:failing] = q_r[inverse[:failing]]
    return healthy, regressed, calls_h[inverse]


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
            return found
    return None
