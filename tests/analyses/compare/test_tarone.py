"""Tarone's discrete Bonferroni over the per-case Fisher tests: its K by the definition,
its family-wise error exactly (enumerated over every table), and never less power than
Holm's first step or Bonferroni."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from gatecal._analyses.compare.paired import case_p_value, smallest_case_p_value, tarone


def _k_by_definition(smallest: list[float], level: float) -> int:
    """The smallest K >= 1 with #{cases whose smallest p <= level / K} <= K."""
    return next(k for k in itertools.count(1) if sum(s <= level / k for s in smallest) <= k)


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=30),
    st.floats(1e-4, 0.5),
)
def test_k_and_the_adjusted_values_follow_the_definition(pairs, level):
    smallest = [min(a, b) for a, b in pairs]
    p = [max(a, b) for a, b in pairs]  # a p-value is never below its case's smallest
    k = _k_by_definition(smallest, level)
    got = tarone(p, smallest, level)
    for pi, si, gi in zip(p, smallest, got, strict=True):
        want = min(1.0, k * pi) if si <= level / k else 1.0
        assert gi == pytest.approx(want, rel=1e-12, abs=0)
        assert gi <= min(1.0, len(p) * pi) or si > level / k  # no worse than Bonferroni


def _fwer(m: int, bn: int, cn: int, q: Fraction, level: float) -> Fraction:
    """P(Tarone rejects some case) at `level`, m independent cases whose runs pass with
    probability q each, exactly: every vector of case margins, then each case's table."""
    n = bn + cn
    p_total = [math.comb(n, t) * q**t * (1 - q) ** (n - t) for t in range(n + 1)]
    lows = [smallest_case_p_value(bn, cn, t, "worse") for t in range(n + 1)]

    def p_reject(t: int, cut: float) -> Fraction:  # P(Fisher p <= cut | margin t)
        out = Fraction(0)
        for x in range(max(0, t - cn), min(t, bn) + 1):
            if case_p_value(x, bn, t - x, cn, "worse") <= cut:
                out += Fraction(math.comb(bn, x) * math.comb(cn, t - x), math.comb(n, t))
        return out

    total = Fraction(0)
    for ts in itertools.product(range(n + 1), repeat=m):
        mins = [lows[t] for t in ts]
        k = _k_by_definition(mins, level)
        keep = Fraction(1)
        for t in ts:
            if lows[t] <= level / k:
                keep *= 1 - p_reject(t, level / k)
        weight = math.prod(p_total[t] for t in ts)
        total += weight * (1 - keep)
    return total


@pytest.mark.parametrize(("m", "runs"), [(3, 3), (4, 4), (2, 6)])
@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(9, 10), Fraction(19, 20)])
def test_the_family_wise_error_is_at_most_the_level_exactly(m, runs, q):
    for level in (0.05, 0.1):
        assert _fwer(m, runs, runs, q, level) <= Fraction(level)
