"""Exact paired tests of two builds on the same cases, and multiplicity control."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from gatecal._common.seeds import SeedLike, root_seed

#: The exact count's table may hold at most this many cells, else Monte Carlo.
EXACT_CELLS = 4_000_000
#: Permutations drawn when the exact count is too big.
MONTE_CARLO_PERMUTATIONS = 100_000
#: ... and in each simulated comparison of the operating characteristic (still a valid
#: p-value, ``(1 + hits) / (1 + draws)``; a little less powerful than the reported one).
SIMULATION_PERMUTATIONS = 2_000
#: The simulation counts exactly only while the count costs at most this many cell updates.
SIMULATION_WORK = 20_000_000

__all__ = [
    "benjamini_hochberg",
    "exact_mcnemar",
    "fisher_one_sided",
    "holm",
    "run_permutation_p",
    "sign_flip_p",
]


# -- exact p-values -------------------------------------------------------------------------


def _two_sided(upper: Fraction, lower: Fraction) -> Fraction:
    """The doubled smaller tail, at most 1."""
    return min(Fraction(1), 2 * min(upper, lower))


def exact_mcnemar(worse: int, better: int, alternative: str = "worse") -> Fraction:
    """Exact McNemar p-value: `worse` cases passed in the baseline and failed in the
    candidate, `better` the reverse; under no change each discordant case is worse with
    probability 1/2. One-sided ``P(Bin(D, 1/2) >= worse)``, or the doubled smaller tail."""
    d = worse + better
    upper = Fraction(sum(math.comb(d, i) for i in range(worse, d + 1)), 2**d)
    if alternative == "worse":
        return upper
    lower = Fraction(sum(math.comb(d, i) for i in range(worse + 1)), 2**d)
    return _two_sided(upper, lower)


def fisher_one_sided(base_pass: int, base_runs: int, cand_pass: int, cand_runs: int) -> Fraction:
    """Fisher's exact p-value that the candidate passes less often: ``P(A >= base_pass)``
    for A the baseline's passes, hypergeometric given the total passes."""
    total = base_pass + cand_pass
    denom = math.comb(base_runs + cand_runs, total)
    top = min(base_runs, total)
    num = sum(
        math.comb(base_runs, x) * math.comb(cand_runs, total - x) for x in range(base_pass, top + 1)
    )
    return Fraction(num, denom)


def _subset_counts(values: list[int], size: int | None, *, exact: bool = True) -> list[Any]:
    """How many subsets (of `size` elements, or of any size) sum to each s = 0..sum:
    exact integers, or (``exact=False``, counts beyond int64 only) float64 counts."""
    total = sum(values)
    n = len(values)
    count = math.comb(n, size) if size is not None else 2**n
    dtype: Any = np.int64 if count < 2**62 else (object if exact else np.float64)
    if size is None:
        dp = np.zeros(total + 1, dtype=dtype)
        dp[0] = 1
        for v in values:
            new = dp.copy()
            new[v:] += dp[: total + 1 - v]
            dp = new
        return [int(c) for c in dp] if dtype is not np.float64 else list(dp)
    table = np.zeros((size + 1, total + 1), dtype=dtype)
    table[0, 0] = 1
    for v in values:
        new = table.copy()
        new[1:, v:] += table[:-1, : total + 1 - v]
        table = new
    return [int(c) for c in table[size]] if dtype is not np.float64 else list(table[size])


def _scaled(shares: list[Fraction]) -> tuple[list[int], int]:
    """Integers proportional to `shares` and their common denominator."""
    lcm = math.lcm(*(s.denominator for s in shares)) if shares else 1
    return [int(s * lcm) for s in shares], lcm


@dataclass(frozen=True, slots=True, kw_only=True)
class TestResult:
    p_value: float
    exact: bool
    #: the Monte Carlo p-value's standard error (0 when exact)
    standard_error: float = 0.0
    #: the smallest p-value any data of this shape can give (can the test reach alpha?)
    smallest_p: float = 0.0


def run_permutation_p(
    base: list[Fraction],
    cand: list[Fraction],
    alternative: str = "worse",
    *,
    rng: SeedLike = 0,
    exact_counts: bool = True,
) -> TestResult:
    """The permutation test of build labels over runs; `base` and `cand` are the runs'
    pass shares. Exact by counting subset sums when feasible, else seeded Monte Carlo.
    ``exact_counts=False`` (the simulation's fast path) counts in float64 where the
    counts outgrow int64, instead of in Python integers, and samples
    :data:`SIMULATION_PERMUTATIONS` permutations where it samples (and where the exact
    count would cost more than :data:`SIMULATION_WORK` cell updates)."""
    values, _ = _scaled([*base, *cand])
    rb, n = len(base), len(base) + len(cand)
    observed = sum(values[:rb])
    smallest = 1.0 / math.comb(n, rb)
    cells = rb * sum(values)
    if cells <= EXACT_CELLS and (exact_counts or cells * n <= SIMULATION_WORK):
        counts = _subset_counts(values, rb, exact=exact_counts)
        if isinstance(counts[0], float):
            whole = math.fsum(counts)
            hi = math.fsum(counts[observed:]) / whole
            lo = math.fsum(counts[: observed + 1]) / whole
            p = hi if alternative == "worse" else min(1.0, 2 * min(hi, lo))
            return TestResult(p_value=p, exact=True, smallest_p=smallest)
        denom = math.comb(n, rb)
        upper = Fraction(sum(counts[observed:]), denom)
        if alternative == "worse":
            return TestResult(p_value=float(upper), exact=True, smallest_p=smallest)
        lower = Fraction(sum(counts[: observed + 1]), denom)
        both = _two_sided(upper, lower)
        return TestResult(p_value=float(both), exact=True, smallest_p=min(1.0, 2 * smallest))
    gen = np.random.Generator(np.random.PCG64(root_seed(rng)))
    arr = np.asarray(values, dtype=np.float64)
    draws = MONTE_CARLO_PERMUTATIONS if exact_counts else SIMULATION_PERMUTATIONS
    sums = np.empty(draws)
    for start in range(0, draws, 1000):
        perm = gen.permuted(np.tile(arr, (min(1000, draws - start), 1)), axis=1)
        sums[start : start + len(perm)] = perm[:, :rb].sum(axis=1)
    hi = float(np.sum(sums >= observed))
    lo = float(np.sum(sums <= observed))
    p_hi, p_lo = (1 + hi) / (1 + draws), (1 + lo) / (1 + draws)
    p = p_hi if alternative == "worse" else min(1.0, 2 * min(p_hi, p_lo))
    se = math.sqrt(p * (1 - p) / draws)
    return TestResult(p_value=p, exact=False, standard_error=se, smallest_p=smallest)


def sign_flip_p(differences: list[Fraction], alternative: str = "worse") -> TestResult:
    """The exact sign-flip test over cases of the per-case pass-share differences
    (baseline minus candidate), counted over all 2^n sign vectors."""
    scaled, _ = _scaled([abs(d) for d in differences])
    signed, _ = _scaled(list(differences))
    n = len(differences)
    total = sum(scaled)
    observed = sum(signed)  # same common denominator: |d| and d share it
    counts = _subset_counts(scaled, None)
    # a sign vector with + on subset P sums to 2 * sum_P |d| - total
    denom = 2**n
    upper = Fraction(sum(c for s, c in enumerate(counts) if 2 * s - total >= observed), denom)
    smallest = 1.0 / denom
    if alternative == "worse":
        return TestResult(p_value=float(upper), exact=True, smallest_p=smallest)
    lower = Fraction(sum(c for s, c in enumerate(counts) if 2 * s - total <= observed), denom)
    return TestResult(
        p_value=float(_two_sided(upper, lower)), exact=True, smallest_p=min(1.0, 2 * smallest)
    )


# -- multiplicity ---------------------------------------------------------------------------


def holm(p_values: list[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error under any dependence)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out


def benjamini_hochberg(p_values: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false-discovery rate under positive dependence)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i], reverse=True)
    out = [0.0] * m
    running = 1.0
    for k, i in enumerate(order):
        rank = m - k
        running = min(running, p_values[i] * m / rank)
        out[i] = min(1.0, running)
    return out
