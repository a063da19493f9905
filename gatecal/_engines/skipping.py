"""The skipping engine's kernels: one chunk of runs, drawn from one stream.

It jumps from one flipped verdict to the next (geometric skipping: one exponential per
flip, not one uniform per verdict), by rate groups or by bands of nearby per-case rates
(thinned), and keeps its scratch arrays in reusable buffers; `_dense_chunk` is the plain
one-uniform-per-verdict reference it is checked against. The bands' own kernel, every
band's exponentials in one draw, is in :mod:`gatecal._engines.banded`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias, TypeVar, cast

import numpy as np
import numpy.typing as npt

from gatecal._common.seeds import ChunkSeeder
from gatecal._model.suite import JudgeNoise, Suite

IntArray: TypeAlias = npt.NDArray[np.int64]
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class _Group:
    """Judge verdicts sharing one flip rate, laid out run-major then case-major."""

    rate: float
    slot_case: npt.NDArray[np.intp]  # case of each verdict slot within a run
    slot_weight: IntArray  # 1 for a truly failing verdict; for a passing one, more than any need
    weight: int  # the common slot weight when all are alike, else 0
    per_case: int  # slots per case when the group holds every case's slots alike, else 0
    accept: npt.NDArray[np.float64] | None = None  # per slot: its rate / `rate` (thinning)
    threshold: npt.NDArray[np.float64] | None = None  # per slot, see _thinning_threshold
    case_slots: int = 0  # slots of each of the group's cases, when all have as many, else 0
    simple: bool = False  # its cases pass iff none of their verdicts flips, or never (`dead`)
    dead: npt.NDArray[np.bool_] | None = None  # per case of the group: a code check fails
    alive: npt.NDArray[np.bool_] | None = None  # ~dead
    dead_span: tuple[int, int] | None = None  # the dead cases are cases lo..hi-1 of the group


@dataclass(frozen=True, slots=True)
class _Plan:
    n_cases: int
    code_ok: npt.NDArray[np.bool_]  # no code check truly fails
    need: IntArray  # truly failing judge verdicts that must all flip for the case to pass
    base_pass: IntArray  # 1 if the case passes when no verdict flips
    base_k: int
    groups: tuple[_Group, ...]
    truth: npt.NDArray[np.bool_]  # (cases, judge checks), for the dense method
    rates: npt.NDArray[np.float64]  # (cases, judge checks), for the dense method
    noise: JudgeNoise  # for a run-level Beta flip rate (icc > 0) or a case spread
    suite: Suite  # for a case spread: each run draws its cases' rates
    build: str
    closed: bool = False  # every case's flipping verdicts lie in one group
    banded: bool = False  # closed, several groups below rate 1, one slot per case each

    @property
    def verdicts_per_run(self) -> int:
        return int(self.truth.size)


def _plan(suite: Suite, build: str, noise: JudgeNoise) -> _Plan:
    truth_all = suite.truth_matrix(build)
    judge = suite.judge_mask()
    truth = truth_all[:, judge]
    code_ok = np.asarray(truth_all[:, ~judge].all(axis=1), dtype=bool)
    need = (~truth).sum(axis=1).astype(np.int64)
    base_pass = (code_ok & (need == 0)).astype(np.int64)
    bad = int(need.max(initial=0)) + 1
    reports_pass = noise.report_pass(suite, build)
    rates = np.where(truth, 1.0 - reports_pass, reports_pass)  # P(verdict differs from truth)
    n, j = truth.shape
    groups = []
    distinct = sorted({float(r) for r in rates.ravel()} - {0.0})
    if len(distinct) <= EXACT_RATE_GROUPS:  # a stream per rate (as every release did)
        bins = [(rate, rates == rate) for rate in distinct]
    else:  # a stream per rate band, thinned to each verdict's own rate; the verdicts of
        # a case that fails a code check cannot change anything, so they are not drawn
        bins = _rate_bands(np.where(code_ok[:, None], rates, 0.0))
    for rate, member_2d in bins:
        member = member_2d.ravel()  # run-major, case-major slot order
        slot_case = np.repeat(np.arange(n), j)[member]
        slot_weight = np.where(truth.ravel()[member], bad, 1).astype(np.int64)
        common = int(slot_weight[0]) if np.all(slot_weight == slot_weight[0]) else 0
        accept = rates.ravel()[member] / rate
        thin = None if np.all(accept == 1.0) else accept
        slots_of_case = np.bincount(slot_case, minlength=n)  # (np.unique costs 9 ms at first use)
        members = np.flatnonzero(slots_of_case)
        per = slots_of_case[members]
        alive = code_ok[members]  # a case that fails a code check never passes, flips or not
        dead_at = np.flatnonzero(~alive)
        span = (int(dead_at[0]), int(dead_at[-1]) + 1) if dead_at.size else None
        groups.append(
            _Group(
                rate,
                slot_case,
                slot_weight,
                common,
                j if member.all() else 0,
                thin,
                None if thin is None or rate >= 1.0 else _thinning_threshold(rate, thin),
                case_slots=int(per[0]) if np.all(per == per[0]) else 0,
                simple=bool(np.all(need[members][alive] == 0)),
                dead=None if alive.all() else ~alive,
                alive=None if alive.all() else alive,
                dead_span=span if span and span[1] - span[0] == dead_at.size else None,
            )
        )
    kept = tuple(g for g in groups if g.rate > 0.0)
    groups_of_case = np.zeros(n, dtype=np.int64)
    for g in kept:
        groups_of_case += np.bincount(g.slot_case, minlength=n) > 0
    closed = int(groups_of_case.max(initial=0)) <= 1
    banded = (
        closed
        and len(kept) > 1
        and all(
            g.simple and g.dead is None and g.case_slots == 1 and _skips_by_gaps(g.rate)
            for g in kept
        )
    )
    return _Plan(
        suite=suite,
        build=build,
        n_cases=n,
        code_ok=code_ok,
        need=need,
        base_pass=base_pass,
        base_k=int(base_pass.sum()),
        groups=kept,
        truth=truth,
        rates=rates,
        noise=noise,
        closed=closed,
        banded=banded,
    )


#: Up to this many distinct flip rates, each rate has its own skipping stream; with
#: more (per-case rates measured by ``recommend``) rates are banded, see :func:`_rate_bands`.
EXACT_RATE_GROUPS = 8
_BAND_RATIO = math.sqrt(2.0)
_MAX_BANDS = 24  # rates below top / sqrt(2)^24 = top / 4096 share the last band
_MERGE_SHARE = 0.04


def _rate_bands(
    rates: npt.NDArray[np.float64],
) -> list[tuple[float, npt.NDArray[np.bool_]]]:
    """Bands of verdict flip rates for thinning: ``(band rate, member mask)`` per band.

    A case falls in band ``floor(log_sqrt2(top / r))`` (capped) by the largest flip
    rate r of its verdicts, and every verdict of the case with a positive rate joins
    that band. The band skips at its largest rate R and keeps each candidate flip
    with probability (the verdict's rate) / R (Lewis-Shedler thinning), so every
    verdict still flips independently with exactly its own rate, from one stream per
    band instead of one per rate. With one rate per case (what ``recommend`` exports),
    at least 1/sqrt(2) of a band's candidates are kept, except in the last band,
    whose rates are below 1/4096 of the top one. A case's verdicts share one band, so
    each band settles its cases alone (no merge of bands, see :func:`_skip_chunk`).
    """
    case_rate = rates.max(axis=1)
    top = float(case_rate.max())
    band = np.full(case_rate.shape, -1, dtype=np.int64)
    flipping = case_rate > 0
    steps = np.floor(np.log(top / case_rate[flipping]) / math.log(_BAND_RATIO))
    band[flipping] = np.minimum(steps, _MAX_BANDS).astype(np.int64)
    out = []
    for b in np.unique(band[flipping]).tolist():
        member = (band == b)[:, None] & (rates > 0)
        out.append((float(rates[member].max()), member))
    # The lowest bands hold few flips but each costs a stream per chunk: merge them while
    # the merged band draws at most _MERGE_SHARE of all candidates (at its top rate).
    total = sum(rate * int(member.sum()) for rate, member in out)
    while len(out) > 1:
        (upper, upper_member), (_, lower_member) = out[-2], out[-1]
        merged = upper_member | lower_member
        if upper * int(merged.sum()) > _MERGE_SHARE * total:
            break
        out[-2:] = [(upper, merged)]
    return out


class _Buffers:
    """Named scratch arrays that live across chunks.

    A chunk's arrays are a few hundred kB each; allocating them afresh for every chunk
    makes the allocator hand memory back to the OS and take it again, and those page
    faults cost more than the arithmetic (3x here, measured). A simulation in this
    process keeps one set, and so does each worker process, so memory stays bounded
    by the chunk size.
    """

    def __init__(self) -> None:
        self._store: dict[str, npt.NDArray[Any]] = {}
        self._layout: tuple[_Plan, int, Callable[..., Any], Any] | None = None
        self._seeder: ChunkSeeder | None = None

    def generator(self, root: np.random.SeedSequence, i: int) -> np.random.Generator:
        """The stream of chunk i of `root` (``chunk_generator(root, i)``), from one
        :class:`ChunkSeeder` kept while the root stays the same: valid until the next call."""
        if self._seeder is None or self._seeder.root is not root:
            self._seeder = ChunkSeeder(root)
        return self._seeder(i)

    def __call__(self, name: str, size: int, dtype: type[np.generic]) -> npt.NDArray[Any]:
        buf = self._store.get(name)
        if buf is None or buf.size < size:
            buf = np.empty(size + size // 4 + 64, dtype=dtype)
            self._store[name] = buf
        return buf[:size]

    def layout(self, plan: _Plan, runs: int, make: Callable[[_Plan, int], _T]) -> _T:
        """``make(plan, runs)``, kept until another is asked for (one at a time, so memory
        stays that of one chunk: a simulation asks for a second only for its last, shorter
        chunk)."""
        kept = self._layout
        if kept is None or kept[0] is not plan or kept[1] != runs or kept[2] is not make:
            self._layout = kept = (plan, runs, make, make(plan, runs))
        return cast(_T, kept[3])

    def arange(self, size: int) -> IntArray:
        """``np.arange(size)``, kept between calls."""
        values = self._store.get("arange")
        if values is None or values.size < size:
            values = np.arange(size + size // 4 + 64, dtype=np.int64)
            self._store["arange"] = values
        return values[:size]


def _bernoulli_positions(
    gen: np.random.Generator, p: float, length: int, buffers: _Buffers | None = None
) -> IntArray:
    """Sorted positions in ``[0, length)``, each present independently with probability p.

    Skips from one success to the next: with E ~ Exp(1) and λ = -log(1 - p),
    ``floor(E / λ)`` is geometric on {0, 1, ...} with P(>= k) = e^(-kλ) = (1 - p)^k,
    exactly the run of failures before the next success. About ``p * length``
    exponentials are drawn instead of ``length`` uniforms. The result may be a view
    into `buffers`, valid until the next call that uses them.
    """
    return _skips(gen, p, length, buffers, fractions=False)[0]


#: Largest value :meth:`numpy.random.Generator.standard_exponential` can return, with
#: room to spare (its ziggurat tail is -log of a double in (0, 1]: at most about 745).
_EXPONENTIAL_MAX = 1024.0


def _draw_sizes(mean: float) -> tuple[int, int]:
    """Exponentials :func:`_skips` draws for `mean` expected flips: first, and then again
    each time the gaps fall short of the end (about six standard deviations: rarely)."""
    margin = int(6.0 * math.sqrt(mean) + 16.0)
    return int(mean) + margin, margin


@dataclass(frozen=True, slots=True)
class _Sizes:
    """How :func:`_skips` draws at a rate over a chunk's slots: the scale of a gap, the
    exponentials it draws first and then again each time the gaps fall short, and the
    integer type of the positions, with the bound past which gaps are capped."""

    scale: float
    length: int
    draw: int
    margin: int
    dtype: type[np.signedinteger[Any]]
    limit: float

    @classmethod
    def at(cls, p: float, length: int, *, narrow: bool) -> _Sizes:
        scale = -1.0 / math.log1p(-p)
        draw, margin = _draw_sizes(length * p)
        # Uncapped, a gap's floor and the cumulative sums stay below the integer type's
        # range (2^62 with int64, as in _BandLayout); capping at the chunk's length then
        # changes only gaps that end past the chunk, which count for nothing, and the
        # sums stay below draw * (length + 1). Where neither fits int32, they are int64.
        top = scale * _EXPONENTIAL_MAX * draw + draw + length
        if narrow and min(top, draw * (length + 1.0) + length) < 2.0**31:
            return cls(scale, length, draw, margin, np.int32, 2.0**31)
        return cls(scale, length, draw, margin, np.int64, 2.0**62)


def _skips(
    gen: np.random.Generator,
    p: float,
    length: int,
    buffers: _Buffers | None,
    *,
    fractions: bool,
    narrow: bool = False,
    sizes: _Sizes | None = None,
) -> tuple[npt.NDArray[np.signedinteger[Any]], npt.NDArray[np.float64]]:
    """:func:`_bernoulli_positions`, and with `fractions` the fractional part of the
    gap E / λ that ends at each position (for thinning: see :func:`_thinning_threshold`).
    With `narrow`, the positions are int32 where they fit (half the memory traffic of
    every pass over them, and a float-to-int32 conversion that vectorises where int64's
    does not). The same random numbers and positions either way. `sizes`: those of
    ``_Sizes.at(p, length, narrow=narrow)``, made once for many chunks."""
    no_fractions = np.empty(0, dtype=np.float64)
    if p >= 1.0:
        return np.arange(length, dtype=np.int64), no_fractions
    if length == 0 or not _skips_by_gaps(p):  # p below ~1e-308: no flip in any chunk
        return np.empty(0, dtype=np.int64), no_fractions
    buffers = buffers if buffers is not None else _Buffers()
    sizes = sizes if sizes is not None else _Sizes.at(p, length, narrow=narrow)
    scale, draw, dtype = sizes.scale, sizes.draw, sizes.dtype
    name = "narrow" if dtype is np.int32 else "wide"
    pieces: list[npt.NDArray[np.signedinteger[Any]]] = []
    parts: list[npt.NDArray[np.float64]] = []
    last = -1
    while True:
        gaps = gen.standard_exponential(out=buffers("gaps", draw, np.float64))
        steps = buffers(f"{name}{len(pieces)}", draw, dtype)
        gaps *= scale
        if scale * _EXPONENTIAL_MAX * draw + draw + length >= sizes.limit:
            np.minimum(gaps, float(length), out=gaps)  # any gap that long ends the chunk
        np.copyto(steps, gaps, casting="unsafe")  # truncation = floor, gaps are >= 0
        if fractions:
            parts.append(
                np.subtract(gaps, steps, out=buffers(f"fraction{len(parts)}", draw, np.float64))
            )
        steps += 1
        steps[0] += last  # the positions: the sums of (skip + 1) from the last one on
        positions = steps.cumsum(out=steps)
        pieces.append(positions)
        if positions[-1] >= length:
            break
        last = int(positions[-1])
        draw = sizes.margin
    out = pieces[0] if len(pieces) == 1 else np.concatenate(pieces)
    end = int(out.searchsorted(out.dtype.type(length)))  # (a Python int: a cast of `out`)
    if not fractions:
        return out[:end], no_fractions
    fraction = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return out[:end], fraction[:end]


def _skips_by_gaps(p: float) -> bool:
    """Whether :func:`_skips` draws gaps at rate p (not at 1, nor below ~1e-308)."""
    return p < 1.0 and math.isfinite(-1.0 / math.log1p(-p))


def _thinning_threshold(rate: float, accept: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Thresholds on a gap's fractional part that keep a candidate with probability `accept`.

    A gap G = E / λ (E ~ Exp(1), λ = -log(1 - rate)) has a whole part, the geometric
    skip, and a fractional part F that is independent of it and of every other gap (the
    exponential is memoryless), with cdf ``(1 - e^(-λt)) / (1 - e^(-λ))`` on [0, 1).
    ``F < -log1p(a expm1(-λ)) / λ`` then holds with probability exactly a, independently
    of every position and every other candidate: thinning without a second random number.
    """
    lam = -math.log1p(-rate)
    return np.asarray(-np.log1p(accept * math.expm1(-lam)) / lam, dtype=np.float64)


def _starts(sorted_values: IntArray, buffers: _Buffers, name: str) -> IntArray:
    """Index of the first element of each run of equal values."""
    size = sorted_values.size
    if size == 0:
        return np.empty(0, dtype=np.int64)
    change = np.not_equal(
        sorted_values[1:], sorted_values[:-1], out=buffers("change", size - 1, np.bool_)
    )
    first = buffers(name, int(np.count_nonzero(change)) + 1, np.int64)
    first[0] = 0
    np.compress(change, buffers.arange(size)[1:], out=first[1:])
    return first


def _segment_sums(values: IntArray, first: IntArray, buffers: _Buffers, name: str) -> IntArray:
    """Sums of `values` over the segments that start at `first` (faster than reduceat)."""
    total = np.cumsum(values, out=buffers("cumsum", values.size, np.int64))
    m = first.size
    ends = buffers("ends", m, np.int64)
    ends[:-1] = first[1:]
    ends[-1] = values.size
    ends -= 1
    sums = np.take(total, ends, out=buffers(name, m, np.int64))
    sums[1:] -= total[ends[:-1]]
    return sums


def _case_changes(
    key: IntArray, weight: IntArray | int, plan: _Plan, buffers: _Buffers
) -> tuple[IntArray, IntArray]:
    """For sorted flip keys (run * n + case) of cases that no other group touches: the
    run of each hit case and the change of the run's pass count it makes (-1, 0, +1)."""
    n = plan.n_cases
    first = _starts(key, buffers, "first")
    if isinstance(weight, int):
        flipped = np.empty(first.size, dtype=np.int64)
        flipped[:-1] = first[1:]
        flipped[-1] = key.size
        flipped -= first
        flipped *= weight
    else:
        flipped = _segment_sums(weight, first, buffers, "flipped").copy()
    run, case = np.divmod(key[first], n)
    passes = np.equal(flipped, plan.need[case])
    passes &= plan.code_ok[case]
    return run, passes - plan.base_pass[case]


def _kept(
    gen: np.random.Generator,
    group: _Group,
    idx: IntArray,
    frac: npt.NDArray[np.float64],
    buffers: _Buffers,
) -> npt.NDArray[np.bool_]:
    """Which candidate flips of a thinned group stay: each with probability (its
    verdict's rate) / (the group's rate), independently, from the fractional parts of
    their gaps (:func:`_thinning_threshold`); uniforms only for a group at rate 1."""
    size = group.slot_case.size
    slot = np.floor_divide(idx, size, out=buffers("slot", idx.size, np.int64))
    slot *= size
    np.subtract(idx, slot, out=slot)  # idx mod size
    if group.threshold is None:  # rate 1: every verdict is a candidate, no gaps
        assert group.accept is not None
        u = gen.random(out=buffers("uniform", idx.size, np.float64))
        kept: npt.NDArray[np.bool_] = np.less(
            u, np.take(group.accept, slot), out=buffers("kept", idx.size, np.bool_)
        )
        return kept
    limit = np.take(group.threshold, slot, out=buffers("limit", idx.size, np.float64))
    kept = np.less(frac, limit, out=buffers("kept", idx.size, np.bool_))
    return kept


def _floor_divide(values: IntArray, d: int, bound: int, out: IntArray) -> IntArray:
    """``values // d`` into `out`, for values in ``[0, bound)``.

    Up to ``bound = 2^31`` it multiplies by ``m = ceil(2^s / d)`` and shifts right by
    ``s = 31 + ceil(log2 d)`` (Granlund and Montgomery, "Division by invariant integers
    using multiplication", PLDI 1994): exact there, since ``m d - 2^s < d <= 2^(s - 31)``,
    and the product stays below 2^63. Two cheap passes instead of numpy's integer
    division, the slowest step of a chunk's count; a power of two is one shift.
    """
    if d & (d - 1) == 0:
        return np.right_shift(values, d.bit_length() - 1, out=out)
    if bound > 1 << 31:
        return np.floor_divide(values, d, out=out)
    shift = 31 + (d - 1).bit_length()
    np.multiply(values, -(-(1 << shift) // d), out=out)
    return np.right_shift(out, shift, out=out)


class _OneRate:
    """What :func:`_skip_chunk_one_group` reads of a plan and a run count, made once for
    every chunk of that size (kept by the buffers, as the rate bands' layout is)."""

    def __init__(self, plan: _Plan, runs: int) -> None:
        group = plan.groups[0]
        self.rate = group.rate
        self.length = runs * group.slot_case.size
        self.per = group.case_slots  # verdicts of each case
        self.cases = group.slot_case.size // self.per
        self.alive, self.dead_span = group.alive, group.dead_span
        by_gaps = self.length > 0 and _skips_by_gaps(self.rate)
        self.sizes = _Sizes.at(self.rate, self.length, narrow=True) if by_gaps else None

    def divide(self, values: npt.NDArray[Any], d: int, out: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """``values // d`` into `out`: a shift, or a multiply (int32's division by a
        constant is one already; int64 takes :func:`_floor_divide`'s)."""
        if d & (d - 1) == 0:
            np.right_shift(values, d.bit_length() - 1, out=out)
        elif values.dtype == np.int64:
            _floor_divide(values, d, self.length, out)
        else:
            np.floor_divide(values, d, out=out)
        return out


def _skip_chunk_one_group(
    gen: np.random.Generator, plan: _Plan, runs: int, buffers: _Buffers
) -> IntArray:
    """:func:`_skip_chunk_by_groups` for one group at one rate, not thinned (the
    headline's builds): the same random numbers and the same histogram, in fewer passes.

    The positions are int32 where they fit; a case's first hit is kept (and only if the
    case can pass) by one mask; and the runs' hit counts are histogrammed without listing
    the runs: over the sorted runs of the kept hits, ``T_j = #{i : run[i] == run[i+j-1]}``
    sums ``max(0, hits - j + 1)`` over the runs, so ``T_j - T_{j+1}`` runs have at least
    j hits. ``T_{j+1}``'s mask is ``T_j``'s AND itself shifted by one (the runs are
    sorted), a pass over bytes, and j stops at the most hits of any run of the chunk
    (about 6 at 3% of 24 verdicts). A mask of the hits is faster than np.compress when
    nearly all are kept, np.compress when a quarter fall at random (measured).
    """
    one = buffers.layout(plan, runs, _OneRate)
    idx = _skips(gen, one.rate, one.length, buffers, fractions=False, sizes=one.sizes)[0]
    hist = np.zeros(plan.n_cases + 1, dtype=np.int64)
    if idx.size == 0:
        hist[plan.base_k] = runs
        return hist
    # in place wherever the operand is not read again: fewer arrays, more of them in cache
    key = idx if one.per == 1 else one.divide(idx, one.per, idx)  # run * cases + the case
    if one.per == 1 and one.alive is None:
        run = one.divide(key, one.cases, key)
    else:
        keep = buffers("keep", key.size, np.bool_)
        keep[0] = True
        np.not_equal(key[1:], key[:-1], out=keep[1:])  # a case's first hit (keys are sorted)
        if one.alive is None:
            run = key[keep]
            one.divide(run, one.cases, run)
        else:  # hits of cases that never pass count for none
            every = one.divide(key, one.cases, buffers("run_all", key.size, key.dtype.type))
            case = np.multiply(every, one.cases, out=buffers("case", key.size, key.dtype.type))
            np.subtract(key, case, out=case)
            alive = buffers("alive", key.size, np.bool_)
            if one.dead_span is None:
                np.take(one.alive, case, out=alive)
            else:  # case - lo, unsigned, at least hi - lo: two passes instead of a lookup
                lo, hi = one.dead_span
                case -= lo
                np.greater_equal(case.view(f"u{case.itemsize}"), hi - lo, out=alive)
            keep &= alive
            run = np.compress(keep, every)
    m = run.size
    counts = [m, 0]  # T_1, T_2, ... up to the first 0
    if m > 1:
        masks = buffers("same0", m, np.bool_), buffers("same1", m, np.bool_)
        same = np.equal(run[1:], run[:-1], out=masks[0][: m - 1])
        counts[1] = int(np.count_nonzero(same))
        while counts[-1]:  # i, i + j in one run iff i, i + j - 1 and i + 1, i + j are
            out = masks[(len(counts) + 1) % 2][: same.size - 1]
            same = np.logical_and(same[:-1], same[1:], out=out)
            counts.append(int(np.count_nonzero(same)))
    at_least = [a - b for a, b in itertools.pairwise(counts)]  # runs with >= 1, 2, ... hits
    hist[plan.base_k] = runs - at_least[0]
    for j, (a, b) in enumerate(itertools.pairwise([*at_least, 0]), start=1):
        hist[plan.base_k - j] = a - b
    return hist


def _skip_chunk_by_groups(
    gen: np.random.Generator, plan: _Plan, runs: int, buffers: _Buffers
) -> IntArray:
    """:func:`_skip_chunk` when each case's verdicts lie in one group, the same number in
    each of its cases, and a case passes iff none of its verdicts flips (the healthy
    build, and the cases of a regressed one that no code check fails) or never passes
    (a code check fails: its hits are dropped). Each group then only lists the distinct
    cases it hits, and a run's K is the base count less its hit cases: no merge of the
    groups' flips, few per-case lookups, and the same random numbers as the general path.
    """
    if len(plan.groups) == 1 and plan.groups[0].accept is None:
        return _skip_chunk_one_group(gen, plan, runs, buffers)
    hit_runs: list[IntArray] = []
    dense = len(plan.groups) > 1  # hits per run are counted densely, with a spare bin
    for g, group in enumerate(plan.groups):
        size = group.slot_case.size
        thinned = group.accept is not None  # only thinning reads the gaps' fractions
        idx, frac = _skips(gen, group.rate, runs * size, buffers, fractions=thinned)
        if dense and group.threshold is not None and group.case_slots == 1 and group.dead is None:
            # thinning as in _kept, without filtering: a dropped candidate's run becomes
            # the spare bin `runs`, which the count below leaves out
            run = np.floor_divide(idx, size, out=buffers(f"hit{g}", idx.size, np.int64))
            slot = np.multiply(run, size, out=buffers("slot", idx.size, np.int64))
            np.subtract(idx, slot, out=slot)
            limit = np.take(group.threshold, slot, out=buffers("limit", idx.size, np.float64))
            dropped = np.greater_equal(frac, limit, out=buffers("kept", idx.size, np.bool_))
            np.copyto(run, runs, where=dropped)
            hit_runs.append(run)
            continue
        if group.accept is not None:  # thinning, as in _skip_chunk
            idx = idx[_kept(gen, group, idx, frac, buffers)]
        per = group.case_slots
        if idx.size and per > 1:  # several flips may hit one case: keep it once
            key = buffers("case_key", idx.size, np.int64)
            if per & (per - 1) == 0:
                np.right_shift(idx, per.bit_length() - 1, out=key)
            else:
                np.floor_divide(idx, per, out=key)
            new = np.not_equal(key[1:], key[:-1], out=buffers("change", idx.size - 1, np.bool_))
            later = key[1:][new]  # (np.compress into a buffer takes 5x as long)
            idx = buffers("case_unique", later.size + 1, np.int64)
            idx[0] = key[0]
            idx[1:] = later
        cases = size // per
        run = _floor_divide(idx, cases, runs * cases, buffers(f"hit{g}", idx.size, np.int64))
        if group.alive is not None and run.size:  # hits of cases that never pass count for none
            case = np.multiply(run, cases, out=buffers("case", run.size, np.int64))
            np.subtract(idx, case, out=case)  # idx = run * cases + the case's index in the group
            alive = np.take(group.alive, case, out=buffers("alive", run.size, np.bool_))
            run = np.compress(alive, run)  # (still sorted)
        hit_runs.append(run)
    hist = np.zeros(plan.n_cases + 1, dtype=np.int64)
    if dense:  # runs of several groups: count hits per run densely
        per_run = np.bincount(np.concatenate(hit_runs), minlength=runs + 1)[:runs]
        hist += np.bincount(plan.base_k - per_run, minlength=plan.n_cases + 1)
        return hist
    run = hit_runs[0]  # sorted
    if run.size == 0:
        hist[plan.base_k] = runs
        return hist
    # Arrays of ~10^5 made afresh in every chunk are handed back to the OS and faulted in
    # again (0.5 s of system time in 10^8 runs): one temporary here, the rest in buffers.
    change = np.not_equal(run[1:], run[:-1], out=buffers("change", run.size - 1, np.bool_))
    ends = np.flatnonzero(change)  # last hit of each run with hits, but the last
    hits = buffers("hits", ends.size + 1, np.int64)  # cases hit in each run that has any
    if ends.size:
        hits[0] = ends[0] + 1
        np.subtract(ends[1:], ends[:-1], out=hits[1:-1])
        hits[-1] = run.size - 1 - ends[-1]
    else:
        hits[0] = run.size
    k = np.subtract(plan.base_k, hits, out=hits)
    hist += np.bincount(k, minlength=plan.n_cases + 1)
    hist[plan.base_k] += runs - hits.size
    return hist


def _skip_chunk(
    gen: np.random.Generator, plan: _Plan, runs: int, buffers: _Buffers | None = None
) -> IntArray:
    """Pass-count histogram of `runs` runs, visiting only the verdicts that flip."""
    buffers = buffers if buffers is not None else _Buffers()
    n = plan.n_cases
    if plan.closed and plan.groups and all(g.simple and g.case_slots for g in plan.groups):
        return _skip_chunk_by_groups(gen, plan, runs, buffers)
    keys: list[IntArray] = []
    weights: list[IntArray | int] = []
    for group in plan.groups:
        thinned = group.accept is not None  # only thinning reads the gaps' fractions
        idx, frac = _skips(gen, group.rate, runs * group.slot_case.size, buffers, fractions=thinned)
        if group.accept is not None:  # thinning: keep a candidate w.p. its rate / group rate
            keep = _kept(gen, group, idx, frac, buffers)
            run, slot = np.divmod(idx[keep], group.slot_case.size)
            run *= n
            run += np.take(group.slot_case, slot)
            keys.append(run)
            weights.append(group.weight if group.weight else group.slot_weight[slot])
            continue
        if group.per_case and group.weight:  # the common case: no slot lookups needed
            key_buffer = buffers(f"key{len(keys)}", idx.size, np.int64)
            keys.append(np.floor_divide(idx, group.per_case, out=key_buffer))  # run * n + case
            weights.append(group.weight)
            continue
        run, slot = np.divmod(idx, group.slot_case.size)
        keys.append(run * n + group.slot_case[slot])
        weights.append(group.weight if group.weight else group.slot_weight[slot])
    hist = np.zeros(n + 1, dtype=np.int64)
    if sum(k.size for k in keys) == 0:
        hist[plan.base_k] = runs
        return hist
    if len(keys) > 1 and plan.closed:  # each group settles its own cases: no merge
        changes = [
            _case_changes(key, weight, plan, buffers)
            for key, weight in zip(keys, weights, strict=True)
            if key.size  # a group with no flip in this chunk changes nothing
        ]
        run_of = np.concatenate([r for r, _ in changes])
        delta_of = np.concatenate([d for _, d in changes])
        k_float = np.bincount(run_of, weights=delta_of, minlength=runs)  # exact: small integers
        k_run = k_float.astype(np.int64)
        k_run += plan.base_k
        hist += np.bincount(k_run, minlength=n + 1)
        return hist
    if len(keys) == 1:
        key = keys[0]
    elif all(isinstance(w, int) for w in weights) and len(set(weights)) == 1:
        key = np.sort(np.concatenate(keys), kind="stable")  # sorted runs: merged (timsort)
        weights = [weights[0]]
    else:
        key = np.concatenate(keys)
        order = np.argsort(key, kind="stable")
        key = key[order]
        every = [np.broadcast_to(w, k.shape) for w, k in zip(weights, keys, strict=True)]
        weights = [np.concatenate(every)[order]]
    first = _starts(key, buffers, "first")
    weight = weights[0]
    if isinstance(weight, int):  # every flip in this chunk weighs the same
        flipped = buffers("flipped", first.size, np.int64)
        flipped[:-1] = first[1:]
        flipped[-1] = key.size
        flipped -= first
        flipped *= weight
    else:
        flipped = _segment_sums(weight, first, buffers, "flipped")  # per (run, case) hit
    m = first.size
    run, case = np.divmod(
        np.take(key, first, out=buffers("ukey", m, np.int64)),
        n,
        out=(buffers("run", m, np.int64), buffers("case", m, np.int64)),
    )
    passes = np.equal(
        flipped,
        np.take(plan.need, case, out=buffers("need", m, np.int64)),
        out=buffers("passes", m, np.bool_),
    )
    passes &= np.take(plan.code_ok, case, out=buffers("ok", m, np.bool_))
    delta = np.take(plan.base_pass, case, out=buffers("delta", m, np.int64))
    np.subtract(passes, delta, out=delta)
    run_first = _starts(run, buffers, "run_first")
    k = _segment_sums(delta, run_first, buffers, "k")
    k += plan.base_k
    hist += np.bincount(k, minlength=n + 1)
    hist[plan.base_k] += runs - run_first.size
    return hist


def _dense_chunk(gen: np.random.Generator, plan: _Plan, runs: int) -> IntArray:
    """Pass-count histogram of `runs` runs: one uniform per judge verdict (reference)."""
    n, j = plan.truth.shape
    rates: npt.NDArray[np.float64] = plan.rates
    if plan.noise.case_spread > 0:  # each run is a suite drawn afresh: every case its own rate
        report_pass = plan.noise.drawn_report_pass(gen, plan.suite, plan.build, runs)
        rates = np.where(plan.truth, 1.0 - report_pass, report_pass)
    elif plan.noise.run_correlated:  # each run draws its own flip rate x, every verdict uses it
        x = gen.beta(*plan.noise.beta_parameters(), size=(runs, 1, 1))
        keep = 1.0 - plan.noise.unparseable
        rates = np.where(plan.truth, 1.0 - keep * (1.0 - x), keep * x)
    flips = gen.random((runs, n, j)) < rates
    reported = plan.truth ^ flips
    case_pass = reported.all(axis=2) & plan.code_ok
    return np.bincount(np.count_nonzero(case_pass, axis=1), minlength=n + 1).astype(np.int64)
