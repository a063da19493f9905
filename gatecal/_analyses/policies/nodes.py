"""Exact policy rates of big suites under run-level correlation: every node at once, by groups.

:func:`gatecal.policy_rates` with ``noise.icc > 0`` integrates over the run's flip rate
with Gauss-Jacobi nodes (exact: the pass count's probabilities are polynomials in the
rate). Its per-node path computes one attempt per node, in Python, and so costs nodes x
cases, with nodes growing with the cases too. Above :data:`~gatecal._engines.exact.
GROUP_ABOVE` cases this module does the same sums for all nodes at once: icc admits no
per-case or per-check rates, so cases with the same true verdicts share one pass
probability at every node; a build whose passes come from one such group (the healthy
build, or a regression that fails a code check) needs only that group's binomial tails
at each node (``scipy.special.bdtr``/``bdtrc``, a few ulps relative), and several groups
are multiplied as binomial pmfs by direct convolution, as the exact engine's
``_mixture_by_groups`` does.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gatecal._engines.exact import group_binomial_mixture
from gatecal._model.arrays import Floats
from gatecal._model.suite import JudgeNoise, Suite

if TYPE_CHECKING:
    from gatecal._analyses.policies.rules import Policy

__all__ = ["node_tails"]


def _group_rates(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy, xs: Floats
) -> tuple[npt.NDArray[np.int64], Floats, Floats]:
    """Group sizes, each group's P(a case passes the attempt) at every node (nodes,
    groups), and the expected judge calls of one attempt at every node: the formulas
    of policies.attempt_pmf, elementwise over nodes."""
    from scipy import stats  # deferred: `import gatecal` stays light

    from gatecal._analyses.policies.rules import majority_pass

    truth = suite.truth_matrix(build)
    rows, sizes = np.unique(truth, axis=0, return_counts=True)
    judge = suite.judge_mask()
    code_ok = rows[:, ~judge].all(axis=1)
    keep = 1.0 - noise.unparseable
    right = rows[:, judge][None, :, :]  # (1, groups, judge checks)
    x = xs[:, None, None]
    first = np.where(right, keep * (1.0 - x), keep * x)  # (nodes, groups, judge checks)
    if policy.confirm:
        check_pass = first + (1.0 - first) * majority_pass(first, policy.confirm)
    else:
        check_pass = majority_pass(first, policy.majority, tie=policy.tie, icc=policy.call_icc)
    q = np.prod(check_pass, axis=2) * np.asarray(code_ok)[None, :]
    if policy.repeat > 1:
        q = stats.binom.sf(policy.need - 1, policy.repeat, q)
    fail = 1.0 - q
    tries = sum(fail**t for t in range(policy.rerun_failing + 1))
    q_final = 1.0 - fail ** (policy.rerun_failing + 1)
    if policy.confirm:
        per_case = policy.repeat * (1.0 + policy.confirm * (1.0 - first)).sum(axis=2)
    else:
        per_case = np.full(q.shape, float(int(judge.sum()) * policy.majority * policy.repeat))
    calls = (per_case * tries) @ sizes.astype(np.float64)
    return sizes.astype(np.int64), np.asarray(q_final), np.asarray(calls)


def node_tails(
    suite: Suite,
    build: str,
    noise: JudgeNoise,
    policy: Policy,
    xs: Floats,
    ws: Floats,
    k_mins: list[int],
) -> tuple[list[tuple[float, float]], float]:
    """``(P(K < k), P(K >= k))`` of one attempt for each k in `k_mins`, integrated over the
    nodes `xs` with weights `ws`, and the expected judge calls of one attempt."""
    from scipy import special  # deferred: `import gatecal` stays light

    sizes, q, calls = _group_rates(suite, build, noise, policy, xs)
    calls_one = float(ws @ calls)
    active = [g for g in range(sizes.size) if np.any(q[:, g] > 0.0)]  # the others never pass
    if len(active) <= 1:
        out = []
        size = int(sizes[active[0]]) if active else 0
        qa = q[:, active[0]] if active else np.zeros(xs.size)
        for k in k_mins:
            if k <= 0:
                out.append((0.0, 1.0))
            elif k > size:
                out.append((1.0, 0.0))
            else:
                lower = float(ws @ special.bdtr(k - 1, size, qa))
                upper = float(ws @ special.bdtrc(k - 1, size, qa))
                out.append((lower, upper))
        return out, calls_one
    pmf = group_binomial_mixture(sizes[active], q[:, active], ws, suite.n_cases)
    return [(math.fsum(pmf[:k]), math.fsum(pmf[k:])) for k in k_mins], calls_one
