"""The case-aware gate's rank rule (_model/rankgate.py): its false alarm is exact under
exchangeable runs, and it fails a deterministic judge's one new failure."""

import math

import numpy as np
import pytest

from gatecal._model.rankgate import (
    allowed_rank,
    rank_test,
    runs_needed,
    weight_units,
)


def _sets(failed, seen):
    return (
        [tuple(np.flatnonzero(row).tolist()) for row in failed],
        [tuple(np.flatnonzero(~row).tolist()) for row in seen],
    )


def _flagged(failed, seen, alpha):
    """How many of the runs fail the gate when each plays the CI run against the others."""
    fails, gaps = _sets(failed, seen)
    count = 0
    for j in range(len(fails)):
        test = rank_test(
            fails[:j] + fails[j + 1 :],
            gaps[:j] + gaps[j + 1 :],
            fails[j],
            gaps[j],
            cases=failed.shape[1],
            false_alarm=alpha,
        )
        count += test.fails
    return count


@pytest.mark.parametrize("runs", [19, 20, 30, 41])
def test_at_most_allowed_of_the_runs_fail_against_the_others(runs):
    """The combinatorial heart of the guarantee: whatever the runs, when each of the R + 1
    plays the CI run against the other R, at most floor(alpha (R + 1)) of them fail (the
    score is a symmetric function of the runs, ties count against the run). So if the CI
    run is any of them with equal chance, it fails with probability at most that over
    R + 1, for every data set, not only on average."""
    rng = np.random.default_rng(runs)
    for _ in range(30):
        n = int(rng.integers(2, 15))
        rates = rng.choice([0.0, 0.01, 0.1, 0.5, 1.0], size=n)
        failed = rng.random((runs + 1, n)) < rates
        seen = rng.random((runs + 1, n)) > 0.05
        failed &= seen
        assert _flagged(failed, seen, 0.05) <= allowed_rank(0.05, runs)


def test_false_alarm_holds_when_whole_runs_differ():
    """Healthy runs with a strong shared run effect (logit sigma 1): the CI run fails at
    most 1 time in 20 at 19 known-good runs, within three standard errors (4,000 data sets,
    simulated)."""
    rng = np.random.default_rng(7)
    rates = np.array([0.002] * 8 + [0.05, 0.2, 0.5, 0.97])
    logit = np.log(rates / (1 - rates))
    sims, runs, hits = 4000, 19, 0
    for _ in range(sims):
        z = rng.normal(0.0, 1.0, size=(runs + 1, 1))
        failed = rng.random((runs + 1, rates.size)) < 1 / (1 + np.exp(-(logit + z)))
        fails, gaps = _sets(failed, np.ones_like(failed))
        hits += rank_test(
            fails[:-1], gaps[:-1], fails[-1], gaps[-1], cases=rates.size, false_alarm=0.05
        ).fails
    bound = 1 / 20
    assert hits / sims <= bound + 3 * math.sqrt(bound * (1 - bound) / sims)


def test_a_deterministic_judges_one_new_failure_fails_and_a_clean_run_passes():
    """Temperature 0: 80 cases, 30 known-good runs, 3 cases failing every run."""
    known = [(0, 1, 2)] * 30
    gaps = [()] * 30
    same = rank_test(known, gaps, (0, 1, 2), (), cases=80, false_alarm=0.05)
    assert not same.fails and same.at_least == 30 and same.p_value == 1.0
    one = rank_test(known, gaps, (0, 1, 2, 40), (), cases=80, false_alarm=0.05)
    assert one.fails and one.at_least == 0 and one.p_value == pytest.approx(1 / 31)
    clean = rank_test([()] * 30, gaps, (), (), cases=80, false_alarm=0.05)
    assert not clean.fails and clean.score == 0
    assert rank_test([()] * 30, gaps, (7,), (), cases=80, false_alarm=0.05).fails


def test_too_few_runs_can_fail_nothing():
    assert runs_needed(0.05) == 19 and runs_needed(0.01) == 99 and runs_needed(0.1) == 9
    assert allowed_rank(0.05, 18) == 0 and allowed_rank(0.05, 19) == 1
    assert allowed_rank(0.05, 39) == 2 and allowed_rank(0.05, 60) == 3
    test = rank_test([()] * 18, [()] * 18, (3, 4, 5), (), cases=10, false_alarm=0.05)
    assert not test.fails and test.allowed == 0


def test_weights_are_the_log_likelihood_ratio_of_a_broken_case_in_units():
    # python -c "import math; print(round(math.log1p((1/79)/(0.1/31))*100),
    #   round(math.log1p((1/79)/(30.1/31))*100), round(math.log1p((1/79)/(1.1/31))*100))"
    # 159 1 31: never failed in 30 runs, failed in all 30, failed once (80 cases)
    assert weight_units(0, 30, 80) == 159
    assert weight_units(30, 30, 80) == 1
    assert weight_units(1, 30, 80) == 31
