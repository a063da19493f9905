"""Planning the suite size: exact search, references, and --regression's meaning."""

import json
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from scipy import stats

from gatecal import JudgeNoise, ParameterError, Policy, parse_regression, plan_suite
from tests.conftest import run_cli


def _single(p, regression, **kwargs):
    return plan_suite(
        noise=JudgeNoise.flip(p), regression=regression, policies=[Policy()], **kwargs
    ).plans[0]


def test_issue_reference_189_cases_and_190_does_not_work():
    plan = _single(0.08, "0.10")
    assert (plan.cases, plan.max_failures, plan.failing) == (189, 37, 19)
    assert plan.false_alarm <= 0.05 and plan.detection >= 0.95
    # 190 cases (also 19 failing) has no admissible gate: a bisection would be misled
    assert _single(0.08, "0.10", min_cases=190, max_cases=190) is None
    assert _single(0.08, "0.10", min_cases=191, max_cases=400).cases > 190


def test_the_plan_is_right_in_exact_rational_arithmetic():
    # An independent check of 189 cases, k_min 152, 19 failing, q = (92/100)^2:
    #   alpha = P(Bin(189, q) < 152), power = P(Bin(170, q) < 152), in Fractions.
    q = Fraction(92, 100) ** 2
    alpha = sum(comb(189, k) * q**k * (1 - q) ** (189 - k) for k in range(152))
    power = sum(comb(170, k) * q**k * (1 - q) ** (170 - k) for k in range(152))
    plan = _single(0.08, "0.10")
    assert abs(plan.false_alarm - float(alpha)) < 1e-12
    assert abs(plan.detection - float(power)) < 1e-12
    # and the next stricter gate breaks the false-alarm budget
    alpha_next = alpha + comb(189, 152) * q**152 * (1 - q) ** 37
    assert float(alpha_next) > 0.05


@pytest.mark.parametrize(
    ("p", "share", "cases", "max_failures"),
    [  # reference/statistics.md §2.9
        (0.03, "0.25", 6, 1),
        (0.03, "0.10", 56, 6),
        (0.03, "0.05", 254, 21),
        (0.08, "0.05", 771, 135),
    ],
)
def test_sample_size_table(p, share, cases, max_failures):
    plan = _single(p, share)
    assert (plan.cases, plan.max_failures) == (cases, max_failures)


def test_rounding_half_up_explains_the_one_table_difference():
    # §2.9 gives 27 cases for p = 0.08, f = 0.25; gatecal says 26 because 0.25 * 26 = 6.5
    # rounds half up to 7 failing cases. With 6 failing (round half to even), 26 fails.
    assert _single(0.08, "0.25").cases == 26
    assert _single(0.08, "7", min_cases=26, max_cases=26) is not None
    assert _single(0.08, "6", min_cases=26, max_cases=26) is None
    assert _single(0.08, "7", min_cases=27, max_cases=27) is not None


def test_no_smaller_suite_works_by_brute_force():
    p, alpha, power = 0.03, 0.05, 0.95
    q = (1 - p) ** 2
    for n in range(1, 56):
        f = int(Fraction(1, 10) * n + Fraction(1, 2))
        if f < 1:
            continue
        ok = any(
            stats.binom.cdf(k - 1, n, q) <= alpha and stats.binom.cdf(k - 1, n - f, q) >= power
            for k in range(n + 1)
        )
        assert not ok, n


def test_alternatives_and_their_cost():
    plans = plan_suite(noise=JudgeNoise.flip(0.08), regression="0.10")
    single, majority, rerun = plans.plans
    assert single.cases == 189 and single.judge_calls == 189 * 2
    assert majority.policy == Policy(majority=3) and majority.cases < single.cases
    assert majority.judge_calls == majority.cases * 2 * 3
    assert rerun.policy == Policy(rerun=1)
    assert plans.cheapest == min(plans.plans, key=lambda p: p.judge_calls)


def test_correlated_runs_can_make_single_calls_infeasible():
    plans = plan_suite(
        noise=JudgeNoise(fnr=0.03, fpr=0.03, icc=0.1),
        regression="0.25",
        max_cases=200,
        policies=[Policy(), Policy(majority=3)],
    )
    assert plans.plans[0] is None  # the false-alarm floor of a bad night stays above 5%
    assert plans.plans[1] is not None


@pytest.mark.parametrize(
    ("text", "share", "count"),
    [
        ("0.10", Fraction(1, 10), None),
        ("10%", Fraction(1, 10), None),
        (".5", Fraction(1, 2), None),
        ("1.0", Fraction(1), None),
        ("3", None, 3),
        (" 12 ", None, 12),
    ],
)
def test_parse_regression(text, share, count):
    reg = parse_regression(text)
    assert (reg.share, reg.count) == (share, count)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("3.0", "as a share must lie in (0, 1]; for a number of cases write a whole number"),
        ("150%", "as a share must lie in (0, 1]"),
        ("0", "must be at least 1 case"),
        ("0.0", "as a share must lie in (0, 1]"),
        ("-2", "must be a share of the cases"),
        ("three", "must be a share of the cases"),
    ],
)
def test_ambiguous_or_bad_regressions_are_refused(text, message):
    with pytest.raises(ParameterError) as info:
        parse_regression(text)
    assert message in str(info.value)


def test_failing_cases_round_half_up():
    reg = parse_regression("0.25")
    assert [reg.failing(n) for n in (1, 2, 3, 26, 27)] == [0, 1, 1, 7, 7]
    assert parse_regression("3").failing(100) == 3


def test_plan_command_json_contract():
    code, out, err = run_cli(
        "plan",
        "--flip",
        "0.08",
        "--regression",
        "0.10",
        "--false-alarm",
        "0.05",
        "--detection",
        "0.95",
        "--format",
        "json",
    )
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert (data["cases"], data["k_min"], data["max_failures"]) == (189, 152, 37)
    assert data["false_alarm"] <= 0.05 and data["detection"] >= 0.95
    assert [a["policy"] for a in data["alternatives"]][1] == "majority of 3 judge calls per check"
    code, out, _ = run_cli("plan")
    assert code == 0 and "189" in out and "cheapest in judge calls" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "--regression", "3.0"], "--regression as a share must lie in (0, 1]"),
        (["plan", "--flip", "2"], "--flip must be a number in [0, 1] (got '2')"),
        (["plan", "--detection", "x"], "--detection must be a number in [0, 1] (got 'x')"),
        (["plan", "--policies", "vote-3"], "--policies must be single, majority-M"),
        (["plan", "--max-cases", "0"], "--max-cases must be an integer in [1, 2000000] (got 0)"),
        (
            ["plan", "--max-cases", "2000001"],
            "--max-cases must be an integer in [1, 2000000] (got 2000001)",
        ),
        (["plan", "--tie", "maybe"], "--tie must be fail or pass (got 'maybe')"),
        (["policies", "--icc", "0.1", "--fpr", "0.2"], "--icc needs one symmetric flip rate"),
        (["policies", "--runs", "0"], "--runs must be an integer >= 1 (got 0)"),
        (["policies", "--retry-rate", "later"], "--retry-rate must be shared or fresh"),
        (
            [
                "policies",
                "--icc",
                "0.1",
                "--cases",
                "400",
                "--policies",
                "rerun-failing-2",
                "--retry-rate",
                "fresh",
            ],
            "--policies with a fresh run rate per rerun of failing cases under icc is computed "
            "over 401^3 rate combinations x 400 cases, at most 50,000,000",
        ),
    ],
)
def test_plan_and_policies_errors(args, message):
    code, out, err = run_cli(*args)
    assert code == 2 and out == ""
    assert err.startswith("gatecal: error: ") and err.count("\n") == 1
    assert message in err


def test_policies_command():
    code, out, err = run_cli(
        "policies", "--flip", "0.08", "--gates", "0.80", "--runs", "4000", "--format", "json"
    )
    assert (code, err) == (0, "")
    rows = json.loads(out)["rows"]
    majority = next(
        r for r in rows if r["policy"].startswith("majority of 3") and r["build"] == "healthy"
    )
    assert round(majority["failure_probability"], 3) == 0.008
    assert majority["judge_calls"] == 72
    assert json.loads(out)["simulation"] == "calls"


def test_policies_of_a_big_suite_say_they_were_simulated_by_counts():
    args = ["policies", "--cases", "5000", "--gates", "0.80", "--runs", "2000"]
    code, out, err = run_cli(*args, "--policies", "single,majority-3")
    assert (code, err) == (0, "")
    assert "CI runs simulated call by call, alike cases by counts (seed" in out
    assert "consistent: every simulated count" in out
    code, out, err = run_cli(*args, "--format", "json")
    assert (code, err) == (0, "") and json.loads(out)["simulation"] == "counts"


def _brute_force(noise, regression, policy, alpha, power, top, judge_checks=2, code_checks=1):
    """Every size from 1 to `top` computed in full (the search before screening), in turn."""
    from gatecal._analyses.plan._search import _case_probabilities

    reg = parse_regression(regression)
    per_case = judge_checks * policy.majority * policy.repeat * (policy.rerun_failing + 1)
    q_pass, q_fail, _, ws = _case_probabilities(
        noise, policy, judge_checks, code_checks, min(top * per_case, 4000)
    )
    feasible = []
    for n in range(1, top + 1):
        f = reg.failing(n)
        if f < 1 or f > n:
            continue
        k = list(range(n + 1))
        pmf_h = ws @ stats.binom.pmf([k], n, q_pass[:, None])
        pmf_r = sum(
            w
            * np.convolve(
                stats.binom.pmf(k[: n - f + 1], n - f, qp), stats.binom.pmf(k[: f + 1], f, qf)
            )
            for w, qp, qf in zip(ws, q_pass, q_fail, strict=True)
        )
        lower_h = np.concatenate(([0.0], np.cumsum(pmf_h)))[: n + 1] ** (policy.rerun + 1)
        lower_r = np.concatenate(([0.0], np.cumsum(pmf_r)))[: n + 1] ** (policy.rerun + 1)
        best = max(i for i in k if lower_h[i] <= alpha)
        if lower_r[best] >= power:
            feasible.append(n)
    return feasible


@pytest.mark.parametrize(
    ("noise", "regression", "policy", "alpha", "power", "checks"),
    [
        (JudgeNoise.flip(0.08), "0.10", Policy(), 0.05, 0.95, (2, 1)),
        (JudgeNoise.flip(0.08), "0.10", Policy(rerun=1), 0.05, 0.95, (2, 1)),
        (JudgeNoise.flip(0.08), "0.10", Policy(majority=3), 0.05, 0.95, (2, 1)),
        (JudgeNoise.flip(0.15), "0.20", Policy(rerun=2), 0.01, 0.9, (3, 1)),
        (JudgeNoise.flip(0.05, fpr=0.3), "0.25", Policy(), 0.05, 0.95, (2, 0)),
        (JudgeNoise.flip(0.1, fpr=0.2, unparseable=0.02), "0.15", Policy(), 0.1, 0.8, (1, 0)),
        (JudgeNoise.flip(0.05), "4", Policy(), 0.05, 0.95, (2, 1)),
        (JudgeNoise.flip(0.03), "0.05", Policy(repeat=3, need=2), 0.05, 0.99, (2, 1)),
        (JudgeNoise.flip(0.2), "0.3", Policy(rerun_failing=1), 0.02, 0.95, (1, 1)),
        (JudgeNoise(fnr=0.03, fpr=0.03, icc=0.05), "0.25", Policy(majority=3), 0.05, 0.95, (2, 1)),
        (JudgeNoise(fnr=0.02, fpr=0.02, icc=0.02), "0.3", Policy(), 0.05, 0.9, (1, 1)),
    ],
)
def test_screened_search_equals_brute_force(noise, regression, policy, alpha, power, checks):
    """The screen never hides a feasible size: the plan is the first size that the full
    computation accepts, and every size the full computation accepts passes the screen."""
    from gatecal._analyses.plan._search import _case_probabilities
    from gatecal._analyses.plan.suite import (
        _Bounds,
        _failing_counts,
        _screen,
        _Targets,
    )

    top = 60 if noise.icc else 400
    j, c = checks
    feasible = _brute_force(noise, regression, policy, alpha, power, top, j, c)
    plans = plan_suite(
        noise=noise,
        regression=regression,
        false_alarm=alpha,
        detection=power,
        judge_checks=j,
        code_checks=c,
        policies=[policy],
        max_cases=top,
    )
    got = plans.plans[0]
    assert (got.cases if got else None) == (feasible[0] if feasible else None)
    per_case = j * policy.majority * policy.repeat * (policy.rerun_failing + 1)
    q_pass, q_fail, _, ws = _case_probabilities(noise, policy, j, c, min(top * per_case, 4000))
    ns = np.arange(1, top + 1)
    bounds = _Bounds.of(noise, policy, j, c) if noise.icc else None
    targets = _Targets(alpha=alpha, power=power, attempts=policy.rerun + 1)
    maybe = _screen(
        ns, _failing_counts(parse_regression(regression), ns), q_pass, q_fail, ws, targets, bounds
    )
    assert set(feasible) <= set(ns[maybe].tolist())
    assert maybe.sum() < top  # and it rules sizes out, or it would not save anything


def test_a_one_percent_regression_needs_no_cap():
    # issue 13: 19,551 cases, k_min 16,465, found before only with --max-cases 20000 (70 s)
    plan = _single(0.08, "0.01")
    assert (plan.cases, plan.k_min, plan.failing) == (19551, 16465, 196)
    assert plan.false_alarm <= 0.05 and plan.detection >= 0.95
    # the size below has no feasible gate, computed in full
    q = 0.92**2
    n, f = 19550, 196
    k = np.arange(n + 1)
    below = np.concatenate(([0.0], np.cumsum(stats.binom.pmf(k, n, q))))
    best = int(np.flatnonzero(below[: n + 1] <= 0.05)[-1])
    assert stats.binom.cdf(best - 1, n - f, q) < 0.95


def test_a_count_regression_starts_the_search_at_its_size():
    """A suite smaller than the regression cannot hold it: the search starts there, and
    finds the size that trying every size from 1 finds (brute force up to 60)."""
    noise = JudgeNoise.flip(0.03)
    feasible = _brute_force(noise, "9", Policy(), 0.05, 0.95, 60)
    assert feasible and feasible[0] >= 9
    assert _single(0.03, "9", max_cases=60).cases == feasible[0]


def test_a_count_regression_larger_than_any_suite_answers_at_once():
    """Found by the fuzzer: `plan --regression 1111...1` (40 digits) overflowed int64, and
    `--regression 2000001` screened two million sizes for 103 s before saying none."""
    huge = "1" * 40
    plans = plan_suite(noise=JudgeNoise.flip(0.08), regression=huge, max_cases=60)
    assert plans.plans == (None, None, None) and plans.max_cases == 60
    for count in (huge, "2000001"):  # past the safety stop: as if it had been searched
        plans = plan_suite(noise=JudgeNoise.flip(0.08), regression=count)
        assert plans.plans == (None, None, None) and plans.max_cases == 2_000_000
    code, out, err = run_cli("plan", "--max-cases", "60", "--regression", huge)
    assert (code, err) == (0, "") and "none meets both" in out


def test_an_undetectable_count_regression_stops_with_a_proof():
    """One failing case among thousands cannot be told apart: the search stops by the
    total-variation bound instead of running on, and every size it skipped is infeasible."""
    plans = plan_suite(noise=JudgeNoise.flip(0.08), regression="1", policies=[Policy()])
    assert plans.plans == (None,) and plans.max_cases is None
    assert _brute_force(JudgeNoise.flip(0.08), "1", Policy(), 0.05, 0.95, 60) == []


def test_the_total_variation_bound_holds():
    q, f = 0.92**2, 5
    for n in (20, 50, 200, 1000):
        a = stats.binom.pmf(np.arange(n - f + 1), n - f, q)
        h = stats.binom.pmf(np.arange(n + 1), n, q)
        r = np.concatenate((a, np.zeros(f)))
        gap = np.max(np.cumsum(r) - np.cumsum(h))  # the best gate's detection - false alarm
        assert gap <= f * a.max() + 1e-12


def test_failing_cases_that_pass_more_often_are_never_detected():
    plans = plan_suite(
        noise=JudgeNoise.flip(0.3, fpr=0.95), regression="0.5", code_checks=0, policies=[Policy()]
    )
    assert plans.plans == (None,) and plans.max_cases is None


def test_no_false_alarm_at_all_is_proved_impossible_at_once():
    plans = plan_suite(noise=JudgeNoise.flip(0.08), regression="0.10", false_alarm=0.0)
    assert plans.plans == (None, None, None) and plans.max_cases is None
    assert _brute_force(JudgeNoise.flip(0.08), "0.10", Policy(), 0.0, 0.95, 100) == []


def _detection_bound_by_bisection(ns, f, q, alpha):
    """U at the boundary of each size, as the screen was first written: bisection over the
    whole range 0..n+1, with scipy.stats instead of scipy.special (a second
    implementation); NaN where the size cannot hold the regression."""
    out = []
    for n, fn in zip(ns.tolist(), f.tolist(), strict=True):
        if not 1 <= fn <= n:
            out.append(np.nan)
            continue
        lo, hi = 0, n + 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if stats.binom.cdf(mid - 1, n, q) <= alpha:
                lo = mid
            else:
                hi = mid
        out.append(float(stats.binom.cdf(lo - 1, n - fn, q)))
    return np.array(out)


@pytest.mark.parametrize("shift", [0, -300, 300, "noise"])
@pytest.mark.parametrize("seed", range(8))
def test_the_screen_starting_near_the_boundary_decides_as_a_whole_bisection(
    seed, shift, monkeypatch
):
    """_screen looks first at a normal approximation of each size's boundary (checked
    there) and rules most sizes out from it; it decides as a bisection over the whole
    range, size by size, for small and large suites, skewed rates, tiny budgets, shares
    and counts. The detection target is set at the median of the sizes' bounds, so about
    half are kept and any other boundary would show. A guess moved far off (`shift`)
    must change nothing: the screen checks where it starts."""
    from gatecal._analyses.plan import suite as _plan
    from gatecal._analyses.plan.suite import _failing_counts, _screen, _Targets

    if shift != 0:
        guess = _plan._boundary_guess
        wild = np.random.default_rng(99)

        def moved(sizes, q, alpha):
            off = wild.integers(-40, 40, sizes.size) if shift == "noise" else shift
            return guess(sizes, q, alpha) + off

        monkeypatch.setattr(_plan, "_boundary_guess", moved)
    rng = np.random.default_rng(seed)
    q = float(rng.choice([0.5, 0.85, 0.92**2, 0.99, 0.999, rng.uniform(0.3, 1.0)]))
    alpha = float(rng.choice([0.05, 0.001, 0.3, 1e-9]))
    attempts = int(rng.integers(1, 3))
    start = int(rng.choice([1, 150, 5_000, 200_000]))
    ns = np.arange(start, start + 300, dtype=np.int64)
    f = _failing_counts(parse_regression(str(rng.choice(["0.1", "0.02", "3", "40"]))), ns)
    loose = _Targets(alpha=alpha, power=0.5, attempts=attempts).alpha_loose
    bound = _detection_bound_by_bisection(ns, f, q, loose)
    middle = float(np.nanmedian(bound))
    targets = _Targets(alpha=alpha, power=middle**attempts, attempts=attempts)
    got = _screen(ns, f, np.array([q]), np.array([q * 0.5]), np.ones(1), targets, None)
    want = np.nan_to_num(bound, nan=-1.0) >= targets.power_loose
    assert np.array_equal(got, want)
    if np.nanmax(bound) - np.nanmin(bound) > 1e-3:  # (half of the draws)
        assert got.any() and not got.all()


@pytest.mark.parametrize(
    ("q", "regression", "start", "removed"),
    [
        (0.92**2, "0.0001", 1_000_000, 512),  # (every run: no size up to 2e6 can work)
        (0.92**2, "0.001", 300_000, 512),
        (0.92**2, "0.001", 1_900_000, 0),  # (where 0.1% becomes feasible: kept)
        (0.99, "3", 2_000, 512),
        (0.5, "0.02", 1, 0),
    ],
)
def test_the_shift_bound_removes_only_sizes_the_screen_rules_out(q, regression, start, removed):
    """Runs of sizes ruled out at once by the total-variation bound: each of them is one
    the screen (the exact boundary) rules out as well, and the bound is not vacuous."""
    from gatecal._analyses.plan.suite import (
        _failing_counts,
        _screen,
        _shift_bound_allows,
        _Targets,
    )

    targets = _Targets(alpha=0.05, power=0.95, attempts=1)
    ns = np.arange(start, start + 512, dtype=np.int64)
    f = _failing_counts(parse_regression(regression), ns)
    allowed = _shift_bound_allows(ns, f, q, targets)
    screened = _screen(ns, f, np.array([q]), np.array([0.0]), np.ones(1), targets, None)
    assert not (screened & ~allowed).any()
    assert int((~allowed).sum()) == removed


def test_the_shift_bound_pmf_from_log_gamma_is_accurate():
    """Its largest pmf value, from log-gamma, against scipy.stats's pmf at every count
    within 1e-7 relative (the bound carries a 1e-6 margin)."""
    from gatecal._analyses.plan._search import _largest_pmf

    for m, q in ((0, 0.3), (1, 0.3), (10, 0.3), (1_000, 0.8464), (2_000_000, 0.8464),
                 (1_999_000, 0.999), (5_000, 1e-4)):  # fmt: skip
        want = stats.binom.pmf(np.arange(m + 1), m, q).max()
        got = float(_largest_pmf(np.array([m]), q)[0])
        assert abs(got / want - 1) < 1e-7, (m, q, got, want)


def _case_pass_polynomial(policy):
    """P(a healthy case of 2 judge checks and 1 code check passes) as a polynomial in the
    run's flip rate x, in Fractions (coefficients, lowest power first)."""
    from tests.reference import _poly_mul

    check = [Fraction(1), Fraction(-1)]  # one call: right w.p. 1 - x
    if policy.majority == 3:  # (1 - x)^3 + 3 x (1 - x)^2 = 1 - 3 x^2 + 2 x^3
        check = [Fraction(1), Fraction(0), Fraction(-3), Fraction(2)]
    case = _poly_mul(check, check)
    if policy.rerun_failing:  # 1 - (1 - q)^2 = 2 q - q^2
        padded = [*case, *[Fraction(0)] * (len(case) - 1)]
        case = [2 * c - d for c, d in zip(padded, _poly_mul(case, case), strict=True)]
    return case


@pytest.mark.parametrize(
    ("flip", "icc"),
    [
        (Fraction(1, 50), Fraction(1, 5)),  # issue 22: Beta a = 0.08, off by 9e-7 before
        (Fraction(1, 1000), Fraction(1, 2)),  # a = 0.001
        (Fraction(3, 100), Fraction(1, 1000)),  # a + b = 999
        (Fraction(1, 20), Fraction(1, 10)),
    ],
)
@pytest.mark.parametrize(
    "policy", [Policy(), Policy(majority=3), Policy(rerun=1), Policy(rerun_failing=1)]
)
def test_correlated_plans_are_exact_to_1e_12(flip, icc, policy):
    """Against exact fractions (tests/reference.py, beta_mixed_binomial_lower_tails: the
    pmf expanded in powers of the rate and integrated by the Beta moments). Checked with
    ``pytest tests/analyses/plan/test_plan.py -k exact_to_1e_12``; before, scipy's roots_jacobi rule of
    2,001 nodes printed 0.04989624146 for the exact 0.04989619663 (a = 0.08)."""
    from tests.reference import beta_mixed_binomial_lower_tails

    a, b = flip * (1 - icc) / icc, (1 - flip) * (1 - icc) / icc
    noise = JudgeNoise(fnr=float(flip), fpr=float(flip), icc=float(icc))
    checked = 0
    for false_alarm in (0.05, 0.2):
        plan = plan_suite(
            noise=noise,
            regression="0.25",
            false_alarm=false_alarm,
            detection=0.9,
            policies=[policy],
            max_cases=40,
        ).plans[0]
        if plan is None:
            continue
        n, k, f, attempts = plan.cases, plan.k_min, plan.failing, policy.rerun + 1
        q = _case_pass_polynomial(policy)
        fa = beta_mixed_binomial_lower_tails(n, q, a, b)[k] ** attempts
        det = beta_mixed_binomial_lower_tails(n - f, q, a, b)[k] ** attempts if k <= n - f else 1
        assert plan.false_alarm == pytest.approx(float(fa), rel=1e-12, abs=0)
        assert plan.detection == pytest.approx(float(det), rel=1e-12, abs=0)
        checked += 1
    assert checked  # at least one target is feasible within 40 cases


def test_policies_command_with_a_fresh_rate_per_rerun():
    """Issue 22's example: 0.2594 with the rerun sharing its run's rate, 0.1781 fresh."""
    args = ["policies", "--icc", "0.1", "--policies", "rerun-failing-1", "--gates", "all"]
    shared = run_cli(*args, "--runs", "2000", "--format", "json")
    fresh = run_cli(*args, "--runs", "2000", "--format", "json", "--retry-rate", "fresh")
    rows = [
        next(r for r in json.loads(out)["rows"] if r["build"] == "healthy")
        for code, out, _ in (shared, fresh)
        if code == 0
    ]
    assert [round(r["failure_probability"], 4) for r in rows] == [0.2594, 0.1781]
    assert "a fresh run rate per rerun" in rows[1]["policy"]


def test_plans_refuse_a_fresh_rate_per_rerun_under_icc():
    with pytest.raises(ParameterError, match="must not use a fresh run rate per rerun"):
        plan_suite(
            noise=JudgeNoise(fnr=0.03, fpr=0.03, icc=0.1),
            regression="0.25",
            policies=[Policy(rerun_failing=1, retry_rate="fresh")],
        )
