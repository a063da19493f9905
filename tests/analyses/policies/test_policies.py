"""Gate policies: exact rates checked against closed forms and against call-by-call simulation."""

import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from gatecal import (
    JudgeNoise,
    ParameterError,
    Policy,
    Suite,
    majority_pass,
    parse_policy,
    policy_rates,
    simulate_policy,
)

ARTICLE = Suite.uniform()


def _closed_form(p, k_min, policy):
    """Healthy false alarm of the article's suite under `policy`, from scipy's binomial."""
    check = 1 - p
    if policy.majority > 1:
        check = stats.binom.sf(policy.majority // 2, policy.majority, 1 - p)
    q = check**2
    if policy.rerun_failing:
        q = 1 - (1 - q) ** (policy.rerun_failing + 1)
    single = stats.binom.cdf(k_min - 1, 12, q)
    return single ** (policy.rerun + 1)


# reference/statistics.md §2.7: article suite, healthy false alarm
@pytest.mark.parametrize(
    ("p", "policy", "all_pass", "rate_080"),
    [
        (0.03, Policy(), 0.519, 0.030),
        (0.03, Policy(rerun=1), 0.269, 0.0009),
        (0.03, Policy(rerun_failing=1), 0.041, None),
        (0.03, Policy(majority=3), 0.062, None),
        (0.08, Policy(), 0.865, 0.277),
        (0.08, Policy(rerun=1), 0.748, 0.077),
        (0.08, Policy(rerun_failing=1), 0.249, 0.0025),
        (0.08, Policy(majority=3), 0.356, 0.008),
        (0.08, Policy(majority=5), 0.103, 0.0002),
    ],
)
def test_policy_false_alarms_match_references(p, policy, all_pass, rate_080):
    rates = policy_rates(ARTICLE, JudgeNoise.flip(p), "all,0.80", policy)
    got_all = rates.row("healthy", "all").failure_probability
    got_080 = rates.row("healthy", "0.80").failure_probability
    assert_allclose(got_all, _closed_form(p, 12, policy), rtol=1e-12)
    assert_allclose(got_080, _closed_form(p, 10, policy), rtol=1e-10)
    assert round(got_all, 3) == all_pass
    if rate_080 is not None:
        digits = len(str(rate_080).split(".")[1])
        assert round(got_080, digits) == rate_080
    else:
        assert got_080 < 1e-4


def test_issue_reference_single_run_and_majority_of_three():
    single = policy_rates(ARTICLE, JudgeNoise.flip(0.08), "0.80").row("healthy", "0.80")
    majority = policy_rates(ARTICLE, JudgeNoise.flip(0.08), "0.80", Policy(majority=3))
    assert round(single.failure_probability, 3) == 0.277
    assert round(majority.row("healthy", "0.80").failure_probability, 3) == 0.008
    assert single.judge_calls == 24 and majority.row("healthy", "0.80").judge_calls == 72


# reference/statistics.md §2.8: P(majority wrong), correlated calls
@pytest.mark.parametrize(
    ("p", "icc", "refs"),
    [
        (0.03, 0.1, {3: 0.0099, 5: 0.0051, 9: 0.0023}),
        (0.03, 0.3, {3: 0.0197, 5: 0.0165, 9: 0.0141}),
        (0.08, 0.1, {3: 0.0345, 5: 0.0205, 9: 0.0110}),
        (0.08, 0.3, {3: 0.0567, 5: 0.0490, 9: 0.0429}),
    ],
)
def test_majority_of_correlated_calls(p, icc, refs):
    for m, ref in refs.items():
        wrong = 1 - float(majority_pass(np.array(1 - p), m, icc=icc))
        assert abs(wrong - ref) < 6e-5
        assert_allclose(
            wrong, stats.betabinom.sf(m // 2, m, p * (1 - icc) / icc, (1 - p) * (1 - icc) / icc)
        )


def test_correlated_majority_error_floors_above_zero():
    p, icc = 0.08, 0.3
    scale = (1 - icc) / icc
    floor = stats.beta.sf(0.5, p * scale, (1 - p) * scale)  # P(latent error rate > 1/2)
    errors = [1 - float(majority_pass(np.array(1 - p), m, icc=icc)) for m in (1, 3, 9, 51, 401)]
    assert all(a > b for a, b in itertools.pairwise(errors))
    assert errors[-1] > floor and errors[-1] - floor < 0.002
    independent = 1 - float(majority_pass(np.array(1 - p), 401))
    assert independent < 1e-100


def test_even_majority_tie_rules():
    s = np.array(0.9)
    assert_allclose(majority_pass(s, 2, tie="fail"), 0.81)
    assert_allclose(majority_pass(s, 2, tie="pass"), 1 - 0.01)
    assert_allclose(majority_pass(s, 4, tie="fail"), stats.binom.sf(2, 4, 0.9))


def test_repeat_k_of_n_and_judge_calls():
    noise = JudgeNoise.flip(0.08)
    q = 0.92**2
    rates = policy_rates(ARTICLE, noise, "all", Policy(repeat=3, need=2))
    q2 = stats.binom.sf(1, 3, q)
    assert_allclose(rates.row("healthy", "all").failure_probability, 1 - q2**12, rtol=1e-12)
    assert rates.row("healthy", "all").judge_calls == 72
    rerun = policy_rates(ARTICLE, noise, "all", Policy(rerun=2)).row("healthy", "all")
    alpha = 1 - q**12
    assert_allclose(rerun.judge_calls, 24 * (1 + alpha + alpha**2))
    failing = policy_rates(ARTICLE, noise, "all", Policy(rerun_failing=1)).row("healthy", "all")
    assert_allclose(failing.judge_calls, 2 * 12 * (1 + (1 - q)))


CONFIGS = [
    (JudgeNoise.flip(0.08), Policy(majority=3)),
    (JudgeNoise.flip(0.08), Policy(majority=4, tie="pass", call_icc=0.2)),
    (JudgeNoise(fnr=0.05, fpr=0.3, unparseable=0.02), Policy(rerun_failing=2)),
    (JudgeNoise.flip(0.1), Policy(rerun=2)),
    (JudgeNoise(fnr=0.08, fpr=0.08, icc=0.2), Policy(majority=3, rerun=1)),
    (JudgeNoise(fnr=0.05, fpr=0.05, icc=0.1), Policy(repeat=3, need=2, rerun_failing=1)),
    (JudgeNoise(fnr=0.08, fpr=0.08, icc=0.1), Policy(rerun_failing=1, retry_rate="fresh")),
    (
        JudgeNoise(fnr=0.1, fpr=0.1, icc=0.2),
        Policy(majority=3, rerun_failing=2, retry_rate="fresh"),
    ),
    (
        JudgeNoise(fnr=0.15, fpr=0.15, icc=0.1, unparseable=0.02),
        Policy(confirm=2, rerun_failing=1, retry_rate="fresh"),
    ),
]
#: confirm-on-fail, which counts its calls check by check; only the count path runs it here
#: (call by call it is checked in tests/analyses/sequential/test_sequential.py's policy rows)
CONFIRM = [
    (JudgeNoise.flip(0.1), Policy(confirm=2, rerun_failing=1)),
    (JudgeNoise(fnr=0.1, fpr=0.1, icc=0.1), Policy(confirm=3, repeat=2, need=1, rerun=1)),
]


def _disagreement(suite, noise, policy, gates, method, n_runs=20_000):
    """The largest |simulated - exact| of a failure rate in standard errors, and of the
    mean judge calls relative to the exact ones, over both builds and every gate."""
    exact = policy_rates(suite, noise, gates, policy)
    worst_z = worst_calls = 0.0
    for build in ("healthy", "regressed"):
        sample = simulate_policy(
            suite, build, noise, gates, policy, n_runs=n_runs, rng=29, method=method
        )
        assert sample.method == method
        for row in (r for r in exact.rows if r.build == build):
            p = row.failure_probability
            got = sample.failures[row.gate] / n_runs
            worst_z = max(worst_z, abs(got - p) / (np.sqrt(p * (1 - p) / n_runs) + 1e-12))
            calls = sample.judge_calls[row.gate] / n_runs
            worst_calls = max(worst_calls, abs(calls - row.judge_calls) / row.judge_calls)
    return worst_z, worst_calls


@pytest.mark.parametrize("method", ["calls", "counts"])
@pytest.mark.parametrize(("noise", "policy"), CONFIGS)
@pytest.mark.parametrize(
    "suite",
    [ARTICLE, Suite.uniform(cases=8, judge_checks=2, code_checks=0, failing=2)],
    ids=["article", "judge-only"],
)
def test_policies_agree_with_call_by_call_simulation(noise, policy, suite, method):
    """Both simulations (one random number per call, or the calls drawn by counts) within
    5 standard errors of the exact rates; mean judge calls within 2%. A fresh rate per
    rerun round is drawn call by call only (the count path refuses it)."""
    if method == "counts" and policy.retry_rate == "fresh":
        with pytest.raises(ParameterError, match="fresh rate"):
            simulate_policy(suite, "healthy", noise, "all", policy, n_runs=10, method=method)
        return
    z, calls = _disagreement(suite, noise, policy, "all,0.80,fails<=3", method)
    assert z < 5 and calls < 0.02


@pytest.mark.parametrize(("noise", "policy"), CONFIRM)
def test_confirm_on_fail_by_counts_agrees_with_the_exact_rates(noise, policy):
    suite = Suite.uniform(cases=8, judge_checks=2, code_checks=1, failing=2)
    z, calls = _disagreement(suite, noise, policy, "all,0.80,fails<=3", "counts")
    assert z < 5 and calls < 0.02


#: 3,000 cases in four groups: a regressed judge check on 700 cases, 100 hard cases with
#: their own rates, of which 30 are among the regressed ones. Gates near each build's median.
BIG = Suite.uniform(cases=3000, judge_checks=2, code_checks=0, failing=700)
BIG_NOISE = JudgeNoise(fnr=0.08, fpr=0.08, per_case={c: (0.3, 0.2) for c in BIG.cases[670:770]})
BIG_GATES = "fails<=495,fails<=1025"  # near the medians of one call per check


@pytest.mark.parametrize(
    ("policy", "gates"),
    [
        (Policy(), BIG_GATES),
        (Policy(majority=3), "fails<=140,fails<=790"),
        (Policy(rerun_failing=1), "fails<=95,fails<=670"),
    ],
)
def test_big_suites_are_simulated_by_counts_and_agree_with_the_exact_rates(policy, gates):
    exact = policy_rates(BIG, BIG_NOISE, gates, policy)
    assert sum(0.3 < r.failure_probability < 0.7 for r in exact.rows) >= 2  # informative
    assert simulate_policy(BIG, "healthy", BIG_NOISE, "all", n_runs=10).method == "counts"
    z, calls = _disagreement(BIG, BIG_NOISE, policy, gates, "counts")
    assert z < 5 and calls < 0.005


def _wrong_rate(monkeypatch):
    """Every group's call pass probability 0.002 too high."""
    from gatecal._analyses.policies import counts as policy_counts

    real = policy_counts.CaseGroups.of

    def shifted(suite, build, noise):
        g = real(suite, build, noise)
        return policy_counts.CaseGroups(g.sizes, g.code_ok, g.truth, g.report + 0.002)

    monkeypatch.setattr(policy_counts.CaseGroups, "of", staticmethod(shifted))


def _independent_votes(monkeypatch):
    """Correlated calls drawn as if independent (no Polya urn)."""
    from gatecal._analyses.policies import counts as policy_counts

    real = policy_counts._majority
    monkeypatch.setattr(
        policy_counts, "_majority", lambda gen, n, s, m, tie, icc: real(gen, n, s, m, tie, 0.0)
    )


def _one_group_short(monkeypatch):
    """The last group one case short."""
    from gatecal._analyses.policies import counts as policy_counts

    real = policy_counts.CaseGroups.of

    def short(suite, build, noise):
        g = real(suite, build, noise)
        sizes = g.sizes.copy()
        sizes[-1] -= 1
        return policy_counts.CaseGroups(sizes, g.code_ok, g.truth, g.report)

    monkeypatch.setattr(policy_counts.CaseGroups, "of", staticmethod(short))


@pytest.mark.parametrize(
    ("mistake", "suite", "noise", "policy", "gates"),
    [
        (_wrong_rate, BIG, BIG_NOISE, Policy(), BIG_GATES),
        (_independent_votes, ARTICLE, JudgeNoise.flip(0.08), Policy(majority=3, call_icc=0.3),
         "all,0.80"),
        (_one_group_short, BIG, BIG_NOISE, Policy(majority=3), "fails<=140,fails<=790"),
    ],
)  # fmt: skip
def test_a_wrong_count_path_is_caught(mistake, suite, noise, policy, gates, monkeypatch):
    """The comparison above is no formality: each mistake in the count path (a call pass
    probability 0.002 off, correlated votes drawn independently, a group a case short)
    moves some rate beyond 5 standard errors of the exact one."""
    mistake(monkeypatch)
    z, _ = _disagreement(suite, noise, policy, gates, "counts")
    assert z > 5


def test_counts_and_calls_agree_with_each_other():
    """Both methods on 240 cases (auto: by counts), two samples of 20,000 runs per build:
    their failure counts differ by less than 5 standard errors of a difference."""
    suite = Suite.uniform(cases=240, judge_checks=2, code_checks=1, failing=60)
    noise = JudgeNoise(fnr=0.06, fpr=0.06, icc=0.05)
    policy = Policy(majority=3, rerun_failing=1)
    gates = "fails<=2,fails<=4"
    for build in ("healthy", "regressed"):
        a = simulate_policy(suite, build, noise, gates, policy, n_runs=20_000, rng=5)
        b = simulate_policy(suite, build, noise, gates, policy, n_runs=20_000, rng=6,
                            method="calls")  # fmt: skip
        assert (a.method, b.method) == ("counts", "calls")
        for gate in ("fails<=2", "fails<=4"):
            p = (a.failures[gate] + b.failures[gate]) / 40_000
            se = np.sqrt(2 * p * (1 - p) / 20_000)
            assert 0.02 < p < 0.98 or build == "regressed"
            assert abs(a.failures[gate] - b.failures[gate]) / 20_000 < 5 * se + 1e-12
            assert abs(a.judge_calls[gate] / b.judge_calls[gate] - 1) < 0.01


def test_simulation_method_is_chosen_by_size_and_seeded():
    from gatecal._analyses.policies.counts import COUNTS_ABOVE

    small = Suite.uniform(cases=COUNTS_ABOVE)
    big = Suite.uniform(cases=COUNTS_ABOVE + 1)
    noise = JudgeNoise.flip(0.08)
    assert simulate_policy(small, "healthy", noise, "all", n_runs=50).method == "calls"
    first = simulate_policy(big, "healthy", noise, "0.80", n_runs=500, rng=3)
    assert first.method == "counts"
    assert simulate_policy(big, "healthy", noise, "0.80", n_runs=500, rng=3) == first
    with pytest.raises(ParameterError, match="`method`"):
        simulate_policy(big, "healthy", noise, "all", n_runs=5, method="fast")


@pytest.mark.parametrize(
    ("text", "policy"),
    [
        ("single", Policy()),
        ("majority-3", Policy(majority=3)),
        ("repeat-2-of-3", Policy(repeat=3, need=2)),
        ("rerun-failing-1", Policy(rerun_failing=1)),
        ("rerun-2", Policy(rerun=2)),
        ("majority-3+rerun-1", Policy(majority=3, rerun=1)),
    ],
)
def test_parse_policy(text, policy):
    assert parse_policy(text) == policy


@pytest.mark.parametrize("text", ["majority", "majority-x", "vote-3", "repeat-3-of-2", "rerun--1"])
def test_bad_policies(text):
    with pytest.raises(ParameterError, match="`policy`"):
        parse_policy(text)


@pytest.mark.parametrize(
    "policy",
    [Policy(), Policy(majority=3), Policy(repeat=3, need=2), Policy(rerun_failing=1, rerun=1)],
)
def test_correlated_policies_by_groups_equal_the_recursion(policy, monkeypatch):
    """Above GROUP_ABOVE cases each icc node multiplies binomials of alike cases instead
    of running the recursion; on the same 120-case suite both give the same rates."""
    from gatecal._analyses.policies import exact as _exact, rules as _rules

    suite = Suite.uniform(cases=120, judge_checks=2, code_checks=0, failing=30)
    noise = JudgeNoise(fnr=0.05, fpr=0.05, icc=0.05)
    slow = policy_rates(suite, noise, "all,0.9,0.8,0.5", policy)
    # the switch (exact) and the one attempt's pmf (rules) each read the threshold
    monkeypatch.setattr(_exact, "GROUP_ABOVE", 10)
    monkeypatch.setattr(_rules, "GROUP_ABOVE", 10)
    fast = policy_rates(suite, noise, "all,0.9,0.8,0.5", policy)
    for a, b in zip(slow.rows, fast.rows, strict=True):
        assert b.failure_probability == pytest.approx(a.failure_probability, rel=1e-10, abs=1e-300)
        assert b.judge_calls == pytest.approx(a.judge_calls, rel=1e-12)


def _beta_moments(a, b, top):
    """E (1 - X)^r for r = 0..top, X ~ Beta(a, b), in Fractions."""
    out = [Fraction(1)]
    for i in range(top):
        out.append(out[-1] * (b + i) / (a + b + i))
    return out


def _article_rerun_failing_false_alarms(a, b, retries, fresh):
    """Exact false alarms of the article suite's gates "all" and "0.80" (k_min 10) with
    failing cases rerun `retries` times, under a Beta(a, b) run rate, in Fractions.

    A case fails one try w.p. g(x) = 1 - (1 - x)^2, and every try w.p. G = prod_t g(x_t)
    (one x shared by the tries, or one per try). P(K < k) = sum_(j < k) comb(12, j)
    E[(1 - G)^j G^(12 - j)] = sum_j comb(12, j) sum_i comb(j, i) (-1)^i E[G^(i + 12 - j)],
    with E[G^m] = E[g^m]^T (fresh) or E[g^(m T)] (shared), T = retries + 1, and E[g^m] =
    sum_l comb(m, l) (-1)^l E[(1 - x)^(2 l)]."""
    tries = retries + 1
    moments = _beta_moments(a, b, 2 * 12 * tries)

    def e_g(m):
        return sum(comb(m, ll) * (-1) ** ll * moments[2 * ll] for ll in range(m + 1))

    def e_big_g(m):
        return e_g(m) ** tries if fresh else e_g(m * tries)

    def lower_tail(k):
        return sum(
            comb(12, j) * sum(comb(j, i) * (-1) ** i * e_big_g(i + 12 - j) for i in range(j + 1))
            for j in range(k)
        )

    return lower_tail(12), lower_tail(10)


@pytest.mark.parametrize("retries", [1, 2])
@pytest.mark.parametrize("retry_rate", ["shared", "fresh"])
def test_rerun_failing_under_icc_against_exact_fractions(retries, retry_rate):
    """Issue 22: flip 0.08, icc 0.1 (Beta(0.72, 8.28)), the article suite, gate "every case
    must pass", failing cases rerun once: false alarm 0.2594 with the run's rate shared by
    the rerun, 0.1781 with a fresh rate per rerun. Reference: exact fractions
    (_article_rerun_failing_false_alarms); ``pytest tests/analyses/policies/test_policies.py -k fractions``."""
    a, b = Fraction(18, 25), Fraction(207, 25)  # mean 0.08, icc 1 / (1 + a + b) = 0.1
    noise = JudgeNoise(fnr=0.08, fpr=0.08, icc=0.1)
    policy = Policy(rerun_failing=retries, retry_rate=retry_rate)
    rates = policy_rates(ARTICLE, noise, "all,0.80", policy)
    every, most = _article_rerun_failing_false_alarms(a, b, retries, retry_rate == "fresh")
    got_every = rates.row("healthy", "all").failure_probability
    assert got_every == pytest.approx(float(every), rel=1e-12)
    assert rates.row("healthy", "0.80").failure_probability == pytest.approx(float(most), rel=1e-12)
    if retries == 1:
        assert round(float(every), 4) == (0.1781 if retry_rate == "fresh" else 0.2594)


def test_fresh_retry_rate_needs_reruns_and_icc_to_matter():
    shared = policy_rates(ARTICLE, JudgeNoise.flip(0.08), "all", Policy(rerun_failing=1))
    fresh = policy_rates(
        ARTICLE, JudgeNoise.flip(0.08), "all", Policy(rerun_failing=1, retry_rate="fresh")
    )
    assert shared.rows == fresh.rows  # independent runs: one model
    with pytest.raises(ParameterError, match="`retry_rate` must be 'shared' or 'fresh'"):
        Policy(retry_rate="new")  # type: ignore[arg-type]
    assert parse_policy("rerun-failing-1", retry_rate="fresh").retry_rate == "fresh"
    big = Suite.uniform(cases=400, judge_checks=2, code_checks=1, failing=40)
    with pytest.raises(ParameterError, match="401\\^3 rate combinations"):
        policy_rates(
            big,
            JudgeNoise(fnr=0.08, fpr=0.08, icc=0.1),
            "all",
            Policy(rerun_failing=2, retry_rate="fresh"),
        )


@pytest.mark.parametrize(
    ("policy", "gates"),
    [(Policy(majority=3), "fails<=10,fails<=100"), (Policy(repeat=2, rerun=1), "all,fails<=90")],
)
def test_correlated_big_suites_agree_with_their_simulation_by_counts(policy, gates):
    """Above GROUP_ABOVE cases under icc the exact rates take every quadrature node at once
    (gatecal/_analyses/policies/nodes.py: binomial tails of one group, or the pmfs of several
    convolved); a 400-case judge-only suite (two active groups in the regressed build) and
    its counts simulation agree within 5 standard errors."""
    suite = Suite.uniform(cases=400, judge_checks=2, code_checks=0, failing=100)
    noise = JudgeNoise(fnr=0.06, fpr=0.06, icc=0.05)
    exact = policy_rates(suite, noise, gates, policy)
    assert sum(0.05 < r.failure_probability < 0.95 for r in exact.rows) >= 2  # informative
    z, calls = _disagreement(suite, noise, policy, gates, "counts")
    assert z < 5 and calls < 0.01
