"""The pytest plugin, run by real pytest through pytester: in-process, and in a subprocess
with pytest-xdist. Every inner run uses -W error."""

import json
import sys
from pathlib import Path

import pytest

import gatecal
from gatecal import pytest_plugin
from gatecal.readers._verdict import LONG_COLUMNS

pytest_plugins = ["pytester"]

SUITE = """
import os
import pytest

FAIL = set(os.environ.get("GATECAL_FAIL", "").split(","))

@pytest.mark.gatecal(kind="judge")
@pytest.mark.parametrize("case", ["a", "b", "c", "d", "e", "f"])
def test_judge(case):
    assert case not in FAIL

def test_plain():
    assert "plain" not in FAIL
"""


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.delenv("GATECAL_FAIL", raising=False)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def run(pytester, *args, fail=""):
    pytester._monkeypatch.setenv("GATECAL_FAIL", fail)
    return pytester.runpytest("-W", "error", "-p", "no:cacheprovider", *args)


def gate_line(result):
    lines = [line for line in result.outlines if line.startswith("gatecal: ")
             and not line.startswith("gatecal: check(s) did not pass")]  # fmt: skip
    assert len(lines) == 1, result.outlines
    return lines[0]


def test_inert_without_options_and_the_marker_is_always_registered(suite):
    result = run(suite, "--strict-markers", fail="a")
    assert result.ret == 1
    assert not [line for line in result.outlines if line.startswith("gatecal:")]
    assert run(suite, "--strict-markers").ret == 0
    assert "gatecal(check=None, kind=None, case=None)" in suite.runpytest("--markers").stdout.str()


def test_off_with_p_no_gatecal(suite):
    result = run(suite, "-p", "no:gatecal", "--gatecal-gate", "fails<=2")
    assert result.ret == 4  # the option does not exist without the plugin
    assert "unrecognized arguments: --gatecal-gate" in result.stderr.str()


def test_gate_passes_although_marked_tests_failed(suite):
    result = run(suite, "--gatecal-gate", "fails<=2", fail="a,b")
    assert result.ret == 0
    result.assert_outcomes(failed=2, passed=5)  # pytest's own line still says "2 failed"
    assert gate_line(result) == (
        "gatecal: gate PASSED (fails<=2: at least 4 of 6 cases must pass; 4 passed), exit 0 "
        "although 2 marked case(s) failed; failing: a, b"
    )


def test_gate_fails_and_unmarked_failures_are_never_tolerated(suite):
    result = run(suite, "--gatecal-gate", "fails<=2", fail="a,b,c")
    assert result.ret == 1
    assert gate_line(result).startswith("gatecal: gate FAILED (fails<=2: at least 4 of 6")
    result = run(suite, "--gatecal-gate", "fails<=2", fail="a,plain")
    assert result.ret == 1
    assert gate_line(result).endswith(
        "; 1 unmarked test(s) failed, never tolerated: test_suite.py::test_plain"
    )


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["-x"], "marked tests gave no verdict (the session stopped early"),
        (["--maxfail", "1"], "marked tests gave no verdict (the session stopped early"),
        (["-k", "not test_judge[f]"], "1 marked test(s) deselected: test_suite.py::test_judge[f]"),
    ],
)
def test_incomplete_evidence_fails(suite, args, reason):
    result = run(suite, "--gatecal-gate", "fails<=3", *args, fail="a")
    assert result.ret == 1
    line = gate_line(result)
    assert line.startswith("gatecal: gate INCOMPLETE, exit 1: incomplete evidence never passes")
    assert reason in line


def test_setup_errors_and_skips_of_marked_tests_are_incomplete(pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.fixture
        def broken():
            raise RuntimeError("no judge")

        @pytest.mark.gatecal
        def test_errors(broken):
            pass

        @pytest.mark.gatecal
        def test_skips():
            pytest.skip("no key")

        @pytest.mark.gatecal
        def test_ok():
            pass
        """
    )
    result = pytester.runpytest("-W", "error", "--gatecal-gate", "fails<=2")
    assert result.ret == 1
    line = gate_line(result)
    assert "1 marked test(s) skipped: test_x.py::test_skips" in line
    assert "1 marked test(s) errored: test_x.py::test_errors" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gatecal-gate", "most"], "gatecal: --gatecal-gate must be 'all', a pass rate"),
        (["--gatecal-gate", "all", "--gatecal-gate-from", "r.json"], "can't be combined"),
        (
            ["--gatecal-repeat", "0"],
            "--gatecal-repeat must be a whole number in [1, 10,000] (each repeat is a collected copy of every marked test) (got '0')",
        ),
        (["--gatecal-repeat", "3", "--gatecal-gate", "all"], "can't be combined with a gate"),
        (["--gatecal-gate-from", "missing.json"], "--gatecal-gate-from could not be read"),
    ],
)
def test_bad_options_are_usage_errors(suite, args, message):
    result = run(suite, *args)
    assert result.ret == 4
    assert message in result.stderr.str()


def test_exit_codes_2_to_5_are_never_changed(pytester):
    pytester.makepyfile(test_broken="import nonexistent_module_xyz\n")
    result = pytester.runpytest("-W", "error", "--gatecal-gate", "all")
    assert result.ret == 2  # interrupted: an error during collection
    assert gate_line(result) == (
        "gatecal: gate not applied: pytest's exit status 2 is never changed"
    )
    empty = pytester.mkdir("empty")
    result = pytester.runpytest("-W", "error", "--gatecal-gate", "all", str(empty))
    assert result.ret == 5  # no tests collected


def test_gate_from_a_recommendation_quotes_the_p_value(suite, tmp_path):
    table = [{"k_min": k, "false_alarm": [0, 0.001, 0.002, 0.004, 0.01, 0.04, 0.3][k],
              "detection": 1.0} for k in range(7)]  # fmt: skip
    # the fields check verifies; the table is recommend's form with round numbers
    rec = {"format": "gatecal recommend", "version": 1, "cases": 6,
           "case_order": [f"c{i}" for i in range(6)], "failures_per_run": [1, 0, 2],
           "targets": {"false_alarm": 0.04, "detection": 0.95},
           "recommended": {"k_min": 5, "false_alarm": 0.04}, "table": table}  # fmt: skip
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(rec))
    result = run(suite, "--gatecal-gate-from", str(path), fail="a")
    assert result.ret == 0
    assert gate_line(result).startswith(
        "gatecal: gate PASSED (fails<=1: at least 5 of 6 cases must pass; 5 passed, "
        "p = 0.3 under the baseline's noise), exit 0"
    )
    rec["cases"], rec["table"], rec["case_order"] = 5, table[:6], rec["case_order"][:5]
    rec["recommended"]["k_min"] = 5
    path.write_text(json.dumps(rec))
    result = run(suite, "--gatecal-gate-from", str(path))
    assert result.ret == 1  # calibrated for another suite: incomplete, even though all passed
    assert "calibrates a gate for 5 cases and this session gates 6" in gate_line(result)


def test_gate_from_a_case_aware_gate_ranks_the_session_among_the_known_good_runs(suite, tmp_path):
    # 20 known-good runs: a..d never failed, e and f failed every time (systematic)
    cases = ["a", "b", "c", "d", "e", "f"]
    rows = [{"case": c, "failures": 20 if c in "ef" else 0, "runs": 20, "rate": 0.5,
             "kind": "systematic" if c in "ef" else "stable"} for c in cases]  # fmt: skip
    known = [{"run": f"night-{j}", "failing": [4, 5], "missing": []} for j in range(20)]
    rec = {"format": "gatecal recommend", "version": 1, "cases": 6,
           "case_order": cases, "failures_per_run": [2] * 20,
           "targets": {"false_alarm": 0.05, "detection": 0.95}, "recommended": None,
           "gate": {"kind": "cases", "meets_targets": True, "shortfall": None},
           "case_gate": {"method": "rank", "cases": rows, "known_good_runs": known,
                         "allowed": 1, "false_alarm": 1 / 21,
                         "false_alarm_target": 0.05}}  # fmt: skip
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(rec))
    result = run(suite, "--gatecal-gate-from", str(path), fail="e,f")
    assert result.ret == 0 and gate_line(result).startswith("gatecal: gate PASSED (case-aware")
    assert "20 known-good runs as much or more, p = 1" in gate_line(result)
    result = run(suite, "--gatecal-gate-from", str(path), fail="a,e,f")
    assert result.ret == 1 and "0 known-good runs as much or more, p = 0.04762" in gate_line(result)
    rec["case_gate"]["allowed"] = 2  # edited by hand: refused
    path.write_text(json.dumps(rec))
    result = run(suite, "--gatecal-gate-from", str(path), fail="a")
    assert result.ret == 4 and "it allows rank 2" in result.stderr.str()


def test_ini_option(suite):
    suite.makeini("[pytest]\ngatecal_gate = fails<=1\n")
    assert run(suite, fail="a").ret == 0
    assert run(suite, fail="a,b").ret == 1


def test_fixture_records_checks_into_junit_and_the_runs_file(pytester, tmp_path):
    pytester.makepyfile(
        test_multi="""
        import pytest

        @pytest.mark.gatecal(case="refund")
        def test_refund(gatecal_verdicts):
            gatecal_verdicts.record("relevancy", True, score=0.9)
            gatecal_verdicts.record("contains-facts", False, kind="code")

        @pytest.mark.gatecal(case="sso")
        def test_sso(gatecal_verdicts):
            gatecal_verdicts.record("relevancy", True)
        """
    )
    junit, runs = tmp_path / "j.xml", tmp_path / "nightly-01.jsonl"
    result = pytester.runpytest("-W", "error", f"--junitxml={junit}", f"--gatecal-runs-out={runs}")
    assert result.ret == 1  # a soft check that failed fails its test
    result.assert_outcomes(failed=1, passed=1)
    assert "gatecal: check(s) did not pass: contains-facts" in result.stdout.str()
    assert gate_line(result) == f"gatecal: 3 verdicts written to {runs}"
    for path in (junit, runs):
        data = gatecal.read_runs([path])
        got = sorted((v.case, v.check, v.kind, v.passed, v.score) for v in data.verdicts)
        assert got == [("refund", "contains-facts", "code", False, None),
                       ("refund", "relevancy", "judge", True, 0.9),
                       ("sso", "relevancy", "judge", True, None)]  # fmt: skip
    assert {v.run for v in gatecal.read_runs([runs]).verdicts} == {"nightly-01"}
    rows = [json.loads(line) for line in runs.read_text().splitlines()]
    assert all(list(row) == list(LONG_COLUMNS) for row in rows)


def test_recorder_refuses_what_is_not_a_verdict():
    rec = pytest_plugin.GatecalVerdicts()
    with pytest.raises(TypeError, match="`passed` must be True or False"):
        rec.record("relevancy", float("nan"))
    with pytest.raises(ValueError, match="`score` must be a finite number"):
        rec.record("relevancy", True, score=float("nan"))
    with pytest.raises(ValueError, match="`passed` must be None when status is error"):
        rec.record("relevancy", False, status="error")
    assert rec.record("relevancy", None, status="error") is False
    with pytest.raises(ValueError, match="recorded twice"):
        rec.record("relevancy", True)


def test_repeats_have_stable_ids_and_recommend_reads_the_runs_file(suite, tmp_path):
    runs = tmp_path / "base.jsonl"
    result = run(suite, "--gatecal-repeat", "3", f"--gatecal-runs-out={runs}", "--co", "-q")
    ids = [line for line in result.outlines if "::test_judge[" in line]
    assert ids[:2] == ["test_suite.py::test_judge[gatecal-r1-a]",
                       "test_suite.py::test_judge[gatecal-r1-b]"]  # fmt: skip
    assert len(ids) == 18
    result = run(suite, "--gatecal-repeat", "3", f"--gatecal-runs-out={runs}", fail="a")
    assert result.ret == 1  # measuring, not gating: pytest's status stands
    data = gatecal.read_runs([runs])
    assert data.runs("healthy") == ["base#1", "base#2", "base#3"]
    assert data.cases() == [f"test_suite.test_judge[{c}]" for c in "abcdef"]
    rec = gatecal.recommend_gate(data, detection=0.0)
    assert rec.runs == 3 and rec.per_case[0].case == "a" and rec.per_case[0].rate.failures == 3


def test_a_rerun_hides_no_failure(pytester, tmp_path):
    pytester.makepyfile(
        test_flaky="""
        import pytest

        SEEN = []

        @pytest.mark.gatecal
        @pytest.mark.parametrize("case", ["a", "b"])
        def test_flaky(case):
            SEEN.append(case)
            assert case != "a" or SEEN.count("a") > 1  # a fails once, then passes
        """
    )
    runs = tmp_path / "r.jsonl"
    result = pytester.runpytest("-W", "error", "--reruns", "1", "--gatecal-gate", "all",
                                f"--gatecal-runs-out={runs}")  # fmt: skip
    assert result.parseoutcomes() == {"passed": 2, "rerun": 1}
    assert result.ret == 1  # pytest would say 0: the first attempt failed
    assert gate_line(result).startswith("gatecal: gate FAILED (all: at least 2 of 2")
    a = next(v for v in gatecal.read_runs([runs]).verdicts if v.case.endswith("[a]"))
    assert a.passed is False and a.attempts == 2


def test_plugin_import_and_a_decided_gate_stay_light(pytester):
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
    result = pytester.runpytest_subprocess("-W", "error", "--gatecal-gate", "fails<=1",
                                           "-p", "no:randomly")  # fmt: skip
    assert result.ret == 0
    assert (pytester.path / "heavy.txt").read_text() == ""
    code = "import sys, gatecal.pytest_plugin; print(sorted(m for m in ('numpy','scipy','pandas') if m in sys.modules))"
    assert pytester.run(sys.executable, "-c", code).outlines == ["[]"]


@pytest.mark.slow
def test_under_xdist_the_controller_decides_and_writes(suite, tmp_path):
    runs = tmp_path / "x.jsonl"
    suite._monkeypatch.setenv("GATECAL_FAIL", "a")
    result = suite.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", "-n", "2",
                                        "--gatecal-repeat", "2", f"--gatecal-runs-out={runs}")  # fmt: skip
    assert result.ret == 1
    data = gatecal.read_runs([runs])
    assert data.runs("healthy") == ["x#1", "x#2"] and len(data.verdicts) == 12
    assert sorted(v.case for v in data.verdicts if not v.passed) == ["test_suite.test_judge[a]"] * 2
    assert not list(tmp_path.glob(".x.jsonl.*"))  # no temporary file left behind
    suite._monkeypatch.setenv("GATECAL_FAIL", "a,b")
    result = suite.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", "-n", "2",
                                        "--gatecal-gate", "fails<=2", "-x")  # fmt: skip
    assert result.ret == 2  # xdist itself ends a -x session as interrupted; left as it is
    assert gate_line(result) == "gatecal: gate not applied: pytest's exit status 2 is never changed"
    result = suite.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", "-n", "2",
                                        "--gatecal-gate", "fails<=2")  # fmt: skip
    assert result.ret == 0 and gate_line(result).startswith("gatecal: gate PASSED")


# -- --gatecal-runs-out never destroys an input, and a lost measurement fails ----------------


@pytest.mark.parametrize("target", ["test_suite.py", "conftest.py", "link.py", "gate.json"])
def test_runs_out_never_replaces_an_input(suite, target):
    (suite.path / "conftest.py").write_text("# the suite's conftest\n")
    (suite.path / "link.py").symlink_to(suite.path / "test_suite.py")
    gate = suite.path / "gate.json"
    gate.write_text("{}")
    before = {p.name: p.read_bytes() for p in suite.path.iterdir() if p.is_file()}
    extra = ["--gatecal-gate-from", str(gate)] if target == "gate.json" else []
    result = run(suite, "--gatecal-runs-out", str(suite.path / target), *extra)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "must not be one of the inputs" in result.stderr.str() + result.stdout.str()
    after = {p.name: p.read_bytes() for p in suite.path.iterdir() if p.is_file()}
    assert after == before


def test_runs_out_and_junitxml_must_differ(suite):
    path = suite.path / "out.xml"
    result = run(suite, "--junitxml", str(path), "--gatecal-runs-out", str(path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gatecal-runs-out" in result.stderr.str() and "must differ from --junitxml" in (
        result.stderr.str()
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_lost_runs_file_fails_the_session_even_when_the_gate_passes(suite):
    """/dev/full refuses every write (ENOSPC), as a full disk does."""
    result = run(suite, "--gatecal-gate", "fails<=2", "--gatecal-runs-out", "/dev/full")
    assert result.ret == 1
    assert "so the session fails" in gate_line(result) and "gate PASSED" in gate_line(result)


@pytest.mark.parametrize("value", ["99999999", "0", "\u0663", "1_0"])
def test_repeat_is_bounded_and_ascii(suite, value):
    result = run(suite, "--gatecal-repeat", value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--gatecal-repeat must be a whole number in [1, 10,000]" in result.stderr.str()
