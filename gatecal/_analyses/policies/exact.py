"""A policy's exact false alarm, detection and judge calls: the switch between the
ways of computing them (one attempt, nodes of the run's rate, fresh rates per rerun round)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from gatecal._analyses.policies.nodes import node_tails
from gatecal._analyses.policies.rules import (
    Policy,
    PolicyRates,
    PolicyRow,
    _case_try,
    attempt_pmf,
    refuse_sequential,
    refuse_spread_across_runs,
)
from gatecal._common.docstrings import shared_docs
from gatecal._common.quadrature import beta_nodes, beta_rule
from gatecal._common.validate import ParameterError
from gatecal._engines.exact import GROUP_ABOVE, grouped_pass_count_pmf, pass_count_pmfs
from gatecal._model.arrays import Floats
from gatecal._model.gates import GateLike, as_gates
from gatecal._model.suite import BUILDS, JudgeNoise, Suite

__all__ = ["policy_rates"]


#: The most node combinations (nodes ** tries) times cases that a fresh rate per rerun of
#: failing cases is computed over: about ten seconds.
FRESH_RETRY_WORK = 50_000_000


def _fresh_retries(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy
) -> tuple[Floats, float]:
    """Pass-count pmf and expected judge calls of one attempt whose rerun rounds of failing
    cases each draw a fresh run rate (``retry_rate='fresh'``, ``noise.icc > 0``).

    Given the rates x_1..x_T of the T = 1 + rerun_failing rounds, cases are independent
    and case i fails every try with probability ``prod_t (1 - q_i(x_t))``; it is tried in
    round t if it failed rounds 1..t-1. Each P(K = k | x) is a polynomial of degree at
    most d = (judge verdicts per try of the suite) x (1 + confirm) in each x_t, so the
    product of T Gauss rules of d // 2 + 1 nodes (Jacobi matrix,
    :func:`gatecal._common.quadrature.beta_rule`) integrates it exactly.
    """
    import itertools

    a, b = noise.beta_parameters()
    n, tries = suite.n_cases, policy.rerun_failing + 1
    verdicts = int(suite.judge_mask().sum()) * n * policy.majority * policy.repeat
    nodes = verdicts * (1 + policy.confirm) // 2 + 1
    if nodes**tries * n > FRESH_RETRY_WORK:
        rule = (
            "with a fresh run rate per rerun of failing cases under icc is computed over "
            f"{nodes}^{tries} rate combinations x {n} cases, at most {FRESH_RETRY_WORK:,}: "
            "fewer reruns or cases, or `retry_rate` shared"
        )
        raise ParameterError("policies", rule, policy.describe())
    xs, ws = beta_rule(a, b, nodes)
    per_node = [_case_try(suite, build, noise.at(float(x)), policy, confirm=True) for x in xs]
    fails = np.stack([1.0 - q for q, _ in per_node])  # (nodes, cases)
    costs = np.stack([c for _, c in per_node])
    pmf = np.zeros(n + 1)
    calls = 0.0
    for combo in itertools.product(range(xs.size), repeat=tries - 1):  # the last: all at once
        weight = float(np.prod(ws[list(combo)]))
        reached = np.ones(n)  # P(case i is tried in this round | the rates so far)
        expected = np.zeros(n)
        for t in combo:
            expected += reached * costs[t]
            reached = reached * fails[t]
        last_expected = expected[None, :] + reached[None, :] * costs  # (nodes, cases)
        q_final = 1.0 - reached[None, :] * fails
        if n > GROUP_ABOVE:
            rows = np.stack([grouped_pass_count_pmf(q) for q in q_final])
        else:
            rows = pass_count_pmfs(q_final)
        pmf += weight * (ws @ rows)
        calls += weight * float(ws @ last_expected.sum(axis=1))
    return np.clip(pmf, 0.0, None), calls


@shared_docs
def policy_rates(
    suite: Suite,
    noise: JudgeNoise,
    gates: GateLike | Sequence[GateLike],
    policy: Policy | None = None,
) -> PolicyRates:
    """Exact false alarm, detection and expected judge calls of each gate under `policy`.

    A majority vote and repeated cases change each check's or case's pass
    probability; rerunning failing cases gives a case up to ``1 + rerun_failing``
    tries (with ``noise.icc`` they share the run's drawn rate, the conservative model,
    unless ``policy.retry_rate`` is ``'fresh'``: then each rerun round draws its own, and
    the mixture is over the rates of every round, a product Gauss rule exact for the
    pmf's degree in each); rerunning the suite fails the build only if every attempt
    fails, each attempt an independent run (with ``noise.icc`` each attempt draws its own
    rate). When cases spread (``noise.case_spread``) every rate is the average over suites
    drawn from the spread (:func:`~gatecal._analyses.policies.rules.case_outcomes`); a rerun
    of the whole suite is then refused (its attempts share one suite).

    Parameters
    ----------
    %(suite_noise)s
    gates : str, Gate or sequence of them
        The gates to evaluate, as :func:`as_gates` reads them.
    policy : Policy, optional
        How the CI run asks the judge and retries; default one call per check, no retry.
        Not a sequential policy (see :func:`sequential_gate`).

    Returns
    -------
    PolicyRates
        One row per build and gate: the exact failure probability, with one attempt and
        with the policy's reruns, and the expected judge calls.

    Raises
    ------
    ParameterError
        If `policy` is sequential or a gate does not parse.

    Examples
    --------
    >>> import gatecal
    >>> suite = gatecal.Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=3)
    >>> noise = gatecal.JudgeNoise(fnr=0.03, fpr=0.03)
    >>> rates = gatecal.policy_rates(suite, noise, "all", gatecal.parse_policy("majority-3"))
    >>> for row in rates.rows:
    ...     print(row.build, row.k_min, f"{row.failure_probability:.4f}", row.judge_calls)
    healthy 12 0.0616 72.0
    regressed 12 1.0000 72.0
    """
    policy = Policy() if policy is None else policy
    refuse_sequential(policy)
    refuse_spread_across_runs(noise, policy)
    rules = as_gates(gates)
    n = suite.n_cases
    rows = []
    if noise.run_correlated:  # one rule for both builds
        a, b = noise.beta_parameters()
        verdicts = int(suite.judge_mask().sum()) * n * policy.majority * policy.repeat
        degree = verdicts * (policy.rerun_failing + 1) * (1 + policy.confirm)
        xs, ws = beta_nodes(a, b, degree)
    for build in BUILDS:
        tails: list[tuple[float, float]] | None = None
        if noise.run_correlated and policy.rerun_failing and policy.retry_rate == "fresh":
            pmf, calls_one = _fresh_retries(suite, build, noise, policy)
        elif noise.run_correlated:
            if n > GROUP_ABOVE:  # every node at once, by groups of alike cases
                k_mins = [gate.k_min(n) for gate in rules]
                tails, calls_one = node_tails(suite, build, noise, policy, xs, ws, k_mins)
            else:
                parts = [
                    attempt_pmf(suite, build, noise.at(float(x)), policy, confirm=True) for x in xs
                ]
                pmf = np.clip(sum(w * p for w, (p, _) in zip(ws, parts, strict=True)), 0.0, None)
                calls_one = float(sum(w * c for w, (_, c) in zip(ws, parts, strict=True)))
        else:
            pmf, calls = attempt_pmf(suite, build, noise, policy, confirm=True)
            calls_one = float(calls)
        for index, gate in enumerate(rules):
            k = gate.k_min(n)
            if tails is not None:
                lower, upper = tails[index]
            else:
                lower, upper = math.fsum(pmf[:k]), math.fsum(pmf[k:])
            single = lower / (lower + upper)
            attempts = sum(single**t for t in range(policy.rerun + 1))
            rows.append(
                PolicyRow(
                    build=build,
                    gate=gate.text,
                    rule=gate.describe(),
                    k_min=k,
                    failure_probability=single ** (policy.rerun + 1),
                    single_run_failure_probability=single,
                    judge_calls=calls_one * attempts,
                )
            )
    return PolicyRates(policy=policy, noise=noise, rows=tuple(rows))
