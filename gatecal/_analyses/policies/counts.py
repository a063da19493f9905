"""Policy runs simulated by counts: cases alike are drawn together, call by call in counts.

:func:`gatecal.simulate_policy` draws one random number per judge call up to
:data:`COUNTS_ABOVE` cases. Above it that is millions of numbers per CI run, so the runs
are drawn by counts instead, still from the judge calls and not from the exact engine's
per-case probabilities:

* Cases with the same true verdicts and the same judge rates form a group. Given a CI
  attempt's drawn flip rate (``icc``), the cases of a group are independent and alike,
  so only how many of them are in each state matters.
* The calls of one check are asked one after another: after t calls, the checks of a
  group that have v pass votes so far are one count, and how many of them get a pass on
  call t + 1 is one binomial draw (probability s; with ``call_icc`` the Polya urn
  ``(a + v) / (a + b + t)`` of the check's Beta-distributed latent rate). A majority,
  a tie rule and a confirm-on-fail are then read off the counts of votes.
* A case's checks thin its count check by check (a case passes a repeat only if every
  check does); the repeats of a case move counts of "repeats passed so far"; a failing
  case is tried again from the count of failing cases (sharing its attempt's rate); the
  gate sees the sum over groups per attempt, and the suite is rerun attempt by attempt.

The work per CI run depends on the groups and the policy (groups x checks x votes^2 x
repeats^2 binomial draws), not on the cases in a group: a suite of 50,000 alike cases
costs what one of 101 does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gatecal._model.arrays import Floats, Ints
from gatecal._model.suite import JudgeNoise, Suite

if TYPE_CHECKING:
    from gatecal._analyses.policies.rules import Policy, PolicySample
    from gatecal._model.gates import Gate

__all__ = ["COUNTS_ABOVE", "CaseGroups", "counts_chunk", "simulate_by_counts"]

#: ``simulate_policy(method="auto")`` draws call by call up to this many cases (the article's
#: 12 and every committed output) and by counts above it, where one random number per call
#: costs seconds (20,000 runs of majority-5 on 100 cases: 2 x 10^7 numbers per build).
COUNTS_ABOVE = 100
#: Counts held at once per chunk of runs: bounded memory at any policy.
_CHUNK_ENTRIES = 1 << 21


@dataclass(frozen=True, slots=True)
class CaseGroups:
    """The cases of one build in groups of alike cases.

    sizes : cases per group; code_ok : whether the group's code checks pass; truth :
    (groups, judge checks) true verdicts of its judge checks; report : (groups, judge
    checks) P(a call reports pass) at the noise's own rates (no icc draw).
    """

    sizes: Ints
    code_ok: npt.NDArray[np.bool_]
    truth: npt.NDArray[np.bool_]
    report: Floats

    @classmethod
    def of(cls, suite: Suite, build: str, noise: JudgeNoise) -> CaseGroups:
        truth = suite.truth_matrix(build)
        judge = suite.judge_mask()
        code_ok = truth[:, ~judge].all(axis=1)
        report = noise.report_pass(suite, build)
        key = np.column_stack([code_ok, truth[:, judge], report]).astype(np.float64)
        rows, first, sizes = np.unique(key, axis=0, return_index=True, return_counts=True)
        order = np.argsort(first)  # groups in the order their first case comes
        j = int(judge.sum())
        rows, sizes = rows[order], sizes[order]
        return cls(
            sizes=sizes.astype(np.int64),
            code_ok=rows[:, 0] > 0.5,
            truth=rows[:, 1 : 1 + j] > 0.5,
            report=np.ascontiguousarray(rows[:, 1 + j :]),
        )


def chunk_runs(policy_shape: tuple[int, int, int, int]) -> int:
    """Runs per chunk for a policy of (attempts, repeat, majority, confirm)."""
    attempts, rep, m, confirm = policy_shape
    return max(1, _CHUNK_ENTRIES // (attempts * (rep + 1) * (max(m, confirm) + 2)))


def counts_chunk(
    gen: np.random.Generator,
    runs: int,
    groups: CaseGroups,
    noise: JudgeNoise,
    policy: Policy,
) -> tuple[Ints, Ints]:
    """Passing cases and judge calls of every attempt of `runs` CI runs: two (runs,
    attempts) arrays, drawn by counts (see the module docstring)."""
    attempts, tries = policy.rerun + 1, policy.rerun_failing + 1
    lead = (runs, attempts)
    passing = np.zeros(lead, dtype=np.int64)
    calls = np.zeros(lead, dtype=np.int64)
    keep = 1.0 - noise.unparseable
    x = gen.beta(*noise.beta_parameters(), size=lead) if noise.run_correlated else None
    for g, size in enumerate(groups.sizes.tolist()):
        if x is not None:  # this attempt's rate: keep (1 - x) on a passing check, keep x else
            truth = groups.truth[g]
            s = np.where(truth, keep * (1.0 - x[..., None]), keep * x[..., None])
        else:
            s = np.broadcast_to(groups.report[g], (*lead, groups.report.shape[1]))
        left = np.full(lead, size, dtype=np.int64)  # cases of the group not passed yet
        for _ in range(tries):
            won, spent = _one_try(gen, left, s, bool(groups.code_ok[g]), policy)
            passing += won
            calls += spent
            left = left - won
    return passing, calls


def _one_try(
    gen: np.random.Generator, cases: Ints, s: Floats, code_ok: bool, policy: Policy
) -> tuple[Ints, Ints]:
    """One try of `cases` alike cases (shape `lead`): how many pass, and the calls made.

    The cases' repeats: ``have[..., r]`` counts cases with r passing repeats so far; each
    repeat thins every such count by the checks. A case passes with ``need`` of them."""
    j = s.shape[-1]
    rep = policy.repeat
    calls = np.zeros(cases.shape, dtype=np.int64)
    if not code_ok and not policy.confirm:  # a failing code check: no judge call can save it
        return np.zeros_like(cases), cases * (j * policy.majority * rep)
    have = np.zeros((*cases.shape, rep + 1), dtype=np.int64)
    have[..., 0] = cases
    for r in range(rep):
        units = have[..., : r + 1]  # cases with 0..r passing repeats so far
        ok, spent = _units_passing(gen, units, s[..., None, :], policy)
        calls += spent.sum(axis=-1)
        have[..., : r + 1] -= ok
        have[..., 1 : r + 2] += ok
    won = have[..., policy.need :].sum(axis=-1)
    if not policy.confirm:
        calls = cases * (j * policy.majority * rep)
    return (won if code_ok else np.zeros_like(won)), calls


def _units_passing(
    gen: np.random.Generator, units: Ints, s: Floats, policy: Policy
) -> tuple[Ints, Ints]:
    """Of `units` repeats of alike cases, how many pass every judge check, and (with
    confirm-on-fail) the calls they made: every check is asked whatever the others say."""
    still = units
    calls = np.zeros(units.shape, dtype=np.int64)
    for c in range(s.shape[-1]):
        rate = s[..., c]
        if policy.confirm:
            said = gen.binomial(still, rate)  # the first call says pass
            asked = still - said  # said fail: re-asked `confirm` times, majority decides
            saved = _majority(gen, asked, rate, policy.confirm, "fail", 0.0)
            out = units - still  # repeats failed already: their calls are made all the same
            out_said = gen.binomial(out, rate)
            calls += units + policy.confirm * (asked + out - out_said)
            still = said + saved
        else:
            still = _majority(gen, still, rate, policy.majority, policy.tie, policy.call_icc)
    return still, calls


def _majority(
    gen: np.random.Generator, checks: Ints, s: Floats, m: int, tie: str, icc: float
) -> Ints:
    """Of `checks` alike checks, how many a majority of `m` calls passes.

    ``votes[..., v]`` counts checks with v pass votes so far; call t + 1 passes each of them
    with probability s (independent calls) or ``(a + v) / (a + b + t)`` (correlated calls:
    the Polya urn of a Beta(a, b) latent rate with mean s and correlation `icc`)."""
    if m == 1 and icc == 0:
        return np.asarray(gen.binomial(checks, s), dtype=np.int64)
    votes = np.zeros((*checks.shape, m + 1), dtype=np.int64)
    votes[..., 0] = checks
    v = np.arange(m + 1, dtype=np.float64)
    scale = (1.0 - icc) / icc if icc > 0 else 0.0
    for t in range(m):
        if icc > 0:
            p = (s[..., None] * scale + v[: t + 1]) / (scale + t)
        else:
            p = np.broadcast_to(s[..., None], (*s.shape, t + 1))
        hits = gen.binomial(votes[..., : t + 1], np.clip(p, 0.0, 1.0))
        votes[..., : t + 1] -= hits
        votes[..., 1 : t + 2] += hits
    win = 2 * v > m
    if m % 2 == 0 and tie == "pass":
        win |= 2 * v == m
    return np.asarray(votes[..., win].sum(axis=-1), dtype=np.int64)


def simulate_by_counts(
    suite: Suite,
    build: str,
    noise: JudgeNoise,
    rules: Sequence[Gate],
    policy: Policy,
    *,
    total: int,
    rng: int | None,
    progress: Callable[[int], object] | None,
) -> PolicySample:
    """:func:`gatecal.simulate_policy` with ``method="counts"``: the same gate and rerun
    logic (``policies._tally``) on passing counts and calls drawn here."""
    from gatecal._analyses.policies.rules import PolicySample, _tally
    from gatecal._common.seeds import chunk_generator, root_seed

    root = root_seed(rng)
    groups = CaseGroups.of(suite, build, noise)
    attempts = policy.rerun + 1
    chunk = chunk_runs((attempts, policy.repeat, policy.majority, policy.confirm))
    k_mins = np.array([g.k_min(suite.n_cases) for g in rules])
    failures = np.zeros(len(rules), dtype=np.int64)
    calls = np.zeros(len(rules), dtype=np.int64)
    for index, start in enumerate(range(0, total, chunk)):
        runs = min(chunk, total - start)
        k, attempt_calls = counts_chunk(chunk_generator(root, index), runs, groups, noise, policy)
        _tally(k, attempt_calls, k_mins, failures, calls)
        if progress is not None:
            progress(runs)
    return PolicySample.of_tallies(total, rules, failures, calls, method="counts")
