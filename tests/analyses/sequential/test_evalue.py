"""The anytime-valid e-process gate (evalue-MAX): its e-values against numerical
integration, its true false alarm and detection under the truncated stopping against brute
force over every outcome path in exact fractions, conservative where Ville's inequality
holds (independent runs, icc 0) and not under run correlation, Monte Carlo within its
standard errors, and the policies and check commands."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

import gatecal
from gatecal import (
    JudgeNoise,
    ParameterError,
    Suite,
    design_evalue,
    evalue_gate,
    sequential_gate,
    simulate_sequential,
)
from tests.analyses.sequential.test_sequential import (
    HEALTHY,
    REGRESSED,
    brute_force,
    check_files,  # noqa: F401  (a fixture)
    floats,
    mixture_run_pmf,
    pairs,
)
from tests.analyses.sequential.test_shared_rate import brute_force_shared
from tests.conftest import run_cli
from tests.paths import ROOT
from tests.reference import enumerate_pass_counts


def _mean(pmf: list[Fraction]) -> float:
    return float(sum((k * p for k, p in enumerate(pmf)), Fraction(0)))


def reference_e_value(s: int, f: int, theta0: float, a: float, b: float) -> float:
    """The mixture likelihood ratio by numerical integration (scipy.integrate.quad) over
    the truncated Beta(a, b) prior, independently of gatecal's incomplete-beta closed form."""
    from scipy import integrate

    def prior(t: float) -> float:
        return t ** (a - 1) * (1 - t) ** (b - 1)

    def weighted(t: float) -> float:
        return (t / theta0) ** s * ((1 - t) / (1 - theta0)) ** f * prior(t)

    top = integrate.quad(weighted, 0, theta0, epsabs=0, epsrel=1e-12, limit=200)[0]
    return top / integrate.quad(prior, 0, theta0, epsabs=0, epsrel=1e-12, limit=200)[0]


# -- the e-values and their boundaries ------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_boundaries_are_where_the_e_value_reaches_one_over_alpha(alpha):
    theta0, theta_r = _mean(HEALTHY) / 3, _mean(REGRESSED) / 3
    design = design_evalue(6, 3, theta0, theta_r, false_alarm=alpha)
    assert design.prior_a + design.prior_b == pytest.approx(3)
    assert design.prior_a / 3 == pytest.approx(theta_r)
    fails = 0
    for b in design.boundaries:
        total = 3 * b.look
        e = [reference_e_value(s, total - s, theta0, design.prior_a, design.prior_b)
             for s in range(total + 1)]  # fmt: skip
        assert np.allclose(np.exp(design.log_e_values(b.look)), e, rtol=1e-8)
        assert all(x >= y for x, y in itertools.pairwise(e))  # falls as S grows
        assert all((x >= 1 / alpha) == (s <= b.fail_at_most) for s, x in enumerate(e))
        assert all(abs(x * alpha - 1) > 1e-6 for x in e)  # no boundary rests on a last bit
        fails += b.fail_at_most >= 0
        if b.look < design.looks:
            assert b.pass_at_least == total + 1  # it never passes before the last look
    last = design.boundaries[-1]
    assert last.pass_at_least == last.fail_at_most + 1 and fails >= 3


# -- true false alarm and detection under the truncation, exactly ----------------------------------


@pytest.mark.parametrize("looks", [1, 2, 4])
@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_true_rates_match_brute_force_and_stay_below_the_nominal_alpha(looks, alpha):
    gate = evalue_gate(looks, floats(HEALTHY), floats(REGRESSED), false_alarm=alpha)
    h, r = brute_force(HEALTHY, pairs(gate)), brute_force(REGRESSED, pairs(gate))
    assert gate.false_alarm == pytest.approx(float(h["fail"]), rel=1e-12)
    assert gate.detection == pytest.approx(float(r["fail"]), rel=1e-12)
    assert gate.healthy.expected_runs == pytest.approx(float(h["runs"]), rel=1e-12)
    assert gate.regressed.expected_runs == pytest.approx(float(r["runs"]), rel=1e-12)
    # Ville's inequality at icc 0: the true false alarm is at most the nominal one
    assert h["fail"] <= Fraction(alpha) and r["fail"] > h["fail"]


def test_conservative_for_every_horizon_and_a_poisson_binomial_suite():
    # Cases of unequal pass rates (a Poisson-binomial count, the mean as theta_0): the
    # e-process is still a supermartingale (AM-GM), so at every MAX up to 60 runs the exact
    # false alarm of looking after every run stays at most alpha, and it grows with MAX.
    rates = [Fraction(99, 100), Fraction(9, 10), Fraction(4, 5), Fraction(19, 20),
             Fraction(7, 10), Fraction(1, 1)]  # fmt: skip
    healthy = enumerate_pass_counts(rates)
    regressed = enumerate_pass_counts([Fraction(1, 10), *rates[1:]])
    previous = 0.0
    for looks in (1, 2, 5, 10, 20, 40, 60):
        gate = evalue_gate(looks, floats(healthy), floats(regressed), false_alarm=0.05)
        assert previous <= gate.false_alarm <= 0.05, looks
        previous = gate.false_alarm
    assert previous > 0.005  # the bound is not met by never failing


def test_under_run_correlation_the_exact_dp_gives_what_ville_does_not():
    # icc 1/5 at flip 1/10 (4 cases): each run draws its own rate, the runs' counts are
    # overdispersed, the e-process is no supermartingale, and the rule's true false alarm (the
    # DP, pinned to brute force over the one-run mixture in fractions) exceeds the nominal one.
    a, b = Fraction(2, 5), Fraction(18, 5)
    suite = Suite.uniform(cases=4, judge_checks=1, code_checks=0, failing=1)
    noise = JudgeNoise(fnr=0.1, fpr=0.1, icc=0.2)
    gate = sequential_gate(suite, noise, "evalue", 4, false_alarm=0.05, runs="independent")
    healthy = mixture_run_pmf(4, 0, a, b)
    ref = brute_force(healthy, pairs(gate))
    assert gate.false_alarm == pytest.approx(float(ref["fail"]), rel=1e-10)
    assert ref["fail"] > Fraction(1, 20)
    # runs sharing one rate (the default): pinned to brute force over that mixture, and worse
    shared = sequential_gate(suite, noise, "evalue", 4, false_alarm=0.05)
    assert pairs(shared) == pairs(gate)  # the e-process's boundaries do not depend on the model
    ref_shared = brute_force_shared(4, 0, a, b, pairs(shared))
    assert shared.false_alarm == pytest.approx(float(ref_shared["fail"]), rel=1e-10)
    assert ref_shared["fail"] > ref["fail"]
    # the same rule at icc 0 keeps the nominal level
    plain = sequential_gate(suite, JudgeNoise.flip(0.1), "evalue", 4, false_alarm=0.05)
    assert plain.false_alarm <= 0.05


# -- Monte Carlo, policies and check -----------------------------------------------------------------


def test_simulation_within_standard_errors():
    suite = Suite.uniform(cases=20, judge_checks=2, code_checks=0, failing=2)
    noise = JudgeNoise.flip(0.05)
    gate = sequential_gate(suite, noise, "evalue", 8, false_alarm=0.1)
    runs = 20_000
    for build, out in (("healthy", gate.healthy), ("regressed", gate.regressed)):
        sample = simulate_sequential(suite, build, noise, gate.design, n_sequences=runs, rng=5)
        p = out.failure_probability
        assert abs(sample.failures / runs - p) <= 4.5 * math.sqrt(p * (1 - p) / runs)
        looks = np.arange(1, 9)
        sd = math.sqrt(float(np.dot(out.stop_distribution, (looks - out.expected_runs) ** 2)))
        assert abs(sample.runs / runs - out.expected_runs) <= 4.5 * sd / math.sqrt(runs)


def test_policies_row_shows_the_true_false_alarm_beside_the_nominal(capsys):
    small = ("--cases", 3, "--judge-checks", 1, "--code-checks", 0, "--failing", 1, "--flip", 0.1)
    code, out, err = run_cli("policies", *small, "--policies", "evalue-4", "--runs", 4000, "--false-alarm", 0.2, "--format", "json")  # fmt: skip
    assert code == 0 and err == ""
    rows = json.loads(out)["rows"]
    gate = evalue_gate(4, floats(HEALTHY), floats(REGRESSED), false_alarm=0.2)
    for row, exact in zip(rows, (gate.healthy, gate.regressed), strict=True):
        assert row["gate"] == "evalue-4" and row["false_alarm_target"] == 0.2
        assert row["boundaries"] == [b.to_dict() for b in gate.design.boundaries]
        assert row["failure_probability"] == pytest.approx(exact.failure_probability, rel=1e-12)
        assert row["consistent"]
    assert rows[0]["failure_probability"] <= 0.2
    code, out, _ = run_cli("policies", *small, "--policies", "evalue-4", "--runs", 500, "--false-alarm", 0.2)  # fmt: skip
    assert "nominal false alarm 0.2 (Ville's inequality, for independent runs at icc 0), exact" \
           in out  # fmt: skip


def test_check_with_an_evalue_policy(check_files, capsys):  # noqa: F811
    baseline, run = check_files
    bad = [run(f"bad-{i}", failing=[f"case-{c:02d}" for c in range(2, 6)]) for i in range(3)]
    good = [run(f"ok-{i}", failing=["case-00"]) for i in range(3)]
    code, out, err = run_cli("check", *bad[:1], "--baseline", baseline, "--policy", "evalue-3", "--format", "json")  # fmt: skip
    data = json.loads(out)
    assert err == "" and data["policy"] == "evalue-3"
    first = data["boundaries"][0]
    assert first["pass_at_least"] == 13  # never passes before the last look
    expected = "fail" if first["fail_at_most"] >= 8 else "continue"
    assert data["decision"] == expected and code == {"fail": 1, "continue": 3}[expected]
    e_line = next(r for r in data["reasons"] if r.startswith("e-value after 1 run(s): "))
    # the nominal level is tightened until the exact false alarm over the region is in budget
    nominal = float(e_line.split("nominal false alarm ")[1].split(",")[0])
    assert 0 < nominal <= 0.05 and f"fails once it reaches 1/{nominal:g}" in e_line
    assert data["false_alarm"] <= 0.05 and data["runs"] == "shared"
    code, out, _ = run_cli("check", *good, "--baseline", baseline, "--policy", "evalue-3", "--format", "json")  # fmt: skip
    data = json.loads(out)
    assert data["cumulative"] == [11, 22, 33]
    assert data["decision"] == "pass" and code == 0  # no crossing in 3 runs: it passes
    assert data["false_alarm"] <= 0.05 or not data["meets_targets"]


def test_evalue_refusals():
    with pytest.raises(ParameterError, match="alternative_rate"):
        design_evalue(3, 10, 0.8, 0.9)
    with pytest.raises(ParameterError, match="false_alarm"):
        design_evalue(3, 10, 0.9, 0.8, false_alarm=0.0)
    with pytest.raises(ParameterError, match="fewer cases"):
        evalue_gate(3, floats(REGRESSED), floats(HEALTHY))
    with pytest.raises(ParameterError, match="evalue-N needs a whole number"):
        gatecal.parse_policy("evalue-0")
    assert gatecal.parse_policy("evalue-7").describe().startswith("e-process after each of up")


def test_anytime_report_regenerates():

    from experiments import anytime_evalue
    from tests.regen import assert_same

    committed = ROOT / "reports" / "anytime-evalue.md"
    assert_same(anytime_evalue.render(), committed.read_text(), committed.name)


def test_plan_sizes_an_evalue_gate_exactly():
    # plan's smallest suite for evalue-3 at flip 1/20 and a 20% regression: 8 cases (2
    # failing); its exact rates against brute force, and every smaller size falls short
    from gatecal import parse_regression, plan_suite
    from tests.analyses.sequential.test_targets import _run_pmfs

    flip, reg = Fraction(1, 20), parse_regression("0.2")
    result = plan_suite(noise=JudgeNoise.flip(0.05), regression=reg, false_alarm=0.05,
                        detection=0.8, judge_checks=1, code_checks=0,
                        policies=[gatecal.parse_policy("evalue-3")], max_cases=30)  # fmt: skip
    (plan,) = result.plans
    assert plan is not None and (plan.cases, plan.failing) == (8, 2)
    healthy, regressed = _run_pmfs(8, 2, flip)
    bounds = [(b.pass_at_least, b.fail_at_most) for b in plan.boundaries]
    h, r = brute_force(healthy, bounds), brute_force(regressed, bounds)
    assert plan.false_alarm == pytest.approx(float(h["fail"]), rel=1e-12) and h["fail"] <= 0.05
    assert plan.detection == pytest.approx(float(r["fail"]), rel=1e-12) and r["fail"] >= 0.8
    assert plan.expected_runs == pytest.approx(float(h["runs"]), rel=1e-12)
    for n in range(1, 8):
        if reg.failing(n) >= 1:
            small_h, small_r = _run_pmfs(n, reg.failing(n), flip)
            assert not evalue_gate(3, floats(small_h), floats(small_r)).meets_targets, n
