"""A policy's CI runs simulated judge call by judge call, or by counts of alike cases:
the check on :func:`gatecal.policy_rates`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from gatecal._analyses.policies.counts import COUNTS_ABOVE, simulate_by_counts
from gatecal._analyses.policies.rules import (
    Policy,
    PolicySample,
    _tally,
    refuse_sequential,
    refuse_spread_across_runs,
)
from gatecal._common.docstrings import shared_docs
from gatecal._common.seeds import chunk_generator, root_seed
from gatecal._common.validate import ParameterError, check_count
from gatecal._model.gates import GateLike, as_gates
from gatecal._model.suite import JudgeNoise, Suite, beta_shape

__all__ = ["simulate_policy"]


@shared_docs
def simulate_policy(
    suite: Suite,
    build: str,
    noise: JudgeNoise,
    gates: GateLike | Sequence[GateLike],
    policy: Policy | None = None,
    *,
    n_runs: int,
    rng: int | None = None,
    method: Literal["auto", "calls", "counts"] = "auto",
    progress: Callable[[int], object] | None = None,
) -> PolicySample:
    """Simulate CI runs under `policy` judge call by judge call (the check on
    :func:`policy_rates`).

    Every judge call is drawn: each vote of a majority, each repeat of a case, each
    retry of a failing case and each rerun of the suite; with ``noise.icc`` each
    attempt draws its own flip rate (and each rerun round of failing cases too, with
    ``policy.retry_rate='fresh'``), with ``policy.call_icc`` each check its own
    latent pass rate for its votes. Runs are cut into chunks with spawned streams.

    `method`: ``"calls"`` draws one random number per call; ``"counts"`` draws the same
    calls by counts of alike cases (one binomial draw per count of checks with the same
    votes so far: gatecal/_analyses/policies/counts.py), so its cost does not grow with the
    cases of a group; ``"auto"`` (default) is ``"calls"`` up to
    :data:`~gatecal._analyses.policies.counts.COUNTS_ABOVE` (100) cases and ``"counts"``
    above (a fresh rate per rerun round of failing cases is drawn call by call only).
    Both are independent of the exact engine; a seed gives the same sample with the same
    method. `progress` is called with the runs of each finished chunk.

    Parameters
    ----------
    %(suite_build_noise)s
    gates : str, Gate or sequence of them
        The gates to evaluate, as :func:`as_gates` reads them.
    policy : Policy, optional
        How the CI run asks the judge and retries; default one call per check, no retry.
        Not a sequential policy (see :func:`simulate_sequential`).
    n_runs : int
        Simulated CI runs, at least 1.
    rng : int, optional
        The root seed; None draws a fresh one.
    method : {"auto", "calls", "counts"}, default "auto"
        How the calls are drawn, as described above.
    progress : callable, optional
        Called with the runs of each finished chunk.

    Returns
    -------
    PolicySample
        The runs each gate failed, the judge calls made, and the method used.

    Raises
    ------
    ParameterError
        If `policy` is sequential, `n_runs` is below 1, `method` is unknown, or
        ``"counts"`` is asked with a fresh rate per rerun round.
    """
    policy = Policy() if policy is None else policy
    refuse_sequential(policy)
    refuse_spread_across_runs(noise, policy)
    rules = as_gates(gates)
    total = check_count("n_runs", n_runs, low=1)
    if method not in ("auto", "calls", "counts"):
        raise ParameterError("method", "must be 'auto', 'calls' or 'counts'", method)
    fresh = noise.run_correlated and policy.rerun_failing and policy.retry_rate == "fresh"
    if method == "counts" and fresh:
        rule = "draws rerun rounds of failing cases on one rate: use 'calls' for a fresh rate"
        raise ParameterError("method", rule, method)
    if method == "counts" and noise.case_spread > 0:
        rule = "draws alike cases together: use 'calls' when cases spread (each draws its rate)"
        raise ParameterError("method", rule, method)
    spread = noise.case_spread > 0
    if method == "counts" or (
        method == "auto" and suite.n_cases > COUNTS_ABOVE and not fresh and not spread
    ):
        return simulate_by_counts(
            suite, build, noise, rules, policy, total=total, rng=rng, progress=progress
        )
    root = root_seed(rng)
    truth = suite.truth_matrix(build)
    judge = suite.judge_mask()
    code_ok = np.asarray(truth[:, ~judge].all(axis=1), dtype=bool)
    n, j = suite.n_cases, int(judge.sum())
    attempts, tries = policy.rerun + 1, policy.rerun_failing + 1
    m, rep = policy.majority, policy.repeat
    per_run = attempts * tries * n * rep * max(j, 1) * max(m, 1 + policy.confirm)
    chunk = max(1, (1 << 21) // per_run)
    k_mins = np.array([g.k_min(n) for g in rules])
    failures = np.zeros(len(rules), dtype=np.int64)
    calls = np.zeros(len(rules), dtype=np.int64)
    for index, start in enumerate(range(0, total, chunk)):
        gen = chunk_generator(root, index)
        runs = min(chunk, total - start)
        if noise.run_correlated:  # one flip rate per attempt of each run (and per try: fresh)
            fresh = policy.retry_rate == "fresh"
            x = gen.beta(*noise.beta_parameters(), size=(runs, attempts, tries if fresh else 1))
            keep = 1.0 - noise.unparseable
            truth_j = truth[:, judge]
            s = np.where(truth_j, keep * (1.0 - x[..., None, None]), keep * x[..., None, None])
            s = s[:, :, :, :, None, :]  # (runs, attempts, tries or 1, n, 1, j)
        elif spread:  # each run a suite drawn afresh: each case its rate, kept in every call
            s = noise.drawn_report_pass(gen, suite, build, runs)[:, None, None, :, None, :]
        else:
            s = noise.report_pass(suite, build)[None, None, None, :, None, :]
        shape = (runs, attempts, tries, n, rep, j)
        if policy.call_icc > 0:
            s_full = np.clip(np.broadcast_to(s, shape), 1e-12, 1.0 - 1e-12)
            s = gen.beta(*beta_shape(s_full, policy.call_icc))
        if policy.confirm:  # one call; a fail is re-asked `confirm` times, majority decides
            said = gen.random(shape) < s
            again = (gen.random((*shape, policy.confirm)) < s[..., None]).sum(axis=-1)
            check_pass = said | (2 * again > policy.confirm)
            try_calls = (1 + policy.confirm * ~said).sum(axis=(-1, -2))  # (runs, att, tries, n)
        else:
            votes = (gen.random((*shape, m)) < s[..., None]).sum(axis=-1)
            check_pass = 2 * votes > m
            if m % 2 == 0 and policy.tie == "pass":
                check_pass |= 2 * votes == m
        run_pass = check_pass.all(axis=-1) & code_ok[:, None]  # (runs, att, tries, n, rep)
        try_pass = run_pass.sum(axis=-1) >= policy.need  # (runs, att, tries, n)
        case_pass = try_pass.any(axis=2)  # (runs, att, n)
        first = np.where(try_pass.any(axis=2), try_pass.argmax(axis=2), tries - 1)
        if policy.confirm:  # the calls of the tries each case made
            made = np.arange(tries)[None, None, :, None] <= first[:, :, None, :]
            attempt_calls = (try_calls * made).sum(axis=(2, 3))
        else:
            attempt_calls = ((first + 1).sum(axis=-1)) * j * m * rep  # (runs, att)
        k = case_pass.sum(axis=-1)  # (runs, att)
        _tally(k, attempt_calls, k_mins, failures, calls)
        if progress is not None:
            progress(runs)
    return PolicySample.of_tallies(total, rules, failures, calls)
