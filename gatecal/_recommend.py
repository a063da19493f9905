"""Recommend a gate from measured repeated runs: the noise, its spread, and the threshold."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from gatecal._plan import Regression, SuitePlans, parse_regression, plan_suite
from gatecal._policies import Policy
from gatecal._suite import JudgeNoise, beta_shape
from gatecal._validate import ParameterError, check_probability
from gatecal.readers import RunsData

__all__ = [
    "CI_METHODS",
    "CaseNoise",
    "Overdispersion",
    "RateEstimate",
    "Recommendation",
    "fit_overdispersion",
    "proportion_interval",
    "recommend_gate",
]

CI_METHODS = ("wilson", "clopper-pearson", "jeffreys")
CiMethod = Literal["wilson", "clopper-pearson", "jeffreys"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RateEstimate:
    """A failure rate with its confidence interval.

    Attributes
    ----------
    failures, trials : float
        The counts (trials may be an effective, design-effect-adjusted count).
    estimate, low, high : float
    method : str
        ``wilson``, ``clopper-pearson`` or ``jeffreys``; ``+deff`` when widened for
        run-to-run correlation.
    confidence_level : float
    """

    failures: float
    trials: float
    estimate: float
    low: float
    high: float
    method: str
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high,
                "method": self.method, "confidence_level": self.confidence_level,
                "failures": self.failures, "trials": self.trials}  # fmt: skip


def proportion_interval(
    failures: float, trials: float, confidence_level: float = 0.95, method: str = "wilson"
) -> RateEstimate:
    """Confidence interval of a proportion: Wilson (default), Clopper-Pearson or Jeffreys.

    References: Brown, Cai & DasGupta (2001), Statistical Science 16(2):101-133.
    Fractional counts are allowed (an effective sample size).
    """
    from scipy import stats  # deferred: `import gatecal` stays light

    if method not in CI_METHODS:
        raise ParameterError("method", f"must be one of {', '.join(CI_METHODS)}", method)
    level = check_probability("confidence_level", confidence_level)
    if not trials > 0 or not 0 <= failures <= trials:
        raise ParameterError("failures", f"must lie in [0, trials = {trials}]", failures)
    k, n = float(failures), float(trials)
    p = k / n
    alpha = 1.0 - level
    if method == "wilson":
        z = float(stats.norm.isf(alpha / 2))
        center = (k + z * z / 2) / (n + z * z)
        half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
        low, high = max(0.0, center - half), min(1.0, center + half)
    elif method == "clopper-pearson":
        low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
        high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    else:
        low = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k + 0.5, n - k + 0.5))
        high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 0.5, n - k + 0.5))
    return RateEstimate(failures=k, trials=n, estimate=p, low=low, high=high,
                        method=method, confidence_level=level)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Overdispersion:
    """Run-to-run correlation of failures: a beta-binomial fit against the binomial.

    Attributes
    ----------
    icc : float
        Maximum-likelihood intra-run correlation rho (0 = independent runs).
    mean : float
        Maximum-likelihood mean failure rate per case.
    moment_icc : float
        Method-of-moments estimate, for comparison.
    statistic, p_value : float
        Likelihood-ratio test of rho = 0; the null sits on the boundary, so the
        p-value uses the 1/2 chi2(0) + 1/2 chi2(1) mixture.
    design_effect : float
        ``1 + (m - 1) icc`` (Kish), m cases per run.
    """

    icc: float
    mean: float
    moment_icc: float
    statistic: float
    p_value: float
    design_effect: float

    def to_dict(self) -> dict[str, Any]:
        return {"icc": self.icc, "p_value": self.p_value, "mean": self.mean,
                "moment_icc": self.moment_icc, "statistic": self.statistic,
                "design_effect": self.design_effect}  # fmt: skip


def fit_overdispersion(failures: npt.ArrayLike, cases: int | npt.ArrayLike) -> Overdispersion:
    """Fit failures per run (out of `cases`) by beta-binomial maximum likelihood.

    `cases` is the number of cases per run, or one number per run when some cases
    are missing from some runs. Parametrised by mean mu and icc rho = 1 / (a + b + 1);
    tested against rho = 0 by a likelihood ratio with the boundary-corrected p-value
    (Self & Liang 1987).
    """
    from scipy import optimize, stats  # deferred: `import gatecal` stays light
    from scipy.special import betaln, gammaln

    x = np.asarray(failures, dtype=np.float64)
    sizes: npt.NDArray[np.float64] = np.broadcast_to(np.asarray(cases, dtype=np.float64), x.shape)
    m = float(sizes.max()) if sizes.size else 0.0
    p = float(x.sum() / sizes.sum()) if sizes.sum() > 0 else 0.0
    moment = 0.0
    if 0 < p < 1 and m > 1 and x.size > 1:
        # the moment estimator for equal sizes; with unequal sizes, at their mean
        mean_m = float(sizes.mean())
        var = float((x - p * sizes).var(ddof=1))
        moment = min(max((var / (mean_m * p * (1 - p)) - 1) / max(mean_m - 1, 1e-12), 0.0),
                     0.999)  # fmt: skip
    if p in (0.0, 1.0) or x.size < 2:
        return Overdispersion(icc=0.0, mean=p, moment_icc=0.0, statistic=0.0, p_value=1.0,
                              design_effect=1.0)  # fmt: skip
    ll_binomial = float(np.sum(stats.binom.logpmf(x, sizes, p)))
    # the likelihood only needs a histogram of (failures, size) pairs
    pairs, counts = np.unique(np.stack([x, sizes]), axis=1, return_counts=True)
    values, n_of = pairs[0], pairs[1]
    log_choose = gammaln(n_of + 1) - gammaln(values + 1) - gammaln(n_of - values + 1)

    def negative_ll(theta: npt.NDArray[np.float64]) -> float:
        mu = 1 / (1 + math.exp(-theta[0]))
        rho = 1 / (1 + math.exp(-theta[1]))
        a, b = beta_shape(mu, rho)
        terms = log_choose + betaln(values + a, n_of - values + b) - betaln(a, b)
        return -float(counts @ terms)

    start = np.array([math.log(p / (1 - p)), math.log(max(moment, 1e-3) / (1 - max(moment, 1e-3)))])
    best = optimize.minimize(negative_ll, start, method="Nelder-Mead",
                             options={"xatol": 1e-7, "fatol": 1e-9, "maxiter": 2000})  # fmt: skip
    mu = 1 / (1 + math.exp(-best.x[0]))
    rho = 1 / (1 + math.exp(-best.x[1]))
    statistic = max(0.0, 2 * (-best.fun - ll_binomial))
    if statistic < 1e-9:  # the binomial is the best fit: rho at its boundary
        mu, rho, statistic = p, 0.0, 0.0
    p_value = 1.0 if statistic == 0 else 0.5 * float(stats.chi2.sf(statistic, 1))
    return Overdispersion(icc=rho, mean=mu, moment_icc=moment, statistic=statistic,
                          p_value=p_value, design_effect=1 + (m - 1) * rho)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseNoise:
    """One case's failures across the known-good runs."""

    case: str
    rate: RateEstimate


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation:
    """What ``gatecal recommend`` measured and recommends; see :func:`recommend_gate`.

    ``table[k]`` holds ``(false_alarm, detection)`` of the gate "at least k of n cases
    pass" under the conservative models; `recommended` is the chosen k_min or None.
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
    noise: RateEstimate
    noise_for_gate: RateEstimate
    judge_noise: RateEstimate | None
    per_case: tuple[CaseNoise, ...]
    overdispersion: Overdispersion
    correlated: bool
    regression: str
    regression_failing: float
    false_alarm_target: float
    detection_target: float
    table: tuple[tuple[float, float], ...]
    recommended: int | None
    plans: SuitePlans | None

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
            }
        )

    def threshold_range(self, k_min: int) -> tuple[Fraction, Fraction]:
        """Pass-rate thresholds t that mean this k_min: ``(k-1)/n < t <= k/n``."""
        n = self.cases
        return Fraction(max(k_min - 1, 0), n), Fraction(k_min, n)

    def to_dict(self) -> dict[str, Any]:
        rec = None
        if self.recommended is not None:
            k = self.recommended
            low, high = self.threshold_range(k)
            rec = {"k_min": k, "max_failures": self.cases - k,
                   "false_alarm": self.table[k][0], "detection": self.table[k][1],
                   "threshold_above": float(low), "threshold_at_most": float(high)}  # fmt: skip
        return {
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
            "noise": self.noise.to_dict(),
            "noise_for_gate": self.noise_for_gate.to_dict(),
            "judge_noise": self.judge_noise.to_dict() if self.judge_noise else None,
            "overdispersion": self.overdispersion.to_dict(),
            "correlated": self.correlated,
            "per_case": [{"case": c.case, **c.rate.to_dict()} for c in self.per_case],
            "regression": self.regression,
            "regression_failing": self.regression_failing,
            "targets": {"false_alarm": self.false_alarm_target, "detection": self.detection_target},
            "recommended": rec,
            "table": [
                {"k_min": k, "false_alarm": fa, "detection": det}
                for k, (fa, det) in enumerate(self.table)
            ],
            "would_work": [p.to_dict() if p else None for p in self.plans.plans]
            if self.plans
            else None,
        }


def _failure_pmf(n: int, mean: float, icc: float) -> npt.NDArray[np.float64]:
    """PMF of failing cases out of n: binomial, or beta-binomial with correlation."""
    from scipy import stats

    f = np.arange(n + 1)
    if icc <= 0 or mean in (0.0, 1.0):
        return np.asarray(stats.binom.pmf(f, n, mean))
    return np.asarray(stats.betabinom.pmf(f, n, *beta_shape(mean, icc)))


def recommend_gate(
    data: RunsData,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.95,
    regression: Regression | str | None = None,
    confidence_level: float = 0.95,
    method: str = "wilson",
    significance: float = 0.05,
) -> Recommendation:
    """Measure the judge's noise from known-good runs and recommend the gate.

    The healthy build's failing-case count is modelled as binomial with the *upper*
    confidence bound of the pooled case failure rate, or, when the runs are
    overdispersed (likelihood-ratio p-value below `significance`), as beta-binomial
    with the fitted icc and the upper bound of a design-effect-widened interval: a
    conservative false alarm. The regressed build is either the measured regressed
    runs (each case failing at its observed rate in them) or `regression` cases
    failing a code check with the rest at the lower noise bound: a conservative
    detection. The recommended gate is the largest k_min whose false alarm is at most
    `false_alarm`, provided its detection is at least `detection`.
    """
    from gatecal._exact import pass_count_pmf

    alpha = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    level = check_probability("confidence_level", confidence_level)
    if "healthy" not in data.builds():
        raise ParameterError("runs", "must include known-good (healthy) runs", data.builds())
    runs, cases, matrix = data.case_outcomes("healthy")
    outcome = np.array(matrix, dtype=np.int8).reshape(len(runs), len(cases))
    # a case never observed in a good run is no case
    seen_case: npt.NDArray[np.bool_] = np.asarray((outcome >= 0).any(axis=0))
    seen_run: npt.NDArray[np.bool_] = np.asarray((outcome >= 0).any(axis=1))
    if not seen_case.any():
        raise ParameterError("runs", "must include at least one observed known-good verdict",
                             f"{len(runs)} runs, all missing")  # fmt: skip
    outcome = outcome[seen_run][:, seen_case]
    runs = [run for run, keep in zip(runs, seen_run, strict=True) if keep]
    names = data.short_names()
    cases = [names[c] for c, keep in zip(cases, seen_case, strict=True) if keep]
    n, r = len(cases), len(runs)
    observed = outcome >= 0
    failed = outcome == 0
    failures_per_run = failed.sum(axis=1)
    cases_per_run = observed.sum(axis=1)
    failures_per_case = failed.sum(axis=0)
    runs_per_case = observed.sum(axis=0)
    total = float(failures_per_run.sum())
    total_trials = float(observed.sum())
    missing = int(r * n - total_trials)
    noise = proportion_interval(total, total_trials, level, method)
    over = fit_overdispersion(failures_per_run, cases_per_run)
    correlated = over.p_value < significance
    icc = over.icc if correlated else 0.0
    gate_noise = noise
    if correlated:
        trials = total_trials / over.design_effect
        widened = proportion_interval(total / total_trials * trials, trials, level, method)
        gate_noise = RateEstimate(failures=widened.failures, trials=trials,
                                  estimate=noise.estimate, low=widened.low, high=widened.high,
                                  method=f"{method}+deff", confidence_level=level)  # fmt: skip
    per_case = sorted(
        (CaseNoise(case=c, rate=proportion_interval(float(f), float(t), level, method))
         for c, f, t in zip(cases, failures_per_case, runs_per_case, strict=True)),
        key=lambda c: (-c.rate.estimate, c.case),
    )  # fmt: skip
    judge_failed, judge_total = data.judge_verdicts("healthy")
    judge_noise = (proportion_interval(judge_failed, judge_total, level, method)
                   if judge_total else None)  # fmt: skip

    # false alarm: failing cases ~ Bin / BetaBin(n, upper bound)
    fail_pmf_h = _failure_pmf(n, gate_noise.high, icc)
    pass_pmf_h = fail_pmf_h[::-1]  # K = n - F
    regressed_runs = len(data.runs("regressed")) if "regressed" in data.builds() else 0
    if regressed_runs:
        _, reg_cases, reg_matrix = data.case_outcomes("regressed")
        reg_outcome = np.array(reg_matrix, dtype=np.int8).reshape(-1, len(reg_cases))
        column = {names[c]: j for j, c in enumerate(reg_cases)}
        padded = np.concatenate((reg_outcome, np.full((reg_outcome.shape[0], 1), -1, np.int8)), 1)
        reg_outcome = padded[:, [column.get(c, -1) for c in cases]]  # -1: never reported
        reg_fail = (reg_outcome == 0).sum(axis=0)
        reg_seen = (reg_outcome >= 0).sum(axis=0)
        # each case at its observed failure rate in the regressed runs (cases that always
        # failed never pass); the noise of the rest is what those runs showed; a case
        # never observed there passes as often as the healthy build's lower bound allows
        reg_rate = np.where(reg_seen > 0, reg_fail / np.maximum(reg_seen, 1), gate_noise.low)
        pass_pmf_r = pass_count_pmf(1.0 - reg_rate)
        regression_text = f"measured: {regressed_runs} regressed runs"
        failing_cases = float(np.sum(reg_rate > 0.5))
        majority_failing = max(1, int(failing_cases))
        share = Fraction(majority_failing, n)
        plan_regression = Regression(text=f"{majority_failing}/{n}", share=share)
    else:
        reg = (
            parse_regression("0.25")
            if regression is None
            else (parse_regression(regression) if isinstance(regression, str) else regression)
        )
        f = reg.failing(n)
        if f < 1 or f > n:
            raise ParameterError("regression", f"must make between 1 and {n} cases fail", reg.text)
        rest = _failure_pmf(n - f, gate_noise.low, icc)[::-1]  # passes among the others
        pass_pmf_r = np.concatenate((rest, np.zeros(f)))  # the f failing cases never pass
        regression_text = f"{reg.describe()} ({f} of {n}, a code check)"
        failing_cases = float(f)
        # a bigger suite keeps the regression's share of the cases, not its count
        plan_regression = Regression(text=f"{f}/{n}", share=Fraction(f, n))
    table = []
    for k in range(n + 1):
        lo_h, hi_h = math.fsum(pass_pmf_h[:k]), math.fsum(pass_pmf_h[k:])
        lo_r, hi_r = math.fsum(pass_pmf_r[:k]), math.fsum(pass_pmf_r[k:])
        table.append((lo_h / (lo_h + hi_h), lo_r / (lo_r + hi_r)))
    admissible = [k for k, (fa, _) in enumerate(table) if fa <= alpha]
    best = max(admissible)  # k = 0 never fails, so there is always one
    recommended = best if table[best][1] >= power else None
    plans = None
    if recommended is None:
        p_case = gate_noise.high
        plans = plan_suite(
            noise=JudgeNoise(fnr=p_case, fpr=p_case, icc=min(icc, 0.999)),
            regression=plan_regression,
            false_alarm=alpha,
            detection=power,
            judge_checks=1,
            code_checks=1,
            policies=[Policy(), Policy(majority=3)],
            max_cases=2000,
        )
    return Recommendation(
        runs=r, regressed_runs=regressed_runs, cases=n, skipped=data.skipped,
        missing=missing, errors=data.errors + data.unscored, reruns=data.reruns,
        attempts_policy=data.attempts_policy, sessions=len(data.sessions("healthy")),
        warnings=data.warnings,
        case_order=tuple(cases),
        failures_per_run=tuple(int(f) for f in failures_per_run),
        sources=data.sources, confidence_level=level, method=method, noise=noise,
        noise_for_gate=gate_noise, judge_noise=judge_noise, per_case=tuple(per_case),
        overdispersion=over, correlated=correlated, regression=regression_text,
        regression_failing=failing_cases, false_alarm_target=alpha, detection_target=power,
        table=tuple(table), recommended=recommended, plans=plans,
    )  # fmt: skip
