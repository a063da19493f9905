"""The Java example (examples/java/) builds offline with Maven, and gatecal reads its reports
as the tutorial (docs/tutorials/java-maven.md) says.

One offline build (``mvn -o test``, the CI run of the tutorial: judge seed ci-1, reruns on),
shared by every test here. CI has ``mvn``, so there the tests run; elsewhere, without ``mvn``,
they skip, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from gatecal import read_runs
from tests.paths import ROOT

EXAMPLE = ROOT / "examples" / "java"
CLASS = "example.GoldenDatasetTest.answers(GoldenCase)"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("mvn") is None:
        if os.environ.get("CI"):
            pytest.fail("mvn is not on PATH: CI must build the Java example")
        pytest.skip("mvn is not on PATH")
    project = tmp_path_factory.mktemp("java") / "java"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("target"))
    done = subprocess.run(
        ["mvn", "-o", "-q", "-B", "test", "-Djudge.seed=ci-1",
         "-Dsurefire.rerunFailingTestsCount=2", "-Dmaven.test.failure.ignore=true"],
        cwd=project, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return project / "target" / "surefire-reports"


def _golden_ids() -> list[str]:
    lines = (EXAMPLE / "src" / "test" / "resources" / "support-golden.txt").read_text("utf-8")
    return [line.split("|")[0].strip() for line in lines.splitlines() if line and line[0] != "#"]


def test_each_golden_row_is_one_case_named_after_it(reports):
    data = read_runs([reports])
    assert data.cases() == [f"{CLASS}[{case}]" for case in _golden_ids()]
    assert len(data.runs("healthy")) == 1 and len(data.verdicts) == 12


def test_a_rerun_flake_counts_its_first_attempt(reports):
    # Surefire reran the one case whose first judge verdict was flipped, and it passed then
    (report,) = reports.glob("TEST-*.xml")
    flaky = [
        case.get("name")
        for case in ET.parse(report).getroot().iter("testcase")
        if case.find("flakyFailure") is not None
    ]
    assert len(flaky) == 1
    data = read_runs([reports])
    last = read_runs([reports], attempts="last")
    # Surefire's phrased name "answers(GoldenCase) sso-plan" is case answers(GoldenCase)[sso-plan]
    name = flaky[0].removeprefix("answers(GoldenCase) ")
    (verdict,) = [v for v in data.verdicts if v.case == f"{CLASS}[{name}]"]
    assert verdict.passed is False and verdict.attempts == 2 and data.reruns == 1
    assert all(v.passed for v in last.verdicts)
