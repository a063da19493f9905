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
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from gatecal._common.validate import ParameterError, check_probability
from gatecal._model.arrays import Floats

__all__ = [
    "CORRECTION_METHODS",
    "TOO_WIDE",
    "CorrectedRate",
    "correct_pass_rate",
    "corrected_intervals",
]


#: Interval methods for the corrected pass rate; the first is the default (best coverage
#: under both label designs: see :func:`correct_pass_rate`).
CORRECTION_METHODS = (
    "auto",
    "lang-reiczigel",
    "exact-box",
    "delta",
    "bootstrap",
    "jeffreys-simulation",
)

#: ``auto`` uses Lang-Reiczigel when both label classes have at least this many items (the
#: smallest class size of the coverage study's per-class grid, where it holds 95%), and
#: the exact box below it.
AUTO_MIN_LABELS = 20

#: An interval at least this wide says next to nothing: the judge is too weak to correct.
TOO_WIDE = 0.9

_DRAWS = 4000  # simulation draws per interval for the two simulation methods


class _Counts(NamedTuple):
    """The six counts every interval method reads: the judge said pass on `k` of `n`
    items; of `m1` labelled truly passing items it passed `tp`; of `m0` labelled truly
    failing items it failed `tn`."""

    k: Floats
    n: Floats
    tp: Floats
    m1: Floats
    tn: Floats
    m0: Floats


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
        The interval's method: one of :data:`CORRECTION_METHODS` other than ``auto``
        (``auto`` records the one it used).
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
        ``auto`` (default): ``lang-reiczigel`` when both label classes hold at least
        :data:`AUTO_MIN_LABELS` items and its interval has a positive width, else
        ``exact-box``. The other methods: ``lang-reiczigel``, ``exact-box``, ``delta``,
        ``bootstrap`` or ``jeffreys-simulation``.
    rng : seed or Generator, optional
        For the two simulation methods only (numpy ``default_rng``); the closed-form
        default needs none.

    Notes
    -----
    Counts may be fractional (an item judged several times counts once, with the share
    of its judgements that said pass).

    Which label design each interval assumes: every method conditions on the numbers of
    labelled truly passing and truly failing items, so each is meant for labels taken per
    class (a batch of passing and one of failing items) and, given those numbers, for a
    random sample of the judged population too. Lang-Reiczigel is approximate: it holds
    95% (lowest 0.949) with 20 or more labels per class, but with the few truly failing
    items a random sample brings at a high pass rate (about 3 at 95%) its coverage fell
    to 0.912, and it can collapse to a zero-width interval. ``exact-box`` is exact under
    either design: Clopper-Pearson intervals for the judged rate, sensitivity and
    specificity, each at level ``confidence ** (1/3)`` (the three counts are independent
    given the label numbers, so all three cover at once with probability at least
    `confidence`), and the corrected rate's range over that box; it is conservative and
    never zero-width. ``auto`` measured at least 0.949 under both designs
    (``experiments/calibrate_coverage.py``, ``reports/calibrate-coverage.md``).

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
    arrays = _Counts(*(np.array([v]) for v in (k, n, tp, m1, tn, m0)))
    low, high = corrected_intervals(*arrays, confidence=level, method=method, rng=rng)
    p, se, sp = k / n, tp / m1, tn / m0
    youden = se + sp - 1.0
    raw = (p + sp - 1.0) / youden if youden > 0 else None
    est = None if raw is None else min(1.0, max(0.0, raw))
    lo, hi = float(low[0]), float(high[0])
    used = method
    if method == "auto":
        used = (
            "exact-box" if bool(_auto_uses_box(arrays, confidence=level)[0]) else "lang-reiczigel"
        )
    return CorrectedRate(
        estimate=est,
        unclipped=raw,
        low=lo,
        high=hi,
        method=used,
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
) -> tuple[Floats, Floats]:
    """Interval limits ``(low, high)`` for arrays of outcomes, clipped to [0, 1].

    Where the (adjusted) Youden index is not positive the interval is [0, 1]: such a
    judge says nothing about the truth. Arguments broadcast; no validation here (the
    scalar :func:`correct_pass_rate` validates). `draws` is the number of simulated
    data sets per interval for the two simulation methods.

    Parameters
    ----------
    k, n : array_like of float
        The judge said pass on `k` of `n` items (counts may be fractional).
    tp, m1 : array_like of float
        Of `m1` labelled truly passing items, the judge passed `tp`.
    tn, m0 : array_like of float
        Of `m0` labelled truly failing items, the judge failed `tn`.
    confidence : float, default 0.95
        The intervals' confidence level, strictly between 0 and 1 (not checked here).
    method : str, default "auto"
        One of :data:`CORRECTION_METHODS`, as in :func:`correct_pass_rate`.
    rng : seed or Generator, optional
        For ``bootstrap`` and ``jeffreys-simulation`` only (numpy ``default_rng``).
    draws : int, default 4000
        Simulated data sets per interval for those two methods.

    Returns
    -------
    (low, high) : tuple of ndarray of float
        The limits of each corrected pass rate's interval, in the broadcast shape.

    Raises
    ------
    ParameterError
        If `method` is unknown.
    """
    raw = _Counts(*(np.asarray(a, dtype=np.float64) for a in (k, n, tp, m1, tn, m0)))
    counts = _Counts(*np.broadcast_arrays(*raw))
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    if method == "auto":
        box = _auto_uses_box(counts, confidence=confidence)
        low, high = _lang_reiczigel(counts, z)
        if box.any():  # (the unbroadcast counts: each Clopper-Pearson limit once)
            box_low, box_high = _exact_box(raw, confidence)
            low, high = np.where(box, box_low, low), np.where(box, box_high, high)
        return low, high
    if method == "lang-reiczigel":
        return _lang_reiczigel(counts, z)
    if method == "exact-box":
        box_low, box_high = _exact_box(raw, confidence)
        shape = counts.k.shape
        return np.broadcast_to(box_low, shape).copy(), np.broadcast_to(box_high, shape).copy()
    if method == "delta":
        return _delta(counts, z)
    gen = np.random.default_rng(rng)
    if method == "bootstrap":
        return _simulated(counts, confidence, gen, draws, bayes=False)
    if method == "jeffreys-simulation":
        return _simulated(counts, confidence, gen, draws, bayes=True)
    raise ParameterError("method", f"must be one of {', '.join(CORRECTION_METHODS)}", method)


def _auto_uses_box(counts: _Counts, *, confidence: float) -> npt.NDArray[np.bool_]:
    """Where ``auto`` takes the exact box: a label class below :data:`AUTO_MIN_LABELS`
    items, or a Lang-Reiczigel interval of no width (clipped at 0 or at 1)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    low, high = _lang_reiczigel(counts, z)
    return np.asarray((np.minimum(counts.m1, counts.m0) < AUTO_MIN_LABELS) | ~(high > low))


def _exact_box(counts: _Counts, confidence: float) -> tuple[Floats, Floats]:
    """The corrected rate's range over a box of three Clopper-Pearson intervals.

    The judged rate, sensitivity and specificity each get an exact interval at level
    ``confidence ** (1/3)``; the counts are independent given the label numbers, so the
    box holds the true triple with probability at least `confidence`, and so does the
    range of ``(p + Sp - 1) / (Se + Sp - 1)`` over it. Where ``Se + Sp > 1`` on the whole
    box that ratio of affine functions is monotone along every edge, and its range is that
    of the 8 corners; where the box reaches ``Se + Sp <= 1`` the range is [0, 1]. The low
    end is also taken at ``Se = 1`` and the high end at ``Sp = 1`` (a wider interval, still
    valid), so that neither end reaches the other: never zero-width.
    """
    k, n, tp, m1, tn, m0 = counts
    level = float(confidence) ** (1.0 / 3.0)
    p_lo, p_hi = _clopper_pearson_arrays(k, n, level)
    se_lo, se_hi = _clopper_pearson_arrays(tp, m1, level)
    sp_lo, sp_hi = _clopper_pearson_arrays(tn, m0, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        corners = np.stack(
            np.broadcast_arrays(
                *[
                    (p + sp - 1.0) / (se + sp - 1.0)
                    for p in (p_lo, p_hi)
                    for se in (se_lo, se_hi)
                    for sp in (sp_lo, sp_hi)
                ]
            )
        )
        low = np.minimum(corners.min(axis=0), (p_lo + sp_lo - 1.0) / sp_lo)
        high = np.maximum(corners.max(axis=0), p_hi / se_lo)
    inside = se_lo + sp_lo > 1.0
    return (
        np.where(inside, np.clip(low, 0.0, 1.0), 0.0),
        np.where(inside, np.clip(high, 0.0, 1.0), 1.0),
    )


def _clopper_pearson_arrays(x: Floats, m: Floats, level: float) -> tuple[Floats, Floats]:
    """Clopper-Pearson limits of `x` successes in `m` trials, elementwise: exactly 0 at
    ``x <= 0`` and 1 at ``x >= m`` (fractional counts use the same beta quantiles)."""
    from scipy import special  # deferred: `import gatecal` stays light

    tail = (1.0 - level) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        low = special.betaincinv(np.maximum(x, 1e-300), np.maximum(m - x + 1.0, 1e-300), tail)
        high = special.betaincinv(x + 1.0, np.maximum(m - x, 1e-300), 1.0 - tail)
    return np.where(x <= 0, 0.0, low), np.where(x >= m, 1.0, high)


def _finish(centre: Floats, half: Floats, youden: Floats) -> tuple[Floats, Floats]:
    ok = youden > 0
    with np.errstate(invalid="ignore"):
        low = np.where(ok, np.clip(centre - half, 0.0, 1.0), 0.0)
        high = np.where(ok, np.clip(centre + half, 0.0, 1.0), 1.0)
    return low, high


def _delta(counts: _Counts, z: float) -> tuple[Floats, Floats]:
    """Wald interval with the delta-method variance (Rogan & Gladen 1978; statistics.md §2.6)."""
    k, n, tp, m1, tn, m0 = counts
    p, se, sp = k / n, tp / m1, tn / m0
    youden = se + sp - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.clip((p + sp - 1.0) / youden, 0.0, 1.0)
        var = p * (1 - p) / n + pi**2 * se * (1 - se) / m1 + (1 - pi) ** 2 * sp * (1 - sp) / m0
        half = z * np.sqrt(var) / np.abs(youden)
        centre = (p + sp - 1.0) / youden
    return _finish(centre, half, youden)


def _lang_reiczigel(counts: _Counts, z: float) -> tuple[Floats, Floats]:
    """Lang & Reiczigel (2014): Agresti-Coull-style adjusted counts, and a shift.

    The observed rate gets ``z^2/2`` pseudo-successes and failures, sensitivity and
    specificity one each; the Rogan-Gladen delta-method interval is then computed from
    the adjusted proportions and shifted by
    ``2 z^2 (pi Se (1-Se)/m1 - (1-pi) Sp (1-Sp)/m0)`` (all adjusted).
    """
    k, n, tp, m1, tn, m0 = counts
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
    counts: _Counts,
    confidence: float,
    rng: np.random.Generator,
    draws: int,
    *,
    bayes: bool,
) -> tuple[Floats, Floats]:
    """Percentile interval of the clipped Rogan-Gladen estimate over simulated data.

    ``bayes=False``: parametric bootstrap, fresh binomial counts at the measured
    proportions. ``bayes=True``: the three proportions drawn from their Jeffreys
    posteriors ``Beta(x + 1/2, n - x + 1/2)``. A draw with ``Se + Sp <= 1`` has no
    estimate; when more than ``alpha/2`` of the draws have none, the interval is [0, 1].
    """
    shape = counts.k.shape
    kk, nn, tpp, mm1, tnn, mm0 = (a.reshape(-1, 1) for a in counts)
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
