"""Sequential gates searched for the targets a command is given (policies --false-alarm and
--detection), and sized by plan: exact figures against brute force over every outcome path
in exact fractions."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from gatecal import JudgeNoise, Suite, sequential_gate
from tests.analyses.sequential.test_sequential import HEALTHY, REGRESSED, brute_force
from tests.conftest import run_cli

# the brute force's suite: 3 cases of one judge check, flip 1/10, one case truly failing
SMALL = ("--cases", 3, "--judge-checks", 1, "--code-checks", 0, "--failing", 1, "--flip", 0.1)


@pytest.mark.parametrize("design", ["sprt", "pocock", "obf"])
@pytest.mark.parametrize(("false_alarm", "detection"), [(0.01, 0.3), (0.1, 0.7)])
def test_policies_search_the_boundaries_for_the_targets_given(
    capsys, design, false_alarm, detection
):
    code, out, err = run_cli("policies", *SMALL, "--policies", f"{design}-3", "--runs", 500, "--false-alarm", false_alarm, "--detection", detection, "--format", "json")  # fmt: skip
    assert code == 0 and err == "", err
    rows = json.loads(out)["rows"]
    bounds = [(b["pass_at_least"], b["fail_at_most"]) for b in rows[0]["boundaries"]]
    default = sequential_gate(
        Suite.uniform(cases=3, judge_checks=1, code_checks=0, failing=1), JudgeNoise.flip(0.1),
        design, 3,
    )  # fmt: skip
    assert bounds != [(b.pass_at_least, b.fail_at_most) for b in default.design.boundaries]
    healthy, regressed = brute_force(HEALTHY, bounds), brute_force(REGRESSED, bounds)
    for row in rows:
        assert row["false_alarm_target"] == false_alarm and row["detection_target"] == detection
        assert row["meets_targets"]
    (h,) = [r for r in rows if r["build"] == "healthy"]
    (r,) = [r for r in rows if r["build"] == "regressed"]
    assert h["failure_probability"] == pytest.approx(float(healthy["fail"]), rel=1e-12)
    assert r["failure_probability"] == pytest.approx(float(regressed["fail"]), rel=1e-12)
    assert h["expected_runs"] == pytest.approx(float(healthy["runs"]), rel=1e-12)
    assert healthy["fail"] <= Fraction(false_alarm) and regressed["fail"] >= Fraction(detection)
    # the last look's cut is the largest in budget: one more passing case needed is too many
    last_pass, last_fail = bounds[-1]
    if last_pass <= 9:
        wider = [*bounds[:-1], (last_pass + 1, last_fail + 1)]
        assert brute_force(HEALTHY, wider)["fail"] > Fraction(false_alarm)


def test_policies_targets_need_a_sequential_policy(capsys):
    for option in ("--false-alarm", "--detection"):
        code, out, err = run_cli("policies", "--policies", "single,majority-3", option, 0.2)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err == (
            f"gatecal: error: {option} needs a sequential policy in --policies (sprt-MAX, "
            "pocock-LOOKS, obf-LOOKS or evalue-MAX) (got 0.2)\n"
        )
    code, _, err = run_cli("policies", "--policies", "sprt-3", "--false-alarm", 1.5)
    assert code == 2 and err.startswith("gatecal: error: --false-alarm") and "1.5" in err


# -- plan with a sequential gate ----------------------------------------------------------------


def _np_power(healthy: list[Fraction], regressed: list[Fraction], looks: int, alpha: Fraction):
    """The most powerful test of the healthy against the regressed build on `looks` runs
    (Neyman-Pearson, randomised at the boundary), over every path, in exact fractions."""
    import itertools
    import math

    paths = []
    for path in itertools.product(range(len(healthy)), repeat=looks):
        h = math.prod((healthy[k] for k in path), start=Fraction(1))
        r = math.prod((regressed[k] for k in path), start=Fraction(1))
        paths.append((h, r))
    power, budget = Fraction(0), alpha
    for h, r in sorted(paths, key=lambda p: (p[0] > 0, p[1] / p[0] if p[0] else 0), reverse=True):
        if h == 0:
            power += r
            continue
        if budget <= 0:
            break
        take = min(Fraction(1), budget / h)
        power, budget = power + take * r, budget - take * h
    return power


def _run_pmfs(n: int, failing: int, flip: Fraction) -> tuple[list[Fraction], list[Fraction]]:
    """One run of n cases of one judge check; `failing` of them truly fail (the judge
    passes them at rate `flip`): brute force over every pass/fail pattern."""
    from tests.reference import enumerate_pass_counts

    healthy = enumerate_pass_counts([1 - flip] * n)
    return healthy, enumerate_pass_counts([1 - flip] * (n - failing) + [flip] * failing)


@pytest.mark.parametrize(
    ("flip", "regression", "policy", "false_alarm", "detection", "cases"),
    [
        (Fraction(1, 20), "0.2", "sprt-2", 0.02, 0.9, 9),
        (Fraction(1, 20), "0.2", "pocock-3", 0.02, 0.9, 4),
        (Fraction(1, 10), "0.2", "obf-3", 0.05, 0.8, 3),
        (Fraction(1, 10), "0.25", "sprt-3", 0.02, 0.9, 10),
    ],
)
def test_plan_sizes_a_sequential_gate_exactly(
    flip, regression, policy, false_alarm, detection, cases
):
    import numpy as np

    from gatecal import design_sequential, parse_policy, parse_regression, plan_suite
    from tests.analyses.sequential.test_sequential import floats

    chosen = parse_policy(policy)
    result = plan_suite(
        noise=JudgeNoise.flip(float(flip)), regression=regression, false_alarm=false_alarm,
        detection=detection, judge_checks=1, code_checks=0, policies=[chosen], max_cases=30,
    )  # fmt: skip
    (plan,) = result.plans
    assert plan is not None and plan.cases == cases
    reg = parse_regression(regression)
    healthy, regressed = _run_pmfs(cases, reg.failing(cases), flip)
    bounds = [(b.pass_at_least, b.fail_at_most) for b in plan.boundaries]
    h, r = brute_force(healthy, bounds), brute_force(regressed, bounds)
    assert plan.false_alarm == pytest.approx(float(h["fail"]), rel=1e-12)
    assert plan.detection == pytest.approx(float(r["fail"]), rel=1e-12)
    assert h["fail"] <= Fraction(false_alarm) and r["fail"] >= Fraction(detection)
    assert plan.expected_runs == pytest.approx(float(h["runs"]), rel=1e-12)
    assert plan.expected_runs_regressed == pytest.approx(float(r["runs"]), rel=1e-12)
    assert np.allclose(plan.stop_distribution, [float(s) for s in h["stops"]], rtol=1e-12)
    assert plan.judge_calls == pytest.approx(float(h["runs"]) * cases, rel=1e-12)  # 1 call a case
    assert plan.judge_calls_regressed == pytest.approx(float(r["runs"]) * cases, rel=1e-12)
    assert plan.k_min == bounds[-1][0] and plan.failing == reg.failing(cases)
    # the design is the one policies and check search at that size
    gate = design_sequential(chosen.design, chosen.looks, floats(healthy), floats(regressed),
                             false_alarm=false_alarm, detection=detection)  # fmt: skip
    assert [(b.pass_at_least, b.fail_at_most) for b in gate.design.boundaries] == bounds
    # and no smaller suite holding the regression meets both targets with its search
    for n in range(1, cases):
        f = reg.failing(n)
        if f < 1:
            continue
        small_h, small_r = _run_pmfs(n, f, flip)
        found = design_sequential(chosen.design, chosen.looks, floats(small_h), floats(small_r),
                                  false_alarm=false_alarm, detection=detection)  # fmt: skip
        assert not found.meets_targets, n


def test_the_plans_screen_never_rules_out_a_size_the_best_test_could_meet():
    # The screen (Chernoff affinities of one run, multiplied over the looks) claims that no
    # test on the runs meets both targets; the most powerful test over every path says
    # whether one does. Over small suites and targets it must never be wrong, and it must
    # rule some sizes out (or it screens nothing).
    from gatecal._analyses.plan.sequential import affinity_allows
    from tests.analyses.sequential.test_sequential import floats

    ruled_out = 0
    for n in range(1, 6):
        for looks in (1, 2, 3):
            healthy, regressed = _run_pmfs(n, 1, Fraction(1, 10))
            for alpha, power in ((Fraction(1, 20), Fraction(4, 5)), (Fraction(1, 50), Fraction(9, 10)),
                                 (Fraction(1, 10), Fraction(1, 2))):  # fmt: skip
                allows = affinity_allows(floats(healthy), floats(regressed), looks,
                                         float(alpha), float(power))  # fmt: skip
                if not allows:
                    ruled_out += 1
                    assert _np_power(healthy, regressed, looks, alpha) < power, (n, looks)
    assert ruled_out >= 10


def test_plan_command_with_a_sequential_policy(capsys):
    args = ("plan", "--flip", 0.05, "--regression", 0.2, "--false-alarm", 0.02, "--detection", 0.9,
            "--judge-checks", 1, "--code-checks", 0, "--max-cases", 30)  # fmt: skip
    code, out, err = run_cli(*args, "--policies", "single,pocock-3", "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(out)
    single, pocock = data["alternatives"]
    assert single["cases"] == 18 and "boundaries" not in single
    assert pocock["cases"] == 4 and pocock["gate"] == "pocock-3" and pocock["looks"] == 3
    assert pocock["policy"].endswith("(false alarm <= 0.02, detection >= 0.9)")
    assert set(pocock["expected_runs"]) == {"healthy", "regressed"}
    assert pocock["judge_calls"] == pytest.approx(4 * pocock["expected_runs"]["healthy"])
    last = pocock["boundaries"][-1]
    assert last["pass_at_least"] == last["fail_at_most"] + 1 == pocock["k_min"]
    code, out, _ = run_cli(*args, "--policies", "single,pocock-3")
    assert code == 0 and "pocock-3 at 4 cases: after run j" in out
    assert "expected runs: healthy " in out
    code, out, _ = run_cli(*args, "--policies", "single,pocock-3", "--format", "csv")
    head, first, second = out.splitlines()
    assert head.endswith(",gate,looks,boundaries,expected_runs,judge_calls_regressed,"
                         "stop_distribution,judge_calls_per_run")  # fmt: skip
    assert first.endswith(",,,,,,,") and '"[{""look"": 1' in second


def test_plan_with_a_sequential_policy_refuses_what_it_cannot_search(capsys):
    code, out, err = run_cli("plan", "--policies", "sprt-3", "--max-cases", 6000)
    assert code == 2 and out == ""
    assert err == (
        "gatecal: error: --max-cases must be at most 5,000 with a sequential policy (every "
        "size tried is a boundary search) (got 6000)\n"
    )
    code, out, err = run_cli("plan", "--policies", "sprt-3", "--judge-checks", 0)
    assert code == 2 and out == "" and err.startswith("gatecal: error: --judge-checks must be")


def test_plan_says_how_far_a_sequential_search_went(capsys):
    # no sequential gate of 2 looks meets 0.01 / 0.99 at a 5% regression within 20 cases
    code, out, _ = run_cli("plan", "--policies", "single,sprt-2", "--max-cases", 20, "--regression", "5%", "--false-alarm", 0.01, "--detection", 0.99)  # fmt: skip
    assert code == 0
    rows = [line for line in out.splitlines() if line.startswith(("one judge", "SPRT"))]
    assert len(rows) == 2 and all("> 20" in row and "none meets both" in row for row in rows)
