"""Each case's own record (noise/cases.py) and the case-aware gate (noise/casegate.py)."""

import itertools
import json
import math

import numpy as np
import pytest

import gatecal
from gatecal._analyses.noise.casegate import (
    case_gate,
    measured_detection,
    weighted_tails,
    weights,
)
from gatecal._analyses.noise.cases import case_spread, run_rates
from tests.paths import ROOT

T0 = ROOT / "reports" / "real-judge" / "temperature-0" / "strict"


def _spread(folder):
    data = gatecal.read_runs([folder / "healthy.jsonl"])
    _, cases, outcome = data.outcome_array("healthy")
    short = data.short_names()
    return case_spread([short[c] for c in cases], outcome)


def _brute_tails(rates, units):
    """P(S >= c) by enumerating every failing set (math.fsum), independently of the
    convolution."""
    top = sum(units)
    probs = [0.0] * (top + 1)
    terms: list[list[float]] = [[] for _ in range(top + 1)]
    for fails in itertools.product((0, 1), repeat=len(rates)):
        p = math.prod(r if f else 1 - r for r, f in zip(rates, fails, strict=True))
        terms[sum(u for u, f in zip(units, fails, strict=True) if f)].append(p)
    probs = [math.fsum(t) for t in terms]
    return [math.fsum(probs[c:]) for c in range(top + 1)] + [0.0]


def test_weighted_tails_are_the_brute_force_sums():
    rng = np.random.default_rng(5)
    for _ in range(5):
        n = 7
        rates = rng.uniform(0.001, 0.999, size=n)
        units = rng.integers(0, 6, size=n)
        got = weighted_tails(rates[None, :], units)[0]
        want = _brute_tails(rates.tolist(), units.tolist())
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_equal_weights_give_the_binomial_tail_far_into_the_tail():
    from scipy import stats

    n, p = 40, 0.03
    got = weighted_tails(np.full((1, n), p), np.ones(n, dtype=np.int64))[0]
    want = stats.binom.sf(np.arange(n + 1) - 1, n, p)  # P(S >= c)
    np.testing.assert_allclose(got[: n + 1], want, rtol=1e-9, atol=0)
    assert got[n] > 0  # 0.03^40, kept: no 1 - cdf


def test_the_probit_run_effect_keeps_each_cases_rate():
    x, w = np.polynomial.hermite_e.hermegauss(60)
    rates = np.array([0.001, 0.03, 0.4, 0.97])
    mixed = (w / w.sum()) @ run_rates(rates, 0.3, x)
    np.testing.assert_allclose(mixed, rates, rtol=1e-6)


def test_the_spread_across_cases_is_the_beta_binomial_maximum():
    """The fitted (m, phi) maximise the beta-binomial likelihood of the cases' counts, as
    scipy's betabinom and a Nelder-Mead search from another start find it."""
    from scipy import optimize, stats

    rng = np.random.default_rng(11)
    p = rng.beta(0.8, 6.0, size=25)
    failed = rng.random((30, 25)) < p
    spread = case_spread([f"c{i}" for i in range(25)], (~failed).astype(np.int8))
    f = failed.sum(axis=0)

    def nll(x):
        m, phi = 1 / (1 + math.exp(-x[0])), 1 / (1 + math.exp(-x[1]))
        s = 1 / phi - 1
        return -stats.betabinom.logpmf(f, 30, m * s, (1 - m) * s).sum()

    found = optimize.minimize(nll, [0.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-8})
    ours = nll([math.log(spread.mean / (1 - spread.mean)),
                math.log(spread.spread / (1 - spread.spread))])  # fmt: skip
    assert ours <= found.fun + 1e-6
    assert spread.spread_p_value < 0.05 and spread.heterogeneous


def test_temperature_0_names_its_systematic_cases_and_shrinks_the_rest():
    spread = _spread(T0)
    assert set(spread.systematic) == {"refund-monthly", "storage-pro", "sso-plan", "data-region"}
    assert len(spread.stable) == 8 and not spread.flaky
    rates = {r.case: r for r in spread.records}
    assert 0 < rates["refund-annual"].rate < 0.01  # 0 of 30: small, not zero
    assert rates["storage-pro"].failures == 29 and rates["sso-plan"].rate > 0.95
    assert rates["refund-annual"].record == "failed 0 of 30 known-good runs"
    assert spread.mostly_systematic and "majority votes and reruns cannot help" in spread.advice()
    assert "4 failed (nearly) every time" in spread.cases_differ()


def test_temperature_0_8_calls_no_majority_wrong_case_systematic():
    # at temperature 0.8 the strict reading fails some cases 23 to 26 of 30 runs: flaky
    spread = _spread(ROOT / "reports" / "real-judge" / "strict")
    assert not spread.systematic and not spread.mostly_systematic and spread.advice() is None


def test_the_case_gate_on_temperature_0_catches_two_stable_failures_not_the_systematic_ones():
    spread = _spread(T0)
    gate = case_gate(spread, false_alarm=0.05)
    assert gate.false_alarm <= 0.05 and gate.stable_needed() == 2
    systematic = [k == "systematic" for k in gate.kinds]
    assert gate.score(systematic) < gate.threshold  # all four failing: no evidence
    stable = [i for i, k in enumerate(gate.kinds) if k == "stable"]
    one, two = list(systematic), list(systematic)
    one[stable[0]] = two[stable[0]] = two[stable[1]] = True
    assert gate.score(one) < gate.threshold <= gate.score(two)
    assert gate.detection(2) == 1.0
    data = gatecal.read_runs([T0 / "healthy.jsonl"], [T0 / "regressed.jsonl"])
    rec = gatecal.recommend_gate(data)
    assert rec.chosen.kind == "cases" and rec.chosen.meets_targets
    assert rec.case_detection == pytest.approx(measured_detection(gate, _regressed(data, gate)))
    assert rec.case_detection > 0.95  # the count gate's detection here is 0
    assert rec.table[rec.within_budget][1] == 0.0


def _regressed(data, gate):
    from gatecal._analyses.recommend.choice import regressed_rates

    return regressed_rates(data, list(gate.cases), 0.0)


def test_the_weights_reduce_to_the_count_gate_when_every_case_has_one_rate():
    w = weights(np.full(12, 0.03), 1 / 12)
    assert np.ptp(w) == 0
    # the likelihood ratio of a failure falls with the case's healthy rate
    w = weights(np.array([0.001, 0.01, 0.1, 0.5, 0.999]), 0.05)
    assert np.all(np.diff(w) < 0) and w[-1] < 0.06


def test_cases_alike_are_not_called_different():
    rng = np.random.default_rng(3)
    failed = rng.random((40, 20)) < 0.05
    spread = case_spread([f"c{i}" for i in range(20)], (~failed).astype(np.int8))
    assert spread.spread_p_value >= 0.05 and not spread.systematic
    assert not spread.heterogeneous


def test_the_gate_file_carries_the_case_gate_and_is_verified(tmp_path, capsys):
    from gatecal.cli import main

    out = tmp_path / "gate.json"
    assert main(["recommend", str(T0 / "healthy.jsonl"), "--regressed",
                 str(T0 / "regressed.jsonl"), "--format", "json", "--out", str(out)]) == 0  # fmt: skip
    document = json.loads(out.read_text())
    assert document["gate"]["kind"] == "cases" and document["gate"]["meets_targets"]
    gate = gatecal.load_recommended_gate(out)
    assert gate.kind == "cases" and gate.threshold == document["case_gate"]["threshold"]
    capsys.readouterr()
    code = main(["check", str(T0 / "regressed-run-000.jsonl"), "--baseline",
                 str(T0 / "healthy.jsonl"), "--gate-from", str(out)])  # fmt: skip
    text = capsys.readouterr().out
    assert code == 1 and "refund-annual" in text and "failed 0 of 30 known-good runs" in text
    assert "systematic (a judge error or a broken test to fix; no evidence)" in text
    document["case_gate"]["threshold"] += 1  # edited by hand
    with pytest.raises(gatecal.ParameterError, match="its threshold is"):
        gatecal.recommended_gate_from(document, "edited.json")


def test_runs_that_cannot_tell_their_correlation_say_so():
    """At temperature 0 every case's record is all passes or all failures: the run
    correlation's profile is flat up to its bound, and the words say the runs cannot tell
    (not that the gate took an 'estimate')."""
    spread = _spread(T0)
    assert spread.run_icc >= spread.run_icc_top
    words = spread.runs_differ()
    assert "cannot tell how much they do" in words and "takes the estimate" not in words


def _write_runs(path, rates, runs, seed=3):
    rng = np.random.default_rng(seed)
    rows = [
        {"run": f"night-{r:02d}", "case": f"case-{c:02d}", "passed": bool(rng.random() >= p)}
        for r in range(runs)
        for c, p in enumerate(rates)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_short_case_gate_names_the_runs_that_would_close_it(tmp_path):
    """Ten known-good runs are too few for a regression of 2 stable cases; the shortfall
    projects more runs like these, and recommend on those very runs (the ten repeated
    four times) finds the detection the projection quoted."""
    rates = [0.005] * 10 + [0.1, 0.2, 0.3, 0.4, 0.5, 0.35] + [0.97] * 2
    path = _write_runs(tmp_path / "base.jsonl", rates, 10)
    rec = gatecal.recommend_gate(gatecal.read_runs([path]), regression=2)
    assert rec.chosen.kind == "cases" and not rec.chosen.meets_targets
    assert "would close it: about 30 more known-good runs like these" in rec.chosen.shortfall
    quoted = float(rec.chosen.shortfall.split("projected detection ")[1].split(" ")[0])
    rows = path.read_text().splitlines()
    again = tmp_path / "again.jsonl"
    again.write_text(
        "".join(
            json.dumps({**json.loads(row), "run": f"{k}-{json.loads(row)['run']}"}) + "\n"
            for k in range(4)
            for row in rows
        )
    )
    more = gatecal.recommend_gate(gatecal.read_runs([again]), regression=2)
    assert more.runs == 40 and more.chosen.kind == "cases"
    assert more.case_detection == pytest.approx(quoted, rel=5e-3)  # (quoted to 3 digits)
    assert more.chosen.meets_targets


def test_no_count_plan_is_offered_to_close_a_case_gate(tmp_path):
    """More cases or judge calls do not make one stable case's failure weigh more: a case
    gate's shortfall names runs (or the noisy cases), never the pooled-rate suite plans."""
    rates = [0.005] * 10 + [0.1, 0.2, 0.3, 0.4, 0.5, 0.35] + [0.97] * 2
    path = _write_runs(tmp_path / "base.jsonl", rates, 10)
    rec = gatecal.recommend_gate(gatecal.read_runs([path]), regression=1)
    assert rec.chosen.kind == "cases" and not rec.chosen.meets_targets
    assert "more known-good runs alone would not close it" in rec.chosen.shortfall
    assert (
        "fix or quiet case-" in rec.chosen.shortfall and "judge calls" not in rec.chosen.shortfall
    )
