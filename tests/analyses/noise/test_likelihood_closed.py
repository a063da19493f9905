"""The runs' likelihood in closed form for big suites, against the term-by-term sums.

Above 4,096 cases per run the beta-binomial likelihood's sums of log1p terms are taken
in closed form (log-gamma and digamma differences, by Stirling's series for large
arguments). Each sum is checked against ``math.fsum`` of its terms (each term correctly
rounded, the sum exactly rounded), and the bounds recommend computes from a big suite's
runs against the same bounds with the term-by-term sums.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gatecal._analyses.noise import overdispersion
from gatecal._analyses.noise.bounds import noise_bounds
from gatecal._analyses.noise.overdispersion import _Likelihood, log_rising, reciprocal_rising

COUNTS = [0, 1, 2, 7, 64, 65, 100, 999, 5000, 100_000]


@pytest.mark.parametrize("c", [1e-12, 1e-9, 1e-7, 1e-5, 3e-4, 0.0099, 0.01, 0.0101, 0.1, 1, 999])
def test_log_rising_is_the_sum_of_its_terms(c):
    got = log_rising(np.array(COUNTS), c)
    for x, value in zip(COUNTS, got.tolist(), strict=True):
        ref = math.fsum(math.log1p(j * c) for j in range(x))
        assert value == pytest.approx(ref, rel=1e-12, abs=1e-300), (c, x)


@pytest.mark.parametrize("z", [1e-3, 0.5, 3, 99, 100, 101, 999, 1e4, 1e7, 1e12])
def test_reciprocal_rising_is_the_sum_of_its_terms(z):
    got = reciprocal_rising(np.array(COUNTS), z)
    for x, value in zip(COUNTS, got.tolist(), strict=True):
        ref = math.fsum(1.0 / (z + j) for j in range(x))
        assert value == pytest.approx(ref, rel=1e-12, abs=1e-300), (z, x)


def _runs(cases: int, runs: int, rate: float, icc: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a, b = rate * (1 - icc) / icc, (1 - rate) * (1 - icc) / icc
    return rng.binomial(cases, rng.beta(a, b, size=runs))


def test_likelihood_closed_form_equals_the_term_by_term_sums(monkeypatch):
    x = _runs(20_000, 12, 0.05, 0.02, seed=7)
    m = np.full(x.shape, 20_000)
    closed = _Likelihood(x, m)
    monkeypatch.setattr(overdispersion, "_PREFIX_MAX", 10**9)
    terms = _Likelihood(x, m)
    assert closed._closed and not terms._closed
    for mu in (0.01, 0.05, 0.2):
        for rho in (1e-7, 1e-4, 0.02, 0.3, 0.9):
            theta = rho / (1 - rho)
            # the excess is a difference of large sums: absolute agreement is what counts
            assert closed.excess(mu, theta) == pytest.approx(terms.excess(mu, theta), abs=1e-7)
            assert closed.score_mu(mu, theta) == pytest.approx(terms.score_mu(mu, theta), rel=1e-10)


def test_big_suite_bounds_are_the_same_either_way(monkeypatch):
    """recommend's bounds of a 5,000-case suite: closed form and term-by-term sums give
    the same gate bounds (to 1e-8 relative) and the same strictest gate."""
    n = 5_000
    x = _runs(n, 10, 0.04, 0.01, seed=3)
    closed = noise_bounds(x, n)
    monkeypatch.setattr(overdispersion, "_PREFIX_MAX", 10**9)
    terms = noise_bounds(x, n)
    for k in (4_700, 4_750, 4_800, 4_850):
        assert closed.false_alarm(n, k) == pytest.approx(terms.false_alarm(n, k), rel=1e-8)
        assert closed.detection(n, 300, k) == pytest.approx(
            terms.detection(n, 300, k), rel=1e-8, abs=1e-300
        )
    assert closed.strictest_gate(n, 0.05) == terms.strictest_gate(n, 0.05)
    assert closed.icc_top == pytest.approx(terms.icc_top, rel=1e-8)


def test_closed_forms_at_many_points_are_the_rows_of_single_points():
    """log_rising and reciprocal_rising given an array of P values return P rows, each
    what the single value gives (both branches, z below and above _STIRLING_FROM, and
    counts up to _SHORT term by term, in one call)."""
    xs = np.array(COUNTS)
    cs = np.array([1e-9, 3e-4, 0.0099, 0.0101, 0.1, 999])
    rows = log_rising(xs, cs)
    assert rows.shape == (cs.size, xs.size)
    for c, row in zip(cs.tolist(), rows, strict=True):
        np.testing.assert_allclose(row, log_rising(xs, c), rtol=1e-15, atol=0)
    zs = np.array([1e-3, 3, 99, 101, 1e4, 1e12])
    rows = reciprocal_rising(xs, zs)
    for z, row in zip(zs.tolist(), rows, strict=True):
        np.testing.assert_allclose(row, reciprocal_rising(xs, z), rtol=1e-15, atol=0)


@pytest.mark.parametrize("cases", [300, 20_000])  # term by term, closed forms
def test_likelihood_at_many_points_is_each_point_alone(cases):
    x = _runs(cases, 9, 0.05, 0.02, seed=11)
    lik = _Likelihood(x, np.full(x.shape, cases))
    mu = np.array([0.0, 0.01, 0.04, 0.05, 0.07, 0.3, 1.0, 0.05])
    theta = np.array([0.01, 1e-6, 0.02, 0.0, 0.5, 1e-3, 0.01, 0.02])
    got = lik.excess_many(mu, theta)
    want = [lik.excess(a, b) for a, b in zip(mu.tolist(), theta.tolist(), strict=True)]
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-9)
    assert got[0] == got[6] == -math.inf  # outside (0, 1) with failures and passes
    inner = slice(1, 6)
    slopes = lik.score_mu_many(mu[inner], theta[inner])
    want = [
        lik.score_mu(a, b) for a, b in zip(mu[inner].tolist(), theta[inner].tolist(), strict=True)
    ]
    np.testing.assert_allclose(slopes, want, rtol=1e-13)


def test_profiles_at_many_iccs_are_each_profile_alone():
    """Likelihood.profiles (bisection of the score for every icc at once, closed forms)
    finds the rate and the value profile() finds by Brent's method, one icc at a time."""
    x = _runs(20_000, 10, 0.05, 0.02, seed=13)
    rhos = np.array([0.0, 1e-7, 1e-4, 0.005, 0.02, 0.1, 0.5, 0.9, 0.02])
    mus, values = _Likelihood(x, np.full(x.shape, 20_000)).profiles(rhos)
    alone = _Likelihood(x, np.full(x.shape, 20_000))
    for rho, mu, value in zip(rhos.tolist(), mus.tolist(), values.tolist(), strict=True):
        want_mu, want_value = alone.profile(rho)
        assert mu == pytest.approx(want_mu, rel=1e-12), rho
        assert value == pytest.approx(want_value, abs=1e-8), rho  # a difference of big sums


def test_big_suites_region_is_the_region_brent_finds(monkeypatch):
    """The printed region of a big suite, every icc's two ends found at once by Newton's
    method, is the region Brent's method finds one end at a time."""
    from gatecal._analyses.noise import bounds as nb

    x = _runs(20_000, 10, 0.05, 0.02, seed=17)
    fast = noise_bounds(x, 20_000)
    monkeypatch.setattr(nb, "_newton_edges", lambda lik, f, r, *a: np.full(r.size, math.nan))
    slow = noise_bounds(x, 20_000)
    # the top icc is itself found by each search: the same to rounding, not to the last bit
    # (two code paths; the bits differ between CPUs' instruction sets)
    assert len(fast.iccs) == len(slow.iccs)
    assert math.isclose(fast.iccs[-1], fast.icc_top, rel_tol=1e-12)  # top * grid / grid
    np.testing.assert_allclose(fast.iccs, slow.iccs, rtol=1e-9)
    np.testing.assert_allclose(fast.lows[:-1], slow.lows[:-1], rtol=1e-9)
    np.testing.assert_allclose(fast.highs[:-1], slow.highs[:-1], rtol=1e-9)
    # at the tip the region closes like a square root: the excess's rounding (about
    # 1e-10 here) moves its ends by about its square root, whichever search finds them,
    # and the tip itself moves with the top icc's last bits (1.2e-4 seen on an AVX-512 CPU)
    np.testing.assert_allclose(fast.lows[-1:], slow.lows[-1:], rtol=1e-3)
    np.testing.assert_allclose(fast.highs[-1:], slow.highs[-1:], rtol=1e-3)
    assert sum(lo < hi for lo, hi in zip(fast.lows, fast.highs, strict=True)) > 20
