"""Run-to-run correlation of measured runs: the beta-binomial fit of failures per run.

Runs of one build vary together when a judge is off on a whole run (a model update, a
warm cache, a bad batch); the intra-run correlation (icc) measures it, with a likelihood
ratio test against independent runs and profile-likelihood bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._common.quantiles import chi2_sf, norm_isf
from gatecal._common.validate import ParameterError, check_probability
from gatecal._engines.exact import log_prefix
from gatecal._model.arrays import Floats, Ints

__all__ = ["ICC_MAX", "Overdispersion", "fit_overdispersion"]


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
        return {
            "icc": self.icc,
            "p_value": self.p_value,
            "mean": self.mean,
            "moment_icc": self.moment_icc,
            "statistic": self.statistic,
            "design_effect": self.design_effect,
            "icc_upper": self.icc_upper,
            "confidence_level": self.confidence_level,
        }


def _run_counts(failures: npt.ArrayLike, cases: int | npt.ArrayLike) -> tuple[Ints, Ints]:
    """Failures and observed cases per run as two int arrays (runs with no cases dropped)."""
    try:
        x = np.atleast_1d(np.asarray(failures, dtype=np.float64))
    except (TypeError, ValueError):
        raise ParameterError("failures", "must be a list of counts per run", failures) from None
    try:
        m = np.broadcast_to(np.asarray(cases, dtype=np.float64), x.shape)
    except (TypeError, ValueError):
        rule = "must be the suite size or one count per run"
        raise ParameterError("cases", rule, cases) from None
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


#: Runs of more cases than this sum the likelihood's log1p terms in closed form
#: (:func:`log_rising`, :func:`reciprocal_rising`) instead of term by term: the same value
#: to about 1e-12 relative, in time independent of the cases (a 10^5-case suite's bounds
#: evaluate it thousands of times). Smaller suites keep the term-by-term sums.
_PREFIX_MAX = 4096
#: Above this z the closed forms use Stirling's series for the log-gamma and digamma
#: differences, written without cancellation; below, scipy's functions.
_STIRLING_FROM = 100.0
#: Counts up to this are summed term by term in the closed forms too (a gamma-function
#: difference of two nearly equal values would lose digits there).
_SHORT = 64


def _g(t: Floats) -> Floats:
    """``(1 + t) log1p(t) - t`` without cancellation: its series below t = 0.1."""
    out = (1 + t) * np.log1p(t) - t
    small = t < 0.1
    if small.any():
        u = t[small]
        series = np.zeros_like(u)
        for k in range(22, 1, -1):  # sum_{k>=2} (-1)^k t^k / (k (k - 1)), Horner from the top
            series = (series + (-1) ** k / (k * (k - 1))) * u
        out[small] = series * u
    return out


def log_rising(xs: Ints, c: float | Floats) -> Floats:
    """``sum_{j<x} log1p(j c)`` for each x of `xs` (c > 0), about 1e-13 relative: counts
    up to :data:`_SHORT` term by term; the rest as ``x log c + lgamma(z + x) - lgamma(z)``
    (z = 1/c), for z >= :data:`_STIRLING_FROM` by Stirling's series of that difference,
    ``z g(x/z) - log1p(x/z) / 2`` with g of :func:`_g`, plus the 1/(12 w) - 1/(360 w^3) +
    1/(1260 w^5) terms at w = z + x less at w = z (each written as one fraction; the
    remainder below 1e-17 there).

    With an array of P values of c, a (P, len(xs)) array: row i at ``c[i]``."""
    from scipy.special import gammaln

    cs, scalar = _column(c)
    out = np.empty((cs.shape[0], xs.size))
    short = xs <= _SHORT
    if short.any():
        terms = np.log1p(np.arange(_SHORT) * cs)
        prefix = np.zeros((cs.shape[0], _SHORT + 1))
        np.cumsum(terms, axis=1, out=prefix[:, 1:])
        out[:, short] = prefix[:, xs[short]]
    if not short.all():
        x = xs[~short].astype(np.float64)[None, :]
        z = 1.0 / cs
        part = np.empty((cs.shape[0], x.shape[1]))
        low = z[:, 0] < _STIRLING_FROM
        if low.any():
            zl = z[low]
            part[low] = gammaln(zl + x) - gammaln(zl) + x * np.log(cs[low])
        if not low.all():
            zh = z[~low]
            w = zh + x
            zw = zh * w
            series = (
                -x / (12 * zw)
                + x * (zh * zh + zw + w * w) / (360 * zw**3)
                - x * (zh**4 + zh**3 * w + zw * zw + zh * w**3 + w**4) / (1260 * zw**5)
            )
            part[~low] = zh * _g(x / zh) - 0.5 * np.log1p(x / zh) + series
        out[:, ~short] = part
    return out[0] if scalar else out


def reciprocal_rising(xs: Ints, z: float | Floats) -> Floats:
    """``sum_{j<x} 1 / (z + j)`` for each x of `xs` (z > 0), about 1e-13 relative: counts
    up to :data:`_SHORT` term by term; the rest ``digamma(z + x) - digamma(z)``, for
    z >= :data:`_STIRLING_FROM` by the asymptotic series of the difference,
    ``log1p(x/z) + 1/(2z) - 1/(2w) + 1/(12 z^2) - 1/(12 w^2) - ...`` (w = z + x, each
    difference written as one fraction; remainder below 1e-19 there).

    With an array of P values of z, a (P, len(xs)) array: row i at ``z[i]``."""
    from scipy.special import digamma

    zs, scalar = _column(z)
    out = np.empty((zs.shape[0], xs.size))
    short = xs <= _SHORT
    if short.any():
        prefix = np.zeros((zs.shape[0], _SHORT + 1))
        np.cumsum(1.0 / (zs + np.arange(_SHORT)), axis=1, out=prefix[:, 1:])
        out[:, short] = prefix[:, xs[short]]
    if not short.all():
        x = xs[~short].astype(np.float64)[None, :]
        part = np.empty((zs.shape[0], x.shape[1]))
        low = zs[:, 0] < _STIRLING_FROM
        if low.any():
            zl = zs[low]
            part[low] = digamma(zl + x) - digamma(zl)
        if not low.all():
            zh = zs[~low]
            w = zh + x
            zw = zh * w
            tail = (
                x / (2 * zw)
                + x * (zh + w) / (12 * zw**2)
                - x * (zh + w) * (zh * zh + w * w) / (120 * zw**4)
                + x * (zh + w) * (zh**4 + zw * zw + w**4) / (252 * zw**6)
            )
            part[~low] = np.log1p(x / zh) + tail
        out[:, ~short] = part
    return out[0] if scalar else out


def _column(value: float | Floats) -> tuple[Floats, bool]:
    """`value` as a column (P, 1) of floats, and whether it was a single number."""
    array = np.asarray(value, dtype=np.float64)
    return array.reshape(-1, 1), array.ndim == 0


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
        # each prefix sum only as long as its largest index (failures are usually few)
        self._jx, self._jy = self.j[: int(self.x.max())], self.j[: int(self.y.max())]
        self._closed = int(self.m.max()) > _PREFIX_MAX
        self._d: tuple[float, float] = (0.0, 0.0)  # (theta, c @ log prod (1 + j theta))
        self._profiles: dict[float, tuple[float, float]] = {}  # rho: profile(rho)

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
        if self._closed:
            return float(self.excess_many(np.array([mu]), np.array([theta]))[0])
        a = log_prefix(np.log1p(self._jx * (theta / mu)))[self.x] if has_x else 0.0
        b = log_prefix(np.log1p(self._jy * (theta / (1 - mu))))[self.y] if has_y else 0.0
        if self._d[0] != theta:  # the same for every mu: searches along mu reuse it
            self._d = (theta, float(c @ log_prefix(np.log1p(self.j * theta))[self.m]))
        return base + float(c @ (a + b)) - self._d[1]

    def score_mu(self, mu: float, theta: float) -> float:
        """d/dmu of the log-likelihood (decreasing in mu: the likelihood is concave in mu)."""
        if self._closed and theta > 0:
            return float(self.score_mu_many(np.array([mu]), np.array([theta]))[0])
        a = log_prefix(1.0 / (mu + self._jx * theta))[self.x]
        b = log_prefix(1.0 / (1.0 - mu + self._jy * theta))[self.y]
        return float(self.c @ (a - b))

    def excess_many(self, mu: Floats, theta: Floats) -> Floats:
        """:meth:`excess` at each (``mu[i]``, ``theta[i]``) at once: for suites of more than
        :data:`_PREFIX_MAX` cases a run, the closed forms over all points together (one pass
        of numpy over points x runs, not one small pass per point); otherwise point by
        point."""
        mu, theta = np.asarray(mu, dtype=np.float64), np.asarray(theta, dtype=np.float64)
        if not self._closed:
            pairs = zip(mu.tolist(), theta.tolist(), strict=True)
            return np.array([self.excess(a, b) for a, b in pairs])
        p, c = self.p, self.c
        has_x, has_y = self.total_x > 0, self.total_x < self.total_m
        out = np.zeros(mu.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            if has_x:
                out += float(c @ self.x) * np.log1p((mu - p) / p)
            if has_y:
                out += float(c @ self.y) * np.log1p((p - mu) / (1 - p))
        outside = (has_x & (mu <= 0)) | (has_y & (mu >= 1))
        pos = (theta > 0) & ~outside
        if pos.any():
            at, th = mu[pos], theta[pos]
            terms = np.zeros((th.size, self.m.size))
            if has_x:
                terms += log_rising(self.x, th / at)
            if has_y:
                terms += log_rising(self.y, th / (1.0 - at))
            out[pos] += terms @ c - self._log_norm(th)
        out[outside] = -math.inf
        return out

    def _log_norm(self, theta: Floats) -> Floats:
        """``c @ log prod_{j<m} (1 + j theta)`` at each theta (closed forms), the one value
        kept: the same for every mu, so searches along mu at one theta reuse it."""
        if theta.size == 1 and self._d[0] == theta[0]:
            return np.array([self._d[1]])
        out = np.asarray(log_rising(self.m, theta) @ self.c, dtype=np.float64)
        if theta.size == 1:
            self._d = (float(theta[0]), float(out[0]))
        return out

    def score_mu_many(self, mu: Floats, theta: Floats) -> Floats:
        """:meth:`score_mu` at each (``mu[i]``, ``theta[i]``) at once (closed forms over all
        points together above :data:`_PREFIX_MAX` cases a run, as :meth:`excess_many`);
        ``sum_{j<x} 1/(mu + j theta) = R(x, mu/theta) / theta``, R of
        :func:`reciprocal_rising`."""
        mu, theta = np.asarray(mu, dtype=np.float64), np.asarray(theta, dtype=np.float64)
        positive = theta > 0
        if not self._closed or not positive.any():
            pairs = zip(mu.tolist(), theta.tolist(), strict=True)
            return np.array([self.score_mu(a, b) for a, b in pairs])
        if not positive.all():  # theta 0 (the binomial's score) point by point, the rest at once
            out = np.empty(mu.shape)
            out[positive] = self.score_mu_many(mu[positive], theta[positive])
            rest = zip(mu[~positive].tolist(), theta[~positive].tolist(), strict=True)
            out[~positive] = [self.score_mu(a, b) for a, b in rest]
            return out
        scale = 1.0 / theta[:, None]
        a = reciprocal_rising(self.x, mu / theta) * scale
        a -= reciprocal_rising(self.y, (1.0 - mu) / theta) * scale
        return np.asarray(a @ self.c, dtype=np.float64)

    def score_theta_at_zero(self) -> Fraction:
        """d/dtheta of the log-likelihood at theta = 0, mu = p_hat, exactly (its sign decides
        whether the maximum can leave the boundary)."""
        p = Fraction(self.total_x, self.total_m)
        total = Fraction(0)
        for x, y, m, c in zip(
            self.x.tolist(), self.y.tolist(), self.m.tolist(), self.c.tolist(), strict=True
        ):
            total += int(c) * (
                Fraction(x * (x - 1)) / p + Fraction(y * (y - 1)) / (1 - p) - m * (m - 1)
            )
        return total / 2

    def profile(self, rho: float) -> tuple[float, float]:
        """(mu maximising the likelihood at this rho, the excess log-likelihood there),
        kept once found (the fit and the bounds ask for the same iccs)."""
        from scipy import optimize

        if rho in self._profiles:
            return self._profiles[rho]
        if rho == 0 or self.total_x in (0, self.total_m):
            return self.p, 0.0  # with no failures (passes) mu = 0 (1) at every rho
        theta = rho / (1.0 - rho)
        lo, hi = self.p / 2, (1 + self.p) / 2
        while self.score_mu(lo, theta) <= 0 and lo > 1e-300:
            lo *= 1e-3
        while self.score_mu(hi, theta) >= 0 and 1 - hi > 1e-15:
            hi = 1 - (1 - hi) * 1e-3
        mu = float(optimize.brentq(self.score_mu, lo, hi, args=(theta,), xtol=1e-300, rtol=1e-15))
        self._profiles[rho] = (mu, self.excess(mu, theta))
        return self._profiles[rho]

    def profiles(self, rhos: Floats) -> tuple[Floats, Floats]:
        """:meth:`profile` at each icc of `rhos`: above :data:`_PREFIX_MAX` cases a run,
        for all at once by bisection of the score in mu (decreasing: the likelihood is
        concave in mu) from the brackets :meth:`profile` starts from, each to within
        4e-16 of its root, the score evaluated at every point in one pass; otherwise, and
        wherever that does not settle in 200 halvings, one by one."""
        rhos = np.asarray(rhos, dtype=np.float64)
        if self._closed and self.total_x not in (0, self.total_m):
            new = np.asarray(sorted({r for r in rhos.tolist() if r > 0} - self._profiles.keys()))
            theta = new / (1.0 - new)
            lo, hi = np.full(new.size, self.p / 2), np.full(new.size, (1 + self.p) / 2)
            for _ in range(110):  # as profile() widens its bracket
                need = (self.score_mu_many(lo, theta) <= 0) & (lo > 1e-300)
                if not need.any():
                    break
                lo[need] *= 1e-3
            for _ in range(40):
                need = (self.score_mu_many(hi, theta) >= 0) & (1 - hi > 1e-15)
                if not need.any():
                    break
                hi[need] = 1 - (1 - hi[need]) * 1e-3
            wide = np.ones(new.size, dtype=bool)
            for _ in range(200):
                at = np.flatnonzero(wide)
                if not at.size:
                    break
                mid = (lo[at] + hi[at]) / 2
                score = self.score_mu_many(mid, theta[at])
                lo[at] = np.where(score >= 0, mid, lo[at])
                hi[at] = np.where(score <= 0, mid, hi[at])
                wide[at] = hi[at] - lo[at] > 4e-16 * hi[at]
            mu = (lo + hi) / 2
            excess = self.excess_many(mu, theta)
            for r, a, b, far in zip(new.tolist(), mu.tolist(), excess.tolist(), wide, strict=True):
                if not far:
                    self._profiles[r] = (a, b)
        mus, values = zip(*(self.profile(r) for r in rhos.tolist()), strict=True)
        return np.asarray(mus, dtype=np.float64), np.asarray(values, dtype=np.float64)


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
    return float(
        optimize.brentq(
            lambda r: lik.profile(r)[1] - target, start, float(grid[i]), xtol=1e-14, rtol=1e-12
        )
    )


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

    Parameters
    ----------
    failures : array_like of int
        The failing cases of each run, whole numbers from 0 to that run's cases; at least
        one run.
    cases : int or array_like of int
        The suite size, or one size per run (the same length as `failures`); at least one
        run must have a case.
    confidence_level : float, default 0.95
        The level of the icc's upper confidence bound, in [0, 1].

    Returns
    -------
    Overdispersion
        The fitted mean failure rate and icc, the test of icc = 0, and the icc's upper
        bound.

    Raises
    ------
    ParameterError
        If the counts are not whole numbers >= 0, exceed their run's cases, are empty,
        or the sizes do not match the runs.
    """
    level = check_probability("confidence_level", confidence_level)
    x, m = _run_counts(failures, cases)
    return _fit(_Likelihood(x, m), x, m, level)


def _fit(lik: _Likelihood, x: Ints, m: Ints, level: float) -> Overdispersion:
    """:func:`fit_overdispersion` of the runs (x, m), whose likelihood is `lik` (which
    keeps the profiles found)."""
    from scipy import optimize

    p = lik.p
    size = float((m * m).sum() / m.sum())  # size-weighted mean run size
    moment = _moment_icc(x, m, p)
    if lik.total_x in (0, lik.total_m):  # no failure (or no pass) at all: rho not identified
        return Overdispersion(
            icc=0.0,
            mean=p,
            moment_icc=moment,
            statistic=0.0,
            p_value=1.0,
            design_effect=1.0,
            icc_upper=ICC_MAX,
            confidence_level=level,
        )
    grid = _RHO_GRID
    values = lik.profiles(grid)[1].tolist()
    best = int(np.argmax(values))
    if best == 0 and lik.score_theta_at_zero() <= 0:
        rho, value = 0.0, 0.0
    else:
        low, high = float(grid[max(best - 1, 0)]), float(grid[min(best + 1, grid.size - 1)])
        found = optimize.minimize_scalar(
            lambda r: -lik.profile(r)[1],
            bounds=(low, high),
            method="bounded",
            options={"xatol": 1e-10 * high},
        )
        rho, value = float(found.x), -float(found.fun)
        if values[best] > value:
            rho, value = float(grid[best]), values[best]
    if value <= 0 or rho <= 0:  # the binomial is the best fit: rho at its boundary
        rho, value = 0.0, 0.0
    mu = lik.profile(rho)[0]
    statistic = 2 * value
    p_value = 1.0 if statistic == 0 else 0.5 * chi2_sf(statistic, 1)
    # profile-likelihood upper bound: the first rho above the MLE that falls z^2/2 short
    z = norm_isf((1 - level) / 2)
    upper = _profile_bound(lik, rho, value - z * z / 2, grid, values)
    for v in (mu, rho, statistic, p_value, upper):
        if not math.isfinite(v):  # a bug, never the user's input: say so plainly
            raise FloatingPointError(f"beta-binomial fit gave a non-finite value {v}")
    return Overdispersion(
        icc=rho,
        mean=mu,
        moment_icc=moment,
        statistic=statistic,
        p_value=p_value,
        design_effect=1 + (size - 1) * rho,
        icc_upper=upper,
        confidence_level=level,
    )
