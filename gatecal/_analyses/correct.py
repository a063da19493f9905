"""Correct an observed judged pass rate for the judge's errors (Rogan-Gladen), with intervals.

Every interval method is vectorised over numpy arrays, so a coverage study can evaluate it
on every possible outcome at once; :func:`correct_pass_rate` is the scalar front door.
Which method is the default was decided by measured coverage, not habit: see
``experiments/calibrate_coverage.py`` and ``reports/calibrate-coverage.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._common.validate import ParameterError, check_probability

__all__ = [
    "CORRECTION_METHODS",
    "TOO_WIDE",
    "CorrectedRate",
    "correct_pass_rate",
    "corrected_intervals",
]

FloatArray = npt.NDArray[np.float64]

#: Interval methods for the corrected pass rate; the first is the default (best coverage).
CORRECTION_METHODS = ("lang-reiczigel", "delta", "bootstrap", "jeffreys-simulation")

#: An interval at least this wide says next to nothing: the judge is too weak to correct.
TOO_WIDE = 0.9

_DRAWS = 4000  # simulation draws per interval for the two simulation methods


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectedRate:
    """The true pass rate behind an observed judged pass rate.

    Attributes
    ----------
    estimate : float or None
        Rogan-Gladen ``(p + Sp - 1) / (Se + Sp - 1)``, clipped to [0, 1]; None when the
        judge is no better than chance (``Se + Sp <= 1``), where it means nothing.
    unclipped : float or None
        The same before clipping; outside [0, 1] when sampling noise pushed it there.
    low, high : float
        The confidence interval, inside [0, 1]: it carries the sampling error of the
        observed rate and of the calibration (sensitivity and specificity).
    method : str
        One of :data:`CORRECTION_METHODS`.
    confidence_level : float
    observed, sensitivity, specificity : float
        The three measured proportions the correction used.
    too_weak : bool
        ``Se + Sp <= 1`` or the interval is at least :data:`TOO_WIDE` wide.
    """

    estimate: float | None
    unclipped: float | None
    low: float
    high: float
    method: str
    confidence_level: float
    observed: float
    sensitivity: float
    specificity: float
    too_weak: bool

    @property
    def clipped(self) -> bool:
        """True when the unclipped estimate fell outside [0, 1]."""
        return self.unclipped is not None and not 0.0 <= self.unclipped <= 1.0

    @property
    def youden(self) -> float:
        """``Se + Sp - 1``: 1 for a perfect judge, 0 for a coin."""
        return self.sensitivity + self.specificity - 1.0

    def verdict(self) -> str:
        """One sentence for a reader: the corrected rate, or why there is none."""
        if self.estimate is None:
            return (
                f"the judge is too weak to correct: sensitivity + specificity = "
                f"{self.sensitivity + self.specificity:.3f} <= 1, so its verdicts carry no "
                "information about the true pass rate"
            )
        text = (
            f"true pass rate {self.estimate:.3f}, {100 * self.confidence_level:g}% interval "
            f"[{self.low:.3f}, {self.high:.3f}] ({self.method})"
        )
        if self.clipped:
            text += f"; the raw estimate {self.unclipped:.3f} was clipped to [0, 1]"
        if self.too_weak:
            text += (
                "; the judge is too weak to correct: the interval spans nearly everything, "
                "label more items or use a better judge"
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "method": self.method,
            "confidence_level": self.confidence_level,
            "unclipped": self.unclipped,
            "clipped": self.clipped,
            "too_weak": self.too_weak,
            "observed": self.observed,
            "sensitivity": self.sensitivity,
            "specificity": self.specificity,
        }


def _count_pair(name: str, value: Any) -> tuple[float, float]:
    """``(successes, trials)`` with 0 <= successes <= trials and trials > 0."""
    rule = "must be a pair (successes, trials) with 0 <= successes <= trials and trials > 0"
    try:
        k, n = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ParameterError(name, rule, value) from None
    if not (math.isfinite(k) and math.isfinite(n) and n > 0 and 0 <= k <= n):
        raise ParameterError(name, rule, value)
    return k, n


def correct_pass_rate(
    *,
    observed: tuple[float, float],
    sensitivity: tuple[float, float],
    specificity: tuple[float, float],
    confidence: float = 0.95,
    method: str = CORRECTION_METHODS[0],
    rng: Any = None,
) -> CorrectedRate:
    """The true pass rate from a judged one, corrected for the judge's measured errors.

    Parameters
    ----------
    observed : (k, n)
        The judge said pass on `k` of `n` items (a nightly run).
    sensitivity : (tp, positives)
        Labelled truly passing items, and how many of them the judge passed.
    specificity : (tn, negatives)
        Labelled truly failing items, and how many of them the judge failed (an
        unparseable reply counts as a fail, as it does in the gate).
    confidence : float
        Confidence level of the interval.
    method : str
        ``lang-reiczigel`` (default; the best measured coverage), ``delta``,
        ``bootstrap`` or ``jeffreys-simulation``.
    rng : seed or Generator, optional
        For the two simulation methods only (numpy ``default_rng``); the closed-form
        default needs none.

    Counts may be fractional (an item judged several times counts once, with the share
    of its judgements that said pass).

    References
    ----------
    Rogan & Gladen (1978), Am J Epidemiol 107(1):71-76. Lang & Reiczigel (2014),
    Prev Vet Med 113:13-22.
    """
    k, n = _count_pair("observed", observed)
    tp, m1 = _count_pair("sensitivity", sensitivity)
    tn, m0 = _count_pair("specificity", specificity)
    level = check_probability("confidence", confidence)
    if not 0 < level < 1:
        raise ParameterError("confidence", "must be in (0, 1)", confidence)
    if method not in CORRECTION_METHODS:
        raise ParameterError("method", f"must be one of {', '.join(CORRECTION_METHODS)}", method)
    arrays = [np.array([v]) for v in (k, n, tp, m1, tn, m0)]
    low, high = corrected_intervals(*arrays, confidence=level, method=method, rng=rng)
    p, se, sp = k / n, tp / m1, tn / m0
    youden = se + sp - 1.0
    raw = (p + sp - 1.0) / youden if youden > 0 else None
    est = None if raw is None else min(1.0, max(0.0, raw))
    lo, hi = float(low[0]), float(high[0])
    return CorrectedRate(
        estimate=est,
        unclipped=raw,
        low=lo,
        high=hi,
        method=method,
        confidence_level=level,
        observed=p,
        sensitivity=se,
        specificity=sp,
        too_weak=raw is None or hi - lo >= TOO_WIDE,
    )


def corrected_intervals(
    k: npt.ArrayLike,
    n: npt.ArrayLike,
    tp: npt.ArrayLike,
    m1: npt.ArrayLike,
    tn: npt.ArrayLike,
    m0: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    method: str = CORRECTION_METHODS[0],
    rng: Any = None,
    draws: int = _DRAWS,
) -> tuple[FloatArray, FloatArray]:
    """Interval limits ``(low, high)`` for arrays of outcomes, clipped to [0, 1].

    Where the (adjusted) Youden index is not positive the interval is [0, 1]: such a
    judge says nothing about the truth. Arguments broadcast; no validation here (the
    scalar :func:`correct_pass_rate` validates). `draws` is the number of simulated
    data sets per interval for the two simulation methods.
    """
    kk, nn, tpp, mm1, tnn, mm0 = (
        np.asarray(a, dtype=np.float64) for a in np.broadcast_arrays(k, n, tp, m1, tn, m0)
    )
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    if method == "lang-reiczigel":
        return _lang_reiczigel(kk, nn, tpp, mm1, tnn, mm0, z)
    if method == "delta":
        return _delta(kk, nn, tpp, mm1, tnn, mm0, z)
    gen = np.random.default_rng(rng)
    if method == "bootstrap":
        return _simulated(kk, nn, tpp, mm1, tnn, mm0, confidence, gen, draws, bayes=False)
    if method == "jeffreys-simulation":
        return _simulated(kk, nn, tpp, mm1, tnn, mm0, confidence, gen, draws, bayes=True)
    raise ParameterError("method", f"must be one of {', '.join(CORRECTION_METHODS)}", method)


def _finish(
    centre: FloatArray, half: FloatArray, youden: FloatArray
) -> tuple[FloatArray, FloatArray]:
    ok = youden > 0
    with np.errstate(invalid="ignore"):
        low = np.where(ok, np.clip(centre - half, 0.0, 1.0), 0.0)
        high = np.where(ok, np.clip(centre + half, 0.0, 1.0), 1.0)
    return low, high


def _delta(
    k: FloatArray,
    n: FloatArray,
    tp: FloatArray,
    m1: FloatArray,
    tn: FloatArray,
    m0: FloatArray,
    z: float,
) -> tuple[FloatArray, FloatArray]:
    """Wald interval with the delta-method variance (Rogan & Gladen 1978; statistics.md §2.6)."""
    p, se, sp = k / n, tp / m1, tn / m0
    youden = se + sp - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.clip((p + sp - 1.0) / youden, 0.0, 1.0)
        var = p * (1 - p) / n + pi**2 * se * (1 - se) / m1 + (1 - pi) ** 2 * sp * (1 - sp) / m0
        half = z * np.sqrt(var) / np.abs(youden)
        centre = (p + sp - 1.0) / youden
    return _finish(centre, half, youden)


def _lang_reiczigel(
    k: FloatArray,
    n: FloatArray,
    tp: FloatArray,
    m1: FloatArray,
    tn: FloatArray,
    m0: FloatArray,
    z: float,
) -> tuple[FloatArray, FloatArray]:
    """Lang & Reiczigel (2014): Agresti-Coull-style adjusted counts, and a shift.

    The observed rate gets ``z^2/2`` pseudo-successes and failures, sensitivity and
    specificity one each; the Rogan-Gladen delta-method interval is then computed from
    the adjusted proportions and shifted by
    ``2 z^2 (pi Se (1-Se)/m1 - (1-pi) Sp (1-Sp)/m0)`` (all adjusted).
    """
    n_, m1_, m0_ = n + z * z, m1 + 2.0, m0 + 2.0
    p = (k + z * z / 2) / n_
    se = (tp + 1.0) / m1_
    sp = (tn + 1.0) / m0_
    youden = se + sp - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = (p + sp - 1.0) / youden
        var = p * (1 - p) / n_ + pi**2 * se * (1 - se) / m1_ + (1 - pi) ** 2 * sp * (1 - sp) / m0_
        half = z * np.sqrt(var) / np.abs(youden)
        shift = 2 * z * z * (pi * se * (1 - se) / m1_ - (1 - pi) * sp * (1 - sp) / m0_)
    return _finish(pi + shift, half, youden)


def _simulated(
    k: FloatArray,
    n: FloatArray,
    tp: FloatArray,
    m1: FloatArray,
    tn: FloatArray,
    m0: FloatArray,
    confidence: float,
    rng: np.random.Generator,
    draws: int,
    *,
    bayes: bool,
) -> tuple[FloatArray, FloatArray]:
    """Percentile interval of the clipped Rogan-Gladen estimate over simulated data.

    ``bayes=False``: parametric bootstrap, fresh binomial counts at the measured
    proportions. ``bayes=True``: the three proportions drawn from their Jeffreys
    posteriors ``Beta(x + 1/2, n - x + 1/2)``. A draw with ``Se + Sp <= 1`` has no
    estimate; when more than ``alpha/2`` of the draws have none, the interval is [0, 1].
    """
    shape = k.shape
    flat = [a.reshape(-1, 1) for a in (k, n, tp, m1, tn, m0)]
    kk, nn, tpp, mm1, tnn, mm0 = flat
    size = (kk.shape[0], draws)
    if bayes:
        p = rng.beta(kk + 0.5, nn - kk + 0.5, size)
        se = rng.beta(tpp + 0.5, mm1 - tpp + 0.5, size)
        sp = rng.beta(tnn + 0.5, mm0 - tnn + 0.5, size)
    else:
        p = rng.binomial(np.rint(nn).astype(np.int64), kk / nn, size) / nn
        se = rng.binomial(np.rint(mm1).astype(np.int64), tpp / mm1, size) / mm1
        sp = rng.binomial(np.rint(mm0).astype(np.int64), tnn / mm0, size) / mm0
    youden = se + sp - 1.0
    defined = youden > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.where(defined, np.clip((p + sp - 1.0) / youden, 0.0, 1.0), np.nan)
    alpha = 1.0 - confidence
    undefined = 1.0 - defined.mean(axis=1)
    enough = undefined <= alpha / 2
    safe = np.where(enough[:, None], pi, 0.5)
    low, high = np.nanquantile(safe, [alpha / 2, 1 - alpha / 2], axis=1)
    low = np.where(enough, low, 0.0)
    high = np.where(enough, high, 1.0)
    return low.reshape(shape), high.reshape(shape)
