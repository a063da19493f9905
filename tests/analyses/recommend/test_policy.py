"""recommend --policies: each per-case rule's strictest gate, its bounds and cost, the choice."""

import csv
import io
import json
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose

import gatecal
from gatecal import JudgeNoise, Policy, Suite, parse_policy, policy_rates, read_runs
from gatecal._analyses.noise.bounds import noise_bounds
from gatecal._analyses.recommend.policy import DEFAULT_RULES, recommend_policy, rule_rates
from gatecal._model.gates import Gate
from tests.conftest import run_cli
from tests.paths import ROOT

NIGHTLY = ROOT / "reports" / "nightly-junit"

pytest_plugins = ["pytester"]

RULES = [
    "single",
    "majority-3",
    "majority-2",
    "confirm-2",
    "repeat-2-of-3",
    "pass^2",
    "pass@2",
    "rerun-failing-2",
    "rerun-1",
    "rerun-failing-1+repeat-2-of-3",
    "confirm-1+rerun-failing-1",
    "majority-3+rerun-1",
]


# -- brute force: every evaluation of every case enumerated, exact fractions -----------------


class _More(Exception):
    pass


def _case_passes(policy, draw):
    """One case under `policy` (one attempt), each evaluation from `draw()` (True: passes)."""
    for _ in range(policy.rerun_failing + 1):
        passes = 0
        for _ in range(policy.repeat):
            if policy.confirm:
                ok = draw()
                if not ok:
                    again = sum(draw() for _ in range(policy.confirm))
                    ok = 2 * again > policy.confirm
            else:
                m = policy.majority
                votes = sum(draw() for _ in range(m))
                ok = 2 * votes > m or (m % 2 == 0 and policy.tie == "pass" and 2 * votes == m)
            passes += ok
        if passes >= policy.need:
            return True
    return False


def _sequences(policy, prefix=()):
    """Every sequence of evaluation outcomes one case can see, with its result."""
    bits = iter(prefix)

    def draw():
        try:
            return next(bits)
        except StopIteration:
            raise _More from None

    try:
        passed = _case_passes(policy, draw)
    except _More:
        yield from _sequences(policy, (*prefix, True))
        yield from _sequences(policy, (*prefix, False))
        return
    yield passed, prefix


def _rising(a, k):
    out = Fraction(1)
    for i in range(k):
        out *= a + i
    return out


def _expect(poly, rate, icc):
    """E over x ~ Beta(rate, icc) of a polynomial {(f, p): c} = sum c x^f (1 - x)^p."""
    if icc == 0:
        return sum(c * rate**f * (1 - rate) ** p for (f, p), c in poly.items())
    a, b = rate * (1 - icc) / icc, (1 - rate) * (1 - icc) / icc
    return sum(
        c * _rising(a, f) * _rising(b, p) / _rising(a + b, f + p) for (f, p), c in poly.items()
    )


def _times(one, two):
    out = {}
    for (f1, p1), c1 in one.items():
        for (f2, p2), c2 in two.items():
            key = (f1 + f2, p1 + p2)
            out[key] = out.get(key, 0) + c1 * c2
    return out


def _plus(one, two):
    out = dict(one)
    for key, c in two.items():
        out[key] = out.get(key, 0) + c
    return out


def brute_force(policy, n, rate, icc, broken=0):
    """Exact P(fail "at least k pass"), k = 0..n, and expected evaluations of a healthy run."""
    ok, bad, calls = {}, {}, {}
    for passed, seq in _sequences(policy):
        key = (seq.count(False), seq.count(True))
        target = ok if passed else bad
        target[key] = target.get(key, 0) + 1
        calls[key] = calls.get(key, 0) + len(seq)
    dist = [{(0, 0): 1}]  # dist[j]: P(j passes), over the healthy cases
    for _ in range(n - broken):
        new = [{} for _ in range(len(dist) + 1)]
        for j, poly in enumerate(dist):
            new[j] = _plus(new[j], _times(poly, bad))
            new[j + 1] = _plus(new[j + 1], _times(poly, ok))
        dist = new
    fails = []
    for k in range(n + 1):
        below = {}
        for poly in dist[:k]:
            below = _plus(below, poly)
        single = _expect(below, rate, icc) if below else Fraction(0)
        fails.append(single)
    attempt_calls = n * _expect(calls, rate, icc)
    final = [s ** (policy.rerun + 1) for s in fails]
    costs = [attempt_calls * sum(s**t for t in range(policy.rerun + 1)) for s in fails]
    return final, costs


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(("rate", "icc"), [(Fraction(1, 10), Fraction(1, 5)), (Fraction(3, 20), 0)])
def test_rule_rates_are_exact_against_fractions_for_a_tiny_suite(rule, rate, icc):
    policy = parse_policy(rule)
    n = 3
    for broken in (0, 1):
        exact, costs = brute_force(policy, n, rate, icc, broken)
        got, calls = rule_rates(policy, n, float(rate), float(icc), broken=broken)
        assert_allclose(got, [float(v) for v in exact], rtol=1e-12, atol=0)
        if broken == 0:
            assert_allclose(calls, [float(c) for c in costs], rtol=1e-12)
    assert exact[0] == 0 and exact[n] == 1  # one broken case of 3: "all pass" always fails


def _engine(policy, n, rate, icc, broken):
    """The policies engine on the same suite: one judge check per case (and one code check
    the first `broken` cases fail in the regressed build)."""
    suite = Suite.uniform(cases=n, judge_checks=1, code_checks=1 if broken else 0, failing=broken)
    gates = [Gate(text=f"fails<={n - k}", kind="fails", max_failures=n - k) for k in range(n + 1)]
    rows = policy_rates(suite, JudgeNoise(fnr=rate, fpr=rate, icc=icc), gates, policy).rows
    build = "regressed" if broken else "healthy"
    by_gate = {r.gate: r for r in rows if r.build == build}
    rows = [by_gate[g.text] for g in gates]
    return [r.failure_probability for r in rows], [r.judge_calls for r in rows]


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(("rate", "icc"), [(0.07, 0.05), (0.2, 0.3), (0.05, 0.0)])
def test_rule_rates_agree_with_the_policies_engine(rule, rate, icc):
    policy = parse_policy(rule)
    n = 12
    for broken in (0, 3):
        want, want_calls = _engine(policy, n, rate, icc, broken)
        got, calls = rule_rates(policy, n, rate, icc, broken=broken)
        assert_allclose(got[1:], want[1:], rtol=1e-9, atol=1e-300)
        assert got[0] == 0.0
        if broken == 0:
            assert_allclose(calls, want_calls, rtol=1e-9)


@pytest.mark.parametrize("rule", ["rerun-failing-1", "repeat-2-of-3", "confirm-2+rerun-1"])
def test_rule_rates_agree_with_a_call_by_call_simulation(rule):
    """Every judge call drawn (gatecal.simulate_policy, seeded): each gate's failures within
    the central 99.9% binomial interval of the exact rate, the mean calls within 4 standard
    errors of the exact expectation (bounded by the calls' range over the runs)."""
    from gatecal._common.intervals import binomial_interval

    policy, n, runs = parse_policy(rule), 12, 20_000
    suite = Suite.uniform(cases=n, judge_checks=1, code_checks=0)
    gates = [Gate(text=f"fails<={f}", kind="fails", max_failures=f) for f in range(4)]
    noise = JudgeNoise(fnr=0.15, fpr=0.15, icc=0.1)
    sample = gatecal.simulate_policy(
        suite, "healthy", noise, gates, policy, n_runs=runs, rng=20261201, method="calls"
    )
    exact, calls = rule_rates(policy, n, 0.15, 0.1)
    for gate in gates:
        k = n - gate.max_failures
        interval = binomial_interval(runs, float(exact[k]), 0.999)
        assert interval.low <= sample.failures[gate.text] <= interval.high
    worst = n * _degree_of(policy) * (policy.rerun + 1)  # most calls one CI run can make
    mean = sample.judge_calls[gates[0].text] / runs
    assert abs(mean - calls[n]) < 4 * worst / 2 / runs**0.5


def _degree_of(policy):
    check = 1 + policy.confirm if policy.confirm else policy.majority
    return check * policy.repeat * (policy.rerun_failing + 1)


def test_a_wrong_rule_formula_would_be_caught():
    # the engine tells the rules apart: pass^2 is not pass@2, nor confirm-2 majority-3
    pairs = [("pass^2", "pass@2"), ("confirm-2", "majority-3"), ("rerun-1", "rerun-failing-1")]
    for one, two in pairs:
        a, _ = rule_rates(parse_policy(one), 12, 0.07, 0.05)
        b, _ = _engine(parse_policy(two), 12, 0.07, 0.05, 0)
        assert np.max(np.abs(a[1:] - np.asarray(b[1:])) / np.asarray(b[1:])) > 0.01


# -- the bound: found on the set's edge, not sampled ----------------------------------------


@pytest.fixture(scope="module")
def nightly():
    return read_runs([NIGHTLY])


@pytest.fixture(scope="module")
def nightly_policies(nightly):
    return recommend_policy(nightly, regression="3")


def _bounds(data):
    from gatecal._analyses.recommend.gate import _healthy_outcomes

    _, _, outcome = _healthy_outcomes(data)
    return noise_bounds((outcome == 0).sum(axis=1), (outcome >= 0).sum(axis=1))


@pytest.mark.parametrize("rule", ["rerun-failing-1", "pass^2", "repeat-2-of-3"])
def test_each_gates_bound_is_the_largest_over_the_set(nightly, nightly_policies, rule):
    """A dense scan of the set's upper edge never beats the bound, and comes within 1e-3 of
    it (the bound is a value on the set, not a sample's maximum nor a loose cap); a scan
    inside the set (rates below the edge) never beats it either."""
    bounds = _bounds(nightly)
    policy = parse_policy(rule)
    row = nightly_policies.row(rule)
    n = nightly_policies.cases
    rhos = np.linspace(bounds.gate_icc_bottom, bounds.gate_icc_top, 401)
    scan = np.max([rule_rates(policy, n, bounds.edge(r), r)[0] for r in rhos], axis=0)
    fas = np.asarray(row.false_alarms)
    assert np.all(scan <= fas * (1 + 1e-9))
    assert np.all(fas[1:] <= scan[1:] * (1 + 1e-3))
    inside = [rule_rates(policy, n, 0.9 * bounds.edge(r), r)[0] for r in rhos[::20]]
    assert np.all(np.max(inside, axis=0) <= fas * (1 + 1e-9))
    dets = np.asarray(row.detections)  # detection: the smallest, on the lower edge
    low = np.min([rule_rates(policy, n, bounds.edge(r, False), r, broken=3)[0] for r in rhos], 0)
    assert np.all(dets <= low * (1 + 1e-9) + 1e-300)


def test_the_worst_icc_of_a_rule_need_not_be_an_end_of_the_set(nightly):
    """Why the icc is searched, not taken at its top: for "at most 2 failing" of 12 under
    rerun-failing-1 the false alarm along the set's edge peaks inside (0, icc_top)."""
    bounds = _bounds(nightly)
    policy = parse_policy("rerun-failing-1")
    rhos = np.linspace(0.0, bounds.gate_icc_top, 61)
    values = [float(rule_rates(policy, 12, bounds.edge(r), r)[0][10]) for r in rhos]
    peak = int(np.argmax(values))
    assert 0 < peak < len(rhos) - 1


def test_single_is_recommends_own_table(nightly, nightly_policies):
    rec = gatecal.recommend_gate(nightly, regression="3")
    row = nightly_policies.row("single")
    assert_allclose(row.false_alarms, [fa for fa, _ in rec.table], rtol=1e-9)
    assert_allclose(row.detections, [d for _, d in rec.table], rtol=1e-9, atol=1e-300)
    assert row.k_min == rec.within_budget and row.meets == (rec.recommended is not None)


@pytest.mark.parametrize("rule", ["rerun-failing-1", "repeat-2-of-3", "pass^2", "rerun-1"])
def test_checks_default_gate_under_the_rule_is_the_rules_gate(nightly, rule, tmp_path):
    copy = tmp_path / "ci.xml"
    copy.write_bytes(sorted(NIGHTLY.glob("*.xml"))[0].read_bytes())
    current = read_runs([copy])
    got = gatecal.check_gate(current, nightly, policy=rule)
    row = recommend_policy(nightly, policies=[rule], regression="3").row(rule)
    assert got.k_min == row.k_min
    assert_allclose(got.false_alarm, row.false_alarm, rtol=1e-9)


def test_the_choice_is_the_cheapest_rule_meeting_both_targets(nightly_policies):
    rows = nightly_policies.rows
    assert [r.rule for r in rows] == list(DEFAULT_RULES)
    meeting = [r for r in rows if r.meets]
    assert meeting, "the nightly suite meets both targets with some rule"
    choice = nightly_policies.choice
    assert choice is not None and choice.meets
    assert all(choice.judge_calls <= r.judge_calls for r in meeting)
    for r in rows:
        assert (r.k_min is not None and r.detection >= 0.95) == r.meets
        if r.k_min is not None:
            assert r.false_alarm <= 0.05 and r.false_alarm == r.false_alarms[r.k_min]
            if r.k_min < len(r.false_alarms) - 1:
                assert r.false_alarms[r.k_min + 1] > 0.05  # the strictest within budget
    single = nightly_policies.row("single")
    assert not single.meets and single.judge_calls == 12.0
    # rerun-failing-1 at the fitted rate and icc 0: 12 (1 + x) evaluations
    rate = nightly_policies.rate
    assert_allclose(nightly_policies.row("rerun-failing-1").judge_calls, 12 * (1 + rate))


def test_expected_calls_under_icc_against_fractions():
    # rerun-failing-2: E[1 + x + x^2] per case over Beta(1/10, icc 1/5)
    policy = parse_policy("rerun-failing-2")
    _, calls = rule_rates(policy, 4, 0.1, 0.2)
    a, b = Fraction(2, 5), Fraction(18, 5)
    ex2 = a * (a + 1) / ((a + b) * (a + b + 1))
    assert_allclose(calls, float(4 * (1 + Fraction(1, 10) + ex2)), rtol=1e-13)


# -- measured regressed runs -----------------------------------------------------------------


def _write(path, healthy, regressed, cases):
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "case", "passed", "build"])
        for build, matrix in (("healthy", healthy), ("regressed", regressed)):
            for r, row in enumerate(matrix):
                for case, ok in zip(cases, row, strict=True):
                    writer.writerow([f"{build[0]}{r}", case, "pass" if ok else "fail", build])


def test_measured_regression_detection_against_enumeration(tmp_path):
    cases = ["a", "b", "c", "d"]
    rng = np.random.default_rng(7)
    healthy = (rng.random((40, 4)) > 0.05).tolist()
    # regressed: a fails 4 of 5, b 2 of 5, c and d never
    regressed = [[i >= 4, i >= 2, True, True] for i in range(5)]
    path = tmp_path / "runs.csv"
    _write(path, healthy, regressed, cases)
    got = recommend_policy(read_runs([path]), policies=["pass^2", "rerun-failing-1"])
    assert got.regression == "measured: 5 regressed runs"
    rates = {"a": Fraction(4, 5), "b": Fraction(2, 5), "c": Fraction(0), "d": Fraction(0)}
    for rule, fail in (
        ("pass^2", lambda x: 1 - (1 - x) ** 2),
        ("rerun-failing-1", lambda x: x * x),
    ):
        q = [1 - fail(rates[c]) for c in cases]
        dets = []
        for k in range(5):  # P(fewer than k of 4 pass), every outcome enumerated
            total = Fraction(0)
            for bits in range(16):
                passed = [bool(bits >> i & 1) for i in range(4)]
                if sum(passed) < k:
                    p = Fraction(1)
                    for qi, ok in zip(q, passed, strict=True):
                        p *= qi if ok else 1 - qi
                    total += p
            dets.append(float(total))
        assert_allclose(got.row(rule).detections, dets, rtol=1e-12, atol=1e-300)


def test_policy_objects_are_named_by_the_rule_text_that_reads_back(nightly):
    given = [Policy(), Policy(rerun_failing=1), Policy(repeat=3, need=2), Policy(majority=2)]
    got = recommend_policy(nightly, policies=given, regression="3")
    assert [r.rule for r in got.rows] == [
        "single",
        "rerun-failing-1",
        "repeat-2-of-3",
        "majority-2",
    ]
    assert [parse_policy(r.rule) for r in got.rows] == given
    tie = recommend_policy(nightly, policies=[Policy(majority=2, tie="pass")], regression="3")
    assert tie.rows[0].rule == Policy(majority=2, tie="pass").describe()


# -- bad rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "rule"),
    [
        (["sprt-5"], "must be per-case rules"),
        (["single", "single"], "must not name a rule twice"),
        ([], "must name at least one rule"),
        (["majority-99"], "must evaluate a case at most 64 times"),
        ([Policy(call_icc=0.2, majority=3)], "must not set call_icc"),
    ],
)
def test_bad_rules_are_refused(nightly, rules, rule):
    with pytest.raises(gatecal.ParameterError, match=rule):
        recommend_policy(nightly, policies=rules)


# -- the command -----------------------------------------------------------------------------


DEFAULTS = ",".join(DEFAULT_RULES)


@pytest.fixture(scope="module")
def gate_file(tmp_path_factory):
    """recommend --policies on the nightly runs, as the gate file check and the plugin read."""
    path = tmp_path_factory.mktemp("gate") / "gate.json"
    base = ["recommend", str(NIGHTLY), "--regression", "3", "--policies", DEFAULTS]
    code, _, err = run_cli(*base, "--format", "json", "--out", str(path))
    assert code == 0, err
    return path


def test_the_command_prints_one_row_per_rule_and_the_choice(nightly_policies):
    code, out, err = run_cli("recommend", str(NIGHTLY), "--regression", "3", "--policies", DEFAULTS)
    assert code == 0, err
    lines = out.splitlines()
    head = lines.index(
        "rule             gate               false alarm  detection  judge calls  meets"
    )
    for line, row in zip(lines[head + 1 :], nightly_policies.rows, strict=False):
        cells = line.split()
        assert cells[0] == row.rule
        assert cells[-1] == ("yes" if row.meets else "no")
        assert float(cells[-2]) == pytest.approx(row.judge_calls, rel=1e-3)
    chosen = nightly_policies.choice
    assert any(
        line.startswith(f"chosen rule: {chosen.rule} (")
        and f"at least {chosen.k_min} of 12" in line
        for line in lines
    )
    assert "operating table:" in out  # recommend's own output is all there


def test_json_carries_the_rules_and_csv_one_row_per_rule(gate_file, nightly_policies):
    document = json.loads(gate_file.read_text())
    assert document["format"] == "gatecal.recommend"
    got = document["policies"]
    assert got["chosen"] == nightly_policies.chosen
    assert [c["rule"] for c in got["candidates"]] == list(DEFAULT_RULES)
    for c, row in zip(got["candidates"], nightly_policies.rows, strict=True):
        assert c["k_min"] == row.k_min and c["meets"] == row.meets
        assert [t["false_alarm"] for t in c["table"]] == pytest.approx(row.false_alarms, rel=1e-9)
    code, out, _ = run_cli(
        "recommend", str(NIGHTLY), "--regression", "3", "--policies", DEFAULTS, "--format", "csv"
    )
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["rule"] for r in rows] == list(DEFAULT_RULES)
    assert [r["chosen"] for r in rows].count("true") == 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("bogus", "--policies must be a per-case rule: single, majority-M, "),
        ("sprt-5", "--policies must be per-case rules (a sequential gate decides over runs"),
        (
            "single,pass^2,repeat-2-of-2",
            "--policies must not name a rule twice (got 'repeat-2-of-2')",
        ),
        ("single,", "--policies must be a per-case rule"),
        ("majority-99", "--policies must evaluate a case at most 64 times per attempt"),
    ],
)
def test_a_bad_rule_is_one_line_exit_2_and_writes_nothing(tmp_path, value, message):
    out = tmp_path / "gate.json"
    code, stdout, err = run_cli("recommend", str(NIGHTLY), "--policies", value, "--out", str(out))
    assert code == 2 and stdout == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not out.exists()


def _current(tmp_path, *nights):
    paths = []
    for i, night in enumerate(nights):
        path = tmp_path / f"ci-{i}.xml"
        path.write_bytes((NIGHTLY / f"night-{night:02d}.xml").read_bytes())
        paths.append(str(path))
    return paths


def test_check_applies_the_rule_the_gate_file_chose(gate_file, nightly_policies, tmp_path):
    chosen = nightly_policies.choice
    current = _current(tmp_path, 0, 1)
    base = ["check", *current, "--baseline", str(NIGHTLY), "--gate-from", str(gate_file)]
    code, out, err = run_cli(*base, "--format", "json")
    assert code in (0, 1), err
    result = json.loads(out)
    assert result["policy"] == chosen.rule
    assert result["k_min"] == chosen.k_min
    assert result["false_alarm"] == pytest.approx(chosen.false_alarm, rel=1e-9)
    gate = gatecal.load_recommended_gate(gate_file)
    assert gate.policy == chosen.rule and gate.k_min == chosen.k_min
    # another --policy than the file's is refused, in one line
    code, _, err = run_cli(*base, "--policy", "rerun-1")
    assert code == 2 and err.count("\n") == 1
    assert f"--policy must be the rule the gate file chose, {chosen.rule}" in err


def test_a_gate_file_without_rules_is_read_as_before(tmp_path):
    path = tmp_path / "gate.json"
    base = ["recommend", str(NIGHTLY), "--regression", "3", "--false-alarm", "0.2"]
    code, _, _ = run_cli(*base, "--format", "json", "--out", str(path))
    assert code == 0
    gate = gatecal.load_recommended_gate(path)
    assert gate.policy == "single" and gate.k_min == 10


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c, d: c.__setitem__("k_min", c["k_min"] - 1), "does not check out"),
        (lambda c, d: c.__setitem__("meets", False), "does not check out"),
        (lambda c, d: d["policies"].__setitem__("chosen", None), "chose no per-case rule"),
        (lambda c, d: d["policies"].__setitem__("chosen", "rerun-7"), "policies.chosen names one"),
        (lambda c, d: c.__setitem__("checkable", False), "which check cannot apply"),
        (lambda c, d: c["table"].pop(), "policies.candidates' k_min and table"),
    ],
)
def test_an_edited_rule_in_a_gate_file_is_refused(gate_file, tmp_path, edit, message):
    document = json.loads(gate_file.read_text())
    chosen = document["policies"]["chosen"]
    row = next(c for c in document["policies"]["candidates"] if c["rule"] == chosen)
    edit(row, document)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    with pytest.raises(gatecal.ParameterError, match=message):
        gatecal.load_recommended_gate(path)


def test_the_plugin_refuses_a_gate_file_with_a_rule(pytester, gate_file):
    pytester.makepyfile(test_x="def test_a():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--gatecal-gate-from", str(gate_file))
    assert result.ret == 4
    assert "chose the per-case rule 'rerun-failing-1', which the plugin does not apply" in (
        result.stderr.str()
    )


# -- do the cases share a rate? ---------------------------------------------------------------


def test_cases_differ_is_cochrans_q(nightly):
    from statsmodels.stats.contingency_tables import cochrans_q

    from gatecal._analyses.recommend.gate import _healthy_outcomes
    from gatecal._analyses.recommend.policy import cases_differ

    rng = np.random.default_rng(3)
    table = (rng.random((25, 7)) > rng.uniform(0.02, 0.4, size=7)).astype(np.int8)
    assert_allclose(cases_differ(table), cochrans_q(1 - table).pvalue, rtol=1e-12)
    holes = table.copy()
    holes[[2, 5], [1, 4]] = -1  # runs that missed a case are left out of the test
    keep = np.ones(25, bool)
    keep[[2, 5]] = False
    assert_allclose(cases_differ(holes), cochrans_q(1 - table[keep]).pvalue, rtol=1e-12)
    assert cases_differ(np.ones((5, 4), np.int8)) is None  # no failure: nothing to test
    assert cases_differ(np.zeros((5, 1), np.int8)) is None
    _, _, outcome = _healthy_outcomes(nightly)
    got = recommend_policy(nightly, policies=["single"], regression="3")
    assert got.cases_differ == cases_differ(outcome) > 0.05  # the nightly cases: no evidence


def test_cases_that_differ_carry_a_warning(tmp_path):
    cases = [f"c{i}" for i in range(8)]
    rng = np.random.default_rng(11)
    own = np.array([0.0, 0.0, 0.0, 0.0, 0.02, 0.05, 0.3, 0.4])  # two flaky cases
    healthy = (rng.random((40, 8)) >= own).tolist()
    path = tmp_path / "runs.csv"
    _write(path, healthy, [], cases)
    code, out, err = run_cli("recommend", str(path), "--policies", "single,rerun-failing-1")
    assert code == 0, err
    assert "warning: the cases fail at different rates (Cochran's Q p = " in out
    code, out, _ = run_cli("recommend", str(NIGHTLY), "--policies", "single,rerun-failing-1")
    assert "different rates" not in out


def test_the_docs_quote_the_real_output():
    """docs/how-to/policies.md shows this output (tests/project/test_docs.py checks it is real);
    its prose says which rule was chosen."""
    import re

    page = (ROOT / "docs" / "how-to" / "policies.md").read_text()
    block = re.search(
        r"<!-- cmd-recommend-policies:start -->\n```text\n\$ gatecal recommend "
        r"reports/nightly-junit --regression 3 --policies \S+.*?\n(.*?)```",
        page,
        re.S,
    )
    assert block
    assert "chosen rule: rerun-failing-1" in block.group(1)
