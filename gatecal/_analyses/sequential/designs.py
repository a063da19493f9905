"""Sequential gates over CI runs of one build: stop as soon as the evidence decides.

After run j of the same build the gate looks at ``S_j``, the number of passing cases
summed over the runs so far, and passes the build (``S_j >= pass_at_least``), fails it
(``S_j <= fail_at_most``) or asks for another run; at the last look the two boundaries
meet (``pass_at_least = fail_at_most + 1``), so every sequence stops by then.

One run's passing count K_i has the suite's exact pass-count distribution (binomial or
Poisson-binomial, :func:`gatecal.exact_pass_counts`). With run-to-run correlation
(``icc``) the judge's flip rate x of a run is Beta-distributed, and two models of the runs
of one build are served:

``shared`` (the default everywhere, the conservative one)
    The runs of one build, rerun back to back, share one rate x: given x they are
    independent draws of one run's pmf at x, and every probability below is the Beta
    mixture over x of the same probability at x (:class:`RatePmfs`). Given x a stopping
    probability is a polynomial in x of degree at most looks x judge verdicts per run, so
    a Gauss-Jacobi rule of that degree makes the mixture exact (to rounding).
``independent``
    Every run draws its own rate: K_1, K_2, ... are independent draws of the *mixture*
    pmf of one run, and ``S_j`` is the j-fold convolution of that pmf (a plain pmf).

At ``icc = 0`` the two coincide. With ``icc > 0`` the shared rate adds ``j^2 Var(E[K|x])``
to the variance of ``S_j`` where the independent model adds ``j Var(E[K|x])``: a gate
designed under the independent model fails a healthy build more often than it says when
the runs share their rate (experiments/sequential_shared_rate.py measures by how much).
Everything below is exact by dynamic programming over the looks: the mass of ``S_j`` on
the paths that have not stopped (one row per rate node under the shared model) is
convolved with one run's pmf, the stopping regions are read off and removed.

Designs (one run per look):

``sprt-MAX``
    Wald's sequential probability ratio test on ``S_j``, truncated at MAX runs: two
    parallel lines of slope ``d`` per run, the slope of Wald's binomial likelihood ratio
    between the healthy and the regressed mean pass rates.
``pocock-LOOKS``
    Pocock's shape: the fail boundary a constant number of standard deviations of
    ``S_j`` below the healthy mean ``j mu_h``, the pass boundary a constant number above
    the regressed mean ``j mu_r`` (constant nominal z at every look).
``obf-LOOKS``
    O'Brien and Fleming's shape: the same with a constant distance on the sum scale
    (the nominal z shrinks as ``sqrt(LOOKS / j)``).

The two constants of each shape are searched on a grid and the final cut is the largest
that keeps the exact false alarm within the budget; among the designs that meet the
detection target the one with the fewest expected runs of a healthy build is chosen
(most builds are healthy, so their runs are most of the cost), ties broken by the
regressed build's expected runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from gatecal._analyses.sequential.outcome import (
    RatePmfs,
    RunPmfs,
    SequentialBoundary,
    SequentialOutcome,
    SharedBinomial,
    _as_rates,
    _check_pmf,
    _fast_sum,
    _last_mass,
    _start,
    _step,
    sequential_outcome,
)
from gatecal._common.contracts import fields_dict
from gatecal._common.validate import ParameterError, check_count, check_probability
from gatecal._model.arrays import Floats
from gatecal._model.sequential import design_names, walk_boundaries
from gatecal._model.targets import Targets, with_flat_targets

__all__ = [
    "RUN_MODELS",
    "SEQUENTIAL_DESIGNS",
    "SEQUENTIAL_EXIT_CONTINUE",
    "TARGET_SLACK",
    "RatePmfs",
    "SequentialBoundary",
    "SequentialDesign",
    "SequentialGate",
    "SequentialOutcome",
    "SharedBinomial",
    "WaldApproximation",
    "design_sequential",
    "sequential_outcome",
    "wald_approximation",
    "wald_sprt",
]

Design = Literal["sprt", "pocock", "obf"]
RunModel = Literal["shared", "independent"]
#: How the runs of one build relate: ``shared`` (one flip rate for all of them, the
#: default) or ``independent`` (each run draws its own); see the module docstring.
RUN_MODELS: tuple[RunModel, ...] = ("shared", "independent")
SEQUENTIAL_DESIGNS: tuple[Design, ...] = design_names(searched=True)  # type: ignore[assignment]
#: The exit code of ``gatecal check`` when a sequential gate asks for another run.
SEQUENTIAL_EXIT_CONTINUE = 3
#: Relative slack on the targets, so that no choice depends on the last bits of a float.
TARGET_SLACK = 1e-9
#: The grid of each shape's two constants (in standard deviations of one run's count).
_GRID = tuple(i / 8 for i in range(0, 49))


# -- designs ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialDesign:
    """A sequential gate: its shape, its boundaries, and the targets it was searched for.

    Attributes
    ----------
    design : {'sprt', 'pocock', 'obf'}
    looks : int
        Runs at most (one run per look).
    cases : int
        Cases per run.
    boundaries : tuple of SequentialBoundary
        One per look, on the cumulative passing count.
    targets : Targets
        The targets of the search (``nan`` for boundaries given by hand or by Wald's
        formulas).
    fail_constant, pass_constant : float
        The shape's two constants the search chose (standard deviations of one run's
        count; ``inf``: that boundary is used only at the last look).
    """

    design: str
    looks: int
    cases: int
    boundaries: tuple[SequentialBoundary, ...]
    targets: Targets
    fail_constant: float
    pass_constant: float

    def to_dict(self) -> dict[str, Any]:
        """The fields in their order, the targets flat (``false_alarm_target``,
        ``detection_target``): the boundary file the pytest plugin reads."""
        return with_flat_targets(fields_dict(self), self.targets)

    @property
    def text(self) -> str:
        """The policy spelling: ``sprt-5``, ``pocock-4``, ``obf-3``."""
        return f"{self.design}-{self.looks}"

    def decide(self, passing: Sequence[int]) -> tuple[Literal["pass", "fail", "continue"], int]:
        """The decision on the runs so far (passing cases per run, in order), and the look
        it was taken at: the first look whose boundary is crossed, or ``continue``."""
        pairs = [(b.pass_at_least, b.fail_at_most) for b in self.boundaries]
        decision, look, _ = walk_boundaries(passing, pairs)
        return decision, look


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialGate:
    """A sequential design and what it does to a healthy and to a regressed build.

    Attributes
    ----------
    design : SequentialDesign
    healthy, regressed : SequentialOutcome
        ``healthy.failure_probability`` is the false alarm,
        ``regressed.failure_probability`` the detection.
    meets_targets : bool
        False alarm within the budget and detection at least the target. When no design
        of the shape meets both, the one with the highest detection within the budget.
    judge_calls_per_run : int
        Judge calls one run of the suite makes (0 when unknown).
    """

    design: SequentialDesign
    healthy: SequentialOutcome
    regressed: SequentialOutcome
    meets_targets: bool
    judge_calls_per_run: int = 0

    @property
    def false_alarm(self) -> float:
        return self.healthy.failure_probability

    @property
    def detection(self) -> float:
        return self.regressed.failure_probability

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.design.to_dict(),
            "false_alarm": self.false_alarm,
            "detection": self.detection,
            "meets_targets": self.meets_targets,
            "judge_calls_per_run": self.judge_calls_per_run,
            "healthy": self.healthy.to_dict(),
            "regressed": self.regressed.to_dict(),
        }


def _moments(p: Floats) -> tuple[float, float]:
    k = np.arange(p.size, dtype=np.float64)
    mean = math.fsum((k * p).tolist())
    var = math.fsum(((k - mean) ** 2 * p).tolist())
    return mean, math.sqrt(max(var, 0.0))


def _wald_slope(mu_h: float, mu_r: float, cases: int) -> tuple[float, float]:
    """Per-run slope d of Wald's lines and the count scale |a| of the per-case log LR.

    Binomial log likelihood ratio (regressed over healthy) of S after j runs:
    ``S log(p_r/p_h) + (j n - S) log(q_r/q_h)`` = ``b j n - |a| S`` with
    ``b = log(q_r/q_h)``, ``|a| = log(p_h q_r / (p_r q_h))``; its zero line is ``S = j d``.
    """
    eps = 1e-12
    ph = min(max(mu_h / cases, eps), 1 - eps)
    pr = min(max(mu_r / cases, eps), 1 - eps)
    b = math.log1p(-pr) - math.log1p(-ph)
    a = math.log(ph) - math.log(pr) + b
    return cases * b / a, a


def _shape(
    design: Design, looks: int, cases: int, moments: tuple[tuple[float, float], tuple[float, float]]
) -> tuple[Floats, Floats, Floats, Floats]:
    """Centres and widths (per look, one per boundary) of the design's shape."""
    (mu_h, sd_h), (mu_r, sd_r) = moments
    j = np.arange(1, looks + 1, dtype=np.float64)
    sd = max(sd_h, sd_r, 0.5)  # half a case at least: a noiseless suite still has a scale
    if design == "sprt":
        d, _ = _wald_slope(mu_h, mu_r, cases)
        width = np.full(looks, sd * math.sqrt(looks))
        return j * d, j * d, width, width
    width = sd * np.sqrt(j) if design == "pocock" else np.full(looks, sd * math.sqrt(looks))
    return j * mu_h, j * mu_r, width, width


def _early(
    centre_fail: Floats,
    centre_pass: Floats,
    w_fail: Floats,
    w_pass: Floats,
    c_fail: float,
    c_pass: float,
    cases: int,
) -> tuple[tuple[int, int], ...]:
    """(pass_at_least, fail_at_most) of the looks before the last, for constants c."""
    out = []
    for j in range(centre_fail.size - 1):
        top = (j + 1) * cases
        f = -1 if math.isinf(c_fail) else math.floor(centre_fail[j] - c_fail * w_fail[j] + 1e-9)
        s = top + 1 if math.isinf(c_pass) else math.ceil(centre_pass[j] + c_pass * w_pass[j] - 1e-9)
        f = min(max(f, -1), top)
        s = min(max(s, 0), top + 1)
        if s <= f:  # the lines crossed: no room to continue; fail takes its side first
            s = f + 1
        out.append((s, f))
    return tuple(out)


def _final_cut(
    early: tuple[tuple[int, int], ...],
    pmfs: tuple[RunPmfs, RunPmfs],
    false_alarm: float,
) -> tuple[int, float, float, float, float] | None:
    """Largest last-look cut with the false alarm in budget: (cut, fa, det, asn_h, asn_r)."""
    results = []
    top = (len(early) + 1) * pmfs[0].cases  # S at the last look is at most this
    for p in pmfs:
        alive, offset = _start(p), 0
        failed, asn = [], 0.0
        for j, (s, f) in enumerate(early, start=1):
            bound = SequentialBoundary(look=j, pass_at_least=s, fail_at_most=f)
            fl, ps, alive, offset = _step(alive, offset, p, bound, _fast_sum)
            failed.append(fl)
            asn += j * (fl + ps)
        last = _last_mass(alive, offset, p, len(early) + 1)
        reach = _fast_sum(last)
        results.append((math.fsum(failed), last, offset, asn + (len(early) + 1) * reach))
    (fa0, last_h, off_h, asn_h), (det0, last_r, off_r, asn_r) = results
    if fa0 > false_alarm * (1 + TARGET_SLACK):
        return None
    budget = false_alarm * (1 + TARGET_SLACK) - fa0
    # the largest cut c with P(fail) <= budget: S below off_h carries no mass, nor S above
    # the last non-zero entry (then every cut up to `top` fits)
    r = int(np.searchsorted(np.cumsum(last_h), budget, side="right")) - 1
    cut = top if r >= last_h.size - 1 else off_h + r
    fa = fa0 + _fast_sum(last_h[: max(cut - off_h + 1, 0)])
    det = det0 + _fast_sum(last_r[: max(cut - off_r + 1, 0)])
    return cut, fa, det, asn_h, asn_r


def _build(
    design: str,
    looks: int,
    cases: int,
    early: tuple[tuple[int, int], ...],
    cut: int,
    targets: Targets,
    constants: tuple[float, float],
) -> SequentialDesign:
    bounds = [
        SequentialBoundary(look=j, pass_at_least=s, fail_at_most=f)
        for j, (s, f) in enumerate(early, start=1)
    ]
    bounds.append(SequentialBoundary(look=looks, pass_at_least=cut + 1, fail_at_most=cut))
    return SequentialDesign(
        design=design,
        looks=looks,
        cases=cases,
        boundaries=tuple(bounds),
        targets=targets,
        fail_constant=constants[0],
        pass_constant=constants[1],
    )


def design_sequential(
    design: str,
    looks: int,
    healthy_pmf: npt.ArrayLike | RatePmfs | SharedBinomial,
    regressed_pmf: npt.ArrayLike | RatePmfs | SharedBinomial,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.8,
) -> SequentialGate:
    """Search the boundaries of a ``sprt``, ``pocock`` or ``obf`` gate of `looks` runs.

    Parameters
    ----------
    design : {"sprt", "pocock", "obf"}
        The boundary shape: Wald's SPRT lines, Pocock's (a constant nominal z at every
        look) or O'Brien and Fleming's (a constant distance on the sum scale); see the
        module docstring.
    looks : int
        The most runs the gate may take, at least 1.
    healthy_pmf, regressed_pmf : array_like, shape (cases + 1,), or RatePmfs
        One run's passing-count pmf of a healthy and of a regressed build (runs
        independent draws of it), or :class:`RatePmfs` (the runs of a build share one
        rate: every figure searched and quoted is the mixture over it).
    false_alarm, detection : float
        The budget (P(fail a healthy build) at most) and the target (P(fail a regressed
        build) at least).

    Notes
    -----
    Every candidate is evaluated exactly (:func:`sequential_outcome`'s recursion): the
    shape's two constants on a grid of 0 to 6 standard deviations in eighths, plus
    "that boundary only at the last look"; for each, the last look's cut is the largest
    within the false-alarm budget. Chosen: the fewest expected runs of a healthy build
    among the designs meeting the detection target (then of a regressed build, then the
    wider boundaries); if none meets it, the highest detection (then the same order).
    """
    if design not in SEQUENTIAL_DESIGNS:
        raise ParameterError("design", f"must be one of {', '.join(SEQUENTIAL_DESIGNS)}", design)
    looks = check_count("looks", looks, low=1)
    alpha = check_probability("false_alarm", false_alarm)
    target = check_probability("detection", detection)
    ph, pr = _as_rates("healthy_pmf", healthy_pmf), _as_rates("regressed_pmf", regressed_pmf)
    if ph.cases != pr.cases:
        raise ParameterError("regressed_pmf", f"must have {ph.cases + 1} entries", pr.cases + 1)
    cases = ph.cases
    moments = (_moments(ph.mixture), _moments(pr.mixture))
    if not moments[1][0] < moments[0][0]:
        raise ParameterError(
            "regressed_pmf",
            "must pass fewer cases on average than the healthy build",
            moments[1][0],
        )
    cf, cp, wf, wp = _shape(design, looks, cases, moments)
    grid = [*_GRID, math.inf]
    seen: dict[tuple[tuple[int, int], ...], tuple[float, float]] = {}
    for c_fail in grid:
        for c_pass in grid:
            early = _early(cf, cp, wf, wp, c_fail, c_pass, cases)
            seen.setdefault(early, (c_fail, c_pass))
    best: tuple[Any, ...] | None = None
    for early, constants in seen.items():
        found = _final_cut(early, (ph, pr), alpha)
        if found is None:
            continue
        cut, _, det, asn_h, asn_r = found
        meets = det >= target * (1 - TARGET_SLACK)
        key = (
            not meets,
            0.0 if meets else -round(det, 12),
            round(asn_h, 9),
            round(asn_r, 9),
            tuple(-f for _, f in early),
            tuple(s for s, _ in early),
        )
        if best is None or key < best[0]:
            best = (key, early, cut, constants, meets)
    assert best is not None  # the fixed design (both constants inf) always fits the budget
    _, early, cut, constants, meets = best
    targets = Targets(false_alarm=alpha, detection=target)
    built = _build(design, looks, cases, early, cut, targets, constants)
    return SequentialGate(
        design=built,
        healthy=sequential_outcome(built.boundaries, ph),
        regressed=sequential_outcome(built.boundaries, pr),
        meets_targets=bool(meets),
    )


def wald_sprt(
    looks: int,
    healthy_pmf: npt.ArrayLike | RatePmfs | SharedBinomial,
    regressed_pmf: npt.ArrayLike | RatePmfs | SharedBinomial,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.8,
) -> SequentialGate:
    """Wald's own SPRT boundaries (no search), truncated at `looks` runs.

    Fail when the binomial log likelihood ratio reaches ``log(detection / false_alarm)``,
    pass when it falls to ``log((1 - detection) / (1 - false_alarm))``; at the last look
    fail when it is positive or zero. Its error rates are what they are (computed exactly):
    Wald chose these thresholds so that, untruncated and without overshoot, they would
    be the targets.

    Parameters
    ----------
    looks : int
        The most runs the gate may take, at least 1.
    healthy_pmf, regressed_pmf : array_like, shape (cases + 1,), or RatePmfs
        One run's passing-count pmf of a healthy and of a regressed build (runs
        independent draws of it), or :class:`RatePmfs` (the runs share one rate).
    false_alarm, detection : float, default 0.05 and 0.8
        Wald's targets: ``0 < false_alarm < detection < 1``.

    Returns
    -------
    SequentialGate
        The truncated SPRT's boundaries and its exact outcome on each build.

    Raises
    ------
    ParameterError
        If `looks` is below 1, the targets are out of order, or a pmf is invalid.
    """
    looks = check_count("looks", looks, low=1)
    alpha = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    if not 0 < alpha < power < 1:
        raise ParameterError("detection", "must exceed false_alarm, both in (0, 1)", power)
    ph, pr = _as_rates("healthy_pmf", healthy_pmf), _as_rates("regressed_pmf", regressed_pmf)
    cases = ph.cases
    (mu_h, _), (mu_r, _) = _moments(ph.mixture), _moments(pr.mixture)
    d, a = _wald_slope(mu_h, mu_r, cases)
    upper = math.log(power / alpha)
    lower = math.log((1 - power) / (1 - alpha))
    h_fail, h_pass = upper / a, -lower / a
    early = []
    for j in range(1, looks):
        top = j * cases
        f = min(max(math.floor(j * d - h_fail + 1e-9), -1), top)
        s = min(max(math.ceil(j * d + h_pass - 1e-9), 0), top + 1)
        early.append((max(s, f + 1), f))
    cut = min(max(math.floor(looks * d + 1e-9), -1), looks * cases)
    unsearched = Targets(false_alarm=math.nan, detection=math.nan)
    built = _build("sprt", looks, cases, tuple(early), cut, unsearched, (math.nan, math.nan))
    healthy = sequential_outcome(built.boundaries, ph)
    regressed = sequential_outcome(built.boundaries, pr)
    return SequentialGate(
        design=built,
        healthy=healthy,
        regressed=regressed,
        meets_targets=healthy.failure_probability <= alpha * (1 + TARGET_SLACK)
        and regressed.failure_probability >= power * (1 - TARGET_SLACK),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class WaldApproximation:
    """Wald's classical approximations for an untruncated SPRT (no overshoot): labelled
    approximations, a sanity check beside the exact figures, never a result.

    Attributes
    ----------
    false_alarm_bound, miss_bound : float
        Wald's inequalities ``alpha' <= alpha / (1 - beta)``, ``beta' <= beta / (1 - alpha)``
        with ``alpha`` the false-alarm target and ``beta = 1 - detection``.
    expected_runs_healthy, expected_runs_regressed : float
        ``E[N] ~ (P(fail) log A + P(pass) log B) / E[log LR of one run]`` at the targets.
    information_bound_healthy, information_bound_regressed : float
        Lower bounds on the expected runs of *any* sequential test with the given exact
        error rates: ``E_h[N] >= kl(P_h(pass) || P_r(pass)) / KL(healthy || regressed)``
        (data processing; rigorous, not an approximation), filled in when the error rates
        are given.
    """

    false_alarm_bound: float
    miss_bound: float
    expected_runs_healthy: float
    expected_runs_regressed: float
    information_bound_healthy: float
    information_bound_regressed: float


def _kl(p: Floats, q: Floats) -> float:
    mask = p > 0
    if np.any(q[mask] == 0):
        return math.inf
    return math.fsum((p[mask] * (np.log(p[mask]) - np.log(q[mask]))).tolist())


def _binary_kl(x: float, y: float) -> float:
    out = 0.0
    for a, b in ((x, y), (1 - x, 1 - y)):
        if a > 0:
            out += math.inf if b <= 0 else a * math.log(a / b)
    return out


def wald_approximation(
    healthy_pmf: npt.ArrayLike,
    regressed_pmf: npt.ArrayLike,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.8,
    actual: tuple[float, float] | None = None,
) -> WaldApproximation:
    """Wald's approximate OC and ASN of the SPRT for these pmfs (see
    :class:`WaldApproximation`); `actual` = (exact false alarm, exact detection) of a
    design gives the rigorous information bounds on its expected runs.

    Parameters
    ----------
    healthy_pmf, regressed_pmf : array_like, shape (cases + 1,)
        One run's passing-count pmf of a healthy and of a regressed build.
    false_alarm, detection : float, default 0.05 and 0.8
        The SPRT's targets, in (0, 1).
    actual : (float, float), optional
        A design's exact (false alarm, detection), for the information bounds; without it
        those bounds are NaN.

    Returns
    -------
    WaldApproximation
        Wald's bounds on the error rates, his approximate expected runs of each build, and
        the information bounds.

    Raises
    ------
    ParameterError
        If a pmf is invalid or a target is not a probability.
    """
    ph, pr = _check_pmf("healthy_pmf", healthy_pmf), _check_pmf("regressed_pmf", regressed_pmf)
    alpha = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    beta = 1 - power
    cases = ph.size - 1
    (mu_h, _), (mu_r, _) = _moments(ph), _moments(pr)
    d, a = _wald_slope(mu_h, mu_r, cases)
    log_a, log_b = math.log(power / alpha), math.log(beta / (1 - alpha))
    # one run's binomial log LR: b n - |a| K = |a| (d - K); its means under each build
    z_h, z_r = a * (d - mu_h), a * (d - mu_r)
    asn_h = (alpha * log_a + (1 - alpha) * log_b) / z_h
    asn_r = (power * log_a + beta * log_b) / z_r
    info_h = info_r = math.nan
    if actual is not None:
        fa, det = actual
        info_h = _binary_kl(1 - fa, 1 - det) / _kl(ph, pr)
        info_r = _binary_kl(1 - det, 1 - fa) / _kl(pr, ph)
    return WaldApproximation(
        false_alarm_bound=alpha / (1 - beta),
        miss_bound=beta / (1 - alpha),
        expected_runs_healthy=asn_h,
        expected_runs_regressed=asn_r,
        information_bound_healthy=info_h,
        information_bound_regressed=info_r,
    )
