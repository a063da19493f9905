"""The beta-binomial pmf above WINDOW_FROM cases: summed log ratios over a window.

Pinned to exact rational arithmetic (Python integers: every float is a dyadic rational,
so the pmf of a float rate and icc is a ratio of integer products, and ``int / int`` is
correctly rounded, underflow to 0.0 included).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest

from gatecal._analyses.noise.tails import _failing_below, gate_fail_probabilities
from gatecal._engines.exact import WINDOW_FROM, beta_binomial_pmf, beta_binomial_window

N = 5000  # above WINDOW_FROM


def _exact_pmf(n: int, mean: float, icc: float, f: int) -> float:
    """``C(n, f) prod(mu + j theta) prod(1 - mu + j theta) / prod(1 + j theta)``, theta =
    icc / (1 - icc), in integers: mu = P/Q, theta = T/U."""
    mu, rho = Fraction(mean), Fraction(icc)
    theta = rho / (1 - rho)
    p, q, t, u = mu.numerator, mu.denominator, theta.numerator, theta.denominator
    fail = math.prod(p * u + j * t * q for j in range(f))
    ok = math.prod((q - p) * u + j * t * q for j in range(n - f))
    return math.comb(n, f) * fail * ok * u**n / ((q * u) ** n * _norm(n, t, u))


@functools.lru_cache(maxsize=8)
def _norm(n: int, t: int, u: int) -> int:
    return math.prod(u + j * t for j in range(n))


@pytest.mark.parametrize(
    ("mean", "icc", "guessed"),
    [
        (0.0345, 0.0, True),  # binomial, narrow: summed over its window's guessed ends
        (0.0345, 1e-5, True),  # log-concave, narrow
        (0.001, 1e-6, True),  # the mode near 0: the window starts at 0
        (0.3, 0.0, True),  # binomial, wide
        (0.0345, 0.03, True),  # log-concave and wide
        (0.0345, 0.2, True),  # J-shaped (a beta parameter below 1), unimodal: from its mode
        (0.5, 0.6, False),  # U-shaped: all ratios' logs at once
        (0.999, 0.01, True),  # near a rate of 1, a beta parameter below 1, unimodal
    ],
)
def test_window_matches_exact_rationals_and_is_exactly_zero_outside(
    monkeypatch, mean, icc, guessed
):
    from gatecal._engines import exact

    guesses = []
    real_guess = exact._guess_window
    monkeypatch.setattr(exact, "_guess_window", lambda *a: guesses.append(a) or real_guess(*a))
    assert N > WINDOW_FROM
    start, window = beta_binomial_window(N, mean, icc)
    pmf = beta_binomial_pmf(N, mean, icc)
    assert np.array_equal(pmf[start : start + window.size], window)
    stop = start + window.size
    if start > 0:
        assert not pmf[:start].any()
        assert _exact_pmf(N, mean, icc, start - 1) < 1e-300  # 0.0 in double, or nearly
    if stop <= N:
        assert not pmf[stop:].any()
        assert _exact_pmf(N, mean, icc, stop) < 1e-300
    points = {start, stop - 1, int(np.argmax(pmf)), *range(start, stop, max(1, window.size // 4))}
    for f in sorted(points):
        exact = _exact_pmf(N, mean, icc, f)
        if exact < 1e-290:  # subnormal there: only its absolute size is meaningful
            assert pmf[f] < 1e-280
            continue
        assert pmf[f] == pytest.approx(exact, rel=1e-11), f
    assert float(pmf.sum()) == pytest.approx(1.0, rel=1e-13)
    assert bool(guesses) == guessed


def test_the_tails_over_the_window_are_the_tails_of_the_whole_pmf():
    """_failing_below sums only the window, and gives what gate_fail_probabilities gives over the whole
    pmf (0 below the window, 1 above it, the same sums inside), bit for bit: the pmf as
    the window holds it (not normalised, as the passes take it) placed among zeros, and
    to rounding the normalised pmf."""
    for mean, icc, failing, narrow in [
        (0.0345, 1e-5, 0, True),
        (0.0345, 1e-5, 7, True),
        (0.2, 0.01, 3, False),
    ]:
        start, window = beta_binomial_window(N - failing, mean, icc, normalised=False)
        rest = np.zeros(N - failing + 1)
        rest[start : start + window.size] = window
        whole = gate_fail_probabilities(np.concatenate((rest[::-1], np.zeros(failing))))
        ours = _failing_below(N, mean, icc, failing)
        assert np.array_equal(ours, whole)
        normalised = beta_binomial_pmf(N - failing, mean, icc)[::-1]
        near = gate_fail_probabilities(np.concatenate((normalised, np.zeros(failing))))
        np.testing.assert_allclose(ours, near, rtol=1e-14, atol=1e-300)
        assert (window.size < N // 5) == narrow  # the narrow ones sum a fifth of the pmf


@pytest.mark.parametrize(("mean", "icc"), [(0.0345, 0.0), (0.3, 1e-4), (0.001, 1e-6)])
def test_a_guess_that_falls_short_is_widened_to_the_same_window(monkeypatch, mean, icc):
    """The window's ends are guessed from the log pmf in closed form; a guess short on
    either side is widened until both ends are below the depth: the same window."""
    from gatecal._engines import exact

    start, window = beta_binomial_window(N, mean, icc)
    mode = start + int(np.argmax(window))
    for low, high in ((mode - 3, mode + 2), (max(mode - 3, 0), N), (0, mode + 1)):
        monkeypatch.setattr(exact, "_guess_window", lambda *a, g=(low, high, mode): g)
        got_start, got = beta_binomial_window(N, mean, icc)
        assert got_start == start and got.size == window.size
        # summed from another first f: the log sums (up to 800 in size) round otherwise
        np.testing.assert_allclose(got, window, rtol=1e-10, atol=1e-300)


def test_the_guessed_stretch_holds_the_window_and_little_more():
    """_guess_window's ends (Newton's method on the log pmf in closed form) hold the
    window on random log-concave shapes, never short of it (no widening), and the
    stretch summed is at most 1.5 times the window."""
    from gatecal._engines import exact

    rng = np.random.default_rng(3)
    seen = 0
    while seen < 100:
        n = int(rng.choice([4_097, 20_000, 100_000]))
        mean = float(10 ** rng.uniform(-5, -0.01))
        icc = 0.0 if rng.random() < 0.2 else float(10 ** rng.uniform(-9, -1))
        theta = icc / (1 - icc)
        if theta > min(mean, 1 - mean):
            continue  # not log-concave: no guess
        seen += 1
        low, high, mode = exact._guess_window(n, mean, theta)
        start, window = beta_binomial_window(n, mean, icc)
        assert low <= start <= mode < start + window.size <= high + 1, (n, mean, icc)
        assert high - low + 1 <= 1.5 * window.size + 16, (n, mean, icc)


def test_unimodal_shapes_that_are_not_log_concave_are_summed_from_their_mode():
    """A J-shaped pmf (the rate below the icc: a beta parameter below 1) is still
    unimodal while icc <= 1/3, so its window comes from products outward from its mode:
    on random such shapes, the same values as the log1p products over all n (to their
    drift, 1e-8) and nothing outside it above 1e-290 of the largest."""
    from gatecal._engines import exact

    rng = np.random.default_rng(9)
    seen = 0
    while seen < 30:
        n = int(rng.choice([4_097, 20_000, 100_000]))
        mean = float(rng.choice([10 ** rng.uniform(-4, -0.5), 1 - 10 ** rng.uniform(-4, -0.5)]))
        icc = float(rng.uniform(0.0, 1 / 3))
        theta = icc / (1 - icc)
        if theta <= min(mean, 1 - mean):
            continue  # log-concave: the test above
        seen += 1
        start, window = beta_binomial_window(n, mean, icc)
        full = exact._full_pmf(n, mean, theta)
        full /= full.sum()
        inside = full[start : start + window.size]
        held = inside > 1e-250
        np.testing.assert_allclose(window[held], inside[held], rtol=1e-7)
        outside = np.concatenate((full[:start], full[start + window.size :]))
        assert outside.size == 0 or outside.max() <= 1e-290 * full.max(), (n, mean, icc)
