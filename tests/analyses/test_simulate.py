import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st
from numpy.testing import assert_allclose
from scipy import stats

import gatecal
from gatecal import Suite, binomial_interval, render, simulate_gates

ARTICLE = Suite.uniform()


@pytest.fixture(scope="module")
def report():
    return simulate_gates(ARTICLE)


def test_defaults_are_the_article_setting(report):
    assert report.flips == (0.03, 0.08)
    assert [g.text for g in report.gates] == ["all", "0.90", "0.85", "0.80"]
    assert report.n_runs == 200
    assert report.seed == gatecal.DEFAULT_SEED
    assert (report.suite.n_cases, report.suite.judge_checks, report.suite.code_checks) == (12, 2, 1)
    assert report.suite.failing("regressed") == 3
    assert report.noise_free_pass_rate("healthy") == 1.0
    assert report.noise_free_pass_rate("regressed") == 0.75


def test_rows_hold_both_engines(report):
    assert len(report.rows) == 2 * 2 * 4
    assert [(r.flip, r.build) for r in report.rows[::4]] == [
        (0.03, "healthy"),
        (0.03, "regressed"),
        (0.08, "healthy"),
        (0.08, "regressed"),
    ]
    by_key = {(r.flip, r.build, r.gate): r for r in report.rows}
    # exact probabilities: reference/statistics.md §1.1 (exact rational arithmetic)
    assert_allclose(by_key[0.03, "healthy", "all"].exact_failure_probability, 0.5185827780882762)
    assert_allclose(by_key[0.08, "healthy", "0.80"].exact_failure_probability, 0.27662283804688986)
    assert by_key[0.03, "healthy", "0.85"].same_gate_as == "0.90"
    assert by_key[0.03, "healthy", "0.90"].same_gate_as is None
    for r in report.rows:
        if r.build == "regressed":
            assert r.exact_failure_probability == 1.0 and r.simulated_failures == 200
        assert r.consistent == (r.interval.low <= r.simulated_failures <= r.interval.high)
        comparison = next(c for c in report.comparisons if (c.flip, c.build) == (r.flip, r.build))
        assert r.simulated_failures == comparison.simulated.failures(r.k_min)
    # one seed for every (flip, build): adding a flip rate does not change a row
    alone = simulate_gates(ARTICLE, flips=[0.08])
    assert alone.rows == tuple(r for r in report.rows if r.flip == 0.08)


def test_same_gates_have_identical_rows(report):
    by_key = {(r.flip, r.build, r.gate): r for r in report.rows}
    for flip in report.flips:
        for build in ("healthy", "regressed"):
            a, b = by_key[flip, build, "0.90"], by_key[flip, build, "0.85"]
            assert a.simulated_failures == b.simulated_failures
            assert a.exact_failure_probability == b.exact_failure_probability


@pytest.mark.parametrize(
    ("n", "p"), [(200, 0.5185827780882762), (200, 0.03), (1000, 0.2), (50, 0.0), (50, 1.0)]
)
def test_interval_is_the_central_binomial_interval(n, p):
    iv = binomial_interval(n, p, 0.99)
    dist = stats.binom(n, p)
    assert dist.cdf(iv.low - 1) <= 0.005 if iv.low > 0 else True
    assert dist.sf(iv.high) <= 0.005
    assert dist.cdf(iv.high) - dist.cdf(iv.low - 1) >= 0.99


_PPF_NS = [1, 2, 3, 12, 199, 200, 201, 1000, 20_000, 10**6, 10**9]
_PPF_PS = [
    *np.random.default_rng(13).random(12).tolist(),
    *(10 ** np.random.default_rng(14).uniform(-12, -1, 6)).tolist(),
    *(1 - 10 ** np.random.default_rng(15).uniform(-12, -1, 6)).tolist(),
    0.0,
    1.0,
    0.5,
    0.03,
    0.5185827780882762,
    1e-300,
    1 - 1e-16,
]


@pytest.mark.parametrize("n", _PPF_NS)
def test_interval_is_scipys_binomial_ppf_without_importing_it(n):
    """binomial_interval computes its quantiles itself; they are scipy.stats.binom.ppf's."""
    for p in _PPF_PS:
        for level in (0.99, 0.95, 0.999, 0.9999999, 0.5, 1e-12):
            tail = (1 - level) / 2
            iv = binomial_interval(n, p, level)
            ref = (int(stats.binom.ppf(tail, n, p)), int(stats.binom.ppf(1 - tail, n, p)))
            assert (iv.low, iv.high) == ref, (n, p, level)


@given(
    n=st.integers(min_value=0, max_value=5000),
    p=st.floats(min_value=0.0, max_value=1.0),
    # scipy's own cdf rounds near tails of 1e-16 (see the exact test below): compare where
    # it is reliable; a level of 0 or 1 is refused (it gave low = -1)
    level=st.floats(min_value=1e-9, max_value=1 - 1e-9),
)
def test_interval_matches_scipy_ppf_everywhere(n, p, level):
    tail = (1 - level) / 2
    iv = binomial_interval(n, p, level)
    assert (iv.low, iv.high) == (
        int(stats.binom.ppf(tail, n, p)),
        int(stats.binom.ppf(1 - tail, n, p)),
    )


def test_simulate_does_not_import_scipy_stats():
    """The headline command's path stays light: scipy.stats takes about a second to import."""
    code = (
        "import sys, gatecal; gatecal.simulate_gates(gatecal.Suite.uniform(), n_runs=50); "
        "print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_interval_of_the_article_all_pass_gate():
    # reference/statistics.md §1.1: 99% interval [86, 122] at P = 0.518583, 200 runs
    iv = binomial_interval(200, 0.5185827780882762, 0.99)
    assert (iv.low, iv.high) == (86, 122)
    assert (
        binomial_interval(200, 0.030357832863056648).low,
        binomial_interval(200, 0.030357832863056648).high,
    ) == (1, 13)


def test_consistency_over_many_seeds_holds_its_level():
    """Over many seeds, about 1% of counts fall outside their 99% interval, not more."""
    outside = 0
    total = 0
    for seed in range(60):
        rep = simulate_gates(ARTICLE, flips=[0.03, 0.08], gates="all,0.90,0.80", rng=seed)
        rows = [r for r in rep.rows if r.build == "healthy"]
        outside += sum(not r.consistent for r in rows)
        total += len(rows)
    # expected <= 1% of 360 = 3.6; 12 or more happens with probability < 1e-4
    assert outside < 12
    assert total == 360


def test_json_contract(report):
    data = json.loads(render(report, "json"))
    for key in ("seed", "cases", "judge_checks", "code_checks", "failing", "rows"):
        assert key in data
    assert (
        data["seed"],
        data["cases"],
        data["judge_checks"],
        data["code_checks"],
        data["failing"],
    ) == (gatecal.DEFAULT_SEED, 12, 2, 1, 3)
    row = data["rows"][0]
    required = {
        "flip",
        "build",
        "gate",
        "k_min",
        "runs",
        "simulated_failures",
        "exact_failure_probability",
        "exact_mean_pass_rate",
        "simulated_mean_pass_rate",
        "consistent",
    }
    assert required <= set(row)
    assert row["gate"] == "all" and row["build"] == "healthy" and row["flip"] == 0.03
    assert isinstance(row["consistent"], bool)
    assert data["equivalent_gates"] == [{"k_min": 11, "gates": ["0.90", "0.85"]}]


def test_csv_has_the_same_rows(report):
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert len(rows) == len(report.rows)
    for got, want in zip(rows, report.rows, strict=True):
        assert got["gate"] == want.gate
        assert int(got["simulated_failures"]) == want.simulated_failures
        assert float(got["exact_failure_probability"]) == want.exact_failure_probability
        assert got["consistent"] in ("true", "false")


def test_table_shows_both_columns_and_the_equivalence(report):
    text = render(report, "table")
    assert "== 3% of judge verdicts flipped ==" in text
    assert (
        "gate" in text and "healthy build fails it" in text and "regressed build fails it" in text
    )
    r = report.rows[0]
    assert f"{r.simulated_failures} of 200 runs  P = 0.5186" in text
    assert 'same gate: "pass rate >= 0.90" and "pass rate >= 0.85" both need 11 of 12' in text
    md = render(report, "markdown")
    assert "| every case must pass | 12 |" in md


def test_probability_formatting():
    fmt = gatecal.format_probability
    assert fmt(1.0) == "1"
    assert fmt(0.0) == "0"
    assert fmt(0.99999999) == "> 0.9999"
    assert fmt(0.5185827780882762) == "0.5186"
    assert fmt(6.588e-29) == "6.59e-29"


def test_inconsistent_counts_are_flagged():
    # With a near-0% interval nearly every count is "inconsistent": the report must say so.
    rep = simulate_gates(ARTICLE, flips=[0.3], confidence_level=1e-9)
    text = render(rep, "table")
    assert rep.inconsistent_rows
    assert " !" in text and "lie outside the 1e-07% binomial interval" in text


def test_many_cases_and_big_runs_are_cheap():
    suite = Suite.uniform(cases=2000, judge_checks=2, code_checks=1, failing=200)
    rep = simulate_gates(suite, flips=[0.01], gates="0.95,fails<=150", n_runs=300, rng=1)
    healthy = {r.gate: r for r in rep.rows if r.build == "healthy"}
    # 0.95 * 2000 = 1900 cases must pass; each passes with probability 0.99**2
    ref = stats.binom.cdf(1899, 2000, 0.99**2)
    assert_allclose(healthy["0.95"].exact_failure_probability, ref, rtol=1e-9)
    assert np.isfinite([r.exact_failure_probability for r in rep.rows]).all()


def test_to_frame_for_notebooks(report):
    frame = report.to_frame()
    assert list(frame.columns) == list(report.rows[0].to_dict())
    assert len(frame) == len(report.rows)
    assert frame["simulated_failures"].tolist() == [r.simulated_failures for r in report.rows]
    plans = gatecal.plan_suite(noise=gatecal.JudgeNoise.flip(0.08), regression="0.10")
    assert plans.to_frame()["cases"].tolist() == [p.cases for p in plans.plans]
    policies = gatecal.compare_policies(
        ARTICLE, gatecal.JudgeNoise.flip(0.08), "0.80", [gatecal.Policy()], n_runs=500
    )
    assert (
        policies.to_frame()["failure_probability"].iloc[0] == policies.rows[0].failure_probability
    )


def test_interval_at_a_tail_of_1e_16_is_exact_where_scipy_rounds():
    """n = 124, p = 1/2, level 1 - 2.2e-16: the exact upper quantile is 106 (P(K > 105) is
    above the tail of 1.1e-16 in exact fractions); scipy.stats.binom.ppf says 105."""
    from fractions import Fraction
    from math import comb

    n, level = 124, 0.9999999999999998
    tail = (1 - Fraction(level)) / 2
    exact = next(
        k
        for k in range(n + 1)
        if Fraction(sum(comb(n, j) for j in range(k + 1, n + 1)), 2**n) <= tail
    )
    assert exact == 106 and binomial_interval(n, 0.5, level).high == exact
    assert binomial_interval(n, 0.5, level).low == n - exact  # symmetric at p = 1/2


def test_the_root_seed_is_rng_and_seed_still_works_with_a_warning():
    """SPEC 7's name everywhere; the old keyword gives the same report and says it moved."""
    rep = simulate_gates(ARTICLE, flips=[0.03], n_runs=50, rng=7)
    with pytest.warns(DeprecationWarning, match=r"simulate_gates\(seed=...\) is now"):
        old = simulate_gates(ARTICLE, flips=[0.03], n_runs=50, seed=7)
    assert old == rep and rep.seed == 7
    with pytest.raises(gatecal.ParameterError, match="`rng`"):
        simulate_gates(ARTICLE, flips=[0.03], n_runs=50, rng=-1)


# -- how much one suite drawn from a case spread varies ------------------------------------


def _brute_suite_failures(x, judge_checks, broken, k_min, unparseable):
    """P(fewer than k_min of the cases pass) for each drawn suite (a row of case rates), by
    enumerating every pass/fail outcome of the cases: a healthy case passes when each of
    its judge checks says yes, (1 - u)(1 - x) each; a broken case (a code check fails)
    never passes."""
    import itertools

    out = []
    for rates in x:
        q = [((1 - unparseable) * (1 - r)) ** judge_checks for r in rates]
        q = [0.0 if j < broken else p for j, p in enumerate(q)]
        total = 0.0
        for outcome in itertools.product((0, 1), repeat=len(q)):
            if sum(outcome) < k_min:
                total += float(
                    np.prod([p if o else 1 - p for p, o in zip(q, outcome, strict=True)])
                )
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize(("build", "broken"), [("healthy", 0), ("regressed", 2)])
def test_one_suite_ranges_are_the_percentiles_of_brute_forced_suites(build, broken):
    # the same seeded draws of each case's rate; each suite's failure probability by
    # enumerating the 2^6 outcomes instead of the Poisson-binomial
    from gatecal._analyses.simulate import one_suite_ranges
    from gatecal._common.defaults import SPREAD_SEED, SPREAD_SUITES
    from gatecal._model.suite import beta_shape

    suite = Suite.uniform(cases=6, judge_checks=2, code_checks=1, failing=2)
    noise = gatecal.JudgeNoise(fnr=0.1, fpr=0.1, unparseable=0.02, case_spread=0.4)
    a, b = beta_shape(0.1, 0.4)
    x = np.random.default_rng(SPREAD_SEED).beta(a, b, size=(SPREAD_SUITES, 6))
    k_mins = [6, 5, 3]
    got = one_suite_ranges(suite, build, noise, k_mins)
    for k, (low, high) in zip(k_mins, got, strict=True):
        fails = _brute_suite_failures(x, 2, broken, k, 0.02)
        want = np.quantile(fails, [0.1, 0.9])
        assert (low, high) == pytest.approx(tuple(want), rel=1e-9, abs=1e-12)


def test_the_one_suite_block_shows_with_a_spread_only():
    spread = simulate_gates(Suite.uniform(cases=10), flips=[0.05], n_runs=200,
                            noise=gatecal.JudgeNoise(fnr=0.05, fpr=0.05, case_spread=0.5))  # fmt: skip
    assert all(r.one_suite is not None and r.one_suite[0] <= r.one_suite[1] for r in spread.rows)
    assert "one suite, not the average" in render(spread)
    assert "one_suite_low" in json.loads(render(spread, "json"))["rows"][0]
    plain = simulate_gates(Suite.uniform(cases=10), flips=[0.05], n_runs=200)
    assert all(r.one_suite is None for r in plain.rows)
    assert "one suite" not in render(plain)
    assert "one_suite_low" not in json.loads(render(plain, "json"))["rows"][0]
