"""Planning a sequential gate: the smallest suite whose searched design meets both targets."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gatecal._analyses.plan._search import (
    _MAX_DEGREE,
    SuitePlan,
    _case_probabilities,
    _largest_pmf,
    _suite_pmfs,
)
from gatecal._analyses.policies.rules import Policy
from gatecal._analyses.sequential import designer
from gatecal._analyses.sequential.designs import (
    TARGET_SLACK,
    RatePmfs,
    SequentialBoundary,
    SharedBinomial,
)
from gatecal._model.arrays import Floats

if TYPE_CHECKING:
    from gatecal._analyses.policies.sequential import SequentialPolicy
    from gatecal._model.regression import Regression
    from gatecal._model.suite import JudgeNoise

__all__ = [
    "SEQUENTIAL_MAX_CASES",
    "SEQUENTIAL_MAX_CASES_LIMIT",
    "SequentialSuitePlan",
    "affinity_allows",
    "plan_sequential",
]


#: Without --max-cases a sequential plan tries suites up to this size: every size that the
#: screen lets through costs a boundary search (about 0.3 s at 50 cases and 5 looks; with
#: run correlation the screen lets most sizes through, 100 sizes took 27 s).
SEQUENTIAL_MAX_CASES = 100
#: The most --max-cases may ask of a sequential plan.
SEQUENTIAL_MAX_CASES_LIMIT = 5000


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialSuitePlan(SuitePlan):
    """The smallest suite at which a sequential gate's searched design meets the targets.

    The fields of :class:`SuitePlan` keep their meaning, with ``k_min`` the last look's
    ``pass_at_least`` on the passing cases summed over `looks` runs, ``false_alarm`` and
    ``detection`` the design's exact rates and ``judge_calls`` the expected judge calls
    of a healthy build until the gate stops (``expected_runs`` times the calls of one run).

    Attributes
    ----------
    looks : int
        Runs at most.
    boundaries : tuple of SequentialBoundary
    expected_runs, expected_runs_regressed : float
        E[runs until it stops] (ASN) of a healthy and of the regressed build.
    judge_calls_regressed : float
        Expected judge calls of the regressed build until the gate stops.
    stop_distribution, stop_distribution_regressed : tuple of float
        P(it stops after run j), j = 1..looks.
    judge_calls_per_run : int
        Judge calls of one run of the suite.
    gate : str
        The policy's spelling (``sprt-5``).
    """

    looks: int
    boundaries: tuple[SequentialBoundary, ...]
    expected_runs: float
    expected_runs_regressed: float
    judge_calls_regressed: float
    stop_distribution: tuple[float, ...]
    stop_distribution_regressed: tuple[float, ...]
    judge_calls_per_run: int
    gate: str

    @property
    def max_failures(self) -> int:
        """The last look as "at most F failing case runs" over the `looks` runs."""
        return self.looks * self.cases - self.k_min

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the plan's columns, then the sequential gate's own."""
        return {
            **SuitePlan.to_dict(self),
            "max_failures": self.max_failures,
            "gate": self.gate,
            "looks": self.looks,
            "boundaries": [b.to_dict() for b in self.boundaries],
            "expected_runs": {
                "healthy": self.expected_runs,
                "regressed": self.expected_runs_regressed,
            },
            "judge_calls_regressed": self.judge_calls_regressed,
            "stop_distribution": {
                "healthy": list(self.stop_distribution),
                "regressed": list(self.stop_distribution_regressed),
            },
            "judge_calls_per_run": self.judge_calls_per_run,
        }


#: The orders of the Chernoff affinities the screen compares (1/2 is Bhattacharyya's).
_ORDERS = tuple(i / 20 for i in range(1, 20))


def affinity_allows(
    healthy: Floats, regressed: Floats, looks: int, alpha: float, power: float
) -> bool:
    """A necessary condition for any test on up to `looks` independent runs (sequential or
    not) to have false alarm <= `alpha` and detection >= `power`: False only where none can.

    For an order t in (0, 1) the Chernoff affinity ``C_t(P, Q) = sum P^t Q^(1 - t)`` is
    multiplicative over independent runs and can only grow when the data are processed
    (it is one minus an f-divergence). The gate's verdict is a function of the runs, so
    ``C_t(verdict) >= C_t(healthy, regressed) ** looks``; and for ``fa <= alpha < power <=
    det`` the verdict pair (Bernoulli(fa), Bernoulli(det)) can be garbled into
    (Bernoulli(alpha), Bernoulli(power)), so ``C_t(verdict) <= alpha^t power^(1 - t) +
    (1 - alpha)^t (1 - power)^(1 - t)``. A run product above that at any order of
    :data:`_ORDERS` rules out every test. The targets carry the search's own slack and
    the comparison a margin far above the rounding of the sums.
    """
    if not alpha < power:
        return True
    a, p = alpha * (1 + TARGET_SLACK), power * (1 - TARGET_SLACK)
    for t in _ORDERS:
        verdict = a**t * p ** (1 - t) + (1 - a) ** t * (1 - p) ** (1 - t)
        runs = math.fsum((healthy**t * regressed ** (1 - t)).tolist()) ** looks
        if runs > verdict * (1 + 1e-9) + 1e-12:
            return False
    return True


def _shared_models(
    n: int, f: int, q_pass: Floats, q_fail: Floats, ws: Floats
) -> tuple[RatePmfs | SharedBinomial, RatePmfs | SharedBinomial]:
    """The healthy and the regressed build of `n` cases (`f` failing) whose runs share one
    rate: binomials at every node, or one pmf per node when a failing case can pass."""
    healthy = SharedBinomial(cases=n, trials=n, q=q_pass, weights=ws)
    if not q_fail.any():  # failing cases never pass: Bin(n - f, q) at every node
        return healthy, SharedBinomial(cases=n, trials=n - f, q=q_pass, weights=ws)
    from scipy import stats  # deferred: `import gatecal` stays light

    rows = np.zeros((ws.size, n + 1))
    for i in range(ws.size):
        rows[i] = np.convolve(
            stats.binom.pmf(np.arange(n - f + 1), n - f, q_pass[i]),
            stats.binom.pmf(np.arange(f + 1), f, q_fail[i]),
        )
    rows = np.clip(rows, 0.0, None)
    return healthy, RatePmfs(rows / rows.sum(axis=1, keepdims=True), ws)


def plan_sequential(
    policy: SequentialPolicy,
    noise: JudgeNoise,
    reg: Regression,
    *,
    false_alarm: float,
    detection: float,
    judge_checks: int,
    code_checks: int,
    start: int,
    top: int,
) -> SequentialSuitePlan | None:
    """The smallest size in ``start..top`` at which `policy`'s design, searched for the
    targets by :func:`gatecal.design_sequential` on one run's exact pass-count pmfs,
    meets both; None if none does. With run correlation and ``policy.runs == "shared"``
    (the default) the runs of one build share one rate: the design is searched and
    quoted on that model (:class:`gatecal._analyses.sequential.designs.SharedBinomial`),
    and the affinity screen, which needs independent runs, is skipped.

    Every size is tried in turn (feasibility is not monotone): first the rigorous screen
    :func:`affinity_allows`, then the exact boundary search. One run's pmf is the plan's
    own (a binomial at each Beta node of the run's flip rate with ``noise.icc``: mixed
    per run when each run draws its own rate, per build when they share it). Without run
    correlation and with a fixed number f of failing cases the search also stops once no
    larger suite can work: detection minus false alarm of any test on L runs is at most
    their total variation, at most L times one run's, at most ``L f max_k P(Bin(n - f, q)
    = k)``, which does not grow with n (see :func:`gatecal._analyses.plan.suite._never_after`).

    Parameters
    ----------
    policy : SequentialPolicy
        The sequential gate, with its design, looks and run model.
    noise : JudgeNoise
        The judge's error rates.
    reg : Regression
        The regression to detect.
    false_alarm : float
        The largest share of healthy builds the gate may fail.
    detection : float
        The smallest share of regressed builds the gate must fail.
    judge_checks, code_checks : int
        Judge and code checks per case.
    start, top : int
        The smallest and the largest suite to try.

    Returns
    -------
    SequentialSuitePlan or None
        The smallest suite that works, with its design and expected runs and judge calls;
        None when no size in ``start..top`` does.
    """
    looks = policy.looks
    shared = policy.runs == "shared" and noise.run_correlated
    # shared: the rule must be exact for `looks` runs of the largest suite
    degree = min(top * judge_checks * (looks if shared else 1), _MAX_DEGREE)
    q_pass, q_fail, calls, ws = _case_probabilities(
        noise, Policy(), judge_checks, code_checks, max(degree, 1)
    )
    if len(ws) == 1 and q_fail[0] >= q_pass[0]:  # the regression never shows
        return None
    per_run_case = float(ws @ calls)  # judge calls of one case in one run
    for n in range(start, top + 1):
        f = reg.failing(n)
        if f < 1 or f > n:
            continue
        if len(ws) == 1 and reg.count is not None and n > f:
            top_pmf = float(_largest_pmf(np.array([n - f]), float(q_pass[0]))[0])
            if looks * f * top_pmf * (1 + 1e-6) < detection - false_alarm:
                return None
        ph, pr = _suite_pmfs(n, f, q_pass, q_fail, ws)
        ph, pr = ph / math.fsum(ph.tolist()), pr / math.fsum(pr.tolist())
        # the screen multiplies one run's affinity over runs: independent runs only
        if not shared and not affinity_allows(ph, pr, looks, false_alarm, detection):
            continue
        k = np.arange(n + 1)
        if not float(k @ pr) < float(k @ ph):
            continue
        models = _shared_models(n, f, q_pass, q_fail, ws) if shared else (ph, pr)
        gate = designer(policy.design)(looks, *models, false_alarm=false_alarm, detection=detection)
        if not gate.meets_targets:
            continue
        per_run = round(n * per_run_case)
        last = gate.design.boundaries[-1]
        return SequentialSuitePlan(
            policy=dataclasses.replace(policy, false_alarm=false_alarm, detection=detection),
            cases=n,
            k_min=last.pass_at_least,
            failing=f,
            false_alarm=gate.false_alarm,
            detection=gate.detection,
            judge_calls=gate.healthy.expected_runs * n * per_run_case,
            looks=looks,
            boundaries=gate.design.boundaries,
            expected_runs=gate.healthy.expected_runs,
            expected_runs_regressed=gate.regressed.expected_runs,
            judge_calls_regressed=gate.regressed.expected_runs * n * per_run_case,
            stop_distribution=gate.healthy.stop_distribution,
            stop_distribution_regressed=gate.regressed.stop_distribution,
            judge_calls_per_run=per_run,
            gate=policy.text,
        )
    return None
