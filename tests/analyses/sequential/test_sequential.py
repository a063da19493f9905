"""Sequential gates over runs: exact OC and ASN against brute force over every outcome path in
exact fractions, Monte Carlo within its standard errors, Wald's classical results as bounds."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import gatecal
from gatecal import (
    JudgeNoise,
    ParameterError,
    SequentialBoundary,
    Suite,
    design_sequential,
    sequential_gate,
    sequential_outcome,
    simulate_sequential,
    wald_approximation,
    wald_sprt,
)
from tests.conftest import run_cli
from tests.paths import ROOT
from tests.reference import enumerate_pass_counts

DESIGNS = ("sprt", "pocock", "obf")


# -- independent references, exact rationals, no gatecal maths ---------------------------------


def brute_force(pmf: list[Fraction], bounds: list[tuple[int, int]]) -> dict[str, object]:
    """Walk every path (K_1, ..., K_J) of passing counts; each stops at its first crossing.

    `bounds` holds (pass_at_least, fail_at_most) per look. Returns P(fail), P(pass), the
    stop distribution and E[runs], all Fractions.
    """
    looks = len(bounds)
    fail = passed = Fraction(0)
    stops = [Fraction(0)] * looks
    for path in itertools.product(range(len(pmf)), repeat=looks):
        prob = math.prod((pmf[k] for k in path), start=Fraction(1))
        total = 0
        for j, (k, (s, f)) in enumerate(zip(path, bounds, strict=True)):
            total += k
            if total >= s or total <= f:
                stops[j] += prob
                if total <= f:
                    fail += prob
                else:
                    passed += prob
                break
        else:  # pragma: no cover - the last look always stops
            raise AssertionError("a path did not stop")
    return {
        "fail": fail,
        "pass": passed,
        "stops": stops,
        "runs": sum((j * s for j, s in enumerate(stops, start=1)), Fraction(0)),
    }


def rising(x: Fraction, count: int) -> Fraction:
    return math.prod((x + i for i in range(count)), start=Fraction(1))


def beta_moment(a: Fraction, b: Fraction, i: int, j: int) -> Fraction:
    """E[x^i (1 - x)^j] for x ~ Beta(a, b), exactly."""
    return rising(a, i) * rising(b, j) / rising(a + b, i + j)


def mixture_run_pmf(good: int, bad: int, a: Fraction, b: Fraction) -> list[Fraction]:
    """One run's passing count of `good` truly passing and `bad` truly failing cases (one
    judge check each) when the run's flip rate x ~ Beta(a, b): good cases pass w.p. 1 - x,
    bad ones w.p. x; P(K = k) = E[P(K = k | x)] term by term in Beta moments."""
    pmf = [Fraction(0)] * (good + bad + 1)
    for u in range(good + 1):
        for v in range(bad + 1):
            # (1-x)^u x^(good-u) * x^v (1-x)^(bad-v)
            term = math.comb(good, u) * math.comb(bad, v)
            pmf[u + v] += term * beta_moment(a, b, good - u + v, u + bad - v)
    return pmf


def floats(pmf: list[Fraction]) -> np.ndarray:
    return np.array([float(x) for x in pmf])


def close(x: float, y: Fraction, rel: float = 1e-12) -> bool:
    return math.isclose(x, float(y), rel_tol=rel, abs_tol=1e-15)


def pairs(gate: gatecal.SequentialGate) -> list[tuple[int, int]]:
    return [(b.pass_at_least, b.fail_at_most) for b in gate.design.boundaries]


# The small suites of the brute force: 3 cases, flip 1/10; the regressed build fails one case
# truly (it passes only when the judge flips).
FLIP = Fraction(1, 10)
HEALTHY = enumerate_pass_counts([1 - FLIP] * 3)
REGRESSED = enumerate_pass_counts([1 - FLIP, 1 - FLIP, FLIP])


# -- exact against brute force -------------------------------------------------------------------


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("looks", [1, 2, 4])
def test_searched_designs_match_brute_force_over_every_path(design, looks):
    gate = design_sequential(
        design, looks, floats(HEALTHY), floats(REGRESSED), false_alarm=0.05, detection=0.8
    )
    for pmf, outcome in ((HEALTHY, gate.healthy), (REGRESSED, gate.regressed)):
        ref = brute_force(pmf, pairs(gate))
        assert close(outcome.failure_probability, ref["fail"])
        assert close(outcome.pass_probability, ref["pass"])
        assert close(outcome.expected_runs, ref["runs"])
        assert all(
            close(x, y) for x, y in zip(outcome.stop_distribution, ref["stops"], strict=True)
        )
    last = gate.design.boundaries[-1]
    assert last.pass_at_least == last.fail_at_most + 1
    assert gate.false_alarm <= 0.05


def test_hand_boundaries_with_early_stops_on_both_sides_match_brute_force():
    bounds = [(3, -1), (6, 2), (8, 4), (10, 9)]  # look 1 only passes; later both sides
    given = [SequentialBoundary(look=j, pass_at_least=s, fail_at_most=f)
             for j, (s, f) in enumerate(bounds, start=1)]  # fmt: skip
    for pmf in (HEALTHY, REGRESSED):
        out = sequential_outcome(given, floats(pmf))
        ref = brute_force(pmf, bounds)
        assert close(out.failure_probability, ref["fail"])
        assert close(out.expected_runs, ref["runs"])
        assert all(
            close(x, y) for x, y in zip(out.fail_by_look, _fail_by_look(pmf, bounds), strict=True)
        )
        assert 0 < out.stop_distribution[0] < 1 and out.stop_distribution[1] > 0


def _fail_by_look(pmf: list[Fraction], bounds: list[tuple[int, int]]) -> list[Fraction]:
    out = [Fraction(0)] * len(bounds)
    for path in itertools.product(range(len(pmf)), repeat=len(bounds)):
        prob, total = math.prod((pmf[k] for k in path), start=Fraction(1)), 0
        for j, (k, (s, f)) in enumerate(zip(path, bounds, strict=True)):
            total += k
            if total <= f:
                out[j] += prob
            if total >= s or total <= f:
                break
    return out


@pytest.mark.parametrize("design", DESIGNS)
def test_suite_level_gate_under_run_correlation_matches_brute_force(design):
    # icc 1/5 at flip 1/10: Beta(a, b) with a + b = (1 - icc) / icc = 4, a = 2/5, b = 18/5.
    # Every run draws its own x: runs are independent draws of the one-run mixture pmf.
    # (The default, runs sharing one x, is pinned in test_shared_rate.py.)
    a, b = Fraction(2, 5), Fraction(18, 5)
    suite = Suite.uniform(cases=3, judge_checks=1, code_checks=0, failing=1)
    noise = JudgeNoise(fnr=0.1, fpr=0.1, icc=0.2)
    gate = sequential_gate(
        suite, noise, design, 3, false_alarm=0.1, detection=0.6, runs="independent"
    )
    healthy, regressed = mixture_run_pmf(3, 0, a, b), mixture_run_pmf(2, 1, a, b)
    assert sum(healthy) == 1 and sum(regressed) == 1
    for pmf, outcome in ((healthy, gate.healthy), (regressed, gate.regressed)):
        ref = brute_force(pmf, pairs(gate))
        assert close(outcome.failure_probability, ref["fail"], 1e-10)
        assert close(outcome.expected_runs, ref["runs"], 1e-10)
        assert all(
            close(x, y, 1e-10) for x, y in zip(outcome.stop_distribution, ref["stops"], strict=True)
        )
    assert gate.judge_calls_per_run == 3


def test_run_correlation_is_per_run_not_shared_by_the_sequence():
    # The same design under a rate shared by all runs of the sequence gives other numbers:
    # the brute force above pins the per-run model, this shows the two models differ.
    a, b = Fraction(2, 5), Fraction(18, 5)
    bounds = [(3, 0), (5, 4)]
    per_run = brute_force(mixture_run_pmf(3, 0, a, b), bounds)["fail"]
    shared = Fraction(0)  # E_x[ P(fail | x) ], P(fail | x) a polynomial in x
    for path in itertools.product(range(4), repeat=2):
        s1, s2 = path[0], sum(path)
        if s1 >= 3 or (s1 > 0 and s2 > 4):
            continue  # passes
        # P(path | x) = prod C(3, k) (1-x)^k x^(3-k)
        coef = math.comb(3, path[0]) * math.comb(3, path[1])
        shared += coef * beta_moment(a, b, 6 - s2, s2)
    assert abs(float(per_run) - float(shared)) > 1e-3


# -- the search ----------------------------------------------------------------------------------


def test_one_look_is_the_strictest_single_run_gate_within_the_budget():
    suite = Suite.uniform(cases=20, judge_checks=1, code_checks=0, failing=2)
    noise = JudgeNoise.flip(0.05)
    healthy = gatecal.exact_pass_counts(suite, "healthy", noise)
    regressed = gatecal.exact_pass_counts(suite, "regressed", noise)
    table = gatecal.operating_table(healthy, regressed)
    k_min = max(k for k, (fa, _) in enumerate(table) if fa <= 0.05)
    gate = sequential_gate(suite, noise, "sprt", 1, false_alarm=0.05, detection=0.5)
    assert gate.design.boundaries[0].pass_at_least == k_min
    assert gate.false_alarm == pytest.approx(table[k_min][0], rel=1e-12)
    assert gate.detection == pytest.approx(table[k_min][1], rel=1e-12)


@pytest.mark.parametrize("design", DESIGNS)
def test_designs_meet_their_targets_and_stop_early(design):
    suite = Suite.uniform(cases=40, judge_checks=1, code_checks=0, failing=2)
    gate = sequential_gate(suite, JudgeNoise.flip(0.05), design, 6, detection=0.8)
    assert gate.meets_targets
    assert gate.false_alarm <= 0.05 and gate.detection >= 0.8
    for out in (gate.healthy, gate.regressed):
        assert math.fsum(out.stop_distribution) == pytest.approx(1.0, abs=1e-12)
        assert out.failure_probability + out.pass_probability == pytest.approx(1, abs=1e-12)
        assert out.expected_runs < 6  # it stops before the last look on some paths
    assert gate.healthy.stop_distribution[0] > 0


def test_unreachable_detection_says_so_and_keeps_the_budget():
    suite = Suite.uniform(cases=10, judge_checks=1, code_checks=0, failing=1)
    gate = sequential_gate(suite, JudgeNoise.flip(0.2), "obf", 2, detection=0.99)
    assert not gate.meets_targets
    assert gate.false_alarm <= 0.05 and gate.detection < 0.99


def test_wald_thresholds_are_the_likelihood_ratio_lines_of_a_binomial():
    # Binomial runs: the SPRT on S is Wald's exactly; its false alarm and miss keep Wald's
    # bounds alpha' <= alpha/(1-beta), beta' <= beta/(1-alpha) and alpha'+beta' <= alpha+beta
    # when the truncation is far (P(reach the last look) below 1e-9 here).
    n, p0, p1 = 10, Fraction(9, 10), Fraction(7, 10)
    ph = floats([math.comb(n, k) * p0**k * (1 - p0) ** (n - k) for k in range(n + 1)])
    pr = floats([math.comb(n, k) * p1**k * (1 - p1) ** (n - k) for k in range(n + 1)])
    gate = wald_sprt(60, ph, pr, false_alarm=0.05, detection=0.9)
    assert gate.healthy.stop_distribution[-1] < 1e-9
    approx = wald_approximation(
        ph, pr, false_alarm=0.05, detection=0.9, actual=(gate.false_alarm, gate.detection)
    )
    miss = 1 - gate.detection
    assert gate.false_alarm <= approx.false_alarm_bound
    assert miss <= approx.miss_bound
    assert gate.false_alarm + miss <= 0.05 + 0.1
    # Wald's ASN approximation (an approximation: it ignores the overshoot of the lines) is
    # below the exact ASN, within a factor 2 here; the rigorous information bound is below too.
    assert approx.information_bound_healthy <= gate.healthy.expected_runs
    assert approx.information_bound_regressed <= gate.regressed.expected_runs
    assert (
        approx.expected_runs_healthy < gate.healthy.expected_runs < 2 * approx.expected_runs_healthy
    )
    for b in gate.design.boundaries[:-1]:  # fail iff the LLR of S reaches log(0.9/0.05)
        s = np.arange(b.look * n + 1)
        llr = s * math.log(p1 / p0) + (b.look * n - s) * math.log((1 - p1) / (1 - p0))
        assert b.fail_at_most == (s[llr >= math.log(0.9 / 0.05)].max(initial=-1))
        assert b.pass_at_least == s[llr <= math.log(0.1 / 0.95)].min(initial=b.look * n + 1)


@pytest.mark.parametrize("design", DESIGNS)
def test_every_design_respects_the_information_bound(design):
    # E_h[N] KL(h || r) >= kl(P_h(pass) || P_r(pass)): data processing, for any stopping rule.
    suite = Suite.uniform(cases=30, judge_checks=2, code_checks=1, failing=3)
    noise = JudgeNoise(fnr=0.08, fpr=0.08, icc=0.05)
    gate = sequential_gate(suite, noise, design, 5, runs="independent")  # the bound: iid runs
    ph = np.asarray(gatecal.exact_pass_counts(suite, "healthy", noise).pmf)
    pr = np.asarray(gatecal.exact_pass_counts(suite, "regressed", noise).pmf)
    bound = wald_approximation(ph, pr, actual=(gate.false_alarm, gate.detection))
    assert bound.information_bound_healthy <= gate.healthy.expected_runs
    assert bound.information_bound_regressed <= gate.regressed.expected_runs


# -- Monte Carlo ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("design", "noise"),
    [("sprt", JudgeNoise.flip(0.05)), ("pocock", JudgeNoise(fnr=0.05, fpr=0.05, icc=0.1))],
)
def test_simulation_call_by_call_within_standard_errors(design, noise):
    suite = Suite.uniform(cases=25, judge_checks=2, code_checks=0, failing=2)
    gate = sequential_gate(suite, noise, design, 5, detection=0.7)
    runs = 20_000
    for build, out in (("healthy", gate.healthy), ("regressed", gate.regressed)):
        sample = simulate_sequential(suite, build, noise, gate.design, n_sequences=runs, rng=7)
        p = out.failure_probability
        assert abs(sample.failures / runs - p) <= 4.5 * math.sqrt(p * (1 - p) / runs)
        looks = np.arange(1, 6)
        sd = math.sqrt(float(np.dot(out.stop_distribution, (looks - out.expected_runs) ** 2)))
        assert abs(sample.runs / runs - out.expected_runs) <= 4.5 * sd / math.sqrt(runs)
        for count, q in zip(sample.stops, out.stop_distribution, strict=True):
            assert abs(count / runs - q) <= 4.5 * math.sqrt(q * (1 - q) / runs) + 1e-12


def test_simulation_is_seeded():
    suite = Suite.uniform(cases=10, judge_checks=1, code_checks=0, failing=1)
    gate = sequential_gate(suite, JudgeNoise.flip(0.1), "obf", 3, detection=0.5)
    one = simulate_sequential(suite, "healthy", JudgeNoise.flip(0.1), gate.design,
                              n_sequences=500, rng=3)  # fmt: skip
    two = simulate_sequential(suite, "healthy", JudgeNoise.flip(0.1), gate.design,
                              n_sequences=500, rng=3)  # fmt: skip
    assert one == two and sum(one.stops) == 500


# -- bad input ------------------------------------------------------------------------------------


def test_bad_boundaries_and_pmfs_are_refused():
    pmf = floats(HEALTHY)
    with pytest.raises(ParameterError, match="meet at the last look"):
        sequential_outcome([SequentialBoundary(look=1, pass_at_least=3, fail_at_most=1)], pmf)
    with pytest.raises(ParameterError, match="must exceed"):
        sequential_outcome(
            [SequentialBoundary(look=1, pass_at_least=1, fail_at_most=1),
             SequentialBoundary(look=2, pass_at_least=4, fail_at_most=3)], pmf,
        )  # fmt: skip
    with pytest.raises(ParameterError, match="summing to 1"):
        sequential_outcome([SequentialBoundary(look=1, pass_at_least=2, fail_at_most=1)],
                           [0.5, 0.2, 0.1, 0.1])  # fmt: skip
    with pytest.raises(ParameterError, match="fewer cases"):
        design_sequential("sprt", 3, floats(REGRESSED), floats(HEALTHY))
    with pytest.raises(ParameterError, match="design"):
        design_sequential("wald", 3, floats(HEALTHY), floats(REGRESSED))


def test_policy_spellings():
    policy = gatecal.parse_policy("sprt-5")
    assert isinstance(policy, gatecal.SequentialPolicy)
    assert (policy.design, policy.looks) == ("sprt", 5)
    assert gatecal.parse_policy("OBF-3").design == "obf"
    for bad in ("sprt-0", "sprt-x", "pocock-2+rerun-1", "sprt-5-of-6"):
        with pytest.raises(ParameterError):
            gatecal.parse_policy(bad)


# -- as policies ----------------------------------------------------------------------------------


def test_compare_policies_rows_carry_the_sequential_contract(capsys):
    import json

    from gatecal.cli import main

    suite = Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=1)
    noise = JudgeNoise.flip(0.08)
    code = main(["policies", "--cases", "12", "--judge-checks", "2", "--code-checks", "1",
                 "--failing", "1", "--flip", "0.08", "--gates", "all,0.80",
                 "--policies", "single,sprt-4,pocock-3", "--runs", "3000",
                 "--format", "json"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    rows = data["rows"]
    assert [r["gate"] for r in rows] == ["all", "0.80", "all", "0.80", *["sprt-4"] * 2,
                                         *["pocock-3"] * 2]  # fmt: skip
    for design, looks in (("sprt", 4), ("pocock", 3)):
        gate = sequential_gate(suite, noise, design, looks)
        for build, out in (("healthy", gate.healthy), ("regressed", gate.regressed)):
            (row,) = [r for r in rows if r["gate"] == f"{design}-{looks}" and r["build"] == build]
            assert row["boundaries"] == [b.to_dict() for b in gate.design.boundaries]
            last = row["boundaries"][-1]
            assert last["pass_at_least"] == last["fail_at_most"] + 1
            assert row["failure_probability"] == out.failure_probability
            assert row["expected_runs"] == out.expected_runs
            assert row["stop_distribution"] == list(out.stop_distribution)
            assert row["judge_calls"] == pytest.approx(out.expected_runs * 24, rel=1e-12)
            assert row["consistent"] and row["runs"] == 3000
    # the other policies' rows are what they are without a sequential policy beside them
    alone = gatecal.compare_policies(suite, noise, "all,0.80", [gatecal.Policy()], n_runs=3000)
    assert rows[:4] == json.loads(gatecal.render_policies(alone, "json"))["rows"]
    assert "boundaries" not in rows[0]


def test_sequential_policies_render_as_table_and_csv():
    suite = Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=1)
    report = gatecal.compare_policies(
        suite, JudgeNoise.flip(0.08), "0.80",
        [gatecal.Policy(), gatecal.parse_policy("obf-3")], n_runs=500,
    )  # fmt: skip
    table = gatecal.render_policies(report, "table")
    gate = sequential_gate(suite, JudgeNoise.flip(0.08), "obf", 3)
    b = gate.design.boundaries[0]
    assert f"obf-3: after run j, S_j = passing cases over the runs so far; 1: fail <= " \
           f"{b.fail_at_most}, pass >= {b.pass_at_least}" in table  # fmt: skip
    assert f"healthy {gate.healthy.expected_runs:.3f}" in table
    lines = gatecal.render_policies(report, "csv").splitlines()
    assert lines[0].endswith("boundaries,expected_runs,stop_distribution,"
                             "simulated_expected_runs,false_alarm_target,detection_target,"
                             "meets_targets,run_model")  # fmt: skip
    assert len(lines) == 5 and lines[1].endswith(",,,,,,,")


def test_single_run_rates_refuse_a_sequential_policy():
    with pytest.raises(ParameterError, match="sequential gate"):
        gatecal.policy_rates(Suite.uniform(), JudgeNoise.flip(0.1), "all",
                             gatecal.parse_policy("sprt-3"))  # fmt: skip


# -- pass^k and pass@k ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "need"), [("pass^3", 3), ("pass@3", 1), ("pass^1", 1)])
def test_pass_k_spellings_are_exact_repeat_policies(text, need):
    from tests.reference import binomial_lower_tail

    k = int(text[5:])
    policy = gatecal.parse_policy(text)
    assert (policy.repeat, policy.need) == (k, need)
    assert policy == gatecal.parse_policy(f"repeat-{need}-of-{k}")
    # 6 cases of one judge check, flip 1/10: a case passes a repeat w.p. 9/10, so
    # pass^k: (9/10)^k; pass@k: 1 - (1/10)^k; its suite count is binomial
    suite = Suite.uniform(cases=6, judge_checks=1, code_checks=0, failing=1)
    rates = gatecal.policy_rates(suite, JudgeNoise.flip(0.1), "all,fails<=1", policy)
    flip = Fraction(1, 10)
    q = (1 - flip) ** k if need == k else 1 - flip**k
    for gate, k_min in (("all", 6), ("fails<=1", 5)):
        row = rates.row("healthy", gate)
        assert row.failure_probability == pytest.approx(
            float(binomial_lower_tail(6, k_min, q)), rel=1e-12
        )
        assert row.judge_calls == 6 * k


# -- check --policy sprt-MAX ------------------------------------------------------------------------

CHECK_CASES = [f"case-{i:02d}" for i in range(12)]


def _write_runs(path, runs):
    import json

    rows = [
        json.dumps({"run": run, "case": case, "passed": what == "pass", "status": "ok"})
        for run, outcomes in runs.items()
        for case, what in outcomes.items()
    ]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def shared_rate_by_quadrature(bounds, pmf_at, a: float, b: float) -> float:
    """E over x ~ Beta(a, b) of P(fail | every run's pmf is pmf_at(x)): the runs of the build
    share x. scipy's adaptive quadrature, split at the Beta's quartiles."""
    from scipy import integrate, stats

    def integrand(x: float) -> float:
        fail = sequential_outcome(bounds, pmf_at(x)).failure_probability
        return fail * stats.beta.pdf(x, a, b)

    cuts = [0.0, *stats.beta.ppf([0.25, 0.5, 0.75], a, b), 1.0]
    return sum(
        integrate.quad(integrand, lo, hi, epsabs=1e-13, epsrel=1e-10, limit=200)[0]
        for lo, hi in itertools.pairwise(cuts)
    )


@pytest.fixture
def check_files(tmp_path):
    """Known-good runs (case-00 fails every 3rd run, case-01 every 5th) and CI runs."""
    flaky = {"case-00": 3, "case-01": 5}
    base = {f"night-{r:02d}": {c: "fail" if c in flaky and r % flaky[c] == 0 else "pass"
                               for c in CHECK_CASES} for r in range(30)}  # fmt: skip
    ok = dict.fromkeys(CHECK_CASES, "pass")

    def run(name, failing=(), missing=()):
        outcome = {c: "fail" if c in failing else w for c, w in ok.items() if c not in missing}
        return _write_runs(tmp_path / f"{name}.jsonl", {name: outcome})

    return _write_runs(tmp_path / "baseline.jsonl", base), run


def test_check_sequential_continues_then_decides(check_files, capsys, tmp_path):
    import json

    baseline, run = check_files
    flaky = [run(f"ci-{i}", failing=["case-00"]) for i in range(1, 5)]
    decisions = []
    for given in range(1, 5):
        code, out, err = run_cli("check", *flaky[:given], "--baseline", baseline, "--policy", "pocock-4", "--format", "json", "--runs-independent")  # fmt: skip
        data = json.loads(out)
        assert err == "" and code == data["exit_code"] and data["runs"] == "independent"
        assert data["cumulative"] == [11 * (j + 1) for j in range(given)]
        expected = "continue"  # the first look whose boundary the running sum crosses
        for b, s in zip(data["boundaries"], data["cumulative"], strict=False):
            if s >= b["pass_at_least"] or s <= b["fail_at_most"]:
                expected = "pass" if s >= b["pass_at_least"] else "fail"
                break
        assert data["decision"] == expected
        assert code == {"pass": 0, "fail": 1, "continue": 3}[expected]
        assert data["exit_codes"]["3"].startswith("continue")
        decisions.append(expected)
    # one flaky failure per run: the gate asks for more runs first, then passes the build
    assert decisions[0] == "continue" and decisions[-1] == "pass"
    summary = tmp_path / "summary.md"
    code, out, _ = run_cli("check", flaky[0], "--baseline", baseline, "--policy", "pocock-4", "--summary", summary, "--runs-independent")  # fmt: skip
    assert code == 3 and out.startswith("gatecal check: CONTINUE (exit 3)")
    assert summary.read_text().startswith("### gatecal check: CONTINUE")
    assert "| 1 | 11 |" in summary.read_text()


def test_check_sequential_fails_a_regressed_build_and_quotes_the_region(check_files):
    from scipy import stats

    from gatecal._analyses.check import gate as _check
    from gatecal._analyses.noise.bounds import noise_bounds

    baseline, run = check_files
    base = gatecal.read_runs([baseline])
    bad = gatecal.read_runs(
        [run(f"ci-{j}", failing=[f"case-{i:02d}" for i in range(4, 9)]) for j in range(3)]
    )
    res = gatecal.check_sequential(bad, base, policy="obf-3", regression=2, detection=0.6)
    assert res.decision == "fail" and res.exit_code == 1
    assert res.cumulative == (7, 14, 21)
    assert res.gate.design.boundaries[res.look - 1].fail_at_most >= 7 * res.look
    # the false alarm quoted: the largest over recommend's region; the runs of the build share
    # one rate (the default), so at each point P(fail | rate) integrated over the Beta rate by
    # scipy's adaptive quadrature here (not gatecal's Gauss rule nor its hypergeometric route)
    rec = gatecal.recommend_gate(base, detection=0.0)
    failures, observed = _check._baseline_counts(base, rec)
    bounds = noise_bounds(failures, observed)
    bnds = res.gate.design.boundaries
    worst = 0.0
    f = np.arange(13)
    for icc, hi in zip(bounds.iccs, bounds.highs, strict=True):
        if icc > 0 and 0 < hi < 1:
            a, b = hi * (1 - icc) / icc, (1 - hi) * (1 - icc) / icc
            fa = shared_rate_by_quadrature(bnds, lambda x: stats.binom.pmf(f, 12, x)[::-1], a, b)
        else:
            fa = sequential_outcome(bnds, stats.binom.pmf(f, 12, hi)[::-1]).failure_probability
        worst = max(worst, fa)
    assert res.false_alarm == pytest.approx(worst, rel=1e-7)
    assert res.false_alarm <= 0.05 and res.runs == "shared"
    # the detection quoted: the smallest over the region (its low and its high edge), the
    # regressed build passing Bin(10, 1 - x) of its 12 cases given the shared rate x
    lowest = 1.0
    f = np.arange(11)
    for icc, rates in zip(bounds.iccs, zip(bounds.lows, bounds.highs, strict=True), strict=True):
        for rate in rates:
            if icc > 0 and 0 < rate < 1:
                a, b = rate * (1 - icc) / icc, (1 - rate) * (1 - icc) / icc
                det = shared_rate_by_quadrature(
                    bnds, lambda x: np.append(stats.binom.pmf(f, 10, x)[::-1], [0, 0]), a, b
                )
            else:
                pmf = np.append(stats.binom.pmf(f, 10, rate)[::-1], [0, 0])
                det = sequential_outcome(bnds, pmf).failure_probability
            lowest = min(lowest, det)
    assert res.detection == pytest.approx(lowest, rel=1e-7) and res.detection < res.gate.detection
    assert res.gate.meets_targets == (res.detection >= 0.6)
    share = gatecal.check_sequential(bad, base, policy="obf-3", regression="20%", detection=0.6)
    assert share.regressed_cases == 2 and share.gate == res.gate  # 20% of 12 is 2.4: 2 cases


def test_check_sequential_incomplete_and_refusals(check_files, capsys):
    baseline, run = check_files
    partial = run("ci-1", missing=["case-03"])
    code, out, _ = run_cli("check", partial, "--baseline", baseline, "--policy", "sprt-3")
    assert code == 1 and "INCOMPLETE" in out and "case-03" in out
    ok = run("ci-2")
    for args, message in (
        (["--policy", "sprt-0"], "--policy sprt-N needs a whole number of runs"),
        (["--policy", "sprt-3", "--gate", "all"], "--gate can't be combined with a sequential"),
        (["--policy", "sprt-3", "--regression", "0"], "--regression must be at least 1 case"),
        (["--policy", "sprt-3", "--regression", "13"], "--regression must be an integer"),
        (["--detection", "0.9"], "--detection needs a sequential --policy"),
    ):
        code, out, err = run_cli("check", ok, "--baseline", baseline, *args)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith(f"gatecal: error: {message}"), err
    with pytest.raises(ParameterError, match="sequential gate"):
        gatecal.check_gate(gatecal.read_runs([ok]), gatecal.read_runs([baseline]),
                           policy="sprt-3")  # fmt: skip


# -- confirm-on-fail ----------------------------------------------------------------------------------


def _confirm_pass(p: Fraction, m: int) -> Fraction:
    """P(a check passes): the call says pass, or it says fail and more than half of the m
    re-asks say pass (a tie fails); independent calls."""
    win = sum(
        (math.comb(m, v) * p**v * (1 - p) ** (m - v) for v in range(m + 1) if 2 * v > m),
        Fraction(0),
    )
    return p + (1 - p) * win


@pytest.mark.parametrize("m", [1, 2, 3])
def test_confirm_on_fail_is_exact(m):
    # 4 cases, one judge check, flip 1/10; in the regressed build case 0's check truly fails
    # (the judge passes it w.p. 1/10). Suite pmf by brute force over all 2^4 patterns.
    flip = Fraction(1, 10)
    healthy = [_confirm_pass(1 - flip, m)] * 4
    regressed = [_confirm_pass(flip, m), *healthy[1:]]
    suite = Suite.uniform(cases=4, judge_checks=1, code_checks=0, failing=1)
    rates = gatecal.policy_rates(
        suite, JudgeNoise.flip(0.1), "all,fails<=1", gatecal.parse_policy(f"confirm-{m}")
    )
    for build, q in (("healthy", healthy), ("regressed", regressed)):
        pmf = enumerate_pass_counts(q)
        for gate, k_min in (("all", 4), ("fails<=1", 3)):
            row = rates.row(build, gate)
            assert close(row.failure_probability, sum(pmf[:k_min], Fraction(0)))
        # every check is asked once, and m more times when its first call says fail
        first_fail = [flip] * 4 if build == "healthy" else [1 - flip, flip, flip, flip]
        assert close(row.judge_calls, sum((1 + m * f for f in first_fail), Fraction(0)))


@pytest.mark.parametrize(
    ("policy", "noise"),
    [
        ("confirm-2", JudgeNoise.flip(0.1)),
        ("confirm-3+rerun-failing-1", JudgeNoise(fnr=0.1, fpr=0.1, icc=0.1)),
        ("confirm-2+pass^2+rerun-1", JudgeNoise.flip(0.15)),
    ],
)
def test_confirm_on_fail_agrees_with_call_by_call_simulation(policy, noise):
    suite = Suite.uniform(cases=8, judge_checks=2, code_checks=1, failing=2)
    report = gatecal.compare_policies(
        suite, noise, "all,fails<=1", [gatecal.parse_policy(policy)], n_runs=20_000, rng=11
    )
    for row in report.rows:
        assert row.consistent, row
    # judge calls per CI run within 4.5 standard errors; the calls of one run lie in
    # [0, 8 cases x 2 checks x (1 + m) x repeats x tries x attempts], so their sd is at most
    # half that range (Popoviciu's inequality)
    parsed = gatecal.parse_policy(policy)
    top = (
        16 * (1 + parsed.confirm) * parsed.repeat * (parsed.rerun_failing + 1) * (parsed.rerun + 1)
    )
    for row in report.rows:
        assert abs(row.simulated_judge_calls - row.judge_calls) <= 4.5 * top / 2 / math.sqrt(20_000)
    assert gatecal.parse_policy(policy).describe().count("re-asked") == 1


def test_confirm_on_fail_refusals():
    with pytest.raises(ParameterError, match="one judge call per check"):
        gatecal.parse_policy("confirm-2+majority-3")
    with pytest.raises(ParameterError, match="one judge call per check"):
        gatecal.parse_policy("confirm-2", call_icc=0.2)
    with pytest.raises(ParameterError, match="check combines whole runs"):
        gatecal.parse_check_policy("confirm-2")
    with pytest.raises(ParameterError, match="confirm-M"):
        gatecal.plan_suite(noise=JudgeNoise.flip(0.08), regression="10%",
                           policies=[gatecal.parse_policy("confirm-2")])  # fmt: skip


def test_savings_report_regenerates():

    from experiments import sequential_savings
    from tests.regen import assert_same

    committed = ROOT / "reports" / "sequential-savings.md"
    assert_same(sequential_savings.render(), committed.read_text(), committed.name)
