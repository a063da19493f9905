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


def gate_set_edges(
    failures: list[int], cases: list[int], cutoff: float, rhos: list[float]
) -> tuple[list[tuple[float, float, float]], float]:
    """The rate edges (rho, low, high) of the set ``2 (max log L - log L(mu, rho)) <=
    cutoff`` at each icc of `rhos` inside it, and the floor ``max log L - cutoff / 2``.

    Independently of gatecal: scipy's binom / betabinom log-likelihood (runs of sizes
    `cases`), maximised by a bounded search over rho of the maximum over mu, polished by
    Nelder-Mead; at each icc the profile maximum by a bounded search and both edges by
    Brent's method.
    """
    import numpy as np
    from scipy import optimize, stats

    x, m = np.asarray(failures), np.asarray(cases)

    def loglik(mu: float, rho: float) -> float:
        if rho == 0:
            return float(stats.binom.logpmf(x, m, mu).sum())
        s = (1 - rho) / rho
        return float(stats.betabinom.logpmf(x, m, mu * s, (1 - mu) * s).sum())

    def peak(rho: float) -> tuple[float, float]:
        got = optimize.minimize_scalar(
            lambda mu: -loglik(mu, rho), bounds=(1e-10, 0.9), method="bounded",
            options={"xatol": 1e-13},
        )  # fmt: skip
        return float(got.x), -float(got.fun)

    # scipy's betabinom cancels below rho ~ 1e-4 (betaln of huge arguments): the search
    # over rho > 0 starts there, and rho = 0 is the binomial at its closed-form maximum
    p = float(x.sum() / m.sum())
    best_rho = optimize.minimize_scalar(
        lambda r: -peak(r)[1], bounds=(1e-4, 0.95), method="bounded", options={"xatol": 1e-10}
    )
    best = max(loglik(p, 0.0), -float(best_rho.fun))
    polished = optimize.minimize(
        lambda v: -loglik(v[0], v[1]), [peak(float(best_rho.x))[0], float(best_rho.x)],
        method="Nelder-Mead", bounds=[(1e-9, 0.9), (1e-4, 0.95)],
        options={"xatol": 1e-12, "fatol": 1e-13},
    )  # fmt: skip
    best = max(best, -float(polished.fun))
    floor = best - cutoff / 2
    edges = []
    for rho in rhos:
        mu, value = peak(rho)
        if value < floor:
            continue  # outside the set

        def gap(r: float, rho: float = rho) -> float:
            return loglik(r, rho) - floor

        high = optimize.brentq(gap, mu, 1 - 1e-12, xtol=1e-15)
        low = optimize.brentq(gap, 1e-300, mu, xtol=1e-300) if gap(1e-300) < 0 else 0.0
        edges.append((float(rho), float(low), float(high)))
    return edges, floor


def _poly_mul(p: list[Fraction], q: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            out[i + j] += a * b
    return out


def beta_mixed_binomial_lower_tails(
    n: int, q: list[Fraction], a: Fraction, b: Fraction
) -> list[Fraction]:
    """``P(K < k)`` for k = 0..n, K | x ~ Binomial(n, q(x)), x ~ Beta(a, b), in Fractions.

    `q` is a polynomial in x (coefficients, lowest power first). Each pmf term
    ``comb(n, k) q^k (1 - q)^(n - k)`` is expanded into powers of x and integrated by the
    Beta moments ``E x^m = prod_(i < m) (a + i) / (a + b + i)``: no quadrature.
    """
    one_minus = [1 - q[0], *(-c for c in q[1:])]
    moments = [Fraction(1)]
    for i in range((len(q) - 1) * n):
        moments.append(moments[-1] * (a + i) / (a + b + i))
    q_pow, r_pow = [[Fraction(1)]], [[Fraction(1)]]
    for _ in range(n):
        q_pow.append(_poly_mul(q_pow[-1], q))
        r_pow.append(_poly_mul(r_pow[-1], one_minus))
    tails = [Fraction(0)]
    for k in range(n):
        poly = _poly_mul(q_pow[k], r_pow[n - k])
        tails.append(
            tails[-1] + comb(n, k) * sum(c * m for c, m in zip(poly, moments, strict=True))
        )
    return tails
