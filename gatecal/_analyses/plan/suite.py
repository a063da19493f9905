"""Planning: the smallest suite whose gate meets a false-alarm and a detection target."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gatecal._analyses.plan._search import (
    SuitePlan,
    SuitePlans,
    _case_probabilities,
    _largest_pmf,
    _RulesBySize,
    _suite_pmfs,
    plan_from_pmfs,
)
from gatecal._analyses.plan.cases import (
    CASES_DIFFER_LIMIT,
    CASES_DIFFER_MAX_CASES,
    plan_cases_differ,
)
from gatecal._analyses.plan.sequential import (
    SEQUENTIAL_MAX_CASES,
    SEQUENTIAL_MAX_CASES_LIMIT,
    plan_sequential,
)
from gatecal._analyses.policies.rules import Policy, attempt_pmf
from gatecal._analyses.policies.sequential import SequentialPolicy
from gatecal._common.validate import ParameterError, check_count, check_instance, check_probability
from gatecal._model.arrays import Floats
from gatecal._model.regression import Regression, RegressionLike, as_regression
from gatecal._model.suite import JudgeNoise, Suite
from gatecal._model.targets import Targets

__all__ = ["cases_needed", "plan_suite"]


def plan_suite(
    *,
    noise: JudgeNoise,
    regression: RegressionLike,
    false_alarm: float = 0.05,
    detection: float = 0.95,
    judge_checks: int = 2,
    code_checks: int = 1,
    policies: Sequence[Policy] | None = None,
    max_cases: int | None = None,
    min_cases: int = 1,
) -> SuitePlans:
    """The smallest number of cases, and its gate, meeting both targets, by exact search.

    Cases have the article's shape (`judge_checks` judge checks and `code_checks`
    code checks each); the regression makes ``regression.failing(n)`` cases fail a
    code check (a judge check if there are none). For every n from 1 up, the gate
    with the largest ``k_min`` whose false alarm is at most `false_alarm` is the most
    sensitive admissible one; the first n where it also detects the regression at
    least `detection` of the time is the plan. The targets are not monotone in n
    (189 cases can work where 190 do not), so a bisection would be wrong: every n is
    screened in turn by a cheap necessary condition (:func:`_screen`: regularized
    incomplete beta bounds with a safety margin, vectorised over thousands of sizes),
    and each size that passes it is decided by the exact computation. A size that
    fails the screen cannot meet the targets, so the first exact success is the
    smallest feasible size, as if every size had been computed exactly.

    Parameters
    ----------
    noise : JudgeNoise
        The judge's error rates (symmetric or asymmetric, unparseable share, icc, how
        much cases differ).
    regression : Regression or str
        See :func:`parse_regression`.
    false_alarm, detection : float
        Targets: P(gate fails a healthy build) <= false_alarm, P(gate fails the
        regressed build) >= detection.
    judge_checks, code_checks : int, default 2 and 1
        Judge checks and code checks per case, each at least 0 and not both 0 (at least
        one judge check with a sequential policy).
    policies : sequence of Policy, optional
        Default: one call per check; a majority of 3; a rerun of the suite. A sequential
        gate (:class:`gatecal.SequentialPolicy`, ``sprt-5``) gets a
        :class:`gatecal.SequentialSuitePlan`: the smallest suite at which its boundaries,
        searched for these targets (not the policy's own), meet both, with its expected
        runs and judge calls until it stops (:func:`gatecal._analyses.plan.sequential.
        plan_sequential`); it tries up to `max_cases` cases (at most 5,000), or 100 without.
        ``limits`` of the result says how far each sequential search went.
    max_cases, min_cases : int
        Largest and smallest suite to try, at most 2,000,000. Without `max_cases` there is
        no cap when runs are independent: the search goes on until a size works, or until
        no larger size can (proved by :func:`_never_after`), with a safety stop at
        2,000,000 cases (then ``max_cases`` of the result says so); with run-level correlation
        (``noise.icc > 0``) noise does not average out as the suite grows, and the
        search stops at :data:`ICC_MAX_CASES`. When cases differ (``noise.case_spread``,
        ``noise.systematic``) each size is its own exact Poisson-binomial: the search
        stops at 1,000 cases, and `max_cases` may be at most 2,000. A regression of a
        number of cases starts the search at that many (a smaller suite cannot hold it).

    Examples
    --------
    >>> import gatecal
    >>> plans = gatecal.plan_suite(noise=gatecal.JudgeNoise(fnr=0.08, fpr=0.08), regression="0.25")
    >>> best = plans.recommended
    >>> best.cases, best.k_min, f"{best.false_alarm:.4f}", f"{best.detection:.4f}"
    (26, 19, '0.0364', '0.9579')
    """
    check_instance("noise", noise, JudgeNoise, "a gatecal.JudgeNoise")
    reg = as_regression(regression)
    alpha = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    j = check_count("judge_checks", judge_checks, low=0)
    c = check_count("code_checks", code_checks, low=0)
    if j + c == 0:
        raise ParameterError("judge_checks", "and `code_checks` can't both be 0", 0)
    if max_cases is None:
        top = ICC_MAX_CASES if noise.run_correlated else None
        top = CASES_DIFFER_MAX_CASES if noise.cases_differ else top
    elif noise.cases_differ:  # each size its own exact pmf: a search past this takes minutes
        top = check_count("max_cases", max_cases, low=1)
        if top > CASES_DIFFER_LIMIT:
            rule = f"must be at most {CASES_DIFFER_LIMIT:,} when cases differ"
            raise ParameterError("max_cases", rule, max_cases)
    else:  # (each size tried costs a pmf of that many cases: a typo must not run for days)
        top = check_count("max_cases", max_cases, low=1, high=_UNCAPPED_LIMIT)
    bottom = check_count("min_cases", min_cases, low=1, high=top or _UNCAPPED_LIMIT)
    chosen = (
        tuple(policies) if policies is not None else (Policy(), Policy(majority=3), Policy(rerun=1))
    )
    for policy in chosen:
        if noise.cases_differ and is_sequential(policy):
            rule = (
                "must not hold a sequential gate when cases differ (its plan assumes one rate "
                "for every case; gatecal.compare_policies computes it on a suite)"
            )
            raise ParameterError("policies", rule, getattr(policy, "text", str(policy)))
        if noise.run_correlated and policy.rerun_failing and policy.retry_rate == "fresh":
            rule = (
                "must not use a fresh run rate per rerun of failing cases under icc here "
                "(plans use the shared rate; gatecal.policy_rates computes a fresh one)"
            )
            raise ParameterError("policies", rule, policy.describe())
    plans: list[SuitePlan | None] = []
    limits: list[int | None] = []
    searched = top
    for policy in chosen:
        if is_sequential(policy):  # runs until its gate decides: its own search
            plans.append(
                _sequential_plan(policy, noise, reg, alpha, power, j, c, bottom, max_cases)
            )
            limits.append(_sequential_top(max_cases))
            continue
        limits.append(None)
        if noise.cases_differ:  # each size its own rates: computed in turn
            start = max(bottom, reg.count or 1)
            assert top is not None  # (capped above)
            sizes = range(start, top + 1)
            plans.append(plan_cases_differ(noise, policy, reg, alpha, power, j, c, sizes))
            continue
        per_case = j * policy.majority * policy.repeat * (policy.rerun_failing + 1)
        rules = _RulesBySize(noise, policy, j, c, per_case)
        # With icc, the screen and the runs of sizes need only know that the count is a
        # mixture (more than one node); each size's exact plan takes its own rule.
        mixed = noise.run_correlated and per_case > 0
        q_pass, q_fail, _, ws = _case_probabilities(noise, policy, j, c, 2) if mixed else rules(0)
        targets = _Targets(alpha=alpha, power=power, attempts=policy.rerun + 1)
        bounds = _Bounds.of(noise, policy, j, c) if noise.run_correlated else None
        found: SuitePlan | None = None
        start, block = bottom, _FIRST_BLOCK
        if reg.count is not None:  # fewer cases than the regression's: none can hold it
            start = max(start, reg.count)
        last = _UNCAPPED_LIMIT if top is None else top
        if start > last and top is None:  # as if every size had been tried up to the stop
            searched = _UNCAPPED_LIMIT
        while found is None and start <= last:
            stop = min(last, start + block - 1)
            ns = np.arange(start, stop + 1, dtype=np.int64)
            f = _failing_counts(reg, ns)
            if len(ws) == 1:  # whole runs of sizes too small to tell the builds apart
                kept = _shift_bound_allows(ns, f, float(q_pass[0]), targets)
                ns, f = ns[kept], f[kept]
            maybe = _screen(ns, f, q_pass, q_fail, ws, targets, bounds)
            for n in ns[maybe].tolist():
                found = _exact_plan(int(n), policy, reg, *rules(int(n)), targets)
                if found is not None:
                    break
            if found is None and top is None and _never_after(reg, stop, q_pass, q_fail, targets):
                break
            if found is None and stop == _UNCAPPED_LIMIT and top is None:  # the safety stop
                searched = _UNCAPPED_LIMIT
            start, block = stop + 1, 2 * block
        plans.append(found)
    return SuitePlans(
        noise=noise,
        regression=reg,
        targets=Targets(false_alarm=alpha, detection=power),
        judge_checks=j,
        code_checks=c,
        max_cases=searched,
        policies=chosen,
        plans=tuple(plans),
        limits=tuple(limits),
    )


def is_sequential(policy: Policy) -> bool:
    """Whether `policy` is a sequential gate (it runs until its boundaries decide)."""
    return isinstance(policy, SequentialPolicy)


def _sequential_top(max_cases: int | None) -> int:
    if max_cases is None:
        return SEQUENTIAL_MAX_CASES
    if max_cases > SEQUENTIAL_MAX_CASES_LIMIT:
        rule = (
            f"must be at most {SEQUENTIAL_MAX_CASES_LIMIT:,} with a sequential policy (every "
            "size tried is a boundary search)"
        )
        raise ParameterError("max_cases", rule, max_cases)
    return max_cases


def _sequential_plan(
    policy: Policy,
    noise: JudgeNoise,
    reg: Regression,
    alpha: float,
    power: float,
    j: int,
    c: int,
    bottom: int,
    max_cases: int | None,
) -> SuitePlan | None:
    """A sequential policy's plan (:func:`gatecal._analyses.plan.sequential.plan_sequential`)."""
    assert isinstance(policy, SequentialPolicy)
    if j == 0:
        raise ParameterError("judge_checks", "must be at least 1 with a sequential policy", j)
    return plan_sequential(
        policy,
        noise,
        reg,
        false_alarm=alpha,
        detection=power,
        judge_checks=j,
        code_checks=c,
        start=max(bottom, reg.count or 1),
        top=_sequential_top(max_cases),
    )


#: Without a cap, correlated runs (icc > 0) are searched up to this many cases.
ICC_MAX_CASES = 5000
#: Without a cap, independent runs are searched at most this far (screening a million
#: sizes takes seconds; a 1% regression at a 50% flip rate needs 323,053 cases).
_UNCAPPED_LIMIT = 2_000_000
_FIRST_BLOCK = 2048
#: Relative safety margin of the screen: far above the rounding of the exact path
#: (cumulative sums of at most 10^7 pmf terms) and of scipy.special.bdtr/betainc.
_MARGIN = 1e-6


@dataclass(frozen=True, slots=True)
class _Targets:
    """The targets of one policy, per attempt: a CI run fails only if all attempts do."""

    alpha: float
    power: float
    attempts: int

    @property
    def alpha_loose(self) -> float:
        """Above every single-attempt false alarm the exact path can accept."""
        return float(self.alpha ** (1.0 / self.attempts)) * (1.0 + _MARGIN) + 1e-12

    @property
    def gap(self) -> float:
        """Detection less false alarm that a gate needs in one attempt, at the least."""
        return float(self.power ** (1.0 / self.attempts)) - float(
            self.alpha ** (1.0 / self.attempts)
        )

    @property
    def power_loose(self) -> float:
        """Below every single-attempt detection the exact path can accept."""
        return float(self.power ** (1.0 / self.attempts)) * (1.0 - _MARGIN) - 1e-12


def _failing_counts(reg: Regression, ns: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``reg.failing(n)`` for every n in `ns`, in exact integer arithmetic."""
    if reg.share is None:
        assert reg.count is not None  # (above the sizes, any count rules them all out)
        return np.full(ns.shape, min(reg.count, int(ns[-1]) + 1), dtype=np.int64)
    num, den = reg.share.numerator, reg.share.denominator
    if 2 * num * int(ns[-1]) + den < 2**62:  # floor(share n + 1/2) = (2 num n + den) // 2 den
        return np.minimum(ns, (2 * num * ns + den) // (2 * den))
    return np.array([reg.failing(int(n)) for n in ns], dtype=np.int64)


def _exact_plan(
    n: int,
    policy: Policy,
    reg: Regression,
    q_pass: Floats,
    q_fail: Floats,
    calls: Floats,
    ws: Floats,
    targets: _Targets,
) -> SuitePlan | None:
    """The plan at exactly `n` cases, or None: the full pmfs, as the search always did."""
    f = reg.failing(n)
    if f < 1 or f > n:
        return None
    pmf_h, pmf_r = _suite_pmfs(n, f, q_pass, q_fail, ws)
    calls_h = n * float(ws @ calls)
    return plan_from_pmfs(n, f, policy, pmf_h, pmf_r, calls_h, targets.alpha, targets.power)


def healthy_pass_pmf(plans: SuitePlans, policy: Policy, cases: int) -> Floats:
    """One CI run's passing-case pmf (0..`cases`) of a healthy suite under `policy`, one
    attempt, with the noise and case shape of `plans`: what its known-good runs measure,
    by the rule plans are found with."""
    j, c = plans.judge_checks, plans.code_checks
    per_case = j * policy.majority * policy.repeat * (policy.rerun_failing + 1)
    q_pass, q_fail, _, ws = _RulesBySize(plans.noise, policy, j, c, per_case)(cases)
    return _suite_pmfs(cases, 0, q_pass, q_fail, ws)[0]


@dataclass(frozen=True, slots=True)
class _Bounds:
    """Monotone step bounds of a run-level mixture (icc > 0) over `cells` Beta cells.

    ``P(Bin(m, q(X)) <= k)`` is non-decreasing in the run's flip rate x when the case
    pass probability q(x) is non-increasing in x (checked on the grid). With the
    cells ``[x_i, x_(i+1)]`` and their Beta masses ``w_i``, the mixture lies between
    ``sum w_i F(q(x_i))`` and ``sum w_i F(q(x_(i+1)))`` for any monotone F.
    """

    weights: Floats  # Beta mass of each cell
    q_left: Floats  # q at each cell's left edge (the largest q in the cell)
    q_right: Floats  # q at its right edge (the smallest)

    @classmethod
    def of(
        cls, noise: JudgeNoise, policy: Policy, j: int, c: int, cells: int = 64
    ) -> _Bounds | None:
        from scipy import special  # deferred: `import gatecal` stays light

        a, b = noise.beta_parameters()
        edges = np.concatenate(
            ([0.0], special.betaincinv(a, b, np.arange(1, cells) / cells), [1.0])
        )
        edges = np.unique(edges)
        one = Suite.uniform(cases=1, judge_checks=j, code_checks=c, failing=1)
        q = np.array([attempt_pmf(one, "healthy", noise.at(float(x)), policy)[0][1] for x in edges])
        if np.any(np.diff(q) > 0):  # not monotone: no bound, every size is decided exactly
            return None
        weights = np.diff(special.betainc(a, b, edges))
        return cls(weights=weights, q_left=q[:-1], q_right=q[1:])


def _cdf(k: npt.NDArray[np.int64], m: npt.NDArray[np.int64], q: Floats) -> Floats:
    """``P(Bin(m, q) <= k)`` elementwise (broadcast), with 0 for k < 0 and 1 for k >= m."""
    from scipy import special  # deferred: `import gatecal` stays light

    kk = np.broadcast_to(k, np.broadcast_shapes(k.shape, m.shape, q.shape))
    mm = np.broadcast_to(m, kk.shape)
    with np.errstate(invalid="ignore"):
        out = special.bdtr(np.clip(kk, 0, mm), mm, q)
    return np.where(kk < 0, 0.0, np.where(kk >= mm, 1.0, out))


def _screen(
    ns: npt.NDArray[np.int64],
    f: npt.NDArray[np.int64],
    q_pass: Floats,
    q_fail: Floats,
    ws: Floats,
    targets: _Targets,
    bounds: _Bounds | None,
) -> npt.NDArray[np.bool_]:
    """A necessary condition for `ns` to meet the targets: False only where none can.

    Let F_h(k) = P(K_h < k) and F_r(k) = P(K_r < k) of one attempt. The exact path
    takes the largest k with F_h(k) <= alpha' and needs F_r(k) >= power' there
    (alpha', power': the per-attempt targets). With a lower bound L(k) <= F_h(k) and
    an upper bound U(k) >= F_r(k), both non-decreasing in k, the largest k with
    L(k) <= alpha' (found by bisection) is at least the exact one, so U there is at
    least F_r at the exact one: ``U(k_up) < power'`` rules n out. Without icc L is
    F_h itself (scipy.special.bdtr) and U is P(Bin(n - f, q) < k) (the failing cases'
    own passes only lower F_r); with icc, the step bounds of :class:`_Bounds`. Both
    targets carry the relative margin :data:`_MARGIN`.
    """
    ok = (f >= 1) & (f <= ns)
    if len(ws) > 1 and bounds is None:
        return ok
    if len(ws) == 1:
        q_big = q_small = np.array([q_pass[0]])
        w = np.ones(1)
    else:  # a cell's largest q gives its smallest cdf, and its smallest q the largest
        assert bounds is not None
        q_big, q_small, w = bounds.q_left, bounds.q_right, bounds.weights

    sizes = ns[ok]  # (the others are ruled out already)
    failing = f[ok]

    def admissible(k: npt.NDArray[np.int64], at: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
        lower_fh = _cdf(k[:, None] - 1, sizes[at, None], q_big[None, :]) @ w  # <= P(K_h < k)
        return np.asarray(lower_fh <= targets.alpha_loose)

    def detects(k: npt.NDArray[np.int64], at: npt.NDArray[np.intp]) -> npt.NDArray[np.bool_]:
        upper_fr = _cdf(k[:, None] - 1, (sizes - failing)[at, None], q_small[None, :]) @ w
        return np.asarray(upper_fr >= targets.power_loose)  # (upper_fr >= P(K_r < k))

    every = np.arange(sizes.size)
    lo = np.zeros_like(sizes)  # k = 0: never fails, always admissible
    hi = sizes + 1  # past the largest k
    if len(ws) == 1 and sizes.size and 0.0 < targets.alpha_loose < 1.0:
        # The boundary is below hi, so U(boundary) <= U(hi - 1): most sizes are ruled out by
        # an upper end near it (a normal approximation, checked) before any bisection.
        guess = _boundary_guess(sizes, float(q_big[0]), targets.alpha_loose)
        near = np.clip(guess + 17, 1, sizes + 1).astype(np.int64)
        inside = np.flatnonzero(near <= sizes)
        closed = inside[~admissible(near[inside], inside)]
        hi[closed] = near[closed]
        every = every[detects(hi - 1, every)]  # the rest can't meet the detection target
        start = np.clip(guess[every] - 16, 0, sizes[every]).astype(np.int64)
        lo[every] = np.where(admissible(start, every) | (start == 0), start, 0)
    while (at := every[hi[every] - lo[every] > 1]).size:  # bisection, where still open
        mid = (lo[at] + hi[at]) // 2
        yes = admissible(mid, at)
        lo[at] = np.where(yes, mid, lo[at])
        hi[at] = np.where(yes, hi[at], mid)
    meets = np.zeros(sizes.size, dtype=np.bool_)
    meets[every] = detects(lo[every], every)
    ok[ok] = meets
    return ok


def _boundary_guess(sizes: npt.NDArray[np.int64], q: float, alpha: float) -> Floats:
    """Normal approximation of the largest k with P(Bin(n, q) < k) <= alpha, for where
    :func:`_screen` looks first (every use is checked there)."""
    from scipy import special  # deferred: `import gatecal` stays light

    sd = np.sqrt(sizes * (q * (1.0 - q)))
    return np.asarray(np.floor(sizes * q + float(special.ndtri(alpha)) * sd + 0.5))


#: Sizes per run that :func:`_shift_bound_allows` rules out with one bound.
_SHIFT_RUN = 512


def _shift_bound_allows(
    ns: npt.NDArray[np.int64], f: npt.NDArray[np.int64], q: float, targets: _Targets
) -> npt.NDArray[np.bool_]:
    """False for sizes (consecutive, increasing `ns`) where no gate can meet both targets.

    Detection minus false alarm per attempt is at most f max_k P(A = k), A ~ Bin(n - f,
    q) (see :func:`_never_after`). Over a run of sizes a..b, f(n) <= f(b) and n - f(n) >=
    a - f(a) (f grows by at most one case per case), and the largest pmf value does not
    grow with the count, so ``f(b) max_k P(Bin(a - f(a), q) = k)`` below the targets'
    gap rules the whole run out. The pmf comes from log-gamma (relative error about
    1e-8 at two million cases, inside the margin :data:`_MARGIN`).
    """
    keep = np.ones(ns.size, dtype=np.bool_)
    gap = targets.gap
    if ns.size == 0 or gap <= 0 or not 0.0 < q < 1.0:
        return keep
    first = np.arange(0, ns.size, _SHIFT_RUN)
    last = np.minimum(first + _SHIFT_RUN - 1, ns.size - 1)
    m = ns[first] - f[first]
    fits = m >= 0  # (a size below the regression's count: the screen rules it out)
    top = _largest_pmf(np.where(fits, m, 0), q)
    possible = ~fits | (f[last] * top * (1.0 + _MARGIN) >= gap)
    return np.repeat(possible, last - first + 1)


def _never_after(
    reg: Regression, n: int, q_pass: Floats, q_fail: Floats, targets: _Targets
) -> bool:
    """True if no suite larger than `n` can meet the targets (independent runs only).

    * Failing cases pass at least as often as healthy ones (``q_fail >= q_pass``):
      K_r is stochastically at least K_h, so detection <= false alarm at every gate
      and size; the targets need detection > false alarm.
    * No false alarm at all (``false_alarm == 0``) while a healthy case can fail: only
      ``k_min = 0`` never fails a healthy build, and it never fails any build.
    * A fixed number f of failing cases: with K_h = A + B and K_r = A + B', A ~
      Bin(n - f, q), B and B' the f cases, every gate's detection minus false alarm
      per attempt is at most TV(K_h, K_r) <= f max_k P(A = k) (a shift by one moves
      a distribution by at most its largest pmf value, in total variation), and the
      largest pmf value of Bin(m, q) does not grow with m (a convolution with a
      probability vector cannot raise a maximum). Once that bound is below
      power' - alpha', it stays below for every larger suite.
    """
    if len(q_pass) != 1:
        return False
    gap = targets.gap
    if gap <= 0:
        return False
    if q_fail[0] >= q_pass[0]:
        return True
    if targets.alpha == 0 and q_pass[0] < 1:  # every count of a healthy build can occur,
        return True  # so only k_min = 0 never fails it, and that gate detects nothing
    if reg.count is None:
        return False
    from scipy import stats  # deferred: `import gatecal` stays light

    m = n + 1 - reg.count
    if m <= 0:
        return False
    mode = min(m, math.floor((m + 1) * float(q_pass[0])))
    top_pmf = max(float(stats.binom.pmf(k, m, q_pass[0])) for k in (max(0, mode - 1), mode))
    return reg.count * top_pmf * (1.0 + _MARGIN) < gap


def cases_needed(
    flips: Sequence[float],
    regression: RegressionLike,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.95,
    judge_checks: int = 2,
    code_checks: int = 1,
    policy: Policy | None = None,
    max_cases: int = 2000,
) -> list[SuitePlan | None]:
    """The plan (smallest suite and gate) at each flip rate, for one regression size.

    Parameters
    ----------
    flips : sequence of float
        The symmetric judge flip rates (fnr = fpr), each in [0, 1]; one plan each.
    regression : Regression, str, int or float
        The regression to detect: a number of cases or a share (:func:`as_regression`).
    false_alarm : float, default 0.05
        The largest share of healthy builds the gate may fail.
    detection : float, default 0.95
        The smallest share of regressed builds the gate must fail.
    judge_checks : int, default 2
        Judge checks per case, at least 0.
    code_checks : int, default 1
        Code checks per case, at least 0 (not both 0).
    policy : Policy, optional
        How the CI run asks the judge; default one call per check.
    max_cases : int, default 2000
        The largest suite to try.

    Returns
    -------
    list of SuitePlan or None
        One per flip rate, in order: the smallest suite and its gate, or None when no
        suite up to `max_cases` meets both targets.

    Raises
    ------
    ParameterError
        If a flip rate, target or count is out of range, or the regression does not parse.

    Examples
    --------
    >>> import gatecal
    >>> [(p.cases, p.k_min) for p in gatecal.cases_needed([0.03, 0.08], "0.25")]
    [(6, 5), (26, 19)]
    """
    chosen = Policy() if policy is None else policy
    return [
        plan_suite(
            noise=JudgeNoise.flip(p),
            regression=regression,
            false_alarm=false_alarm,
            detection=detection,
            judge_checks=judge_checks,
            code_checks=code_checks,
            policies=[chosen],
            max_cases=max_cases,
        ).plans[0]
        for p in flips
    ]
