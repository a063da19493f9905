"""The gate's decision in pytest's --junitxml: real pytest runs (pytester, in-process and in a
subprocess with pytest-xdist and pytest-rerunfailures) writing real JUnit files, parsed back.

CI reporters (Jenkins' junit step, GitLab's test report, JUnit-reporting GitHub actions) read
the suites' counts and the testcases' <failure> elements: a build the gate passed must count no
failure there, a build it failed must show why."""

import json
import xml.etree.ElementTree as ET

import pytest

import gatecal

pytest_plugins = ["pytester"]

SUITE = """
import os
import pytest

FAIL = set(os.environ.get("GATECAL_FAIL", "").split(","))

@pytest.mark.gatecal(kind="judge")
@pytest.mark.parametrize("case", ["a", "b", "c", "d", "e", "f"])
def test_judge(case):
    assert case not in FAIL, f"the judge said no to {case}"

def test_plain():
    assert "plain" not in FAIL
"""


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.delenv("GATECAL_FAIL", raising=False)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def run(pytester, *args, fail="", subprocess=False):
    pytester._monkeypatch.setenv("GATECAL_FAIL", fail)
    runner = pytester.runpytest_subprocess if subprocess else pytester.runpytest
    return runner("-W", "error", "-p", "no:cacheprovider", *args)


def parse(path):
    """The counts a CI reporter reads, and each testcase's outcome and message."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    counts = {
        key: sum(int(s.get(key, 0)) for s in suites)
        for key in ("tests", "failures", "errors", "skipped")
    }
    cases = {}
    for tc in root.iter("testcase"):
        name = f"{tc.get('classname')}::{tc.get('name')}"
        outcome, message = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                outcome, message = child.tag, child.get("message", "")
        cases[name] = (outcome, message)
    return counts, cases


def test_a_passing_gate_counts_no_failure_and_keeps_the_tolerated_ones_visible(suite, tmp_path):
    junit = tmp_path / "junit.xml"
    result = run(suite, "--gatecal-gate", "fails<=2", f"--junitxml={junit}", fail="a,b")
    assert result.ret == 0
    counts, cases = parse(junit)
    assert counts == {"tests": 8, "failures": 0, "errors": 0, "skipped": 2}
    for case in "ab":
        outcome, message = cases[f"test_suite::test_judge[{case}]"]
        assert outcome == "skipped"
        assert message.startswith("tolerated by the gatecal gate: AssertionError: ")
        assert f"the judge said no to {case}" in message
    outcome, message = cases["gatecal::gate"]
    assert outcome == "passed"
    gate = next(tc for tc in ET.parse(junit).iter("testcase") if tc.get("classname") == "gatecal")
    assert gate.findtext("system-out").startswith(
        "gate PASSED (fails<=2: at least 4 of 6 cases must pass; 4 passed), exit 0"
    )
    # gatecal reads its own file back: the tolerated failures are still failed verdicts,
    # the gate's testcase is not a case
    data = gatecal.read_runs([junit])
    assert sorted(
        (v.case, v.passed) for v in data.verdicts if v.case.startswith("test_suite.test_judge")
    ) == [(f"test_suite.test_judge[{c}]", c not in "ab") for c in "abcdef"]
    assert not [v for v in data.verdicts if v.case.rsplit(".", 1)[-1] == "gate"]


def test_keep_failures_keeps_them_as_failures(suite, tmp_path):
    junit = tmp_path / "junit.xml"
    result = run(suite, "--gatecal-gate", "fails<=2", "--gatecal-keep-failures",
                 f"--junitxml={junit}", fail="a,b")  # fmt: skip
    assert result.ret == 0
    counts, cases = parse(junit)
    assert counts == {"tests": 8, "failures": 2, "errors": 0, "skipped": 0}
    assert cases["test_suite::test_judge[a]"][0] == "failure"
    assert cases["gatecal::gate"][0] == "passed"
    suite.makeini("[pytest]\ngatecal_keep_failures = true\n")
    assert run(suite, "--gatecal-gate", "fails<=2", f"--junitxml={junit}", fail="a").ret == 0
    assert parse(junit)[0]["failures"] == 1


def test_a_failing_gate_is_a_failed_testcase_whose_message_is_the_evidence(suite, tmp_path):
    junit = tmp_path / "junit.xml"
    result = run(suite, "--gatecal-gate", "fails<=2", f"--junitxml={junit}", fail="a,b,c")
    assert result.ret == 1
    counts, cases = parse(junit)
    assert counts == {"tests": 8, "failures": 4, "errors": 0, "skipped": 0}
    outcome, message = cases["gatecal::gate"]
    assert outcome == "failure"
    assert message.startswith("gate FAILED (fails<=2: at least 4 of 6 cases must pass; 3 passed)")


def test_unmarked_failures_and_incomplete_evidence_are_never_tolerated(suite, tmp_path):
    junit = tmp_path / "junit.xml"
    result = run(suite, "--gatecal-gate", "fails<=2", f"--junitxml={junit}", fail="a,plain")
    assert result.ret == 1
    counts, cases = parse(junit)
    assert counts["failures"] == 3 and counts["skipped"] == 0  # a, plain and the gate
    assert cases["test_suite::test_judge[a]"][0] == "failure"
    assert "unmarked test(s) failed, never tolerated" in cases["gatecal::gate"][1]
    result = run(suite, "--gatecal-gate", "fails<=3", "-x", f"--junitxml={junit}", fail="a")
    assert result.ret == 1
    outcome, message = parse(junit)[1]["gatecal::gate"]
    assert outcome == "failure" and message.startswith("gate INCOMPLETE, exit 1")


def test_without_a_gate_the_file_is_pytests_own(suite, tmp_path):
    junit = tmp_path / "junit.xml"
    assert run(suite, f"--junitxml={junit}", fail="a").ret == 1
    counts, cases = parse(junit)
    assert counts["failures"] == 1 and "gatecal::gate" not in cases


@pytest.mark.slow
def test_under_xdist_the_controller_writes_the_decision(suite, tmp_path):
    junit = tmp_path / "junit.xml"
    result = run(suite, "-n", "2", "--gatecal-gate", "fails<=2", f"--junitxml={junit}",
                 fail="a,b", subprocess=True)  # fmt: skip
    assert result.ret == 0
    counts, cases = parse(junit)
    assert counts == {"tests": 8, "failures": 0, "errors": 0, "skipped": 2}
    assert cases["gatecal::gate"][0] == "passed"
    assert cases["test_suite::test_judge[b]"][0] == "skipped"
    assert not [p for p in tmp_path.iterdir() if p.name != "junit.xml"]  # no temporary left


def test_with_reruns_the_first_attempt_counts_and_the_file_agrees(pytester, tmp_path):
    pytester.makepyfile(
        test_flaky="""
        import pytest

        SEEN = []

        @pytest.mark.gatecal
        @pytest.mark.parametrize("case", ["a", "b", "c"])
        def test_flaky(case):
            SEEN.append(case)
            assert case != "a", "the judge said no"
            assert case != "b" or SEEN.count("b") > 1  # b fails once, then passes
        """
    )
    junit = tmp_path / "junit.xml"
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", "--reruns",
                                           "1", "--gatecal-gate", "fails<=2",
                                           f"--junitxml={junit}")  # fmt: skip
    assert result.ret == 0
    counts, cases = parse(junit)
    assert counts["failures"] == 0 and counts["skipped"] == 1
    assert cases["gatecal::gate"][0] == "passed"
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", "--reruns",
                                           "1", "--gatecal-gate", "fails<=1",
                                           f"--junitxml={junit}")  # fmt: skip
    assert result.ret == 1  # b's rerun passed, but its first attempt failed: 2 failures
    counts, cases = parse(junit)
    assert cases["gatecal::gate"][0] == "failure"
    assert counts["failures"] == 2  # a, and the gate


def test_writing_the_decision_stays_light(pytester, tmp_path):
    pytester.makepyfile(
        conftest="""
        import sys

        def pytest_unconfigure(config):
            heavy = sorted(m for m in ("numpy", "scipy", "pandas") if m in sys.modules)
            with open("heavy.txt", "w") as f:
                f.write(",".join(heavy))
        """,
        test_light="""
        import pytest

        @pytest.mark.gatecal
        @pytest.mark.parametrize("case", ["a", "b"])
        def test_x(case):
            assert case == "a"
        """,
    )
    junit = tmp_path / "junit.xml"
    result = pytester.runpytest_subprocess("-W", "error", "--gatecal-gate", "fails<=1",
                                           f"--junitxml={junit}", "-p", "no:randomly")  # fmt: skip
    assert result.ret == 0
    assert (pytester.path / "heavy.txt").read_text() == ""
    assert parse(junit)[0]["failures"] == 0


def test_a_sequential_gate_writes_its_decision_too(suite, tmp_path):
    from gatecal import JudgeNoise, Suite, sequential_gate

    gate = sequential_gate(
        Suite.uniform(cases=6, judge_checks=1, code_checks=0, failing=1), JudgeNoise.flip(0.1),
        "sprt", 4, false_alarm=0.05, detection=0.5,
    )  # fmt: skip
    (suite.path / "sprt.json").write_text(json.dumps(gate.design.to_dict()))
    junit = tmp_path / "junit.xml"
    args = ["--gatecal-sequential", "sprt.json", "--gatecal-repeat", "4", f"--junitxml={junit}"]
    result = run(suite, *args, fail="a")  # passes at the last look: a's 4 failures tolerated
    assert result.ret == 0
    counts, cases = parse(junit)
    assert counts["failures"] == 0 and counts["skipped"] == 4
    assert cases["gatecal::gate"][0] == "passed"
    result = run(suite, *args[:3], "2", args[4], fail="a")  # CONTINUE: incomplete, exit 1
    assert result.ret == 1
    counts, cases = parse(junit)
    outcome, message = cases["gatecal::gate"]
    assert outcome == "failure" and message.startswith("sequential gate sprt-4 CONTINUE, exit 1")
    assert counts["failures"] == 2 + 1  # a in both repeats, and the gate
