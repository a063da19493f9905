"""plan --baseline-runs: the known-good runs a planned gate needs before recommend allows it.

Checked against recommend itself: the representative runs are written as a long table,
read back with gatecal.read_runs and given to gatecal.recommend_gate, which must
recommend the planned gate at the runs found and not one run fewer.
"""

from __future__ import annotations

import csv
import json
from fractions import Fraction

import numpy as np
import pytest

import gatecal
from gatecal._analyses.noise.bounds import noise_bounds
from gatecal._analyses.plan.baseline import representative_failures
from gatecal._analyses.plan.suite import healthy_pass_pmf
from tests.conftest import run_cli


def _plans(
    flip: float, regression: str, icc: float = 0.0, policy: str = "single"
) -> gatecal.SuitePlans:
    noise = gatecal.JudgeNoise(fnr=flip, fpr=flip, icc=icc)
    policies = [gatecal.parse_policy(policy)]
    return gatecal.plan_suite(noise=noise, regression=regression, policies=policies)


def test_representative_runs_are_the_quantiles_at_dyadic_levels():
    """The first 2^m - 1 van der Corput levels are j / 2^m, j = 1..2^m - 1: the runs with
    at most x failing are exactly floor(F(x) 2^m) of them (F not dyadic here), for every
    prefix length of that form."""
    pmf = np.array([0.55, 0.3, 0.1, 0.05])
    cdf = [Fraction(55, 100), Fraction(85, 100), Fraction(95, 100)]
    for m in (1, 3, 6, 10):
        runs = 2**m - 1
        failures = representative_failures(pmf, runs)
        for x, c in enumerate(cdf):
            assert int((failures <= x).sum()) == int(c * 2**m), (m, x)
        assert failures.max() <= 3


def test_representative_runs_prefixes_spread_evenly():
    """Any first T runs, not only 2^m - 1 of them, match the pmf within 1/T + log2(T)/T
    per count (the discrepancy of the van der Corput sequence)."""
    pmf = np.array([0.7, 0.2, 0.07, 0.03])
    for runs in (5, 40, 99, 1000):
        failures = representative_failures(pmf, runs)
        share = np.bincount(failures, minlength=4) / runs
        assert np.abs(np.cumsum(share) - np.cumsum(pmf)).max() <= (1 + np.log2(runs)) / runs


def _write_runs(path, failures: np.ndarray, cases: int) -> None:
    """A long table: run r fails its failures[r] cases, taken in rotation."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["run", "case", "passed", "build"])
        for r, f in enumerate(failures.tolist()):
            failing = {(r + i) % cases for i in range(f)}
            for c in range(cases):
                writer.writerow([f"r{r}", f"c{c}", "fail" if c in failing else "pass", "healthy"])


@pytest.mark.parametrize(
    ("flip", "regression", "icc", "policy"),
    [(0.02, "0.2", 0.0, "majority-3"), (0.03, "0.5", 0.1, "single")],  # 3 cases each
)
def test_needed_runs_are_what_recommend_needs(tmp_path, flip, regression, icc, policy):
    plans = _plans(flip, regression, icc, policy)
    plan = plans.plans[0]
    assert plan is not None
    found = gatecal.baseline_runs(plans)[0]
    assert found is not None and found.reason is None and found.needed is not None
    failing_pmf = healthy_pass_pmf(plans, plan.policy, plan.cases)[::-1]
    for runs, allowed in ((found.needed, True), (found.needed - 1, False)):
        path = tmp_path / f"runs-{runs}.csv"
        _write_runs(path, representative_failures(failing_pmf, runs), plan.cases)
        rec = gatecal.recommend_gate(
            gatecal.read_runs([path]),
            false_alarm=plans.targets.false_alarm,
            detection=plans.targets.detection,
            regression=str(plan.failing),
        )
        if allowed:
            assert rec.recommended == plan.k_min, runs
        else:  # one run fewer: not this gate, for one target or the other
            assert rec.recommended != plan.k_min, runs


def test_with_given_runs_the_smallest_suite_is_certified_and_one_fewer_is_not():
    plans = _plans(0.02, "0.2")
    single = gatecal.baseline_runs(plans, runs=40)[0]
    assert single is not None and single.suite is not None and single.suite_k_min is not None
    assert single.suite > single.cases  # measuring the noise costs cases
    assert single.suite_false_alarm is not None and single.suite_false_alarm <= 0.05
    assert single.suite_detection is not None and single.suite_detection >= 0.95
    # the suite one smaller: no gate its 40 representative runs certify for both targets
    n = single.suite - 1
    bounds = noise_bounds(
        representative_failures(healthy_pass_pmf(plans, plans.policies[0], n)[::-1], 40), n
    )
    k = bounds.strictest_gate(n, 0.05)
    assert k < 1 or bounds.detection(n, plans.regression.failing(n), k) < 0.95


def test_rerun_of_the_suite_and_sequential_gates_say_why_not():
    noise = gatecal.JudgeNoise(fnr=0.05, fpr=0.05)
    plans = gatecal.plan_suite(
        noise=noise,
        regression="0.2",
        policies=[gatecal.parse_policy("rerun-1"), gatecal.parse_policy("sprt-3")],
        max_cases=60,
    )
    found = gatecal.baseline_runs(plans, runs=20)
    assert [b is not None and b.reason for b in found] == [
        "a rerun of the whole suite: recommend bounds one attempt",
        "a sequential gate: recommend certifies a fixed gate",
    ]


def test_cli_table_json_csv_and_refusals(capsys):
    args = ["plan", "--flip", "0.02", "--regression", "0.2", "--baseline-runs", "40"]
    args += ["--policies", "majority-3"]
    code, table, _ = run_cli(*args)
    assert code == 0
    assert "known-good runs to measure the noise" in table
    assert "majority of 3 judge calls per check: the planned gate (k_min 3 of 3) needs" in table
    code, out, _ = run_cli(*args, "--format", "json")
    data = json.loads(out)
    direct = gatecal.baseline_runs(_plans(0.02, "0.2", policy="majority-3"), runs=40)
    assert [b["needed"] for b in data["baseline_runs"]] == [
        None if b is None else b.needed for b in direct
    ]
    assert direct[0] is not None and data["baseline_runs"][0]["suite"] == direct[0].suite
    assert data["baseline_runs"][0]["share"] == 0.8 and data["baseline_runs"][0]["sets"] == 50
    hits = data["baseline_runs"][0]["share_hits"]
    assert hits >= 43 and f"for 80% of sets (certified in {hits} of 50 simulated sets)" in table
    code, out, _ = run_cli(*args, "--format", "csv")
    assert out.splitlines()[0].endswith(
        "baseline_suite_false_alarm,baseline_suite_detection,baseline_share,"
        "baseline_needed_share,baseline_share_hits,baseline_sets"
    )
    for bad in ("1", "5001", "x"):
        code, out, err = run_cli("plan", "--baseline-runs", bad)
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "--baseline-runs" in err, err
    code, out, _ = run_cli("plan", "--flip", "0.02", "--regression", "0.2")
    assert code == 0 and "known-good runs" not in out


def test_the_share_count_is_the_first_grid_count_whose_random_sets_certify_that_share():
    """needed_share: on the grid needed x 1.25^k, the first count at which at least 80% of
    the seeded random sets plus one standard error (16 + 1.79 of 20: 18) certify the gate;
    the counts before it on the grid did not, and the sets are redrawn here (recommend's
    bounds on them) to the same hits."""
    from gatecal._analyses.plan.baseline import _SHARE_STEP

    plans = _plans(0.02, "0.2", policy="majority-3")
    (found,) = gatecal.baseline_runs(plans, share=0.8, sets=20, seed=3)
    assert found is not None and found.needed is not None and found.needed_share is not None
    assert found.needed_share >= found.needed and found.share_hits >= 18

    pmf = healthy_pass_pmf(plans, plans.policies[0], found.cases)[::-1]
    f = plans.regression.failing(found.cases)

    def hits(total: int) -> int:
        rng = np.random.default_rng([3, found.cases, found.k_min, total])
        count = 0
        for _ in range(20):
            failures = rng.choice(found.cases + 1, size=total, p=pmf / pmf.sum())
            bounds = noise_bounds(failures, found.cases)
            count += bool(
                bounds.false_alarm(found.cases, found.k_min) <= 0.05
                and bounds.detection(found.cases, f, found.k_min) >= 0.95
            )
        return count

    grid, step = [found.needed], 0
    while grid[-1] < found.needed_share:
        step += 1
        grid.append(max(grid[-1] + 1, int(np.ceil(found.needed * _SHARE_STEP**step))))
    assert grid[-1] == found.needed_share
    assert hits(found.needed_share) == found.share_hits
    assert all(hits(t) < 18 for t in grid[:-1])
