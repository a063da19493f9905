"""The tails of a run's pass count, and the passes that raise many gates' bounds at once.

A gate "at least k of n pass" fails a run with probability ``P(K < k)``, K the passes of a
run whose failing count is beta-binomial (:func:`gatecal._engines.exact.beta_binomial_window`
holds its pmf where double precision can); :class:`gatecal._analyses.noise.bounds.NoiseBounds`
takes the largest such value over its set of (rate, icc), for every gate at once, in passes
over the set's edge: each pass raises the gates' values where it finds them higher.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from gatecal._engines.exact import beta_binomial_window
from gatecal._model.arrays import Floats, Ints

__all__ = ["gate_fail_probabilities"]

#: The many-gate search's passes run on up to this many threads (the cores allowed) where
#: the pmf's windows hold at least _WIDE values on average (a noisy suite: most cases);
#: narrower windows are too quick for threads to pay.
_THREADS, _WIDE = 4, 16_384


def gate_fail_probabilities(pass_pmf: Floats) -> Floats:
    """Each gate's failure probability from a run's pass-count pmf: for the gate "at least k
    of n pass", k = 0..n, ``P(K < k)``; exactly 0 at k = 0 and exactly 1 where no mass is
    left at or above k."""
    lo = np.empty(pass_pmf.size)
    lo[0] = 0.0
    np.cumsum(pass_pmf[:-1], out=lo[1:])
    hi = np.cumsum(pass_pmf[::-1])[::-1]
    hi += lo
    return np.divide(lo, hi, out=lo)


def _failing_below(n: int, mu: float, rho: float, failing: int = 0) -> Floats:
    """``P(K < k)``, k = 0..n, K the passes of a run of n cases of which `failing` fail a
    code check and the others at (mu, rho): :func:`gate_fail_probabilities` of that
    pass-count pmf, summed only over :func:`beta_binomial_window` (0 below it, 1 above it,
    as there)."""
    start, part = _failing_window(n, mu, rho, failing)
    out = np.zeros(n + 1)
    out[start + part.size :] = 1.0
    out[start : start + part.size] = part
    return out


def _failing_window(n: int, mu: float, rho: float, failing: int = 0) -> tuple[int, Floats]:
    """:func:`_failing_below` as ``(start, part)``: `part` from k = `start` on, exactly 0
    below it and exactly 1 above it."""
    start, pmf = _failing_pmf(n, mu, rho, failing)
    return start, gate_fail_probabilities(pmf)


def _failing_pmf(n: int, mu: float, rho: float, failing: int = 0) -> tuple[int, Floats]:
    """``(start, pmf)``: the pass count's pmf of :func:`_failing_below`'s run where
    :func:`beta_binomial_window` holds it, from k = `start` passes on (not normalised:
    :func:`gate_fail_probabilities` takes ratios of its sums; in this thread's scratch
    array, valid until the next call)."""
    start, window = beta_binomial_window(n - failing, mu, rho, normalised=False, scratch=True)
    top = n - failing - start  # the most passes the window holds
    return top + 1 - window.size, window[::-1]


def _below_part(pass_pmf: Floats, a: int, b: int) -> Floats:
    """``gate_fail_probabilities(pass_pmf)[a:b]`` (0 <= a < b <= its size) from sums over
    the rest and cumulative sums over ``a..b`` alone: each ``P(K < k) = lo / (lo + hi)`` with lo the
    mass below k and hi the mass at or above it, as there (the same to rounding)."""
    lo = np.empty(b - a)
    lo[0] = pass_pmf[:a].sum()
    np.cumsum(pass_pmf[a : b - 1], out=lo[1:])
    lo[1:] += lo[0]
    hi = np.cumsum(pass_pmf[a:b][::-1])[::-1]
    hi += pass_pmf[b:].sum()
    hi += lo
    return np.divide(lo, hi, out=lo)


def _passes(
    best: Floats,
    at_t: Floats,
    work: list[tuple[float, float, float, int, int]],
    pmf: Callable[[float, float], tuple[int, Floats]],
    sign: float,
    wide: bool,
) -> None:
    """Raise `best` and `at_t` by each pass of `work` ``(t, mu, rho, a, b)`` in turn, over
    its gates a..b-1 (:func:`_raise_part`). Where the windows are `wide` (numpy's loops
    then hold most of the time, free of the interpreter's lock), in contiguous shares of
    `work` on up to :data:`_THREADS` threads, each from the same `best`, then merged in
    order, a later share's value taken only where strictly higher: exactly the values and
    places one pass after another gives (the first place of the largest value)."""
    from concurrent.futures import ThreadPoolExecutor

    from gatecal._engines.pool import default_workers

    def run(share: list[tuple[float, float, float, int, int]]) -> tuple[Floats, Floats]:
        top, where = best.copy(), at_t.copy()
        for t, mu, rho, a, b in share:
            _raise_part(top, where, t, *pmf(mu, rho), sign, a, b)
        return top, where

    threads = min(_THREADS, default_workers(), len(work) // 8) if wide else 1
    if threads <= 1:
        results = [run(work)]
    else:
        cut = [len(work) * i // threads for i in range(threads + 1)]
        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(run, [work[a:b] for a, b in itertools.pairwise(cut)]))
    for top, where in results:
        better = top > best
        np.copyto(best, top, where=better)
        np.copyto(at_t, where, where=better)


def _raise_part(
    best: Floats,
    at_t: Floats,
    t: float,
    start: int,
    pass_pmf: Floats,
    sign: float,
    a: int,
    b: int,
) -> None:
    """Raise gates a..b-1 of `best` in place to a pass's values ``sign * P(K < k)`` (0
    below `start`, ``gate_fail_probabilities(pass_pmf)`` from it, 1 above the window)
    wherever they are higher, setting `at_t` to `t` there."""
    end = start + pass_pmf.size
    for low, high, value in ((a, min(b, start), sign * 0.0), (max(a, end), b, sign * 1.0)):
        if low < high:
            better = best[low:high] < value
            best[low:high][better] = value
            at_t[low:high][better] = t
    i, j = max(a, start) - start, min(b, end) - start
    if i < j:
        seg = sign * _below_part(pass_pmf, i, j)
        better = seg > best[start + i : start + j]
        np.copyto(best[start + i : start + j], seg, where=better)
        np.copyto(at_t[start + i : start + j], t, where=better)


def _raise(
    best: Floats,
    at_t: Floats,
    t: float,
    start: int,
    part: Floats,
    sign: float,
    done: tuple[int, int],
) -> tuple[int, int]:
    """Raise `best` in place to a pass's values ``sign * (0 below start, part, 1 above)``
    wherever they are higher, setting `at_t` to `t` there; returns the new `done`.

    Outside its window a pass's values are ``sign * 0`` and ``sign * 1``: those can
    only raise gates not yet at that value. ``done = (low, high)`` says every gate below
    `low` is at least ``sign * 0`` and every gate from `high` on at least ``sign * 1``
    already (start from ``(0, len(best))``), so each pass reads its window and the
    gates between its window and those marks, not all of them.
    """
    low, high = done
    end = start + part.size
    for a, b, value in ((low, start, sign * 0.0), (end, high, sign * 1.0)):
        if a < b:
            better = best[a:b] < value
            best[a:b][better] = value
            at_t[a:b][better] = t
    seg = sign * part
    better = seg > best[start:end]
    np.copyto(best[start:end], seg, where=better)
    np.copyto(at_t[start:end], t, where=better)
    return max(low, start), min(high, end)


def _in_windows(
    flat: Floats, offsets: Ints, starts: Ints, widths: Ints, rows: Ints, gates: Ints
) -> Floats:
    """The value of each gate of `gates` in the row of `rows` beside it, the rows held as
    windows one after another in `flat` (row j from ``offsets[j]``, its values `widths[j]`
    gates from gate ``starts[j]`` on, 0 below them and 1 above)."""
    at = gates - starts[rows]
    held = (at >= 0) & (at < widths[rows])
    out = np.where(at < 0, 0.0, 1.0)
    out[held] = flat[offsets[rows][held] + at[held]]
    return out


def _places(ts: Floats, j: int) -> Floats:
    """The distinct values of `ts` rounded to multiples of 2^-j."""
    return np.asarray(np.unique(np.ldexp(np.rint(np.ldexp(ts, j)), -j)))
