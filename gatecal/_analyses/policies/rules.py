"""Gate policies on top of a suite: majority votes, repeated cases, reruns. Exact, with costs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt

from gatecal._common.contracts import json_header
from gatecal._common.display import Displayed
from gatecal._common.validate import ParameterError, check_count, check_probability
from gatecal._engines.exact import GROUP_ABOVE, grouped_pass_count_pmf, pass_count_pmfs
from gatecal._model.arrays import Floats
from gatecal._model.gates import Gate
from gatecal._model.sequential import spellings
from gatecal._model.suite import JudgeNoise, Suite, beta_shape

__all__ = [
    "Policy",
    "PolicyComparisonRow",
    "PolicyRates",
    "PolicyReport",
    "PolicyRow",
    "PolicySample",
    "attempt_pmf",
    "majority_pass",
    "noise_fields",
]


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
    #: A sequential gate (runs until its boundaries decide) rather than one attempt's rule.
    sequential: ClassVar[bool] = False

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


def majority_pass(p: Floats, m: int, *, tie: str = "fail", icc: float = 0.0) -> Floats:
    """P(a majority of `m` calls says pass) when one call says pass with probability `p`.

    Independent calls: a binomial tail. Correlated calls (`icc` > 0): the number of
    pass votes is beta-binomial with mean ``m p`` and intra-check correlation `icc`.
    A `p` outside [0, 1] (NaN included) or an `m` that is not a whole number in
    [1, MAX_CALLS] is refused.

    Parameters
    ----------
    p : array_like of float
        One call's probability of saying pass, each in [0, 1].
    m : int
        The calls per check, a whole number in [1, 1000].
    tie : {"fail", "pass"}, default "fail"
        What a tie of an even `m` decides.
    icc : float, default 0.0
        The correlation between the calls on one check; 0 for independent calls, else in
        (0, 1).

    Returns
    -------
    ndarray of float
        P(the majority says pass), in the shape of `p`.

    Raises
    ------
    ParameterError
        If a `p` lies outside [0, 1] (NaN included) or `m` is out of range.
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


def refuse_sequential(policy: Policy, name: str = "policy") -> None:
    """Refuse a sequential gate where one attempt of a policy is computed."""
    if policy.sequential:
        rule = (
            f"must not name a sequential gate here ({spellings('and')} are for policies, plan "
            "and check)"
            if name == "policies"
            else "is a sequential gate: see gatecal.sequential_gate"
        )
        raise ParameterError(name, rule, getattr(policy, "text", str(policy)))


def refuse_spread_across_runs(noise: JudgeNoise, policy: Policy, name: str = "policies") -> None:
    """Refuse a policy whose CI run asks the same suite more than once (a rerun of the whole
    suite, a sequential gate) when cases spread: its rates depend on which suite was drawn
    in a way one case's average does not carry."""
    if noise.case_spread > 0 and (policy.rerun or policy.sequential):
        rule = (
            "reruns the whole suite on the same cases, so with a case spread its rates depend "
            "on which suite was drawn: use rerun-failing-N or majority-M, or no case spread"
        )
        raise ParameterError(name, rule, getattr(policy, "text", policy.describe()))
    if noise.case_spread > 0 and policy.call_icc > 0:
        rule = "must not be combined with a case spread (each case's rate already varies)"
        raise ParameterError("call_icc", rule, policy.call_icc)


def case_outcomes(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy, *, confirm: bool = False
) -> tuple[Floats, Floats]:
    """Per case, P(it passes one attempt: one of its ``1 + rerun_failing`` tries passes) and
    its expected judge calls in that attempt.

    When cases spread (``noise.case_spread > 0``) both are averaged over suites drawn from
    the spread: a case's votes, repeats and reruns all ask at the case's one rate, so each
    is a polynomial in that rate of degree at most (judge checks) x (calls per check) x
    repeats x tries, and :meth:`JudgeNoise.over_cases` integrates it exactly.
    """
    tries_max = policy.rerun_failing + 1
    if noise.case_spread > 0:
        refuse_spread_across_runs(noise, policy)
        j = int(suite.judge_mask().sum())
        degree = j * policy.majority * (1 + policy.confirm) * policy.repeat * tries_max
        q_sum: Floats = np.zeros(suite.n_cases)
        calls_sum: Floats = np.zeros(suite.n_cases)
        for weight, plain in noise.over_cases(suite, degree):
            q, calls = case_outcomes(suite, build, plain, policy, confirm=confirm)
            q_sum += weight * q
            calls_sum += weight * calls
        return np.clip(q_sum, 0.0, 1.0), calls_sum
    q, per_try = _case_try(suite, build, noise, policy, confirm=confirm)
    fail = 1.0 - q
    tries = sum(fail**t for t in range(tries_max))  # expected tries per case
    return 1.0 - fail**tries_max, per_try * tries


def _case_try(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy, *, confirm: bool = False
) -> tuple[Floats, Floats]:
    """Per case, P(one try of it passes) and its expected judge calls, at `noise`'s rates.

    `confirm`: the caller computes confirm-on-fail (its degree in the run's rate is
    ``1 + confirm`` per check); other callers (plan_suite) refuse it."""
    refuse_sequential(policy, "policies")  # a sequential gate is no attempt
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


def attempt_pmf(
    suite: Suite, build: str, noise: JudgeNoise, policy: Policy, *, confirm: bool = False
) -> tuple[Floats, Floats]:
    """Pass-count pmf of one attempt and its expected judge calls (given one run's rates).

    `confirm`: the caller computes confirm-on-fail (its degree in the run's rate is
    ``1 + confirm`` per check); other callers (plan_suite) refuse it. Every rerun of the
    failing cases has the same rates as the first try (``retry_rate='shared'``); when cases
    spread, the average over suites drawn from the spread (:func:`case_outcomes`)."""
    q_final, calls = case_outcomes(suite, build, noise, policy, confirm=confirm)
    return _final_pmf(q_final), np.array(float(calls.sum()))


def _final_pmf(q_final: Floats) -> Floats:
    """The pass-count pmf of cases that pass with probabilities `q_final`, independently."""
    if q_final.size > GROUP_ABOVE:  # per node of an icc mixture: no n^2 recursion
        return grouped_pass_count_pmf(q_final)
    return np.asarray(pass_count_pmfs(q_final[None, :])[0])


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
    #: with a case spread: the 10th and 90th percentiles of one drawn suite's own
    #: `failure_probability` (which is their average); None otherwise
    one_suite_low: float | None = None
    one_suite_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row's columns, as the JSON and the CSV hold them (the percentiles of one
        drawn suite only with a case spread)."""
        row = asdict(self)
        if row["one_suite_low"] is None:
            del row["one_suite_low"], row["one_suite_high"]
        return row


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PolicyReport(Displayed):
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

    _renderer: ClassVar[str] = "gatecal._render.policies"

    def summary(self) -> str:
        """How many policies and rows, on what suite, with how many runs."""
        return (
            f"{len(self.policies)} policies x {len(self.rows)} rows on a "
            f"{self.suite.n_cases}-case suite, {self.n_runs:,} runs each"
        )

    def row_dicts(self) -> list[dict[str, Any]]:
        """Each row's fields (a sequential row has more), as the JSON and the CSV hold them."""
        return [r.to_dict() for r in self.rows]

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame."""
        import pandas as pd  # deferred: `import gatecal` stays light

        return pd.DataFrame(self.row_dicts())

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``gatecal.policies``, its header first."""
        return {
            **json_header("policies"),
            "seed": self.seed,
            "runs": self.n_runs,
            "cases": self.suite.n_cases,
            **noise_fields(self.noise),
            "confidence_level": self.confidence_level,
            "simulation": self.simulation,
            "rows": self.row_dicts(),
        }


def noise_fields(noise: JudgeNoise) -> dict[str, Any]:
    """The judge noise as the ``plan`` and ``policies`` JSON spell it (``flip`` is fnr)."""
    return {
        "flip": noise.fnr,
        "fpr": noise.fpr,
        "unparseable": noise.unparseable,
        "icc": noise.icc,
        "case_spread": noise.case_spread,
        "systematic": noise.systematic,
    }
