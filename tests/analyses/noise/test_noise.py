"""Noise models: run-level correlation, asymmetric, per-check and per-case rates, unparseable."""

import json
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import integrate, stats
from scipy.special import betaln

import gatecal
from gatecal import (
    Check,
    JudgeNoise,
    ParameterError,
    Suite,
    exact_pass_counts,
    simulate_pass_counts,
)
from tests.reference import case_pass_probability, enumerate_pass_counts

ARTICLE = Suite.uniform()


def _quad_failure(p, icc, k_min, n=12, verdicts_per_case=2):
    """P(K < k_min) under a Beta run-level rate, by adaptive quadrature (a second method)."""
    scale = (1 - icc) / icc
    a, b = p * scale, (1 - p) * scale

    def integrand(x):
        q = (1 - x) ** verdicts_per_case
        return stats.binom.cdf(k_min - 1, n, q) * stats.beta.pdf(x, a, b)

    value, _ = integrate.quad(integrand, 0, 1, limit=200, epsabs=1e-13, epsrel=1e-11)
    return value


# reference/statistics.md §2.10 (beta integrals), rounded there to 3 decimals
@pytest.mark.parametrize(
    ("p", "icc", "refs"),
    [
        (0.03, 0.1, {12: 0.306, 11: 0.161, 10: 0.092, 9: 0.053}),
        (0.08, 0.3, {12: 0.394, 11: 0.283, 10: 0.219, 9: 0.174}),
    ],
)
def test_run_level_correlation_matches_beta_integrals(p, icc, refs):
    noise = JudgeNoise(fnr=p, fpr=p, icc=icc)
    dist = exact_pass_counts(ARTICLE, "healthy", noise)
    a, b = noise.beta_parameters()
    # all-pass, closed form: 1 - B(a, b + 24) / B(a, b)
    assert_allclose(
        dist.failure_probability(12), 1 - np.exp(betaln(a, b + 24) - betaln(a, b)), rtol=1e-12
    )
    for k_min, ref in refs.items():
        got = dist.failure_probability(k_min)
        assert abs(got - ref) < 5e-4
        assert_allclose(got, _quad_failure(p, icc, k_min), rtol=1e-8)


def test_issue_reference_correlation_triples_the_tolerant_gate():
    independent = exact_pass_counts(ARTICLE, "healthy", JudgeNoise.flip(0.03))
    correlated = exact_pass_counts(ARTICLE, "healthy", JudgeNoise(fnr=0.03, fpr=0.03, icc=0.1))
    assert round(independent.failure_probability(10), 3) == 0.030
    assert round(correlated.failure_probability(10), 3) == 0.092
    # correlation lowers the all-pass false alarm (Jensen) but fattens the tail
    assert correlated.failure_probability(12) < independent.failure_probability(12)


@pytest.mark.parametrize(
    ("suite", "build", "noise"),
    [
        (ARTICLE, "healthy", JudgeNoise(fnr=0.03, fpr=0.03, icc=0.1)),
        (ARTICLE, "regressed", JudgeNoise(fnr=0.08, fpr=0.08, icc=0.3, unparseable=0.02)),
        (
            Suite.uniform(cases=20, judge_checks=1, code_checks=0, failing=5),
            "regressed",
            JudgeNoise(fnr=0.2, fpr=0.2, icc=0.05),
        ),
    ],
)
def test_correlated_monte_carlo_agrees_with_exact(suite, build, noise):
    n_runs = 60_000
    sample = simulate_pass_counts(suite, build, noise, n_runs=n_runs, rng=17)
    exact = exact_pass_counts(suite, build, noise)
    for k in range(suite.n_cases + 1):
        p = exact.failure_probability(k)
        if p in (0.0, 1.0):
            assert sample.failures(k) / n_runs == p
        else:
            assert abs(sample.failures(k) / n_runs - p) < 5 * np.sqrt(p * (1 - p) / n_runs) + 1e-12


def _rated_suite():
    return Suite(
        cases=("easy", "hard", "broken", "plain"),
        checks=(Check("relevancy", "judge"), Check("facts", "judge"), Check("contains", "code")),
        truth={
            "healthy": [[True, True, True]] * 4,
            "regressed": [
                [True, True, True],
                [False, True, True],
                [True, False, True],
                [True, True, False],
            ],
        },
    )


RATED = JudgeNoise(
    fnr=0.05,
    fpr=0.2,
    unparseable=0.01,
    per_check={"facts": (0.1, 0.3)},
    per_case={"hard": (0.25, 0.4)},
)


def test_per_check_and_per_case_rates_match_fractions():
    suite = _rated_suite()
    u = Fraction(1, 100)
    rates = {  # (fnr, fpr) per case per judge check, by hand from RATED
        "easy": [(Fraction(5, 100), Fraction(2, 10)), (Fraction(1, 10), Fraction(3, 10))],
        "hard": [(Fraction(25, 100), Fraction(4, 10))] * 2,
        "broken": [(Fraction(5, 100), Fraction(2, 10)), (Fraction(1, 10), Fraction(3, 10))],
        "plain": [(Fraction(5, 100), Fraction(2, 10)), (Fraction(1, 10), Fraction(3, 10))],
    }
    for build in ("healthy", "regressed"):
        truth = suite.truth[build]
        q_ref = []
        for case, row in zip(suite.cases, truth, strict=True):
            q = Fraction(1)
            for ok, (fnr, fpr) in zip(row[:2], rates[case], strict=True):
                q *= (1 - u) * case_pass_probability([ok], ["judge"], fnr, fpr)
            q *= 1 if row[2] else 0
            q_ref.append(q)
        got = exact_pass_counts(suite, build, RATED)
        assert_allclose(got.case_pass_probabilities, [float(x) for x in q_ref], rtol=1e-14)
        assert_allclose(
            got.pmf, [float(x) for x in enumerate_pass_counts(q_ref)], rtol=1e-12, atol=1e-300
        )


@pytest.mark.parametrize("method", ["skip", "dense"])
@pytest.mark.parametrize("build", ["healthy", "regressed"])
def test_heterogeneous_rates_monte_carlo(method, build):
    suite = _rated_suite()
    n_runs = 80_000
    sample = simulate_pass_counts(suite, build, RATED, n_runs=n_runs, rng=23, method=method)
    exact = exact_pass_counts(suite, build, RATED)
    for k in range(suite.n_cases + 1):
        p = exact.failure_probability(k)
        if 0 < p < 1:
            assert abs(sample.failures(k) / n_runs - p) < 5 * np.sqrt(p * (1 - p) / n_runs)


def test_unparseable_replies_count_as_fails():
    u, fnr, fpr = 0.02, 0.03, 0.1
    with_u = exact_pass_counts(ARTICLE, "healthy", JudgeNoise(fnr=fnr, fpr=fpr, unparseable=u))
    folded = exact_pass_counts(ARTICLE, "healthy", JudgeNoise(fnr=1 - (1 - u) * (1 - fnr), fpr=fpr))
    assert_allclose(with_u.pmf, folded.pmf, rtol=1e-12)
    # even a perfect judge fails a case when its reply cannot be parsed
    perfect = exact_pass_counts(ARTICLE, "healthy", JudgeNoise(fnr=0, fpr=0, unparseable=0.01))
    assert_allclose(perfect.failure_probability(12), 1 - 0.99**24, rtol=1e-13)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fnr": 0.1, "fpr": 0.2, "icc": 0.1}, "`icc` needs one symmetric flip rate"),
        ({"fnr": 0.1, "fpr": 0.1, "icc": 1.0}, r"`icc` must be in \[0, 1\)"),
        (
            {"fnr": 0.1, "fpr": 0.1, "unparseable": 1.5},
            r"`unparseable` must be a number in \[0, 1\]",
        ),
        ({"fnr": 0.1, "fpr": 0.1, "per_case": {"a": (0.1,)}}, r"`per_case\['a'\]` must be a pair"),
        (
            {"fnr": 0.1, "fpr": 0.1, "per_check": {"j": (0.1, 2)}},
            r"`per_check\['j'\].fpr` must be a number",
        ),
    ],
)
def test_noise_validation(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        JudgeNoise(**kwargs)


def test_rates_must_name_the_suite():
    with pytest.raises(ParameterError, match="`per_check` must name checks of the suite"):
        exact_pass_counts(
            ARTICLE, "healthy", JudgeNoise(fnr=0.1, fpr=0.1, per_check={"nope": (0, 0)})
        )
    with pytest.raises(ParameterError, match="`per_case` must name cases of the suite"):
        exact_pass_counts(
            ARTICLE, "healthy", JudgeNoise(fnr=0.1, fpr=0.1, per_case={"nope": (0, 0)})
        )


def test_spec_rates_reach_the_engines(tmp_path):
    spec = {
        "cases": ["easy", "hard"],
        "checks": [
            {"name": "relevancy", "kind": "judge", "fnr": 0.02, "fpr": 0.3},
            {"name": "contains", "kind": "code"},
        ],
        "truth": {
            "healthy": [[True, True], [True, True]],
            "regressed": [[True, True], [True, False]],
        },
        "case_rates": {"hard": {"fnr": 0.2, "fpr": 0.5}},
    }
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(spec))
    loaded = gatecal.load_spec(path)
    assert loaded.per_check == {"relevancy": (0.02, 0.3)}
    assert loaded.per_case == {"hard": (0.2, 0.5)}
    import contextlib
    import io

    from gatecal.cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert (
            main(
                [
                    "simulate",
                    "--suite",
                    str(path),
                    "--flip",
                    "0.1",
                    "--gates",
                    "all",
                    "--format",
                    "json",
                ]
            )
            == 0
        )
    rows = json.loads(buffer.getvalue())["rows"]
    # healthy: easy passes with 0.98 (its check's own rate), hard with 0.8 (the case's rate)
    assert_allclose(rows[0]["exact_failure_probability"], 1 - 0.98 * 0.8, rtol=1e-12)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"checks": [{"name": "c", "kind": "code", "fnr": 0.1, "fpr": 0.1}]},
            "only a judge check has error rates",
        ),
        (
            {"checks": [{"name": "j", "kind": "judge", "fnr": 0.1, "fpr": 1.5}]},
            "`checks[0].fpr` must be a number in [0, 1] (got 1.5)",
        ),
        (
            {"checks": [{"name": "j", "kind": "judge", "weight": 2}]},
            "`checks[0].weight` is not a check field",
        ),
        ({"case_rates": {"zzz": {"fnr": 0.1, "fpr": 0.1}}}, "`case_rates.zzz` must name a case"),
        (
            {"case_rates": {"a": {"fnr": 0.1}}},
            "`case_rates.a.fpr` must be a number in [0, 1] (got None)",
        ),
    ],
)
def test_bad_spec_rates(change, message):
    spec = {
        "cases": ["a"],
        "checks": [{"name": "j", "kind": "judge"}],
        "truth": {"healthy": [[True]], "regressed": [[False]]},
    } | change
    with pytest.raises(gatecal.SpecError) as info:
        gatecal.spec_from_data(spec, source="s.json")
    assert message in str(info.value)


def test_simulate_cli_noise_options_in_json():
    import contextlib
    import io

    from gatecal.cli import main

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(
            [
                "simulate",
                "--flip",
                "0.03",
                "--icc",
                "0.1",
                "--runs",
                "20000",
                "--gates",
                "0.80",
                "--format",
                "json",
            ]
        )
    assert code == 0
    data = json.loads(buffer.getvalue())
    assert (data["icc"], data["fpr"], data["unparseable"]) == (0.1, None, 0.0)
    row = data["rows"][0]
    assert round(row["exact_failure_probability"], 3) == 0.092
    assert row["consistent"] is True
