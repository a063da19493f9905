"""gatecal compare: exact p-values against independent references, the size of the test
under run-to-run correlation (and the naive (case, repeat) McNemar failing it), pairing
by case, the per-case control and the command line."""

from __future__ import annotations

import csv
import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import gatecal
from gatecal._analyses.compare.paired import (
    benjamini_hochberg,
    case_permutation_p,
    exact_mcnemar,
    fisher_one_sided,
    holm,
    sign_flip_p,
)
from gatecal.cli._spread import spread_paths
from tests.conftest import run_cli
from tests.paths import ROOT

# -- exact p-values -------------------------------------------------------------------------
from tests.regen import assert_same


@pytest.mark.parametrize(("worse", "better"), [(0, 0), (1, 0), (3, 1), (5, 0), (4, 4), (2, 7)])
def test_mcnemar_is_the_brute_force_count_of_discordant_outcomes(worse, better):
    # every way the D discordant cases could have split, each with probability 2^-D
    d = worse + better
    splits = [sum(s) for s in itertools.product((0, 1), repeat=d)]
    upper = Fraction(sum(s >= worse for s in splits), 2**d)
    lower = Fraction(sum(s <= worse for s in splits), 2**d)
    assert exact_mcnemar(worse, better) == upper
    assert exact_mcnemar(worse, better, "two-sided") == min(Fraction(1), 2 * min(upper, lower))


@pytest.mark.parametrize(("worse", "better"), [(30, 12), (12, 30), (50, 50), (9, 0)])
def test_mcnemar_agrees_with_scipy_binomtest(worse, better):
    # a second method: scipy.stats.binomtest(worse, worse + better, 0.5)
    d = worse + better
    one = stats.binomtest(worse, d, 0.5, alternative="greater").pvalue
    assert float(exact_mcnemar(worse, better)) == pytest.approx(one, rel=1e-9)
    if worse == better:  # symmetric: scipy's two-sided and the doubled tail agree
        two = stats.binomtest(worse, d, 0.5).pvalue
        assert float(exact_mcnemar(worse, better, "two-sided")) == pytest.approx(two, rel=1e-9)


def _brute_case_permutation(base, cand, event=0):
    """Every relabelling of the runs as baseline/candidate, in exact fractions: a case's
    tail ``P(X >= x)`` (X hypergeometric, counted from binomials), and an arrangement as
    extreme as the observed one when its smallest tail is smaller, or equal with a product
    of tails at most the observed one's (the same order as the largest surprise, then
    the summed surprise, ``-log`` of each)."""
    runs = [list(r) for r in (*base, *cand)]
    n, k = len(runs), len(cand)
    cases = len(runs[0])
    total = math.comb(n, k)

    def key(picked):
        tails = []
        for j in range(cases):
            f = sum(r[j] == event for r in runs)
            x = sum(runs[i][j] == event for i in picked)
            hits = sum(math.comb(f, y) * math.comb(n - f, k - y) for y in range(x, min(f, k) + 1))
            tails.append(Fraction(hits, total))
        return min(tails), math.prod(tails)

    low, product = key(range(n - k, n))
    picks = list(itertools.combinations(range(n), k))
    hits = 0
    for picked in picks:
        m, prod = key(picked)
        hits += m < low or (m == low and prod <= product)
    return Fraction(hits, len(picks))


def _runs(text):
    return np.array([[int(c) if c != "." else -1 for c in row] for row in text.split()], np.int8)


CASE_RUNS = [
    # a temperature-0 suite: stable cases, one always failing, one new failure
    (_runs("1110 1110 1110"), _runs("0110 0110 0110")),
    # flaky cases everywhere, unequal run counts
    (_runs("10110 11011 01111 11101"), _runs("11010 01101 10110")),
    # missing verdicts (.) and ties
    (_runs("1.1 111 011"), _runs("101 1.1 11.")),
    # the candidate better
    (_runs("0011 0101 0110"), _runs("1111 1101 1111")),
]


@pytest.mark.parametrize(("base", "cand"), CASE_RUNS)
def test_case_permutation_is_the_brute_force_enumeration_of_relabellings(base, cand):
    worse = _brute_case_permutation(base, cand)
    better = _brute_case_permutation(base, cand, event=1)
    one, _ = case_permutation_p(base, cand)
    two, points_worse = case_permutation_p(base, cand, "two-sided")
    assert one.exact and two.exact
    assert one.p_value == float(worse)
    assert two.p_value == float(min(Fraction(1), 2 * min(worse, better)))
    assert points_worse == (worse <= better)
    assert one.smallest_p == 1 / math.comb(len(base) + len(cand), len(cand))


def test_one_new_failure_in_every_candidate_run_is_the_most_extreme_arrangement():
    # 3 + 3 runs of a suite whose cases never fail or always fail: one case that now fails
    # every candidate run has p = 1/20, whatever flaky case sits beside it; the pass-share
    # permutation it replaces gave 4/20 here (the flaky case's one failure ties it)
    base = _runs("1110 1111 1110")
    cand = _runs("0110 0110 0110")
    result, worse = case_permutation_p(base, cand)
    assert (result.p_value, worse) == (1 / 20, True)


RARE_RUNS = [
    # one case fails every candidate run and no baseline run: 1 labelling reaches it
    (_runs("1111 1110 1111 1011"), _runs("0111 0101 0111 0110")),
    # two such cases: the observed labelling is reached by both and counted once
    (_runs("1111 1110 1111 1111"), _runs("0011 0001 0011 0010")),
    # two cases can each put all 3 of their failures on the candidate (5 labellings each,
    # one shared): the most surprising case ties, the summed surprise decides
    (_runs("1011 1111 1111 1111"), _runs("0111 0011 0011 1111")),
]


@pytest.mark.parametrize(("base", "cand"), RARE_RUNS)
def test_the_rare_labellings_are_counted_exactly_where_all_of_them_are_too_many(
    base, cand, monkeypatch
):
    # 4 + 4 runs have 70 labellings; with at most 12 to count, only the labellings in which
    # a case is as surprising as the observed most surprising one are enumerated, and the
    # count is still the brute force's in fractions
    import gatecal._analyses.compare.paired as mod

    monkeypatch.setattr(mod, "EXACT_ARRANGEMENTS", 12)
    result, _ = case_permutation_p(base, cand)
    assert result.exact
    assert result.p_value == float(_brute_case_permutation(base, cand))


def test_case_permutation_monte_carlo_is_a_valid_p_value_near_the_exact_one(monkeypatch):
    import gatecal._analyses.compare.paired as mod

    base, cand = CASE_RUNS[1]
    exact = float(_brute_case_permutation(base, cand))
    monkeypatch.setattr(mod, "EXACT_ARRANGEMENTS", 0)  # force the sampled count
    monkeypatch.setattr(mod, "MONTE_CARLO_PERMUTATIONS", 20_000)
    sampled, _ = case_permutation_p(base, cand, rng=3)
    assert not sampled.exact
    assert abs(sampled.p_value - exact) <= 4 * sampled.standard_error + 1 / 20_001


@pytest.mark.parametrize("alternative", ["worse", "two-sided"])
def test_a_simulation_stopping_early_decides_as_the_full_count(alternative):
    # the count stops once p is sure to be above alpha: every decision is the same, and a
    # p above alpha is still reported above it (exact counts at 4 + 4 runs, sampled at 9 + 9)
    from gatecal._analyses.compare.oc import _draw_runs

    gen = np.random.default_rng(11)
    for runs in (4, 9):
        for _ in range(60):
            base = _draw_runs(gen, runs, 15, 0.1, 0.1)
            cand = _draw_runs(gen, runs, 15, 0.1, 0.1, int(gen.integers(0, 2)))
            full, w_full = case_permutation_p(base, cand, alternative, rng=1, fast=True)
            quick, w_quick = case_permutation_p(
                base, cand, alternative, rng=1, fast=True, stop_above=0.05
            )
            assert (quick.p_value <= 0.05) == (full.p_value <= 0.05)
            if full.p_value <= 0.05:
                assert (quick.p_value, w_quick) == (full.p_value, w_full)


def test_three_runs_a_build_catch_one_broken_case_as_a_whole_run_permutation_can():
    # 40 cases failing 5% of the time, 3 + 3 runs, one case broken: the pass-share statistic
    # caught it 0.11 of the time (reports/compare-size.md before); the cases' surprise
    # catches it about 0.82 (400 pairs, se about 0.02), false alarm within the level
    oc = gatecal.compare_oc(cases=40, baseline_runs=3, candidate_runs=3, rate=0.05,
                            icc=0.05, failing=1, samples=400, rng=1)  # fmt: skip
    assert oc.detection >= 0.7
    assert oc.false_alarm <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400)


DIFFERENCES = [
    [Fraction(1), Fraction(1, 2), Fraction(-1, 3), Fraction(0), Fraction(2, 3)],
    [Fraction(1, 10)] * 6,
    [Fraction(-1, 4), Fraction(1, 5), Fraction(-1), Fraction(3, 4)],
]


@pytest.mark.parametrize("diffs", DIFFERENCES)
def test_sign_flip_is_the_brute_force_enumeration_of_signs(diffs):
    observed = sum(diffs)
    totals = [sum(s * abs(d) for s, d in zip(signs, diffs, strict=True))
              for signs in itertools.product((1, -1), repeat=len(diffs))]  # fmt: skip
    upper = Fraction(sum(t >= observed for t in totals), len(totals))
    lower = Fraction(sum(t <= observed for t in totals), len(totals))
    assert sign_flip_p(diffs).p_value == float(upper)
    assert sign_flip_p(diffs, "two-sided").p_value == float(min(1, 2 * min(upper, lower)))


@pytest.mark.parametrize("table", [(10, 10, 7, 10), (3, 3, 0, 3), (5, 9, 5, 6), (0, 4, 4, 4)])
def test_fisher_agrees_with_scipy(table):
    bp, bn, cp, cn = table
    ref = stats.fisher_exact([[bp, bn - bp], [cp, cn - cp]], alternative="greater").pvalue
    assert float(fisher_one_sided(bp, bn, cp, cn)) == pytest.approx(ref, rel=1e-9)


def test_holm_and_bh_against_their_step_procedures():
    p = [0.01, 0.04, 0.03, 0.005, 0.2, 0.04]
    # Holm's step-down by hand: sorted 0.005, 0.01, 0.03, 0.04, 0.04, 0.2 times 6..1
    assert holm(p) == pytest.approx([0.05, 0.12, 0.12, 0.03, 0.2, 0.12])
    # BH: scipy.stats.false_discovery_control is an independent implementation
    assert benjamini_hochberg(p) == pytest.approx(list(stats.false_discovery_control(p)))
    for alpha in (0.01, 0.05, 0.1):
        # the rejections are exactly the step-up procedure's
        order = sorted(range(len(p)), key=lambda i: p[i])
        k = max((r + 1 for r, i in enumerate(order) if p[i] <= alpha * (r + 1) / len(p)),
                default=0)  # fmt: skip
        expect = {order[r] for r in range(k)}
        assert {i for i, a in enumerate(benjamini_hochberg(p)) if a <= alpha} == expect


# -- the size of the test, and the naive McNemar ---------------------------------------------


def _naive_mcnemar_size(cases, runs, rate, icc, alpha, samples, seed):
    """The (case, repeat) McNemar: repeat i of the baseline paired with repeat i of the
    candidate, every pair counted as independent (scipy's binomial test)."""
    gen = np.random.default_rng(seed)
    a, b = rate * (1 - icc) / icc, (1 - rate) * (1 - icc) / icc
    hits = 0
    for _ in range(samples):
        x = gen.beta(a, b, size=(2, runs, 1))
        passed = gen.random((2, runs, cases)) >= x
        worse = int(np.sum(passed[0] & ~passed[1]))
        better = int(np.sum(~passed[0] & passed[1]))
        if worse + better and worse > better:
            hits += (
                stats.binomtest(worse, worse + better, 0.5, alternative="greater").pvalue <= alpha
            )
    return hits / samples


def test_the_run_test_holds_its_level_under_run_to_run_correlation_the_naive_one_does_not():
    cases, runs, rate, icc, alpha, samples = 20, 5, 0.1, 0.1, 0.05, 600
    oc = gatecal.compare_oc(cases=cases, baseline_runs=runs, candidate_runs=runs, rate=rate,
                            icc=icc, failing=1, alpha=alpha, samples=samples, rng=1)  # fmt: skip
    se = math.sqrt(alpha * (1 - alpha) / samples)
    assert oc.false_alarm <= alpha + 3 * se
    naive = _naive_mcnemar_size(cases, runs, rate, icc, alpha, samples, seed=2)
    assert naive > alpha + 6 * se  # measured about 0.17: more than three times the level


def test_the_case_sign_flip_is_too_liberal_under_run_to_run_correlation():
    from gatecal._analyses.compare.oc import _draw_runs
    from gatecal._analyses.compare.paired import _global_test

    gen = np.random.default_rng(4)
    hits = 0
    for _ in range(600):
        base, cand = (_draw_runs(gen, 5, 20, 0.1, 0.1) for _ in range(2))
        result, stat, _, _ = _global_test(base, cand, "cases", "worse")
        hits += result.p_value <= 0.05 and stat > 0
    assert hits / 600 > 0.05 + 6 * math.sqrt(0.05 * 0.95 / 600)


def _exact_mcnemar_oc(cases, failing, rate, alpha):
    """Exact false alarm or detection of the one-run McNemar at icc 0, in fractions:
    the (worse, better) counts convolved case by case."""
    p = Fraction(rate)
    healthy = {(1, 0): (1 - p) * p, (0, 1): p * (1 - p), (0, 0): p * p + (1 - p) ** 2}
    broken = {(1, 0): 1 - p, (0, 0): p}  # fails in the candidate: worse if it passed before
    dist = {(0, 0): Fraction(1)}
    for j in range(cases):
        step = broken if j < failing else healthy
        new: dict[tuple[int, int], Fraction] = {}
        for (w, b), q in dist.items():
            for (dw, db), r in step.items():
                new[(w + dw, b + db)] = new.get((w + dw, b + db), Fraction(0)) + q * r
        dist = new
    total = Fraction(0)
    for (w, b), q in dist.items():
        d = w + b
        tail = Fraction(sum(math.comb(d, i) for i in range(w, d + 1)), 2**d)
        if w > b and tail <= alpha:
            total += q
    return total


def test_exact_mcnemar_false_alarm_by_two_methods():
    # healthy pairs at icc 0: D ~ Bin(n, 2p(1-p)) discordant cases, each worse w.p. 1/2
    n, p, alpha = 10, Fraction(3, 10), Fraction(1, 20)
    q = 2 * p * (1 - p)
    closed = Fraction(0)
    for d in range(n + 1):
        for w in range(d + 1):
            tail = Fraction(sum(math.comb(d, i) for i in range(w, d + 1)), 2**d)
            if w > d - w and tail <= alpha:
                closed += math.comb(n, d) * q**d * (1 - q) ** (n - d) * math.comb(d, w) / 2**d
    assert _exact_mcnemar_oc(n, 0, p, alpha) == closed


@pytest.mark.parametrize("failing", [0, 3])
def test_simulated_mcnemar_operating_characteristic_matches_the_exact_one(failing):
    exact = float(_exact_mcnemar_oc(10, failing, Fraction(3, 10), Fraction(1, 20)))
    oc = gatecal.compare_oc(cases=10, baseline_runs=1, candidate_runs=1, rate=0.3,
                            failing=failing, samples=4000, rng=5)  # fmt: skip
    sim = oc.false_alarm if failing == 0 else oc.detection
    se = math.sqrt(exact * (1 - exact) / 4000)
    assert abs(sim - exact) <= 4 * se


def test_plan_compare_returns_the_fewest_runs_meeting_both_targets():
    design = gatecal.plan_compare(cases=12, rate=0.05, icc=0.05, regression="1",
                                  false_alarm=0.05, detection=0.8, samples=300, rng=0)  # fmt: skip
    assert design.runs is not None
    rows = dict(design.rows)
    assert rows[design.runs].detection >= 0.8
    assert rows[design.runs].false_alarm <= 0.05
    if design.runs - 1 in rows:
        assert rows[design.runs - 1].detection < 0.8 or rows[design.runs - 1].false_alarm > 0.05


# -- pairing, changed cases, decisions ------------------------------------------------------


def _table(path: Path, rows: list[tuple[str, str, str, bool]]) -> Path:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["build", "run", "case", "passed"])
        for build, run, case, passed in rows:
            w.writerow([build, run, case, "true" if passed else "false"])
    return path


def _builds(tmp_path: Path, base_runs: int, cand_runs: int, broken: set[str],
            extra: str | None = None) -> Path:  # fmt: skip
    cases = [f"case-{j}" for j in range(8)]
    rows = []
    for r in range(base_runs):
        rows += [("healthy", f"b{r}", c, True) for c in cases]
    for r in range(cand_runs):
        rows += [("regressed", f"c{r}", c, c not in broken) for c in cases]
    if extra:
        rows.append(("regressed", "c0", extra, True))
    return _table(tmp_path / "both.csv", rows)


def test_a_clear_regression_names_its_cases(tmp_path):
    data = gatecal.read_runs([_builds(tmp_path, 6, 6, {"case-1", "case-5"})])
    result = gatecal.compare_builds(data, oc_samples=0, multiplicity="holm")
    assert result.paired.test == "runs"
    assert result.decision == "regression" and result.exit_code == 1
    assert result.paired.mode == "both"  # half the level to the run test, half to the cases
    assert result.paired.p_test == pytest.approx(1 / math.comb(12, 6))
    assert result.paired.p_cases == pytest.approx(8 / 924)
    assert result.paired.p_value == pytest.approx(2 / math.comb(12, 6))
    assert set(result.changes.worse) == {"case-1", "case-5"}
    # each of them 6/6 vs 0/6: Fisher 1/C(12, 6); Holm: 8 p, and 7 p raised to 8 p (the
    # adjusted values never decrease down the sorted list)
    flagged = {c.case: c for c in result.changes.cases if c.flagged}
    assert flagged["case-1"].p_value == pytest.approx(1 / 924)
    assert [c.adjusted for c in flagged.values()] == pytest.approx([8 / 924, 8 / 924])
    frame = result.to_frame()
    assert list(frame.loc[frame.flagged, "candidate_share"]) == [0.0, 0.0]
    # Tarone (the default): the 6 cases passing all 12 runs can never be significant, so
    # K = 2 (two cases can reach 0.025 / 2; their smallest p is 1 / C(12, 6)): 2 p, not 8 p
    tarone = gatecal.compare_builds(data, oc_samples=0)
    assert tarone.changes.multiplicity == "tarone" and set(tarone.changes.worse) == {
        "case-1",
        "case-5",
    }
    assert tarone.paired.p_cases == pytest.approx(2 / 924)
    assert tarone.paired.p_value == pytest.approx(2 / math.comb(12, 6))  # the run test's is smaller


def test_one_broken_case_in_sixty_is_caught_by_both_halves():
    gen = np.random.default_rng(11)
    base = (gen.random((10, 60)) >= 0.05).astype(int)
    cand = (gen.random((10, 60)) >= 0.05).astype(int)
    cand[:, 0] = 0
    base[:, 0] = 1
    result = gatecal.compare_matrices(base, cand, oc_samples=0, multiplicity="holm")
    assert result.paired.mode == "both"
    # the run test: no other labelling of the 20 runs puts a case's 10 failures all on the
    # candidate (the pass-share statistic this replaced gave p > 0.025: one case in 60)
    assert result.paired.p_test == 1 / math.comb(20, 10)
    # 10/10 against 0/10: Fisher 1/C(20, 10), Holm times 60
    assert result.paired.p_cases == pytest.approx(60 / math.comb(20, 10))
    assert result.decision == "regression"
    assert result.changes.worse == ("0",)


def test_one_run_each_is_mcnemar_and_names_no_case(tmp_path):
    data = gatecal.read_runs([_builds(tmp_path, 1, 1, {f"case-{j}" for j in range(6)})])
    result = gatecal.compare_builds(data, oc_samples=0, assume_independent_runs=True)
    assert result.paired.test == "mcnemar"
    assert result.changes.discordant == gatecal.Discordant(worse=6, better=0)
    assert result.paired.p_value == 1 / 64
    assert result.decision == "regression"
    assert (
        result.changes.worse == ()
    )  # a case run once in each build can't be shown to have changed


def test_one_run_each_is_incomplete_unless_independence_is_asserted(tmp_path):
    """McNemar over cases is valid only for independent runs; one run per build cannot
    measure their correlation (before: "regression" or "no evidence" with a quoted false
    alarm <= 0.046, true 0.26 at icc 0.05 with 200 cases)."""
    data = gatecal.read_runs([_builds(tmp_path, 1, 1, set())])
    result = gatecal.compare_builds(data, oc_samples=0)
    assert result.paired.test == "mcnemar" and result.decision == "incomplete"
    assert result.exit_code == 1
    assert any("one run per build cannot tell a regression" in r for r in result.reasons)
    asserted = gatecal.compare_builds(data, oc_samples=0, assume_independent_runs=True)
    assert asserted.decision == "no evidence" and asserted.exit_code == 0


def test_a_case_in_one_build_only_is_incomplete_unless_partial(tmp_path):
    data = gatecal.read_runs([_builds(tmp_path, 4, 4, set(), extra="new-case")])
    result = gatecal.compare_builds(data, oc_samples=0)
    assert result.compared.candidate_only == ("new-case",)
    assert result.decision == "incomplete" and result.exit_code == 1
    result = gatecal.compare_builds(data, oc_samples=0, partial=True)
    assert result.decision == "no evidence" and result.exit_code == 0
    assert result.compared.cases_compared == 8


def test_a_test_that_cannot_reach_alpha_is_incomplete_not_a_pass(tmp_path):
    data = gatecal.read_runs([_builds(tmp_path, 2, 2, {"case-0", "case-1"})])
    result = gatecal.compare_builds(data, oc_samples=0)  # 2 + 2 runs: p >= 1/6
    assert result.decision == "incomplete"
    assert "can reach alpha" in result.reasons[-1]


def test_two_sided_names_better_cases(tmp_path):
    cases = [f"case-{j}" for j in range(5)]
    rows = [("healthy", f"b{r}", c, c != "case-2") for r in range(6) for c in cases]
    rows += [("regressed", f"c{r}", c, True) for r in range(6) for c in cases]
    data = gatecal.read_runs([_table(tmp_path / "t.csv", rows)])
    one = gatecal.compare_builds(data, oc_samples=0)
    assert one.decision == "no evidence" and one.changes.better == ()
    two = gatecal.compare_builds(data, oc_samples=0, alternative="two-sided")
    assert two.decision == "better" and two.exit_code == 0
    assert two.changes.better == ("case-2",)


def test_operating_characteristic_is_reported_and_seeded(tmp_path):
    data = gatecal.read_runs([_builds(tmp_path, 5, 5, {"case-3"})])
    a = gatecal.compare_builds(data, oc_samples=100, regression="2", rng=7)
    b = gatecal.compare_builds(data, oc_samples=100, regression="2", rng=7)
    assert a.rates.operating == b.rates.operating
    assert a.rates.regression_failing == 2
    assert [o.point for o in a.rates.operating] == ["fit", "largest icc", "largest rate"]
    assert a.rates.false_alarm == max(o.false_alarm for o in a.rates.operating)
    assert a.rates.detection == min(o.detection for o in a.rates.operating)


def test_the_json_is_each_nested_group_flat_in_order(tmp_path):
    data = gatecal.read_runs([_builds(tmp_path, 1, 1, {"case-3"})])
    result = gatecal.compare_builds(data, oc_samples=10, assume_independent_runs=True)
    groups = (result.paired, result.compared, result.changes, result.rates)
    nested = [key for group in groups for key in group.to_dict()]
    keys = list(result.to_dict())
    start = keys.index("reasons") + 1
    assert keys[start : start + len(nested)] == nested
    assert keys[start + len(nested) :] == ["sources", "warnings"]
    # the one object of the contract that is not a list: McNemar's discordant cases
    assert result.to_dict()["discordant"] == {"worse": 1, "better": 0}
    assert result.changes.discordant == gatecal.Discordant(worse=1, better=0)


def test_nothing_compared_is_the_groups_defaults():
    result = gatecal.compare_matrices(np.full((2, 3), -1), np.ones((2, 3), int), oc_samples=5)
    assert result.decision == "incomplete" and result.compared.cases_compared == 0
    assert result.paired == gatecal.PairedTest(test="auto", alternative="worse", alpha=0.05)
    assert result.changes == gatecal.CaseChanges(multiplicity="tarone")
    assert result.rates == gatecal.ComparisonRates(regression="25% of the cases fail", oc_samples=5)


def test_bad_library_input_names_the_parameter():
    with pytest.raises(gatecal.ParameterError, match="alternative"):
        gatecal.compare_matrices([[1]], [[1]], alternative="better")
    with pytest.raises(gatecal.ParameterError, match="candidate"):
        gatecal.compare_matrices([[1, 0]], [[1]])
    with pytest.raises(gatecal.ParameterError, match="mcnemar"):
        gatecal.compare_matrices([[1], [1]], [[1]], test="mcnemar")


# -- the command line -----------------------------------------------------------------------


LISTS = ("--baseline", "--candidate")


def test_spread_paths_reads_several_paths_after_each_option():
    args = ["--baseline", "a", "b", "c", "--candidate", "d", "e", "--format", "json", "x"]
    assert spread_paths(args, LISTS) == ["--baseline", "a", "--baseline", "b", "--baseline", "c",
                                  "--candidate", "d", "--candidate", "e", "--format", "json",
                                  "x"]  # fmt: skip
    assert spread_paths(["--baseline=a", "b", "--partial", "c"], LISTS) == [
        "--baseline=a", "--baseline", "b", "--partial", "c"]  # fmt: skip


def _runs_files(tmp_path: Path, prefix: str, runs: int, broken: set[str], name: str = "case"):
    files = []
    for r in range(runs):
        rows = [("", f"{prefix}{r}", f"{name}-{j}", f"{name}-{j}" not in broken) for j in range(8)]
        files.append(_table(tmp_path / f"{prefix}{r}.csv", rows))
    return files


def test_cli_several_paths_per_option_and_json(tmp_path, capsys):
    base = _runs_files(tmp_path, "b", 6, set())
    cand = _runs_files(tmp_path, "c", 5, {"case-2"})
    code, out, err = run_cli("compare", "--baseline", *base, "--candidate", *cand, "--format", "json", "--oc-samples", "50")  # fmt: skip
    assert code == 1, err
    doc = json.loads(out)
    keys = ("decision", "test", "p_value", "cases_compared", "baseline_runs", "candidate_runs",
            "worse", "better", "false_alarm", "detection", "version")  # fmt: skip
    assert set(keys) <= set(doc)
    assert (doc["baseline_runs"], doc["candidate_runs"], doc["cases_compared"]) == (6, 5, 8)
    assert doc["decision"] == "regression"
    assert doc["p_test"] == pytest.approx(1 / math.comb(11, 6))
    assert doc["p_value"] == pytest.approx(2 / math.comb(11, 6))
    assert doc["worse"] == ["case-2"]
    assert (doc["format"], doc["version"]) == ("gatecal.compare", 2)
    assert doc["gatecal_version"] == gatecal.__version__


def test_cli_healthy_candidate_exits_0_and_writes_csv(tmp_path, capsys):
    base = _runs_files(tmp_path, "b", 4, set())
    cand = _runs_files(tmp_path, "c", 4, set())
    out_file = tmp_path / "out.csv"
    code, out, err = run_cli("compare", "--baseline", *base, "--candidate", *cand, "--format", "csv", "--out", out_file, "--oc-samples", "0")  # fmt: skip
    assert code == 0, err
    assert out == ""  # written to the file, not printed
    rows = list(csv.DictReader(out_file.read_text().splitlines()))
    assert len(rows) == 8 and rows[0]["direction"] == "same"


def test_cli_markdown_escapes_case_names(tmp_path, capsys):
    base = _runs_files(tmp_path, "b", 6, set(), name="a|b*c")
    cand = _runs_files(tmp_path, "c", 6, {"a|b*c-1"}, name="a|b*c")
    code, out, _ = run_cli("compare", "--baseline", *base, "--candidate", *cand, "--format", "markdown", "--oc-samples", "0")  # fmt: skip
    assert code == 1
    assert "a\\|b\\*c-1" in out
    assert "a|b*c" not in out


def test_cli_one_file_with_a_build_column(tmp_path, capsys):
    both = _builds(tmp_path, 6, 6, {"case-4"})
    code, out, _ = run_cli("compare", both, "--format", "json", "--oc-samples", "0")
    assert code == 1
    assert json.loads(out)["worse"] == ["case-4"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--alpha", "2"], "--alpha"),
        (["--alternative", "less"], "--alternative"),
        (["--multiplicity", "bonferroni"], "--multiplicity"),
        (["--test", "mcnemar"], "--test"),
    ],
)
def test_cli_bad_options_are_one_line_exit_2(tmp_path, capsys, extra, message):
    base = _runs_files(tmp_path, "b", 2, set())
    cand = _runs_files(tmp_path, "c", 2, set())
    code, out, err = run_cli("compare", "--baseline", *base, "--candidate", *cand, *extra)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_cli_missing_build_or_file_is_exit_2(tmp_path, capsys):
    base = _runs_files(tmp_path, "b", 2, set())
    code, _, err = run_cli("compare", "--baseline", *base)
    assert code == 2 and "--candidate" in err
    code, _, err = run_cli("compare", "--baseline", *base, "--candidate", tmp_path / "nope")
    assert code == 2 and "nope" in err and len(err.strip().splitlines()) == 1
    out_file = tmp_path / "never.json"
    code, _, err = run_cli("compare", "--baseline", *base, "--candidate", base[0], "--out", out_file)  # fmt: skip
    assert code == 2 and not out_file.exists()


def test_plan_compare_on_the_command_line(capsys):
    # no noise: the candidate's runs pass 3 of 4 cases, the baseline's 4 of 4, so the run
    # test's p is 1 / C(2R, R): 1/6 at R = 2, 1/20 = alpha at R = 3
    code, out, err = run_cli("plan", "--compare", "--cases", "4", "--flip", "0", "--regression", "1", "--format", "json")  # fmt: skip
    assert code == 0, err
    doc = json.loads(out)
    assert doc["runs"] == 3
    assert {r["runs"]: r["detection"] for r in doc["rows"]}[2] == 0.0
    code, _, err = run_cli("plan", "--compare")
    assert code == 2 and "--cases" in err
    code, _, err = run_cli("plan", "--cases", "12")
    assert code == 2 and "--compare" in err


def test_the_committed_worked_example_is_what_compare_says(capsys):
    # reports/compare-example/: real pytest runs (experiments/compare_example.py)
    folder = ROOT / "reports" / "compare-example"
    code, out, err = run_cli("compare", "--baseline", folder / "baseline.jsonl", "--candidate", folder / "regressed-candidate.jsonl", "--regression", "1", "--format", "json")  # fmt: skip
    assert code == 1, err
    got = json.loads(out)
    want = json.loads((folder / "regressed.json").read_text())
    got.pop("sources"), want.pop("sources")  # the folder the runs were read from
    # every word, count and decision exactly; floats to 1e-9 (their last bits vary by CPU)
    assert_same(json.dumps(got, indent=2), json.dumps(want, indent=2), "regressed.json")
    assert got["worse"] == ["extra-seat", "refund-annual", "sso-plan"]


def test_the_chart_marks_the_flagged_cases(tmp_path):
    from gatecal import charts

    data = gatecal.read_runs([_builds(tmp_path, 6, 6, {"case-1", "case-5"})])
    result = gatecal.compare_builds(data, oc_samples=0)
    ax = charts.plot_compare(result)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert {"* case-1", "* case-5"} <= set(labels)
    assert "case-0" in labels and "* case-0" not in labels
    assert charts.chart_bytes(ax, ".svg").startswith(b"<?xml")
