"""What known-good runs allow: the confidence set of (rate, icc), and each gate's bound.

A gate's false alarm is bounded by its own one-sided profile-likelihood bound over
(rate, icc): the largest false alarm over the set where twice the log-likelihood is within
``chi2_1`` of its maximum, found by search (a bracketed root in the rate at each icc, Brent
over the icc); detection is bounded from below the same way. The joint region at
``--confidence`` is what the printed intervals quote.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gatecal._analyses.noise.overdispersion import (
    _RHO_GRID,
    Overdispersion,
    _fit,
    _Likelihood,
    _profile_bound,
    _run_counts,
)
from gatecal._analyses.noise.tails import (
    _WIDE,
    _failing_below,
    _failing_pmf,
    _in_windows,
    _passes,
    _places,
    _raise,
    gate_fail_probabilities,
)
from gatecal._common.intervals import RateEstimate
from gatecal._common.quantiles import chi2_ppf
from gatecal._common.validate import ParameterError, check_probability
from gatecal._model.arrays import Floats

__all__ = ["GATE_LEVEL", "NoiseBounds", "noise_bounds"]


#: The one-sided level of each gate's bound: its false alarm is at most the largest over
#: the (rate, icc) set where twice the log-likelihood is within the 99% point of
#: chi-square with 1 degree of freedom (6.63) of its maximum, the upper end of a two-sided
#: 99% profile-likelihood interval of that gate's false alarm. Calibrated by simulation
#: (experiments/recommend_coverage.py): at 0.99 (5.41) up to 1.3% of data sets got a gate
#: over budget in truth with 100 runs of 20 cases at icc 0.03 (9 of 900 in two runs). At
#: 0.995 the 1% target for 40 runs or more is met on the estimate but not proven at icc 0.2
#: with 60 cases x 40 runs: 5 of 1,000 data sets over budget, Wilson [0.2%, 1.2%]
#: (reports/recommend-coverage-worst.md; an audit drew 11 of 1,000 there).
GATE_LEVEL = 0.995

#: Where the gate's bound first evaluates the region's edge (evenly spaced iccs) before a
#: bounded one-dimensional search finds each gate's largest value from the best of them.
_GATE_GRID = 24

#: The gate's bound searches each gate's best interval of iccs to this share of it.
_RHO_TOL = 1e-3
# Above this many gates (a suite of more cases) the per-gate Brent searches give way to
# passes over the edge shared by every gate at once (NoiseBounds._many): a grid of
# _MANY_GRID + 1 points, then one point where each gate's largest value lies, rounded
# to leave at most _MANY_POINTS of them. Their number does not grow with the
# gates, each costing the pmf's window (and a place, the tails of the gates it and its
# neighbours place). On 10^4 and 10^5 cases each value of 1e-12 to 1 came within 1.5e-4
# relative of the best a finer search and a 401-point brute force found
# (reports/many-gates-accuracy.md, experiments/many_gates_accuracy.py); values below
# 1e-12 (far tails, steep along the edge) fell up to 25% short.
_PER_GATE_MAX = 201
_MANY_GRID, _MANY_POINTS = 64, 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseBounds:
    """What the known-good runs allow: each gate's bound and a joint confidence region.

    **The gates.** The false alarm of a gate is a function of the (rate, icc) the runs
    were drawn at; its bound is the upper end of a profile-likelihood interval of that
    function: the largest false alarm over the set of (mu, rho) where
    ``2 (max log L - log L(mu, rho)) <= gate_cutoff``, with ``gate_cutoff`` the
    ``2 gate_level - 1`` quantile of chi-square with one degree of freedom (6.63 at
    0.995). One bound per gate, each at one-sided level ``gate_level``: not a region
    holding for all gates at once, which a CI job never needs (it runs one gate). The
    level is calibrated, not assumed: a one-sided 95% bound (2.71) is not valid with 20
    runs; at 0.995 the coverage study measured the share of data sets given a gate over
    budget in truth (``experiments/recommend_coverage.py``). Detection is bounded the same
    way from below. At any icc the false alarm rises with the rate, so each gate's
    largest value lies on the set's upper edge ``mu = edge(rho)`` (a bracketed root of
    the log-likelihood, concave in mu); over rho it is found by a bounded search
    (:meth:`largest`), not sampled.

    **What is printed.** The joint region at ``confidence_level``: every (mu, rho) whose
    log-likelihood is within ``q / 2`` of the maximum, q the ``(1 + confidence_level) /
    2`` quantile of chi-square with 2 degrees of freedom (7.38 at 95%), traced at `iccs`
    (from 0 to its largest icc, `icc_top`), the rate running from `lows` to `highs`.

    Attributes
    ----------
    overdispersion : Overdispersion
    icc_top : float
        The largest icc in the printed region (``ICC_MAX`` when the runs cannot bound it).
    iccs, lows, highs : tuple of float
    rate : RateEstimate
        The rate's range over the printed region (method ``profile likelihood``).
    gate_level, gate_cutoff : float
    gate_icc_top, gate_icc_bottom : float
        The largest icc of the gates' set (``ICC_MAX`` when the runs cannot bound it) and
        the smallest (0 unless the runs rule out independence at that level).
    """

    overdispersion: Overdispersion
    icc_top: float
    iccs: tuple[float, ...]
    lows: tuple[float, ...]
    highs: tuple[float, ...]
    rate: RateEstimate
    gate_level: float
    gate_cutoff: float
    gate_icc_top: float
    gate_icc_bottom: float
    likelihood: _Likelihood = field(repr=False, compare=False)
    gate_floor: float = field(repr=False, compare=False)
    memo: dict[tuple[bool, float], float] = field(default_factory=dict, repr=False, compare=False)
    inside: dict[bool, list[float]] = field(default_factory=dict, repr=False, compare=False)

    def edge(self, rho: float, upper: bool = True) -> float:
        """The largest (`upper`) or smallest rate of the gates' set at icc `rho`: the root
        of ``log L(mu, rho) = max log L - gate_cutoff / 2`` on that side of the profile
        maximum (0 or 1 when the set reaches it; the profile maximum itself at the tip).

        Newton's method from outside the set, started on the line through the edges
        already found at the two nearest iccs (at the nearest one's edge when only one is
        known), stepped outward until outside: the log-likelihood is concave in mu, so
        from outside every step stays outside and approaches the root monotonically;
        Brent's method on the bracket from the profile maximum wherever that does not
        settle within 12 steps.
        """
        key = (upper, rho)
        if key in self.memo:
            return self.memo[key]
        theta = rho / (1 - rho)
        out = None
        near = self.inside.setdefault(upper, [])  # iccs whose edge is inside (0, 1), sorted
        if near and self.gate_icc_bottom < rho < self.gate_icc_top:
            at = bisect.bisect_left(near, rho)
            two = sorted(near[max(at - 2, 0) : at + 2], key=lambda r: abs(r - rho))[:2]
            start = self.memo[(upper, two[0])]
            if len(two) == 2:
                (r0, e0), (r1, e1) = ((r, self.memo[(upper, r)]) for r in two)
                line = e0 + (e1 - e0) * (rho - r0) / (r1 - r0)
                start = line if 0 < line < 1 else start
            out = self._newton(start, theta, upper)
        if out is None:
            out = self._bracketed(rho, theta, upper)
        self.memo[key] = out
        if 0 < out < 1:
            bisect.insort(near, rho)
        return out

    def _newton(self, start: float, theta: float, upper: bool) -> float | None:
        # One point of _newton_edges, step for step (the same results bit for bit), in
        # Python floats: through _newton_edges a lone point costs twice as much (a
        # 200-case suite's bounds, measured), and small suites find their edges one by one.
        lik, floor = self.likelihood, self.gate_floor
        x, step = start, 1e-6 * (start if not upper else 1 - start)
        for _ in range(40):  # outward from the nearby edge until outside the set
            gap = lik.excess(x, theta) - floor
            if gap < 0:
                break
            x = x + step if upper else x - step
            step *= 2
            if not 0 < x < 1:
                return None
        else:
            return None
        for i in range(12):
            if i:
                gap = lik.excess(x, theta) - floor
            slope = lik.score_mu(x, theta)
            if not (slope < 0 if upper else slope > 0) or not math.isfinite(gap):
                return None  # flat, or outside on the other side (the other edge's root)
            move = gap / slope
            x -= move
            if not 0 < x < 1:
                return None
            if abs(move) <= 1e-12 * x or gap >= 0:  # converged, or at the root to rounding
                return x
        return None

    def edges(self, rhos: Floats, starts: Floats, upper: bool = True) -> Floats:
        """:meth:`edge` at every icc of `rhos` at once (:func:`_newton_edges` from `starts`,
        near each edge); each that does not settle, and each at the set's tips, by
        :meth:`edge` itself."""
        rhos = np.asarray(rhos, dtype=np.float64)
        live = (self.gate_icc_bottom < rhos) & (rhos < self.gate_icc_top)
        out = _newton_edges(self.likelihood, self.gate_floor, rhos, starts, upper, live)
        for k in np.flatnonzero(np.isnan(out)).tolist():
            out[k] = self.edge(float(rhos[k]), upper)
        return out

    def _bracketed(self, rho: float, theta: float, upper: bool) -> float:
        from scipy import optimize

        lik, floor = self.likelihood, self.gate_floor
        mu, value = lik.profile(rho)
        if value <= floor:  # the set's tip, up to rounding
            return mu

        def gap(r: float) -> float:
            return lik.excess(r, theta) - floor

        end = 1.0 if upper else 0.0
        if gap(end) >= 0:
            return end
        lo, hi = (mu, 1.0) if upper else (0.0, mu)
        return float(optimize.brentq(gap, lo, hi, xtol=1e-300, rtol=1e-13))

    def largest(
        self, values: Callable[[float, float], npt.ArrayLike], upper: bool = True
    ) -> tuple[Floats, Floats]:
        """Each component's largest value over the gates' set, and the icc where it is.

        ``values(mu, rho)`` gives one value per gate and must rise with mu at every rho
        (a false alarm); with ``upper=False`` it must rise with mu and the smallest values
        are returned (a detection: at the lower edge). Each is searched along the set's
        edge over rho: evaluated at ``_GATE_GRID + 1`` evenly spaced iccs and the fitted
        one, then, for each gate, a bounded Brent search (scipy ``minimize_scalar``) in
        the two grid intervals beside every local maximum of those values, to
        ``_RHO_TOL`` of the interval (a maximum inside is then found to about
        ``_RHO_TOL^2`` relative). The result is never below any value evaluated. (Tables of
        more than ``_PER_GATE_MAX`` gates are searched by :meth:`_many`.)
        """
        from scipy import optimize

        sign = 1.0 if upper else -1.0
        top, bottom = self.gate_icc_top, self.gate_icc_bottom
        steps = [bottom + (top - bottom) * i / _GATE_GRID for i in range(_GATE_GRID + 1)]
        grid = sorted({*steps, min(max(self.overdispersion.icc, bottom), top)})
        cache: dict[float, Floats] = {}

        def fresh(rho: float) -> Floats:
            got = np.asarray(values(self.edge(rho, upper), rho), dtype=np.float64)
            return got if upper else -got

        def at(rho: float) -> Floats:
            if rho not in cache:
                cache[rho] = fresh(rho)
            return cache[rho]

        table = np.array([at(r) for r in grid])
        index = np.argmax(table, axis=0)
        best = table[index, np.arange(table.shape[1])]
        where = np.asarray([grid[i] for i in index.tolist()], dtype=np.float64)
        last = len(grid) - 1
        for k in range(table.shape[1]):
            col = table[:, k]
            if col.max() == col.min() or best[k] >= (1.0 if upper else 0.0):
                continue  # flat, or already 1 (a false alarm) or 0 (a detection)
            for i in range(len(grid)):
                left, right = col[max(i - 1, 0)], col[min(i + 1, last)]
                if col[i] < left or col[i] < right or col[i] == left == right:
                    continue  # not a local maximum of the grid
                a, b = grid[max(i - 1, 0)], grid[min(i + 1, last)]
                found = optimize.minimize_scalar(
                    lambda r, k=k: -float(at(r)[k]),
                    bounds=(a, b),
                    method="bounded",
                    options={"xatol": _RHO_TOL * (b - a)},
                )
                if -found.fun > best[k]:
                    best[k], where[k] = -float(found.fun), float(found.x)
        return sign * best, where

    def _many(
        self, pmf: Callable[[float, float], tuple[int, Floats]], size: int, upper: bool
    ) -> tuple[Floats, Floats]:
        """:meth:`largest` of `size` gates at once, in passes over the edge whose number does
        not grow with the gates. ``pmf(mu, rho)`` gives ``(start, pmf)`` (as
        :func:`_failing_pmf`): the gates' values are ``gate_fail_probabilities(pmf)`` from
        gate `start` on, exactly 0 below and exactly 1 above, so a pass costs what the window holds.

        The edge is taken at ``rho(t) = bottom + (top - bottom) (1 - cos(pi t)) / 2``,
        smooth in t through the set's tips (where the edge turns, ``top - rho`` grows as
        the square of the distance in mu), at ``_MANY_GRID + 1`` evenly spaced t and the
        fitted icc's. Each gate's parabola through its best grid value and its two
        neighbours places its largest value; those places are rounded to the finest grid
        of t (a power of 2) that leaves at most ``_MANY_POINTS`` of them, the edge found at
        each (at all of them at once by :meth:`edges` when the likelihood takes its
        closed forms, above 4,096 cases a run). Each place's pass evaluates the gates it
        places and those the places beside it place (a range of gates: from the sums of
        the pmf beyond it and its cumulative sums across it, :func:`_below_part`), not
        every gate of its window. Each result is the largest value evaluated for that
        gate (attained at the icc returned).
        """
        sign = 1.0 if upper else -1.0
        top, bottom = self.gate_icc_top, self.gate_icc_bottom
        span = top - bottom

        def rho_of(t: npt.ArrayLike) -> Floats:
            return np.clip(bottom + span * (1.0 - np.cos(np.pi * np.asarray(t))) / 2.0, bottom, top)

        fitted = min(max(self.overdispersion.icc, bottom), top)
        ts = [0.0]
        if span > 0:
            t_fit = math.acos(min(max(1.0 - 2.0 * (fitted - bottom) / span, -1.0), 1.0))
            ts = sorted({*(i / _MANY_GRID for i in range(_MANY_GRID + 1)), t_fit / math.pi})
        x = np.asarray(ts)
        rhos = rho_of(x)
        if self.likelihood._closed:  # every grid point's edge at once, out from its profile
            edges = self.edges(rhos, self.likelihood.profiles(rhos)[0], upper)
        else:
            edges = np.array([self.edge(r, upper) for r in rhos.tolist()])
        # the grid's rows, each as its window: 0 below it and 1 above (times sign)
        pmfs = (pmf(e, r) for e, r in zip(edges.tolist(), rhos.tolist(), strict=True))
        windows = [(start, gate_fail_probabilities(part)) for start, part in pmfs]
        starts = np.array([start for start, _ in windows], dtype=np.int64)
        widths = np.array([part.size for _, part in windows], dtype=np.int64)
        # each gate's first largest row (argmax over the rows), raised row by row over
        # each row's window only (row 0's values everywhere first)
        start, part = windows[0]
        best = np.full(size, sign * 1.0)
        best[:start] = sign * 0.0
        best[start : start + part.size] = sign * part
        row_of = np.zeros(size)
        done = (start, start + part.size)
        for j in range(1, len(ts)):
            done = _raise(best, row_of, float(j), *windows[j], sign, done)
        index = row_of.astype(np.int64)
        at_t = x[index]
        # inner: the largest row is neither end (and, beating row 0, not all rows equal)
        inner = (index > 0) & (index < len(ts) - 1)
        k, i = np.flatnonzero(inner), index[inner]
        flat = np.concatenate([part for _, part in windows])
        offsets = np.concatenate(([0], np.cumsum(widths)[:-1]))
        del windows
        x0, x1, x2 = x[i - 1], x[i], x[i + 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            # the parabola of sign * log(value): a tail's value spans decades over the edge
            y0, y1, y2 = (
                np.log(_in_windows(flat, offsets, starts, widths, j, k)) * sign
                for j in (i - 1, i, i + 1)
            )
            d1, d2 = (y1 - y0) / (x1 - x0), (y2 - y1) / (x2 - x1)
            curve = (d2 - d1) / (x2 - x0)
            vertex = np.where(curve < 0, (x0 + x1) / 2 - d1 / (2 * curve), x1)
        del flat, y0, y1, y2
        vertex = np.clip(np.where(np.isfinite(vertex), vertex, x1), x0, x2)
        low, high = 0, 53  # the finest grid 2^-j of t, j <= 52, of at most _MANY_POINTS places
        if _places(vertex, 52).size <= _MANY_POINTS:
            low = 52
        while high - low > 1 and low < 52:
            mid = (low + high) // 2
            low, high = (mid, high) if _places(vertex, mid).size <= _MANY_POINTS else (low, mid)
        places = _places(vertex, low)
        # the gates each place places (k is ascending), then with its neighbours' gates
        own = np.searchsorted(places, np.ldexp(np.rint(np.ldexp(vertex, low)), -low))
        first = np.full(places.size, size, dtype=np.int64)
        last = np.full(places.size, -1, dtype=np.int64)
        np.minimum.at(first, own, k)
        np.maximum.at(last, own, k)
        beside = (slice(None, 1), slice(None, -1)), (slice(1, None), slice(-1, None))
        lows, highs = first.copy(), last + 1  # each place's range of gates, theirs and beside
        for a, b in beside:  # the place before each, and the place after it
            lows = np.minimum(lows, np.concatenate((first[a], first[b])))
            highs = np.maximum(highs, np.concatenate((last[a], last[b])) + 1)
        at_rho = rho_of(places)
        if self.likelihood._closed:  # all places at once (a pass of numpy each, not one each)
            at_edge = self.edges(at_rho, np.interp(places, x, edges), upper)
        else:
            at_edge = np.array([self.edge(r, upper) for r in at_rho.tolist()])
        work = list(
            zip(
                places.tolist(),
                at_edge.tolist(),
                at_rho.tolist(),
                lows.tolist(),
                highs.tolist(),
                strict=True,
            )
        )
        _passes(best, at_t, work, pmf, sign, wide=bool(widths.mean() >= _WIDE))
        return sign * best, rho_of(at_t)

    def false_alarms(self, n: int) -> Floats:
        """P(a healthy run of n cases fails "at least k pass"), k = 0..n: each gate's
        upper bound (its largest over the gates' set)."""
        if n + 1 > _PER_GATE_MAX:
            return self._many(lambda mu, rho: _failing_pmf(n, mu, rho), n + 1, True)[0]
        return self.largest(lambda mu, rho: _failing_below(n, mu, rho))[0]

    def false_alarm(self, n: int, k_min: int) -> float:
        """The bound of one gate, "at least `k_min` of n pass" (``false_alarms(n)[k_min]``,
        searched for this gate alone)."""

        def fa(mu: float, rho: float) -> Floats:
            return _failing_below(n, mu, rho)[k_min:][:1]

        return float(self.largest(fa)[0][0])

    def strictest_gate(self, n: int, false_alarm: float) -> int:
        """``strictest_within(false_alarms(n), false_alarm)``, by bisection over the gates
        (each bound rises with k_min), searching about log2(n) gates instead of all."""
        low, high = 0, n + 1  # false_alarm(low) <= budget (k 0 never fails), high: above
        while high - low > 1:
            mid = (low + high) // 2
            low, high = (mid, high) if self.false_alarm(n, mid) <= false_alarm else (low, mid)
        return low

    def detection(self, n: int, failing: int, k_min: int) -> float:
        """The bound of one gate's detection (``detections(n, failing)[k_min]``)."""

        def det(mu: float, rho: float) -> Floats:
            return _failing_below(n, mu, rho, failing)[k_min:][:1]

        return float(self.largest(det, upper=False)[0][0])

    def worst_point(self, n: int, failing: int) -> tuple[float, float]:
        """(rate, icc) of the gates' set where "at most ``failing - 1`` of n fail" has its
        largest false alarm."""
        k = n - failing + 1
        _, where = self.largest(lambda mu, rho: _failing_below(n, mu, rho)[k : k + 1])
        rho = float(where[0])
        return self.edge(rho), rho

    def detections(self, n: int, failing: int) -> Floats:
        """P(a run with `failing` cases failing a code check fails "at least k pass"):
        each gate's lower bound (the smallest over the gates' set, the other cases at the
        set's lower edge)."""
        if n + 1 > _PER_GATE_MAX:
            return self._many(lambda mu, rho: _failing_pmf(n, mu, rho, failing), n + 1, False)[0]
        return self.largest(lambda mu, rho: _failing_below(n, mu, rho, failing), upper=False)[0]


def _newton_edges(
    lik: _Likelihood,
    floor: float,
    rhos: Floats,
    starts: Floats,
    upper: bool,
    live: npt.NDArray[np.bool_],
) -> Floats:
    """The largest (`upper`) or smallest rate where ``lik.excess(mu, rho) = floor`` at
    each icc of `rhos` where `live`, by :meth:`NoiseBounds.edge`'s Newton's method from
    `starts`, stepped for all of them together (the likelihood evaluated at all their
    points in one pass, not one small pass per point): stepped outward while inside (40
    doublings from 1e-6 of the way to 0 or 1), then Newton's steps from outside (12 at
    most), each stopping when it settles; NaN wherever it does not (a start outside on
    the other side, a step beyond 0 or 1, no settling) and where not `live`."""
    theta = rhos / (1.0 - rhos)
    x = np.array(starts, dtype=np.float64)
    live = live & (x > 0) & (x < 1)
    step = 1e-6 * (1.0 - x if upper else x)
    sign = 1.0 if upper else -1.0
    gap = np.full(rhos.size, math.nan)
    outward = live.copy()  # still inside the set: stepped outward
    for _ in range(40):
        at = np.flatnonzero(outward)
        if not at.size:
            break
        gap[at] = lik.excess_many(x[at], theta[at]) - floor
        at = at[gap[at] >= 0]
        outward[:] = False
        x[at] += sign * step[at]
        step[at] *= 2
        gone = (x[at] <= 0) | (x[at] >= 1)
        live[at[gone]] = False
        outward[at[~gone]] = True
    live &= ~outward
    done = np.zeros(rhos.size, dtype=bool)
    for i in range(12):
        at = np.flatnonzero(live & ~done)
        if not at.size:
            break
        if i:
            gap[at] = lik.excess_many(x[at], theta[at]) - floor
        slope = lik.score_mu_many(x[at], theta[at])
        bad = ~(slope < 0 if upper else slope > 0) | ~np.isfinite(gap[at])
        with np.errstate(divide="ignore", invalid="ignore"):
            move = np.where(bad, 0.0, gap[at] / slope)
        x[at] -= move
        bad |= (x[at] <= 0) | (x[at] >= 1)
        settled = ~bad & ((np.abs(move) <= 1e-12 * x[at]) | (gap[at] >= 0))
        live[at[bad]] = False
        done[at[settled]] = True
    return np.where(done, x, math.nan)


def noise_bounds(
    failures: npt.ArrayLike,
    cases: int | npt.ArrayLike,
    *,
    confidence_level: float = 0.95,
    grid: int = 24,
    gate_level: float = GATE_LEVEL,
) -> NoiseBounds:
    """Each gate's bound and the printed joint (rate, icc) confidence region (see
    :class:`NoiseBounds`), from the failures and the observed cases of each run.

    The icc is carried up to each set's largest value whatever the test of rho = 0 says
    (a test that fails to reject is no evidence of independence). The printed region is
    traced at `grid` + 1 iccs evenly spaced in ``[0, icc_top]`` plus the fitted icc; at
    each, the rate's range solves ``log L(mu, rho) = max log L - q / 2`` by Brent's
    method (the log-likelihood is concave in mu).
    """
    from scipy import optimize

    level = check_probability("confidence_level", confidence_level)
    one_sided = check_probability("gate_level", gate_level)
    if one_sided <= 0.5:
        raise ParameterError("gate_level", "must be above 0.5 (a one-sided level)", gate_level)
    x, m = _run_counts(failures, cases)
    lik = _Likelihood(x, m)
    over = _fit(lik, x, m, level)
    floor = over.statistic / 2 - chi2_ppf((1 + level) / 2, 2) / 2
    cutoff = chi2_ppf(2 * one_sided - 1, 1)
    gate_floor = over.statistic / 2 - cutoff / 2
    values = lik.profiles(_RHO_GRID)[1].tolist()
    top = _profile_bound(lik, over.icc, floor, _RHO_GRID, values)
    gate_top = _profile_bound(lik, over.icc, gate_floor, _RHO_GRID, values)
    gate_bottom = _profile_bound_below(lik, over.icc, gate_floor, _RHO_GRID, values)
    iccs = sorted({top * i / grid for i in range(grid + 1)} | {over.icc})
    at = np.asarray(iccs, dtype=np.float64)
    mus, peaks = lik.profiles(at)
    near = {side: np.full(at.size, math.nan) for side in (False, True)}
    if lik._closed:  # big suites: every icc's two ends at once from its profile maximum
        near = {u: _newton_edges(lik, floor, at, mus, u, peaks > floor) for u in (False, True)}
    lows, highs = [], []
    for i, icc in enumerate(iccs):
        theta = icc / (1 - icc)
        mu, value = float(mus[i]), float(peaks[i])
        if value <= floor:  # the region's tip (icc_upper), up to rounding
            lows.append(mu)
            highs.append(mu)
            continue

        def gap(r: float, theta: float = theta) -> float:
            return lik.excess(r, theta) - floor

        lo, hi = float(near[False][i]), float(near[True][i])
        if math.isnan(lo):
            lo = 0.0 if gap(0.0) >= 0 else optimize.brentq(gap, 0.0, mu, xtol=1e-300, rtol=1e-13)
        if math.isnan(hi):
            hi = 1.0 if gap(1.0) >= 0 else optimize.brentq(gap, mu, 1.0, xtol=1e-300, rtol=1e-13)
        lows.append(float(lo))
        highs.append(float(hi))
    total, trials = float(x.sum()), float(m.sum())
    rate = RateEstimate(
        failures=total,
        trials=trials,
        estimate=total / trials,
        low=min(lows),
        high=max(highs),
        method="profile likelihood",
        confidence_level=level,
    )
    return NoiseBounds(
        overdispersion=over,
        icc_top=top,
        iccs=tuple(iccs),
        lows=tuple(lows),
        highs=tuple(highs),
        rate=rate,
        gate_level=one_sided,
        gate_cutoff=cutoff,
        gate_icc_top=gate_top,
        gate_icc_bottom=gate_bottom,
        likelihood=lik,
        gate_floor=gate_floor,
    )


def _profile_bound_below(
    lik: _Likelihood, rho: float, target: float, grid: Floats, values: list[float]
) -> float:
    """The last rho below `rho` where the profile log-likelihood rises to `target`
    (bracketed on `grid`, where it takes `values`); 0 if it is above it at rho = 0."""
    from scipy import optimize

    below = [i for i in range(grid.size) if grid[i] < rho and values[i] < target]
    if not below:
        return 0.0
    i = below[-1]
    end = min(rho, float(grid[i + 1])) if i + 1 < grid.size else rho
    return float(
        optimize.brentq(
            lambda r: lik.profile(r)[1] - target, float(grid[i]), end, xtol=1e-14, rtol=1e-12
        )
    )


#: The fallback "what would work" search tries every suite size up to this.
