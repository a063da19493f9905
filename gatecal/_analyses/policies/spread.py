"""How much one suite drawn from a case spread varies around the average a policy quotes.

The exact rates of :mod:`~gatecal._analyses.policies.exact` are averages over suites drawn
from the spread (``noise.case_spread``). One suite is one draw: each of its cases keeps its
own rate. :func:`one_suite_ranges` draws :data:`~gatecal._common.defaults.SPREAD_SUITES`
suites (seeded) and gives, for each gate, the 10th and 90th percentiles of that suite's own
P(the gate fails the build), each computed exactly: a case's probability of passing one
attempt at rate x is a polynomial in x of known degree, so it is read off its values at
Chebyshev points by barycentric interpolation, and the suite's pass count is a
Poisson-binomial of its cases'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from gatecal._analyses.policies.rules import Policy, case_outcomes
from gatecal._analyses.simulate import failure_percentiles
from gatecal._common.defaults import SPREAD_SEED, SPREAD_SUITES
from gatecal._model.arrays import Floats
from gatecal._model.suite import JudgeNoise, Suite, beta_shape, systematic_count

__all__ = ["chebyshev_points", "drawn_case_pass", "one_suite_ranges", "polynomial_curve"]


def chebyshev_points(degree: int) -> Floats:
    """The ``degree + 1`` Chebyshev points of the first kind on [0, 1], increasing: a
    polynomial of that degree is read off its values there without Runge's wiggles."""
    return np.asarray(0.5 - 0.5 * np.cos(np.pi * (np.arange(degree + 1) + 0.5) / (degree + 1)))


def polynomial_curve(points: Floats, values: Floats) -> Callable[[Floats], Floats]:
    """The polynomial through `values` at :func:`chebyshev_points` `points`, by barycentric
    interpolation, exact up to rounding, and the same to the last bit on every call.

    The weights are the closed form of Chebyshev points of the first kind,
    ``(-1)^j sin((2j + 1) pi / (2n + 2))`` (Berrut and Trefethen 2004, eq. 5.3; a common
    factor of the affine map to [0, 1] cancels). scipy's own weights, left to it, are
    products taken in a random order drawn from numpy's global generator, so their last
    bits, and every figure read off the curve, changed from one process to the next.
    """
    from scipy.interpolate import BarycentricInterpolator  # deferred: only with a spread

    j = np.arange(points.size)
    weights = np.where(j % 2 == 0, 1.0, -1.0) * np.sin((2 * j + 1) * np.pi / (2 * points.size))
    curve = BarycentricInterpolator(points, values, wi=weights)
    return lambda x: np.asarray(curve(x), dtype=np.float64)


def drawn_case_pass(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy, *, suites: int, seed: int
) -> Floats:
    """P(each case passes one attempt of `policy`) in `suites` suites drawn from the
    spread, shape (suites, cases): the first ``cases - systematic`` cases draw their rates
    from the Beta (seeded, in that order), the systematic ones fail every call."""
    n = suite.n_cases
    judge = int(suite.judge_mask().sum())
    tries = policy.rerun_failing + 1
    degree = judge * policy.majority * (1 + policy.confirm) * policy.repeat * tries
    points = chebyshev_points(degree)
    curves = np.stack(
        [
            case_outcomes(suite, build, noise.at_case_rate(suite, float(x)), policy, confirm=True)[
                0
            ]
            for x in points
        ]
    )  # (points, cases)
    m = n - systematic_count(n, noise.systematic)
    x = np.full((suites, n), noise.fnr)
    if 0.0 < noise.fnr < 1.0:
        a, b = beta_shape(noise.fnr, noise.case_spread)
        x[:, :m] = np.random.default_rng(seed).beta(a, b, size=(suites, m))
    q = np.empty((suites, n))
    kinds, which = np.unique(curves, axis=1, return_inverse=True)
    for kind in range(kinds.shape[1]):  # alike cases share one curve
        columns = np.flatnonzero(which.ravel() == kind)
        q[:, columns] = polynomial_curve(points, kinds[:, kind])(x[:, columns])
    return np.clip(q, 0.0, 1.0)


def one_suite_ranges(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy, k_mins: Sequence[int]
) -> list[tuple[float, float] | None]:
    """For each gate (its `k_min`), the 10th and 90th percentiles of P(the gate fails
    `build` in one attempt of `policy`) over suites drawn from the spread. None for every
    gate without a spread or with a run-level correlation (a run's count is then no
    Poisson-binomial); a policy that reruns the whole suite is refused under a spread
    before this is reached."""
    if noise.case_spread <= 0 or noise.icc > 0:
        return [None] * len(k_mins)
    q = drawn_case_pass(suite, build, noise, policy, suites=SPREAD_SUITES, seed=SPREAD_SEED)
    return failure_percentiles(q, k_mins)
