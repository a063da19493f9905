"""Sequential gates searched for the targets a command is given (policies --false-alarm and
--detection), and sized by plan: exact figures against brute force over every outcome path
in exact fractions."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from gatecal import JudgeNoise, Suite, sequential_gate
from tests.test_sequential import HEALTHY, REGRESSED, brute_force


def _cli(capsys, *args):
    from gatecal.cli import main

    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# the brute force's suite: 3 cases of one judge check, flip 1/10, one case truly failing
SMALL = ("--cases", 3, "--judge-checks", 1, "--code-checks", 0, "--failing", 1, "--flip", 0.1)


@pytest.mark.parametrize("design", ["sprt", "pocock", "obf"])
@pytest.mark.parametrize(("false_alarm", "detection"), [(0.01, 0.3), (0.1, 0.7)])
def test_policies_search_the_boundaries_for_the_targets_given(
    capsys, design, false_alarm, detection
):
    code, out, err = _cli(capsys, "policies", *SMALL, "--policies", f"{design}-3", "--runs", 500,
                          "--false-alarm", false_alarm, "--detection", detection,
                          "--format", "json")  # fmt: skip
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
        code, out, err = _cli(capsys, "policies", "--policies", "single,majority-3", option, 0.2)
        assert code == 2 and out == "" and err.count("\n") == 1
        assert err == (
            f"gatecal: error: {option} needs a sequential policy in --policies (sprt-MAX, "
            "pocock-LOOKS, obf-LOOKS) (got 0.2)\n"
        )
    code, _, err = _cli(capsys, "policies", "--policies", "sprt-3", "--false-alarm", 1.5)
    assert code == 2 and err.startswith("gatecal: error: --false-alarm") and "1.5" in err
