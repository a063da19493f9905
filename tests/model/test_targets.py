"""Targets: the false-alarm budget and the detection target as one small result, held by
every result that was searched or rated against them, with the JSON each always wrote: the
``"targets"`` object where a document nests them, the two flat keys in their old place
where it did not."""

from __future__ import annotations

import csv
import dataclasses
import json
import math

import numpy as np
import pytest

import gatecal
from gatecal import Targets
from gatecal._model.targets import with_flat_targets

CASES = [f"case-{i:02d}" for i in range(16)]
#: targets other than every default (0.05 / 0.8 / 0.95), so a default read instead shows
BUDGET, POWER = 0.1, 0.7
TARGETS = {"false_alarm": BUDGET, "detection": POWER}
FLAT = ["false_alarm_target", "detection_target"]


def test_its_json_is_the_targets_object_and_its_flat_form_the_two_old_keys():
    targets = Targets(false_alarm=BUDGET, detection=POWER)
    assert list(targets.to_dict().items()) == [("false_alarm", BUDGET), ("detection", POWER)]
    assert list(targets.flat().items()) == [(FLAT[0], BUDGET), (FLAT[1], POWER)]
    assert repr(targets) == "Targets(false_alarm=0.1, detection=0.7)"


def test_it_is_frozen_and_keyword_only():
    targets = Targets(false_alarm=BUDGET, detection=POWER)
    with pytest.raises(dataclasses.FrozenInstanceError):
        targets.false_alarm = 0.2
    with pytest.raises(TypeError):
        Targets(BUDGET, POWER)


def test_the_flat_keys_take_the_place_of_the_object():
    fields = {"cases": 3, "targets": {"false_alarm": 1.0, "detection": 1.0}, "runs": 2}
    out = with_flat_targets(fields, Targets(false_alarm=BUDGET, detection=POWER))
    assert list(out.items()) == [("cases", 3), (FLAT[0], BUDGET), (FLAT[1], POWER), ("runs", 2)]
    assert with_flat_targets({"cases": 3}, Targets(false_alarm=0.0, detection=1.0)) == {"cases": 3}


# -- every result that holds them ------------------------------------------------------------


def _write(path, rate, runs, seed, prefix):
    rng = np.random.default_rng(seed)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "case", "passed"])
        for r in range(runs):
            for case in CASES:
                writer.writerow([f"{prefix}{r}", case, "pass" if rng.random() >= rate else "fail"])
    return gatecal.read_runs([path])


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Each result type that holds the targets, computed small at BUDGET and POWER."""
    tmp = tmp_path_factory.mktemp("targets")
    base = _write(tmp / "baseline.csv", 0.05, 30, 1, "r")
    currents = _write(tmp / "currents.csv", 0.05, 3, 3, "s")
    suite = gatecal.Suite.uniform(cases=6)
    sequential = dataclasses.replace(
        gatecal.parse_policy("obf-3"), false_alarm=BUDGET, detection=POWER
    )
    report = gatecal.compare_policies(
        suite, gatecal.JudgeNoise.flip(0.08), "0.80", [sequential], n_runs=50
    )
    check = gatecal.check_sequential(
        currents, base, policy="obf-3", regression=2, false_alarm=BUDGET, detection=POWER
    )
    evalue = gatecal.evalue_gate(
        3, [0.0, 0.1, 0.9], [0.2, 0.5, 0.3], false_alarm=BUDGET, detection=POWER
    )
    return {
        "Recommendation": gatecal.recommend_gate(base, false_alarm=BUDGET, detection=POWER),
        "PolicyRecommendation": gatecal.recommend_policy(
            base, policies=["single", "pass^2"], false_alarm=BUDGET, detection=POWER
        ),
        "SuitePlans": gatecal.plan_suite(
            noise=gatecal.JudgeNoise.flip(0.08), regression=2, false_alarm=BUDGET, detection=POWER
        ),
        "SequentialCheck": check,
        "SequentialDesign": check.gate.design,
        "EvalueDesign": evalue.design,
        "CompareDesign": gatecal.plan_compare(
            cases=16, rate=0.05, samples=20, max_runs=2, false_alarm=BUDGET, detection=POWER
        ),
        "SequentialComparisonRow": report.rows[0],
    }


HOLDERS = (
    "Recommendation",
    "PolicyRecommendation",
    "SuitePlans",
    "SequentialCheck",
    "SequentialDesign",
    "EvalueDesign",
    "CompareDesign",
    "SequentialComparisonRow",
)


@pytest.mark.parametrize("kind", HOLDERS)
def test_each_result_holds_one_targets(results, kind):
    result = results[kind]
    assert type(result).__name__ == kind
    assert isinstance(result.targets, Targets)
    fields = [f.name for f in dataclasses.fields(result)]
    assert "targets" in fields and not set(FLAT) & set(fields)


def _around(keys, key, before, after):
    at = keys.index(key)
    return keys[at - before : at + after + 1]


@pytest.mark.parametrize(
    ("kind", "document", "before", "after"),
    [
        ("Recommendation", lambda r: r.to_dict(), "regression_failing", "recommended"),
        ("PolicyRecommendation", lambda r: r.to_dict()["policies"], "regression", "chosen"),
        ("SuitePlans", lambda r: r.to_dict(), "feasible", "flip"),
    ],
)
def test_a_nested_json_writes_the_targets_object_in_its_place(
    results, kind, document, before, after
):
    result = results[kind]
    data = document(result)
    assert _around(list(data), "targets", 1, 1) == [before, "targets", after]
    assert list(data["targets"].items()) == list(TARGETS.items())
    # the --format json text too (the policy recommendation's under its "policies")
    text = json.loads(result.render("json"))
    assert text.get("policies", text)["targets"] == TARGETS


def test_the_boundary_file_writes_the_targets_flat_in_their_old_place(results):
    design = results["SequentialDesign"].to_dict()
    assert list(design) == ["design", "looks", "cases", "boundaries", *FLAT,
                            "fail_constant", "pass_constant"]  # fmt: skip
    assert design["false_alarm_target"] == BUDGET and design["detection_target"] == POWER
    evalue = results["EvalueDesign"].to_dict()
    assert list(evalue) == ["design", "looks", "cases", "boundaries", *FLAT, "fail_constant",
                            "pass_constant", "null_rate", "prior_a", "prior_b",
                            "nominal_false_alarm"]  # fmt: skip
    assert evalue["false_alarm_target"] == BUDGET and evalue["detection_target"] == POWER
    assert math.isnan(evalue["fail_constant"])


def test_the_sequential_check_writes_each_target_after_its_figure(results):
    check = results["SequentialCheck"]
    data = json.loads(check.render("json"))
    keys = list(data)
    assert _around(keys, "false_alarm", 0, 3) == ["false_alarm", FLAT[0], "detection", FLAT[1]]
    assert data["false_alarm_target"] == BUDGET and data["detection_target"] == POWER
    assert check.gate.design.targets.false_alarm == BUDGET


def test_the_compare_plan_writes_the_targets_flat(results):
    data = json.loads(results["CompareDesign"].render("json"))
    assert _around(list(data), "false_alarm_target", 1, 2) == ["failing", *FLAT, "samples"]
    assert data["false_alarm_target"] == BUDGET and data["detection_target"] == POWER


def test_a_sequential_row_keeps_its_flat_columns(results):
    row = results["SequentialComparisonRow"].to_dict()
    assert list(row)[-6:] == ["stop_distribution", "simulated_expected_runs", *FLAT,
                              "meets_targets", "run_model"]  # fmt: skip
    assert row["false_alarm_target"] == BUDGET and row["detection_target"] == POWER
