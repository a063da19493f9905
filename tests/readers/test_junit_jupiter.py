"""JUnit 5 suites read as their author meant them, on files the real tools wrote.

The fixtures (``tests/fixtures/junit/surefire3/``, ``console-launcher/``; how they were made:
``tests/fixtures/junit/README.md``) come from one class, ``example.JudgeTest``: a
``@RepeatedTest(3) factChecking`` whose three repetitions pass, a
``@ParameterizedTest(name = "{0}") relevancy`` over answer-ok, answer-broken (judged "no"
every time) and answer-terse, and ``consistency``, which fails its first attempt in a JVM
and passes after (flaky under ``rerunFailingTestsCount``).
"""

from __future__ import annotations

import pytest

from gatecal import read_runs
from tests.paths import FIXTURES

JUNIT = FIXTURES / "junit"
CLASS = "example.JudgeTest."


def _grid(data):
    """case -> its outcomes over the runs in run order: . pass, x fail, - missing."""
    runs, cases, outcome = data.outcome_array("healthy")
    order = sorted(range(len(runs)), key=lambda r: runs[r])
    marks = {1: ".", 0: "x", -1: "-"}
    return {case: "".join(marks[int(outcome[r, c])] for r in order) for c, case in enumerate(cases)}


@pytest.mark.parametrize("folder", ["default", "default-rerun"])
def test_surefire_default_reporter_repetitions_are_repeats_of_one_case(folder):
    # Surefire 3.2.5 writes <testcase name="factChecking"> three times: one case passing
    # three times, not one test rerun three times that "failed"
    data = read_runs([JUNIT / "surefire3" / folder])
    grid = _grid(data)
    assert grid[CLASS + "factChecking"] == "..."
    assert sorted(data.runs("healthy")) == [f"{CLASS[:-1]}#{i}" for i in (1, 2, 3)]
    # the parameter is not in the file: the invocation index stays, stable between runs
    assert grid[CLASS + "relevancy(String)[2]"] == "x--"
    assert grid[CLASS + "relevancy(String)[1]"] == ".--"
    assert len(data.cases()) == 5


@pytest.mark.parametrize("reporter", ["default", "phrased"])
def test_surefire_rerun_children_are_rerun_attempts(reporter):
    # rerunFailingTestsCount=2: consistency failed, then passed on its rerun (flakyFailure);
    # answer-broken failed all three attempts (failure + 2 rerunFailure)
    plain = read_runs([JUNIT / "surefire3" / f"{reporter}-rerun"])
    last = read_runs([JUNIT / "surefire3" / f"{reporter}-rerun"], attempts="last")
    flaky = next(c for c in plain.cases() if c.startswith(CLASS + "consistency"))
    assert plain.reruns == 3
    assert _grid(plain)[flaky] == "x--"  # its first attempt counts, by default
    assert _grid(last)[flaky] == ".--"
    attempts = {v.case: v.attempts for v in plain.verdicts}
    assert attempts[flaky] == 2
    assert (
        attempts[next(c for c in plain.cases() if "answer-broken" in c or c.endswith("[2]"))] == 3
    )
    assert max(v.attempts for v in plain.verdicts if "factChecking" in v.case) == 1


def test_surefire_phrased_reporter_keeps_the_parameter_and_repeats_repetitions():
    data = read_runs([JUNIT / "surefire3" / "phrased"])
    grid = _grid(data)
    # "factChecking() repetition 1 of 3" .. "3 of 3": repetitions of one case
    assert grid[CLASS + "factChecking()"] == "..."
    assert grid[CLASS + "relevancy(String)[answer-broken]"] == "x--"
    assert grid[CLASS + "relevancy(String)[answer-ok]"] == ".--"
    assert not [c for c in data.cases() if "repetition" in c]


def test_console_launcher_uses_unique_ids_and_display_names():
    # the console launcher writes factChecking()[1..3] and relevancy(String)[1..3] alike; its
    # <system-out> says which are repetitions and what each invocation is called. Its
    # reports folder also holds the vintage and suite engines' files with no testcase.
    data = read_runs([JUNIT / "console-launcher"])
    grid = _grid(data)
    assert grid[CLASS + "factChecking()"] == "..."
    assert grid[CLASS + "relevancy(String)[answer-broken]"] == "x--"
    assert grid[CLASS + "consistency()"] == "x--"
    assert len(data.cases()) == 5
    empty = [f for f in data.files if f.verdicts == 0]
    assert len(empty) == 2 and all("ran none" in f.notes[-1] for f in empty)


def test_names_taken_as_they_are_when_asked():
    # --junit-repeats none: Surefire's repeated names are attempts again, as before
    data = read_runs([JUNIT / "surefire3" / "default"], junit_repeats="none")
    assert data.runs("healthy") == ["example.JudgeTest"]
    assert data.reruns == 2


def test_pytest_rerunfailures_repeated_elements_stay_reruns():
    # pytest-rerunfailures 16.7 writes one <testcase> per attempt: reruns, not repetitions
    data = read_runs([JUNIT / "rerunfailures" / "v16.7"])
    assert len(data.runs("healthy")) == 1
    assert data.reruns == 5


def test_phrased_names_without_repetitions_keep_the_display_name(tmp_path):
    # the phrased file without its @RepeatedTest: no repeats, one run, the same case ids
    text = (JUNIT / "surefire3" / "phrased" / "TEST-example.JudgeTest.xml").read_text("utf-8")
    kept = "\n".join(line for line in text.splitlines() if "repetition" not in line)
    (tmp_path / "TEST-example.JudgeTest.xml").write_text(kept, encoding="utf-8")
    data = read_runs([tmp_path])
    assert data.runs("healthy") == ["TEST-example.JudgeTest"[5:]]
    assert sorted(data.cases()) == sorted(
        [CLASS + f"relevancy(String)[answer-{a}]" for a in ("ok", "broken", "terse")]
        + [CLASS + "consistency"]
    )
