"""Exact paired tests of two builds on the same cases, and multiplicity control."""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._common.seeds import SeedLike, root_seed

#: Permutations drawn when the exact count is too big.
MONTE_CARLO_PERMUTATIONS = 100_000
#: ... and in each simulated comparison of the operating characteristic (still a valid
#: p-value, ``(1 + hits) / (1 + draws)``; a little less powerful than the reported one).
SIMULATION_PERMUTATIONS = 2_000

__all__ = [
    "benjamini_hochberg",
    "case_p_value",
    "case_permutation_p",
    "case_scores",
    "exact_mcnemar",
    "fisher_one_sided",
    "holm",
    "sign_flip_p",
    "smallest_case_p_value",
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


def _subset_counts(values: list[int]) -> list[int]:
    """How many subsets (of any size) of `values` sum to each s = 0..sum, exactly."""
    total = sum(values)
    dtype: Any = np.int64 if len(values) < 62 else object
    dp = np.zeros(total + 1, dtype=dtype)
    dp[0] = 1
    for v in values:
        new = dp.copy()
        new[v:] += dp[: total + 1 - v]
        dp = new
    return [int(c) for c in dp]


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


#: The exact count enumerates every arrangement of the runs while there are at most this
#: many (10 + 10 runs: 184,756), else a seeded Monte Carlo over arrangements.
EXACT_ARRANGEMENTS = 200_000
#: Scores are whole numbers of millionths of a nat, so that arrangements that are the same
#: up to relabelling tie exactly (a sum of floats would depend on its order).
_SCORE_UNIT = 1_000_000


@functools.lru_cache(maxsize=256)
def case_scores(runs: int, candidate_runs: int) -> npt.NDArray[np.int64]:
    """``S[f, x]``: the surprise of a case with `f` failures over all `runs` runs when `x`
    of them fall in the `candidate_runs` runs labelled candidate, ``-log P(X >= x)`` for
    X hypergeometric (the chance that a random labelling puts at least that many of the
    case's failures on the candidate), in millionths (rounded). 0 where ``x = 0``."""
    n, k = runs, candidate_runs
    total = math.comb(n, k)
    scores = np.zeros((n + 1, n + 1), dtype=np.int64)
    for f in range(n + 1):
        tail = 0
        for x in range(min(f, k), -1, -1):
            tail += math.comb(f, x) * math.comb(n - f, k - x)
            scores[f, x] = round(_SCORE_UNIT * (math.log(total) - math.log(tail)))
    return scores


def _extreme(
    picks: npt.NDArray[np.intp], events: npt.NDArray[np.uint8], rows: Any, flat: Any
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(most surprising case, summed surprise) of each arrangement, a row of `picks`
    (the runs labelled candidate), over the cases' events (runs x cases): `rows` is each
    case's offset into `flat`, the score table flattened (its row ``f``). The
    counts are gathered, not multiplied out: a BLAS product this small costs more in its
    threads' start than in its work."""
    index = events[picks].sum(axis=1, dtype=np.intp)  # each case's events on that side
    index += rows
    per_case = flat[index]
    return per_case.max(axis=1), per_case.sum(axis=1)


def _combinations(items: npt.NDArray[np.intp], size: int) -> npt.NDArray[np.intp]:
    """Every `size`-subset of `items`, one per row."""
    found = list(itertools.combinations(items.tolist(), size))
    return np.asarray(found, dtype=np.intp).reshape(len(found), size)


def _rare_count(
    events: npt.NDArray[np.uint8],
    varying: Any,
    rows: Any,
    flat: Any,
    reach: Any,
    observed: tuple[int, int],
    candidate_runs: int,
    limit: int,
) -> int | None:
    """The arrangements as extreme as the observed one, counted exactly by enumerating only
    those in which a case is at least as surprising as its most surprising case; None when
    there are more than `limit` of them. A reachable case ``j`` is that surprising when at
    least ``t_j`` of its ``f_j`` events fall on the candidate's side: ``sum_y C(f_j, y)
    C(n - f_j, k - y)`` arrangements, each counted under the first such case only.
    `varying` is each case's events over all the runs (``f_j``)."""
    n, k = events.shape[0], candidate_runs
    top, total = observed
    cases = np.flatnonzero(reach)
    thresholds = []
    size = 0
    for j in cases:
        f = int(varying[j])
        scores = flat[rows[j] : rows[j] + min(f, k) + 1]
        t = int(np.argmax(scores >= top))  # the fewest events on the candidate's side
        thresholds.append(t)
        size += sum(math.comb(f, y) * math.comb(n - f, k - y) for y in range(t, min(f, k) + 1))
        if size > limit:
            return None
    earlier_events = events[:, cases]
    hits = 0
    for i, (j, t) in enumerate(zip(cases, thresholds, strict=True)):
        with_event = np.flatnonzero(events[:, j])
        without = np.flatnonzero(events[:, j] == 0)
        for y in range(t, min(len(with_event), k) + 1):
            a = _combinations(with_event, y)
            b = _combinations(without, k - y)
            picks = np.concatenate([np.repeat(a, len(b), axis=0), np.tile(b, (len(a), 1))], 1)
            if i:  # an arrangement an earlier case reaches was counted under that case
                x = earlier_events[:, :i][picks].sum(axis=1)
                picks = picks[(x < np.asarray(thresholds[:i])).all(axis=1)]
            best, summed = _extreme(picks, events, rows, flat)
            hits += int(np.count_nonzero((best > top) | ((best == top) & (summed >= total))))
    return hits


def _tail_share(
    events: npt.NDArray[np.uint8],
    candidate_runs: int,
    gen: np.random.Generator,
    draws: int,
    limit: int,
    stop_hits: int | None = None,
) -> tuple[int, int, bool]:
    """(arrangements at least as extreme as the observed one, arrangements counted,
    counted exactly): every arrangement while there are at most `limit`, or those in which
    some case is as surprising as the observed most surprising one while there are at
    most `limit` of them (:func:`_rare_count`); else the observed one and `draws` drawn
    with `gen`. The observed arrangement labels the last `candidate_runs` runs candidate.
    With `stop_hits`, the count may stop once more than that many are as extreme."""
    n = events.shape[0]
    arrangements = math.comb(n, candidate_runs)
    varying = events.sum(axis=0, dtype=np.intp)
    keep = (varying > 0) & (varying < n)  # a case all failing or all passing never moves
    if not keep.any():  # nothing moves: every arrangement ties with the observed one
        return arrangements, arrangements, True
    events = np.ascontiguousarray(events[:, keep])
    flat = case_scores(n, candidate_runs).ravel()
    rows = varying[keep] * (n + 1)
    observed = np.arange(n - candidate_runs, n)[None, :]
    top, total = (int(v[0]) for v in _extreme(observed, events, rows, flat))
    # only a case that can be as surprising as the observed most surprising one can make
    # an arrangement as extreme: look at those first, at the rest only where they do
    reach = flat[rows + np.minimum(varying[keep], candidate_runs)] >= top
    if arrangements > limit:
        rare = _rare_count(
            events, varying[keep], rows, flat, reach, (top, total), candidate_runs, limit
        )
        if rare is not None:
            return rare, arrangements, True
    few = np.count_nonzero(reach) <= events.shape[1] // 4
    first = (np.ascontiguousarray(events[:, reach]), rows[reach])
    chunk = max(1, 2_000_000 // (candidate_runs * events.shape[1]))
    if stop_hits is not None:
        chunk = min(chunk, 256)
    hits = looked = 0

    def count(picks: npt.NDArray[np.intp]) -> None:
        nonlocal hits, looked
        looked += len(picks)
        if few:
            maybe = _extreme(picks, *first, flat)[0] >= top
            picks = picks[maybe]
        best, summed = _extreme(picks, events, rows, flat)
        hits += int(np.count_nonzero((best > top) | ((best == top) & (summed >= total))))

    def going() -> bool:
        return stop_hits is None or hits <= stop_hits

    if arrangements <= limit:
        every = itertools.combinations(range(n), candidate_runs)
        while going() and (block := list(itertools.islice(every, chunk))):
            count(np.asarray(block, dtype=np.intp))
        return hits, looked, True
    while looked < draws and going():
        # a uniformly random labelling: the candidate's runs are the smallest keys
        keys = gen.random((min(draws - looked, chunk), n))
        count(np.argpartition(keys, candidate_runs - 1, axis=1)[:, :candidate_runs])
    return hits + 1, looked + 1, False  # the observed arrangement counts itself


def case_permutation_p(
    base: Matrix,
    cand: Matrix,
    alternative: str = "worse",
    *,
    rng: SeedLike = 0,
    fast: bool = False,
    stop_above: float | None = None,
) -> tuple[TestResult, bool]:
    """The permutation test of build labels over whole runs, on the cases' surprise.

    `base` and `cand` are runs x cases outcomes (1 pass, 0 fail, -1 no verdict). A case's
    surprise under a labelling is how unlikely it is that at least as many of its failures
    (over all the runs of both builds) fall on the candidate's runs
    (:func:`case_scores`); its failures over all the runs, and so the score, do not depend
    on the labelling, so the test is exact whenever the runs are exchangeable. A labelling
    is more extreme when its most surprising case is more surprising, the summed surprise
    breaking ties: one case that fails in every candidate run and no baseline run is the
    most extreme labelling there is, whatever the other cases do. Counted over every
    labelling while there are at most :data:`EXACT_ARRANGEMENTS`, or, exactly too, over
    the labellings in which some case is as surprising as the observed most surprising
    one while there are at most that many of them (a clear regression at 30 + 30 runs),
    else over seeded random ones (``(1 + hits) / (1 + draws)``, :data:`MONTE_CARLO_PERMUTATIONS`, or
    :data:`SIMULATION_PERMUTATIONS` with `fast`, as when the simulation counts only
    while there are at most that many). For "two-sided", the same on the passes, and p
    the doubled smaller tail. `stop_above` (a simulation that needs only to know whether
    p is at most that) stops counting once p is sure to be above it, and then reports
    the share counted so far, above it too.

    Returns the test and whether its evidence points to the candidate being worse (the
    worse tail is the smaller).
    """
    runs = np.concatenate([base, cand])
    rb, rc = len(base), len(cand)
    arrangements = math.comb(rb + rc, rc)
    limit = SIMULATION_PERMUTATIONS if fast else EXACT_ARRANGEMENTS
    draws = SIMULATION_PERMUTATIONS if fast else MONTE_CARLO_PERMUTATIONS
    seeds = root_seed(rng).spawn(2)
    sides = (0, 1) if alternative == "two-sided" else (0,)
    tails, exact = [], True
    for side, event in enumerate(sides):
        stop = None
        if stop_above is not None:  # a tail above stop_above / sides puts p above it
            share = stop_above / len(sides)
            stop = math.floor(share * (arrangements if arrangements <= limit else draws + 1))
        gen = np.random.Generator(np.random.PCG64(seeds[side]))
        events = (runs == event).astype(np.uint8)
        hits, looked, counted = _tail_share(events, rc, gen, draws, limit, stop)
        tails.append(hits / looked)
        exact = exact and counted
    smallest = 1.0 / arrangements
    worse = tails[0] <= min(tails)
    p = tails[0] if len(tails) == 1 else min(1.0, 2 * min(tails))
    if len(tails) == 2:
        smallest = min(1.0, 2 * smallest)
    se = 0.0 if exact else math.sqrt(p * (1 - p) / draws)
    return TestResult(p_value=p, exact=exact, standard_error=se, smallest_p=smallest), worse


def sign_flip_p(differences: list[Fraction], alternative: str = "worse") -> TestResult:
    """The exact sign-flip test over cases of the per-case pass-share differences
    (baseline minus candidate), counted over all 2^n sign vectors."""
    scaled, _ = _scaled([abs(d) for d in differences])
    signed, _ = _scaled(list(differences))
    n = len(differences)
    total = sum(scaled)
    observed = sum(signed)  # same common denominator: |d| and d share it
    counts = _subset_counts(scaled)
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


def smallest_case_p_value(bn: int, cn: int, total: int, alternative: str) -> float:
    """The smallest p-value one case's exact Fisher test can give with `total` passes over
    `bn` baseline and `cn` candidate runs: its most extreme table(s)."""
    high = min(total, bn)  # as many passes as possible in the baseline
    worse = case_p_value(high, bn, total - high, cn, alternative)
    if alternative == "worse":
        return worse
    low = max(0, total - cn)
    return min(worse, case_p_value(low, bn, total - low, cn, alternative))


Matrix = npt.NDArray[np.int8]


def _global_test(
    base: Matrix,
    cand: Matrix,
    test: str,
    alternative: str,
    rng: SeedLike = 0,
    fast: bool = False,
    alpha: float = 0.05,
) -> tuple[TestResult, float, tuple[int, int] | None, bool]:
    """(result, statistic, discordant, worse) of the global test on complete-by-case
    matrices: `statistic` describes the difference (the discordant count's, the mean pass
    share's or the summed per-case share's, baseline minus candidate), `worse` says which
    way the test's evidence points. With `fast` (a simulation of the decision at level
    `alpha`), a p-value above `alpha` may be reported as any value above it: whatever it
    is, the decision is the same (no part of it is spent at more than alpha)."""
    if test == "mcnemar":
        b, c = base[0], cand[0]
        seen = (b >= 0) & (c >= 0)
        worse = int(np.sum(seen & (b == 1) & (c == 0)))
        better = int(np.sum(seen & (b == 0) & (c == 1)))
        n = int(seen.sum())
        p = exact_mcnemar(worse, better, alternative)
        smallest = 0.5**n if alternative == "worse" else min(1.0, 2 * 0.5**n)
        result = TestResult(p_value=float(p), exact=True, smallest_p=smallest)
        return result, float(worse - better), (worse, better), worse > better
    if test == "runs":
        # a simulation needs only to know whether p is at most alpha (see the docstring)
        stop = alpha if fast else None
        result, worse = case_permutation_p(
            base, cand, alternative, rng=rng, fast=fast, stop_above=stop
        )
        shares = []
        for m in (base, cand):
            seen = (m >= 0).sum(axis=1)
            passed = (m == 1).sum(axis=1)
            shares.append(
                [Fraction(int(p), int(s)) for p, s in zip(passed, seen, strict=True) if s > 0]
            )
        stat = float(sum(shares[0]) / len(shares[0]) - sum(shares[1]) / len(shares[1]))
        return result, stat, None, worse
    diffs = []
    for j in range(base.shape[1]):
        b, c = base[:, j], cand[:, j]
        nb, nc = int((b >= 0).sum()), int((c >= 0).sum())
        diffs.append(Fraction(int((b == 1).sum()), nb) - Fraction(int((c == 1).sum()), nc))
    result = sign_flip_p(diffs, alternative)
    statistic = float(sum(diffs))
    return result, statistic, None, sum(diffs) > 0


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
def case_p_value(bp: int, bn: int, cp: int, cn: int, alternative: str) -> float:
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
    result, statistic, discordant, test_worse = _global_test(
        base, cand, test, alternative, rng, fast, alpha
    )
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
    raw = [case_p_value(*c, alternative) for c in counts]
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
        lows = [smallest_case_p_value(bn, cn, bp + cp, alternative) for bp, bn, cp, cn in counts]

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
