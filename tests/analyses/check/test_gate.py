"""gatecal check: the gate on a CI run, its evidence, incomplete evidence, and the CLI."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import gatecal
from gatecal._analyses.check import gate as _check
from gatecal._analyses.check.gate import _false_alarms
from gatecal.cli import main
from tests.conftest import run_cli

CASES = [f"case-{i:02d}" for i in range(12)]


def write_runs(path: Path, runs: dict[str, dict[str, str]]) -> Path:
    """A long JSONL table: runs[run][case] is 'pass', 'fail', 'error' or 'skipped'."""
    rows = []
    for run, outcomes in runs.items():
        for case, what in outcomes.items():
            row = {"run": run, "case": case, "passed": what == "pass", "status": "ok"}
            if what in ("error", "skipped"):
                row.update(passed="", status=what)
            rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n")
    return path


def baseline_runs(n_runs=30, flaky=None):
    """Known-good runs: case-00 fails in runs 0, 3, 6, ...; case-01 every 5th run."""
    flaky = {"case-00": 3, "case-01": 5} if flaky is None else flaky
    return {
        f"night-{r:02d}": {c: "fail" if c in flaky and r % flaky[c] == 0 else "pass" for c in CASES}
        for r in range(n_runs)
    }


@pytest.fixture
def baseline(tmp_path):
    return write_runs(tmp_path / "baseline.jsonl", baseline_runs())


def current(tmp_path, failing=(), errors=(), skipped=(), extra=None, name="ci.jsonl", runs=None):
    if runs is None:
        outcome = {c: "pass" for c in CASES}
        outcome.update(dict.fromkeys(failing, "fail"))
        outcome.update(dict.fromkeys(errors, "error"))
        outcome.update(dict.fromkeys(skipped, "skipped"))
        outcome.update(extra or {})
        runs = {"ci-1": outcome}
    return write_runs(tmp_path / name, runs)


def decide(tmp_path, baseline, **kwargs):
    options = {k: kwargs.pop(k) for k in list(kwargs) if k not in
               ("failing", "errors", "skipped", "extra", "runs")}  # fmt: skip
    cur = gatecal.read_runs([current(tmp_path, **kwargs)])
    return gatecal.check_gate(cur, gatecal.read_runs([baseline]), **options)


def region_below(data, k, n=12, tries=1, attempts=1):
    """P(fewer than k of n pass), the largest over the gate's (rate, icc) set (recommend's
    per-gate bound), by brute force over 200 iccs and with scipy alone: the set's edges
    from :func:`tests.reference.gate_set_edges`, each case failing a try with the run's
    rate x (x the set's upper rate, or Beta-distributed with that mean and icc), `tries`
    tries per case (rerun-failing), and the build failing only if all `attempts` whole
    attempts fail."""
    from scipy import special, stats

    worst = 0.0
    for icc, _, hi in _gate_edges(data):
        x = np.array([hi])
        weights = np.ones(1)
        if icc > 0 and 0 < hi < 1:
            # Gauss-Jacobi: exact for the polynomial in x below (degree n * tries < 80)
            a, b = hi * (1 - icc) / icc, (1 - hi) * (1 - icc) / icc
            t, weights = special.roots_jacobi(40, b - 1, a - 1)
            x = (1 + t) / 2
        below = stats.binom.cdf(k - 1, n, 1 - x**tries) if k > 0 else np.zeros_like(x)
        value = float(weights @ below / weights.sum())
        worst = max(worst, value**attempts)
    return worst


_EDGES: dict[tuple, list] = {}


def _gate_edges(data):
    """The gate's set at 200 iccs across its range (the range from gatecal, the edges not)."""
    from gatecal._analyses.noise.bounds import noise_bounds
    from tests.reference import gate_set_edges

    rec = gatecal.recommend_gate(data, detection=0.0)
    failures, observed = _check._baseline_counts(data, rec)
    key = (tuple(failures), tuple(observed))
    if key not in _EDGES:
        bounds = noise_bounds(failures, observed)
        rhos = np.linspace(bounds.gate_icc_bottom, bounds.gate_icc_top, 201)[:-1]
        # below icc 2e-3 scipy's Gauss-Jacobi weights overflow (a + b > 500): icc 0 and above
        rhos = rhos[(rhos == 0) | (rhos >= 2e-3)]
        _EDGES[key] = gate_set_edges(failures, observed, bounds.gate_cutoff, list(rhos))[0]
    return _EDGES[key]


def assert_bound(ours, dense):
    """`ours` is a maximum the dense grid never beats and comes within 1% of (the grid
    leaves out iccs in (0, 2e-3), where a quiet baseline's tiniest tails peak)."""
    assert dense <= ours * (1 + 1e-7) + 1e-15
    assert ours <= dense * (1 + 1e-2) + 1e-14


def test_default_gate_is_the_case_aware_one_when_cases_differ(tmp_path, baseline):
    # case-00 failed 10 of 30 runs, case-01 6, the other ten never: cases differ
    data = gatecal.read_runs([baseline])
    rec = gatecal.recommend_gate(data, false_alarm=0.05)
    assert rec.case_spread is not None and rec.case_spread.heterogeneous
    res = decide(tmp_path, baseline)
    assert res.gate_kind == "cases" and res.gate == "cases"
    assert res.false_alarm == rec.case_gate.false_alarm == pytest.approx(1 / 31)
    assert res.allowed == rec.case_gate.allowed == 1


def test_count_gate_is_recommends_strictest_within_budget(tmp_path, baseline):
    data = gatecal.read_runs([baseline])
    rec = gatecal.recommend_gate(data, false_alarm=0.05)
    res = decide(tmp_path, baseline, gate="count")
    assert res.gate_kind == "count"
    admissible = [k for k, (fa, _) in enumerate(rec.table) if fa <= 0.05]
    assert res.k_min == max(admissible)
    assert res.false_alarm == rec.table[res.k_min][0]
    assert res.gate == f"fails<={12 - res.k_min}" and res.cases == 12
    # and the number is the worst tail over the gate's set, computed with scipy alone
    assert_bound(res.false_alarm, region_below(data, res.k_min))
    assert region_below(data, res.k_min + 1) > 0.05  # the next stricter gate is over budget


def test_pass_with_known_flaky_failures_and_the_p_value(tmp_path, baseline):
    res = decide(tmp_path, baseline, failing=["case-00", "case-01"], gate="count")
    assert res.decision == "pass" and res.exit_code == 0
    assert res.passed == 10 and res.k_min <= 10
    assert res.known_flaky == ["case-01", "case-00"] and res.new_failures == []
    # P(K <= 10) = P(K < 11) at the worst point of the region
    assert_bound(res.p_value, region_below(gatecal.read_runs([baseline]), 11))
    flaky = {f.case: f for f in res.failing}
    assert flaky["case-00"].baseline.failures == 10 and flaky["case-00"].baseline.trials == 30
    assert flaky["case-01"].baseline.failures == 6


def test_fail_names_new_failures_with_their_own_probability(tmp_path, baseline):
    res = decide(
        tmp_path,
        baseline,
        failing=["case-05", "case-06", "case-07", "case-08", "case-00"],
        gate="count",
    )
    assert res.decision == "fail" and res.exit_code == 1
    assert res.new_failures == ["case-05", "case-06", "case-07", "case-08"]
    assert res.known_flaky == ["case-00"]
    new = res.failing[0]
    ref = gatecal.proportion_interval(0, 30)  # never failed in 30 known-good runs
    assert new.baseline.failures == 0 and new.probability == ref.high
    assert res.passed == 7
    assert_bound(res.p_value, region_below(gatecal.read_runs([baseline]), 8))
    assert res.p_value < res.false_alarm  # failing the gate is the rarer event


def test_each_failing_case_is_labelled_by_its_own_record_not_by_a_flaky_rate(tmp_path, baseline):
    # case-00 failed in 10 of 30 runs: flaky, whatever --flaky-rate says (deprecated)
    res = decide(tmp_path, baseline, failing=["case-00", "case-05"])
    kinds = {f.case: f.kind for f in res.failing}
    assert kinds == {"case-00": "flaky", "case-05": "new"} and res.new_failures == ["case-05"]
    new, flaky = res.failing  # new failures first
    assert new.healthy_rate < flaky.healthy_rate and new.weight > flaky.weight
    deprecated = decide(tmp_path, baseline, failing=["case-00"], flaky_rate=0.34)
    assert deprecated.new_failures == [] and any("deprecated" in w for w in deprecated.warnings)


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"skipped": ["case-03"]}, "1 of 12 baseline cases have no complete verdict: case-03"),
        ({"errors": ["case-04"]}, "1 error or unscored verdicts (at most 0 allowed"),
        ({"skipped": CASES}, "the current run is empty"),
    ],
)
def test_incomplete_evidence_never_passes(tmp_path, baseline, kwargs, reason):
    res = decide(tmp_path, baseline, **kwargs)
    assert res.decision == "incomplete" and res.exit_code == 1 and res.p_value is None
    assert res.reasons[0] == "incomplete evidence never passes"
    assert any(r.startswith(reason) for r in res.reasons[1:]), res.reasons


def test_errors_within_max_errors_count_as_failures(tmp_path, baseline):
    res = decide(tmp_path, baseline, errors=["case-04"], max_errors=1, gate="count")
    assert res.decision == "pass" and res.passed == 11 and res.error_cases == ("case-04",)
    assert [(f.case, f.status) for f in res.failing] == [("case-04", "error")]
    # the case-aware gate counts it as a failure too: of a case that never failed, so new
    res = decide(tmp_path, baseline, errors=["case-04"], max_errors=1)
    assert res.decision == "fail" and res.new_failures == ["case-04"]


def test_a_failing_case_the_baseline_never_saw_fails_the_run(tmp_path, baseline):
    res = decide(tmp_path, baseline, extra={"brand-new": "fail"})
    assert res.decision == "fail" and res.passed == 12
    assert res.uncalibrated_failures == ("brand-new",)
    ok = decide(tmp_path, baseline, extra={"brand-new": "pass"})
    assert ok.decision == "pass" and "not in the baseline" in ok.warnings[-1]


def test_gate_rule_and_recommended_gate(tmp_path, baseline, capsys):
    assert decide(tmp_path, baseline, failing=["case-00"], gate="all").decision == "fail"
    rec_file = tmp_path / "rec.json"
    assert main(["recommend", str(baseline), "--regression", "5", "--format", "json",
                 "--out", str(rec_file)]) == 0  # fmt: skip
    rec = json.loads(rec_file.read_text())
    cases_gate = gatecal.load_recommended_gate(rec_file)  # cases differ: the case-aware gate
    assert cases_gate.kind == rec["gate"]["kind"] == "cases"
    assert cases_gate.allowed == rec["case_gate"]["allowed"] == 1
    res = decide(tmp_path, baseline, gate=cases_gate)
    assert res.gate_kind == "cases" and res.false_alarm == rec["case_gate"]["false_alarm"]
    rec.pop("gate")  # a file without the written gate: its recommended count gate
    gate = gatecal.recommended_gate_from(rec, "recommendation")
    assert gate.k_min == rec["recommended"]["k_min"] and gate.cases == 12
    res = decide(tmp_path, baseline, gate=gate)
    assert res.k_min == gate.k_min and res.false_alarm == rec["recommended"]["false_alarm"]
    assert gate.p_value(11) == rec["table"][12]["false_alarm"]
    rec["cases"] = 11
    with pytest.raises(gatecal.ParameterError, match="recommendation"):
        gatecal.recommended_gate_from(rec, "recommendation")
    rec["recommended"] = None
    with pytest.raises(gatecal.ParameterError, match="recommends no gate"):
        gatecal.recommended_gate_from(rec)


def test_recommended_gate_for_another_suite_is_refused(tmp_path, baseline):
    small = write_runs(tmp_path / "small.jsonl",
                       {r: {c: o for c, o in row.items() if c != "case-11"}
                        for r, row in baseline_runs().items()})  # fmt: skip
    rec_file = tmp_path / "rec.json"
    assert main(["recommend", str(small), "--regression", "5", "--format", "json",
                 "--out", str(rec_file)]) == 0  # fmt: skip
    with pytest.raises(gatecal.ParameterError, match="for 11 cases; the baseline has 12"):
        decide(tmp_path, baseline, gate=gatecal.load_recommended_gate(rec_file))


def overdispersed_runs():
    """Whole runs go bad together: 4 of 40 runs fail 6 cases, the others none."""
    return {f"n{r:02d}": {c: "fail" if r % 10 == 0 and i < 6 else "pass"
                          for i, c in enumerate(CASES)} for r in range(40)}  # fmt: skip


@pytest.mark.parametrize(
    "runs", [baseline_runs(), overdispersed_runs()], ids=["quiet", "overdispersed"]
)
def test_policy_false_alarm_is_the_worst_over_the_gates_set(tmp_path, runs):
    data = gatecal.read_runs([write_runs(tmp_path / "b.jsonl", runs)])
    rec = gatecal.recommend_gate(data, detection=0.0)
    # rerun-failing-1: a case fails only if both tries fail; rerun-1: both attempts fail
    for policy, kw in ((gatecal.Policy(rerun_failing=1), {"tries": 2}),
                       (gatecal.Policy(rerun=1), {"attempts": 2})):  # fmt: skip
        fas = _false_alarms(rec, policy, data)
        for k in (1, 6, 9, 10, 11, 12):
            assert_bound(fas[k], region_below(data, k, **kw))
    # the single policy is recommend's own table, and that is the same worst-case tail
    assert _false_alarms(rec, gatecal.Policy(), data) == [fa for fa, _ in rec.table]
    for k in (1, 9, 10, 11, 12):
        assert_bound(rec.table[k][0], region_below(data, k))


def test_several_runs_need_a_policy_and_the_policy_combines_them(tmp_path, baseline):
    first = {c: "pass" for c in CASES} | {"case-05": "fail", "case-06": "fail"}
    rerun = {"case-05": "pass", "case-06": "fail"}
    path = current(tmp_path, runs={"try-1": first, "try-2": rerun})
    cur = gatecal.read_runs([path])
    base = gatecal.read_runs([baseline])
    # several runs and no policy: refused (ambiguous), not decided
    with pytest.raises(
        gatecal.ParameterError, match=r"holds 2 runs \(try-1, try-2\): name the --policy"
    ):
        gatecal.check_gate(cur, base)
    res = gatecal.check_gate(cur, base, policy="rerun-failing-1")
    assert res.decision == "pass" and res.passed == 11 and res.new_failures == ["case-06"]
    assert res.false_alarm == _false_alarms(gatecal.recommend_gate(base, detection=0.0),
                                            gatecal.Policy(rerun_failing=1), base)[res.k_min]  # fmt: skip
    # rerun-failing-2 allows another rerun of case-06: without it the evidence is incomplete
    res = gatecal.check_gate(cur, base, policy="rerun-failing-2")
    assert res.decision == "incomplete" and "case-06 did not pass in 2 attempt(s)" in res.reasons[1]
    # repeat-2-of-3 needs 3 whole runs
    res = gatecal.check_gate(cur, base, policy="repeat-2-of-3")
    assert res.decision == "incomplete"
    with pytest.raises(gatecal.ParameterError, match="check combines whole runs"):
        gatecal.check_gate(cur, base, policy="majority-3")


@settings(max_examples=25, deadline=None)
@given(failing=st.sets(st.sampled_from(CASES), max_size=6), budget=st.sampled_from([0.01, 0.05]))
def test_the_gate_passes_exactly_when_the_p_value_reaches_its_false_alarm(failing, budget):
    # p = P(K <= passed) = false alarm of the gate k_min = passed + 1, and the false alarm
    # grows with k_min, so passing (passed >= k_min) means p >= the gate's false alarm
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        base = write_runs(Path(tmp) / "b.jsonl", baseline_runs())
        res = decide(Path(tmp), base, failing=sorted(failing), false_alarm=budget, gate="count")
        case = decide(Path(tmp), base, failing=sorted(failing), false_alarm=budget)
    assert res.passed == 12 - len(failing)
    assert (res.decision == "pass") == (res.passed >= res.k_min)
    if res.decision == "pass":
        assert res.p_value >= res.false_alarm
    else:  # equal when one case short of k_min
        assert res.p_value <= res.false_alarm
    # the case-aware gate: fails exactly when fewer than `allowed` known-good runs weigh as
    # much, and then its rank p-value is within the gate's false alarm
    if case.gate_kind == "cases":  # at 0.01, 30 known-good runs are too few for it
        assert (case.decision == "fail") == (case.heavier_runs < case.allowed)
        assert (case.decision == "fail") == (case.p_value <= case.false_alarm)


# -- the command ------------------------------------------------------------------------------


def test_cli_exit_codes_and_json_contract(tmp_path, baseline, capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    healthy = current(tmp_path, failing=["case-00"], name="healthy.jsonl")
    code, out, err = run_cli("check", healthy, "--baseline", baseline, "--format", "json")
    data = json.loads(out)
    assert code == 0 and err == ""
    assert list(data)[:13] == ["format", "version", "gatecal_version", "decision", "gate", "k_min",
                               "cases", "passed", "false_alarm", "p_value", "new_failures",
                               "known_flaky", "errors"]  # fmt: skip
    assert (data["format"], data["version"]) == ("gatecal.check", 2)
    assert data["gatecal_version"] == gatecal.__version__
    assert data["decision"] == "pass" and data["known_flaky"] == ["case-00"]
    bad = current(
        tmp_path, failing=["case-05", "case-06", "case-07", "case-08", "case-09"], name="bad.jsonl"
    )
    code, out, _ = run_cli("check", bad, "--baseline", baseline)
    assert code == 1
    assert out.startswith("gatecal check: FAIL (exit 1)\n")
    assert "  case-05  failed 0 of 30 known-good runs; healthy builds fail it" in out
    assert "; new (never failed before)" in out
    assert "looks like a regression" in out and "case-05, case-06, case-07, case-08" in out
    gap = current(tmp_path, skipped=["case-02"], name="gap.jsonl")
    code, out, _ = run_cli("check", gap, "--baseline", baseline)
    assert (
        code == 1
        and "INCOMPLETE" in out
        and "1 of 12 baseline cases have no complete verdict" in out
    )


def test_cli_summary_file_and_github_step_summary(tmp_path, baseline, capsys, monkeypatch):
    step = tmp_path / "step.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    bad = current(tmp_path, failing=["case-05", "case-06", "case-07", "case-08", "case-09"])
    summary = tmp_path / "summary.md"
    code, _, _ = run_cli("check", bad, "--baseline", baseline, "--summary", summary)
    assert code == 1
    text = summary.read_text()
    assert text.startswith("### ❌ gatecal check: FAIL")
    assert "| case-05 | **new failure** | 0 of 30 |" in text
    assert step.read_text() == "earlier step\n" + text + "\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gate", "0.9", "--gate-from", "x.json"], "--gate can't be combined with --gate-from"),
        (["--gate", "most"], "--gate must be 'all', a pass rate"),
        (
            ["--policy", "majority-3"],
            "--policy must be single, repeat-K-of-N, rerun-failing-R or rerun-R",
        ),
        (["--max-errors", "-1"], "--max-errors must be an integer >= 0 (got -1)"),
        (["--format", "csv"], "--format must be one of table, markdown, json, junit (got 'csv')"),
        (["--flaky-rate", "2"], "--flaky-rate must be a number in [0, 1] (got '2')"),
        (["--gate-from", "missing.json"], "--gate-from could not be read"),
    ],
)
def test_cli_usage_errors_are_one_line(tmp_path, baseline, capsys, args, message):
    cur = current(tmp_path)
    code, out, err = run_cli("check", cur, "--baseline", baseline, *args)
    assert code == 2 and out == ""
    assert err.startswith(f"gatecal: error: {message}") and err.count("\n") == 1


def test_cli_gate_from_a_file_that_recommends_nothing(tmp_path, baseline, capsys):
    rec = tmp_path / "rec.json"
    assert main(["recommend", str(baseline), "--false-alarm", "1e-12", "--format", "json",
                 "--out", str(rec)]) == 0  # fmt: skip
    document = json.loads(rec.read_text())
    assert document["within_budget"] is None  # no count gate within 1e-12
    legacy = tmp_path / "legacy.json"  # a file without the written gate: nothing to decide with
    legacy.write_text(json.dumps({k: v for k, v in document.items() if k != "gate"}))
    capsys.readouterr()
    code, _, err = run_cli("check", current(tmp_path), "--baseline", baseline, "--gate-from", legacy)  # fmt: skip
    assert code == 2 and "--gate-from recommends no gate" in err and "strictest" not in err
    # nor can the case-aware gate: ranking a run among 30 known-good ones cannot go below
    # 1/31, so no gate is written, and check says so
    assert document["gate"]["kind"] == "none"
    code, _, err = run_cli("check", current(tmp_path), "--baseline", baseline, "--gate-from", rec)  # fmt: skip
    assert code == 2 and "--gate-from recommends no gate" in err
    # one broken case: too small a regression for the count gate, not for the case-aware one
    assert main(["recommend", str(baseline), "--regression", "1", "--format", "json",
                 "--out", str(rec)]) == 0  # fmt: skip
    document = json.loads(rec.read_text())
    assert document["recommended"] is None and document["within_budget"] is not None
    assert document["gate"]["kind"] == "cases" and document["gate"]["meets_targets"] is True
    # a target it misses (detection 1 of a regression it sees 0.9 of the time at most)
    assert main(["recommend", str(baseline), "--regression", "1", "--false-alarm", "0.02",
                 "--format", "json", "--out", str(rec)]) == 0  # fmt: skip
    document = json.loads(rec.read_text())
    assert document["gate"]["meets_targets"] is False and document["gate"]["shortfall"]
    # the loop does not dead-end: check decides with the best valid gate, states the shortfall
    capsys.readouterr()
    code, out, _ = run_cli("check", current(tmp_path), "--baseline", baseline, "--gate-from", rec)  # fmt: skip
    shortfall = [line for line in out.splitlines() if line.startswith("shortfall: ")]
    assert code == 0 and shortfall == [f"shortfall: {document['gate']['shortfall']}"]
    code, out, _ = run_cli("check", current(tmp_path), "--baseline", baseline, "--gate-from", rec, "--require-targets")  # fmt: skip
    assert code == 1 and "falls short of its targets (--require-targets)" in out


def test_many_failing_cases_are_listed_in_part_in_text_and_markdown_in_full_in_json(tmp_path):
    """A run with more failing cases than LISTED: the text and the job summary list the
    first LISTED and say how many more, the verdict sentence names NAMED; json lists all."""
    from gatecal._render.check import LISTED, NAMED

    cases = [f"c{i:03d}" for i in range(150)]
    base = {  # two cases fail in each known-good run, a different two each time
        f"night-{r:02d}": {
            c: "fail" if i in ((r * 7) % 150, (r * 13 + 5) % 150) else "pass"
            for i, c in enumerate(cases)
        }
        for r in range(40)
    }
    baseline = write_runs(tmp_path / "baseline.jsonl", base)
    flaky = {c for outcomes in base.values() for c, what in outcomes.items() if what == "fail"}
    failing = [c for c in cases if c not in flaky][: LISTED + 12]  # all new failures
    run = {"ci-1": {c: "fail" if c in failing else "pass" for c in cases}}
    res = gatecal.check_gate(
        gatecal.read_runs([write_runs(tmp_path / "ci.jsonl", run)]),
        gatecal.read_runs([baseline]),
    )
    assert res.decision == "fail" and len(res.failing) == len(failing), res.reasons
    text = gatecal.render_check(res)
    listed = [line for line in text.splitlines() if line.startswith("  c")]
    assert [line.split()[0] for line in listed] == failing[:LISTED]
    assert "  ... and 12 more (--format json lists every case)" in text
    sentence = text.splitlines()[-1]
    assert ", ".join(failing[:NAMED]) + f" and {len(failing) - NAMED} more." in sentence
    markdown = gatecal.render_check(res, "markdown")
    assert sum(line.startswith("| c") for line in markdown.splitlines()) == LISTED
    assert "and 12 more" in markdown
    document = json.loads(gatecal.render_check(res, "json"))
    assert len(document["failing"]) == len(failing)


@pytest.mark.parametrize("unseen", [False, True])
def test_the_baseline_cases_are_taken_in_recommends_order(tmp_path, unseen):
    """check decides over the baseline's cases (full ids) in recommend's order: all of
    them, or (a case that only ever errored in the good runs, never observed) the
    others."""
    runs = baseline_runs(n_runs=12)
    if unseen:
        for outcomes in runs.values():
            outcomes["case-zz"] = "error"
    data = gatecal.read_runs([write_runs(tmp_path / "baseline.jsonl", runs)])
    rec, short, order, rates = _check._measured(data, 0.05, 0.95, "wilson")
    assert [short[c] for c in order] == list(rec.case_order)
    assert ("case-zz" in data.cases()) == unseen and "case-zz" not in order
    assert len(order) == len(CASES)
    # recommend's own measure but for the sorted per-case records, whose intervals come
    # in the cases' order instead, and the case-aware gate's detection estimates (check
    # decides; it does not estimate what the gate can see)
    full = gatecal.recommend_gate(data, detection=0.0)
    gate = dataclasses.replace(full.case_gate, detections=())
    assert rec.per_case == () and rec == dataclasses.replace(full, per_case=(), case_gate=gate)
    assert len({c.rate for c in full.per_case}) > 1  # the cases' rates differ
    by_name = {c.case: c.rate for c in full.per_case}
    assert [rates.rate(i) for i in range(len(order))] == [by_name[c] for c in rec.case_order]
