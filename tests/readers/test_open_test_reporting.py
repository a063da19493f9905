"""Open Test Reporting XML (the JUnit Platform's own report) read as JUnit meant it.

``junit-5.9.2/`` was written by JUnit's listener on the same run of ``example.JudgeTest`` as the
console launcher's legacy XML in ``console-launcher/`` (see
``tests/fixtures/junit/open-test-reporting/README.md``); ``ota4j/`` holds the format
repository's own files.
"""

from __future__ import annotations

import pytest

from gatecal import read_runs
from gatecal.readers._read import detect_format
from gatecal.readers._verdict import RunsError
from tests.paths import FIXTURES

OTR = FIXTURES / "junit" / "open-test-reporting"
JUNIT_FILE = OTR / "junit-5.9.2" / "junit-platform-events.xml"


def _cells(data):
    """{(run, case): passed or status} of every verdict."""
    return {(v.run, v.case): v.passed if v.status == "ok" else v.status for v in data.verdicts}


def test_junit_file_reads_repetitions_and_display_names():
    data = read_runs([JUNIT_FILE])
    assert detect_format(JUNIT_FILE, JUNIT_FILE.read_bytes()) == "open-test-reporting"
    cells = _cells(data)
    run = "junit-platform-events"
    assert [cells[(f"{run}#{i}", "example.JudgeTest.factChecking()")] for i in (1, 2, 3)] == [
        True, True, True]  # fmt: skip
    assert cells[(f"{run}#1", "example.JudgeTest.relevancy(String)[answer-broken]")] is False
    assert cells[(f"{run}#1", "example.JudgeTest.consistency()")] is False
    assert len(data.cases()) == 5 and data.reruns == 0


def test_junit_file_and_console_launcher_xml_of_one_run_agree():
    # two files written by two writers of one test run: the same cases, the same outcomes
    otr = read_runs([JUNIT_FILE])
    legacy = read_runs([FIXTURES / "junit" / "console-launcher"])

    def by_repeat(data):
        return {(v.run.rpartition("#")[2], v.case): v.passed for v in data.verdicts}

    assert by_repeat(otr) == by_repeat(legacy)


def test_format_repository_files_read_in_any_event_order():
    ordered = read_runs([OTR / "ota4j" / "events-ordered-1.xml"])
    unordered = read_runs([OTR / "ota4j" / "events-unordered-1.xml"])
    assert {c: p for (_, c), p in _cells(ordered).items()} == {
        c: p for (_, c), p in _cells(unordered).items()
    }
    cells = {c: p for (_, c), p in _cells(ordered).items()}
    # ERRORED is an error, neither a pass nor a failure
    assert cells["fn-analyze-string/analyzeString-001"] == "error"
    assert cells["fn-analyze-string/analyzeString-003"] is True
    assert ordered.errors == 3


def test_events_and_hierarchy_of_one_execution_agree():
    events = read_runs([OTR / "ota4j" / "events.xml"])
    hierarchy = read_runs([OTR / "ota4j" / "hierarchy.xml"])
    assert [(v.case, v.passed) for v in events.verdicts] == [("test", True)]
    assert [(v.case, v.passed) for v in hierarchy.verdicts] == [("test", True)]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('<result status="FAILED">', '<result status="BROKEN">', "unknown result status 'BROKEN'"),
        ('<e:finished id="10"', '<e:finished id="99"', "<finished id='99'> was never started"),
        ('parentId="3"', 'parentId="77"', "names parent '77', never started"),
        ('parentId="2"', 'parentId="4"', "is its own ancestor"),  # class 3 under its test 4
    ],
)
def test_broken_files_are_refused_in_one_line(tmp_path, old, new, message):
    text = JUNIT_FILE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "report.xml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(RunsError, match=message):
        read_runs([path])


def test_an_aborted_test_is_missing_data(tmp_path):
    text = JUNIT_FILE.read_text(encoding="utf-8")
    path = tmp_path / "report.xml"
    path.write_text(text.replace('<result status="FAILED">', '<result status="ABORTED">'), "utf-8")
    data = read_runs([path])
    assert data.skipped == 2 and not [v for v in data.verdicts if v.passed is False]


def test_read_as_junit_it_says_which_format_it_is():
    with pytest.raises(RunsError, match="Open Test Reporting XML, not JUnit XML"):
        read_runs([JUNIT_FILE], input_format="junit")
