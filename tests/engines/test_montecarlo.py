import os

import numpy as np
import pytest
from scipy import stats

from gatecal import (
    Check,
    JudgeNoise,
    ParameterError,
    Suite,
    exact_pass_counts,
    simulate_pass_counts,
)
from gatecal._engines.montecarlo import CHUNK_VERDICTS
from gatecal._engines.skipping import _bernoulli_positions

ARTICLE = Suite.uniform()


def _mixed_suite():
    """Cases with truly failing judge checks, so flips can also rescue a case."""
    return Suite(
        cases=("a", "b", "c", "d", "e"),
        checks=(Check("relevancy", "judge"), Check("facts", "judge"), Check("code", "code")),
        truth={
            "healthy": [[True, True, True]] * 5,
            "regressed": [
                [True, True, True],
                [False, True, True],  # passes only if the judge wrongly says yes
                [False, False, True],  # needs two false yeses
                [True, True, False],  # a code check fails: never passes
                [True, False, True],
            ],
        },
    )


def _per_case_suite(n=40, judge_checks=1, code_checks=1, failing=8, judge_failing=5):
    """Each case its own flip rate (what ``recommend --export-suite`` writes), more
    distinct rates than EXACT_RATE_GROUPS, so the skipping engine bands and thins them.
    In the regressed build the first `failing` cases fail a code check and the next
    `judge_failing` a judge check (a false yes can rescue those)."""
    cases = tuple(f"case-{i:02d}" for i in range(n))
    checks = tuple(Check(f"judge-{j}", "judge") for j in range(judge_checks)) + tuple(
        Check(f"code-{c}", "code") for c in range(code_checks)
    )
    healthy = [[True] * len(checks) for _ in cases]
    regressed = [list(row) for row in healthy]
    for i in range(failing):
        regressed[i][judge_checks] = False
    for i in range(failing, failing + judge_failing):
        regressed[i][0] = False
    return Suite(cases=cases, checks=checks, truth={"healthy": healthy, "regressed": regressed})


_RATES = np.random.default_rng(13).beta(2, 30, size=40)
PER_CASE = JudgeNoise(
    fnr=0.05,
    fpr=0.05,
    per_case={f"case-{i:02d}": (float(r), float(r)) for i, r in enumerate(_RATES)},
)
PER_CASE_ASYM = JudgeNoise(  # false yes at other rates: a case's verdicts span bands
    fnr=0.05,
    fpr=0.05,
    per_case={f"case-{i:02d}": (float(r), float(0.5 - r)) for i, r in enumerate(_RATES)},
)

CONFIGS = [
    (ARTICLE, "healthy", JudgeNoise.flip(0.03)),
    (ARTICLE, "regressed", JudgeNoise.flip(0.08)),
    (
        Suite.uniform(cases=40, judge_checks=3, code_checks=0, failing=10),
        "regressed",
        JudgeNoise.flip(0.05),
    ),
    (Suite.uniform(cases=5, judge_checks=1, code_checks=1), "healthy", JudgeNoise.flip(0.3)),
    (Suite.uniform(cases=7, judge_checks=4, code_checks=2), "healthy", JudgeNoise.flip(0.6)),
    (_mixed_suite(), "regressed", JudgeNoise(fnr=0.1, fpr=0.4)),  # two rate groups
    (_mixed_suite(), "regressed", JudgeNoise(fnr=0.02, fpr=0.02)),
    (_mixed_suite(), "regressed", JudgeNoise(fnr=0.0, fpr=1.0)),
    (Suite.uniform(cases=3, judge_checks=0, code_checks=1), "regressed", JudgeNoise.flip(0.2)),
    (_per_case_suite(), "healthy", PER_CASE),  # banded, thinned, one group per case
    (_per_case_suite(judge_checks=2), "regressed", PER_CASE),
    (_per_case_suite(judge_checks=2, code_checks=0, failing=0), "regressed", PER_CASE_ASYM),
]


@pytest.mark.parametrize("method", ["skip", "dense"])
@pytest.mark.parametrize(("suite", "build", "noise"), CONFIGS)
def test_every_gate_within_five_standard_errors_of_exact(suite, build, noise, method):
    n_runs = 40_000
    sample = simulate_pass_counts(suite, build, noise, n_runs=n_runs, rng=7, method=method)
    exact = exact_pass_counts(suite, build, noise)
    assert sum(sample.counts) == n_runs
    for k_min in range(suite.n_cases + 1):
        p = exact.failure_probability(k_min)
        se = np.sqrt(p * (1 - p) / n_runs)
        got = sample.failures(k_min) / n_runs
        if p in (0.0, 1.0):
            assert got == p  # impossible and certain outcomes are never simulated otherwise
        else:
            assert abs(got - p) < 5 * se + 1e-12, (k_min, got, p, se)
    total_se = (
        np.sqrt(
            np.sum(
                np.array(exact.case_pass_probabilities)
                * (1 - np.array(exact.case_pass_probabilities))
            )
            / n_runs
        )
        / suite.n_cases
    )
    assert abs(sample.mean_pass_rate - exact.mean_pass_rate) <= 5 * total_se + 1e-12


def _chi_square_pvalue(counts, pmf, n_runs):
    """Pearson chi-square of a pass-count histogram against the exact pmf (cells merged to E >= 5)."""
    expected = np.asarray(pmf) * n_runs
    observed = np.asarray(counts, dtype=float)
    assert observed[expected == 0].sum() == 0  # nothing simulated where the exact pmf is 0
    obs_cells, exp_cells, o, e = [], [], 0.0, 0.0
    for oi, ei in zip(observed, expected, strict=True):
        o, e = o + oi, e + ei
        if e >= 5:
            obs_cells.append(o)
            exp_cells.append(e)
            o = e = 0.0
    obs_cells[-1] += o
    exp_cells[-1] += e
    stat = sum((a - b) ** 2 / b for a, b in zip(obs_cells, exp_cells, strict=True))
    return stats.chi2.sf(stat, len(obs_cells) - 1)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["skip", "dense"])
@pytest.mark.parametrize(("suite", "build", "noise"), CONFIGS[:3] + CONFIGS[5:7] + CONFIGS[9:])
def test_whole_pass_count_distribution_matches_exact(suite, build, noise, method):
    """Per-verdict flips are exact in distribution: a chi-square test of all of K."""
    n_runs = 400_000
    sample = simulate_pass_counts(suite, build, noise, n_runs=n_runs, rng=11, method=method)
    pvalue = _chi_square_pvalue(sample.counts, exact_pass_counts(suite, build, noise).pmf, n_runs)
    assert pvalue > 1e-4  # a correct engine fails this one time in 10,000


@pytest.mark.parametrize("p", [0.001, 0.03, 0.3, 0.9])
def test_skipped_positions_are_independent_bernoulli(p):
    """Each position is flipped with probability p, independently of its neighbours."""
    gen = np.random.default_rng(5)
    length, window, reps = 24_000, 24, 40
    per_window = []
    for _ in range(reps):
        pos = _bernoulli_positions(gen, p, length)
        assert np.all(np.diff(pos) > 0) and (pos.size == 0 or (pos[0] >= 0 and pos[-1] < length))
        per_window.append(np.bincount(pos // window, minlength=length // window))
    counts = np.concatenate(per_window)  # flips per window of 24 ~ Binomial(24, p)
    observed = np.bincount(counts, minlength=window + 1)
    pmf = stats.binom.pmf(np.arange(window + 1), window, p)
    assert _chi_square_pvalue(observed, pmf / pmf.sum(), counts.size) > 1e-4
    total = counts.sum()
    n = counts.size * window
    assert abs(total - n * p) < 5 * np.sqrt(n * p * (1 - p))


def test_extreme_flip_rates():
    gen = np.random.default_rng(1)
    assert _bernoulli_positions(gen, 1.0, 10).tolist() == list(range(10))
    assert _bernoulli_positions(gen, 1e-320, 10**6).size == 0
    healthy_all_flip = simulate_pass_counts(ARTICLE, "healthy", JudgeNoise.flip(1.0), n_runs=50)
    assert healthy_all_flip.counts[0] == 50
    none = simulate_pass_counts(ARTICLE, "regressed", JudgeNoise.flip(0.0), n_runs=50)
    assert none.counts[9] == 50


@pytest.mark.parametrize("forks", [True, False])
@pytest.mark.parametrize("method", ["skip", "dense"])
def test_same_seed_same_sample_and_workers_do_not_matter(method, forks, monkeypatch):
    from gatecal._engines import pool as _engine

    monkeypatch.setattr(_engine, "_FORK_HELPERS", forks)
    monkeypatch.setattr(_engine, "_one_thread", lambda: True)  # (pytest-xdist runs a thread)
    monkeypatch.setattr(_engine, "FORK_MIN_CHUNKS", 1)

    suite = Suite.uniform(cases=30, judge_checks=2, code_checks=1)
    noise = JudgeNoise.flip(0.05)
    # 3 chunks and a bit; worker processes even for so few, so they really share the work
    monkeypatch.setattr(_engine, "PROCESS_MIN_CHUNKS", 1)
    n_runs = 3 * (CHUNK_VERDICTS // 60) + 17
    one = simulate_pass_counts(suite, "healthy", noise, n_runs=n_runs, rng=99, workers=1)
    assert simulate_pass_counts(suite, "healthy", noise, n_runs=n_runs, rng=99) == one
    for workers in (2, 3, 8):
        got = simulate_pass_counts(
            suite, "healthy", noise, n_runs=n_runs, rng=99, workers=workers, method=method
        )
        assert got == simulate_pass_counts(
            suite, "healthy", noise, n_runs=n_runs, rng=99, workers=1, method=method
        )
        assert method == "dense" or got == one
    other = simulate_pass_counts(suite, "healthy", noise, n_runs=n_runs, rng=100)
    assert other != one


@pytest.mark.parametrize("helper_threads", [0, 1])
@pytest.mark.parametrize("caller_works", [True, False])
def test_blocks_computed_by_the_caller_or_the_workers_add_up_alike(
    caller_works, helper_threads, monkeypatch
):
    """The calling process takes blocks too while its workers start; with it idle, the
    workers (a helper thread, or a worker process) compute every block. Either way the
    histogram is that of one process, and a progress callback sees every run once."""
    from gatecal._engines import pool as _engine

    monkeypatch.setattr(_engine, "_FORK_HELPERS", False)  # forks: see the tests below
    monkeypatch.setattr(_engine, "_HELPER_THREADS", helper_threads)

    suite = Suite.uniform(cases=30, judge_checks=2, code_checks=1)
    noise = JudgeNoise.flip(0.05)
    monkeypatch.setattr(_engine, "PROCESS_MIN_CHUNKS", 1)
    n_runs = 40 * (CHUNK_VERDICTS // 60) + 17  # 41 chunks: blocks of 1 chunk
    one = simulate_pass_counts(suite, "healthy", noise, n_runs=n_runs, rng=5, workers=1)
    monkeypatch.setattr(_engine, "_CALLER_WORKS", caller_works)
    seen = []
    got = simulate_pass_counts(
        suite, "healthy", noise, n_runs=n_runs, rng=5, workers=2, progress=seen.append
    )
    assert got == one and sum(seen) == n_runs and len(seen) == 41


def test_two_workers_are_this_process_and_a_thread_from_a_few_chunks(monkeypatch):
    """Where helpers are not forked, two workers start no process (the forkserver's numpy
    import would cost as much as a 10^8-run simulation): the second is a thread, from
    THREAD_MIN_CHUNKS chunks on, and it computes blocks that add up to one worker's
    histogram."""
    from gatecal._engines import pool as _engine

    monkeypatch.setattr(_engine, "_FORK_HELPERS", False)

    def no_process(*args, **kwargs):
        raise AssertionError("a worker process was started")

    computed = []
    compute = _engine._compute_blocks

    def counting(task, blocks, results):
        compute(lambda *span: computed.append(span) or task(*span), blocks, results)

    monkeypatch.setattr(_engine, "_process_pool", no_process)
    monkeypatch.setattr(_engine, "_compute_blocks", counting)
    monkeypatch.setattr(_engine, "_CALLER_WORKS", False)  # the thread computes every block
    suite = Suite.uniform(cases=30, judge_checks=2, code_checks=1)
    noise = JudgeNoise.flip(0.05)
    n_runs = (_engine.THREAD_MIN_CHUNKS + 1) * (CHUNK_VERDICTS // 60)
    got = simulate_pass_counts(suite, "healthy", noise, n_runs=n_runs, rng=8, workers=2)
    assert computed
    monkeypatch.setattr(_engine, "_CALLER_WORKS", True)
    assert got == simulate_pass_counts(suite, "healthy", noise, n_runs=n_runs, rng=8, workers=1)


@pytest.mark.parametrize("forks", [True, False])
@pytest.mark.parametrize("workers", [2, 3])
def test_an_error_in_the_progress_callback_stops_the_workers(workers, forks, monkeypatch):
    from gatecal._engines import pool as _engine

    monkeypatch.setattr(_engine, "_FORK_HELPERS", forks)
    monkeypatch.setattr(_engine, "_one_thread", lambda: True)
    pids = _record_forks(monkeypatch)
    monkeypatch.setattr(_engine, "PROCESS_MIN_CHUNKS", 1)
    suite = Suite.uniform(cases=30, judge_checks=2, code_checks=1)

    def stop(runs):
        raise KeyError("stop")

    with pytest.raises(KeyError, match="stop"):
        simulate_pass_counts(
            suite,
            "healthy",
            JudgeNoise.flip(0.05),
            n_runs=10**6,
            rng=5,
            workers=workers,
            progress=stop,
        )
    assert len(pids) == (workers - 1 if forks else 0)
    for pid in pids:  # every forked helper was stopped and reaped
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _record_forks(monkeypatch):
    """The pids of the helpers forked from now on (a list the test reads)."""
    pids = []
    fork = os.fork

    def recording():
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recording)
    return pids


def _forks_on(monkeypatch):
    from gatecal._engines import pool as _engine

    monkeypatch.setattr(_engine, "_one_thread", lambda: True)  # (pytest-xdist runs a thread)
    monkeypatch.setattr(_engine, "FORK_MIN_CHUNKS", 1)
    return _engine


FORK_SUITE = Suite.uniform(cases=30, judge_checks=2, code_checks=1)
FORK_RUNS = 40 * (CHUNK_VERDICTS // 60) + 17  # 41 chunks: blocks of 1 chunk


@pytest.mark.parametrize("caller_works", [True, False])
@pytest.mark.parametrize("workers", [2, 3])
def test_forked_helpers_add_up_to_one_worker(workers, caller_works, monkeypatch):
    """On Linux, in a process of one thread, the helpers are forked copies of it; with
    the caller idle they compute every block. The histogram is one worker's, and a
    progress callback sees every run once."""
    _engine = _forks_on(monkeypatch)
    noise = JudgeNoise.flip(0.05)
    one = simulate_pass_counts(FORK_SUITE, "healthy", noise, n_runs=FORK_RUNS, rng=5, workers=1)
    pids = _record_forks(monkeypatch)
    monkeypatch.setattr(_engine, "_CALLER_WORKS", caller_works)
    seen = []
    got = simulate_pass_counts(
        FORK_SUITE, "healthy", noise, n_runs=FORK_RUNS, rng=5, workers=workers, progress=seen.append
    )
    assert got == one and sum(seen) == FORK_RUNS and len(seen) == 41
    assert len(pids) == workers - 1


def test_a_helper_that_dies_leaves_its_blocks_to_the_caller(monkeypatch):
    """A forked helper killed after its first block (as by the OOM killer) reports
    nothing more: the blocks it took are computed by the caller, the histogram is whole."""
    from gatecal._engines import skipping

    _engine = _forks_on(monkeypatch)
    noise = JudgeNoise.flip(0.05)
    one = simulate_pass_counts(FORK_SUITE, "healthy", noise, n_runs=FORK_RUNS, rng=6, workers=1)
    caller = os.getpid()
    chunk = skipping._skip_chunk
    calls = []

    def dying(*args):
        calls.append(1)
        if os.getpid() != caller and len(calls) > 1:
            os._exit(1)
        return chunk(*args)

    monkeypatch.setattr(_engine, "_skip_chunk", dying)
    monkeypatch.setattr(_engine, "_CALLER_WORKS", False)  # the helper takes the first blocks
    pids = _record_forks(monkeypatch)
    got = simulate_pass_counts(FORK_SUITE, "healthy", noise, n_runs=FORK_RUNS, rng=6, workers=2)
    assert got == one and len(pids) == 1


def test_a_fork_that_fails_leaves_the_work_to_the_caller(monkeypatch):
    """No room for another process (fork raises EAGAIN): the caller computes every block
    and the histogram is one worker's; no error reaches the user."""
    _engine = _forks_on(monkeypatch)
    noise = JudgeNoise.flip(0.05)
    one = simulate_pass_counts(FORK_SUITE, "healthy", noise, n_runs=FORK_RUNS, rng=9, workers=1)

    def no_room():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_room)
    got = simulate_pass_counts(FORK_SUITE, "healthy", noise, n_runs=FORK_RUNS, rng=9, workers=3)
    assert got == one


def test_an_error_in_a_forked_helper_is_raised_by_the_caller(monkeypatch):
    _engine = _forks_on(monkeypatch)
    caller = os.getpid()
    chunk = _engine._skip_chunk

    def failing(*args):
        if os.getpid() != caller:
            raise KeyError("in the helper")
        return chunk(*args)

    monkeypatch.setattr(_engine, "_skip_chunk", failing)
    monkeypatch.setattr(_engine, "_CALLER_WORKS", False)
    with pytest.raises(RuntimeError, match="a worker process failed: KeyError: 'in the helper'"):
        simulate_pass_counts(
            FORK_SUITE, "healthy", JudgeNoise.flip(0.05), n_runs=FORK_RUNS, rng=6, workers=2
        )


def test_no_fork_while_another_thread_runs(monkeypatch):
    """A process running a second Python thread (a notebook's, a server's) is never
    forked: a lock that thread holds would stay locked in the copy forever. The helper is
    then a thread, and the histogram the same."""
    import threading

    from gatecal._engines import pool as _engine

    monkeypatch.setattr(_engine, "FORK_MIN_CHUNKS", 1)
    pids = _record_forks(monkeypatch)
    noise = JudgeNoise.flip(0.05)
    one = simulate_pass_counts(FORK_SUITE, "healthy", noise, n_runs=FORK_RUNS, rng=7, workers=1)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        got = simulate_pass_counts(FORK_SUITE, "healthy", noise, n_runs=FORK_RUNS, rng=7, workers=2)
    finally:
        release.set()
        other.join()
    assert got == one and pids == []


def test_seed_forms_follow_spec7():
    noise = JudgeNoise.flip(0.1)
    a = simulate_pass_counts(ARTICLE, "healthy", noise, n_runs=5000, rng=3)
    b = simulate_pass_counts(ARTICLE, "healthy", noise, n_runs=5000, rng=np.random.SeedSequence(3))
    assert a == b
    gen = np.random.default_rng(3)
    c = simulate_pass_counts(ARTICLE, "healthy", noise, n_runs=5000, rng=gen)
    d = simulate_pass_counts(ARTICLE, "healthy", noise, n_runs=5000, rng=gen)
    assert c != d  # a Generator passed twice gives two independent samples
    for bad in (-1, 1.5, "seed", True):
        with pytest.raises(ParameterError, match="`rng` must be None, a non-negative int"):
            simulate_pass_counts(ARTICLE, "healthy", noise, n_runs=10, rng=bad)


def test_progress_reports_every_run_once():
    seen = []
    n_runs = 2 * (CHUNK_VERDICTS // 24) + 5
    simulate_pass_counts(
        ARTICLE, "healthy", JudgeNoise.flip(0.03), n_runs=n_runs, rng=1, progress=seen.append
    )
    assert sum(seen) == n_runs
    assert len(seen) == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_runs": 0}, r"`n_runs` must be an integer >= 1 \(got 0\)"),
        ({"n_runs": 2.5}, r"`n_runs` must be an integer >= 1 \(got 2.5\)"),
        ({"n_runs": 10, "workers": 0}, r"`workers` must be an integer >= 1 \(got 0\)"),
        ({"n_runs": 10, "method": "fast"}, r"`method` must be 'auto', 'skip' or 'dense'"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        simulate_pass_counts(ARTICLE, "healthy", JudgeNoise.flip(0.1), **kwargs)


def test_noise_and_suite_validation():
    with pytest.raises(ParameterError, match=r"`flip` must be a number in \[0, 1\] \(got nan\)"):
        JudgeNoise.flip(float("nan"))
    with pytest.raises(ParameterError, match=r"`fpr` must be a number in \[0, 1\] \(got 2\)"):
        JudgeNoise(fnr=0.1, fpr=2)
    with pytest.raises(ParameterError, match=r"`failing` must be an integer in \[0, 12\]"):
        Suite.uniform(cases=12, failing=13)
    with pytest.raises(ParameterError, match=r"`cases` must be an integer >= 1 \(got 0\)"):
        Suite.uniform(cases=0)
    with pytest.raises(ParameterError, match="can't both be 0"):
        Suite.uniform(judge_checks=0, code_checks=0)
    with pytest.raises(ParameterError, match="`cases` must be unique"):
        Suite(
            cases=("a", "a"),
            checks=(Check("j", "judge"),),
            truth={"healthy": [[True], [True]], "regressed": [[True], [True]]},
        )
    with pytest.raises(ParameterError, match=r"`truth` \['regressed'\] must be 2 rows of 1"):
        Suite(
            cases=("a", "b"),
            checks=(Check("j", "judge"),),
            truth={"healthy": [[True], [True]], "regressed": [[True]]},
        )
    with pytest.raises(ParameterError, match="`kind` must be 'judge' or 'code'"):
        Check("j", "llm")  # type: ignore[arg-type]


@pytest.mark.parametrize(("suite", "build", "noise"), CONFIGS[9:])
def test_per_case_rates_are_banded_and_thinned(suite, build, noise):
    from gatecal._engines.skipping import EXACT_RATE_GROUPS, _plan

    plan = _plan(suite, build, noise)
    assert len(np.unique(plan.rates)) > EXACT_RATE_GROUPS
    assert len(plan.groups) < len(np.unique(plan.rates))  # fewer streams than rates
    assert any(g.accept is not None for g in plan.groups)
    for g in plan.groups:  # every band keeps at least 1/sqrt(2) of its candidates
        if g.accept is not None and g.rate > plan.rates.max() / 4096:
            assert g.accept.max() == 1.0


#: The article's regressed build (3 cases fail a code check) with two flip rates by case:
#: two rate groups, each holding cases that never pass.
TWO_RATES_DEAD = (
    ARTICLE,
    "regressed",
    JudgeNoise(
        fnr=0.05,
        fpr=0.05,
        per_case={f"case-{i:02d}": (0.02, 0.02) if i % 2 else (0.09, 0.09) for i in range(1, 13)},
    ),
)


def test_cases_that_fail_a_code_check_leave_the_short_path_open():
    """Their verdicts still flip (same random numbers as ever) but change nothing, so a
    group holding them still settles its own cases: the short path, hits dropped."""
    from gatecal._engines.skipping import _plan

    for suite, build, noise, groups in ((*CONFIGS[1], 1), (*TWO_RATES_DEAD, 2)):
        plan = _plan(suite, build, noise)
        assert plan.closed and len(plan.groups) == groups
        assert all(g.simple and g.dead is not None for g in plan.groups)
        assert sum(int(g.dead.sum()) for g in plan.groups) == 3  # failing cases of 12
        assert not plan.banded
    assert not _plan(*CONFIGS[2]).groups[0].simple  # truly failing judge verdicts: a merge


@pytest.mark.parametrize(
    ("suite", "build", "noise"), [CONFIGS[0], CONFIGS[1], TWO_RATES_DEAD, *CONFIGS[5:]]
)
def test_case_by_case_counting_equals_the_general_merge(suite, build, noise, monkeypatch):
    """The short path (groups that settle their own cases) and the general one (merge
    all flips by run and case) count the same histogram from the same random numbers.
    CONFIGS[1] (the article's regressed build: 3 cases fail a code check) takes the short
    path since those cases' hits are dropped there."""
    fast = simulate_pass_counts(suite, build, noise, n_runs=20_000, rng=5, method="skip")
    _without_shortcuts(monkeypatch)
    slow = simulate_pass_counts(suite, build, noise, n_runs=20_000, rng=5, method="skip")
    assert fast == slow


def _without_shortcuts(monkeypatch):
    """Every chunk counted by the general merge of all flips by run and case."""
    from gatecal._engines import skipping as _engine

    monkeypatch.setattr(_engine, "_skip_chunk_by_groups", None)
    original = _engine._Plan

    def no_shortcut(*args, **kwargs):
        return original(*args, **{**kwargs, "closed": False})

    monkeypatch.setattr(_engine, "_Plan", no_shortcut)


def _dead_apart_suite():
    """Six cases, two judge checks; cases b and e fail a code check in the regressed
    build: cases that never pass, not side by side (looked up, not a span)."""
    rows = [[True, True, True]] * 6
    regressed = [[True, True, i not in (1, 4)] for i in range(6)]
    return Suite(
        cases=tuple("abcdef"),
        checks=(Check("j1", "judge"), Check("j2", "judge"), Check("code", "code")),
        truth={"healthy": rows, "regressed": regressed},
    )


ONE_RATE = [
    (Suite.uniform(cases=13, judge_checks=1, code_checks=1), "healthy", JudgeNoise.flip(0.05)),
    (Suite.uniform(cases=13, judge_checks=1, code_checks=1), "regressed", JudgeNoise.flip(0.05)),
    (Suite.uniform(cases=12, judge_checks=3, code_checks=1), "regressed", JudgeNoise.flip(0.15)),
    (Suite.uniform(cases=16, judge_checks=4, code_checks=1), "healthy", JudgeNoise.flip(0.002)),
    (Suite.uniform(cases=5, judge_checks=2, code_checks=1), "healthy", JudgeNoise.flip(1e-7)),
    (_dead_apart_suite(), "regressed", JudgeNoise.flip(0.1)),
    (ARTICLE, "regressed", JudgeNoise.flip(0.08)),
]


@pytest.mark.parametrize("narrow", [True, False])
@pytest.mark.parametrize(("suite", "build", "noise"), ONE_RATE)
def test_one_rate_counting_equals_the_general_merge(suite, build, noise, narrow, monkeypatch):
    """One rate, one slot or several per case, cases that never pass in one span or
    apart, int32 positions or int64: the one-group kernel counts the histogram the
    general merge counts from the same random numbers, over full chunks and a short one."""
    from gatecal._engines import skipping as _engine

    plan = _engine._plan(suite, build, noise)
    runs = 2 * (CHUNK_VERDICTS // plan.verdicts_per_run) + 17
    kernel, skips, used = _engine._skip_chunk_one_group, _engine._skips, []
    monkeypatch.setattr(_engine, "_skip_chunk_one_group", lambda *a: used.append(1) or kernel(*a))
    monkeypatch.setattr(_engine, "_skips", lambda *a, **k: skips(*a, **{**k, "narrow": narrow}))
    fast = simulate_pass_counts(suite, build, noise, n_runs=runs, rng=5, method="skip")
    assert len(used) == 3
    _without_shortcuts(monkeypatch)
    slow = simulate_pass_counts(suite, build, noise, n_runs=runs, rng=5, method="skip")
    assert fast == slow


@pytest.mark.parametrize("p", [1e-9, 1e-5, 0.001, 0.03, 0.19, 0.6])
@pytest.mark.parametrize("length", [1, 1000, CHUNK_VERDICTS, 3 * CHUNK_VERDICTS])
def test_int32_positions_are_the_int64_ones(p, length):
    """The same positions as int32 (in a chunk, capped gaps included) or, where their sums
    could pass 2^31 (0.1% of three chunks' verdicts: 3,500 gaps of up to 3 million), int64."""
    from gatecal._engines.skipping import _skips

    narrow = _skips(np.random.default_rng(3), p, length, None, fractions=False, narrow=True)[0]
    wide = _skips(np.random.default_rng(3), p, length, None, fractions=False)[0]
    assert wide.dtype == np.int64 and np.array_equal(narrow, wide)
    if length <= CHUNK_VERDICTS:
        assert narrow.dtype == np.int32
    elif p == 0.001:
        assert narrow.dtype == np.int64


def test_command_line_workers_give_the_same_bytes():
    """`python -m gatecal` with worker processes (forkserver: the workers import
    gatecal.__main__, which must not run the command again) prints what one process
    prints. 30,000 runs of 5,000 cases are 289 chunks: enough for processes."""
    import subprocess
    import sys

    from gatecal._engines.montecarlo import CHUNK_VERDICTS
    from gatecal._engines.pool import PROCESS_MIN_CHUNKS

    assert 30_000 / (CHUNK_VERDICTS // 10_000) >= PROCESS_MIN_CHUNKS
    args = ["simulate", "--cases", "5000", "--runs", "30000", "--flip", "0.03"]
    outs = [
        subprocess.run(
            [sys.executable, "-m", "gatecal", *args, "--workers", w, "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for w in ("1", "3")
    ]
    assert outs[0] == outs[1] and '"runs": 30000' in outs[0]


@pytest.mark.parametrize("rate", [0.003, 0.05, 0.3, 0.9])
def test_fractional_part_of_a_gap_thins_exactly(rate):
    """Thinning by the gap's fractional part: P(keep) = a, whatever the gap's whole part."""
    from gatecal._engines.skipping import _thinning_threshold

    gaps = np.random.default_rng(3).standard_exponential(1_000_000) / -np.log1p(-rate)
    whole, frac = np.floor(gaps), gaps - np.floor(gaps)
    accept = np.array([0.05, 0.5, 0.71, 0.999])
    for a, t in zip(accept, _thinning_threshold(rate, accept), strict=True):
        for part in (whole == 0, whole > 0, whole % 2 == 1):  # independent of the skip
            kept = frac[part] < t
            se = np.sqrt(a * (1 - a) / part.sum())
            assert abs(kept.mean() - a) < 5 * se, (rate, a)
    assert _thinning_threshold(rate, np.ones(1))[0] == pytest.approx(1.0)


def test_bands_with_a_verdict_that_always_flips():
    """A band at rate 1 has no gaps to thin by: it draws uniforms, still exact."""
    rates = [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.6, 0.4, 0.2, 0.1, 0.05, 0.01]
    suite = _per_case_suite(n=12, failing=2, judge_failing=0)
    noise = JudgeNoise(
        fnr=0.1, fpr=0.1, per_case={f"case-{i:02d}": (r, r) for i, r in enumerate(rates)}
    )
    for build in ("healthy", "regressed"):
        n_runs = 40_000
        sample = simulate_pass_counts(suite, build, noise, n_runs=n_runs, rng=2, method="skip")
        exact = exact_pass_counts(suite, build, noise)
        for k_min in range(suite.n_cases + 1):
            p = exact.failure_probability(k_min)
            if p in (0.0, 1.0):
                assert sample.failures(k_min) / n_runs == p
            else:
                se = np.sqrt(p * (1 - p) / n_runs)
                assert abs(sample.failures(k_min) / n_runs - p) < 5 * se


def test_a_group_without_a_flip_in_a_chunk_changes_nothing():
    """Two cases, one judge check, the regressed case truly failing it: its group draws no
    flip in most chunks while the other group does (this raised IndexError once)."""
    from gatecal import exact_pass_counts

    suite = Suite(
        cases=["a", "b"],
        checks=[Check("j", "judge")],
        truth={"healthy": [[True], [True]], "regressed": [[True], [False]]},
    )
    noise = JudgeNoise(fnr=0.03, fpr=0.5)
    for build in ("healthy", "regressed"):
        exact = np.asarray(exact_pass_counts(suite, build, noise).pmf)
        counts = np.zeros(3)
        for seed in range(300):  # ten runs at a time: most chunks flip one group only
            sample = simulate_pass_counts(suite, build, noise, n_runs=10, rng=seed, method="skip")
            counts += np.asarray(sample.counts, dtype=float)
        se = np.sqrt(exact * (1 - exact) / 3000)
        assert np.all(np.abs(counts / 3000 - exact) <= 5 * se + 1e-12), build


def _per_case_with_bands(n=300):
    """The benchmark's suite: 300 cases, one judge check each, Beta(2, 38) rates."""
    rates = np.random.default_rng(7).beta(2, 38, n)
    suite = _per_case_suite(n=n, failing=30, judge_failing=0)
    noise = JudgeNoise(
        fnr=0.05,
        fpr=0.05,
        per_case={f"case-{i:02d}": (float(r), float(r)) for i, r in enumerate(rates)},
    )
    return suite, noise


_BENCH_SUITE, _BENCH_NOISE = _per_case_with_bands()
BANDED = [
    (_BENCH_SUITE, "healthy", _BENCH_NOISE),
    (_BENCH_SUITE, "regressed", _BENCH_NOISE),  # cases failing a code check are not drawn
    CONFIGS[9],
]


def _without_banded_path(monkeypatch):
    from gatecal._engines import skipping as _engine

    original = _engine._Plan

    def band_by_band(*args, **kwargs):
        return original(*args, **{**kwargs, "banded": False})

    monkeypatch.setattr(_engine, "_Plan", band_by_band)


@pytest.mark.parametrize(("suite", "build", "noise"), BANDED)
def test_bands_drawn_at_once_give_the_same_bytes_as_band_by_band(suite, build, noise, monkeypatch):
    """The banded path (every band's exponentials in one draw) counts what the band-by-band
    path counts from the same random numbers, for full chunks and a short last one."""
    from gatecal._engines.skipping import _plan

    plan = _plan(suite, build, noise)
    assert plan.banded
    runs = 3 * (CHUNK_VERDICTS // plan.verdicts_per_run) + 17
    fast = simulate_pass_counts(suite, build, noise, n_runs=runs, rng=11, method="skip")
    _without_banded_path(monkeypatch)
    assert not _plan(suite, build, noise).banded
    slow = simulate_pass_counts(suite, build, noise, n_runs=runs, rng=11, method="skip")
    assert fast == slow


def test_a_band_that_falls_short_is_drawn_again_band_by_band(monkeypatch):
    """When a band's first draw does not reach the end of the chunk (rare: six standard
    deviations), the banded path puts the generator back and the band-by-band path draws,
    so the bytes stay those of the band-by-band path."""
    from gatecal._engines import banded as _banded, skipping as _engine

    suite, build, noise = BANDED[0]
    for module in (_engine, _banded):  # first draws of a third of the mean: all fall short
        monkeypatch.setattr(
            module, "_draw_sizes", lambda mean: (int(mean) // 3 + 1, int(mean) // 3 + 1)
        )
    calls = []
    banded = _banded._skip_chunk_banded

    def counting(*args):
        calls.append(result := banded(*args))
        return result

    monkeypatch.setattr(_banded, "_skip_chunk_banded", counting)
    fast = simulate_pass_counts(suite, build, noise, n_runs=20_000, rng=3, method="skip")
    assert calls and all(result is None for result in calls)
    _without_banded_path(monkeypatch)
    slow = simulate_pass_counts(suite, build, noise, n_runs=20_000, rng=3, method="skip")
    assert fast == slow


@pytest.mark.parametrize("d", [1, 2, 3, 7, 12, 24, 25, 1000, 4095, (1 << 20) + 1])
def test_floor_division_by_multiplication_is_exact(d):
    from gatecal._engines.skipping import _floor_divide

    bound = 1 << 31
    edges = np.array([0, 1, d - 1, d, d + 1, bound - 1, bound - d, bound - d - 1])
    near = (np.arange(1, 2000, dtype=np.int64) * (bound // 2000) // d) * d
    values = np.concatenate(
        [edges[(edges >= 0) & (edges < bound)], near - 1, near, near + 1, np.arange(100_000)]
    ).astype(np.int64)
    values = values[(values >= 0) & (values < bound)]
    got = _floor_divide(values, d, bound, np.empty_like(values))
    assert np.array_equal(got, values // d)


def test_worker_processes_that_cannot_start_are_a_parameter_error(monkeypatch):
    """A script without the ``__main__`` guard breaks the forkserver's pool: the caller
    gets one ParameterError naming `workers` and the fix, not the pool's traceback."""
    from concurrent.futures.process import BrokenProcessPool

    from gatecal._common.validate import ParameterError
    from gatecal._engines import pool as _engine

    def broken(*args, **kwargs):
        raise BrokenProcessPool("a child process terminated abruptly")

    monkeypatch.setattr(_engine, "_FORK_HELPERS", False)
    monkeypatch.setattr(_engine, "_HELPER_THREADS", 0)
    monkeypatch.setattr(_engine, "PROCESS_MIN_CHUNKS", 1)
    monkeypatch.setattr(_engine, "_CALLER_WORKS", False)
    monkeypatch.setattr(_engine, "_process_pool", broken)
    with pytest.raises(ParameterError, match=r"`workers`.*guard, or use workers=1"):
        simulate_pass_counts(
            FORK_SUITE, "healthy", JudgeNoise.flip(0.05), n_runs=FORK_RUNS, rng=1, workers=2
        )
