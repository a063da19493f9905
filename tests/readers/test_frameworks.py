"""The readers on the newest files of each framework, written by the tools.

Each fixture's README (tests/fixtures/*/README.md) gives the command, the version and the
tool's own count; the expected values below are those counts (the tool's `success`,
JUnit outcome or summary line), not values read back from our reader.
"""

import pytest

from gatecal import RunsError, read_runs
from tests.conftest import run_cli
from tests.readers.test_readers import DEEPEVAL, INSPECT, JUNIT, PROMPTFOO, _grid

# -- DeepEval: cases named with LLMTestCase(name=...) under -r 3 -------------------------

# DeepEval's own per-test-case `success`, in `order` (the README's table); each pytest
# test in junit.xml (test_named[<case>-i-3]) agrees
NAMED = {
    "named-repeat3": {  # DeepEval 4.3.1
        "capital-france": "x..", "spider-legs": "...", "tides-moon": ".x.", "tides-miss": "xxx",
    },
    "named-repeat3-v3.9": {  # DeepEval 3.9.9
        "capital-france": "..x", "spider-legs": "x..", "tides-moon": "...", "tides-miss": "xxx",
    },
}  # fmt: skip


@pytest.mark.parametrize("folder", sorted(NAMED))
def test_deepeval_named_cases_repeated_are_runs_not_duplicates(folder):
    (path,) = (DEEPEVAL / folder).glob("test_run_*.json")
    data = read_runs([path])
    assert len(data.runs("healthy")) == 3 and len(data.sessions()) == 1
    assert data.cases() == list(NAMED[folder])
    assert _grid(data) == NAMED[folder]
    assert data.checks() == ["Answer Relevancy", "Contains Keyword"]
    # the same invocation's JUnit file (pytest's own outcomes) reads the same
    junit = read_runs([DEEPEVAL / folder / "junit.xml"])
    assert list(_grid(junit).values()) == list(NAMED[folder].values())
    latest = read_runs([DEEPEVAL / folder / ".deepeval" / ".latest_test_run.json"])
    assert _grid(latest) == NAMED[folder]


def test_deepeval_names_shared_unequally_are_refused(tmp_path):
    import json

    (path,) = (DEEPEVAL / "named-repeat3").glob("test_run_*.json")
    document = json.loads(path.read_text(encoding="utf-8"))
    document["testCases"][3]["name"] = "capital-france"  # a spider-legs repeat renamed
    bad = tmp_path / "test_run_renamed.json"
    bad.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(RunsError, match=r"names occur unequally often \('capital-france' 4x"):
        read_runs([bad])


# -- promptfoo: test-level threshold, usage, JUnit repeats, refusals (0.123.1) ---------

# promptfoo's own `success` per test, repeats in testIdx order (README; its summary line
# "10 passed, 2 failed, 0 errors")
THRESHOLD = {
    "capital of France (threshold 0.5)": "...",  # one assertion fails every time
    "refund request (threshold 0.6)": "x..",
    "boiling point": "...",
    "author of Hamlet": "x..",
}


def test_promptfoo_test_level_threshold_follows_promptfoos_pass_rule():
    data = read_runs([PROMPTFOO / "threshold.json"])
    assert _grid(data) == THRESHOLD
    decided = [v for v in data.verdicts if v.check == "threshold"]
    assert len(decided) == 6 and {v.case for v in decided} == set(list(THRESHOLD)[:2])
    kinds = {v.case: v.kind for v in decided}
    assert kinds == {"capital of France (threshold 0.5)": "code",
                     "refund request (threshold 0.6)": "judge"}  # fmt: skip
    # the assertions stay underneath, as promptfoo graded them, and decide nothing
    assert {v.status for v in data.components} == {"component"} and len(data.components) == 15
    javascript = [v for v in data.components if v.case.startswith("capital") and
                  v.check == "javascript"]  # fmt: skip
    assert [v.passed for v in javascript] == [False] * 3
    # promptfoo's JUnit file of the same eval says the same
    assert _grid(read_runs([PROMPTFOO / "threshold.junit.xml"])) == THRESHOLD


def test_promptfoo_cost_and_tokens_are_kept_and_total_as_promptfoo_totals_them():
    data = read_runs([PROMPTFOO / "threshold.json"])
    # promptfoo's own totals: results.prompts[0].metrics.cost = 0.000255 and
    # stats.tokenUsage.total = 258
    assert data.cost == pytest.approx(0.000255, rel=1e-9) and data.tokens == 258
    carrying = [(v.run, v.case) for v in data.verdicts if v.tokens is not None]
    assert len(carrying) == len(set(carrying)) == 12  # one row per (run, case)
    assert data.columns()[-2:] == ("cost", "tokens")
    code, out, _ = run_cli("runs", str(PROMPTFOO / "threshold.json"), "--format", "csv")
    assert code == 0 and out.splitlines()[0].endswith(",source,cost,tokens")
    # a file without them keeps the twelve columns
    plain = read_runs([JUNIT / "pytest-plain" / "xunit2"])
    assert plain.columns()[-1] == "source" and plain.cost is None


@pytest.mark.parametrize("name", ["threshold.json", "grader_outage_v0.100.json"])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_promptfoo_long_table_round_trip_keeps_components_and_usage(tmp_path, name, fmt):
    original = read_runs([PROMPTFOO / name])
    out = tmp_path / f"runs.{fmt}"
    code, _, err = run_cli("runs", str(PROMPTFOO / name), "--format", fmt, "--out", str(out))
    assert code == 0, err
    back = read_runs([out])
    fields = ("run", "case", "check", "kind", "passed", "status", "score", "cost", "tokens")

    def rows(verdicts):
        return sorted(tuple(getattr(v, f) for f in fields) for v in verdicts)

    assert rows(back.verdicts) == rows(original.verdicts)
    assert rows(back.components) == rows(original.components)
    assert _grid(back) == _grid(original)


def test_promptfoo_junit_repeats_are_runs_where_the_file_tells_them():
    data = read_runs([PROMPTFOO / "threshold.junit.xml"])
    assert len(data.runs("healthy")) == 3 and data.cases() == list(THRESHOLD)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["main.junit.xml"], "promptfoo JUnit of 2 targets"),
        (["main.junit.xml", "--target", "[sut-python] prompt 1"],
         "a test without a description cannot be matched to its repeats"),
        (["threshold.xml"], "promptfoo's XML dump (-o results.xml) is not read"),
        (["threshold.csv"], "promptfoo's CSV table (-o results.csv) is not read"),
    ],
)  # fmt: skip
def test_promptfoo_outputs_gatecal_cannot_read_for_sure_are_refused_in_one_line(args, message):
    code, out, err = run_cli("runs", str(PROMPTFOO / args[0]), *args[1:])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert message in err and "promptfoo eval -o results.json" in err


# -- promptfoo 0.100: a grader outage is an error, not the judge saying no -------------


def test_promptfoo_0100_grader_http_500_is_an_error():
    data = read_runs([PROMPTFOO / "grader_outage_v0.100.json"])
    # promptfoo 0.100.6 counts the 3 outage rows as failures ("Failures: 3"); the judge
    # never answered them (README): errors, so the case is missing in those runs
    assert _grid(data) == {
        "capital of France": "...", "boiling point (grader outage)": "---",
        "author of Hamlet": "...",
    }  # fmt: skip
    errored = {(v.case, v.check) for v in data.verdicts if v.status == "error"}
    assert errored == {("boiling point (grader outage)", "llm-rubric")} and data.errors == 3
    assert data.judge_verdicts("healthy") == (0, 6)  # no judge "no" at all
    # the code check beside it still counted
    icontains = [v for v in data.verdicts if v.check == "icontains"]
    assert [v.passed for v in icontains] == [True] * 3


# -- pytest-rerunfailures: a setup error rerun is an error, not a failure ---------------


@pytest.mark.parametrize("version", ["v16.7", "v16.6"])
def test_rerunfailures_setup_error_is_an_error(version):
    path = JUNIT / "rerunfailures-setup-error" / version
    # pytest's own line: "4 passed, 6 warnings, 1 error, 5 rerun"; the suite element
    # says errors="1" failures="0"
    for attempts in ("first", "last"):
        data = read_runs([path], attempts=attempts)
        assert data.errors == 1 and data.skipped == 0
        (errored,) = [v for v in data.verdicts if v.status == "error"]
        assert errored.case.endswith("test_judge[cites-source]")
        assert _grid(data)["cites-source"] == "-"
    # the other cases as in rerunfailures/ (same seed): 16.7 keeps the failed attempts
    first = _grid(read_runs([path]))
    expected = "x" if version == "v16.7" else "."
    assert (first["refund-policy"], first["greeting-tone"], first["no-pii"]) == (
        expected, expected, ".")  # fmt: skip


# -- inspect_ai: a log whose every sample errored ---------------------------------------


def test_inspect_log_with_every_sample_errored_says_so():
    pytest.importorskip("zstandard", reason="the frameworks extra; .ci/run installs it")
    # inspect 0.3.285 wrote status "success" with 15 samples (5 x 3 epochs), each with an
    # `error` (APIConnectionError: the model endpoint was a closed port) and no scores
    code, out, err = run_cli("runs", str(INSPECT / "all-errored.eval"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "all-errored.eval: 15 samples, all errored (first: RetryError(" in err
    assert "APIConnectionError" in err and "no verdicts to read" not in err


# -- the worked loops' files (experiments/framework_loops.py) ---------------------------


def test_loop_baselines_read_as_the_tools_count_them():
    # promptfoo 0.123.1 --repeat 20: "66 passed, 14 failed, 0 errors"
    promptfoo = read_runs([PROMPTFOO / "loop" / "baseline.json"])
    runs, _, matrix = promptfoo.case_outcomes("healthy")
    assert (len(runs), len(promptfoo.cases())) == (20, 4)
    assert sum(r.count(1) for r in matrix) == 66 and sum(r.count(0) for r in matrix) == 14
    # DeepEval 4.3.1 -r 20 of named cases: testPassed 44, testFailed 36
    deepeval = read_runs([DEEPEVAL / "loop" / "baseline.json"])
    runs, _, matrix = deepeval.case_outcomes("healthy")
    assert (len(runs), len(deepeval.cases())) == (20, 4)
    assert sum(r.count(1) for r in matrix) == 44 and sum(r.count(0) for r in matrix) == 36
    # each CI run is one run of the same cases
    for path in (PROMPTFOO / "loop" / "ci.json", DEEPEVAL / "loop" / "ci.json"):
        ci = read_runs([path])
        assert len(ci.runs("healthy")) == 1 and len(ci.cases()) == 4


def test_realistic_deepeval_loop_reads_as_deepeval_counts_it():
    # DeepEval 4.3.1 -r 30 of 20 named cases (STEPS=loop20): testPassed 544, testFailed 56
    data = read_runs([DEEPEVAL / "loop-20" / "baseline.json"])
    runs, cases, matrix = data.case_outcomes("healthy")
    assert (len(runs), len(cases)) == (30, 20)
    assert sum(r.count(1) for r in matrix) == 544 and sum(r.count(0) for r in matrix) == 56
    # mona-lisa, judged wrongly every time, fails all 30 known-good runs
    failures = {case: sum(r[i] == 0 for r in matrix) for i, case in enumerate(cases)}
    assert failures["mona-lisa"] == 30 and failures["boiling-point"] == 0
    # the CI runs: the good build (18 passed) and the regressed one (16 passed)
    for name, failing in (
        ("ci.json", {"sky-blue", "mona-lisa"}),
        ("ci-regressed.json", {"boiling-point", "planets-count", "seasons-cause", "mona-lisa"}),
    ):
        ci = read_runs([DEEPEVAL / "loop-20" / name])
        _, ci_cases, ci_matrix = ci.case_outcomes("healthy")
        assert len(ci_matrix) == 1 and len(ci_cases) == 20
        assert {c for c, v in zip(ci_cases, ci_matrix[0], strict=True) if v == 0} == failing


def test_realistic_inspect_loop_reads_as_inspect_scored_it():
    # inspect_ai 0.3.285 qa_loop20 --epochs 30 (STEPS=loop20): 540 samples pass both scorers
    data = read_runs([INSPECT / "loop-20" / "baseline.eval"])
    runs, cases, matrix = data.case_outcomes("healthy")
    assert (len(runs), len(cases)) == (30, 20)
    assert sum(r.count(1) for r in matrix) == 540 and sum(r.count(0) for r in matrix) == 60
    failures = {case: sum(r[i] == 0 for r in matrix) for i, case in enumerate(cases)}
    assert failures["mona-lisa"] == 30 and failures["boiling-point"] == 0
    for name, failing in (
        ("ci.eval", {"seasons", "mona-lisa"}),
        ("ci-regressed.eval", {"boiling-point", "planets-count", "rainbow", "sky-blue"}),
    ):
        ci = read_runs([INSPECT / "loop-20" / name])
        _, ci_cases, ci_matrix = ci.case_outcomes("healthy")
        assert len(ci_matrix) == 1 and len(ci_cases) == 20
        assert {c for c, v in zip(ci_cases, ci_matrix[0], strict=True) if v == 0} == failing


def test_realistic_promptfoo_loop_reads_as_promptfoo_counts_it():
    # promptfoo 0.123.1 loop20.yaml --repeat 30 (STEPS=loop20): "550 passed, 50 failed, 0 errors"
    data = read_runs([PROMPTFOO / "loop-20" / "baseline.json"])
    runs, cases, matrix = data.case_outcomes("healthy")
    assert (len(runs), len(cases)) == (30, 20)
    assert sum(r.count(1) for r in matrix) == 550 and sum(r.count(0) for r in matrix) == 50
    # mona-lisa, a right answer the judge marks wrong, fails all 30 known-good runs
    failures = {case: sum(r[i] == 0 for r in matrix) for i, case in enumerate(cases)}
    assert failures["mona-lisa"] == 30 and failures["boiling-point"] == 0
    # the CI runs: the good build (19 passed) and the regressed one (17 passed)
    for name, failing in (
        ("ci.json", {"mona-lisa"}),
        ("ci-regressed.json", {"boiling-point", "planets-count", "mona-lisa"}),
    ):
        ci = read_runs([PROMPTFOO / "loop-20" / name])
        _, ci_cases, ci_matrix = ci.case_outcomes("healthy")
        assert len(ci_matrix) == 1 and len(ci_cases) == 20
        assert {c for c, v in zip(ci_cases, ci_matrix[0], strict=True) if v == 0} == failing
