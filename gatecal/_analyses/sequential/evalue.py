"""Anytime-valid monitoring: an e-process on the suite's passing-case count (``evalue-MAX``).

For teams who look after every run of a build: after run j the gate computes an e-value
``E_j`` against "the build is healthy" and fails the build as soon as ``E_j >= 1 / alpha``;
a build that has not been failed after MAX runs passes.

The e-process
    Let S_j be the passing cases summed over the first j runs of n cases and
    ``F_j = j n - S_j`` the failing case runs. The null is a per-case pass rate of at
    least ``theta_0`` (the healthy build's mean, ``E[K_h] / n``). Each alternative rate
    ``t < theta_0`` gives the likelihood ratio ``(t / theta_0)^S_j ((1 - t) / (1 -
    theta_0))^F_j``, and the e-process mixes them over a Beta(a, b) prior truncated to
    ``(0, theta_0)``, its mean the regressed build's rate ``E[K_r] / n`` and its size
    ``a + b = n`` (one run's worth of cases)::

        E_j = B_theta0(a + S_j, b + F_j) / B_theta0(a, b) / (theta_0^S_j (1 - theta_0)^F_j)

    (``B_x`` the incomplete beta function). ``E_j`` falls as ``S_j`` grows, so the rule is
    a boundary on the cumulative count, ``fail_at_most`` at each look (never an early
    pass), and every exact tool of the sequential gates applies to it: the dynamic
    programme over the looks gives its *true* false alarm and detection under the
    truncated stopping, beside the nominal ``alpha``.

Where the guarantee holds
    With runs independent and identically distributed and cases independent within a run
    (``icc = 0``), each likelihood ratio above is a nonnegative supermartingale under any
    healthy build whose mean pass rate is at least ``theta_0``: one run's factor has
    expectation ``prod_c (1 + (q_c - theta_0) c_t)`` over the cases' pass rates q_c, with
    ``c_t < 0``, at most ``(1 + (mean q - theta_0) c_t)^n <= 1`` by the AM-GM inequality
    (a Poisson-binomial count is fine, not only a binomial one). Their mixture is one
    too, and Ville's inequality gives ``P(E_j >= 1 / alpha for some j) <= alpha`` for
    every stopping rule, looks after every run and any MAX. The exact false alarm under
    the truncation at MAX is below alpha (overshoot and the truncation both cost some).

    With run-to-run correlation (``icc > 0``) and each run drawing its own rate, one run's
    factor is ``E_X[(1 + (q(X) - theta_0) c_t)^n]``, at least 1 by Jensen's inequality
    (the power is convex): the process is no supermartingale and Ville's bound does not
    hold. Nor does it when the runs share one rate (the default model): given a rate
    whose pass rate is below ``theta_0`` the process grows. The exact dynamic programme
    over the looks still gives the true false alarm of the rule under either model, which
    can exceed alpha; ``policies`` and ``check`` quote that figure, never the nominal one
    alone (``check`` tightens the nominal level until the figure is within the budget).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gatecal._analyses.sequential.designs import (
    TARGET_SLACK,
    RatePmfs,
    SequentialBoundary,
    SequentialDesign,
    SequentialGate,
    SharedBinomial,
    _moments,
    sequential_outcome,
)
from gatecal._analyses.sequential.outcome import _as_rates
from gatecal._common.validate import ParameterError, check_count, check_probability
from gatecal._model.arrays import Floats
from gatecal._model.targets import Targets

__all__ = ["EvalueDesign", "design_evalue", "evalue_gate"]


#: The anytime-valid rule's name in a policy (``evalue-10``).
EVALUE = "evalue"


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalueDesign(SequentialDesign):
    """The boundaries of ``evalue-MAX`` and the e-process they come from.

    Attributes
    ----------
    null_rate : float
        ``theta_0``: the per-case pass rate of the null (the healthy build's mean).
    prior_a, prior_b : float
        The Beta prior of the alternative rates, truncated to ``(0, null_rate)``.
    nominal_false_alarm : float
        ``alpha``: the gate fails when the e-value reaches ``1 / alpha``.
    """

    null_rate: float
    prior_a: float
    prior_b: float
    nominal_false_alarm: float

    def log_e_values(self, look: int) -> Floats:
        """``log E_look(S)`` for S = 0 .. look x cases."""
        return _log_e(look * self.cases, self.null_rate, self.prior_a, self.prior_b)

    def e_value(self, look: int, passing: int) -> float:
        """``E_look`` when `passing` cases passed over the first `look` runs."""
        return math.exp(float(self.log_e_values(look)[passing]))


def _log_e(total: int, theta0: float, a: float, b: float) -> Floats:
    """log E(S) for S = 0..total passing of `total` case runs (see the module docstring)."""
    from scipy import special  # deferred: `import gatecal` stays light

    s = np.arange(total + 1, dtype=np.float64)
    f = total - s
    if theta0 >= 1.0:  # a healthy case never fails: one failing case run is proof
        return np.where(f > 0, math.inf, 0.0)
    with np.errstate(divide="ignore"):
        mixed = special.betaln(a + s, b + f) + np.log(special.betainc(a + s, b + f, theta0))
    norm = float(special.betaln(a, b) + math.log(special.betainc(a, b, theta0)))
    return np.asarray(mixed - norm - s * math.log(theta0) - f * math.log1p(-theta0))


def design_evalue(
    looks: int,
    cases: int,
    null_rate: float,
    alternative_rate: float,
    *,
    false_alarm: float = 0.05,
    prior_size: float | None = None,
) -> EvalueDesign:
    """The boundaries of the e-process gate of `looks` runs of `cases` cases: fail at the
    first look with ``E_j >= 1 / false_alarm``, pass after the last look otherwise.

    `null_rate` is ``theta_0``; the prior's mean is `alternative_rate` (below it) and its
    size ``a + b`` is `prior_size` (default: `cases`).

    Parameters
    ----------
    looks : int
        The most runs the gate may take, at least 1.
    cases : int
        The cases in one run, at least 1.
    null_rate : float
        ``theta_0``: a healthy build's per-case pass rate, in [0, 1].
    alternative_rate : float
        The prior's mean pass rate of a regressed build, below `null_rate`.
    false_alarm : float, default 0.05
        The nominal false-alarm budget, in (0, 1): the gate fails when ``E_j`` reaches
        ``1 / false_alarm``.
    prior_size : float, optional
        The prior's ``a + b``, above 0; default `cases`.

    Returns
    -------
    EvalueDesign
        The boundaries of each look, with the prior and ``theta_0`` they came from.

    Raises
    ------
    ParameterError
        If a count is below 1, a rate or `false_alarm` is out of range, `alternative_rate`
        is not below `null_rate`, or `prior_size` is not positive.
    """
    looks = check_count("looks", looks, low=1)
    cases = check_count("cases", cases, low=1)
    theta0 = check_probability("null_rate", null_rate)
    mean = check_probability("alternative_rate", alternative_rate)
    alpha = check_probability("false_alarm", false_alarm)
    if not 0 < alpha < 1:
        raise ParameterError("false_alarm", "must be in (0, 1) for an e-value gate", alpha)
    if not mean < theta0:
        raise ParameterError("alternative_rate", "must be below null_rate", mean)
    size = float(cases if prior_size is None else prior_size)
    if not size > 0:
        raise ParameterError("prior_size", "must be positive", prior_size)
    mean = min(max(mean, 1e-9), theta0 * (1 - 1e-9))
    a, b = mean * size, (1 - mean) * size
    threshold = -math.log(alpha) - TARGET_SLACK  # E >= 1/alpha, up to the search's own slack
    bounds = []
    for j in range(1, looks + 1):
        log_e = _log_e(j * cases, theta0, a, b)
        hits = np.flatnonzero(log_e >= threshold)
        fail = int(hits.max()) if hits.size else -1  # E falls in S: the hits are 0..fail
        bounds.append(
            SequentialBoundary(
                look=j,
                fail_at_most=fail,
                pass_at_least=fail + 1 if j == looks else j * cases + 1,
            )
        )
    return EvalueDesign(
        design=EVALUE,
        looks=looks,
        cases=cases,
        boundaries=tuple(bounds),
        targets=Targets(false_alarm=alpha, detection=math.nan),
        fail_constant=math.nan,
        pass_constant=math.nan,
        null_rate=theta0,
        prior_a=a,
        prior_b=b,
        nominal_false_alarm=alpha,
    )


def evalue_gate(
    looks: int,
    healthy_pmf: npt.ArrayLike | RatePmfs | SharedBinomial,
    regressed_pmf: npt.ArrayLike | RatePmfs | SharedBinomial,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.8,
) -> SequentialGate:
    """:func:`design_evalue` with ``theta_0`` the healthy pmf's mean rate and the prior's
    mean the regressed one's, and its exact rates on both pmfs (runs independent draws of
    them): ``false_alarm`` is the true one under the truncation at `looks`, at most the
    nominal `false_alarm` where Ville's inequality holds (see the module docstring).

    Parameters
    ----------
    looks : int
        The most runs the gate may take, at least 1.
    healthy_pmf, regressed_pmf : array_like, shape (cases + 1,), or RatePmfs
        One run's passing-count pmf of a healthy and of a regressed build; the regressed
        build must pass fewer cases on average.
    false_alarm : float, default 0.05
        The nominal false-alarm budget, in (0, 1).
    detection : float, default 0.8
        The detection target, in [0, 1]; it only labels whether the gate meets it.

    Returns
    -------
    SequentialGate
        The e-process's boundaries and its exact outcome on each build.

    Raises
    ------
    ParameterError
        If the pmfs differ in size, the regressed build does not pass fewer cases on
        average, or a target is out of range.
    """
    ph, pr = _as_rates("healthy_pmf", healthy_pmf), _as_rates("regressed_pmf", regressed_pmf)
    if ph.cases != pr.cases:
        raise ParameterError("regressed_pmf", f"must have {ph.cases + 1} entries", pr.cases + 1)
    target = check_probability("detection", detection)
    cases = ph.cases
    (mu_h, _), (mu_r, _) = _moments(ph.mixture), _moments(pr.mixture)
    if not mu_r < mu_h:
        rule = "must pass fewer cases on average than the healthy build"
        raise ParameterError("regressed_pmf", rule, mu_r)
    design = design_evalue(
        looks, cases, min(mu_h / cases, 1.0), mu_r / cases, false_alarm=false_alarm
    )
    design = _with_target(design, target)
    healthy, regressed = (
        sequential_outcome(design.boundaries, ph),
        sequential_outcome(design.boundaries, pr),
    )
    return SequentialGate(
        design=design,
        healthy=healthy,
        regressed=regressed,
        meets_targets=healthy.failure_probability <= false_alarm * (1 + TARGET_SLACK)
        and regressed.failure_probability >= target * (1 - TARGET_SLACK),
    )


def _with_target(design: EvalueDesign, detection: float) -> EvalueDesign:
    import dataclasses

    return dataclasses.replace(
        design, targets=dataclasses.replace(design.targets, detection=detection)
    )
