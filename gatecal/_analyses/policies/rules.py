"""Gate policies on top of a suite: majority votes, repeated cases, reruns. Exact, with costs."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from gatecal._common.defaults import DEFAULT_SEED
from gatecal._common.validate import ParameterError, check_count, check_probability
from gatecal._engines.exact import GROUP_ABOVE, beta_nodes, grouped_pass_count_pmf, pass_count_pmfs
from gatecal._model.gates import Gate, as_gates
from gatecal._model.suite import BUILDS, JudgeNoise, Suite, beta_shape

__all__ = [
    "Policy",
    "PolicyComparisonRow",
    "PolicyRates",
    "PolicyReport",
    "PolicyRow",
    "PolicySample",
    "compare_policies",
    "majority_pass",
    "parse_policy",
    "policy_rates",
    "simulate_policy",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """How a CI run asks the judge and when it tries again.

    Attributes
    ----------
    majority : int
        Judge calls per check; the check reports pass if more than half say pass.
    tie : {'fail', 'pass'}
        What an even `majority` does on a tie (default: fail, the cautious side).
    call_icc : float
        Correlation between the `majority` calls on one check (a judge that errs on a
        hard case errs again). The majority's error then floors above zero.
    repeat, need : int
        Each case runs `repeat` times per attempt and passes if at least `need` of
        them pass (k-of-n per case). Default 1 of 1.
    rerun_failing : int
        Rerun only the failing cases, up to this many times; a case passes if any
        attempt passes.
    retry_rate : {'shared', 'fresh'}
        Under run-to-run correlation (``icc``), the judge's rate in a rerun of failing
        cases. ``'shared'`` (the default, conservative): the reruns happen inside the same
        CI run and share its drawn rate, so a bad night stays bad for the retry.
        ``'fresh'``: each rerun round is a run of its own and draws a new rate (all cases
        rerun in that round share it), which gives a lower false alarm. No effect without
        ``icc`` or without `rerun_failing`.
    rerun : int
        Rerun the whole suite up to this many times while the gate fails.
    confirm : int
        Confirm-on-fail: a judge call that says fail is asked again this many times and
        the majority of those calls decides (a tie fails). One call per check otherwise
        (no `majority`, no `call_icc`).
    """

    majority: int = 1
    tie: Literal["fail", "pass"] = "fail"
    call_icc: float = 0.0
    repeat: int = 1
    need: int = 1
    rerun_failing: int = 0
    rerun: int = 0
    confirm: int = 0
    retry_rate: Literal["shared", "fresh"] = "shared"

    def __post_init__(self) -> None:
        check_count("majority", self.majority, low=1, high=MAX_CALLS)
        if self.tie not in ("fail", "pass"):
            raise ParameterError("tie", "must be 'fail' or 'pass'", self.tie)
        icc = check_probability("call_icc", self.call_icc)
        if icc >= 1:
            raise ParameterError("call_icc", "must be in [0, 1)", icc)
        check_count("repeat", self.repeat, low=1, high=MAX_CALLS)
        check_count("need", self.need, low=1, high=self.repeat)
        check_count("rerun_failing", self.rerun_failing, low=0, high=MAX_CALLS)
        check_count("rerun", self.rerun, low=0, high=MAX_CALLS)
        check_count("confirm", self.confirm, low=0, high=MAX_CALLS)
        if self.retry_rate not in RETRY_RATES:
            raise ParameterError("retry_rate", "must be 'shared' or 'fresh'", self.retry_rate)
        if self.confirm and (self.majority > 1 or icc > 0):
            rule = "combines only with one judge call per check (no majority-M, no call_icc)"
            raise ParameterError("confirm", rule, self.confirm)

    def describe(self) -> str:
        """The policy in words."""
        parts = []
        if self.majority > 1:
            tie = f", ties {self.tie}" if self.majority % 2 == 0 else ""
            corr = f", calls correlated (icc {self.call_icc:g})" if self.call_icc else ""
            parts.append(f"majority of {self.majority} judge calls per check{tie}{corr}")
        if self.confirm:
            parts.append(f"a failing call re-asked {self.confirm}x, majority decides")
        if self.repeat > 1:
            parts.append(f"each case {self.need} of {self.repeat} runs")
        if self.rerun_failing:
            fresh = ", a fresh run rate per rerun" if self.retry_rate == "fresh" else ""
            parts.append(f"rerun failing cases up to {self.rerun_failing}x{fresh}")
        if self.rerun:
            parts.append(f"rerun the suite up to {self.rerun}x on failure")
        return "; ".join(parts) or "one judge call per check, no rerun"


#: What a rerun of failing cases draws under icc: its run's rate, or a fresh one.
RETRY_RATES = ("shared", "fresh")

#: The most judge calls, repeats or reruns a policy may ask for: each is a whole suite's
#: calls, so a thousand is already far beyond what a CI run affords, and the exact maths
#: stays at a fraction of a second (a typo like rerun-99999999999 ran for hours).
MAX_CALLS = 1000


def majority_pass(p: FloatArray, m: int, *, tie: str = "fail", icc: float = 0.0) -> FloatArray:
    """P(a majority of `m` calls says pass) when one call says pass with probability `p`.

    Independent calls: a binomial tail. Correlated calls (`icc` > 0): the number of
    pass votes is beta-binomial with mean ``m p`` and intra-check correlation `icc`.
    A `p` outside [0, 1] (NaN included) or an `m` that is not a whole number in
    [1, MAX_CALLS] is refused.
    """
    from scipy import stats  # deferred: `import gatecal` stays light

    m = check_count("m", m, low=1, high=MAX_CALLS)
    p = np.asarray(p, dtype=np.float64)
    if not np.all((p >= 0.0) & (p <= 1.0)):  # NaN fails both
        raise ParameterError("p", "must be probabilities in [0, 1]", p.tolist())
    if m == 1:
        return p
    votes = np.arange(m + 1)
    if icc == 0:
        pmf = np.asarray(stats.binom.pmf(votes[:, None], m, p.ravel()[None, :]))
    else:
        flat = np.clip(p.ravel(), 1e-300, 1.0 - 1e-16)  # beta-binomial needs 0 < p < 1
        pmf = np.asarray(stats.betabinom.pmf(votes[:, None], m, *beta_shape(flat, icc)))
        pmf[:, p.ravel() == 0.0] = (votes == 0)[:, None]
        pmf[:, p.ravel() == 1.0] = (votes == m)[:, None]
    win = (2 * votes > m).astype(float)
    if m % 2 == 0 and tie == "pass":
        win[m // 2] = 1.0
    return np.asarray((win @ pmf).reshape(p.shape))


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyRow:
    """One gate on one build under a policy.

    Attributes
    ----------
    build, gate, rule, k_min
        As in :class:`GateRow`.
    failure_probability : float
        P(the policy's CI run ends with the gate failing the build), exactly.
    single_run_failure_probability : float
        The same for one attempt (before any suite rerun).
    judge_calls : float
        Expected judge calls in one CI run of this build under this gate and policy.
    """

    build: str
    gate: str
    rule: str
    k_min: int
    failure_probability: float
    single_run_failure_probability: float
    judge_calls: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyRates:
    """False alarm, detection and judge-call cost of every gate under one policy."""

    policy: Policy
    noise: JudgeNoise
    rows: tuple[PolicyRow, ...]

    def row(self, build: str, gate: str) -> PolicyRow:
        """The row of `build` and the gate written as `gate`."""
        for r in self.rows:
            if r.build == build and r.gate == gate:
                return r
        raise ParameterError("gate", "must be one of the computed gates", gate)


def _case_try(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy, *, confirm: bool = False
) -> tuple[FloatArray, FloatArray]:
    """Per case, P(one try of it passes) and its expected judge calls, at `noise`'s rates.

    `confirm`: the caller computes confirm-on-fail (its degree in the run's rate is
    ``1 + confirm`` per check); other callers (plan_suite) refuse it."""
    _not_sequential(policy, "policies")  # a sequential gate is no attempt
    if policy.confirm and not confirm:
        raise ParameterError("policies", "must not use confirm-M here", f"confirm-{policy.confirm}")
    truth = suite.truth_matrix(build)
    judge = suite.judge_mask()
    code_ok = truth[:, ~judge].all(axis=1)
    first = noise.report_pass(suite, build)
    if policy.confirm:  # pass at once, or fail and win the majority of the re-asks
        check_pass = first + (1.0 - first) * majority_pass(first, policy.confirm)
    else:
        check_pass = majority_pass(first, policy.majority, tie=policy.tie, icc=policy.call_icc)
    q = np.prod(check_pass, axis=1) * code_ok
    if policy.repeat > 1:  # k-of-n over repeated runs of the case
        from scipy import stats

        q = stats.binom.sf(policy.need - 1, policy.repeat, q)
    if policy.confirm:  # a call that says fail costs `confirm` more
        per_try = policy.repeat * (1.0 + policy.confirm * (1.0 - first)).sum(axis=1)
    else:  # judge calls per case try
        per_try = np.full(q.shape, float(int(judge.sum()) * policy.majority * policy.repeat))
    return q, per_try


def _attempt(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy, *, confirm: bool = False
) -> tuple[FloatArray, FloatArray]:
    """Pass-count pmf of one attempt and its expected judge calls (given one run's rates).

    `confirm`: the caller computes confirm-on-fail (its degree in the run's rate is
    ``1 + confirm`` per check); other callers (plan_suite) refuse it. Every rerun of the
    failing cases has the same rates as the first try (``retry_rate='shared'``)."""
    q, per_try = _case_try(suite, build, noise, policy, confirm=confirm)
    fail = 1.0 - q
    tries = sum(fail**t for t in range(policy.rerun_failing + 1))  # expected tries per case
    return _final_pmf(1.0 - fail ** (policy.rerun_failing + 1)), np.array(
        float((per_try * tries).sum())
    )


def _final_pmf(q_final: FloatArray) -> FloatArray:
    """The pass-count pmf of cases that pass with probabilities `q_final`, independently."""
    if q_final.size > GROUP_ABOVE:  # per node of an icc mixture: no n^2 recursion
        return grouped_pass_count_pmf(q_final)
    return np.asarray(pass_count_pmfs(q_final[None, :])[0])


#: The most node combinations (nodes ** tries) times cases that a fresh rate per rerun of
#: failing cases is computed over: about ten seconds.
FRESH_RETRY_WORK = 50_000_000


def _fresh_retries(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy
) -> tuple[FloatArray, float]:
    """Pass-count pmf and expected judge calls of one attempt whose rerun rounds of failing
    cases each draw a fresh run rate (``retry_rate='fresh'``, ``noise.icc > 0``).

    Given the rates x_1..x_T of the T = 1 + rerun_failing rounds, cases are independent
    and case i fails every try with probability ``prod_t (1 - q_i(x_t))``; it is tried in
    round t if it failed rounds 1..t-1. Each P(K = k | x) is a polynomial of degree at
    most d = (judge verdicts per try of the suite) x (1 + confirm) in each x_t, so the
    product of T Gauss rules of d // 2 + 1 nodes (Jacobi matrix,
    :func:`gatecal._engines.exact.beta_rule`) integrates it exactly.
    """
    import itertools

    from gatecal._engines.exact import beta_rule

    a, b = noise.beta_parameters()
    n, tries = suite.n_cases, policy.rerun_failing + 1
    verdicts = int(suite.judge_mask().sum()) * n * policy.majority * policy.repeat
    nodes = verdicts * (1 + policy.confirm) // 2 + 1
    if nodes**tries * n > FRESH_RETRY_WORK:
        rule = (
            "with a fresh run rate per rerun of failing cases under icc is computed over "
            f"{nodes}^{tries} rate combinations x {n} cases, at most {FRESH_RETRY_WORK:,}: "
            "fewer reruns or cases, or `retry_rate` shared"
        )
        raise ParameterError("policies", rule, policy.describe())
    xs, ws = beta_rule(a, b, nodes)
    per_node = [_case_try(suite, build, noise.at(float(x)), policy, confirm=True) for x in xs]
    fails = np.stack([1.0 - q for q, _ in per_node])  # (nodes, cases)
    costs = np.stack([c for _, c in per_node])
    pmf = np.zeros(n + 1)
    calls = 0.0
    for combo in itertools.product(range(xs.size), repeat=tries - 1):  # the last: all at once
        weight = float(np.prod(ws[list(combo)]))
        reached = np.ones(n)  # P(case i is tried in this round | the rates so far)
        expected = np.zeros(n)
        for t in combo:
            expected += reached * costs[t]
            reached = reached * fails[t]
        last_expected = expected[None, :] + reached[None, :] * costs  # (nodes, cases)
        q_final = 1.0 - reached[None, :] * fails
        if n > GROUP_ABOVE:
            rows = np.stack([grouped_pass_count_pmf(q) for q in q_final])
        else:
            rows = pass_count_pmfs(q_final)
        pmf += weight * (ws @ rows)
        calls += weight * float(ws @ last_expected.sum(axis=1))
    return np.clip(pmf, 0.0, None), calls


def _not_sequential(policy: Policy, name: str = "policy") -> None:
    """Refuse a sequential gate where one attempt of a policy is computed."""
    from gatecal._analyses.policies.sequential import SequentialPolicy

    if isinstance(policy, SequentialPolicy):
        rule = (
            "must not name a sequential gate here (sprt-MAX, pocock-LOOKS, obf-LOOKS, "
            "evalue-MAX are for policies, plan and check)"
            if name == "policies"
            else "is a sequential gate: see gatecal.sequential_gate"
        )
        raise ParameterError(name, rule, policy.text)


def policy_rates(
    suite: Suite,
    noise: JudgeNoise,
    gates: str | Sequence[str] | Sequence[Gate],
    policy: Policy | None = None,
) -> PolicyRates:
    """Exact false alarm, detection and expected judge calls of each gate under `policy`.

    A majority vote and repeated cases change each check's or case's pass
    probability; rerunning failing cases gives a case up to ``1 + rerun_failing``
    tries (with ``noise.icc`` they share the run's drawn rate, the conservative model,
    unless ``policy.retry_rate`` is ``'fresh'``: then each rerun round draws its own, and
    the mixture is over the rates of every round, a product Gauss rule exact for the
    pmf's degree in each); rerunning the suite fails the build only if every attempt
    fails, each attempt an independent run (with ``noise.icc`` each attempt draws its own
    rate).
    """
    policy = Policy() if policy is None else policy
    _not_sequential(policy)
    rules = as_gates(gates)
    n = suite.n_cases
    rows = []
    if noise.run_correlated:  # one rule for both builds
        a, b = noise.beta_parameters()
        verdicts = int(suite.judge_mask().sum()) * n * policy.majority * policy.repeat
        degree = verdicts * (policy.rerun_failing + 1) * (1 + policy.confirm)
        xs, ws = beta_nodes(a, b, degree)
    for build in BUILDS:
        tails: list[tuple[float, float]] | None = None
        if noise.run_correlated and policy.rerun_failing and policy.retry_rate == "fresh":
            pmf, calls_one = _fresh_retries(suite, build, noise, policy)
        elif noise.run_correlated:
            if n > GROUP_ABOVE:  # every node at once, by groups of alike cases
                from gatecal._analyses.policies.nodes import node_tails

                k_mins = [gate.k_min(n) for gate in rules]
                tails, calls_one = node_tails(suite, build, noise, policy, xs, ws, k_mins)
            else:
                parts = [
                    _attempt(suite, build, noise.at(float(x)), policy, confirm=True) for x in xs
                ]
                pmf = np.clip(sum(w * p for w, (p, _) in zip(ws, parts, strict=True)), 0.0, None)
                calls_one = float(sum(w * c for w, (_, c) in zip(ws, parts, strict=True)))
        else:
            pmf, calls = _attempt(suite, build, noise, policy, confirm=True)
            calls_one = float(calls)
        for index, gate in enumerate(rules):
            k = gate.k_min(n)
            if tails is not None:
                lower, upper = tails[index]
            else:
                lower, upper = math.fsum(pmf[:k]), math.fsum(pmf[k:])
            single = lower / (lower + upper)
            attempts = sum(single**t for t in range(policy.rerun + 1))
            rows.append(
                PolicyRow(
                    build=build,
                    gate=gate.text,
                    rule=gate.describe(),
                    k_min=k,
                    failure_probability=single ** (policy.rerun + 1),
                    single_run_failure_probability=single,
                    judge_calls=calls_one * attempts,
                )
            )
    return PolicyRates(policy=policy, noise=noise, rows=tuple(rows))


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicySample:
    """Simulated CI runs under a policy: gate failures and judge calls.

    Attributes
    ----------
    n_runs : int
        Simulated CI runs.
    failures : dict of str to int
        Runs the policy ended with the gate failing the build, by gate text.
    judge_calls : dict of str to int
        Total judge calls over all runs, by gate text (a suite rerun depends on the gate).
    method : {'calls', 'counts'}
        How the runs were drawn: one random number per judge call, or by counts of alike
        cases (see :func:`simulate_policy`).
    """

    n_runs: int
    failures: dict[str, int]
    judge_calls: dict[str, int]
    method: Literal["calls", "counts"] = "calls"

    @classmethod
    def of_tallies(
        cls,
        n_runs: int,
        gates: Sequence[Gate],
        failures: npt.NDArray[np.int64],
        calls: npt.NDArray[np.int64],
        method: Literal["calls", "counts"] = "calls",
    ) -> PolicySample:
        """The sample from :func:`_tally`'s per-gate failures and judge calls."""
        return cls(
            n_runs=n_runs,
            failures={g.text: int(f) for g, f in zip(gates, failures, strict=True)},
            judge_calls={g.text: int(c) for g, c in zip(gates, calls, strict=True)},
            method=method,
        )


def simulate_policy(
    suite: Suite,
    build: str,
    noise: JudgeNoise,
    gates: str | Sequence[str] | Sequence[Gate],
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
    """
    from gatecal._analyses.policies.counts import COUNTS_ABOVE
    from gatecal._common.seeds import chunk_generator, root_seed

    policy = Policy() if policy is None else policy
    _not_sequential(policy)
    rules = as_gates(gates)
    total = check_count("n_runs", n_runs, low=1)
    if method not in ("auto", "calls", "counts"):
        raise ParameterError("method", "must be 'auto', 'calls' or 'counts'", method)
    fresh = noise.run_correlated and policy.rerun_failing and policy.retry_rate == "fresh"
    if method == "counts" and fresh:
        rule = "draws rerun rounds of failing cases on one rate: use 'calls' for a fresh rate"
        raise ParameterError("method", rule, method)
    if method == "counts" or (method == "auto" and suite.n_cases > COUNTS_ABOVE and not fresh):
        from gatecal._analyses.policies.counts import simulate_by_counts

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


def _tally(
    k: npt.NDArray[np.int64],
    attempt_calls: npt.NDArray[np.int64],
    k_mins: npt.NDArray[np.int64],
    failures: npt.NDArray[np.int64],
    calls: npt.NDArray[np.int64],
) -> None:
    """Add a chunk of simulated runs to each gate's failures and judge calls: `k` and
    `attempt_calls` per (run, attempt); a suite rerun stops at the first attempt that
    passes the gate."""
    attempts = k.shape[1]
    for g, k_min in enumerate(k_mins):
        passed = k >= k_min  # (runs, att)
        ci_pass = passed.any(axis=1)
        used = np.where(ci_pass, passed.argmax(axis=1) + 1, attempts)
        failures[g] += int(np.count_nonzero(~ci_pass))
        mask = np.arange(attempts)[None, :] < used[:, None]
        calls[g] += int((attempt_calls * mask).sum())


_POLICY_HELP = (
    "single, majority-M, repeat-K-of-N, pass^K, pass@K, confirm-M, rerun-failing-R, rerun-R, "
    "or several joined by '+' (majority-3+rerun-1); or one sequential gate: sprt-MAX, "
    "pocock-LOOKS, obf-LOOKS, evalue-MAX"
)


def parse_policy(
    text: str,
    *,
    tie: str = "fail",
    call_icc: float = 0.0,
    retry_rate: str = "shared",
    false_alarm: float = 0.05,
    detection: float = 0.8,
) -> Policy:
    """Read a policy: ``single``, ``majority-3``, ``repeat-2-of-3``, ``pass^3`` (all of 3
    repeats: ``repeat-3-of-3``), ``pass@3`` (any of 3: ``repeat-1-of-3``),
    ``confirm-2`` (a failing call asked twice more, majority decides), ``rerun-failing-1``,
    ``rerun-1``, or several joined by ``+`` (`retry_rate`: see :class:`Policy`); or one
    sequential gate
    (``sprt-5``, ``pocock-4``, ``obf-3``: a :class:`gatecal.SequentialPolicy` whose
    boundaries are searched for `false_alarm` and `detection`)."""
    from gatecal._analyses.policies.sequential import parse_sequential

    parts = [part.strip() for part in str(text).strip().lower().split("+")]
    sequential = [
        parse_sequential(part, false_alarm=false_alarm, detection=detection) for part in parts
    ]
    if any(sequential):
        if len(parts) > 1:
            rule = (
                "a sequential gate (sprt-MAX, pocock-LOOKS, obf-LOOKS, evalue-MAX) combines "
                "with no other"
            )
            raise ParameterError("policy", rule, text)
        found = sequential[0]
        assert found is not None
        return found
    fields: dict[str, int] = {}
    for part in parts:
        if part == "single":
            continue
        pieces = part.split("-")
        try:
            if part.startswith(("pass^", "pass@")) and len(pieces) == 1:
                count = int(part[5:])  # pass^K: all K repeats pass; pass@K: any of K
                fields["repeat"], fields["need"] = count, count if part[4] == "^" else 1
            elif pieces[0] == "confirm" and len(pieces) == 2:
                fields["confirm"] = int(pieces[1])
            elif pieces[0] == "majority" and len(pieces) == 2:
                fields["majority"] = int(pieces[1])
            elif pieces[:2] == ["rerun", "failing"] and len(pieces) == 3:
                fields["rerun_failing"] = int(pieces[2])
            elif pieces[0] == "rerun" and len(pieces) == 2:
                fields["rerun"] = int(pieces[1])
            elif pieces[0] == "repeat" and len(pieces) == 4 and pieces[2] == "of":
                fields["need"], fields["repeat"] = int(pieces[1]), int(pieces[3])
            else:
                raise ValueError(part)
        except ValueError:
            raise ParameterError("policy", f"must be {_POLICY_HELP}", text) from None
    try:
        return Policy(tie=tie, call_icc=call_icc, retry_rate=retry_rate, **fields)  # type: ignore[arg-type]
    except ParameterError as exc:
        raise ParameterError("policy", f"{exc.name} {exc.rule}", text) from None


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyComparisonRow:
    """One policy, build and gate: exact rates and cost, and the call-by-call simulation."""

    policy: str
    build: str
    gate: str
    rule: str
    k_min: int
    failure_probability: float
    judge_calls: float
    runs: int
    simulated_failures: int
    simulated_judge_calls: float
    interval_low: int
    interval_high: int
    consistent: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyReport:
    """Every policy's false alarm, detection and judge calls, exact and simulated.

    `simulation` says how the non-sequential policies' runs were drawn: ``"calls"`` (one
    random number per judge call) or ``"counts"`` (the calls of alike cases by counts,
    above 100 cases: see :func:`simulate_policy`)."""

    suite: Suite
    noise: JudgeNoise
    seed: int
    n_runs: int
    confidence_level: float
    policies: tuple[Policy, ...]
    rows: tuple[PolicyComparisonRow, ...]
    simulation: Literal["calls", "counts"] = "calls"

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame."""
        import dataclasses

        import pandas as pd  # deferred: `import gatecal` stays light

        return pd.DataFrame([dataclasses.asdict(r) for r in self.rows])


def compare_policies(
    suite: Suite,
    noise: JudgeNoise,
    gates: str | Sequence[str] | Sequence[Gate],
    policies: Sequence[Policy],
    *,
    n_runs: int = 20_000,
    rng: int = DEFAULT_SEED,
    confidence_level: float = 0.99,
    seed: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> PolicyReport:
    """:func:`policy_rates` for each policy, beside :func:`simulate_policy` with `n_runs` runs
    drawn from the root seed `rng` (`seed` is its deprecated old name).

    A sequential policy (:class:`gatecal.SequentialPolicy`) gets one row per build, not
    per gate (it gates the cumulative passing count with its own boundaries): a
    :class:`gatecal.SequentialComparisonRow`, exact by :func:`gatecal.sequential_gate`,
    beside `n_runs` sequences simulated verdict by verdict.

    `progress` is called with the runs of each simulated chunk (2 x `n_runs` per
    non-sequential policy; 0 when a policy's exact rates are done)."""
    from gatecal._common.intervals import binomial_interval
    from gatecal._common.seeds import renamed_seed

    rng = renamed_seed(rng, seed, "compare_policies")

    if not policies:
        raise ParameterError("policies", "must hold at least one policy", list(policies))
    level = check_probability("confidence_level", confidence_level)
    rows: list[PolicyComparisonRow] = []
    methods: set[str] = set()
    for policy in policies:
        from gatecal._analyses.policies.sequential import SequentialPolicy, sequential_rows

        if isinstance(policy, SequentialPolicy):  # runs until the gate on S_j decides
            rows += sequential_rows(suite, noise, policy, n_runs=n_runs, seed=rng, level=level)
            continue
        exact = policy_rates(suite, noise, gates, policy)
        if progress is not None:
            progress(0)
        samples = {
            b: simulate_policy(
                suite, b, noise, gates, policy, n_runs=n_runs, rng=rng, progress=progress
            )
            for b in BUILDS
        }
        methods.update(sample.method for sample in samples.values())
        for r in exact.rows:
            sample = samples[r.build]
            failures = sample.failures[r.gate]
            interval = binomial_interval(sample.n_runs, r.failure_probability, level)
            rows.append(
                PolicyComparisonRow(
                    policy=policy.describe(),
                    build=r.build,
                    gate=r.gate,
                    rule=r.rule,
                    k_min=r.k_min,
                    failure_probability=r.failure_probability,
                    judge_calls=r.judge_calls,
                    runs=sample.n_runs,
                    simulated_failures=failures,
                    simulated_judge_calls=sample.judge_calls[r.gate] / sample.n_runs,
                    interval_low=interval.low,
                    interval_high=interval.high,
                    consistent=failures in interval,
                )
            )
    return PolicyReport(
        suite=suite,
        noise=noise,
        seed=rng,
        n_runs=n_runs,
        confidence_level=level,
        policies=tuple(policies),
        rows=tuple(rows),
        simulation="counts" if "counts" in methods else "calls",
    )
