"""The Python API on first contact: numbers where numbers are natural, one render for every
result, results that read well in a notebook, to_frame on every tabular result, argument
names that say what they are, and ParameterError (never AttributeError) for a wrong type."""

import csv
import json
import re
import warnings
from fractions import Fraction

import numpy as np
import pytest

import gatecal
from gatecal import ParameterError
from gatecal._render.dispatch import RESULT_TYPES

CASES = [f"case-{i:02d}" for i in range(16)]


def _write(path, rate, runs, seed, run_prefix="r", build=None):
    rng = np.random.default_rng(seed)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "case", "passed", *(["build"] if build else [])])
        for r in range(runs):
            for case in CASES:
                passed = "pass" if rng.random() >= rate else "fail"
                writer.writerow([f"{run_prefix}{r}", case, passed, *([build] if build else [])])
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("api")
    return {
        "baseline": _write(tmp / "baseline.csv", 0.05, 30, 1),
        "current": _write(tmp / "current.csv", 0.05, 1, 2, run_prefix="c"),
        "currents": _write(tmp / "currents.csv", 0.05, 3, 3, run_prefix="s"),
        "candidate": _write(tmp / "candidate.csv", 0.30, 8, 4, run_prefix="k"),
    }


def _history(files):
    """A History from the baseline's runs recorded into a store (as `gatecal record`)."""
    store = str(files["baseline"].with_name("history.db"))
    gatecal.record_runs(
        gatecal.read_runs([files["baseline"]]), store, build="b1", judge="j", known_good=True
    )
    return gatecal.case_history(gatecal.stored_runs(store))


@pytest.fixture(scope="module")
def results(files):
    """One of every result type, computed small."""
    base = gatecal.read_runs([files["baseline"]])
    rec = gatecal.recommend_gate(base)
    labels = [
        gatecal.Label(f"i{i}", "", "#1", i % 3 != 0, (i % 3 != 0) != (i % 7 == 0))
        for i in range(60)
    ]
    suite = gatecal.Suite.uniform(cases=6)
    out = {
        "SimulationReport": gatecal.simulate_gates(suite, n_runs=200, flips=[0.05]),
        "Recommendation": rec,
        "PolicyRecommendation": gatecal.recommend_policy(base, policies=["single", "pass^2"]),
        "GateCheck": gatecal.check_gate(gatecal.read_runs([files["current"]]), base),
        "SequentialCheck": gatecal.check_sequential(
            gatecal.read_runs([files["currents"]]),
            base,
            policy="obf-3",
            regression=2,
            detection=0.6,
        ),
        "Comparison": gatecal.compare_builds(
            files["baseline"], candidate=files["candidate"], oc_samples=20
        ),
        "CompareDesign": gatecal.plan_compare(cases=16, rate=0.05, samples=40, max_runs=4),
        "SuitePlans": gatecal.plan_suite(noise=gatecal.JudgeNoise.flip(0.08), regression=2),
        "PolicyReport": gatecal.compare_policies(
            suite, gatecal.JudgeNoise.flip(0.08), "0.80", [gatecal.Policy()], n_runs=200
        ),
        "Calibration": gatecal.calibrate_judge(labels),
        "History": _history(files),
    }
    assert sorted(out) == sorted(RESULT_TYPES)
    return out


# -- numbers where numbers are natural ---------------------------------------------------------


def test_regression_as_a_number_is_the_same_as_its_text(files):
    data = gatecal.read_runs([files["baseline"]])
    as_text = gatecal.recommend_gate(data, regression="3")
    as_int = gatecal.recommend_gate(data, regression=3)  # AttributeError before
    assert as_int.table == as_text.table and as_int.regression == as_text.regression
    share = gatecal.recommend_gate(data, regression=0.25)
    assert share.table == gatecal.recommend_gate(data, regression="0.25").table
    assert gatecal.as_regression(0.1).share == Fraction(1, 10)  # the decimal, not the binary
    assert gatecal.as_regression(np.int64(3)).count == 3
    assert gatecal.as_regression(Fraction(1, 4)).share == Fraction(1, 4)
    plans = gatecal.plan_suite(noise=gatecal.JudgeNoise.flip(0.08), regression=2)
    assert plans.regression.count == 2
    policy = gatecal.recommend_policy(data, policies=["single"], regression=3)
    assert (
        policy.regression
        == gatecal.recommend_policy(data, policies=["single"], regression="3").regression
    )
    design = gatecal.plan_compare(cases=16, rate=0.05, regression=1, samples=20, max_runs=2)
    assert design.failing == 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (True, "`regression` must be a share"),
        ([3], "`regression` must be a share"),
        (3.0, "`regression` as a share must lie in (0, 1]; for a number of cases pass an int"),
        (0, "`regression` must be at least 1 case"),
        (float("nan"), "`regression` must be a share"),
    ],
)
def test_a_regression_that_is_no_regression_is_a_parameter_error(files, value, message):
    data = gatecal.read_runs([files["baseline"]])
    with pytest.raises(ParameterError) as info:
        gatecal.recommend_gate(data, regression=value)
    assert str(info.value).startswith(message)


def test_a_gate_as_a_number(files):
    assert gatecal.parse_gate(0.9) == gatecal.parse_gate("0.9")
    assert gatecal.as_gates([0.9, "fails<=1"])[0].threshold == Fraction(9, 10)
    assert gatecal.as_gates(0.8) == (gatecal.parse_gate("0.8"),)
    suite = gatecal.Suite.uniform(cases=6)
    by_number = gatecal.simulate_gates(suite, gates=[0.8], n_runs=50, flips=[0.05])
    by_text = gatecal.simulate_gates(suite, gates="0.8", n_runs=50, flips=[0.05])
    assert [(r.k_min, r.exact_failure_probability) for r in by_number.rows] == [
        (r.k_min, r.exact_failure_probability) for r in by_text.rows
    ]
    data = gatecal.read_runs([files["baseline"]])
    current = gatecal.read_runs([files["current"]])
    assert gatecal.check_gate(current, data, gate=0.75).k_min == 12
    with pytest.raises(ParameterError, match="a whole number is not read as either"):
        gatecal.parse_gate(1)
    with pytest.raises(ParameterError, match="must be a pass rate in"):
        gatecal.parse_gate(1.5)


# -- one render, a short repr, markdown in a notebook, to_frame -------------------------------


@pytest.mark.parametrize("kind", RESULT_TYPES)
def test_one_render_for_every_result(results, kind):
    result = results[kind]
    for fmt in ("table", "markdown", "json"):
        text = gatecal.render(result, fmt)
        assert text.strip(), (kind, fmt)
    json.loads(gatecal.render(result, "json"))
    assert result.render("markdown") == gatecal.render(result, "markdown")
    with pytest.raises(ParameterError, match="`fmt` must be one of"):
        gatecal.render(result, "xml")


def test_render_is_each_types_own_renderer(results):
    rec, check = results["Recommendation"], results["GateCheck"]
    assert gatecal.render(rec, "table", top=3) == gatecal.render_recommendation(rec, "table", top=3)
    assert gatecal.render(check, "junit") == gatecal.render_check(check, "junit")
    sim = results["SimulationReport"]
    assert gatecal.render(sim) == gatecal.render_simulation(sim)
    pair = (rec, results["PolicyRecommendation"])
    assert gatecal.render(pair) == gatecal.render_policy_recommendation(*pair)
    with pytest.raises(ParameterError, match="`result` must be a gatecal result"):
        gatecal.render({"decision": "pass"})
    with pytest.raises(ParameterError, match="`options` not taken for GateCheck"):
        gatecal.render(check, "table", top=3)


@pytest.mark.parametrize("kind", RESULT_TYPES)
def test_a_result_reads_well_in_a_notebook(results, kind):
    result = results[kind]
    text = repr(result)
    assert text.startswith(f"<gatecal.{kind}: ") and "\n" not in text
    assert len(text) < 300, text  # the dataclass repr ran to thousands of characters
    markdown = result._repr_markdown_()
    rendered = gatecal.render(result, "markdown")
    # the same text, with each block of aligned lines fenced (monospace, columns kept)
    assert markdown.replace("```text\n", "").replace("```\n", "") == rendered
    outside = re.sub(r"```text\n.*?```\n", "", markdown, flags=re.S)
    for line in outside.splitlines():  # no aligned line left to run into a paragraph
        assert not line.startswith("  ") or line.lstrip().startswith("|"), line


def test_aligned_text_in_a_notebook_keeps_its_columns(results):
    markdown = results["Recommendation"]._repr_markdown_()
    assert "```text\n  case failure rate, pooled:" in markdown


def test_the_repr_leads_with_the_decision(results):
    check = results["GateCheck"]
    assert repr(check).startswith(f"<gatecal.GateCheck: {check.decision.upper()}: ")
    rec = results["Recommendation"]
    chosen = rec.chosen
    what = "the case-aware gate" if chosen.kind == "cases" else f"at least {chosen.k_min} of"
    assert repr(rec).startswith(f"<gatecal.Recommendation: use {what}")
    assert ("short of the" in repr(rec)) == (not chosen.meets_targets)


@pytest.mark.parametrize("kind", RESULT_TYPES)
def test_every_tabular_result_has_to_frame(results, kind):
    frame = results[kind].to_frame()
    assert len(frame) > 0 and len(frame.columns) > 1


def test_to_frame_rows_are_the_results_own(results):
    check = results["GateCheck"]
    frame = check.to_frame()
    assert frame["case"].tolist() == list(check.case_names)
    assert int((~frame["failed"]).sum()) == check.passed
    rules = results["PolicyRecommendation"]
    assert rules.to_frame()["rule"].tolist() == [r.rule for r in rules.rows]
    design = results["CompareDesign"]
    assert design.to_frame()["runs"].tolist() == [r for r, _ in design.rows]


# -- argument names that say what they are ------------------------------------------------------


def test_compare_builds_takes_the_candidate(files):
    both = gatecal.read_runs([files["baseline"]], regressed=[files["candidate"]])
    old = gatecal.compare_builds(both, oc_samples=20)
    new = gatecal.compare_builds(files["baseline"], candidate=files["candidate"], oc_samples=20)
    apart = gatecal.compare_builds(
        gatecal.read_runs([files["baseline"]]),
        candidate=gatecal.read_runs([files["candidate"]]),
        oc_samples=20,
    )
    for res in (new, apart):
        assert res.decision == old.decision
        assert res.paired.p_value == pytest.approx(old.paired.p_value, rel=1e-12)
        assert [c.case for c in res.changes.cases] == [c.case for c in old.changes.cases]
    with pytest.warns(DeprecationWarning, match="pass candidate="):
        dep = gatecal.compare_builds(files["baseline"], regressed=files["candidate"], oc_samples=20)
    assert dep.paired.p_value == pytest.approx(old.paired.p_value, rel=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gatecal.compare_builds(files["baseline"], candidate=files["candidate"], oc_samples=0)
    with pytest.raises(ParameterError, match="`regressed` is the old name of `candidate`"):
        gatecal.compare_builds(files["baseline"], candidate=files["candidate"],
                               regressed=files["candidate"])  # fmt: skip
    with pytest.raises(ParameterError, match="`candidate` must hold the runs of one build"):
        gatecal.compare_builds(files["baseline"], candidate=both)


# -- a wrong type is a ParameterError ----------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda d: gatecal.check_gate("current.csv", d), "`current` must be a gatecal.RunsData"),
        (lambda d: gatecal.check_gate(d, ["b.csv"]), "`baseline` must be a gatecal.RunsData"),
        (
            lambda d: gatecal.calibrate_judge("labels.csv"),
            "`labels` must be a sequence of gatecal.Label",
        ),
        (
            lambda d: gatecal.calibrate_judge([{"item": 1}]),
            "`labels` must be a sequence of gatecal.Label",
        ),
        (lambda d: gatecal.baseline_runs("plans"), "`plans` must be a gatecal.SuitePlans"),
        (lambda d: gatecal.fit_overdispersion(["x"], 10), "`failures` must be a list of counts"),
        (lambda d: gatecal.compare_builds(3), "`data` must be a gatecal.RunsData"),
        (
            lambda d: gatecal.compare_builds(d, candidate=3),
            "`candidate` must be a gatecal.RunsData",
        ),
        (lambda d: gatecal.recommend_gate(d, regression=[3]), "`regression` must be"),
        (
            lambda d: gatecal.check_gate(
                gatecal.read_runs([d.sources[0].replace("baseline", "current")]), d, gate=[1]
            ),
            "`gate` must be",
        ),
        (
            lambda d: gatecal.simulate_gates(gatecal.Suite.uniform(cases=3), gates=object()),
            "`gates` must be",
        ),
        (lambda d: gatecal.render(d), "`result` must be a gatecal result"),
    ],
)
def test_a_wrong_type_is_a_parameter_error(files, call, message):
    data = gatecal.read_runs([files["baseline"]])
    with pytest.raises(ParameterError) as info:
        call(data)
    assert str(info.value).startswith(message), str(info.value)


def test_what_users_hold_beside_results_has_a_short_repr(tmp_path):
    """The data, the suite, the distributions and the gate a user keeps in a notebook: one
    line each, however big the suite (RunsData's dataclass repr ran to 10,146 characters)."""
    cases = [f"case-{i:03d}" for i in range(300)]
    rows = [{"run": f"night-{r:02d}", "case": c, "passed": not (i < 30 and (r + i) % 7 == 0)}
            for r in range(30) for i, c in enumerate(cases)]  # fmt: skip
    runs = tmp_path / "baseline.jsonl"
    runs.write_text("".join(json.dumps(row) + "\n" for row in rows))
    data = gatecal.read_runs([runs])
    rec = gatecal.recommend_gate(data)
    gate_file = tmp_path / "gate.json"
    gate_file.write_text(gatecal.render(rec, "json"))
    suite = gatecal.Suite.uniform(cases=300, judge_checks=2, code_checks=1, failing=3)
    noise = gatecal.JudgeNoise.flip(0.03)
    held = {
        "RunsData": data,
        "Suite": suite,
        "PassCountDistribution": gatecal.exact_pass_counts(suite, "healthy", noise),
        "PassCountSample": gatecal.simulate_pass_counts(
            suite, "healthy", noise, n_runs=2000, rng=1
        ),
        "RecommendedGate": gatecal.load_recommended_gate(gate_file),
        "CaseGate": rec.case_gate,
        "CaseSpread": rec.case_spread,
    }
    for name, value in held.items():
        text = repr(value)
        assert text.startswith(f"<gatecal.{name}: ") and "\n" not in text, text
        assert len(text) < 200, text
    assert repr(data) == ("<gatecal.RunsData: 9000 verdicts of 300 cases; runs: 30 healthy; "
                          "1 file(s)>")  # fmt: skip
    assert repr(suite) == ("<gatecal.Suite: 300 cases, 2 judge and 1 code check(s) each; "
                           "healthy: 0 failing, regressed: 3 failing>")  # fmt: skip
