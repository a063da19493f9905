"""The readers, on files the real tools wrote (tests/fixtures/*/README.md says how).

Every expected outcome below is the one the fixture's README records from the tool's own
terminal output or the generating script's seeded verdicts, not read back from our reader.
"""

import json
import math
import subprocess
import sys
import textwrap

import pytest

from gatecal import RunsError, read_runs, recommend_gate
from gatecal.readers._read import detect_format
from gatecal.readers._summary import render_runs, runs_summary
from tests.conftest import run_cli
from tests.paths import FIXTURES

JUNIT = FIXTURES / "junit"
INSPECT = FIXTURES / "inspect_ai"
DEEPEVAL = FIXTURES / "deepeval"
PROMPTFOO = FIXTURES / "promptfoo"


def _grid(data, build="healthy"):
    """{short case: outcome string over runs}: '.' pass, 'x' fail, '-' missing."""
    runs, cases, matrix = data.case_outcomes(build)
    names = data.short_names()
    symbol = {1: ".", 0: "x", -1: "-"}
    return {
        names[c]: "".join(symbol[matrix[i][j]] for i in range(len(runs)))
        for j, c in enumerate(cases)
    }


# -- JUnit layouts ---------------------------------------------------------------------


def test_artefact_folders_are_runs_named_after_the_folder():
    data = read_runs([JUNIT / "artefacts"])
    assert data.runs("healthy") == ["build-1041", "build-1042", "build-1043"]
    assert data.skipped == 1 and [s.run for s in data.skips] == ["build-1042"]
    # the README's table: greeting-tone fails in 1041, cites-source in 1042 and 1043,
    # no-pii skipped in 1042 (quota): missing data, not an error
    assert _grid(data) == {
        "refund-policy": "...",
        "greeting-tone": "x..",
        "cites-source": ".xx",
        "no-pii": ".-.",
        "test_prompt_template_renders": "...",
    }
    rec = recommend_gate(data, regression="1")
    assert rec.runs == 3 and rec.cases == 5 and rec.missing == 1 and rec.skipped == 1
    assert rec.measured.noise.failures == 3 and rec.measured.noise.trials == 14


@pytest.mark.parametrize("scope", ["scope-function", "scope-session"])
def test_pytest_repeat_copies_are_runs_of_one_session(scope):
    data = read_runs([JUNIT / "pytest-repeat" / scope])
    assert data.runs("healthy") == ["junit#1", "junit#2", "junit#3"]
    assert data.sessions() == ["junit"]
    assert len(data.cases()) == 5
    assert data.cases()[0] == "tests.test_judge.test_judge[refund-policy]"  # the full id
    named = read_runs([JUNIT / "pytest-repeat" / scope], junit_repeats="none")
    assert len(named.runs("healthy")) == 1 and len(named.cases()) == 15


def test_flakefinder_copies_only_when_asked():
    plain = read_runs([JUNIT / "flakefinder"])
    assert len(plain.runs("healthy")) == 1 and len(plain.cases()) == 15
    data = read_runs([JUNIT / "flakefinder"], junit_repeats="flakefinder")
    assert data.runs("healthy") == ["junit#1", "junit#2", "junit#3"]
    # README: refund-policy F P P; no-pii P F F; the rest pass
    grid = _grid(data)
    assert grid["refund-policy"] == "x.." and grid["no-pii"] == ".xx"
    assert grid["greeting-tone"] == grid["cites-source"] == "..."


def test_rerunfailures_attempts_count_as_the_failures_they_were():
    # README: refund-policy F F P, greeting-tone F P, cites-source F F F; terminal "5 rerun"
    first = read_runs([JUNIT / "rerunfailures" / "v16.7"])
    assert first.reruns == 5 and first.attempts_policy == "first"
    grid = _grid(first)
    assert grid["refund-policy"] == grid["greeting-tone"] == grid["cites-source"] == "x"
    assert grid["no-pii"] == "."
    last = read_runs([JUNIT / "rerunfailures" / "v16.7"], attempts="last")
    grid = _grid(last)
    assert grid["cites-source"] == "x" and grid["refund-policy"] == grid["greeting-tone"] == "."
    by_case = {v.case.split("[")[-1].rstrip("]"): v.attempts for v in first.verdicts}
    assert by_case["refund-policy"] == 3 and by_case["greeting-tone"] == 2
    assert by_case["cites-source"] == 3 and by_case["no-pii"] == 1


def test_both_junit_families_read_the_same():
    one = read_runs([JUNIT / "pytest-plain" / "xunit1"])
    two = read_runs([JUNIT / "pytest-plain" / "xunit2"])
    assert _grid(one) == _grid(two)
    assert _grid(one)["cites-source"] == "x"


def test_gatecal_properties_beat_name_parsing(tmp_path):
    """A real pytest run whose tests record gatecal.* properties (what our plugin writes)."""
    test_file = tmp_path / "test_props.py"
    test_file.write_text(
        textwrap.dedent("""
        import json
        import pytest

        @pytest.mark.parametrize("i", [1, 2])
        @pytest.mark.parametrize("case", ["alpha", "beta"])
        def test_judge(case, i, record_property):
            record_property("gatecal.case", case)
            record_property("gatecal.repeat", str(i))
            verdicts = [{"check": "relevant", "kind": "judge", "passed": case != "beta" or i == 1},
                        {"check": "price", "kind": "code", "passed": True}]
            record_property("gatecal.verdicts", json.dumps(verdicts))
            assert all(v["passed"] for v in verdicts)
        """)
    )
    out = tmp_path / "junit.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore",
         str(test_file), f"--junitxml={out}"],
        cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    data = read_runs([out])
    assert data.runs("healthy") == ["junit#1", "junit#2"]
    assert data.cases() == ["alpha", "beta"] and data.checks() == ["relevant", "price"]
    judged = {(v.run, v.case): v.passed for v in data.verdicts if v.check == "relevant"}
    assert judged == {("junit#1", "alpha"): True, ("junit#2", "alpha"): True,
                      ("junit#1", "beta"): True, ("junit#2", "beta"): False}  # fmt: skip
    assert {v.kind for v in data.verdicts} == {"judge", "code"}


def _write_junit(path, cases):
    """A minimal JUnit file: cases = [(classname, name, child-xml)]."""
    body = "".join(
        f'<testcase classname="{c}" name="{n}">{child}</testcase>' for c, n, child in cases
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'<testsuite name="s" tests="{len(cases)}">{body}</testsuite>')


@pytest.mark.parametrize("tool", ["surefire", "gradle"])
def test_surefire_and_gradle_nights_are_one_run_per_folder(tool):
    data = read_runs([JUNIT / tool])
    assert data.runs("healthy") == ["night-1", "night-2", "night-3"]
    # t1 is in both classes: only classname + name tells them apart
    assert data.cases() == ["example.ATest.t1", "example.ATest.t2", "example.BTest.t1"]
    # the README's tables; Surefire night-2 reran: ATest.t1 failed, then passed (flaky)
    assert _grid(data) == {"ATest.t1": "xx.", "ATest.t2": "..x", "BTest.t1": ".x."}
    assert {f.detail for f in data.files} == {tool}
    if tool == "surefire":
        assert data.reruns == 3  # ATest.t1 one rerun, BTest.t1 two
        assert _grid(read_runs([JUNIT / tool], attempts="last"))["ATest.t1"] == "x.."


def test_per_class_files_in_a_folder_are_one_run(tmp_path):
    # Surefire's layout, in its documented schema: TEST-<class>.xml per class per night
    for night in (1, 2):
        _write_junit(tmp_path / f"night-{night}" / "TEST-example.ATest.xml",
                     [("example.ATest", "t1", "<failure/>" if night == 2 else "")])  # fmt: skip
        _write_junit(tmp_path / f"night-{night}" / "TEST-example.BTest.xml",
                     [("example.BTest", "t1", ""), ("example.BTest", "t2", "")])  # fmt: skip
    data = read_runs([tmp_path])
    assert data.runs("healthy") == ["night-1", "night-2"]
    assert data.cases() == ["example.ATest.t1", "example.BTest.t1", "example.BTest.t2"]
    assert list(data.short_names().values()) == ["ATest.t1", "BTest.t1", "BTest.t2"]
    assert _grid(data)["ATest.t1"] == ".x"
    assert any("one run per folder" in n for f in data.files for n in f.notes)


def test_surefire_flaky_and_rerun_children_are_attempts(tmp_path):
    # documented Surefire schema: flakyFailure = failed then passed; rerunFailure = failed again
    _write_junit(tmp_path / "TEST-A.xml", [
        ("A", "flaky", "<flakyFailure message='m'/>"),
        ("A", "broken", "<failure message='m'/><rerunFailure message='m'/><rerunFailure/>"),
        ("A", "fine", ""),
        ("A", "crashed", "<error message='boom'/>"),
    ])  # fmt: skip
    first = read_runs([tmp_path / "TEST-A.xml"])
    assert first.reruns == 3
    status = {v.case: (v.status, v.passed) for v in first.verdicts}
    assert status == {"A.flaky": ("ok", False), "A.broken": ("ok", False),
                      "A.fine": ("ok", True), "A.crashed": ("error", None)}  # fmt: skip
    last = read_runs([tmp_path / "TEST-A.xml"], attempts="last")
    assert {v.case: v.passed for v in last.verdicts}["A.flaky"] is True


def test_same_named_runs_in_different_places_stay_apart(tmp_path):
    for where in ("a/nightly", "b/nightly"):
        _write_junit(tmp_path / where / "junit.xml", [("m", "t", "")])
    data = read_runs([tmp_path])
    assert data.runs("healthy") == ["a/nightly", "b/nightly"]


def test_reading_is_linear_in_size(tmp_path):
    """2 runs x 20,000 testcases: the old reader was quadratic (over a minute)."""
    for run in (1, 2):
        _write_junit(tmp_path / f"run-{run}.xml", [("m", f"t{i}", "") for i in range(20000)])
    data = read_runs([tmp_path])
    assert len(data.cases()) == 20000 and len(data.runs("healthy")) == 2
    rec = recommend_gate(data, regression="10")
    assert rec.cases == 20000


# -- inspect_ai ------------------------------------------------------------------------


def _verdict_keys(data):
    return sorted(
        (v.run.rsplit("#", 1)[1], v.case, v.check, v.status, v.passed) for v in data.verdicts
    )


def test_inspect_json_and_eval_logs_read_the_same():
    pytest.importorskip("zstandard", reason="the frameworks extra; .ci/run installs it")
    a = read_runs([INSPECT / "main.json"])
    b = read_runs([INSPECT / "main.eval"])
    assert _verdict_keys(a) == _verdict_keys(b)
    assert a.runs("healthy") == ["main#1", "main#2", "main#3"]
    assert len(a.cases()) == 6 and a.checks() == ["includes", "concise"]
    # README: capital-japan epoch 2 is the errored sample (every scorer an error), sky-colour
    # epoch 2's concise is NaN (unscored), hamlet-author epoch 2's concise is P (fail)
    status = {(v.case, v.run, v.check): (v.status, v.passed) for v in a.verdicts}
    assert status[("capital-japan", "main#2", "includes")] == ("error", None)
    assert status[("capital-japan", "main#2", "concise")] == ("error", None)
    assert status[("sky-colour", "main#2", "concise")] == ("unscored", None)
    assert status[("hamlet-author", "main#2", "concise")] == ("ok", False)
    assert a.errors == 2 and a.unscored == 1
    assert "7" in a.cases()  # an integer sample id


@pytest.mark.parametrize(
    "path",
    [
        INSPECT / "main.json",
        DEEPEVAL / "repeat3-ignore-errors",
        JUNIT / "rerunfailures-setup-error",
        PROMPTFOO / "edge_cases.json",
    ],
    ids=["inspect", "deepeval", "junit", "promptfoo"],
)
def test_outcome_array_is_each_cells_verdicts_taken_in_turn(path):
    """outcome[run, case]: 0 where any check failed, else -1 where any did not score
    (an error, unscored or skipped) or none is there, else 1; from the verdicts one by one."""
    data = read_runs([path])
    for build in data.builds():
        runs, cases, outcome = data.outcome_array(build)
        cells: dict[tuple[str, str], list[tuple[str, bool | None]]] = {}
        for v in data.verdicts:
            if v.build == build:
                cells.setdefault((v.run, v.case), []).append((v.status, v.passed))
        for i, run in enumerate(runs):
            for j, case in enumerate(cases):
                got = cells.get((run, case), [])
                if any(status == "ok" and passed is False for status, passed in got):
                    want = 0
                elif any(status != "ok" for status, _ in got) or not got:
                    want = -1
                else:
                    want = 1
                assert outcome[i, j] == want, (build, run, case, got)


def test_inspect_partial_policy():
    key = ("hamlet-author", "graded#3", "model_graded_qa")
    for policy, expected in (("fail", ("ok", False)), ("pass", ("ok", True)),
                             ("unscored", ("unscored", None))):  # fmt: skip
        data = read_runs([INSPECT / "graded.json"], partial=policy)
        got = {(v.case, v.run, v.check): (v.status, v.passed) for v in data.verdicts}
        assert got[key] == expected
    data = read_runs([INSPECT / "graded.json"])
    assert {v.kind for v in data.verdicts if v.check == "model_graded_qa"} == {"judge"}


def test_inspect_numbers_are_verdicts_only_with_a_threshold():
    bare = read_runs([INSPECT / "numeric.json"])
    assert bare.unscored == len(bare.verdicts) and any(
        "--score-threshold similarity=T" in w for w in bare.warnings
    )
    data = read_runs([INSPECT / "numeric.json"], thresholds={"similarity": 0.5})
    assert data.unscored == 0
    assert all(v.passed == (v.score >= 0.5) for v in data.verdicts)


def test_an_eval_stopped_by_an_error_is_flagged_incomplete():
    data = read_runs([INSPECT / "main-fail-on-error.json"])
    assert any("status 'error'" in w and "incomplete" in w for w in data.warnings)


def test_the_same_eval_twice_is_refused(tmp_path):
    copy = tmp_path / "copy.json"
    copy.write_bytes((INSPECT / "main.json").read_bytes())
    with pytest.raises(RunsError, match="the same invocation"):
        read_runs([INSPECT / "main.json", copy])


def test_eval_without_zstandard_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(
        RunsError,
        match=r"install the optional reader: pip install zstandard \(gatecal's extra 'frameworks'\)",
    ):
        read_runs([INSPECT / "main.eval"])


# -- DeepEval --------------------------------------------------------------------------


def test_deepeval_repeats_metrics_and_errors():
    (path,) = (DEEPEVAL / "repeat3-ignore-errors").glob("test_run_*.json")
    data = read_runs([path])
    assert len(data.runs("healthy")) == 3 and len(data.sessions()) == 1
    assert [data.short_names()[c] for c in data.cases()] == [
        "capital-france", "spider-legs", "tides-moon", "tides-miss", "no-latency"]  # fmt: skip
    assert data.checks() == ["Answer Relevancy", "Contains Keyword", "Tool Latency"]
    kinds = {v.check: v.kind for v in data.verdicts}
    assert kinds == {
        "Answer Relevancy": "judge",
        "Contains Keyword": "code",
        "Tool Latency": "code",
    }
    errored = {(v.case, v.check) for v in data.verdicts if v.status == "error"}
    assert errored == {("test_golden[no-latency]", "Tool Latency")} and data.errors == 3
    # the latest-run copy is the same run inside {"testRunData": ...}
    latest = read_runs([DEEPEVAL / "repeat3-ignore-errors" / ".deepeval" / ".latest_test_run.json"])
    assert _verdict_keys(latest) == _verdict_keys(data)


def test_deepeval_errors_without_ignore_flag_are_errors_too():
    (path,) = (DEEPEVAL / "repeat3-raise").glob("test_run_*.json")
    data = read_runs([path])
    errored = {(v.case, v.check) for v in data.verdicts if v.status == "error"}
    assert errored == {("test_golden[no-latency]", "Tool Latency")}


def test_deepeval_json_and_its_junit_agree_where_no_metric_errored():
    (path,) = (DEEPEVAL / "repeat3-ignore-errors").glob("test_run_*.json")
    ours = _grid(read_runs([path]))
    junit = _grid(read_runs([DEEPEVAL / "repeat3-ignore-errors" / "junit.xml"]))
    assert ours.keys() == junit.keys()
    for case, row in ours.items():
        for a, b in zip(row, junit[case], strict=True):
            assert a == b or (a == "-" and b == "x")  # an errored metric fails the pytest test


def test_two_deepeval_invocations_are_two_sessions():
    data = read_runs([DEEPEVAL / "two-invocations" / "results"])
    assert len(data.runs("healthy")) == 6 and len(data.sessions()) == 2


# -- long tables: encodings and shapes -------------------------------------------------


def test_excel_csv_with_bom_semicolons_and_utf16(tmp_path):
    rows = "run;case;passed\r\nr1;café;true\r\nr2;café;false\r\n"
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + rows.replace(";", ",").encode())
    (tmp_path / "semi.csv").write_bytes(rows.encode("utf-8"))
    (tmp_path / "utf16.csv").write_bytes(rows.replace(";", "\t").encode("utf-16"))
    grids = [_grid(read_runs([tmp_path / name])) for name in ("bom.csv", "semi.csv", "utf16.csv")]
    assert grids[0] == grids[1] == grids[2] == {"café": ".x"}


def test_latin1_is_one_line_naming_the_byte(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("run,case,passed\nr1,café,true\n".encode("latin-1"))
    code, out, err = run_cli("recommend", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1
    # "run,case,passed\n" is 16 bytes, "r1,caf" 6 more: the é is byte 22
    assert "latin1.csv: not UTF-8 text (byte offset 22: b'\\xe9')" in err


def test_status_score_and_session_columns(tmp_path):
    path = tmp_path / "runs.jsonl"
    rows = [
        {"run": "r1", "case": "a", "check": "j", "kind": "judge", "passed": True, "score": 0.9},
        {
            "run": "r1",
            "case": "b",
            "check": "j",
            "kind": "judge",
            "passed": None,
            "status": "error",
        },
        {
            "run": "r2",
            "case": "a",
            "check": "j",
            "kind": "judge",
            "passed": "",
            "status": "unscored",
        },
        {"run": "r2", "case": "b", "check": "j", "kind": "judge", "passed": "no", "session": "s9"},
        {"run": "r3", "case": "a", "status": "skipped", "passed": ""},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = read_runs([path])
    assert data.errors == 1 and data.unscored == 1 and data.skipped == 1
    assert _grid(data) == {"a": ".--", "b": "-x-"}
    assert {v.session for v in data.verdicts} == {str(path), "s9"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run,case,passed\nr1,a,maybe\n", "`passed` must be true/false"),
        ("run,case,passed,status\nr1,a,,ok\n", "missing `passed` (status ok)"),
        (
            "run,case,passed,status\nr1,a,true,broken\n",
            "`status` must be ok, error, unscored, skipped or component",
        ),
        ("run,case,passed,score\nr1,a,true,high\n", "`score` must be a number"),
        ("run,case,passed,attempts\nr1,a,true,²\n", "`attempts` must be a whole number >= 1"),
        ("run,case,passed\nr1,a,true\nr1,a,false\n", "a rerun belongs in one row with `attempts`"),
        ("", "the file is empty"),
        ('{"results": 1}', "JSON that is not a promptfoo results file"),
    ],
)
def test_table_errors_are_one_line(tmp_path, text, message):
    path = tmp_path / "runs.csv"
    path.write_text(text, encoding="utf-8")
    code, out, err = run_cli("runs", str(path))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("gatecal: error: RUNS ") and message in err, err


def test_a_folder_named_like_a_file_is_not_read(tmp_path):
    (tmp_path / "x.csv").mkdir()
    (tmp_path / "runs.csv").write_text("run,case,passed\nr1,a,true\n")
    assert read_runs([tmp_path]).runs("healthy") == ["r1"]


# -- copies and caches -----------------------------------------------------------------


def _table(path, runs):
    path.write_text("run,case,passed\n" + "".join(
        f"r{r},c{c},{'false' if ok == 'x' else 'true'}\n"
        for r, row in enumerate(runs) for c, ok in enumerate(row)))  # fmt: skip


def test_copied_runs_are_flagged_and_chance_coincidences_are_not(tmp_path):
    import numpy as np

    rng = np.random.default_rng(5)
    runs = ["".join("x" if f else "." for f in rng.random(20) < 0.3) for _ in range(12)]
    _table(tmp_path / "independent.csv", runs)
    assert read_runs([tmp_path / "independent.csv"]).warnings == ()
    _table(tmp_path / "copied.csv", [*runs, runs[3], runs[3]])
    (warning,) = read_runs([tmp_path / "copied.csv"]).warnings
    assert "run(s) 'r12', 'r13' repeat run 'r3' verdict for verdict" in warning
    # a quiet suite: identical all-pass runs are what a good build looks like
    _table(tmp_path / "quiet.csv", ["." * 20] * 10)
    assert read_runs([tmp_path / "quiet.csv"]).warnings == ()


# -- gatecal runs: what was read, and the converter ------------------------------------

CONVERTIBLE = [
    [JUNIT / "artefacts"],
    [JUNIT / "rerunfailures" / "v16.7"],
    [INSPECT / "graded.json"],
    [next((DEEPEVAL / "repeat3-ignore-errors").glob("test_run_*.json"))],
    [PROMPTFOO / "single_target.json"],
    [PROMPTFOO / "edge_cases.json"],
]


@pytest.mark.parametrize("paths", CONVERTIBLE, ids=lambda p: p[0].parent.name + "/" + p[0].name)
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_every_format_converts_to_the_long_table_and_reads_back_the_same(tmp_path, paths, fmt):
    original = read_runs(paths)
    out = tmp_path / f"runs.{fmt}"
    code, _, err = run_cli("runs", *map(str, paths), "--format", fmt, "--out", str(out))
    assert code == 0, err
    back = read_runs([out])

    def strip(d):
        fields = ("build", "run", "case", "check", "kind", "passed", "status", "score",
                  "session", "attempts", "cached")  # fmt: skip
        return sorted(tuple(getattr(v, f) for f in fields) for v in d.verdicts)

    assert strip(back) == strip(original)
    assert sorted((s.run, s.case) for s in back.skips) == sorted(
        (s.run, s.case) for s in original.skips
    )
    assert back.reruns == original.reruns
    if original.cases() and len(original.runs("healthy")) > 1:
        assert (
            recommend_gate(back, regression="1").table
            == recommend_gate(original, regression="1").table
        )


def test_runs_json_carries_the_counts_and_the_file_mapping():
    code, out, _ = run_cli("runs", str(JUNIT / "artefacts"), "--format", "json")
    assert code == 0
    summary = json.loads(out)
    assert (summary["runs"], summary["cases"], summary["checks"]) == (3, 5, 0)
    assert (summary["errors"], summary["skipped"]) == (0, 1)
    assert [f["runs"] for f in summary["files"]] == [["build-1041"], ["build-1042"], ["build-1043"]]
    assert {f["format"] for f in summary["files"]} == {"junit"}


def test_runs_table_shows_the_grid_and_the_skips():
    text = render_runs(read_runs([JUNIT / "artefacts"]))
    assert "  no-pii                        .s." in text
    assert "left out: 1 skipped, 0 errors, 0 unscored" in text
    assert runs_summary(read_runs([JUNIT / "artefacts"]))["builds"]["healthy"]["missing"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--input-format", "xlsx"], "--input-format must be one of junit, csv, jsonl"),
        (["--attempts", "all"], "--attempts must be one of first, last (got 'all')"),
        (["--junit-repeats", "maybe"], "--junit-repeats must be one of auto, flakefinder, none"),
        (["--partial", "half"], "--partial must be one of fail, pass, unscored"),
        (["--threshold", "similarity"], "--score-threshold must be CHECK=T with a finite number T"),
        (
            ["--score-threshold", "s=nan"],
            "--score-threshold must be CHECK=T with a finite number T",
        ),
        (
            ["--score-threshold", "s=1_0"],
            "--score-threshold must be CHECK=T with a finite number T",
        ),
        (["--format", "xml"], "--format must be one of table, markdown, json, csv, jsonl"),
    ],
)
def test_reading_options_are_checked(args, message):
    code, out, err = run_cli("runs", str(JUNIT / "artefacts"), *args)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert message in err, err


def test_input_format_overrides_detection(tmp_path):
    path = tmp_path / "runs.txt"
    path.write_text('{"run": "r1", "case": "a", "passed": true}\n')
    assert detect_format(path, path.read_bytes()) == "jsonl"
    code, _, err = run_cli("runs", str(path), "--input-format", "junit")
    assert code == 2 and "not well-formed XML" in err


# -- promptfoo -------------------------------------------------------------------------


def _promptfoo_rows(name):
    return json.loads((PROMPTFOO / name).read_text())["results"]["results"]


@pytest.mark.parametrize("target", ["concise", "careful"])
def test_promptfoo_rows_agree_with_promptfoos_own_outcomes(target):
    """Each row's success / failureReason, as promptfoo wrote it, against our verdicts."""
    data = read_runs([PROMPTFOO / "main.json"], target=target)
    assert data.runs("healthy") == ["main#1", "main#2", "main#3"]
    assert len(data.cases()) == 6 and data.sessions() == ["main"]
    by_cell: dict = {}
    for v in data.verdicts:
        by_cell.setdefault((v.run, v.case), []).append(v)
    rows = [r for r in _promptfoo_rows("main.json") if r["prompt"]["label"] == target]
    seen: dict = {}
    for row in sorted(rows, key=lambda r: r["testIdx"]):
        case = row["testCase"].get("description") or json.dumps(row["testCase"]["vars"])
        seen[case] = seen.get(case, 0) + 1
        verdicts = by_cell[(f"main#{seen[case]}", case)]
        if row["failureReason"] == 2:
            assert {v.status for v in verdicts} == {"error"}
        else:
            assert all(v.status == "ok" for v in verdicts)
            assert all(v.passed for v in verdicts) == row["success"]
    assert set(seen.values()) == {3}


def test_promptfoo_totals_match_its_stats():
    stats = json.loads((PROMPTFOO / "main.json").read_text())["results"]["stats"]
    passed = failed = errored = 0
    for target in ("concise", "careful"):
        _, _, matrix = read_runs([PROMPTFOO / "main.json"], target=target).case_outcomes("healthy")
        cells = [c for row in matrix for c in row]
        passed, failed, errored = (
            passed + cells.count(1),
            failed + cells.count(0),
            errored + cells.count(-1),
        )
    assert (passed, failed, errored) == (stats["successes"], stats["failures"], stats["errors"])


def test_promptfoo_checks_kinds_and_metric_names():
    data = read_runs([PROMPTFOO / "main.json"], target="sut-python concise")
    kinds = {v.check: v.kind for v in data.verdicts}
    assert kinds["llm-rubric"] == "judge" and kinds["politeness"] == "judge"
    assert {kinds[c] for c in ("contains", "icontains", "javascript", "python")} == {"code"}
    assert any('"question": "How do you say hello in Spanish?"' in c for c in data.cases())


def test_promptfoo_several_targets_need_a_choice():
    code, out, err = run_cli("recommend", str(PROMPTFOO / "main.json"))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (
        "2 systems under test (provider prompt): sut-python 'concise'; sut-python 'careful'; choose one with --target"
        in err
    )
    code, _, err = run_cli("runs", str(PROMPTFOO / "main.json"), "--target", "gpt-9")
    assert code == 2 and "no target 'gpt-9'" in err


def test_promptfoo_judge_trouble_is_never_a_verdict():
    data = read_runs([PROMPTFOO / "edge_cases.json"])
    status = {v.case: (v.status, v.passed) for v in data.verdicts if v.check == "llm-rubric"}
    # README table: prose instead of JSON and a failing judge are failureReason 1 in
    # promptfoo, marked only by metadata.graderError
    assert status["judge replies with prose, not JSON"] == ("unscored", None)
    assert status["judge provider returns an error"] == ("error", None)
    assert status['judge JSON has pass as the string "no"'] == ("ok", False)
    assert status["judge JSON lacks the pass field"] == ("ok", True)  # promptfoo's default
    provider_error = [v for v in data.verdicts if v.case == "provider returns an error object"]
    assert [v.status for v in provider_error] == ["error"]


def test_a_cached_rerun_is_flagged():
    first = read_runs([PROMPTFOO / "cached_run1.json"], target="careful")
    assert first.cached == 0 and first.warnings == ()
    both = read_runs(
        [PROMPTFOO / "cached_run1.json", PROMPTFOO / "cached_run2.json"], target="careful"
    )
    assert both.cached > 0
    (warning,) = both.warnings
    assert "replayed from a cache: a cached re-run measures nothing" in warning
    rec_text = run_cli(
        "recommend",
        str(PROMPTFOO / "cached_run2.json"),
        "--target",
        "careful",
        "--regression",
        "1",
    )[1]
    assert "warning:" in rec_text and "cached re-run measures nothing" in rec_text


def test_promptfoo_jsonl_and_json_read_the_same():
    a = read_runs([PROMPTFOO / "single_target.json"])
    b = read_runs([PROMPTFOO / "single_target.jsonl"])
    assert _verdict_keys(a) == _verdict_keys(b)
    assert {f.format for f in b.files} == {"promptfoo"} and len(a.runs("healthy")) == 3


def test_promptfoo_results_version_2():
    data = read_runs([PROMPTFOO / "v2_small.json"], target="careful")
    assert data.files[0].detail == "results v2"
    assert len(data.runs("healthy")) == 2 and len(data.cases()) == 4
    assert "capital of France" in data.cases()  # the description, from the v2 table
    errors = {v.case for v in data.verdicts if v.status == "error"}
    assert errors == {"live data lookup (provider errors)"}


def test_a_big_file_is_sniffed_whole_and_jsonl_lines_end_only_at_newlines(tmp_path):
    # "é" straddles byte 65,536: a sniffer that decoded a 64 KiB slice called this file
    # "not UTF-8"; and a case name with a raw U+2028 is one JSON line, not two
    padding = "x" * (65_536 - len("run,case,passed\nr1,") - 1)
    path = tmp_path / "big.csv"
    path.write_text(f"run,case,passed\nr1,{padding}é,true\nr2,{padding}é,false\n", encoding="utf-8")
    assert path.read_bytes()[65_535:65_537] == "é".encode()
    assert _grid(read_runs([path])) == {f"{padding}é": ".x"}
    lines = tmp_path / "runs.jsonl"
    rows = [{"run": r, "case": "a\u2028b", "passed": ok} for r, ok in (("r1", True), ("r2", False))]
    lines.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
    assert _grid(read_runs([lines])) == {"a\u2028b": ".x"}


def test_short_names_of_many_ids_are_the_levels_taken_id_by_id():
    """Many ids at once (one pass of re over them where each is on one line) are named as
    the documented levels name each id alone: the parameter (what \\[(.*)\\]$ finds),
    the test name, class and name, the full id, the first that keeps all distinct; free
    text (whitespace outside brackets) kept whole. Random lists of ids of brackets, dots,
    colons, spaces and newlines."""
    import random
    import re

    from gatecal.readers._data import short_names

    def name(case: str) -> str:
        head, bracket, tail = case.partition("[")
        return head.rsplit(".", 1)[-1].rsplit("::", 1)[-1] + bracket + tail

    def class_and_name(case: str) -> str:
        head, bracket, tail = case.partition("[")
        return ".".join(re.split(r"\.|::", head)[-2:]) + bracket + tail

    def param(case: str) -> str:
        match = re.search(r"\[(.*)\]$", case)
        return match.group(1) if match and match.group(1) else name(case)

    def expected(cases: list[str]) -> dict[str, str]:
        heads = "".join(c.partition("[")[0] for c in cases)
        if re.search(r"\s", "".join(cases)) and re.search(r"\s", heads):
            return {c: c for c in cases}
        for level in (param, name, class_and_name):
            names = [level(c) for c in cases]
            if len(set(names)) == len(names):
                return dict(zip(cases, names, strict=True))
        return {c: c for c in cases}

    def text(alphabet: str, longest: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest)))

    rng = random.Random(11)
    for i in range(30_000):
        if i % 3 < 2:
            alphabet = rng.choice(["ab[].:x", "ab[].:x \n-"])
            ids = (text(alphabet, 9) for _ in range(6))
        else:  # pytest's shape, head[param], its parts now and then holding [, ] or \n
            alphabet = rng.choice(["ab.:x", "ab.:x\u00e9-", "ab.:x[", "ab.:x]", "ab.:x\n"])
            ids = (f"{text(alphabet, 4)}[{text(alphabet, 3)}]" for _ in range(6))
        cases = list(dict.fromkeys(ids))[: rng.randint(1, 6)]
        assert short_names(cases) == expected(cases), cases


def test_whitespace_is_what_the_pattern_finds():
    """_has_space (a scan for each ASCII whitespace character) says what \\s finds: every
    code point up to U+30FF (past U+3000, the last whitespace) alone and inside ASCII
    and non-ASCII text."""
    import re

    from gatecal.readers._data import _has_space

    for point in range(0x3100):
        one = chr(point)
        for text in (one, f"ab{one}cd", f"\u00e9{one}"):
            assert _has_space(text) == bool(re.search(r"\s", text)), hex(point)


def test_short_names_take_the_parameter_the_bracket_pattern_takes():
    """The parameter of an id ending in "]" is what the pattern \\[(.*)\\]$ finds (read
    without it on one-line ids): checked on random ids of brackets, dots, spaces and
    newlines."""
    import random
    import re

    from gatecal.readers._data import short_names

    pattern = re.compile(r"\[(.*)\]$")
    rng = random.Random(7)
    for _ in range(20_000):
        case = "".join(rng.choice("ab[].:x\n") for _ in range(rng.randint(1, 9)))
        match = pattern.search(case)
        if re.search(r"\s", case.partition("[")[0]):
            continue  # free text (spaces outside brackets): kept whole
        if match and match.group(1):  # (other ids are named by their test name, as before)
            assert short_names([case])[case] == match.group(1), repr(case)


# -- RunsData.to_frame ------------------------------------------------------------------


def _frame_matches(data):
    """Each row of to_frame() is the verdict (then the component) it comes from."""
    pd = pytest.importorskip("pandas")
    frame = data.to_frame()
    assert list(frame.columns) == list(data.columns())
    expected = [*data.verdicts, *data.components]
    assert len(frame) == len(expected)
    for row, verdict in zip(frame.to_dict("records"), expected, strict=True):
        for name in frame.columns:
            got, want = row[name], getattr(verdict, name)
            if name in ("score", "cost"):  # the stored number, NaN where there is none
                assert (want is None and math.isnan(got)) or got == pytest.approx(want, rel=1e-15)
            elif name in ("passed", "tokens"):
                assert (want is None and got is pd.NA) or (got is not pd.NA and got == want)
            else:
                assert got == want, (name, got, want)
    for name in ("build", "run", "case", "check", "status", "source"):
        assert isinstance(frame[name].dtype, pd.CategoricalDtype)
        assert list(frame[name].cat.categories) == list(dict.fromkeys(frame[name]))
    return frame


def test_to_frame_holds_every_verdict_then_every_component(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "run,case,check,kind,passed,status,score\n"
        "r1,a,rel,judge,true,ok,0.75\n"
        "r1,a,fmt,code,false,component,\n"
        "r1,b,rel,judge,,error,\n"
        "r2,a,rel,judge,false,ok,0.1\n"
        "r2,b,rel,judge,true,skipped,\n"
        "r2,c,new,code,true,component,2\n"
    )
    data = read_runs([path])
    assert len(data.components) == 2 and data.skipped == 1
    frame = _frame_matches(data)
    assert list(frame["check"].cat.categories) == ["rel", "fmt", "new"]


def test_to_frame_keeps_cost_tokens_and_scores_where_given():
    data = read_runs([FIXTURES / "promptfoo" / "threshold.json"])
    assert data.columns()[-2:] == ("cost", "tokens")
    frame = _frame_matches(data)
    assert frame["tokens"].sum() == data.tokens


def test_to_frame_of_junit_runs():
    frame = _frame_matches(read_runs([JUNIT / "artefacts"]))
    assert frame["passed"].dtype == "boolean"


# -- two columns of one name (issue 47) --------------------------------------------------------


def _twice_csv(path, header, rows):
    """A CSV whose header names `header`; each row a failing verdict then a passing one."""
    lines = [header] + [f"r{r},c{c},false,true" for r in range(rows) for c in range(20)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _twice_jsonl(path, second, rows):
    lines = [
        f'{{"run": "r{r}", "case": "c{c}", "passed": false, "{second}": true}}'
        for r in range(rows)
        for c in range(20)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("rows", [5, 3000], ids=["row-reader", "block-reader"])
@pytest.mark.parametrize(
    ("make", "named"),
    [
        (
            lambda p, n: _twice_csv(p / "t.csv", "run,case,passed,passed", n),
            "'passed' and 'passed'",
        ),
        (
            lambda p, n: _twice_csv(p / "t.csv", "run,case,passed,PASSED", n),
            "'passed' and 'PASSED'",
        ),
        (lambda p, n: _twice_csv(p / "t.csv", "case,run,case,passed", n), "'case' and 'case'"),
        (lambda p, n: _twice_jsonl(p / "t.jsonl", "PASSED", n), "'passed' and 'PASSED'"),
    ],
    ids=["csv-twice", "csv-case", "csv-case-column", "jsonl-case"],
)
def test_two_columns_of_one_name_are_refused_naming_them(tmp_path, make, named, rows):
    """The last of two columns of one name won, so a failing verdict read as a pass."""
    path = make(tmp_path, rows)
    assert rows < 100 or path.stat().st_size > 2**20  # the block reader's size
    with pytest.raises(RunsError, match=f"columns named twice: {named}") as caught:
        read_runs([path])
    assert "\n" not in str(caught.value)


def test_a_json_line_with_one_key_twice_is_refused_and_a_nested_one_is_not(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"run": "r", "case": "c", "passed": false, "passed": true}\n')
    with pytest.raises(RunsError, match=r"t.jsonl:1: columns named twice: 'passed' and 'passed'"):
        read_runs([path])
    path.write_text('{"run": "r", "case": "c", "passed": false, "meta": {"a": 1, "A": 2}}\n')
    assert list(read_runs([path]).verdicts.values("case")) == ["c"]


def test_a_parquet_table_with_two_columns_of_one_name_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.Table.from_arrays(
        [pa.array(["r"]), pa.array(["c"]), pa.array([False]), pa.array([True])],
        names=["run", "case", "passed", "Passed"],
    )
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.raises(RunsError, match="columns named twice: 'passed' and 'Passed'"):
        read_runs([tmp_path / "t.parquet"])


def test_a_label_table_with_two_columns_of_one_name_is_refused(tmp_path):
    import gatecal

    path = tmp_path / "labels.csv"
    path.write_text(
        "item,human,judge,JUDGE\n" + "".join(f"i{i},pass,fail,pass\n" for i in range(9))
    )
    with pytest.raises(gatecal.LabelsError, match="columns named twice: 'judge' and 'JUDGE'"):
        gatecal.read_labels(path)


# -- one Unicode spelling of a case id (issue 47) -----------------------------------------------


def test_the_nfc_and_nfd_spellings_of_an_id_are_one_case_with_the_spelling_kept(tmp_path):
    import unicodedata

    nfc = unicodedata.normalize("NFC", "café-naïve")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    path = tmp_path / "runs.jsonl"
    rows = [{"run": "r1", "case": nfc, "passed": True}, {"run": "r2", "case": nfd, "passed": False}]
    rows += [{"run": r, "case": "plain", "passed": True} for r in ("r1", "r2")]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    data = read_runs([path])
    assert list(data.cases()) == [nfc, "plain"]
    assert data.spellings == ((nfc, nfd),)
    summary = runs_summary(data)
    assert summary["case_list"][0] == {"case": nfc, "short": nfc, "read_as": nfd}
    assert "read_as" not in summary["case_list"][1]
    path.write_text(
        "".join(json.dumps(row) + "\n" for row in [*rows[:1], {**rows[1], "run": "r1"}])
    )
    with pytest.raises(RunsError, match="duplicate verdict"):
        read_runs([path])  # both spellings in one run: one case twice
