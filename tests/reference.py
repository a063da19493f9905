"""Independent references for the exact engine: exact rational arithmetic, no gatecal maths."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb


def binomial_lower_tail(n: int, k_min: int, q: Fraction) -> Fraction:
    """P(K < k_min) for K ~ Binomial(n, q), by the closed form with math.comb."""
    return sum((comb(n, j) * q**j * (1 - q) ** (n - j) for j in range(k_min)), Fraction(0))


def enumerate_pass_counts(q: list[Fraction]) -> list[Fraction]:
    """Poisson-binomial pmf by brute force over all 2^n pass/fail patterns."""
    pmf = [Fraction(0)] * (len(q) + 1)
    for pattern in itertools.product((0, 1), repeat=len(q)):
        prob = Fraction(1)
        for passed, qi in zip(pattern, q, strict=True):
            prob *= qi if passed else 1 - qi
        pmf[sum(pattern)] += prob
    return pmf


def case_pass_probability(
    truth: list[bool], kinds: list[str], fnr: Fraction, fpr: Fraction
) -> Fraction:
    """P(a case reports pass), check by check, in Fractions."""
    prob = Fraction(1)
    for ok, kind in zip(truth, kinds, strict=True):
        if kind == "code":
            prob *= 1 if ok else 0
        else:
            prob *= (1 - fnr) if ok else fpr
    return prob
