"""Confidence intervals, one home each: binomial consistency intervals of counts, and the
Wilson, Clopper-Pearson and Jeffreys intervals of a proportion.

scipy and numpy are imported where they are needed, so the command line can name the
methods without importing either.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from gatecal._common.contracts import FieldsJSON, fields_dict
from gatecal._common.quantiles import beta_ppf, norm_isf
from gatecal._common.validate import ParameterError, check_count, check_level, check_probability

__all__ = [
    "CI_METHODS",
    "Estimate",
    "Interval",
    "RateEstimate",
    "binomial_interval",
    "clopper_pearson",
    "proportion_interval",
]

CI_METHODS = ("wilson", "clopper-pearson", "jeffreys")
CiMethod = Literal["wilson", "clopper-pearson", "jeffreys"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate(FieldsJSON):
    """A point estimate with its confidence interval and the method of the interval."""

    estimate: float
    low: float
    high: float
    method: str


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
        """The estimate first, then the level and the counts it comes from."""
        names = ("estimate", "low", "high", "method", "confidence_level", "failures", "trials")
        return fields_dict(self, names)


def proportion_interval(
    failures: float, trials: float, confidence_level: float = 0.95, method: str = "wilson"
) -> RateEstimate:
    """Confidence interval of a proportion: Wilson (default), Clopper-Pearson or Jeffreys.

    References: Brown, Cai & DasGupta (2001), Statistical Science 16(2):101-133.
    Fractional counts are allowed (an effective sample size).

    Parameters
    ----------
    failures : float
        The failures counted, in [0, `trials`]; may be fractional.
    trials : float
        The trials counted, above 0; may be fractional (an effective sample size).
    confidence_level : float, default 0.95
        The interval's coverage, in [0, 1] (in practice strictly between).
    method : {"wilson", "clopper-pearson", "jeffreys"}, default "wilson"
        The interval's construction.

    Returns
    -------
    RateEstimate
        The failure rate ``failures / trials`` with its interval's `low` and `high`.

    Raises
    ------
    ParameterError
        If `method` is unknown, `confidence_level` is not in [0, 1], `trials` is not
        positive, or `failures` lies outside [0, `trials`].
    """
    if method not in CI_METHODS:
        raise ParameterError("method", f"must be one of {', '.join(CI_METHODS)}", method)
    level = check_probability("confidence_level", confidence_level)
    if not trials > 0 or not 0 <= failures <= trials:
        raise ParameterError("failures", f"must lie in [0, trials = {trials}]", failures)
    k, n = float(failures), float(trials)
    p = k / n
    alpha = 1.0 - level
    if method == "wilson":
        z = norm_isf(alpha / 2)
        center = (k + z * z / 2) / (n + z * z)
        half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
        # the bounds at 0 (or all) failures are exactly 0 (or 1), not a rounding residue
        low = 0.0 if k == 0 else max(0.0, center - half)
        high = 1.0 if k == n else min(1.0, center + half)
    elif method == "clopper-pearson":
        low, high = clopper_pearson(k, n, level)
    else:
        low = 0.0 if k == 0 else beta_ppf(alpha / 2, k + 0.5, n - k + 0.5)
        high = 1.0 if k == n else beta_ppf(1 - alpha / 2, k + 0.5, n - k + 0.5)
    return RateEstimate(
        failures=k, trials=n, estimate=p, low=low, high=high, method=method, confidence_level=level
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A closed interval ``[low, high]``."""

    low: int
    high: int

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and self.low <= value <= self.high


def binomial_interval(n: int, p: float, confidence_level: float = 0.99) -> Interval:
    """Central interval of Binomial(`n`, `p`) holding at least `confidence_level` of it.

    ``[ppf(a/2), ppf(1 - a/2)]`` with ``a = 1 - confidence_level``: a count below
    `low` or above `high` each has probability at most ``a/2``. The quantiles are
    those of ``scipy.stats.binom.ppf`` (the tests pin them to it), computed here
    from the exact binomial pmf so that the hot path does not import scipy.stats
    (about a second).

    Parameters
    ----------
    n : int
        The number of trials, at least 0.
    p : float
        The success probability, in [0, 1].
    confidence_level : float, default 0.99
        The least share of the distribution the interval holds, strictly between 0 and 1.

    Returns
    -------
    Interval
        The integer bounds `low` and `high` of the count.

    Raises
    ------
    ParameterError
        If `n` is negative, `p` is outside [0, 1], or the level is outside (0, 1).
    """
    n = check_count("n", n, low=0)
    p = check_probability("p", p)
    level = check_level("confidence_level", confidence_level)
    tail = (1.0 - level) / 2.0
    low, high = _binomial_quantiles(n, p, tail, 1.0 - tail)
    return Interval(low=low, high=high)


def _binomial_quantiles(n: int, p: float, q_low: float, q_high: float) -> tuple[int, int]:
    """``ppf(q_low)`` and ``ppf(q_high)`` of Binomial(n, p): the smallest k with cdf(k) >= q.

    As scipy defines them: ``ppf(0) = -1`` and ``ppf(1) = n``. The pmf is summed over
    the support within ``40 sd + 40`` of the mode (Bernstein's inequality puts less
    than 1e-26 of the mass outside), from its ratios ``pmf(k + 1) / pmf(k) =
    (n - k) p / ((k + 1)(1 - p))`` taken in logarithms, so nothing over- or underflows
    at any n; the lower quantile uses the cdf, the upper one the survival function,
    each summed from its own tail so that a small tail keeps its relative accuracy.
    """
    if n == 0 or p == 0.0 or p == 1.0:  # a point mass at 0 or n
        point = n if p == 1.0 else 0

        def at(q: float) -> int:
            return -1 if q <= 0.0 else (n if q >= 1.0 else point)

        return at(q_low), at(q_high)
    mode = min(n, math.floor((n + 1) * p))
    width = math.ceil(40.0 * math.sqrt(n * p * (1.0 - p)) + 40.0)
    lo, hi = max(0, mode - width), min(n, mode + width)
    import numpy as np  # deferred, as scipy above

    ks = np.arange(lo, hi, dtype=np.float64)  # ratio k -> k + 1 for k = lo..hi-1
    log_ratio = np.log((n - ks) / (ks + 1.0)) + (math.log(p) - math.log1p(-p))
    log_w = np.empty(hi - lo + 1)
    at_mode = mode - lo
    log_w[at_mode] = 0.0
    np.cumsum(log_ratio[at_mode:], out=log_w[at_mode + 1 :])  # up from the mode
    np.cumsum(-log_ratio[:at_mode][::-1], out=log_w[:at_mode][::-1])  # down from it
    w = np.exp(log_w)
    total = float(w.sum())
    cdf = np.cumsum(w) / total
    sf = np.cumsum(w[::-1])[::-1] / total  # sf[i] = P(K >= lo + i)

    def ppf(q: float) -> int:
        if q <= 0.0:
            return -1
        if q >= 1.0:
            return n
        if q < 0.5:
            return lo + int(np.searchsorted(cdf, q))  # first k with cdf(k) >= q
        # cdf(k) >= q  <=>  P(K > k) <= 1 - q: the first k whose upper tail is that small
        above = np.append(sf[1:], 0.0)  # P(K > lo + i)
        return lo + int(np.argmax(above <= 1.0 - q))

    return ppf(q_low), ppf(q_high)


def clopper_pearson(k: float, n: float, confidence_level: float) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of `k` successes in `n` trials, ``(low, high)``.

    Beta quantiles ``B(a/2; k, n - k + 1)`` and ``B(1 - a/2; k + 1, n - k)``, exactly 0 at
    ``k <= 0`` and 1 at ``k >= n``; fractional (effective) counts use the same quantiles.
    """
    alpha = 1.0 - confidence_level
    low = 0.0 if k <= 0 else beta_ppf(alpha / 2, k, n - k + 1)
    high = 1.0 if k >= n else beta_ppf(1 - alpha / 2, k + 1, n - k)
    return low, high
