import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.testing import assert_allclose
from scipy import stats

from gatecal import (
    JudgeNoise,
    ParameterError,
    Suite,
    case_pass_probabilities,
    exact_pass_counts,
    pass_count_pmf,
)
from tests.reference import binomial_lower_tail, case_pass_probability, enumerate_pass_counts

ARTICLE = Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=3)


# Reference values: exact rational arithmetic, independent of gatecal and scipy --
#   python -c "from fractions import Fraction as F; from math import comb;
#     q = (1 - F(3, 100))**2; print(float(sum(comb(12, j) * q**j * (1 - q)**(12 - j)
#     for j in range(11))))"
# (tests/reference.py::binomial_lower_tail), also in reference/statistics.md §1.1.
@pytest.mark.parametrize(
    ("flip", "k_min", "ref"),
    [
        (0.03, 12, 0.5185827780882762),  # 1 - 0.97**24: all-pass fails a healthy build
        (0.03, 11, 0.1557162739116428),
        (0.03, 10, 0.030357832863056648),
        (0.08, 12, 0.8648214273888098),
        (0.08, 11, 0.5704438930823995),
        (0.08, 10, 0.27662283804688986),
    ],
)
def test_article_false_alarms_match_exact_fractions(flip, k_min, ref):
    dist = exact_pass_counts(ARTICLE, "healthy", JudgeNoise.flip(flip))
    assert_allclose(dist.failure_probability(k_min), ref, rtol=1e-13)
    q = (1 - Fraction(flip).limit_denominator(100)) ** 2
    assert_allclose(dist.failure_probability(k_min), float(binomial_lower_tail(12, k_min, q)))


def test_all_pass_false_alarm_is_one_minus_097_to_the_24():
    dist = exact_pass_counts(ARTICLE, "healthy", JudgeNoise.flip(0.03))
    assert_allclose(dist.failure_probability(12), float(1 - Fraction(97, 100) ** 24), rtol=1e-14)


def test_regressed_build_of_the_article_fails_every_count_gate_surely():
    # Three cases fail a code check, so K <= 9 and every k_min >= 10 fails with P = 1.
    for flip in (0.0, 0.03, 0.08, 0.5):
        dist = exact_pass_counts(ARTICLE, "regressed", JudgeNoise.flip(flip))
        assert dist.pmf[10:] == (0.0, 0.0, 0.0)
        for k_min in (10, 11, 12):
            assert dist.failure_probability(k_min) == 1.0
            assert dist.pass_probability(k_min) == 0.0


def test_mean_pass_rates_of_the_article():
    noise = JudgeNoise.flip(0.03)
    assert_allclose(exact_pass_counts(ARTICLE, "healthy", noise).mean_pass_rate, 0.9409)
    assert_allclose(exact_pass_counts(ARTICLE, "regressed", noise).mean_pass_rate, 0.705675)


def test_tiny_upper_tail_keeps_relative_accuracy():
    # 12 cases passing with probability 0.001 each: P(K >= 10) = 6.588e-29, where
    # scipy.stats.poisson_binom.sf (1 - cdf) returns 0. Reference in Fractions:
    #   sum(comb(12, j) * F(1, 1000)**j * F(999, 1000)**(12 - j) for j in (10, 11, 12))
    ref = float(1 - binomial_lower_tail(12, 10, Fraction(1, 1000)))
    assert_allclose(ref, 6.5880055e-29, rtol=1e-7)
    pmf = pass_count_pmf(np.full(12, 0.001))
    upper = float(np.sum(pmf[10:]))
    assert_allclose(upper, ref, rtol=1e-12)


def test_tiny_lower_tail_keeps_relative_accuracy():
    # STYLE.md's reference: 12 cases at q = 0.999, P(K < 6) = 7.885411544585196e-19.
    ref = float(binomial_lower_tail(12, 6, Fraction(999, 1000)))
    assert_allclose(ref, 7.885411544585196e-19, rtol=1e-15)
    pmf = pass_count_pmf(np.full(12, 0.999))
    assert_allclose(float(np.sum(pmf[:6])), ref, rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    q=st.lists(st.fractions(min_value=0, max_value=1, max_denominator=1000), min_size=1, max_size=9)
)
def test_pmf_matches_brute_force_enumeration(q):
    ref = enumerate_pass_counts(q)
    got = pass_count_pmf([float(x) for x in q])
    # float inputs are within 2**-53 of the fractions; the recursion adds a few ulps.
    assert_allclose(got, [float(r) for r in ref], rtol=1e-12, atol=1e-300)


@settings(max_examples=60, deadline=None)
# scipy's binom.pmf (the reference) overflows for q within a few ulps of the smallest normal
@given(n=st.integers(1, 80), q=st.one_of(st.just(0.0), st.floats(1e-300, 1)), data=st.data())
def test_equal_rates_reduce_to_binomial(n, q, data):
    k_min = data.draw(st.integers(0, n))
    pmf = pass_count_pmf(np.full(n, q))
    assert_allclose(pmf, stats.binom.pmf(np.arange(n + 1), n, q), rtol=1e-9, atol=1e-300)
    assert_allclose(pmf[:k_min].sum(), stats.binom.cdf(k_min - 1, n, q), rtol=1e-9, atol=1e-300)


def test_thousands_of_cases_match_scipy_and_moments():
    rng = np.random.default_rng(20261130)
    q = rng.uniform(0.5, 1.0, size=3000)
    pmf = pass_count_pmf(q)
    assert_allclose(pmf.sum(), 1.0, rtol=1e-12)
    k = np.arange(q.size + 1)
    assert_allclose((k * pmf).sum(), q.sum(), rtol=1e-12)
    assert_allclose(((k - q.sum()) ** 2 * pmf).sum(), (q * (1 - q)).sum(), rtol=1e-9)
    ref = stats.poisson_binom.pmf(k, q)  # scipy's own DP: accurate where not tiny
    bulk = ref > 1e-12
    assert_allclose(pmf[bulk], ref[bulk], rtol=1e-8)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 30),
    j=st.integers(0, 3),
    c=st.integers(0, 2),
    flip=st.floats(0, 1),
    data=st.data(),
)
def test_failure_probability_is_monotone_in_threshold(n, j, c, flip, data):
    if j + c == 0:
        c = 1
    failing = data.draw(st.integers(0, n))
    suite = Suite.uniform(cases=n, judge_checks=j, code_checks=c, failing=failing)
    for build in ("healthy", "regressed"):
        dist = exact_pass_counts(suite, build, JudgeNoise.flip(flip))
        fails = [dist.failure_probability(k) for k in range(n + 1)]
        assert all(a <= b + 1e-15 for a, b in itertools.pairwise(fails))
        assert fails[0] == 0.0
        for k in range(n + 1):
            assert_allclose(dist.failure_probability(k) + dist.pass_probability(k), 1.0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), j=st.integers(1, 3), p1=st.floats(0, 1), p2=st.floats(0, 1))
def test_healthy_false_alarm_grows_with_flip_rate(n, j, p1, p2):
    low, high = sorted((p1, p2))
    suite = Suite.uniform(cases=n, judge_checks=j, code_checks=1)
    a = exact_pass_counts(suite, "healthy", JudgeNoise.flip(low))
    b = exact_pass_counts(suite, "healthy", JudgeNoise.flip(high))
    for k in range(n + 1):
        assert a.failure_probability(k) <= b.failure_probability(k) * (1 + 1e-12) + 1e-300


@settings(max_examples=40, deadline=None)
@given(
    truth=st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=1, max_size=7),
    fnr=st.fractions(0, 1, max_denominator=100),
    fpr=st.fractions(0, 1, max_denominator=100),
)
def test_asymmetric_noise_matches_fraction_reference(truth, fnr, fpr):
    kinds = ["judge", "judge", "code"]
    suite = Suite(
        cases=tuple(f"c{i}" for i in range(len(truth))),
        checks=(
            gatecal_check("relevancy", "judge"),
            gatecal_check("facts", "judge"),
            gatecal_check("contains", "code"),
        ),
        truth={"healthy": [[True] * 3] * len(truth), "regressed": truth},
    )
    noise = JudgeNoise(fnr=float(fnr), fpr=float(fpr))
    q_ref = [case_pass_probability(row, kinds, fnr, fpr) for row in truth]
    assert_allclose(
        case_pass_probabilities(suite, "regressed", noise), [float(x) for x in q_ref], rtol=1e-14
    )
    pmf_ref = enumerate_pass_counts(q_ref)
    dist = exact_pass_counts(suite, "regressed", noise)
    assert_allclose(dist.pmf, [float(x) for x in pmf_ref], rtol=1e-12, atol=1e-300)


def gatecal_check(name, kind):
    from gatecal import Check

    return Check(name, kind)


@pytest.mark.parametrize("bad", [[0.5, float("nan")], [1.5], [-0.1], [[0.5]]])
def test_pmf_rejects_bad_probabilities(bad):
    with pytest.raises(ParameterError, match="`q` must"):
        pass_count_pmf(bad)


def test_k_min_out_of_range_is_refused():
    dist = exact_pass_counts(ARTICLE, "healthy", JudgeNoise.flip(0.03))
    with pytest.raises(ParameterError, match=r"`k_min` must be an integer in \[0, 12\] \(got 13\)"):
        dist.failure_probability(13)


def _fraction_pmf(q):
    """The Poisson-binomial pmf in exact rational arithmetic (the recursion, on Fractions)."""
    pmf = [Fraction(1)]
    for qi in q:
        pmf = [
            (pmf[k] if k < len(pmf) else 0) * (1 - qi) + (pmf[k - 1] * qi if k else 0)
            for k in range(len(pmf) + 1)
        ]
    return pmf


def test_divide_and_conquer_keeps_relative_accuracy_in_both_tails():
    # 200 cases at rates 0.9..0.999 in thousandths: every coefficient down to 1e-290,
    # far tails included (P(K = 0) ~ 1e-300 and below), against exact Fractions.
    from gatecal._engines.exact import _product_pmf

    rng = np.random.default_rng(13)
    q = [Fraction(int(v), 1000) for v in rng.integers(900, 1000, size=200)]
    exact = [float(v) for v in _fraction_pmf(q)]
    got = _product_pmf(np.array([float(v) for v in q]))
    ref = np.array(exact)
    kept = ref > 1e-290
    assert kept.sum() > 150  # the test reaches deep into the lower tail
    assert_allclose(got[kept], ref[kept], rtol=1e-13)
    assert np.all(got[~kept] <= 1e-280)


@settings(max_examples=30, deadline=None)
@given(q=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=400))
def test_divide_and_conquer_equals_the_recursion(q):
    from gatecal._engines.exact import _product_pmf

    probs = np.array(q)
    ref = pass_count_pmf(probs)  # the recursion (<= DIVIDE_ABOVE cases)
    got = _product_pmf(probs)
    kept = ref > 1e-290
    assert_allclose(got[kept], ref[kept], rtol=1e-12)
    assert np.all(got[~kept] <= 1e-280)


def test_ten_thousand_cases_keep_a_1e_minus_23_tail():
    """pass_count_pmf switches to divide and conquer above DIVIDE_ABOVE cases; the
    gate probabilities of 10,000 cases, down to a 1e-23 tail, agree with the recursion."""
    from gatecal._engines.exact import DIVIDE_ABOVE, PassCountDistribution

    rng = np.random.default_rng(20261130)
    q = rng.uniform(0.9, 1.0, size=10_000)
    assert q.size > DIVIDE_ABOVE
    fast = pass_count_pmf(q)
    slow = np.zeros(q.size + 1)  # the recursion, written out
    slow[0] = 1.0
    for i, qi in enumerate(q):
        head = slow[: i + 1] * qi
        slow[: i + 1] *= 1.0 - qi
        slow[1 : i + 2] += head
    kept = slow > 1e-290
    assert_allclose(fast[kept], slow[kept], rtol=1e-11)
    dist_fast = PassCountDistribution(case_pass_probabilities=tuple(q), pmf=tuple(fast))
    dist_slow = PassCountDistribution(case_pass_probabilities=tuple(q), pmf=tuple(slow))
    mean = q.sum()
    k_tail = next(k for k in range(int(mean), 0, -1) if dist_slow.failure_probability(k) < 1e-23)
    tail = dist_fast.failure_probability(k_tail)
    assert 0 < tail < 1e-23
    assert_allclose(tail, dist_slow.failure_probability(k_tail), rtol=1e-11)
    top = q.size - 1 - int(np.searchsorted(np.cumsum(fast[::-1]), 1e-23))
    assert_allclose(dist_fast.pass_probability(top), dist_slow.pass_probability(top), rtol=1e-11)


@pytest.mark.parametrize(
    ("cases", "judge_checks", "code_checks", "failing", "unparseable"),
    [(150, 2, 1, 40, 0.0), (120, 2, 0, 30, 0.02), (90, 3, 1, 0, 0.01), (80, 1, 0, 80, 0.0)],
)
def test_correlated_engine_by_groups_equals_the_per_node_recursion(
    cases, judge_checks, code_checks, failing, unparseable, monkeypatch
):
    """Above GROUP_ABOVE cases the Beta mixture groups alike cases (binomials per node);
    below it, every node runs the recursion. Both, on the same suites, agree."""
    from gatecal._engines import exact as _exact

    suite = Suite.uniform(
        cases=cases, judge_checks=judge_checks, code_checks=code_checks, failing=failing
    )
    noise = JudgeNoise(fnr=0.08, fpr=0.08, icc=0.1, unparseable=unparseable)
    for build in ("healthy", "regressed"):
        slow = exact_pass_counts(suite, build, noise)
        monkeypatch.setattr(_exact, "GROUP_ABOVE", 10)
        fast = exact_pass_counts(suite, build, noise)
        monkeypatch.setattr(_exact, "GROUP_ABOVE", 200)
        ref, got = np.array(slow.pmf), np.array(fast.pmf)
        kept = ref > 1e-290
        assert_allclose(got[kept], ref[kept], rtol=1e-11)
        assert_allclose(fast.case_pass_probabilities, slow.case_pass_probabilities, rtol=1e-13)
        for k in range(0, cases + 1, 7):
            assert_allclose(fast.failure_probability(k), slow.failure_probability(k), rtol=1e-11)


@pytest.mark.parametrize("values", [(0.9,), (0.97, 0.0), (0.5, 0.99, 1.0), (0.2, 0.8, 0.001)])
def test_grouped_pmf_equals_the_recursion(values):
    from gatecal._engines.exact import grouped_pass_count_pmf

    rng = np.random.default_rng(len(values))
    q = rng.choice(values, size=300)
    ref = pass_count_pmf(q)
    got = grouped_pass_count_pmf(q)
    kept = ref > 1e-290
    assert_allclose(got[kept], ref[kept], rtol=1e-12)
    assert np.all(got[~kept] <= 1e-280)
