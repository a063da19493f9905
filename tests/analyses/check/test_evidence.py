"""check decides only on complete, honest evidence: each way it was fooled before, refused."""

import json
import shutil
from pathlib import Path

import pytest

import gatecal
from tests.analyses.check.test_gate import CASES, baseline_runs, current, write_runs
from tests.conftest import run_cli
from tests.paths import FIXTURES


@pytest.fixture
def nights(tmp_path):
    """Three known-good runs, one file each, as a CI artefact folder holds them."""
    folder = tmp_path / "nightly"
    folder.mkdir()
    runs = baseline_runs(30)
    for i, chunk in enumerate([list(runs)[:10], list(runs)[10:20], list(runs)[20:]]):
        write_runs(folder / f"night-{i}.jsonl", {r: runs[r] for r in chunk})
    return sorted(folder.iterdir())


def test_baseline_takes_every_path_up_to_the_next_option(tmp_path, capsys, nights):
    """`--baseline a b c` (an unquoted glob) is three baseline files, not one baseline file
    and two more current runs (before: "3 current runs", decided as incomplete)."""
    ci = current(tmp_path)
    code, out, err = run_cli("check", ci, "--baseline", *nights, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["current_runs"] == ["ci-1"] and data["baseline"]["runs"] == 30
    code, out2, _ = run_cli("check", "--baseline", *nights, "--current", ci, "--format", "json")
    assert code == 0 and json.loads(out2) == data


def test_several_current_runs_without_a_policy_are_refused(tmp_path, capsys, nights):
    two = current(tmp_path, runs={"try-1": dict.fromkeys(CASES, "pass"),
                                  "try-2": dict.fromkeys(CASES, "pass")})  # fmt: skip
    code, out, err = run_cli("check", two, "--baseline", *nights)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "CURRENT holds 2 runs (try-1, try-2): name the --policy" in err


def test_a_current_file_that_is_also_baseline_is_refused(capsys, nights):
    code, _, err = run_cli("check", nights[0], "--baseline", *nights)
    assert code == 2 and "CURRENT must not be one of the baseline's files" in err


def test_a_missing_check_inside_a_case_is_missing_evidence(tmp_path, capsys):
    """Two checks per case; deleting a case's failing check row used to pass the run."""
    rows = []
    for r in range(30):
        for c in CASES:
            for check in ("relevancy", "facts"):
                rows.append({"run": f"n{r}", "case": c, "check": check, "passed": True})
    base = tmp_path / "base.jsonl"
    base.write_text("".join(json.dumps(x) + "\n" for x in rows))
    ci_rows = [{"run": "ci", "case": c, "check": k, "passed": True}
               for c in CASES for k in ("relevancy", "facts")]  # fmt: skip
    ci_rows = [x for x in ci_rows if not (x["case"] == "case-04" and x["check"] == "facts")]
    ci = tmp_path / "ci.jsonl"
    ci.write_text("".join(json.dumps(x) + "\n" for x in ci_rows))
    res = gatecal.check_gate(gatecal.read_runs([ci]), gatecal.read_runs([base]))
    assert res.decision == "incomplete" and res.missing == ("case-04",)
    assert res.missing_checks == ("case-04 lacks facts",)
    assert any("lack a check the baseline ran" in r for r in res.reasons)
    code, _, _ = run_cli("check", ci, "--baseline", base)
    assert code == 1


def test_errors_count_wherever_they_are(tmp_path):
    """A case that errors in every run (a grader outage) is an error in the current run and
    in the baseline, never "failing, not in the baseline" with errors: 0."""
    runs = baseline_runs(30)
    for outcome in runs.values():
        outcome["case-11"] = "error"
    base = write_runs(tmp_path / "base.jsonl", runs)
    ci = current(tmp_path, errors=["case-11"])
    res = gatecal.check_gate(gatecal.read_runs([ci]), gatecal.read_runs([base]))
    assert res.decision == "incomplete" and res.error_cases == ("case-11",)
    assert res.uncalibrated_failures == () and res.baseline_errors == 30
    assert any("30 error or unscored verdicts" in w for w in res.warnings)
    allowed = gatecal.check_gate(gatecal.read_runs([ci]), gatecal.read_runs([base]), max_errors=1)
    assert allowed.decision == "pass" and allowed.to_dict()["errors"] == 1


def test_a_gate_that_cannot_fail_is_incomplete_and_says_what_would_help(tmp_path, capsys):
    """Four noisy runs of four cases: the default gate became "at least 0 of 4 pass"."""
    noisy = {f"n{r}": {c: ("fail" if (r + i) % 2 else "pass") for i, c in enumerate(CASES[:4])}
             for r in range(4)}  # fmt: skip
    base = write_runs(tmp_path / "base.jsonl", noisy)
    ci = write_runs(tmp_path / "ci.jsonl", {"ci": dict.fromkeys(CASES[:4], "pass")})
    res = gatecal.check_gate(gatecal.read_runs([ci]), gatecal.read_runs([base]))
    assert res.k_min == 0 and res.decision == "incomplete"
    assert any("cannot fail a build" in r and "quiet the judge" in r for r in res.reasons)
    code, out, _ = run_cli("check", ci, "--baseline", base)
    assert code == 1 and "cannot fail a build" in out


def test_more_known_good_runs_are_counted_when_they_would_help(tmp_path):
    runs = {f"n{r}": {c: "pass" for c in CASES} for r in range(3)}
    runs["n0"]["case-00"] = "fail"
    base = write_runs(tmp_path / "base.jsonl", runs)
    ci = current(tmp_path)
    res = gatecal.check_gate(gatecal.read_runs([ci]), gatecal.read_runs([base]))
    if res.k_min == 0:  # three runs are too few for any gate within 0.05
        (reason,) = [r for r in res.reasons if "cannot fail" in r]
        assert "more known-good runs at this noise" in reason


def test_a_cached_baseline_is_said_in_check(tmp_path):
    fixtures = FIXTURES / "promptfoo"
    cached = gatecal.read_runs([fixtures / "cached_run2.json"], target="concise")
    fresh = gatecal.read_runs([fixtures / "cached_run1.json"], target="concise")
    assert any("cache" in w for w in cached.warnings)
    res = gatecal.check_gate(fresh, cached, policy="repeat-1-of-3")
    assert any(w.startswith("baseline: ") and "cache" in w for w in res.warnings)


def _gate_file(tmp_path, capsys, base):
    out = tmp_path / "gate.json"
    code, _, err = run_cli("recommend", base, "--format", "json", "--out", out, "--regression", "6")
    assert code == 0, err
    return out


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("format"), 'its first key is "format": "gatecal.recommend"'),
        (lambda d: d.update(version=0), "is a recommend output of version 0"),
        (
            lambda d: d["recommended"].update(k_min=d["recommended"]["k_min"] - 2),
            "does not check out: it recommends at least",
        ),
        (lambda d: d["table"][3].update(false_alarm=0.0), "do not start at 0 and grow"),
        (lambda d: d.pop("case_order"), "recommended.k_min, cases, case_order"),
    ],
)
def test_hand_edited_gate_files_are_refused(tmp_path, capsys, edit, message):
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    path = _gate_file(tmp_path, capsys, base)
    document = json.loads(path.read_text())
    assert document["recommended"] is not None
    edit(document)
    path.write_text(json.dumps(document))
    code, out, err = run_cli("check", current(tmp_path), "--baseline", base, "--gate-from", path)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_a_gate_file_from_another_baseline_is_refused(tmp_path, capsys):
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    path = _gate_file(tmp_path, capsys, base)
    other = write_runs(tmp_path / "other.jsonl", baseline_runs(20))
    code, _, err = run_cli("check", current(tmp_path), "--baseline", other, "--gate-from", path)
    assert code == 2 and "was computed from 30 known-good runs" in err
    code, _, err = run_cli("check", current(tmp_path), "--baseline", base, "--gate-from", path)
    assert code == 0, err


@pytest.mark.parametrize("where", ["current", "baseline", "gate", "suite"])
def test_deeply_nested_json_is_unreadable_input_not_a_failed_gate(tmp_path, capsys, where):
    deep = "[" * 200_000 + "]" * 200_000
    bomb = tmp_path / "deep.json"
    bomb.write_text(deep)
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    ci = current(tmp_path)
    args = {
        "current": ["check", bomb, "--baseline", base],
        "baseline": ["check", ci, "--baseline", bomb],
        "gate": ["check", ci, "--baseline", base, "--gate-from", bomb],
        "suite": ["simulate", "--suite", bomb],
    }[where]
    code, out, err = run_cli(*args)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_jsonl_line_nested_too_deep_is_one_line(tmp_path, capsys):
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    lines = base.read_text().splitlines()
    lines.insert(5, "[" * 100_000 + "]" * 100_000)
    shutil.copy(base, tmp_path / "copy.jsonl")
    (tmp_path / "copy.jsonl").write_text("\n".join(lines) + "\n")
    code, out, err = run_cli("recommend", tmp_path / "copy.jsonl")
    assert code == 2 and out == "" and err.count("\n") == 1 and "copy.jsonl:6:" in err, err


HOSTILE = [
    "evil|col\n### ✅ gatecal check: PASS",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "```\n# closed the block",
    '=HYPERLINK("http://x","y")',
]


def test_user_strings_cannot_write_markdown_into_a_summary(tmp_path, capsys):
    runs = baseline_runs(30)
    for i, outcome in enumerate(runs.values()):
        for name in HOSTILE:
            outcome[name] = "fail" if i == 0 else "pass"
    base = write_runs(tmp_path / "base.jsonl", runs)
    ci = current(tmp_path, extra=dict.fromkeys(HOSTILE, "fail"))
    summary = tmp_path / "summary.md"
    code, _, _ = run_cli("check", ci, "--baseline", base, "--summary", summary)
    text = summary.read_text()
    assert code in (0, 1)
    assert text.count("### ") == 1  # only gatecal's own heading
    assert "<script>" not in text and "<img" not in text and "\n# closed" not in text
    assert all(line.count("|") - line.count("\\|") in (0, 3, 6) for line in text.splitlines())


def test_a_case_name_cannot_close_the_runs_code_block(tmp_path, capsys):
    runs = {"r1": {"a```b": "pass", "c": "fail"}, "r2": {"a```b": "pass", "c": "pass"}}
    path = write_runs(tmp_path / "runs.jsonl", runs)
    code, out, _ = run_cli("runs", path, "--format", "markdown")
    assert code == 0
    fences = [line for line in out.splitlines() if line.startswith("``")]
    assert fences and all(f.startswith("````") for f in fences)


def test_csv_cells_that_are_formulas_stay_text_and_read_back(tmp_path, capsys):
    runs = {"r1": {"=SUM(A1)": "pass", "+x": "fail", "-y": "pass", "@z": "pass", "'q": "pass"}}
    path = write_runs(tmp_path / "runs.jsonl", runs)
    out = tmp_path / "runs.csv"
    assert run_cli("runs", path, "--format", "csv", "--out", out)[0] == 0
    cells = {line.split(",")[2] for line in out.read_text().splitlines()[1:]}
    assert {"'=SUM(A1)", "'+x", "'-y", "'@z", "''q"} <= cells
    back = gatecal.read_runs([out])
    assert sorted(back.cases()) == sorted(runs["r1"])


def test_step_summary_pointing_at_an_input_is_refused(tmp_path, capsys, monkeypatch):
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    before = base.read_bytes()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(base))
    code, out, err = run_cli("check", current(tmp_path), "--baseline", base)
    assert code == 2 and out == "" and "GITHUB_STEP_SUMMARY" in err and "inputs" in err
    assert base.read_bytes() == before


def test_a_pass_summary_says_its_failures_are_within_the_gate(tmp_path, capsys):
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    ci = current(tmp_path, failing=["case-07"])
    # the count gate: one new failure is within it (the case-aware gate fails it)
    code, out, _ = run_cli(
        "check", ci, "--baseline", base, "--format", "markdown", "--gate", "count"
    )
    assert code == 0
    assert "**new failure**" not in out and "new, within the gate" in out
    assert "k_min: the gate passes the build when at least k_min" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["policies", "--cases", "50001"], "--cases must be at most 50,000 for policies"),
        (
            ["policies", "--cases", "2001", "--icc", "0.1"],
            "--cases must be at most 2,000 cases for policies with --icc (got 2001)",
        ),
        (
            ["policies", "--cases", "2001", "--policies", "single,sprt-3"],
            "--cases must be at most 2,000 cases with a sequential gate in --policies (got 2001)",
        ),
        (["policies", "--runs", "1000001"], "--runs must be at most 1,000,000 for policies"),
        (["policies", "--policies", "majority-1001"], "majority must be an integer in [1, 1000]"),
        (
            ["check", "c.jsonl", "--baseline", "b.jsonl", "--policy", "rerun-99999999999"],
            "--policy rerun must be an integer in [0, 1000]",
        ),
        (
            ["check", "c.jsonl", "--baseline", "b.jsonl", "--policy", "rerun-failing-100000"],
            "--policy rerun_failing must be an integer in [0, 1000]",
        ),
        (
            ["policies", "--policies", "sprt-101"],
            "sprt-N needs a whole number of runs N in [1, 100]",
        ),
        (
            ["check", "c.jsonl", "--baseline", "b.jsonl", "--policy", "obf-1000"],
            "--policy obf-N needs a whole number of runs N in [1, 100]",
        ),
    ],
)
def test_every_count_has_a_limit(capsys, args, message):
    code, out, err = run_cli(*args)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err, err


def test_majority_pass_refuses_nan_and_fractional_counts():
    with pytest.raises(gatecal.ParameterError, match="`p` must be probabilities"):
        gatecal.majority_pass(float("nan"), 3)
    with pytest.raises(gatecal.ParameterError, match="`m` must be an integer"):
        gatecal.majority_pass(0.5, 2.5)


def test_an_eval_log_that_inflates_past_the_budget_is_refused(capsys, monkeypatch):
    log = FIXTURES / "inspect_ai" / "main.eval"  # Zstandard members, as inspect_ai writes
    assert run_cli("runs", log)[0] == 0
    monkeypatch.setenv("GATECAL_EVAL_MAX_BYTES", "20000")
    code, out, err = run_cli("runs", log)
    assert code == 2 and out == "" and "inflates to more than 20,000 bytes" in err


def test_a_deflated_bomb_stops_at_the_budget(tmp_path, capsys, monkeypatch):
    import zipfile

    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", '{"eval": {}, "status": "success"}' + " " * 30_000_000)
    assert bomb.stat().st_size < 100_000
    monkeypatch.setenv("GATECAL_EVAL_MAX_BYTES", "1000000")
    code, _, err = run_cli("runs", bomb)
    assert code == 2 and "inflates to more than 1,000,000 bytes" in err


def test_a_glob_never_follows_a_folder_twice(tmp_path, capsys):
    folder = tmp_path / "runs"
    folder.mkdir()
    write_runs(folder / "night.jsonl", baseline_runs(3))
    (folder / "loop").symlink_to(folder)  # a loop
    (tmp_path / "again").symlink_to(folder)  # and a second way in
    code, out, err = run_cli("runs", f"{tmp_path}/**/*.jsonl", "--format", "json")
    assert code == 0, err
    (found,) = [f["path"] for f in json.loads(out)["files"]]  # once, whichever way in
    assert Path(found).resolve() == (folder / "night.jsonl").resolve()


def test_a_promptfoo_test_index_of_the_wrong_type_is_one_line(tmp_path, capsys):
    document = json.loads((FIXTURES / "promptfoo" / "single_target.json").read_text())
    document["results"]["results"][2]["testIdx"] = "two"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))
    code, out, err = run_cli("runs", path)
    assert code == 2 and out == "" and "results[2].testIdx must be a whole number" in err, err


def test_a_sequential_policy_refuses_junit_in_one_line(tmp_path, capsys):
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    code, out, err = run_cli("check", current(tmp_path), "--baseline", base, "--policy", "sprt-5", "--format", "junit")  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1 and "--format junit" in err


# -- the one evidence rule: a later run that would change a sequential decision ---------------


@pytest.mark.parametrize("policy", ["sprt-5", "pocock-3", "obf-3"])
def test_a_later_run_that_would_change_a_sequential_pass_counts(tmp_path, capsys, policy):
    """A passing run, then a run in which every check fails. Before: exit 0 (the gate
    stopped at run 1 and only warned); in the other order it exits 1."""
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    good = write_runs(tmp_path / "good.jsonl", {"ci-1": dict.fromkeys(CASES, "pass")})
    bad = write_runs(tmp_path / "bad.jsonl", {"ci-2": dict.fromkeys(CASES, "fail")})
    for order in ((good, bad), (bad, good)):
        code, out, err = run_cli("check", *order, "--baseline", base, "--policy", policy, "--format", "json")  # fmt: skip
        assert code == 1, (order, out, err)
        assert json.loads(out)["decision"] in ("incomplete", "fail")
    res = gatecal.check_sequential(
        gatecal.read_runs([good, bad]), gatecal.read_runs([base]), policy=policy
    )
    assert res.decision in ("incomplete", "fail")
    if res.look == 1:  # the good run alone passed: the bad one is the later run
        assert res.decision == "incomplete"
        assert any("a later run that would change the decision" in r for r in res.reasons)
        assert any("ci-2" in r for r in res.reasons)


def test_later_runs_that_would_not_change_a_pass_leave_it_alone(tmp_path):
    base = write_runs(tmp_path / "base.jsonl", baseline_runs(30))
    runs = {f"ci-{i}": dict.fromkeys(CASES, "pass") for i in (1, 2, 3, 4)}
    cur = write_runs(tmp_path / "ci.jsonl", runs)
    res = gatecal.check_sequential(
        gatecal.read_runs([cur]), gatecal.read_runs([base]), policy="sprt-5"
    )
    assert res.decision == "pass" and res.look < 4
    assert any("would not change the decision" in w for w in res.warnings)


def _decide_by(boundaries):
    """A sequential decision with per-look (pass_at_least, fail_at_most) on running sums."""

    def decide(passing):
        total = 0
        for j, (k, (hi, lo)) in enumerate(zip(passing, boundaries, strict=False), start=1):
            total += k
            if total >= hi:
                return "pass", j
            if total <= lo:
                return "fail", j
        return "continue", min(len(passing), len(boundaries))

    return decide


def test_order_reason_is_every_order_by_brute_force():
    """order_reason flags a pass exactly when some order of the runs does not pass:
    checked against all orders (itertools.permutations) on small designs."""
    import itertools
    import random

    from gatecal._model.evidence import order_reason

    gen = random.Random(5)
    for _ in range(400):
        looks = gen.randint(1, 4)
        bounds, hi, lo = [], 0, 0
        for j in range(1, looks + 1):
            hi, lo = gen.randint(4 * j - 2, 5 * j), gen.randint(0, 3 * j - 1)
            bounds.append((hi, min(lo, hi - 1)))
        decide = _decide_by(bounds)
        passing = [gen.randint(0, 5) for _ in range(gen.randint(1, 5))]
        every = {decide(list(p))[0] for p in itertools.permutations(passing)}
        flagged = order_reason(decide, passing) is not None
        assert flagged == (decide(passing)[0] == "pass" and every != {"pass"}), (bounds, passing)


def test_the_plugins_sequential_walk_counts_a_later_repeat_that_would_change_a_pass():
    """The plugin's repeats under xdist all run; a passing repeat 1 and a repeat 2 in which
    every marked test fails. Before: PASSED after run 1 (repeat 2 ignored)."""
    from gatecal.pytest_plugin.results import Result
    from gatecal.pytest_plugin.sequential import SequentialRule, decide

    rule = SequentialRule(name="pocock-2", cases=3, boundaries=((3, -1), (5, 4)), source="g.json")
    gated = {f"t.py::test_{c}[gatecal-r{j}]": c for c in "abc" for j in (1, 2)}

    def result(n, passed):
        return Result(
            case=gated[n], repeat=int(n[-2]), verdicts=[{"status": "ok", "passed": passed}]
        )

    results = {n: result(n, n.endswith("r1]")) for n in gated}
    decision, line, status = decide(rule, 2, gated, dict(results), [], "", False)
    assert decision == "incomplete" and status == 1, line
    assert "a later run that would change the decision" in line
    # the later repeat passing too: the pass stands
    results = {n: result(n, True) for n in gated}
    decision, line, status = decide(rule, 2, gated, results, [], "", False)
    assert decision == "pass" and status == 0, line
