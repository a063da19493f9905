"""A comparison's own operating characteristic, and the runs per build it needs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gatecal._analyses.compare.paired import Matrix, _decide
from gatecal._common.contracts import FieldsJSON, json_header
from gatecal._common.display import Displayed
from gatecal._common.seeds import SeedLike, root_seed
from gatecal._common.validate import (
    ParameterError,
    check_count,
    check_level,
    check_probability,
)
from gatecal._model.regression import RegressionLike, as_regression
from gatecal._model.targets import Targets

__all__ = [
    "CompareDesign",
    "CompareOC",
    "compare_oc",
    "plan_compare",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareOC(FieldsJSON):
    """The comparison's own false alarm and detection at one noise point (rate, icc)."""

    point: str
    rate: float
    icc: float
    false_alarm: float
    false_alarm_se: float
    detection: float
    detection_se: float


def _choose_test(test: str, base_runs: int, cand_runs: int) -> str:
    if test == "auto":
        return "mcnemar" if base_runs == 1 and cand_runs == 1 else "runs"
    if test == "mcnemar" and (base_runs != 1 or cand_runs != 1):
        raise ParameterError(
            "test", "mcnemar needs exactly one run per build", f"{base_runs} and {cand_runs} runs"
        )
    return test


# -- the comparison's own operating characteristic ------------------------------------------


def _draw_runs(
    gen: np.random.Generator, runs: int, cases: int, rate: float, icc: float, failing: int = 0
) -> Matrix:
    """Runs of `cases` cases: each run's failure rate from Beta(rate, icc) (or `rate` at
    icc 0), each case failing independently at it; the first `failing` cases always fail."""
    if icc > 0 and 0 < rate < 1:
        scale = (1.0 - icc) / icc
        x = gen.beta(rate * scale, (1 - rate) * scale, size=(runs, 1))
    else:
        x = np.full((runs, 1), rate)
    out = (gen.random((runs, cases)) >= x).astype(np.int8)
    out[:, :failing] = 0
    return out


def compare_oc(
    *,
    cases: int,
    baseline_runs: int,
    candidate_runs: int,
    rate: float,
    icc: float = 0.0,
    failing: int = 1,
    alpha: float = 0.05,
    alternative: str = "worse",
    test: str = "auto",
    multiplicity: str = "tarone",
    samples: int = 1000,
    rng: SeedLike = 0,
    point: str = "",
) -> CompareOC:
    """The comparison's false alarm (two healthy builds) and detection (the candidate's
    first `failing` cases always fail) by seeded simulation, with standard errors.

    Every run draws its failure rate from a Beta with mean `rate` and intra-run
    correlation `icc` (recommend's model); each case fails independently at it.

    Parameters
    ----------
    cases : int
        The cases compared, at least 1.
    baseline_runs, candidate_runs : int
        The runs of each build, each at least 1.
    rate : float
        The mean case failure rate of a healthy build, in [0, 1].
    icc : float, default 0.0
        The run-to-run correlation, in [0, 1).
    failing : int, default 1
        The regressed candidate's cases that always fail, in [0, `cases`].
    alpha : float, default 0.05
        The comparison's level, in (0, 1).
    alternative : {"worse", "two-sided"}, default "worse"
        As in :func:`compare_builds`.
    test : {"auto", "mcnemar", "runs", "cases"}, default "auto"
        As in :func:`compare_builds`.
    multiplicity : {"holm", "bh", "tarone"}, default "tarone"
        As in :func:`compare_builds`.
    samples : int, default 1000
        Simulated comparisons per hypothesis, at least 1.
    rng : SeedLike, default 0
        The root seed.
    point : str, default ""
        A label for this noise point, kept in the result.

    Returns
    -------
    CompareOC
        The simulated false alarm and detection, each with its standard error.

    Raises
    ------
    ParameterError
        If a count, rate, icc or level is out of range.
    """
    n = check_count("cases", cases, low=1)
    rb = check_count("baseline_runs", baseline_runs, low=1)
    rc = check_count("candidate_runs", candidate_runs, low=1)
    rate = check_probability("rate", rate)
    icc = check_probability("icc", icc)
    if icc >= 1:
        raise ParameterError("icc", "must be below 1", icc)
    k = check_count("failing", failing, low=0, high=n)
    samples = check_count("samples", samples, low=1)
    alpha = check_level("alpha", alpha)
    chosen = _choose_test(test, rb, rc)
    gen = np.random.Generator(np.random.PCG64(root_seed(rng)))
    hits = [0, 0]
    for _ in range(samples):
        base = _draw_runs(gen, rb, n, rate, icc)
        for h, f in enumerate((0, k)):
            cand = _draw_runs(gen, rc, n, rate, icc, f)
            found = _decide(base, cand, chosen, alternative, alpha, multiplicity, fast=True)
            hits[h] += found.reject and found.worse
    fa, det = hits[0] / samples, hits[1] / samples
    return CompareOC(
        point=point,
        rate=rate,
        icc=icc,
        false_alarm=fa,
        false_alarm_se=math.sqrt(fa * (1 - fa) / samples),
        detection=det,
        detection_se=math.sqrt(det * (1 - det) / samples),
    )


def _operating(
    base: Matrix,
    n: int,
    rb: int,
    rc: int,
    test: str,
    alternative: str,
    alpha: float,
    multiplicity: str,
    failing: int,
    samples: int,
    rng: SeedLike,
    level: float,
) -> tuple[CompareOC, ...]:
    """The operating characteristic at the fitted noise and at two points of the joint
    (rate, icc) confidence region: its largest icc, and its largest rate."""
    from gatecal._analyses.noise.bounds import noise_bounds

    seen = (base >= 0).sum(axis=1)
    failures = (base == 0).sum(axis=1)
    points: list[tuple[str, float, float]] = []
    if rb >= 2:
        bounds = noise_bounds(failures, seen, confidence_level=level)
        over = bounds.overdispersion
        points.append(("fit", over.mean, over.icc))
        top = int(np.argmax(bounds.iccs))
        points.append(("largest icc", bounds.highs[top], bounds.iccs[top]))
        high = int(np.argmax(bounds.highs))
        points.append(("largest rate", bounds.highs[high], bounds.iccs[high]))
    else:  # one run cannot bound the run-to-run correlation
        rate = float(failures.sum() / seen.sum())
        points.append(("fit (icc not measured: one run)", rate, 0.0))
    root = root_seed(rng)
    out = []
    for (name, rate, icc), child in zip(points, root.spawn(len(points)), strict=True):
        out.append(
            compare_oc(
                cases=n,
                baseline_runs=rb,
                candidate_runs=rc,
                rate=rate,
                icc=min(icc, 0.999),
                failing=failing,
                alpha=alpha,
                alternative=alternative,
                test=test,
                multiplicity=multiplicity,
                samples=samples,
                rng=child,
                point=name,
            )
        )
    return tuple(out)


# -- the design -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CompareDesign(Displayed):
    """Runs per build for a comparison to meet a false-alarm budget and a detection
    target (`targets`, :class:`Targets`); `rows` holds every runs-per-build tried, `runs`
    the smallest that meets both (None when none up to `max_runs` does)."""

    cases: int
    rate: float
    icc: float
    failing: int
    targets: Targets
    samples: int
    rows: tuple[tuple[int, CompareOC], ...]
    runs: int | None

    _renderer: ClassVar[str] = "gatecal._render.compare"

    def summary(self) -> str:
        """The runs a build needs, for how many cases and which regression."""
        head = f"{self.runs} runs a build"
        if self.runs is None:
            head = "no run count meets both targets"
        return f"{head} for {self.cases} cases, {self.failing} failing in the regression"

    def _rows(self) -> list[dict[str, Any]]:
        return [{"runs": r, **o.to_dict()} for r, o in self.rows]

    def to_frame(self) -> Any:
        """One row per runs-per-build tried, with its simulated rates."""
        import pandas as pd  # deferred: `import gatecal` stays light

        return pd.DataFrame(self._rows())

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``gatecal.plan.compare``, its header first."""
        return {
            **json_header("plan.compare"),
            "cases": self.cases,
            "rate": self.rate,
            "icc": self.icc,
            "failing": self.failing,
            **self.targets.flat(),
            "samples": self.samples,
            "runs": self.runs,
            "rows": self._rows(),
        }


def plan_compare(
    *,
    cases: int,
    rate: float,
    icc: float = 0.0,
    regression: RegressionLike = "1",
    false_alarm: float = 0.05,
    detection: float = 0.8,
    max_runs: int = 32,
    samples: int = 1000,
    rng: SeedLike = 0,
) -> CompareDesign:
    """The fewest runs per build (the same for both) at which the comparison, run at
    level `false_alarm`, has a simulated false alarm within the budget and a simulated
    detection of the regression at least `detection`.

    Tries 1, 2, 4, ... up to `max_runs`, then bisects between the last failure and the
    first success (detection grows with the runs; the bisection assumes so). With two
    or more runs the false alarm is at most the level whatever the noise (an exact
    permutation test); with one run it is McNemar's, which a run-to-run correlation
    inflates, so it is checked too.

    Parameters
    ----------
    cases : int
        The cases compared, at least 1.
    rate : float
        The mean case failure rate of a healthy build, in [0, 1].
    icc : float, default 0.0
        The run-to-run correlation, in [0, 1).
    regression : Regression, str, int or float, default "1"
        The regression to detect: a number of cases or a share (:func:`as_regression`).
    false_alarm : float, default 0.05
        The comparison's level and its false-alarm budget, in (0, 1).
    detection : float, default 0.8
        The detection target, in [0, 1].
    max_runs : int, default 32
        The most runs per build to try, at least 1.
    samples : int, default 1000
        Simulated comparisons per runs-per-build and hypothesis.
    rng : SeedLike, default 0
        The root seed.

    Returns
    -------
    CompareDesign
        Every runs-per-build tried with its simulated false alarm and detection, and the
        smallest that meets both targets (None if none up to `max_runs` does).

    Raises
    ------
    ParameterError
        If the regression does not make between 1 and all cases fail, or a count, rate,
        icc or target is out of range.
    """
    n = check_count("cases", cases, low=1)
    reg = as_regression(regression)
    k = reg.failing(n)
    if not 1 <= k <= n:
        raise ParameterError("regression", f"must make between 1 and {n} cases fail", reg.text)
    budget = check_level("false_alarm", false_alarm)
    target = check_probability("detection", detection)
    top = check_count("max_runs", max_runs, low=1)
    root = root_seed(rng)
    rows: dict[int, CompareOC] = {}

    def ok(r: int) -> bool:
        if r not in rows:
            child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, r))
            rows[r] = compare_oc(
                cases=n,
                baseline_runs=r,
                candidate_runs=r,
                rate=rate,
                icc=icc,
                failing=k,
                alpha=budget,
                samples=samples,
                rng=child,
                point=f"{r} runs",
            )
        o = rows[r]
        return o.false_alarm <= budget and o.detection >= target

    found = None
    low, r = 0, 1
    while r <= top:
        if ok(r):
            found = r
            break
        low, r = r, 2 * r
    if found is None and low < top and ok(top):
        found, r = top, top
    if found is not None:
        high = found
        while high - low > 1:
            mid = (low + high) // 2
            if ok(mid):
                high = mid
            else:
                low = mid
        found = high
    return CompareDesign(
        cases=n,
        rate=rate,
        icc=icc,
        failing=k,
        targets=Targets(false_alarm=budget, detection=target),
        samples=samples,
        rows=tuple(sorted(rows.items())),
        runs=found,
    )
