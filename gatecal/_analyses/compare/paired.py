"""Exact paired tests of two builds on the same cases, and multiplicity control."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

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


def tarone(p_values: list[float], smallest: list[float], level: float) -> list[float]:
    """Tarone's discrete Bonferroni at `level`: K is the smallest whole number such that at
    most K cases can reach ``level / K`` at all (`smallest`: the smallest p-value each
    case's exact test can give, from its margins); those cases' adjusted p-values are
    ``K p``, the others' 1 (they can never be significant, so they cost no level).
    Family-wise error at most `level` under any dependence, given the margins: each
    case's test is exact given them and K depends on them only. A case is significant at
    `level` exactly when its adjusted p-value is at most `level` (unlike Holm's, these
    adjusted values are for this one level)."""
    mins = sorted(smallest)
    m = len(mins)
    k = 1
    while k < m and mins[k] <= level / k:  # more than k cases can reach level / k
        k += 1
    return [
        min(1.0, k * p) if low <= level / k else 1.0
        for p, low in zip(p_values, smallest, strict=True)
    ]


def _smallest_case_p(bn: int, cn: int, total: int, alternative: str) -> float:
    """The smallest p-value one case's exact Fisher test can give with `total` passes over
    `bn` baseline and `cn` candidate runs: its most extreme table(s)."""
    high = min(total, bn)  # as many passes as possible in the baseline
    worse = _case_p(high, bn, total - high, cn, alternative)
    if alternative == "worse":
        return worse
    low = max(0, total - cn)
    return min(worse, _case_p(low, bn, total - low, cn, alternative))


Matrix = npt.NDArray[np.int8]


def _global_test(
    base: Matrix, cand: Matrix, test: str, alternative: str, rng: SeedLike = 0, fast: bool = False
) -> tuple[TestResult, float, tuple[int, int] | None]:
    """(result, statistic, discordant) of the global test on complete-by-case matrices."""
    if test == "mcnemar":
        b, c = base[0], cand[0]
        seen = (b >= 0) & (c >= 0)
        worse = int(np.sum(seen & (b == 1) & (c == 0)))
        better = int(np.sum(seen & (b == 0) & (c == 1)))
        n = int(seen.sum())
        p = exact_mcnemar(worse, better, alternative)
        smallest = 0.5**n if alternative == "worse" else min(1.0, 2 * 0.5**n)
        result = TestResult(p_value=float(p), exact=True, smallest_p=smallest)
        return result, float(worse - better), (worse, better)
    if test == "runs":
        shares = []
        for m in (base, cand):
            seen = (m >= 0).sum(axis=1)
            passed = (m == 1).sum(axis=1)
            shares.append(
                [Fraction(int(p), int(s)) for p, s in zip(passed, seen, strict=True) if s > 0]
            )
        result = run_permutation_p(
            shares[0], shares[1], alternative, rng=rng, exact_counts=not fast
        )
        stat = float(sum(shares[0]) / len(shares[0]) - sum(shares[1]) / len(shares[1]))
        return result, stat, None
    diffs = []
    for j in range(base.shape[1]):
        b, c = base[:, j], cand[:, j]
        nb, nc = int((b >= 0).sum()), int((c >= 0).sum())
        diffs.append(Fraction(int((b == 1).sum()), nb) - Fraction(int((c == 1).sum()), nc))
    result = sign_flip_p(diffs, alternative)
    return result, float(sum(diffs)), None


# -- the decision: how the level is split ----------------------------------------------------


#: How the level is spent: on the run test and the per-case tests (half each), on one.
MODES = ("both", "test", "cases", "none")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Decision:
    test: TestResult
    statistic: float
    discordant: tuple[int, int] | None
    counts: list[tuple[int, int, int, int]]
    raw: list[float]
    adjusted: list[float]
    directions: list[str]
    flagged: list[bool]
    mode: str
    p_cases: float
    p_value: float
    reject: bool
    worse: bool


_comb = functools.lru_cache(maxsize=4096)(math.comb)


@functools.lru_cache(maxsize=65536)
def _case_p(bp: int, bn: int, cp: int, cn: int, alternative: str) -> float:
    """One case's exact Fisher p-value (cached: simulated builds repeat the same counts)."""
    worse_p = fisher_one_sided(bp, bn, cp, cn)
    if alternative == "worse":
        return float(worse_p)
    return float(_two_sided(worse_p, fisher_one_sided(cp, cn, bp, bn)))


def _decide(
    base: Matrix,
    cand: Matrix,
    test: str,
    alternative: str,
    alpha: float,
    multiplicity: str,
    rng: SeedLike = 0,
    fast: bool = False,
) -> _Decision:
    """The global test, the per-case tests and how they combine into one decision.

    When both can reach half the level, the run test and the per-case family each get
    alpha / 2 and the decision's p-value is ``min(1, 2 min(p_test, p_cases))``, p_cases
    the smallest adjusted per-case p-value (a Bonferroni union of two level-alpha/2
    tests: level alpha under any dependence); a flagged case then always means a
    regression. Otherwise the one that can reach alpha decides alone, and cases are
    flagged only when the test rejects (closed testing: the error rate stays alpha).
    """
    result, statistic, discordant = _global_test(base, cand, test, alternative, rng, fast)
    table = np.stack(
        [
            (base == 1).sum(axis=0),
            (base >= 0).sum(axis=0),
            (cand == 1).sum(axis=0),
            (cand >= 0).sum(axis=0),
        ],
        axis=1,
    )
    counts = [(int(a), int(b), int(c), int(d)) for a, b, c, d in table.tolist()]
    raw = [_case_p(*c, alternative) for c in counts]
    directions = []
    for bp, bn, cp, cn in counts:
        share = bp * cn - cp * bn  # the sign of bp / bn - cp / cn
        directions.append("worse" if share > 0 else "better" if share < 0 else "same")
    m = len(counts)
    # the smallest p-value a case can give (all passes on one side, all failures on the
    # other), and what Holm's or BH's first step makes of it
    factor = 1 if alternative == "worse" else 2
    half = alpha / 2
    if multiplicity == "tarone":  # which cases can reach a level, from their margins
        lows = [_smallest_case_p(bn, cn, bp + cp, alternative) for bp, bn, cp, cn in counts]

        def reach(level: float) -> bool:
            return any(a <= level for a in tarone(lows, lows, level))
    else:
        smallest_case = min(factor / _comb(bn + cn, bn) for _, bn, _, cn in counts) * m

        def reach(level: float) -> bool:
            return smallest_case <= level

    if test != "mcnemar" and result.smallest_p <= half and reach(half):
        mode, case_level = "both", half
    elif result.smallest_p <= alpha:
        mode, case_level = "test", alpha
    elif reach(alpha):
        mode, case_level = "cases", alpha
    else:
        mode, case_level = "none", alpha
    if multiplicity == "tarone":
        adjusted = tarone(raw, lows, case_level)
    else:
        adjusted = holm(raw) if multiplicity == "holm" else benjamini_hochberg(raw)
    changed = [
        a
        for a, d in zip(adjusted, directions, strict=True)
        if d == "worse" or (alternative == "two-sided" and d == "better")
    ]
    p_cases = min(changed, default=1.0)
    test_worse = statistic > 0
    if mode == "both":
        p_value = min(1.0, 2 * min(result.p_value, p_cases))
    elif mode == "cases":
        p_value = p_cases
    else:
        p_value = result.p_value
    reject = mode != "none" and p_value <= alpha
    flagged = [a <= case_level and d != "same" for a, d in zip(adjusted, directions, strict=True)]
    if mode == "test" and not reject:
        flagged = [False] * m  # closed testing: no case claim without the global one
    if (
        mode in ("both", "cases")
        and p_cases <= case_level
        and (mode == "cases" or p_cases <= result.p_value)
    ):
        worse = any(f and d == "worse" for f, d in zip(flagged, directions, strict=True))
    else:
        worse = test_worse
    return _Decision(
        test=result,
        statistic=statistic,
        discordant=discordant,
        counts=counts,
        raw=raw,
        adjusted=adjusted,
        directions=directions,
        flagged=flagged,
        mode=mode,
        p_cases=p_cases,
        p_value=p_value,
        reject=reject,
        worse=worse,
    )
