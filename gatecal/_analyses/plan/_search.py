"""What every plan searches with: the plan result types and the pmfs of one run of a suite
(a binomial mixture over the run's flip rate), shared by the fixed and the sequential plans."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from gatecal._analyses.policies.rules import Policy, attempt_pmf, noise_fields
from gatecal._common.contracts import json_header
from gatecal._common.display import Displayed
from gatecal._common.quadrature import beta_rule
from gatecal._common.tables import format_probability
from gatecal._model.arrays import Floats
from gatecal._model.regression import Regression
from gatecal._model.suite import JudgeNoise, Suite
from gatecal._model.targets import Targets

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gatecal._analyses.plan.baseline import BaselineRuns


__all__ = [
    "PLAN_MAX_CASES",
    "SuitePlan",
    "SuitePlans",
    "SuiteSpread",
]

#: The largest suite a plan tries by default (recommend's "cases needed", plan --baseline-runs).
PLAN_MAX_CASES = 500


@dataclass(frozen=True, slots=True, kw_only=True)
class SuitePlan:
    """The smallest suite that meets the targets under one policy.

    Attributes
    ----------
    policy : Policy
        How the judge is asked.
    cases, k_min : int
        Suite size, and passing cases the gate needs (at most ``cases - k_min`` fail).
    failing : int
        Cases failing in the regression at this size.
    false_alarm, detection : float
        Exact, of this gate (when cases spread: averaged over suites drawn from the spread).
    judge_calls : float
        Expected judge calls per CI run of a healthy build.
    spread : SuiteSpread or None
        When cases spread: how much one suite drawn from the spread varies around the
        average (:func:`gatecal._analyses.plan.cases.suite_variation`).
    """

    policy: Policy
    cases: int
    k_min: int
    failing: int
    false_alarm: float
    detection: float
    judge_calls: float
    spread: SuiteSpread | None = None

    @property
    def max_failures(self) -> int:
        """The gate as "at most F failing cases"."""
        return self.cases - self.k_min

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "policy": self.policy.describe(),
            "cases": self.cases,
            "k_min": self.k_min,
            "max_failures": self.max_failures,
            "failing": self.failing,
            "false_alarm": self.false_alarm,
            "detection": self.detection,
            "judge_calls": self.judge_calls,
            **({"suite_spread": self.spread.to_dict()} if self.spread is not None else {}),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SuiteSpread:
    """How one suite drawn from a case spread fares against the plan's targets.

    Attributes
    ----------
    suites, seed : int
        Suites drawn, and the seed they were drawn with.
    false_alarm_mean, detection_mean : float
        The plan's gate averaged over the drawn suites (a Monte Carlo check of the exact
        average the plan quotes).
    false_alarm_over : float
        Share of suites whose own false alarm exceeds the target.
    false_alarm_high : float
        The 90th percentile of the suites' false alarms.
    detection_under : float
        Share of suites whose own detection falls short of the target.
    detection_low : float
        The 10th percentile of the suites' detections.
    """

    suites: int
    seed: int
    false_alarm_mean: float
    false_alarm_over: float
    false_alarm_high: float
    detection_mean: float
    detection_under: float
    detection_low: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "suites": self.suites,
            "seed": self.seed,
            "false_alarm_mean": self.false_alarm_mean,
            "false_alarm_over_target": self.false_alarm_over,
            "false_alarm_p90": self.false_alarm_high,
            "detection_mean": self.detection_mean,
            "detection_under_target": self.detection_under,
            "detection_p10": self.detection_low,
        }


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class SuitePlans(Displayed):
    """Plans for several policies against one set of targets.

    `plans` holds one entry per policy, in the order given: a :class:`SuitePlan`, or
    None when no suite up to `max_cases` meets the `targets` (:class:`Targets`) with that
    policy.
    """

    noise: JudgeNoise
    regression: Regression
    targets: Targets
    judge_checks: int
    code_checks: int
    max_cases: int | None
    policies: tuple[Policy, ...]
    plans: tuple[SuitePlan | None, ...]
    #: per policy, the largest size a sequential policy's search tried (None: `max_cases`)
    limits: tuple[int | None, ...] = ()

    def limit(self, index: int) -> int | None:
        """The largest suite tried for the policy at `index` (None: no cap was reached)."""
        found = self.limits[index] if index < len(self.limits) else None
        return self.max_cases if found is None else found

    _renderer: ClassVar[str] = "gatecal._render.plans"

    def summary(self) -> str:
        """The first policy's plan (its size, gate and figures), and how many were planned."""
        plan = self.recommended
        if plan is None:
            return f"no suite meets both targets ({self.regression.describe()})"
        policies = f"{len(self.plans)} polic{'y' if len(self.plans) == 1 else 'ies'}"
        return (
            f"{plan.cases} cases, gate at least {plan.k_min} pass (false alarm "
            f"{format_probability(plan.false_alarm)}, detection "
            f"{format_probability(plan.detection)}); {policies} planned"
        )

    def _alternatives(self) -> list[dict[str, Any]]:
        return [
            p.to_dict() if p else {"policy": pol.describe(), "cases": None}
            for p, pol in zip(self.plans, self.policies, strict=True)
        ]

    def to_frame(self) -> Any:
        """One row per policy (cases and the rest empty where no plan was found)."""
        import pandas as pd  # deferred: `import gatecal` stays light

        return pd.DataFrame(self._alternatives())

    def to_dict(self, *, baseline: Sequence[BaselineRuns | None] | None = None) -> dict[str, Any]:
        """The JSON contract ``gatecal.plan``, its header first: the first policy's plan,
        the targets and the noise, every policy's plan, and, given `baseline`
        (:func:`gatecal.baseline_runs`), the known-good runs each plan's gate needs."""
        best = self.recommended
        empty = {"cases": None, "k_min": None, "false_alarm": None, "detection": None}
        data: dict[str, Any] = {
            **json_header("plan"),
            **(best.to_dict() if best else empty),
            "feasible": best is not None,
            "targets": self.targets.to_dict(),
            **noise_fields(self.noise),
            "regression": self.regression.text,
            "judge_checks": self.judge_checks,
            "code_checks": self.code_checks,
            "max_cases": self.max_cases,
            "alternatives": self._alternatives(),
        }
        if baseline is not None:
            data["baseline_runs"] = [None if b is None else b.to_dict() for b in baseline]
        return data

    @property
    def recommended(self) -> SuitePlan | None:
        """The plan of the first policy (the plain one, unless told otherwise)."""
        return self.plans[0]

    @property
    def cheapest(self) -> SuitePlan | None:
        """The feasible plan with the fewest expected judge calls per CI run."""
        feasible = [p for p in self.plans if p is not None]
        return min(feasible, key=lambda p: p.judge_calls) if feasible else None


#: With run-level correlation, plans are exact while n x (judge calls per case) stays
#: below this (2,001 quadrature nodes); past it they are a very fine quadrature (at 5,000
#: cases of 2 judge calls, 2,001 and 4,001 nodes agree to 3e-15 relative).
_MAX_DEGREE = 4000


@functools.lru_cache(maxsize=8)
def _beta_mixture_rule(a: float, b: float, nodes: int) -> tuple[Floats, Floats]:
    """The Gauss rule of :func:`gatecal._engines.exact.beta_rule` (the Jacobi matrix), kept
    for the policies of one plan, which share it. Not scipy's ``roots_jacobi``: its
    weights are off by up to 1e-7 relative at a Beta ``a`` near 0.08 (a small flip rate
    at a large icc), which moved plans' false alarms by 9e-7 relative."""
    xs, ws = beta_rule(a, b, nodes)
    xs.setflags(write=False)
    ws.setflags(write=False)
    return xs, ws


class _RulesBySize:
    """The mixture of :func:`_case_probabilities` with a rule fitted to each suite size.

    A suite of n cases needs a rule exact for degree n x (judge calls per case) in the
    run's rate; sizes share rules by that degree rounded up to a power of two (at most
    :data:`_MAX_DEGREE`). A short rule is also the more accurate one in floating point:
    the 2,001-node rule's smallest weights carry an absolute rounding of ~1e-16, which is
    1e-12 relative in a 30-case suite's tails at a Beta ``a`` of 0.001, and far more in
    tails below 1e-30 at an icc of 0.001; the rule of the suite's own degree is exact to
    a few 1e-14 there.
    """

    def __init__(self, noise: JudgeNoise, policy: Policy, j: int, c: int, per_case: int):
        self._args = (noise, policy, j, c)
        self._per_case = per_case
        self._rules: dict[int, tuple[Floats, Floats, Floats, Floats]] = {}

    def __call__(self, n: int) -> tuple[Floats, Floats, Floats, Floats]:
        need = n * self._per_case if self._args[0].run_correlated else 0
        degree = min(1 << (need - 1).bit_length(), _MAX_DEGREE) if need > 0 else 0
        if degree not in self._rules:
            self._rules[degree] = _case_probabilities(*self._args, degree)
        return self._rules[degree]


def _case_probabilities(
    noise: JudgeNoise, policy: Policy, judge_checks: int, code_checks: int, max_degree: int
) -> tuple[Floats, Floats, Floats, Floats]:
    """Per node of the run-level flip rate: P(a healthy case passes), P(a failing case
    passes), expected judge calls per healthy case, and the node weights.

    Cases are independent given the run's rate, so a suite of n cases is a binomial
    mixture over the nodes (one node of weight 1 without correlation). With
    correlation, the rule is exact while the pass count's degree in the rate,
    n x (judge calls per case), is at most `max_degree`.
    """
    one = Suite.uniform(cases=1, judge_checks=judge_checks, code_checks=code_checks, failing=1)
    if noise.run_correlated:
        a, b = noise.beta_parameters()
        xs, ws = _beta_mixture_rule(a, b, max_degree // 2 + 1)
        noises = [noise.at(float(x)) for x in xs]
    else:
        ws, noises = np.ones(1), [noise]
    q_pass, q_fail, calls = [], [], []
    for nz in noises:
        pmf_h, calls_h = attempt_pmf(one, "healthy", nz, policy)
        pmf_r, _ = attempt_pmf(one, "regressed", nz, policy)
        q_pass.append(pmf_h[1])
        q_fail.append(pmf_r[1])
        calls.append(float(calls_h))
    return np.array(q_pass), np.array(q_fail), np.array(calls), ws


def _suite_pmfs(
    n: int, f: int, q_pass: Floats, q_fail: Floats, ws: Floats
) -> tuple[Floats, Floats]:
    """One attempt's pass-count pmfs of `n` cases, healthy and with `f` of them failing:
    binomials (convolved for the regressed build) mixed over the nodes' weights `ws`."""
    from scipy import stats  # deferred: `import gatecal` stays light

    k = np.arange(n + 1)
    pmf_h = ws @ stats.binom.pmf(k[None, :], n, q_pass[:, None])
    if not q_fail.any():  # failing cases can never pass: K ~ Bin(n - f, q)
        return pmf_h, ws @ stats.binom.pmf(k[None, :], n - f, q_pass[:, None])
    pmf_r = np.zeros((len(ws), n + 1))
    for i in range(len(ws)):
        pmf_r[i] = np.convolve(
            stats.binom.pmf(np.arange(n - f + 1), n - f, q_pass[i]),
            stats.binom.pmf(np.arange(f + 1), f, q_fail[i]),
        )
    return pmf_h, ws @ pmf_r


def plan_from_pmfs(
    n: int,
    f: int,
    policy: Policy,
    pmf_h: Floats,
    pmf_r: Floats,
    calls: float,
    alpha: float,
    power: float,
) -> SuitePlan | None:
    """The plan at `n` cases (`f` of them failing in the regression), or None: from one
    attempt's pass-count pmf (0..n) of the healthy and of the regressed build, a CI run
    failing only when all ``policy.rerun + 1`` attempts do; `calls` is one attempt's
    expected judge calls of a healthy build."""
    from gatecal._model.gates import strictest_within

    below_h = np.concatenate(([0.0], np.cumsum(pmf_h)))[: n + 1]  # P(K < k), k=0..n
    below_r = np.concatenate(([0.0], np.cumsum(pmf_r)))[: n + 1]
    single_h, single_r = np.minimum(below_h, 1.0), np.minimum(below_r, 1.0)
    fa = single_h ** (policy.rerun + 1)
    det = single_r ** (policy.rerun + 1)
    k_best = strictest_within(fa, alpha)  # type: ignore[arg-type]  # an ndarray
    if det[k_best] < power:
        return None
    attempts = sum(below_h[k_best] ** t for t in range(policy.rerun + 1))
    return SuitePlan(
        policy=policy,
        cases=n,
        k_min=k_best,
        failing=f,
        false_alarm=float(fa[k_best]),
        detection=float(det[k_best]),
        judge_calls=float(calls * attempts),
    )


def _largest_pmf(m: npt.NDArray[np.int64], q: float) -> Floats:
    """``max_k P(Bin(m, q) = k)`` for each m, q in (0, 1), from log-gamma (at the mode
    floor((m + 1) q) or the count below it)."""
    from scipy import special  # deferred: `import gatecal` stays light

    count = m.astype(np.float64)
    mode = np.minimum(count, np.floor((count + 1.0) * q))
    top = np.zeros(count.size)
    for k in (np.maximum(mode - 1.0, 0.0), mode):
        log_pmf = (
            special.gammaln(count + 1.0)
            - special.gammaln(k + 1.0)
            - special.gammaln(count - k + 1.0)
            + k * math.log(q)
            + (count - k) * math.log1p(-q)
        )
        top = np.maximum(top, np.exp(log_pmf))
    return top
