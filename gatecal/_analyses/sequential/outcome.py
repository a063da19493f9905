"""Sequential boundaries and their exact operating characteristics (the first half of
the sequential gates of :mod:`gatecal._analyses.sequential.designs`).

A :class:`SequentialBoundary` is the pass and fail cut at each look; one run's pass-count
pmf (:class:`RatePmfs` under the shared-rate model, :class:`SharedBinomial` when every
case shares one rate, or a plain pmf for independent runs) gives
:func:`sequential_outcome`: exact stopping probabilities by dynamic programming over the
looks. The designs that choose a boundary are in ``designs.py``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gatecal._common.contracts import FieldsJSON
from gatecal._common.validate import ParameterError, check_count
from gatecal._model.arrays import Floats

__all__ = [
    "RatePmfs",
    "RunPmfs",
    "SequentialBoundary",
    "SequentialOutcome",
    "SharedBinomial",
    "sequential_outcome",
]


# -- boundaries and their exact operating characteristics ------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialBoundary(FieldsJSON):
    """The decision after run `look`: pass if ``S >= pass_at_least``, fail if
    ``S <= fail_at_most``, else run again (S: passing cases summed over the runs so far).
    ``fail_at_most = -1`` never fails; ``pass_at_least = look * cases + 1`` never passes."""

    look: int
    pass_at_least: int
    fail_at_most: int


def _check_boundaries(
    boundaries: Sequence[SequentialBoundary], cases: int
) -> tuple[SequentialBoundary, ...]:
    if not boundaries:
        raise ParameterError("boundaries", "must hold at least one look", list(boundaries))
    for j, b in enumerate(boundaries, start=1):
        top = j * cases
        if b.look != j:
            raise ParameterError("boundaries", f"look {j} must be numbered {j}", b.look)
        if not -1 <= b.fail_at_most <= top or not 0 <= b.pass_at_least <= top + 1:
            raise ParameterError(
                "boundaries", f"must lie in [-1, {top + 1}] at look {j}", b.to_dict()
            )
        if b.pass_at_least <= b.fail_at_most:
            raise ParameterError(
                "boundaries", f"pass_at_least must exceed fail_at_most at look {j}", b.to_dict()
            )
    last = boundaries[-1]
    if last.pass_at_least != last.fail_at_most + 1:
        raise ParameterError(
            "boundaries",
            "must meet at the last look (pass_at_least = fail_at_most + 1)",
            last.to_dict(),
        )
    return tuple(boundaries)


def _check_pmf(name: str, pmf: npt.ArrayLike) -> Floats:
    p = np.asarray(pmf, dtype=np.float64)
    if p.ndim != 1 or p.size < 2:
        raise ParameterError(name, "must be a pmf over 0..cases (at least 2 entries)", p.shape)
    if not np.all((p >= 0) & (p <= 1)) or abs(math.fsum(p.tolist()) - 1.0) > 1e-9:
        raise ParameterError(name, "must hold probabilities in [0, 1] summing to 1", p.tolist())
    return p


@dataclass(frozen=True, slots=True, eq=False)
class RatePmfs:
    """One run's passing-count pmf given the build's shared flip rate, at the nodes of a
    quadrature rule of that rate: the runs of one build share one rate, drawn once, and
    given it are independent draws of ``pmfs[i]`` with probability ``weights[i]``.

    Attributes
    ----------
    pmfs : ndarray, shape (nodes, cases + 1)
    weights : ndarray, shape (nodes,)
        Positive, summing to 1.
    """

    pmfs: Floats
    weights: Floats

    def __post_init__(self) -> None:
        pmfs = np.atleast_2d(np.asarray(self.pmfs, dtype=np.float64))
        w = np.asarray(self.weights, dtype=np.float64).ravel()
        if pmfs.ndim != 2 or pmfs.shape[1] < 2 or pmfs.shape[0] != w.size:
            raise ParameterError("pmfs", "must be one pmf over 0..cases per weight", pmfs.shape)
        if not np.all(w >= 0) or abs(math.fsum(w.tolist()) - 1.0) > 1e-9:
            raise ParameterError("weights", "must be non-negative and sum to 1", w.tolist())
        sums = pmfs.sum(axis=1)
        if not np.all((pmfs >= 0) & (pmfs <= 1)) or np.any(np.abs(sums - 1.0) > 1e-9):
            raise ParameterError("pmfs", "must hold probabilities in [0, 1] summing to 1", sums)
        object.__setattr__(self, "pmfs", pmfs)
        object.__setattr__(self, "weights", w)

    @property
    def cases(self) -> int:
        return int(self.pmfs.shape[1] - 1)

    @property
    def mixture(self) -> Floats:
        """One run's pmf (the rate drawn for that run alone)."""
        return np.clip(self.weights @ self.pmfs, 0.0, None)

    @classmethod
    def independent(cls, pmf: npt.ArrayLike) -> RatePmfs:
        """Runs that are independent draws of `pmf` (one node of weight 1)."""
        return cls(_check_pmf("pmf", pmf)[None, :], np.ones(1))


@dataclass(frozen=True, slots=True, eq=False)
class SharedBinomial:
    """Runs of one build that share one rate, each a binomial given it: at node i of the
    rate's quadrature rule (weight ``weights[i]``) a run passes ``Bin(trials, q[i])`` of
    its `cases` cases (the other ``cases - trials`` never pass).

    Then, whatever the rate, the runs given their sum ``S_j`` are hypergeometric: P(the
    j-th run passed k | S_j = s) = ``C(trials, k) C((j-1) trials, s-k) / C(j trials, s)``.
    So P(a path is still running after look j | S_j = s) does not depend on the rate; the
    dynamic programme carries it (a number in [0, 1], one row), and each look's stopped
    mass is that times ``P(S_j = s)``, the Beta mixture of ``Bin(j trials, q)`` (exact for
    a rule of degree looks x trials x the degree of q in the rate). As fast as independent
    runs, and an independent route to the same figures as :class:`RatePmfs` (tests pin
    one to the other).
    """

    cases: int
    trials: int
    q: Floats
    weights: Floats
    _sums: dict[int, Floats] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        q = np.asarray(self.q, dtype=np.float64).ravel()
        w = np.asarray(self.weights, dtype=np.float64).ravel()
        check_count("cases", self.cases, low=1)
        check_count("trials", self.trials, low=0, high=self.cases)
        if q.size != w.size or q.size == 0 or not np.all((q >= 0) & (q <= 1)):
            raise ParameterError("q", "must hold one probability per weight", q.tolist())
        if not np.all(w >= 0) or abs(math.fsum(w.tolist()) - 1.0) > 1e-9:
            raise ParameterError("weights", "must be non-negative and sum to 1", w.tolist())
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "weights", w)

    def sum_pmf(self, runs: int) -> Floats:
        """P(S_runs = s) for s = 0 .. runs x cases (zero above runs x trials)."""
        found = self._sums.get(runs)
        if found is None:
            from scipy import stats  # deferred: `import gatecal` stays light

            m = runs * self.trials
            k = np.arange(m + 1)
            mix = self.weights @ stats.binom.pmf(k[None, :], m, self.q[:, None])
            found = np.zeros(runs * self.cases + 1)
            found[: m + 1] = np.clip(mix, 0.0, None)
            self._sums[runs] = found
        return found

    @property
    def mixture(self) -> Floats:
        """One run's pmf."""
        return self.sum_pmf(1)

    @property
    def pmfs(self) -> Floats:
        """One run's pmf at every node (the :class:`RatePmfs` view of the same model)."""
        from scipy import stats  # deferred: `import gatecal` stays light

        out = np.zeros((self.q.size, self.cases + 1))
        k = np.arange(self.trials + 1)
        out[:, : self.trials + 1] = stats.binom.pmf(k[None, :], self.trials, self.q[:, None])
        return out

    def as_rate_pmfs(self) -> RatePmfs:
        """The same model as one pmf per node (the slower, row-by-row route)."""
        pmfs = self.pmfs
        return RatePmfs(pmfs / pmfs.sum(axis=1, keepdims=True), self.weights)


@functools.lru_cache(maxsize=64)
def _hypergeometric(trials: int, look: int) -> Floats:
    """``H[s, k]`` = P(the look-th run passed k | S_look = s), s = 0..look x trials."""
    from scipy import stats  # deferred: `import gatecal` stays light

    if trials == 0:  # no case can pass: S stays 0
        return np.ones((1, 1))
    s = np.arange(look * trials + 1)[:, None]
    k = np.arange(trials + 1)[None, :]
    h = np.asarray(stats.hypergeom.pmf(k, look * trials, trials, s), dtype=np.float64)
    if not np.all(np.isfinite(h)):
        raise ArithmeticError(f"hypergeometric kernel of {trials} cases at look {look}")
    h.flags.writeable = False
    return h


RunPmfs = RatePmfs | SharedBinomial


def _as_rates(name: str, pmf: npt.ArrayLike | RatePmfs | SharedBinomial) -> RunPmfs:
    if isinstance(pmf, RatePmfs | SharedBinomial):
        return pmf
    return RatePmfs(_check_pmf(name, pmf)[None, :], np.ones(1))


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialOutcome(FieldsJSON):
    """What a sequential gate does to one build, exactly.

    Attributes
    ----------
    failure_probability : float
        P(the gate fails the build): the false alarm of a healthy build, the detection
        of a regressed one.
    pass_probability : float
        P(it passes the build), summed on its own (not ``1 - failure_probability``).
    expected_runs : float
        E[number of runs until it stops] (the average sample number, ASN).
    stop_distribution : tuple of float
        ``stop_distribution[j - 1]`` = P(it stops after run j).
    fail_by_look, pass_by_look : tuple of float
        P(it fails / passes the build after run j).
    """

    failure_probability: float
    pass_probability: float
    expected_runs: float
    stop_distribution: tuple[float, ...]
    fail_by_look: tuple[float, ...]
    pass_by_look: tuple[float, ...]


def _fast_sum(x: Floats) -> float:
    """numpy's pairwise sum: of non-negative terms, accurate to a few ulps relative."""
    return float(x.sum())


def _fsum(x: Floats) -> float:
    return math.fsum(x.tolist())


def _convolve_rows(alive: Floats, pmf: Floats) -> Floats:
    """Row i of `alive` convolved with row i of `pmf` (2-D; one row: ``np.convolve``)."""
    if alive.shape[0] == 1:
        return np.convolve(alive[0], pmf[0])[None, :]
    rows, width = alive.shape
    size = pmf.shape[1]
    if width > size:  # the shorter one slides: out[t] = sum_i short[i] long[t - i]
        alive, pmf = pmf, alive
        width, size = size, width
    padded = np.zeros((rows, size + 2 * (width - 1)))
    padded[:, width - 1 : width - 1 + size] = pmf
    windows = np.lib.stride_tricks.sliding_window_view(padded, width, axis=1)
    # (rows, out, width) @ (rows, width, 1): non-negative products, summed per output
    return np.asarray(np.matmul(windows, alive[:, ::-1, None])[..., 0], dtype=np.float64)


def _start(rates: RunPmfs) -> Floats:
    rows = 1 if isinstance(rates, SharedBinomial) else rates.weights.size
    return np.ones((rows, 1))


def _carry(alive: Floats, offset: int, rates: SharedBinomial, look: int) -> Floats:
    """P(still running before look `look` | S_look = s) for s = offset .. offset + width
    - 1 + trials, from the same given S_(look-1) (`alive`, one row)."""
    n, width = rates.trials, alive.shape[1]
    h = _hypergeometric(n, look)[offset : offset + width + n]
    padded = np.zeros(width + 2 * n)
    padded[n : n + width] = alive[0]
    windows = np.lib.stride_tricks.sliding_window_view(padded, n + 1)[:, ::-1]
    return np.asarray((h * windows).sum(axis=1))[None, :]


def _step(
    alive: Floats,
    offset: int,
    rates: RunPmfs,
    b: SequentialBoundary,
    total: Callable[[Floats], float] = _fsum,
) -> tuple[float, float, Floats, int]:
    """One look: carry the paths still running over one run, take off both stopping
    regions. Independent runs or :class:`RatePmfs`: `alive[r, i]` is the mass at
    ``S = offset + i`` given rate node r (one row for independent runs), convolved with
    one run, and the stopped masses are mixed over the nodes (weights positive: no
    cancellation). :class:`SharedBinomial`: `alive` holds P(still running | S). Only the
    continuation region is kept (it is narrow: the work is its width times the cases,
    not the whole range)."""
    if alive.shape[1] == 0:
        return 0.0, 0.0, alive, offset
    if isinstance(rates, SharedBinomial):
        kept = _carry(alive, offset, rates, b.look)
        mass = kept[0] * rates.sum_pmf(b.look)[offset : offset + kept.shape[1]]
    else:
        kept = _convolve_rows(alive, rates.pmfs)
        mass = rates.weights[:, None] * kept
    lo = min(max(b.fail_at_most + 1 - offset, 0), kept.shape[1])
    hi = min(max(b.pass_at_least - offset, lo), kept.shape[1])
    return (
        total(mass[..., :lo].ravel()),
        total(mass[..., hi:].ravel()),
        kept[:, lo:hi],
        offset + lo,
    )


def _last_mass(alive: Floats, offset: int, rates: RunPmfs, look: int) -> Floats:
    """The mass at S = offset + i after the last look, before its cut."""
    if alive.shape[1] == 0:
        return np.asarray(alive[0], dtype=np.float64)
    if isinstance(rates, SharedBinomial):
        cond = _carry(alive, offset, rates, look)[0]
        return np.asarray(cond * rates.sum_pmf(look)[offset : offset + cond.size])
    return np.asarray(rates.weights @ _convolve_rows(alive, rates.pmfs))


def sequential_outcome(
    boundaries: Sequence[SequentialBoundary], pmf: npt.ArrayLike | RatePmfs | SharedBinomial
) -> SequentialOutcome:
    """Exact operating characteristics of `boundaries` when one run's passing count has `pmf`.

    A plain pmf: runs are independent draws of it (with run-to-run correlation and runs
    that each draw their own rate, the mixture pmf of one run). A :class:`RatePmfs`: the
    runs share one rate, and every figure is the mixture over its nodes. Dynamic
    programming over the looks.

    Parameters
    ----------
    boundaries : sequence of SequentialBoundary
        One per look, numbered 1, 2, ...; at each, ``pass_at_least`` above
        ``fail_at_most``, both within the counts possible by then.
    pmf : array_like, shape (cases + 1,), or RatePmfs
        One run's passing-count pmf (runs independent draws of it), or :class:`RatePmfs`
        (the runs share one rate).

    Returns
    -------
    SequentialOutcome
        P(fail) and P(pass), the expected runs, and P(stop, fail, pass) after each look.

    Raises
    ------
    ParameterError
        If the boundaries are empty, misnumbered or out of range, or `pmf` is not a pmf.
    """
    rates = _as_rates("pmf", pmf)
    bounds = _check_boundaries(boundaries, rates.cases)
    alive, offset = _start(rates), 0
    fails, passes = [], []
    for b in bounds:
        failed, passed, alive, offset = _step(alive, offset, rates, b)
        fails.append(failed)
        passes.append(passed)
    stops = [f + s for f, s in zip(fails, passes, strict=True)]
    lower, upper = math.fsum(fails), math.fsum(passes)
    return SequentialOutcome(  # both sides summed on their own: a tiny one keeps its accuracy
        failure_probability=lower / (lower + upper),
        pass_probability=upper / (lower + upper),
        expected_runs=math.fsum(j * s for j, s in enumerate(stops, start=1)),
        stop_distribution=tuple(stops),
        fail_by_look=tuple(fails),
        pass_by_look=tuple(passes),
    )
