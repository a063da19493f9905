"""A suite whose cases differ: each case's flip rate from a spread and a share of
systematic cases (gatecal/_model/suite.py: JudgeNoise.case_spread, over_cases)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

import gatecal
from gatecal._common.validate import ParameterError
from gatecal._model.suite import systematic_count


def test_no_spread_is_one_rate_and_systematic_cases_are_the_last():
    suite = gatecal.Suite.uniform(cases=10)
    fnr, fpr = gatecal.JudgeNoise(fnr=0.07, fpr=0.07, systematic=0.25).rates(suite)  # 2.5: 3
    assert fnr[:, 0].tolist() == [0.07] * 7 + [1.0] * 3
    assert fpr[:, 0].tolist() == [0.07] * 7 + [0.0] * 3


@pytest.mark.parametrize("spread", [0.01, 0.5, 0.95])
@pytest.mark.parametrize("mean", [0.0, 0.03, 0.5, 1.0])
def test_the_case_rate_rule_is_a_probability_rule_with_the_spread_mean(mean, spread):
    noise = gatecal.JudgeNoise(fnr=mean, fpr=mean, case_spread=spread)
    xs, ws = noise.case_rate_nodes(6)
    assert ws.sum() == pytest.approx(1.0, rel=1e-12) and (ws > 0).all()
    assert ((xs >= 0) & (xs <= 1)).all()
    assert float(ws @ xs) == pytest.approx(mean, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(
    ("cases", "share", "stuck"),
    [
        (5, 0.3, 2),
        (5, 0.1, 1),
        (2, 0.25, 1),
        (12, 0.25, 3),
        (12, 0.04, 0),
        (3, 1.0, 3),
        (7, 0.0, 0),
    ],
)
def test_systematic_cases_round_half_up_in_decimal(cases, share, stuck):
    # 0.3 x 5 is 1.4999999999999998 in binary floating point: 1, where 1.5 rounds to 2
    assert systematic_count(cases, share) == stuck


def test_a_suite_drawn_from_a_spread_has_no_fixed_rates_but_nodes():
    suite = gatecal.Suite.uniform(cases=8, judge_checks=2, code_checks=1, failing=2)
    noise = gatecal.JudgeNoise(fnr=0.1, fpr=0.1, case_spread=0.6, systematic=0.25)
    with pytest.raises(ParameterError) as info:
        noise.rates(suite)
    assert info.value.name == "case_spread"
    at = noise.at_case_rate(suite, 0.3)
    fnr, fpr = at.rates(suite)
    assert (fnr[:6] == 0.3).all() and (fpr[:6] == 0.3).all()  # symmetric: false "yes" too
    assert (fnr[6:] == 1.0).all() and (fpr[6:] == 0).all()  # systematic: "no" whatever the truth
    # a healthy build fails the systematic cases in every run
    q = gatecal.exact_pass_counts(suite, "healthy", noise).pmf
    assert np.asarray(q)[7:].sum() <= 1e-300  # (no mass: to rounding on any CPU)


@pytest.mark.parametrize(
    ("mean", "spread", "checks"), [(0.05, 0.5, 2), (0.3, 0.9, 3), (0.1, 0.05, 1)]
)
def test_each_case_passes_with_its_rate_averaged_over_the_beta(mean, spread, checks):
    """Against adaptive quadrature of (1 - x)^checks over the Beta density (scipy.integrate)."""
    a, b = mean * (1 - spread) / spread, (1 - mean) * (1 - spread) / spread
    suite = gatecal.Suite.uniform(cases=3, judge_checks=checks, code_checks=0)
    noise = gatecal.JudgeNoise(fnr=mean, fpr=mean, case_spread=spread)
    got = gatecal.exact_pass_counts(suite, "healthy", noise).case_pass_probabilities
    dist = stats.beta(a, b)
    want, _ = integrate.quad(
        lambda x: (1 - x) ** checks * dist.pdf(x), 0, 1, limit=200, epsabs=1e-13
    )
    fail, _ = integrate.quad(
        lambda x: -np.expm1(checks * np.log1p(-x)) * dist.pdf(x), 0, 1, limit=200
    )
    assert got == pytest.approx([want] * 3, rel=1e-7)
    assert 1 - got[0] == pytest.approx(fail, rel=1e-6)


def test_the_simulation_draws_each_case_its_rate_and_skipping_is_refused():
    suite = gatecal.Suite.uniform(cases=6, failing=2)
    noise = gatecal.JudgeNoise(fnr=0.05, fpr=0.05, case_spread=0.5)
    with pytest.raises(ParameterError) as info:
        gatecal.simulate_pass_counts(suite, "healthy", noise, n_runs=10, method="skip")
    assert info.value.name == "method"


def test_unchanged_without_a_spread():
    suite = gatecal.Suite.uniform(cases=5)
    plain = gatecal.JudgeNoise(fnr=0.04, fpr=0.02)
    same = gatecal.JudgeNoise(fnr=0.04, fpr=0.02, case_spread=0.0, systematic=0.0)
    for got, want in zip(same.rates(suite), plain.rates(suite), strict=True):
        assert np.array_equal(got, want)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"case_spread": 1.0}, "case_spread"),
        ({"case_spread": -0.1}, "case_spread"),
        ({"systematic": 1.5}, "systematic"),
        ({"case_spread": 0.2, "icc": 0.1}, "icc"),
        ({"systematic": 0.2, "per_case": {"case-1": (0.1, 0.1)}}, "systematic"),
    ],
)
def test_bad_combinations_are_refused(kwargs, name):
    with pytest.raises(ParameterError) as info:
        gatecal.JudgeNoise(fnr=0.05, fpr=0.05, **kwargs)
    assert info.value.name == name


def test_simulation_agrees_with_the_exact_engine_when_cases_differ():
    suite = gatecal.Suite.uniform(cases=12, failing=3)
    noise = gatecal.JudgeNoise(fnr=0.08, fpr=0.08, case_spread=0.5, systematic=0.1)
    report = gatecal.simulate_gates(
        suite, flips=[0.08], noise=noise, gates="all,0.90,0.80,0.70", n_runs=4000, rng=7
    )
    for row in report.rows:  # within 4 standard errors of the exact probability
        p = row.exact_failure_probability
        se = max((p * (1 - p) / row.runs) ** 0.5, 1 / row.runs)
        assert abs(row.simulated_failures / row.runs - p) <= 4 * se


def test_a_majority_vote_helps_only_while_cases_are_alike():
    """The point of the model: three judge calls per check cut the false alarm when each
    call errs afresh (no spread) and not when each case's verdict is set (a spread near
    1, as a judge at temperature 0); no policy saves a systematic case."""
    suite = gatecal.Suite.uniform(cases=20, failing=2)

    def false_alarm(policy: str, **kwargs: float) -> float:
        noise = gatecal.JudgeNoise(fnr=0.05, fpr=0.05, **kwargs)
        rates = gatecal.policy_rates(suite, noise, "all", gatecal.parse_policy(policy))
        return rates.row("healthy", "all").failure_probability

    alike = [false_alarm(p) for p in ("single", "majority-3", "rerun-failing-1")]
    fixed = [false_alarm(p, case_spread=0.95) for p in ("single", "majority-3", "rerun-failing-1")]
    assert alike[1] < alike[0] / 3 and alike[2] < alike[0] / 3  # 0.871 -> 0.253, 0.174
    assert min(fixed[1:]) > 0.95 * fixed[0]  # 0.659 -> 0.652, 0.644: the same cases fail
    for policy in ("single", "majority-5", "rerun-failing-3", "rerun-2"):
        assert false_alarm(policy, systematic=0.05) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("policy", ["single", "majority-3", "rerun-failing-1"])
def test_call_by_call_runs_agree_with_the_averaged_policy_rates(policy):
    """Each simulated run draws its suite (every case its rate, kept in all its calls): the
    failure count lies within 4 standard errors of the exact average over suites."""
    suite = gatecal.Suite.uniform(cases=10, failing=2)
    noise = gatecal.JudgeNoise(fnr=0.1, fpr=0.1, case_spread=0.5, systematic=0.1)
    chosen = gatecal.parse_policy(policy)
    exact = gatecal.policy_rates(suite, noise, "0.80", chosen)
    for build in ("healthy", "regressed"):
        sample = gatecal.simulate_policy(
            suite, build, noise, "0.80", chosen, n_runs=4000, rng=11, method="calls"
        )
        p = exact.row(build, "0.80").failure_probability
        se = max((p * (1 - p) / sample.n_runs) ** 0.5, 1 / sample.n_runs)
        assert abs(sample.failures["0.80"] / sample.n_runs - p) <= 4 * se
