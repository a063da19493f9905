"""Planning: the smallest suite whose gate meets a false-alarm and a detection target."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._exact import beta_nodes
from gatecal._policies import Policy, _attempt
from gatecal._suite import JudgeNoise, Suite
from gatecal._validate import ParameterError, check_count, check_probability

__all__ = [
    "REGRESSION_HELP",
    "Regression",
    "SuitePlan",
    "SuitePlans",
    "cases_needed",
    "parse_regression",
    "plan_suite",
]

REGRESSION_HELP = (
    "a share of the cases written with a decimal point or a percent sign (0.10, 10%), "
    "rounded half up to whole cases; or a whole number of cases (3)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Regression:
    """How big the regression to detect is: a share of the cases, or a number of them.

    Attributes
    ----------
    text : str
        As the user wrote it.
    share : Fraction or None
        Exact share in (0, 1] (``"0.10"`` -> 1/10).
    count : int or None
        Number of failing cases, at least 1.
    """

    text: str
    share: Fraction | None = None
    count: int | None = None

    def failing(self, n: int) -> int:
        """Failing cases in a suite of `n`: ``floor(share * n + 1/2)``, or `count`."""
        if self.share is not None:
            return min(n, math.floor(self.share * n + Fraction(1, 2)))
        assert self.count is not None
        return self.count

    def describe(self) -> str:
        """In words."""
        if self.share is not None:
            return f"{float(self.share) * 100:g}% of the cases fail"
        return f"{self.count} case{'s' if self.count != 1 else ''} fail"


_SHARE = re.compile(r"^(\d*\.\d+|\d+\.\d*)$")
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)\s*%$")


def parse_regression(text: str) -> Regression:
    """Read ``--regression``: a share (``0.10``, ``10%``) or a whole number of cases (``3``).

    A decimal point or a percent sign means a share, which must lie in (0, 1]; a plain
    whole number means cases. Anything else is refused rather than guessed, e.g.
    ``3.0`` (a share above 1: write ``3`` for three cases) or ``0`` (no regression).
    """
    raw = str(text).strip()
    if raw.isascii() and raw.isdecimal():  # '²'.isdigit() is true, int('²') fails
        count = int(raw)
        if count < 1:
            raise ParameterError("regression", "must be at least 1 case or a share in (0, 1]", text)
        return Regression(text=raw, count=count)
    share: Fraction | None = None
    if _SHARE.match(raw):
        share = Fraction(raw)
    elif (match := _PERCENT.match(raw)) is not None:
        share = Fraction(match.group(1)) / 100
    if share is None:
        raise ParameterError("regression", f"must be {REGRESSION_HELP}", text)
    if not 0 < share <= 1:
        rule = "as a share must lie in (0, 1]; for a number of cases write a whole number"
        raise ParameterError("regression", rule, text)
    return Regression(text=raw, share=share)


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
        Exact, of this gate.
    judge_calls : float
        Expected judge calls per CI run of a healthy build.
    """

    policy: Policy
    cases: int
    k_min: int
    failing: int
    false_alarm: float
    detection: float
    judge_calls: float

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
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SuitePlans:
    """Plans for several policies against one set of targets.

    `plans` holds one entry per policy, in the order given: a :class:`SuitePlan`, or
    None when no suite up to `max_cases` meets the targets with that policy.
    """

    noise: JudgeNoise
    regression: Regression
    false_alarm: float
    detection: float
    judge_checks: int
    code_checks: int
    max_cases: int
    policies: tuple[Policy, ...]
    plans: tuple[SuitePlan | None, ...]

    def to_frame(self) -> Any:
        """One row per policy (cases and the rest empty where no plan was found)."""
        import pandas as pd  # deferred: `import gatecal` stays light

        rows = [
            p.to_dict() if p else {"policy": pol.describe(), "cases": None}
            for p, pol in zip(self.plans, self.policies, strict=True)
        ]
        return pd.DataFrame(rows)

    @property
    def recommended(self) -> SuitePlan | None:
        """The plan of the first policy (the plain one, unless told otherwise)."""
        return self.plans[0]

    @property
    def cheapest(self) -> SuitePlan | None:
        """The feasible plan with the fewest expected judge calls per CI run."""
        feasible = [p for p in self.plans if p is not None]
        return min(feasible, key=lambda p: p.judge_calls) if feasible else None


Floats = npt.NDArray[np.float64]
#: With run-level correlation, plans are exact while n x (judge calls per case) stays
#: below this (2,001 quadrature nodes); past it they are a very fine quadrature.
_MAX_DEGREE = 4000


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
    if noise.icc > 0:
        a, b = noise.beta_parameters()
        xs, ws = beta_nodes(a, b, degree=max_degree)
        noises = [noise.at(float(x)) for x in xs]
    else:
        ws, noises = np.ones(1), [noise]
    q_pass, q_fail, calls = [], [], []
    for nz in noises:
        pmf_h, calls_h = _attempt(one, "healthy", nz, policy)
        pmf_r, _ = _attempt(one, "regressed", nz, policy)
        q_pass.append(pmf_h[1])
        q_fail.append(pmf_r[1])
        calls.append(float(calls_h))
    return np.array(q_pass), np.array(q_fail), np.array(calls), ws


def plan_suite(
    *,
    noise: JudgeNoise,
    regression: Regression | str,
    false_alarm: float = 0.05,
    detection: float = 0.95,
    judge_checks: int = 2,
    code_checks: int = 1,
    policies: Sequence[Policy] | None = None,
    max_cases: int = 5000,
    min_cases: int = 1,
) -> SuitePlans:
    """The smallest number of cases, and its gate, meeting both targets, by exact search.

    Cases have the article's shape (`judge_checks` judge checks and `code_checks`
    code checks each); the regression makes ``regression.failing(n)`` cases fail a
    code check (a judge check if there are none). For every n from 1 up, the gate
    with the largest ``k_min`` whose false alarm is at most `false_alarm` is the most
    sensitive admissible one; the first n where it also detects the regression at
    least `detection` of the time is the plan. Every n is tried in turn: the
    targets are not monotone in n (189 cases can work where 190 do not), so a
    bisection would be wrong.

    Parameters
    ----------
    noise : JudgeNoise
        The judge's error rates (symmetric or asymmetric, unparseable share, icc).
    regression : Regression or str
        See :func:`parse_regression`.
    false_alarm, detection : float
        Targets: P(gate fails a healthy build) <= false_alarm, P(gate fails the
        regressed build) >= detection.
    policies : sequence of Policy, optional
        Default: one call per check; a majority of 3; a rerun of the suite.
    max_cases, min_cases : int
        Largest and smallest suite to try.
    """
    from scipy import stats  # deferred: `import gatecal` stays light

    reg = parse_regression(regression) if isinstance(regression, str) else regression
    alpha = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    j = check_count("judge_checks", judge_checks, low=0)
    c = check_count("code_checks", code_checks, low=0)
    if j + c == 0:
        raise ParameterError("judge_checks", "and `code_checks` can't both be 0", 0)
    top = check_count("max_cases", max_cases, low=1)
    bottom = check_count("min_cases", min_cases, low=1, high=top)
    chosen = (
        tuple(policies) if policies is not None else (Policy(), Policy(majority=3), Policy(rerun=1))
    )
    plans: list[SuitePlan | None] = []
    for policy in chosen:
        per_case = j * policy.majority * policy.repeat * (policy.rerun_failing + 1)
        degree = min(top * per_case, _MAX_DEGREE)
        q_pass, q_fail, calls, ws = _case_probabilities(noise, policy, j, c, degree)
        found: SuitePlan | None = None
        for n in range(bottom, top + 1):
            f = reg.failing(n)
            if f < 1 or f > n:
                continue
            k = np.arange(n + 1)
            pmf_h = ws @ stats.binom.pmf(k[None, :], n, q_pass[:, None])
            if not q_fail.any():  # failing cases can never pass: K ~ Bin(n - f, q)
                pmf_r_mix = ws @ stats.binom.pmf(k[None, :], n - f, q_pass[:, None])
            else:
                pmf_r = np.zeros((len(ws), n + 1))
                for i in range(len(ws)):
                    pmf_r[i] = np.convolve(
                        stats.binom.pmf(np.arange(n - f + 1), n - f, q_pass[i]),
                        stats.binom.pmf(np.arange(f + 1), f, q_fail[i]),
                    )
                pmf_r_mix = ws @ pmf_r
            single_h = np.concatenate(([0.0], np.cumsum(pmf_h)))[: n + 1]  # P(K < k), k=0..n
            single_r = np.concatenate(([0.0], np.cumsum(pmf_r_mix)))[: n + 1]
            fa = np.minimum(single_h, 1.0) ** (policy.rerun + 1)
            det = np.minimum(single_r, 1.0) ** (policy.rerun + 1)
            admissible = np.flatnonzero(fa <= alpha)
            k_best = int(admissible[-1])
            if det[k_best] >= power:
                attempts = sum(single_h[k_best] ** t for t in range(policy.rerun + 1))
                found = SuitePlan(
                    policy=policy,
                    cases=n,
                    k_min=k_best,
                    failing=f,
                    false_alarm=float(fa[k_best]),
                    detection=float(det[k_best]),
                    judge_calls=float(n * (ws @ calls) * attempts),
                )
                break
        plans.append(found)
    return SuitePlans(
        noise=noise,
        regression=reg,
        false_alarm=alpha,
        detection=power,
        judge_checks=j,
        code_checks=c,
        max_cases=top,
        policies=chosen,
        plans=tuple(plans),
    )


def cases_needed(
    flips: Sequence[float],
    regression: Regression | str,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.95,
    judge_checks: int = 2,
    code_checks: int = 1,
    policy: Policy | None = None,
    max_cases: int = 2000,
) -> list[SuitePlan | None]:
    """The plan (smallest suite and gate) at each flip rate, for one regression size."""
    chosen = Policy() if policy is None else policy
    return [
        plan_suite(
            noise=JudgeNoise.flip(p),
            regression=regression,
            false_alarm=false_alarm,
            detection=detection,
            judge_checks=judge_checks,
            code_checks=code_checks,
            policies=[chosen],
            max_cases=max_cases,
        ).plans[0]
        for p in flips
    ]
