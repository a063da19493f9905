"""Recommend a gate from measured repeated runs: the noise, its spread, and the threshold."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._analyses.plan import Regression, SuitePlan, SuitePlans, parse_regression
from gatecal._analyses.policies import Policy
from gatecal._common.intervals import CI_METHODS, RateEstimate, proportion_interval
from gatecal._common.validate import ParameterError, check_instance, check_probability
from gatecal._model.suite import JudgeNoise, beta_shape
from gatecal.readers import RunsData

__all__ = [
    "CI_METHODS",
    "ICC_MAX",
    "PLAN_MAX_CASES",
    "CaseNoise",
    "NoiseBounds",
    "Overdispersion",
    "RateEstimate",
    "Recommendation",
    "fit_overdispersion",
    "noise_bounds",
    "proportion_interval",
    "recommend_gate",
    "would_work",
]

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

#: The largest icc the fit and its bounds consider: at 0.999 a run's failure rate is
#: Beta with a + b = 1/999, so runs nearly all pass or nearly all fail.
ICC_MAX = 0.999


@dataclass(frozen=True, slots=True, kw_only=True)
class Overdispersion:
    """Run-to-run correlation of failures: a beta-binomial fit against the binomial.

    Attributes
    ----------
    icc : float
        Maximum-likelihood intra-run correlation rho (0 = independent runs), in
        ``[0, ICC_MAX]``; exactly 0 when the binomial fits at least as well.
    mean : float
        Maximum-likelihood mean failure rate per case.
    moment_icc : float
        Method-of-moments estimate, for comparison.
    statistic, p_value : float
        Likelihood-ratio test of rho = 0; the null sits on the boundary, so the
        p-value uses the 1/2 chi2(0) + 1/2 chi2(1) mixture. At the boundary
        (``icc == 0``) the statistic is 0 and the p-value 1.
    design_effect : float
        ``1 + (m - 1) icc`` (Kish), m cases per run (with runs of different sizes,
        m is their size-weighted mean ``sum m_r^2 / sum m_r``).
    icc_upper : float
        One-sided upper confidence bound of rho at level ``(1 + confidence_level) / 2``
        from the profile likelihood (the largest rho whose profile log-likelihood is
        within ``z^2 / 2`` of the maximum). ``ICC_MAX`` when the runs cannot bound
        the correlation (no failures at all, or every case failing).
    confidence_level : float
        The two-sided level the bound belongs to (its one-sided level is
        ``(1 + confidence_level) / 2``, as for the upper end of a rate's interval).
    """

    icc: float
    mean: float
    moment_icc: float
    statistic: float
    p_value: float
    design_effect: float
    icc_upper: float
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        return {"icc": self.icc, "p_value": self.p_value, "mean": self.mean,
                "moment_icc": self.moment_icc, "statistic": self.statistic,
                "design_effect": self.design_effect, "icc_upper": self.icc_upper,
                "confidence_level": self.confidence_level}  # fmt: skip


def _run_counts(failures: npt.ArrayLike, cases: int | npt.ArrayLike) -> tuple[Ints, Ints]:
    """Failures and observed cases per run as two int arrays (runs with no cases dropped)."""
    x = np.atleast_1d(np.asarray(failures, dtype=np.float64))
    m = np.broadcast_to(np.asarray(cases, dtype=np.float64), x.shape)
    if x.ndim != 1 or x.size == 0:
        raise ParameterError("failures", "must be a non-empty list of counts per run", failures)
    for name, v in (("failures", x), ("cases", m)):
        if not (np.isfinite(v).all() and (v == np.round(v)).all() and (v >= 0).all()):
            raise ParameterError(name, "must be whole numbers >= 0", v.tolist())
    if (x > m).any():
        raise ParameterError("failures", "must not exceed the cases of their run", x.tolist())
    keep = m > 0
    if not keep.any():
        raise ParameterError("cases", "must include a run with at least one case", m.tolist())
    return x[keep].astype(np.int64), m[keep].astype(np.int64)


def _prefix(terms: Floats) -> Floats:
    """``out[i] = terms[0] + ... + terms[i - 1]`` (``out[0] = 0``)."""
    return np.concatenate(([0.0], np.cumsum(terms)))


class _Likelihood:
    """The beta-binomial log-likelihood of runs, relative to the binomial at its MLE.

    With theta = rho / (1 - rho), ``B(x + a, m - x + b) / B(a, b)`` is
    ``prod_{j<x} (mu + j theta) prod_{j<m-x} (1 - mu + j theta) / prod_{j<m} (1 + j theta)``,
    so the log-likelihood minus the binomial's at the same mu is a sum of
    ``log1p(j theta / mu)`` terms: no cancellation as theta -> 0, and exactly 0 at theta = 0.
    Identical (failures, cases) runs are grouped.
    """

    def __init__(self, x: Ints, m: Ints) -> None:
        pairs, counts = np.unique(np.stack([x, m], axis=1), axis=0, return_counts=True)
        self.x, self.m = pairs[:, 0], pairs[:, 1]
        self.y = self.m - self.x
        self.c = counts.astype(np.float64)
        self.total_x, self.total_m = int(x.sum()), int(m.sum())
        self.p = self.total_x / self.total_m
        self.j = np.arange(int(self.m.max()), dtype=np.float64)

    def excess(self, mu: float, theta: float) -> float:
        """log L(mu, theta) - log L_binomial(p_hat) (p_hat may be 0 or 1: no failures or
        no passes, where the binomial's maximum log-likelihood is 0)."""
        p, c = self.p, self.c
        has_x, has_y = self.total_x > 0, self.total_x < self.total_m
        if (has_x and mu <= 0) or (has_y and mu >= 1):
            return -math.inf
        base = 0.0  # the binomial's log-likelihood at mu, minus at p_hat
        if has_x:
            base += float(c @ (self.x * math.log1p((mu - p) / p)))
        if has_y:
            base += float(c @ (self.y * math.log1p((p - mu) / (1 - p))))
        if theta == 0:
            return base
        j = self.j
        a = _prefix(np.log1p(j * (theta / mu)))[self.x] if has_x else 0.0
        b = _prefix(np.log1p(j * (theta / (1 - mu))))[self.y] if has_y else 0.0
        d = _prefix(np.log1p(j * theta))[self.m]
        return base + float(c @ (a + b - d))

    def score_mu(self, mu: float, theta: float) -> float:
        """d/dmu of the log-likelihood (decreasing in mu: the likelihood is concave in mu)."""
        j = self.j
        a = _prefix(1.0 / (mu + j * theta))[self.x]
        b = _prefix(1.0 / (1.0 - mu + j * theta))[self.y]
        return float(self.c @ (a - b))

    def score_theta_at_zero(self) -> Fraction:
        """d/dtheta of the log-likelihood at theta = 0, mu = p_hat, exactly (its sign decides
        whether the maximum can leave the boundary)."""
        p = Fraction(self.total_x, self.total_m)
        total = Fraction(0)
        for x, y, m, c in zip(self.x.tolist(), self.y.tolist(), self.m.tolist(),
                              self.c.tolist(), strict=True):  # fmt: skip
            total += int(c) * (
                Fraction(x * (x - 1)) / p + Fraction(y * (y - 1)) / (1 - p) - m * (m - 1)
            )
        return total / 2

    def profile(self, rho: float) -> tuple[float, float]:
        """(mu maximising the likelihood at this rho, the excess log-likelihood there)."""
        from scipy import optimize

        if rho == 0 or self.total_x in (0, self.total_m):
            return self.p, 0.0  # with no failures (passes) mu = 0 (1) at every rho
        theta = rho / (1.0 - rho)
        lo, hi = self.p / 2, (1 + self.p) / 2
        while self.score_mu(lo, theta) <= 0 and lo > 1e-300:
            lo *= 1e-3
        while self.score_mu(hi, theta) >= 0 and 1 - hi > 1e-15:
            hi = 1 - (1 - hi) * 1e-3
        mu = float(optimize.brentq(self.score_mu, lo, hi, args=(theta,), xtol=1e-300, rtol=1e-15))
        return mu, self.excess(mu, theta)


def _moment_icc(x: Ints, m: Ints, p: float) -> float:
    """Method of moments: ``E (x_r - m_r p)^2 = m_r p (1 - p) (1 + (m_r - 1) rho)``."""
    pairs = float((m * (m - 1)).sum())
    if x.size < 2 or not 0 < p < 1 or pairs == 0:
        return 0.0
    spread = x.size / (x.size - 1) * float(((x - m * p) ** 2).sum()) / (p * (1 - p))
    return min(max((spread - float(m.sum())) / pairs, 0.0), ICC_MAX)


def _profile_bound(
    lik: _Likelihood, rho: float, target: float, grid: Floats, values: list[float]
) -> float:
    """The first rho above `rho` where the profile log-likelihood falls to `target`
    (bracketed on `grid`, where it takes `values`); ``ICC_MAX`` if it never does."""
    from scipy import optimize

    above = [i for i in range(grid.size) if grid[i] > rho and values[i] < target]
    if not above:
        return ICC_MAX
    i = above[0]
    start = max(rho, float(grid[i - 1]))
    return float(optimize.brentq(lambda r: lik.profile(r)[1] - target, start, float(grid[i]),
                                 xtol=1e-14, rtol=1e-12))  # fmt: skip


#: Where the profile likelihood of rho is evaluated before Brent's method refines it.
_RHO_GRID = np.concatenate(([0.0], np.geomspace(1e-5, ICC_MAX, 40)))


def fit_overdispersion(
    failures: npt.ArrayLike, cases: int | npt.ArrayLike, confidence_level: float = 0.95
) -> Overdispersion:
    """Fit failures per run (out of `cases`) by beta-binomial maximum likelihood.

    `cases` is the suite size, or one count per run (runs of different sizes, e.g.
    a case skipped in some runs). Parametrised by mean mu and icc rho = 1 / (a + b + 1),
    tested against rho = 0 by a likelihood ratio with the boundary-corrected p-value
    (Self & Liang 1987), with a profile-likelihood upper confidence bound of rho.

    The likelihood is computed as sums of ``log1p`` terms (see :class:`_Likelihood`),
    which are exact to rounding at every rho including 0; the maximum over rho is
    found on a grid, refined by Brent's method, and is exactly 0 when the exact score
    at rho = 0 is not positive and no grid point beats the binomial.
    """
    from scipy import optimize, stats  # deferred: `import gatecal` stays light

    level = check_probability("confidence_level", confidence_level)
    x, m = _run_counts(failures, cases)
    lik = _Likelihood(x, m)
    p = lik.p
    size = float((m * m).sum() / m.sum())  # size-weighted mean run size
    moment = _moment_icc(x, m, p)
    if lik.total_x in (0, lik.total_m):  # no failure (or no pass) at all: rho not identified
        return Overdispersion(icc=0.0, mean=p, moment_icc=moment, statistic=0.0, p_value=1.0,
                              design_effect=1.0, icc_upper=ICC_MAX,
                              confidence_level=level)  # fmt: skip
    grid = _RHO_GRID
    values = [lik.profile(float(r))[1] for r in grid]
    best = int(np.argmax(values))
    if best == 0 and lik.score_theta_at_zero() <= 0:
        rho, value = 0.0, 0.0
    else:
        low, high = float(grid[max(best - 1, 0)]), float(grid[min(best + 1, grid.size - 1)])
        found = optimize.minimize_scalar(
            lambda r: -lik.profile(r)[1], bounds=(low, high), method="bounded",
            options={"xatol": 1e-10 * high},
        )  # fmt: skip
        rho, value = float(found.x), -float(found.fun)
        if values[best] > value:
            rho, value = float(grid[best]), values[best]
    if value <= 0 or rho <= 0:  # the binomial is the best fit: rho at its boundary
        rho, value = 0.0, 0.0
    mu = lik.profile(rho)[0]
    statistic = 2 * value
    p_value = 1.0 if statistic == 0 else 0.5 * float(stats.chi2.sf(statistic, 1))
    # profile-likelihood upper bound: the first rho above the MLE that falls z^2/2 short
    z = float(stats.norm.isf((1 - level) / 2))
    upper = _profile_bound(lik, rho, value - z * z / 2, grid, values)
    for v in (mu, rho, statistic, p_value, upper):
        if not math.isfinite(v):  # a bug, never the user's input: say so plainly
            raise FloatingPointError(f"beta-binomial fit gave a non-finite value {v}")
    return Overdispersion(icc=rho, mean=mu, moment_icc=moment, statistic=statistic,
                          p_value=p_value, design_effect=1 + (size - 1) * rho,
                          icc_upper=upper, confidence_level=level)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseNoise:
    """One case's failures across the known-good runs."""

    case: str
    rate: RateEstimate


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation:
    """What ``gatecal recommend`` measured and recommends; see :func:`recommend_gate`.

    ``table[k]`` holds ``(false_alarm, detection)`` of the gate "at least k of n cases
    pass" under the conservative models. `within_budget` is the strictest gate whose
    false alarm is within the budget (the largest such k_min, at least 1: a gate that
    can fail), or None when not even "at least 1 passes" is; `recommended` is that
    gate when its detection also meets the target, else None.
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
    icc_for_gate: float
    judge_noise: RateEstimate | None
    per_case: tuple[CaseNoise, ...]
    overdispersion: Overdispersion
    correlated: bool
    regression: str
    regression_failing: float
    false_alarm_target: float
    detection_target: float
    table: tuple[tuple[float, float], ...]
    within_budget: int | None
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
        return {"k_min": k, "max_failures": self.cases - k,
                "false_alarm": self.table[k][0], "detection": self.table[k][1],
                "threshold_above": float(low), "threshold_at_most": float(high)}  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
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
            "icc_for_gate": self.icc_for_gate,
            "judge_noise": self.judge_noise.to_dict() if self.judge_noise else None,
            "overdispersion": self.overdispersion.to_dict(),
            "correlated": self.correlated,
            "per_case": [{"case": c.case, **c.rate.to_dict()} for c in self.per_case],
            "regression": self.regression,
            "regression_failing": self.regression_failing,
            "targets": {"false_alarm": self.false_alarm_target, "detection": self.detection_target},
            "recommended": self._gate(self.recommended),
            "within_budget": self._gate(self.within_budget),
            "table": [
                {"k_min": k, "false_alarm": fa, "detection": det}
                for k, (fa, det) in enumerate(self.table)
            ],
            "would_work": [p.to_dict() if p else None for p in self.plans.plans]
            if self.plans
            else None,
        }


def _failure_pmf(n: int, mean: float, icc: float) -> Floats:
    """PMF of failing cases out of n: binomial, or beta-binomial with correlation.

    Computed as the products in :class:`_Likelihood` (log-sums of ``log1p`` terms),
    so it is accurate at every icc, including tiny ones where ``betaln`` differences
    (scipy's betabinom) cancel; at icc 0 it is the binomial.
    """
    from scipy.special import gammaln

    f = np.arange(n + 1)
    if mean <= 0 or mean >= 1:
        return np.asarray(f == (n if mean >= 1 else 0), dtype=np.float64)
    theta = icc / (1.0 - icc)
    j = np.arange(n, dtype=np.float64)
    fail = _prefix(math.log(mean) + np.log1p(j * (theta / mean)))
    ok = _prefix(math.log1p(-mean) + np.log1p(j * (theta / (1.0 - mean))))
    norm = float(np.log1p(j * theta).sum())
    log_choose = gammaln(n + 1) - gammaln(f + 1) - gammaln(n - f + 1)
    return np.asarray(np.exp(log_choose + fail[f] + ok[n - f] - norm))


def _below(pass_pmf: Floats) -> Floats:
    """``P(K < k)`` for k = 0..n from the pass-count pmf: exactly 0 at k = 0 and exactly 1
    where no mass is left at or above k."""
    lo = _prefix(pass_pmf)[:-1]
    hi = np.cumsum(pass_pmf[::-1])[::-1]
    return np.asarray(lo / (lo + hi))


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseBounds:
    """What the known-good runs allow: a joint confidence region of (rate, icc).

    The region holds every (mu, rho) whose log-likelihood is within ``q / 2`` of the
    maximum, q the ``(1 + confidence_level) / 2`` quantile of chi-square with 2 degrees
    of freedom (7.38 at 95%, the one-sided level of the upper end of a 95% interval): a
    joint likelihood-ratio confidence region, so with that confidence the truth lies in
    it and every gate's false alarm is at most its largest value over it,
    simultaneously for all gates. (At the `confidence_level` quantile itself, 5.99, the
    coverage study measured up to 2% of gates over budget near icc 0.03.) It is traced
    at `iccs` (a grid from 0 to the region's largest icc, `icc_top`); at each the rate
    runs from `lows` to `highs`. At any icc the false alarm rises with the rate, so its
    largest value over the region is the largest at the `highs`.

    Attributes
    ----------
    overdispersion : Overdispersion
    icc_top : float
        The largest icc in the region (``ICC_MAX`` when the runs cannot bound it).
    iccs, lows, highs : tuple of float
    rate : RateEstimate
        The rate's range over the whole region (method ``profile likelihood``).
    """

    overdispersion: Overdispersion
    icc_top: float
    iccs: tuple[float, ...]
    lows: tuple[float, ...]
    highs: tuple[float, ...]
    rate: RateEstimate

    def false_alarms(self, n: int) -> Floats:
        """P(a healthy run of n cases fails "at least k pass"), k = 0..n: the largest over
        the region."""
        below = [_below(_failure_pmf(n, hi, icc)[::-1])
                 for icc, hi in zip(self.iccs, self.highs, strict=True)]  # fmt: skip
        return np.asarray(np.max(below, axis=0))

    def worst_point(self, n: int, failing: int) -> tuple[float, float]:
        """(rate, icc) of the region where "at most ``failing - 1`` of n fail" has its
        largest false alarm."""
        tails = [_below(_failure_pmf(n, hi, icc)[::-1])[n - failing + 1]
                 for icc, hi in zip(self.iccs, self.highs, strict=True)]  # fmt: skip
        i = int(np.argmax(tails))
        return self.highs[i], self.iccs[i]

    def detections(self, n: int, failing: int) -> Floats:
        """P(a run with `failing` cases failing a code check fails "at least k pass"):
        the smallest over the region (the other cases at the lowest rate)."""
        out = []
        for icc, lo in zip(self.iccs, self.lows, strict=True):
            rest = _failure_pmf(n - failing, lo, icc)[::-1]  # passes among the others
            out.append(_below(np.concatenate((rest, np.zeros(failing)))))
        return np.asarray(np.min(out, axis=0))


def noise_bounds(
    failures: npt.ArrayLike,
    cases: int | npt.ArrayLike,
    *,
    confidence_level: float = 0.95,
    grid: int = 24,
) -> NoiseBounds:
    """The joint (rate, icc) confidence region the gate is computed over (see
    :class:`NoiseBounds`), from the failures and the observed cases of each run.

    The icc is carried up to the region's largest value whatever the test of rho = 0
    says (a test that fails to reject is no evidence of independence). The region is
    traced at `grid` + 1 iccs evenly spaced in ``[0, icc_top]`` plus the fitted icc;
    at each, the rate's range solves ``log L(mu, rho) = max log L - q / 2`` by Brent's
    method (the log-likelihood is concave in mu).
    """
    from scipy import optimize, stats

    level = check_probability("confidence_level", confidence_level)
    x, m = _run_counts(failures, cases)
    over = fit_overdispersion(x, m, level)
    lik = _Likelihood(x, m)
    floor = over.statistic / 2 - float(stats.chi2.ppf((1 + level) / 2, 2)) / 2
    values = [lik.profile(float(r))[1] for r in _RHO_GRID]
    top = _profile_bound(lik, over.icc, floor, _RHO_GRID, values)
    iccs = sorted({top * i / grid for i in range(grid + 1)} | {over.icc})
    lows, highs = [], []
    for icc in iccs:
        theta = icc / (1 - icc)
        mu, value = lik.profile(icc)
        if value <= floor:  # the region's tip (icc_upper), up to rounding
            lows.append(mu)
            highs.append(mu)
            continue

        def gap(r: float, theta: float = theta) -> float:
            return lik.excess(r, theta) - floor

        lo = 0.0 if gap(0.0) >= 0 else optimize.brentq(gap, 0.0, mu, xtol=1e-300, rtol=1e-13)
        hi = 1.0 if gap(1.0) >= 0 else optimize.brentq(gap, mu, 1.0, xtol=1e-300, rtol=1e-13)
        lows.append(float(lo))
        highs.append(float(hi))
    total, trials = float(x.sum()), float(m.sum())
    rate = RateEstimate(failures=total, trials=trials, estimate=total / trials, low=min(lows),
                        high=max(highs), method="profile likelihood",
                        confidence_level=level)  # fmt: skip
    return NoiseBounds(overdispersion=over, icc_top=top, iccs=tuple(iccs), lows=tuple(lows),
                       highs=tuple(highs), rate=rate)  # fmt: skip


#: The fallback "what would work" search tries every suite size up to this.
PLAN_MAX_CASES = 500


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
            cache[n] = _failure_pmf(n, rate, icc)
        return math.fsum(cache[n][f + 1 :])

    if icc > 0:
        from gatecal._engines.exact import beta_rule

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
                found = SuitePlan(policy=policy, cases=n, k_min=n - most, failing=failing,
                                  false_alarm=fa, detection=det,
                                  judge_calls=float(n * policy.majority))  # fmt: skip
                break
        plans.append(found)
    return SuitePlans(noise=noise, regression=regression, false_alarm=false_alarm,
                      detection=detection, judge_checks=1, code_checks=1, max_cases=max_cases,
                      policies=policies, plans=tuple(plans))  # fmt: skip


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

    The healthy build's failing-case count is modelled as beta-binomial with the icc
    anywhere from 0 to its profile-likelihood upper bound and, at each icc, the
    pooled rate at the upper end of its design-effect-widened interval; the false
    alarm of a gate is the largest over these: conservative whether or not the runs
    are correlated, and whatever the test of rho = 0 says (`significance` only labels
    the runs ``correlated``). The regressed build is either the measured regressed
    runs (each case failing at its observed rate in them) or `regression` cases
    failing a code check with the rest at the lower rate bound, the smallest detection
    over the icc range: a conservative detection. The recommended gate is the largest
    k_min whose false alarm is at most `false_alarm`, provided its detection is at
    least `detection`; otherwise `plans` says what suite would work (searched up to
    :data:`PLAN_MAX_CASES` cases, at the point of the region worst for this suite).
    Either way `within_budget` is that largest k_min (when it is at least 1): the
    strictest gate the false-alarm budget allows, whatever its detection.
    """
    from gatecal._engines.exact import pass_count_pmf

    check_instance("data", data, RunsData, "a gatecal.RunsData (from gatecal.read_runs)")
    alpha = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    level = check_probability("confidence_level", confidence_level)
    significance = check_probability("significance", significance)
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
    cases_per_run = observed.sum(axis=1)  # cases observed in each run
    failures_per_case = failed.sum(axis=0)
    runs_per_case = observed.sum(axis=0)
    total_trials = float(observed.sum())
    missing = int(r * n - total_trials)
    noise = proportion_interval(float(failures_per_run.sum()), total_trials, level, method)
    bounds = noise_bounds(failures_per_run, cases_per_run, confidence_level=level)
    gate_noise = bounds.rate
    over = bounds.overdispersion
    per_case = sorted(
        (CaseNoise(case=c, rate=proportion_interval(float(f), float(t), level, method))
         for c, f, t in zip(cases, failures_per_case, runs_per_case, strict=True)),
        key=lambda c: (-c.rate.estimate, c.case),
    )  # fmt: skip
    judge_failed, judge_total = data.judge_verdicts("healthy")
    judge_noise = (proportion_interval(judge_failed, judge_total, level, method)
                   if judge_total else None)  # fmt: skip

    false_alarms = bounds.false_alarms(n)
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
        detections = _below(pass_count_pmf(1.0 - reg_rate))
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
        detections = bounds.detections(n, f)
        regression_text = f"{reg.describe()} ({f} of {n}, a code check)"
        failing_cases = float(f)
        # a bigger suite keeps the regression's share of the cases, not its count
        plan_regression = Regression(text=f"{f}/{n}", share=Fraction(f, n))
    table = [(float(fa), float(det)) for fa, det in zip(false_alarms, detections, strict=True)]
    admissible = [k for k, (fa, _) in enumerate(table) if fa <= alpha]
    best = max(admissible)  # k = 0 never fails, so there is always one
    within_budget = best if best >= 1 else None
    recommended = within_budget if table[best][1] >= power else None
    plans = None
    if recommended is None:
        # planned at the point of the region worst for this suite's gate "fewer failing
        # than the regression" (a bigger suite's worst point may differ a little)
        worst = bounds.worst_point(n, max(1, round(failing_cases)))
        plans = would_work(rate=worst[0], icc=worst[1], regression=plan_regression,
                           false_alarm=alpha, detection=power)  # fmt: skip
    return Recommendation(
        runs=r, regressed_runs=regressed_runs, cases=n, skipped=data.skipped,
        missing=missing, errors=data.errors + data.unscored, reruns=data.reruns,
        attempts_policy=data.attempts_policy, sessions=len(data.sessions("healthy")),
        warnings=data.warnings,
        case_order=tuple(cases),
        failures_per_run=tuple(int(f) for f in failures_per_run),
        sources=data.sources, confidence_level=level, method=method, noise=noise,
        noise_for_gate=gate_noise, icc_for_gate=bounds.icc_top, judge_noise=judge_noise,
        per_case=tuple(per_case), overdispersion=over, correlated=over.p_value < significance,
        regression=regression_text, regression_failing=failing_cases,
        false_alarm_target=alpha, detection_target=power, table=tuple(table),
        within_budget=within_budget, recommended=recommended, plans=plans,
    )  # fmt: skip
