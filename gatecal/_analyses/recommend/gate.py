"""Recommend a gate from measured repeated runs: the noise, its spread, and the threshold."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from gatecal._analyses.noise.bounds import GATE_LEVEL, NoiseBounds, noise_bounds
from gatecal._analyses.noise.casegate import (
    CaseGate,
)
from gatecal._analyses.noise.cases import CaseSpread
from gatecal._analyses.noise.measured import MeasuredNoise
from gatecal._analyses.noise.overdispersion import (
    ICC_MAX,
    Overdispersion,
    fit_overdispersion,
)
from gatecal._analyses.plan._search import PLAN_MAX_CASES, SuitePlan, SuitePlans
from gatecal._analyses.policies.rules import Policy
from gatecal._analyses.recommend.choice import (
    ChosenGate,
    MoreRuns,
    case_aware,
    choose,
)
from gatecal._analyses.recommend.runs import (
    _assumed_regression,
    _healthy_outcomes,
    _measured_regression,
    _more_runs,
)
from gatecal._common.bulk import collector_paused
from gatecal._common.contracts import json_header
from gatecal._common.display import Displayed
from gatecal._common.docstrings import shared_docs
from gatecal._common.intervals import CI_METHODS, RateEstimate, proportion_interval
from gatecal._common.tables import format_probability
from gatecal._common.validate import ParameterError, check_instance, check_probability
from gatecal._engines.exact import beta_binomial_pmf
from gatecal._model.arrays import Floats, Ints
from gatecal._model.gates import strictest_within
from gatecal._model.regression import Regression, RegressionLike
from gatecal._model.suite import JudgeNoise, beta_shape
from gatecal._model.targets import Targets
from gatecal.readers._data import RunsData

__all__ = [
    "CI_METHODS",
    "GATE_LEVEL",
    "ICC_MAX",
    "SIGNIFICANCE",
    "CaseGate",
    "CaseNoise",
    "CaseRates",
    "CaseSpread",
    "MeasuredNoise",
    "NoiseBounds",
    "Overdispersion",
    "RateEstimate",
    "Recommendation",
    "fit_overdispersion",
    "noise_bounds",
    "proportion_interval",
    "recommend_gate",
    "recommend_with_rates",
    "would_work",
]

#: The level of the test of rho = 0 under which recommend calls the runs ``correlated``.
SIGNIFICANCE = 0.05


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseNoise:
    """One case's failures across the known-good runs."""

    case: str
    rate: RateEstimate


@dataclass(frozen=True, slots=True)
class CaseRates:
    """Each case's failures in the known-good runs as an interval: case ``i`` of `cases`
    (short names, the outcome's columns) has interval ``rates[kind[i]]``, one interval
    per distinct (failures, runs observed) pair, of which a big suite has few."""

    cases: list[str]
    kind: list[int]
    rates: list[RateEstimate]

    def rate(self, i: int) -> RateEstimate:
        """Case ``i``'s interval."""
        return self.rates[self.kind[i]]

    def noises(self) -> list[CaseNoise]:
        """Every case's record, by rate, highest first, then by name."""
        n = len(self.cases)
        # a stable sort by rate of the cases sorted by name
        by_name = np.asarray(sorted(range(n), key=self.cases.__getitem__), dtype=np.int64)
        kinds = np.asarray(self.kind, dtype=np.int64)[by_name]
        estimates = np.array([r.estimate for r in self.rates], dtype=np.float64)[kinds]
        at = np.argsort(-estimates, kind="stable")
        cases, rates = self.cases, self.rates
        return _case_noises(
            [cases[i] for i in by_name[at].tolist()], [rates[k] for k in kinds[at].tolist()]
        )


def _case_rates(
    cases: list[str], failures: Ints, observed: Ints, level: float, method: str
) -> CaseRates:
    """The intervals of each case's `failures` of the runs it was `observed` in: one per
    distinct pair (no tuple per case: 10^5 of them cost the cycle collector's passes)."""
    key = failures.astype(np.int64) * (int(observed.max(initial=0)) + 1) + observed
    distinct, kind = np.unique(key, return_inverse=True)
    first = np.zeros(distinct.size, dtype=np.int64)
    first[kind] = np.arange(key.size)  # a case of each pair (any: they share it)
    rates = [
        proportion_interval(float(failures[i]), float(observed[i]), level, method)
        for i in first.tolist()
    ]
    return CaseRates(cases, kind.ravel().tolist(), rates)


def _case_noises(cases: list[str], rates: list[RateEstimate]) -> list[CaseNoise]:
    """``CaseNoise(case=c, rate=r)`` for each pair: the same objects, each built with
    two stores to its slots instead of the frozen dataclass's ``__init__`` (whose
    ``object.__setattr__`` calls took 0.16 s for a suite of 10^5 cases; this, 0.09 s),
    the cycle collector paused meanwhile (0.03 s)."""
    slots = vars(CaseNoise)  # the slots' descriptors
    new, case, rate = object.__new__, slots["case"].__set__, slots["rate"].__set__
    out = []
    with collector_paused():
        for c, r in zip(cases, rates, strict=True):
            one = new(CaseNoise)
            case(one, c)
            rate(one, r)
            out.append(one)
    return out


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Recommendation(Displayed):
    """What ``gatecal recommend`` measured and recommends; see :func:`recommend_gate`.

    ``table[k]`` holds ``(false_alarm, detection)`` of the gate "at least k of n cases
    pass": each gate's one-sided `gate_level` profile-likelihood bound (the false alarm
    from above, the detection from below; see :class:`NoiseBounds`). `within_budget` is
    the strictest gate whose false alarm is within the budget (the largest such k_min,
    at least 1: a gate that can fail), or None when not even "at least 1 passes" is;
    `recommended` is that gate when its detection also meets the target, else None.
    `measured` is the noise the known-good runs show (:class:`MeasuredNoise`): the pooled
    rate, the (rate, icc) region the gates allow for, and the run-to-run correlation.
    `targets` are the false-alarm budget and the detection target (:class:`Targets`).
    """

    runs: int
    regressed_runs: int
    cases: int
    case_order: tuple[str, ...]
    failures_per_run: tuple[int, ...]
    skipped: int
    missing: int
    errors: int
    reruns: int
    attempts_policy: str
    sessions: int
    warnings: tuple[str, ...]
    sources: tuple[str, ...]
    confidence_level: float
    method: str
    measured: MeasuredNoise
    per_case: tuple[CaseNoise, ...]
    regression: str
    regression_failing: float
    targets: Targets
    table: tuple[tuple[float, float], ...]
    within_budget: int | None
    recommended: int | None
    plans: SuitePlans | None
    more_runs: MoreRuns | None = None
    case_spread: CaseSpread | None = None
    case_gate: CaseGate | None = None
    case_detection: float | None = None
    chosen: ChosenGate | None = None

    _renderer: ClassVar[str] = "gatecal._render.recommend"

    def summary(self) -> str:
        """The gate to use and its two figures, or that none is within the budget."""
        chosen = self.chosen
        if chosen is not None and chosen.kind in ("cases", "count"):
            what = (
                "the case-aware gate"
                if chosen.kind == "cases"
                else f"at least {chosen.k_min} of {self.cases} cases pass"
            )
            head = (
                f"use {what} (false alarm {format_probability(chosen.false_alarm)}, "
                f"detection {format_probability(chosen.detection)})"
            )
            if not chosen.meets_targets:
                head += f", short of the {self.targets.detection:g} detection target"
        else:
            head = "no gate keeps the false alarm within the budget"
        return f"{head}; from {self.runs} known-good runs"

    def suite_spec(self) -> dict[str, Any]:
        """The measured suite as a suite spec, for ``gatecal simulate --suite``.

        One judge check per case carrying the case's measured failure rate (its point
        estimate, as both fnr and fpr) and one code check; in the regressed build the
        first cases, in the input's order, fail the code check, as many as the target
        regression has.
        """
        order = list(self.case_order)
        rates = {c.case: c.rate.estimate for c in self.per_case}
        failing = max(1, round(self.regression_failing))
        return {
            "format": "gatecal-suite/1",
            "cases": order,
            "checks": [{"name": "judge", "kind": "judge"}, {"name": "code", "kind": "code"}],
            "truth": {
                "healthy": [[True, True] for _ in order],
                "regressed": [[True, i >= failing] for i in range(len(order))],
            },
            "case_rates": {c: {"fnr": rates[c], "fpr": rates[c]} for c in order},
        }

    def to_frame(self) -> Any:
        """The operating table as a pandas DataFrame, one row per k_min."""
        import pandas as pd  # deferred: `import gatecal` stays light

        n = self.cases
        return pd.DataFrame(
            {
                "k_min": range(n + 1),
                "max_failures": [n - k for k in range(n + 1)],
                "false_alarm": [fa for fa, _ in self.table],
                "detection": [det for _, det in self.table],
                "recommended": [k == self.recommended for k in range(n + 1)],
                "within_budget": [k == self.within_budget for k in range(n + 1)],
            }
        )

    def threshold_range(self, k_min: int) -> tuple[Fraction, Fraction]:
        """Pass-rate thresholds t that mean this k_min: ``(k-1)/n < t <= k/n``."""
        n = self.cases
        return Fraction(max(k_min - 1, 0), n), Fraction(k_min, n)

    def _gate(self, k: int | None) -> dict[str, Any] | None:
        if k is None:
            return None
        low, high = self.threshold_range(k)
        return {
            "k_min": k,
            "max_failures": self.cases - k,
            "false_alarm": self.table[k][0],
            "detection": self.table[k][1],
            "threshold_above": float(low),
            "threshold_at_most": float(high),
        }

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract (its header first; check reads it back)."""
        return {
            **json_header("recommend"),
            "runs": self.runs,
            "regressed_runs": self.regressed_runs,
            "cases": self.cases,
            "skipped": self.skipped,
            "missing": self.missing,
            "errors": self.errors,
            "reruns": self.reruns,
            "attempts": self.attempts_policy,
            "sessions": self.sessions,
            "warnings": list(self.warnings),
            "sources": list(self.sources),
            **self.measured.to_dict(),
            "per_case": [{"case": c.case, **c.rate.to_dict()} for c in self.per_case],
            "case_order": list(self.case_order),
            "failures_per_run": list(self.failures_per_run),
            "regression": self.regression,
            "regression_failing": self.regression_failing,
            "targets": self.targets.to_dict(),
            "recommended": self._gate(self.recommended),
            "within_budget": self._gate(self.within_budget),
            "table": [
                {"k_min": k, "false_alarm": fa, "detection": det}
                for k, (fa, det) in enumerate(self.table)
            ],
            "would_work": [p.to_dict() if p else None for p in self.plans.plans]
            if self.plans
            else None,
            "more_runs": self.more_runs.to_dict() if self.more_runs else None,
            "gate": self.chosen.to_dict() if self.chosen else None,
            "case_spread": self.case_spread.to_dict() if self.case_spread else None,
            "case_gate": (
                {**self.case_gate.to_dict(), "detection": self.case_detection}
                if self.case_gate
                else None
            ),
        }


def would_work(
    *,
    rate: float,
    icc: float,
    regression: Regression,
    false_alarm: float,
    detection: float,
    max_cases: int = PLAN_MAX_CASES,
) -> SuitePlans:
    """The smallest suite meeting both targets, one judge check and one code check per
    case, the regression failing the code check: one judge call per check, and a
    majority of 3. What :func:`gatecal.plan_suite` answers for this suite shape, here
    exact and in well under a second at any icc:

    - one call: the failing count is beta-binomial, evaluated in closed form;
    - majority of 3: a case fails with ``g(x) = 3 x^2 - 2 x^3`` at run rate x, so the
      count is a Beta mixture of binomials of degree 3n in x; a Gauss rule with
      ``3 max_cases / 2 + 1`` nodes is exact for every n searched.

    Every n is tried in turn (feasibility is not monotone), but the most sensitive
    admissible gate moves by at most one failure from n - 1 to n (one more case adds
    at most one failure), so each n costs two or three tail probabilities.
    """
    from scipy.special import betainc

    noise = JudgeNoise(fnr=rate, fpr=rate, icc=icc)
    policies = (Policy(), Policy(majority=3))
    cache: dict[int, Floats] = {}

    def single(n: int, f: int) -> float:  # P(more than f of n cases fail), one call
        if f >= n:
            return 0.0
        if n not in cache:
            cache[n] = beta_binomial_pmf(n, rate, icc)
        return math.fsum(cache[n][f + 1 :])

    if icc > 0:
        from gatecal._common.quadrature import beta_rule

        xs, ws = beta_rule(*beta_shape(rate, icc), nodes=3 * max_cases // 2 + 1)
    else:
        xs, ws = np.array([rate]), np.ones(1)
    g = xs * xs * (3 - 2 * xs)

    def majority(n: int, f: int) -> float:
        return 0.0 if f >= n else float(ws @ betainc(f + 1, n - f, g))

    plans: list[SuitePlan | None] = []
    for policy, tail in zip(policies, (single, majority), strict=True):
        found, most = None, 0  # most: failures the best admissible gate allows at n - 1
        for n in range(1, max_cases + 1):
            fa = tail(n, most)
            if fa > false_alarm:
                most += 1
                fa = tail(n, most)
            failing = regression.failing(n)
            if not 1 <= failing <= n:
                continue
            det = 1.0 if most < failing else tail(n - failing, most - failing)
            if det >= detection:
                found = SuitePlan(
                    policy=policy,
                    cases=n,
                    k_min=n - most,
                    failing=failing,
                    false_alarm=fa,
                    detection=det,
                    judge_calls=float(n * policy.majority),
                )
                break
        plans.append(found)
    return SuitePlans(
        noise=noise,
        regression=regression,
        targets=Targets(false_alarm=false_alarm, detection=detection),
        judge_checks=1,
        code_checks=1,
        max_cases=max_cases,
        policies=policies,
        plans=tuple(plans),
    )


@shared_docs
def recommend_gate(
    data: RunsData,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.95,
    regression: RegressionLike | None = None,
    confidence_level: float = 0.95,
    method: str = "wilson",
    significance: float = SIGNIFICANCE,
) -> Recommendation:
    """Measure the judge's noise from known-good runs and recommend the gate.

    The healthy build's failing-case count is modelled as beta-binomial in (rate, icc);
    the false alarm of each gate is its one-sided 99.5% profile-likelihood upper bound
    over both (:class:`NoiseBounds`, :data:`GATE_LEVEL`): conservative whether or not
    the runs are correlated, and whatever the test of rho = 0 says (`significance`
    only labels the runs ``correlated``). The regressed build is either the measured
    regressed runs (each case failing at its observed rate in them) or `regression`
    cases failing a code check with the rest as noisy as the healthy build, each
    gate's detection its lower bound the same way: a conservative detection. The
    printed rate and icc ranges (``noise_for_gate``, ``icc_for_gate``) are the joint
    region at `confidence_level`. The recommended gate is the largest
    k_min whose false alarm is at most `false_alarm`, provided its detection is at
    least `detection`; otherwise `plans` says what suite would work (searched up to
    :data:`PLAN_MAX_CASES` cases, at the point of the region worst for this suite).
    Either way `within_budget` is that largest k_min (when it is at least 1): the
    strictest gate the false-alarm budget allows, whatever its detection.

    Parameters
    ----------
    data : RunsData
        Runs from :func:`gatecal.read_runs`: known-good (healthy) runs, and optionally
        runs of a regressed build.
    false_alarm : float, default 0.05
        The largest share of healthy builds the gate may fail, in [0, 1].
    detection : float, default 0.95
        The smallest share of regressed builds the gate must fail, in [0, 1].
    regression : Regression, str, int or float, optional
        The regression to detect when `data` has no regressed runs: a number of cases or
        a share (:func:`as_regression`); default a quarter of the cases.
    confidence_level : float, default 0.95
        The level of the printed noise intervals and region, in [0, 1].
    method : {"wilson", "clopper-pearson", "jeffreys"}, default "wilson"
        The interval method of the printed rates.
    significance : float, default 0.05
        The level of the test of no run-to-run correlation; it only labels the runs.

    Returns
    -------
    Recommendation
        The measured noise, every gate's false alarm and detection, the chosen gate (or
        the suites that would work), and the strictest gate within the budget.

    Raises
    ------
    ParameterError
        If `data` is not a RunsData or has no healthy runs, a probability is out of range,
        or `regression` does not make between 1 and all cases fail.

    Examples
    --------
    %(nightly_runs_example)s
    >>> rec = gatecal.recommend_gate(nightly, regression=3)
    >>> rec
    <gatecal.Recommendation: use the case-aware gate (false alarm 0.03226, detection 1); ...>
    >>> rec.chosen.kind, rec.chosen.meets_targets
    ('cases', True)
    """
    rec, rates = recommend_with_rates(
        data,
        false_alarm=false_alarm,
        detection=detection,
        regression=regression,
        confidence_level=confidence_level,
        method=method,
        significance=significance,
    )
    return replace(rec, per_case=tuple(rates.noises()))


def recommend_with_rates(
    data: RunsData,
    *,
    false_alarm: float,
    detection: float,
    regression: RegressionLike | None,
    confidence_level: float,
    method: str,
    significance: float,
    estimate_detection: bool = True,
) -> tuple[Recommendation, CaseRates]:
    """:func:`recommend_gate`'s recommendation but for its per-case records (``per_case``
    empty), and each case's interval in the order of ``case_order``: a check reads its
    few failing cases' intervals from them, with no sorted record of every case."""
    check_instance("data", data, RunsData, "a gatecal.RunsData (from gatecal.read_runs)")
    alpha = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    level = check_probability("confidence_level", confidence_level)
    significance = check_probability("significance", significance)
    if "healthy" not in data.builds():
        raise ParameterError("runs", "must include known-good (healthy) runs", data.builds())
    runs, cases, outcome = _healthy_outcomes(data)
    n, r = len(cases), len(runs)
    observed = outcome >= 0
    failed = outcome == 0
    failures_per_run = failed.sum(axis=1)
    cases_per_run = observed.sum(axis=1)  # cases observed in each run
    failures_per_case = failed.sum(axis=0)
    runs_per_case = observed.sum(axis=0)
    total_trials = float(observed.sum())
    missing = int(r * n - total_trials)
    noise = proportion_interval(float(failures_per_run.sum()), total_trials, level, method)
    bounds = noise_bounds(failures_per_run, cases_per_run, confidence_level=level)
    gate_noise = bounds.rate
    over = bounds.overdispersion
    case_rates = _case_rates(cases, failures_per_case, runs_per_case, level, method)
    judge_failed, judge_total = data.judge_verdicts("healthy")
    judge_noise = (
        proportion_interval(judge_failed, judge_total, level, method) if judge_total else None
    )

    false_alarms = bounds.false_alarms(n)
    regressed_runs = len(data.runs("regressed")) if "regressed" in data.builds() else 0
    detections, regression_text, failing_cases, plan_regression = (
        _measured_regression(data, cases, gate_noise.low)
        if regressed_runs
        else _assumed_regression(regression, n, bounds)
    )
    with collector_paused():  # a pair per gate: 10^5 of them
        table = tuple(zip(false_alarms.tolist(), detections.tolist(), strict=True))
    best = strictest_within([fa for fa, _ in table], alpha)
    within_budget = best if best >= 1 else None
    recommended = within_budget if table[best][1] >= power else None
    plans = None
    more_runs = None
    if recommended is None:
        more_runs = _more_runs(
            bounds,
            failures_per_run,
            cases_per_run,
            detections,
            None if regressed_runs else round(failing_cases),
            alpha,
            power,
            level,
        )
        # planned at the point of the region worst for this suite's gate "fewer failing
        # than the regression" (a bigger suite's worst point may differ a little)
        worst = bounds.worst_point(n, max(1, round(failing_cases)))
        plans = would_work(
            rate=worst[0],
            icc=worst[1],
            regression=plan_regression,
            false_alarm=alpha,
            detection=power,
        )
    spread, gate, case_det = case_aware(
        data,
        cases,
        outcome,
        alpha,
        power,
        regressed_runs,
        failing_cases,
        gate_noise.low,
        runs,
        estimate_detection=estimate_detection,
    )
    chosen = choose(
        n=n,
        table=table,
        within_budget=within_budget,
        recommended=recommended,
        spread=spread,
        gate=gate,
        case_detection=case_det,
        power=power,
        plans=plans,
        more_runs=more_runs,
        runs=r,
    )
    return Recommendation(
        case_spread=spread,
        case_gate=gate,
        case_detection=case_det,
        chosen=chosen,
        runs=r,
        regressed_runs=regressed_runs,
        cases=n,
        skipped=data.skipped,
        missing=missing,
        errors=data.errors + data.unscored,
        reruns=data.reruns,
        attempts_policy=data.attempts_policy,
        sessions=len(data.sessions("healthy")),
        warnings=data.warnings,
        case_order=tuple(cases),
        failures_per_run=tuple(int(f) for f in failures_per_run),
        sources=data.sources,
        confidence_level=level,
        method=method,
        measured=MeasuredNoise(
            noise=noise,
            noise_for_gate=gate_noise,
            icc_for_gate=bounds.icc_top,
            gate_level=bounds.gate_level,
            judge_noise=judge_noise,
            overdispersion=over,
            correlated=over.p_value < significance,
        ),
        per_case=(),
        regression=regression_text,
        regression_failing=failing_cases,
        targets=Targets(false_alarm=alpha, detection=power),
        table=table,
        within_budget=within_budget,
        recommended=recommended,
        plans=plans,
        more_runs=more_runs,
    ), case_rates
