"""gatecal._common.quantiles: each function is what scipy.stats evaluates for it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from gatecal._common.quantiles import beta_ppf, chi2_ppf, chi2_sf, norm_isf

RNG = np.random.default_rng(20261201)
QS = [1e-12, 1e-6, 0.0025, 0.005, 0.025, 0.05, 0.5, 0.95, 0.975, 0.99, 0.995, 1 - 1e-9]


@pytest.mark.parametrize("q", QS)
def test_norm_isf(q):
    assert norm_isf(q) == pytest.approx(float(stats.norm.isf(q)), rel=1e-14, abs=1e-300)


@pytest.mark.parametrize("df", [1, 2, 3.5])
@pytest.mark.parametrize("q", QS)
def test_chi2(q, df):
    x = float(stats.chi2.ppf(q, df))
    assert chi2_ppf(q, df) == pytest.approx(x, rel=1e-13)
    assert chi2_sf(x, df) == pytest.approx(float(stats.chi2.sf(x, df)), rel=1e-13)
    assert chi2_sf(x, df) == pytest.approx(1 - q, rel=1e-9, abs=1e-15)


def test_beta_ppf_on_random_shapes():
    for a, b, q in zip(
        RNG.integers(1, 2000, 300) + 0.5 * RNG.integers(0, 2, 300),
        RNG.integers(1, 2000, 300) + 0.5 * RNG.integers(0, 2, 300),
        RNG.random(300),
        strict=True,
    ):
        want = float(stats.beta.ppf(q, a, b))
        assert beta_ppf(float(q), float(a), float(b)) == pytest.approx(want, rel=1e-13)
