"""The pytest plugin as a user without pytest-xdist, pytest-rerunfailures or pytest-randomly
has it (in a subprocess, those plugins blocked), and its case ids wherever pytest starts.

The rest of the plugin's tests run with pytest-xdist loaded, which declares the hooks the
plugin implements for it: they cannot see a plugin that needs xdist to load. .ci/run also
runs the plugin in a fresh virtual environment holding only the built wheel and pytest.
"""

import json
from pathlib import Path

import pytest

import gatecal
from tests.pytest_plugin.test_plugin import SUITE, gate_line

pytest_plugins = ["pytester"]

ALONE = ("-p", "no:xdist", "-p", "no:rerunfailures", "-p", "no:randomly", "-p", "no:cacheprovider")


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.delenv("GATECAL_FAIL", raising=False)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def alone(pytester, *args, fail=""):
    pytester._monkeypatch.setenv("GATECAL_FAIL", fail)
    return pytester.runpytest_subprocess("-W", "error", *ALONE, *args)


@pytest.mark.slow  # a subprocess each: about a second of pytest start-up
def test_every_option_works_with_pytest_alone(suite, tmp_path):
    # before the xdist hook was optional, each of these was INTERNALERROR, exit 3
    runs = tmp_path / "base.jsonl"
    result = alone(suite, "--gatecal-repeat", "2", f"--gatecal-runs-out={runs}", fail="a")
    assert result.ret == 1, result.outlines  # measuring: pytest's own status
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    data = gatecal.read_runs([runs])
    assert data.runs("healthy") == ["base#1", "base#2"] and len(data.verdicts) == 12
    result = alone(suite, "--gatecal-gate", "fails<=2", "--junitxml=out.xml", fail="a,b")
    assert result.ret == 0, result.outlines
    assert gate_line(result).startswith("gatecal: gate PASSED (fails<=2: at least 4 of 6")
    assert 'type="gatecal.tolerated"' in (suite.path / "out.xml").read_text()


@pytest.mark.slow
def test_the_sequential_gate_stops_early_with_pytest_alone(suite):
    design = gatecal.sequential_gate(
        gatecal.Suite.uniform(cases=6, judge_checks=1, code_checks=0, failing=1),
        gatecal.JudgeNoise.flip(0.1), "sprt", 4, false_alarm=0.05, detection=0.5,
    )  # fmt: skip
    (suite.path / "sprt.json").write_text(json.dumps(design.design.to_dict()))
    result = alone(suite, "--gatecal-sequential", "sprt.json", "--gatecal-repeat", "4")
    assert result.ret == 0, result.outlines
    result.assert_outcomes(passed=7)  # stopped after the first repeat
    assert "sequential gate sprt-4 PASSED after run 1 of 4" in gate_line(result)


# -- case ids do not depend on where pytest is started ---------------------------------------

GOLDEN = """
import pytest

@pytest.mark.gatecal
@pytest.mark.parametrize("case", ["a", "b", "c"])
def test_answer(case):
    assert case != "c"
"""


def _measure(pytester, cwd: Path, args: list[str], out: Path) -> list[str]:
    pytester._monkeypatch.chdir(cwd)  # pytest's rootdir follows where it starts
    result = pytester.runpytest("-p", "no:cacheprovider", *args, f"--gatecal-runs-out={out}")
    assert result.ret == 1, result.outlines  # case c fails
    return sorted({json.loads(line)["case"] for line in out.read_text().splitlines()})


def _project(tmp_path: Path, marker: str | None, source: str = GOLDEN) -> Path:
    golden = tmp_path / "project" / "tests" / "golden"
    golden.mkdir(parents=True)
    (golden / "test_golden.py").write_text(source)
    if marker:
        (tmp_path / "project" / marker).mkdir()
    return tmp_path / "project"


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        (None, "test_golden.test_answer"),  # no project marker: the file's package
        (".git", "tests.golden.test_golden.test_answer"),  # the project's top directory
    ],
)
def test_case_ids_are_the_same_wherever_pytest_starts(pytester, tmp_path, marker, expected):
    # before: tests.golden.test_golden..., golden.test_golden... or test_golden..., by start
    project = _project(tmp_path, marker)
    starts = [
        (project, ["tests/golden"]),
        (project / "tests" / "golden", []),
        (project / "tests", ["golden/test_golden.py"]),
    ]
    seen = [_measure(pytester, cwd, args, tmp_path / f"r{i}.jsonl")
            for i, (cwd, args) in enumerate(starts)]  # fmt: skip
    assert seen == [[f"{expected}[{c}]" for c in "abc"]] * len(starts)


def test_a_configuration_file_keeps_pytest_s_own_ids(pytester, tmp_path):
    project = _project(tmp_path, None)
    (project / "tests" / "pytest.ini").write_text("[pytest]\n")
    seen = _measure(pytester, project, ["tests/golden"], tmp_path / "r.jsonl")
    assert seen == [f"golden.test_golden.test_answer[{c}]" for c in "abc"]  # rootdir: tests/


def test_check_reads_a_run_started_elsewhere_against_the_baseline(pytester, tmp_path):
    """A baseline measured from the project's top and a CI run started in the tests' folder
    name the same cases, so check decides the run: before, none of the CI run's cases was
    the baseline's and check said INCOMPLETE while the plugin's own gate passed."""
    project = _project(tmp_path, ".git", GOLDEN.replace('case != "c"', "True"))
    base, ci = tmp_path / "base.jsonl", tmp_path / "ci.jsonl"
    pytester._monkeypatch.chdir(project)
    assert pytester.runpytest("-p", "no:cacheprovider", "tests", "--gatecal-repeat", "3",
                              f"--gatecal-runs-out={base}").ret == 0  # fmt: skip
    pytester._monkeypatch.chdir(project / "tests" / "golden")
    result = pytester.runpytest("-p", "no:cacheprovider", "--gatecal-gate", "all",
                                f"--gatecal-runs-out={ci}")  # fmt: skip
    assert result.ret == 0 and gate_line(result).startswith("gatecal: gate PASSED")
    check = gatecal.check_gate(gatecal.read_runs([ci]), gatecal.read_runs([base]), gate="all")
    assert (check.decision, check.passed) == ("pass", 3), check.reasons
