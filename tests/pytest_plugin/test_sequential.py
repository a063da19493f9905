"""The pytest plugin's sequential gate across --gatecal-repeat repeats (--gatecal-sequential),
run by real pytest through pytester, in-process and with pytest-xdist in a subprocess."""

import json

import pytest

from gatecal import JudgeNoise, Suite, sequential_gate
from tests.pytest_plugin.test_plugin import SUITE, gate_line, run

pytest_plugins = ["pytester"]


@pytest.fixture
def suite(pytester, monkeypatch):
    """The plugin tests' suite (6 marked cases and a plain test) and the boundaries of an
    sprt-4 gate for 6 cases, as gatecal writes them: pass at least 6, 11, 16, 19 and fail at
    most 3, 8, 13, 18 passing cases summed over runs 1, 2, 3, 4."""
    monkeypatch.delenv("GATECAL_FAIL", raising=False)
    pytester.makepyfile(test_suite=SUITE)
    gate = sequential_gate(
        Suite.uniform(cases=6, judge_checks=1, code_checks=0, failing=1), JudgeNoise.flip(0.1),
        "sprt", 4, false_alarm=0.05, detection=0.5,
    )  # fmt: skip
    pairs = [(b.pass_at_least, b.fail_at_most) for b in gate.design.boundaries]
    assert pairs == [(6, 3), (11, 8), (16, 13), (19, 18)]
    (pytester.path / "sprt.json").write_text(json.dumps(gate.design.to_dict()))
    return pytester


def test_passes_at_the_first_look_and_stops_the_session(suite):
    result = run(suite, "--gatecal-sequential", "sprt.json", "--gatecal-repeat", "4")
    assert result.ret == 0
    result.assert_outcomes(passed=7)  # repeat 1 and the plain test only: 18 tests never ran
    assert gate_line(result) == (
        "gatecal: sequential gate sprt-4 PASSED after run 1 of 4 (passing cases summed over "
        "runs 1..1: 6; pass at least 6), exit 0"
    )


def test_fails_at_the_second_look(suite):
    result = run(suite, "--gatecal-sequential", "sprt.json", "--gatecal-repeat", "4", fail="a,b")
    assert result.ret == 1
    result.assert_outcomes(passed=9, failed=4)  # repeats 1 and 2
    assert gate_line(result) == (
        "gatecal: sequential gate sprt-4 FAILED after run 2 of 4 (passing cases summed over "
        "runs 1..2: 4, 8; fail at most 8), exit 1"
    )


def test_one_flaky_case_continues_then_passes_at_the_last_look(suite):
    result = run(suite, "--gatecal-sequential", "sprt.json", "--gatecal-repeat", "4", fail="a")
    assert result.ret == 0  # 4 marked failures, tolerated by the gate
    result.assert_outcomes(passed=21, failed=4)
    assert "PASSED after run 4 of 4 (passing cases summed over runs 1..4: 5, 10, 15, 20" in (
        gate_line(result)
    )
    result = run(suite, "--gatecal-sequential", "sprt.json", "--gatecal-repeat", "2", fail="a")
    assert result.ret == 1
    assert gate_line(result) == (
        "gatecal: sequential gate sprt-4 CONTINUE, exit 1: after 2 of 4 runs (passing cases "
        "summed over runs 1..2: 5, 10) no boundary is crossed (fail at most 8, pass at least "
        "11); the evidence is incomplete: run all 4 (--gatecal-repeat 4 stops at the first "
        "decision)"
    )


def test_unmarked_failures_and_incomplete_evidence_fail(suite):
    result = run(suite, "--gatecal-sequential", "sprt.json", "--gatecal-repeat", "4",
                 fail="plain")  # fmt: skip
    assert result.ret == 1
    assert gate_line(result).endswith(
        "exit 1; 1 unmarked test(s) failed, never tolerated: test_suite.py::test_plain"
    )
    result = run(suite, "--gatecal-sequential", "sprt.json", "--gatecal-repeat", "4",
                 "--deselect", "test_suite.py::test_judge[gatecal-r3-c]")  # fmt: skip
    assert result.ret == 1
    assert gate_line(result).startswith(
        "gatecal: sequential gate sprt-4 INCOMPLETE, exit 1: incomplete evidence never "
        "passes: 1 marked test(s) deselected: test_suite.py::test_judge[gatecal-r3-c]"
    )
    data = json.loads((suite.path / "sprt.json").read_text())
    (suite.path / "five.json").write_text(json.dumps({**data, "cases": 5}))
    result = run(suite, "--gatecal-sequential", "five.json", "--gatecal-repeat", "4")
    assert result.ret == 1
    assert "five.json holds boundaries for 5 cases and this session gates 6" in gate_line(result)


def test_a_skipped_or_errored_repeat_is_incomplete_in_the_plain_gates_words(suite):
    """The sequential gate applies the one evidence rule to the repeat it stops at, in the
    words the count gate uses (tests/pytest_plugin/test_plugin.py pins those)."""
    suite.makeconftest(
        """
import pytest

@pytest.fixture(autouse=True)
def _trouble(request):
    if "r1-c" in request.node.nodeid:
        pytest.skip("judge unavailable")
    if "r1-d" in request.node.nodeid:
        raise RuntimeError("judge timed out")
"""
    )
    result = run(suite, "--gatecal-sequential", "sprt.json", "--gatecal-repeat", "4")
    assert result.ret == 1
    assert gate_line(result) == (
        "gatecal: sequential gate sprt-4 INCOMPLETE, exit 1: incomplete evidence never "
        "passes: run 1: 1 marked test(s) skipped: test_suite.py::test_judge[gatecal-r1-c]; "
        "run 1: 1 marked test(s) errored: test_suite.py::test_judge[gatecal-r1-d]"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "--gatecal-sequential needs --gatecal-repeat N with N in [1, 4] (the runs of its "
             "4 looks) (got None)"),
        (["--gatecal-repeat", "5"], "--gatecal-sequential needs --gatecal-repeat N with N in "
                                    "[1, 4] (the runs of its 4 looks) (got 5)"),
        (["--gatecal-repeat", "2", "--gatecal-gate", "all"],
         "--gatecal-sequential can't be combined with --gatecal-gate (got 'sprt.json')"),
    ],
)  # fmt: skip
def test_bad_options_are_usage_errors(suite, args, message):
    result = run(suite, "--gatecal-sequential", "sprt.json", *args)
    assert result.ret == 4
    assert f"gatecal: {message}" in result.stderr.str()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "must be a JSON file"),
        ("[1]", "must be a JSON object with a 'boundaries' list"),
        ('{"boundaries": [], "cases": 6}', "boundaries must meet at the last look"),
        ('{"boundaries": [{"look": 1, "pass_at_least": 4, "fail_at_most": 2}], "cases": 6}',
         "boundaries must meet at the last look"),
        ('{"boundaries": [{"look": 2, "pass_at_least": 4, "fail_at_most": 3}], "cases": 6}',
         "boundary 1 must be an object with look 1"),
        ('{"boundaries": [{"look": 1, "pass_at_least": 9, "fail_at_most": 8}], "cases": 6}',
         "boundary 1 must have whole numbers with -1 <= fail_at_most < pass_at_least <= 7"),
        ('{"boundaries": [{"look": 1, "pass_at_least": 4, "fail_at_most": 3}]}',
         "must give 'cases', a whole number >= 1 (got None)"),
    ],
)  # fmt: skip
def test_bad_boundary_files_are_usage_errors(suite, content, message):
    (suite.path / "bad.json").write_text(content)
    result = run(suite, "--gatecal-sequential", "bad.json", "--gatecal-repeat", "1")
    assert result.ret == 4
    assert f"gatecal: --gatecal-sequential bad.json {message}" in result.stderr.str()


def test_under_xdist_every_repeat_runs_and_the_first_crossing_decides(suite):
    pytest.importorskip("xdist")
    suite._monkeypatch.setenv("GATECAL_FAIL", "a,b")
    result = suite.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", "-n", "2",
                                        "--gatecal-sequential", "sprt.json",
                                        "--gatecal-repeat", "4")  # fmt: skip
    assert result.ret == 1
    assert "gatecal: sequential gate sprt-4 FAILED after run 2 of 4" in result.stdout.str()


def test_check_json_is_a_boundary_file(suite, tmp_path):
    # the boundaries `gatecal check --policy sprt-MAX --format json` writes are read as they are
    data = json.loads((suite.path / "sprt.json").read_text())
    check_like = {"policy": "sprt-4", "cases": 6, "boundaries": data["boundaries"],
                  "decision": "continue"}  # fmt: skip
    (suite.path / "check.json").write_text(json.dumps(check_like))
    result = run(suite, "--gatecal-sequential", "check.json", "--gatecal-repeat", "4")
    assert result.ret == 0 and "sequential gate sprt-4 PASSED after run 1" in gate_line(result)


def test_a_file_designed_for_independent_runs_says_so(suite):
    # the repeats of a session share the judge's rate: check's default designs for that; a
    # file designed with --runs-independent is used, with a line that says what it assumed
    data = json.loads((suite.path / "sprt.json").read_text())
    for runs, said in (("shared", False), ("independent", True)):
        given = {"policy": "sprt-4", "cases": 6, "boundaries": data["boundaries"], "runs": runs}
        (suite.path / "check.json").write_text(json.dumps(given))
        result = run(suite, "--gatecal-sequential", "check.json", "--gatecal-repeat", "4")
        assert result.ret == 0 and "PASSED after run 1" in gate_line(result)
        assert ("each draw their own flip rate" in gate_line(result)) is said
    given["runs"] = "fresh"
    (suite.path / "check.json").write_text(json.dumps(given))
    result = run(suite, "--gatecal-sequential", "check.json", "--gatecal-repeat", "4")
    assert result.ret == 4
    assert "'runs' must be 'shared' or 'independent' (got 'fresh')" in result.stderr.str()
