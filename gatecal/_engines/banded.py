"""The kernel for rate bands (per-case rates): every band's exponentials in one draw.

Loaded only for a plan that bands its rates (:func:`gatecal._engines.skipping._rate_bands`),
so the one-rate simulations of the headline do not import it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gatecal._engines.skipping import (
    _EXPONENTIAL_MAX,
    IntArray,
    _Buffers,
    _draw_sizes,
    _Plan,
    _skip_chunk_by_groups,
)


def _banded_chunk(gen: np.random.Generator, plan: _Plan, runs: int, buffers: _Buffers) -> IntArray:
    """Pass-count histogram of `runs` runs of a banded plan: :func:`_skip_chunk_banded`,
    or band by band where a band's first draw falls short."""
    hist = _skip_chunk_banded(gen, plan, runs, buffers)
    return hist if hist is not None else _skip_chunk_by_groups(gen, plan, runs, buffers)


@dataclass(frozen=True, slots=True)
class _Band:
    """One rate band of a :class:`_BandLayout`: its scalars and its views of the arrays."""

    scale: float  # gap = exponential * scale
    cap: float | None  # gaps are capped at the chunk's length where they could overflow
    length: int  # slots in the chunk: runs x the band's slots per run
    size: int  # the band's slots per run
    threshold: npt.NDArray[np.float64] | None  # thinning, see _thinning_threshold
    gaps: npt.NDArray[np.float64]
    steps: IntArray  # skip + 1, then the positions of the candidate flips
    run: IntArray
    slot: IntArray
    limit: npt.NDArray[np.float64]


class _BandLayout:
    """Arrays and per-band views of :func:`_skip_chunk_banded` for one plan and run
    count, made once and reused by every chunk of that size (a dozen Python-level
    slices and buffer look-ups per band and chunk cost more than the band's arithmetic)."""

    def __init__(self, plan: _Plan, runs: int) -> None:
        draws = [_draw_sizes(runs * g.slot_case.size * g.rate)[0] for g in plan.groups]
        total = sum(draws)
        self.gaps = np.empty(total, dtype=np.float64)
        self.frac = np.empty(total, dtype=np.float64)
        self.steps = np.empty(total, dtype=np.int64)
        self.run = np.empty(total, dtype=np.int64)
        self.slot = np.empty(total, dtype=np.int64)
        self.limit = np.full(total, 2.0)  # fractional parts are below 1: every candidate stays
        self.dropped = np.empty(total, dtype=np.int64)
        stops = list(itertools.accumulate(draws))
        self.first = np.array([stop - d for d, stop in zip(draws, stops, strict=True)])
        bands = []
        for group, draw, stop in zip(plan.groups, draws, stops, strict=True):
            size = group.slot_case.size
            scale = -1.0 / math.log1p(-group.rate)
            length = runs * size
            # Uncapped, a gap's floor and the cumulative sums stay below 2^62; capping
            # changes only gaps that end past the chunk, which count for nothing.
            safe = scale * _EXPONENTIAL_MAX * draw + draw < 2.0**62
            span = slice(stop - draw, stop)
            bands.append(
                _Band(
                    scale,
                    None if safe else float(length),
                    length,
                    size,
                    group.threshold,
                    self.gaps[span],
                    self.steps[span],
                    self.run[span],
                    self.slot[span],
                    self.limit[span],
                )
            )
        self.bands = tuple(bands)


def _skip_chunk_banded(
    gen: np.random.Generator, plan: _Plan, runs: int, buffers: _Buffers
) -> IntArray | None:
    """:func:`_skip_chunk_by_groups` for rate bands (several groups, one verdict slot per
    case, rates in (0, 1)): every band's exponentials in one draw, then whole-chunk
    array operations, so that a band costs a few numpy calls instead of two dozen.

    The same random numbers and the same histogram as :func:`_skip_chunk_by_groups`:
    that draws band after band from `gen`, ``int(mean) + margin`` exponentials each, and
    more only if a band's gaps do not reach the end of the chunk (six standard
    deviations short: practically never). Here the bands' first draws are one call; if
    a band fell short, the generator is put back and None returned, for the band-by-band
    path to draw exactly as it always did.
    """
    layout = buffers.layout(plan, runs, _BandLayout)
    state = gen.bit_generator.state
    gen.standard_exponential(out=layout.gaps)
    for band in layout.bands:
        np.multiply(band.gaps, band.scale, out=band.gaps)
        if band.cap is not None:
            np.minimum(band.gaps, band.cap, out=band.gaps)
    whole = np.floor(layout.gaps, out=layout.frac)
    steps = layout.steps
    np.copyto(steps, whole, casting="unsafe")
    frac = np.subtract(layout.gaps, whole, out=layout.frac)  # = gaps - steps: exact below 2^53
    steps += 1
    steps[layout.first] -= 1  # a band's positions: the sums of its (skip + 1), less 1
    for band in layout.bands:  # (array methods: numpy's function wrappers cost ~2 us a call)
        positions = band.steps.cumsum(out=band.steps)
        if positions[-1] < band.length:  # this band needs more gaps: draw as _skips does
            gen.bit_generator.state = state
            return None
        end = int(positions.searchsorted(band.length))  # the rest lie past the chunk's end
        run = np.floor_divide(positions[:end], band.size, out=band.run[:end])
        band.run[end:] = runs  # a bin the count below leaves out
        if band.threshold is not None:
            slot = np.multiply(run, band.size, out=band.slot[:end])
            np.subtract(positions[:end], slot, out=slot)
            band.threshold.take(slot, out=band.limit[:end], mode="clip")
    # a dropped candidate's run becomes a bin from `runs` on, left out too
    run = layout.run
    dropped = np.greater_equal(frac, layout.limit, out=layout.dropped)
    dropped *= runs
    run += dropped
    per_run = np.bincount(run, minlength=runs)[:runs]
    return np.bincount(plan.base_k - per_run, minlength=plan.n_cases + 1).astype(np.int64)
