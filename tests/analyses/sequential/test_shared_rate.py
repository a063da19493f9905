"""Sequential gates when the runs of one build share one flip rate (the default model).

The reference is brute force in exact fractions: every path of passing counts, its
probability ``E_x[prod_j P(K_j = k_j | x)]`` expanded in Beta moments (each run's count
given x a polynomial in x), each path stopped at its first crossing. The library has two
routes to the same figures (one pmf per Gauss node, :class:`RatePmfs`; the hypergeometric
route of :class:`SharedBinomial`): both are pinned to it, to each other, and by simulation.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

import gatecal
from gatecal import JudgeNoise, ParameterError, Suite, sequential_gate, simulate_sequential
from gatecal._analyses.policies.sequential import run_pmfs, shared_rate_model
from gatecal._analyses.sequential.designs import (
    RatePmfs,
    SequentialBoundary,
    SharedBinomial,
    design_sequential,
    sequential_outcome,
)
from tests.analyses.sequential.test_sequential import beta_moment, close, pairs
from tests.conftest import run_cli

# flip 1/10, icc 1/5: Beta(a, b) with a + b = (1 - icc) / icc = 4
A, B = Fraction(2, 5), Fraction(18, 5)
NOISE = JudgeNoise(fnr=0.1, fpr=0.1, icc=0.2)
DESIGNS = ["sprt", "pocock", "obf"]


def _run_polynomial(good: int, bad: int) -> list[dict[tuple[int, int], int]]:
    """P(K = k | x) for each k as {(i, j): c}: sum of c x^i (1 - x)^j. Good cases pass with
    1 - x, bad ones (a truly failing judge check) with x."""
    out: list[dict[tuple[int, int], int]] = [{} for _ in range(good + bad + 1)]
    for u in range(good + 1):
        for v in range(bad + 1):
            key = (good - u + v, u + bad - v)
            term = math.comb(good, u) * math.comb(bad, v)
            out[u + v][key] = out[u + v].get(key, 0) + term
    return out


def brute_force_shared(
    good: int, bad: int, a: Fraction, b: Fraction, bounds: list[tuple[int, int]]
) -> dict[str, object]:
    """Every path (K_1, .., K_J) when all runs share x ~ Beta(a, b): P(fail), P(pass), the
    stop distribution and E[runs], in Fractions."""
    poly = _run_polynomial(good, bad)
    looks = len(bounds)
    fail = passed = Fraction(0)
    stops = [Fraction(0)] * looks
    for path in itertools.product(range(good + bad + 1), repeat=looks):
        total, stop, failed = 0, None, False
        for j, (k, (s, f)) in enumerate(zip(path, bounds, strict=True)):
            total += k
            if total >= s or total <= f:
                stop, failed = j, total <= f
                break
        assert stop is not None
        if any(path[j] != 0 for j in range(stop + 1, looks)):
            continue  # the runs after the stop are never made: count each stopped prefix once
        terms: dict[tuple[int, int], int] = {(0, 0): 1}
        for k in path[: stop + 1]:
            nxt: dict[tuple[int, int], int] = {}
            for (i1, j1), c1 in terms.items():
                for (i2, j2), c2 in poly[k].items():
                    key = (i1 + i2, j1 + j2)
                    nxt[key] = nxt.get(key, 0) + c1 * c2
            terms = nxt
        prob = sum((c * beta_moment(a, b, i, j) for (i, j), c in terms.items()), Fraction(0))
        stops[stop] += prob
        if failed:
            fail += prob
        else:
            passed += prob
    return {
        "fail": fail,
        "pass": passed,
        "stops": stops,
        "runs": sum((j * s for j, s in enumerate(stops, start=1)), Fraction(0)),
    }


def _agree(outcome, ref, rel: float = 1e-11) -> None:
    assert close(outcome.failure_probability, ref["fail"], rel)
    assert close(outcome.pass_probability, ref["pass"], rel)
    assert close(outcome.expected_runs, ref["runs"], rel)
    for x, y in zip(outcome.stop_distribution, ref["stops"], strict=True):
        assert close(x, y, rel)


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("looks", [1, 2, 3])
def test_suite_level_gate_with_a_shared_rate_matches_brute_force(design, looks):
    # 3 cases; the regressed build has one truly failing judge check (no SharedBinomial
    # there: its count given x is no binomial) - both routes of the library
    suite = Suite.uniform(cases=3, judge_checks=1, code_checks=0, failing=1)
    gate = sequential_gate(suite, NOISE, design, looks, false_alarm=0.1, detection=0.6)
    healthy, regressed = run_pmfs(suite, NOISE, looks, "shared")
    assert isinstance(healthy, SharedBinomial) and isinstance(regressed, RatePmfs)
    for (good, bad), outcome, model in (
        ((3, 0), gate.healthy, healthy),
        ((2, 1), gate.regressed, regressed),
    ):
        ref = brute_force_shared(good, bad, A, B, pairs(gate))
        assert sum(ref["stops"]) == 1
        _agree(outcome, ref)
        if isinstance(model, SharedBinomial):  # the row-by-row route too
            _agree(sequential_outcome(gate.design.boundaries, model.as_rate_pmfs()), ref)


def test_a_code_failure_keeps_the_fast_route_and_matches_brute_force():
    # 4 cases, one fails a code check in the regressed build: Bin(3, 1 - x) given x
    suite = Suite.uniform(cases=4, judge_checks=1, code_checks=1, failing=1)
    gate = sequential_gate(suite, NOISE, "sprt", 3, false_alarm=0.1, detection=0.5)
    model = shared_rate_model(suite, "regressed", NOISE, 3)
    assert isinstance(model, SharedBinomial) and model.trials == 3
    _agree(gate.regressed, brute_force_shared(3, 0, A, B, pairs(gate)))
    _agree(gate.healthy, brute_force_shared(4, 0, A, B, pairs(gate)))


def test_the_two_routes_agree_on_big_suites_and_random_boundaries():
    # 40 cases, 6 looks, icc 0.1: the hypergeometric route against one pmf per Gauss node
    rng = np.random.default_rng(5)
    suite = Suite.uniform(cases=40, judge_checks=2, code_checks=1, failing=4)
    noise = JudgeNoise(fnr=0.04, fpr=0.04, icc=0.1)
    for build in ("healthy", "regressed"):
        fast = shared_rate_model(suite, build, noise, 6)
        assert isinstance(fast, SharedBinomial)
        slow = fast.as_rate_pmfs()
        for _ in range(4):
            bounds, top = [], 0
            for j in range(1, 7):
                top = j * 40
                f = int(rng.integers(-1, top // 2))
                s = int(rng.integers(f + 1, top + 2)) if j < 6 else f + 1
                bounds.append(SequentialBoundary(look=j, pass_at_least=s, fail_at_most=f))
            one = sequential_outcome(bounds, fast)
            two = sequential_outcome(bounds, slow)
            for x, y in ((one.failure_probability, two.failure_probability),
                         (one.expected_runs, two.expected_runs),
                         *zip(one.stop_distribution, two.stop_distribution, strict=True)):  # fmt: skip
                assert math.isclose(x, y, rel_tol=1e-10, abs_tol=1e-14)


def test_one_node_is_the_independent_model_bit_for_bit():
    # icc 0: both models are one binomial; the shared machinery changes no figure
    suite = Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=2)
    noise = JudgeNoise.flip(0.05)
    one = sequential_gate(suite, noise, "pocock", 4)
    two = sequential_gate(suite, noise, "pocock", 4, runs="independent")
    assert one.design.boundaries == two.design.boundaries
    assert one.healthy == two.healthy and one.regressed == two.regressed


@pytest.mark.parametrize("design", ["sprt", "obf"])
def test_shared_design_within_budget_and_simulated_within_standard_errors(design):
    suite = Suite.uniform(cases=20, judge_checks=2, code_checks=1, failing=3)
    noise = JudgeNoise(fnr=0.05, fpr=0.05, icc=0.05)
    gate = sequential_gate(suite, noise, design, 5, detection=0.6)
    assert gate.false_alarm <= 0.05 * (1 + 1e-9)
    runs = 20_000
    for build, out in (("healthy", gate.healthy), ("regressed", gate.regressed)):
        sample = simulate_sequential(suite, build, noise, gate.design, n_sequences=runs, rng=3)
        p = out.failure_probability
        assert abs(sample.failures / runs - p) <= 4.5 * math.sqrt(p * (1 - p) / runs)
        for count, q in zip(sample.stops, out.stop_distribution, strict=True):
            assert abs(count / runs - q) <= 4.5 * math.sqrt(q * (1 - q) / runs) + 1e-12


def test_a_gate_designed_for_independent_runs_is_over_budget_when_they_share_the_rate():
    # the audit's finding, exactly: designed as before (each run its own rate), its false
    # alarm when reruns share the rate is far above the budget; simulation agrees
    suite = Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=2)
    noise = JudgeNoise(fnr=0.05, fpr=0.05, icc=0.05)
    old = sequential_gate(suite, noise, "sprt", 5, runs="independent")
    assert old.false_alarm <= 0.05 * (1 + 1e-9)
    healthy, _ = run_pmfs(suite, noise, 5, "shared")
    true = sequential_outcome(old.design.boundaries, healthy).failure_probability
    assert true > 0.08
    sample = simulate_sequential(suite, "healthy", noise, old.design, n_sequences=20_000, rng=9)
    assert abs(sample.failures / 20_000 - true) <= 4.5 * math.sqrt(true * (1 - true) / 20_000)
    new = sequential_gate(suite, noise, "sprt", 5)
    assert new.false_alarm <= 0.05 * (1 + 1e-9)


def test_models_are_named_and_checked():
    with pytest.raises(ParameterError, match="`runs` must be one of shared, independent"):
        gatecal.SequentialPolicy(design="sprt", looks=3, runs="fresh")
    with pytest.raises(ParameterError, match="weights"):
        SharedBinomial(cases=3, trials=3, q=np.array([0.9, 0.8]), weights=np.array([0.5, 0.6]))
    with pytest.raises(ParameterError, match="pmfs"):
        RatePmfs(np.array([[0.5, 0.6]]), np.ones(1))
    p = design_sequential("sprt", 2, np.array([0.1, 0.9]), np.array([0.6, 0.4]))
    assert p.false_alarm <= 0.05 * (1 + 1e-9)


def test_cli_model_option(capsys):
    base = ["policies", "--cases", "12", "--flip", "0.05", "--icc", "0.05", "--gates", "all",
            "--runs", "500", "--format", "json"]  # fmt: skip
    code, out, _ = run_cli(*base, "--policies", "sprt-4")
    shared = json.loads(out)["rows"]
    code2, out2, _ = run_cli(*base, "--policies", "sprt-4", "--runs-independent")
    independent = json.loads(out2)["rows"]
    assert code == code2 == 0
    assert {r["run_model"] for r in shared if r["gate"] == "sprt-4"} == {"shared"}
    assert {r["run_model"] for r in independent if r["gate"] == "sprt-4"} == {"independent"}
    code, _, err = run_cli(*base, "--policies", "single", "--runs-independent")
    assert code == 2 and "--runs-independent needs a sequential policy" in err
