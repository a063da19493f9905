"""Both engines side by side: every gate's exact failure probability next to its simulated count."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from gatecal._common.contracts import json_header
from gatecal._common.defaults import (
    DEFAULT_FLIPS,
    DEFAULT_GATES,
    DEFAULT_RUNS,
    DEFAULT_SEED,
    SPREAD_SEED,
    SPREAD_SUITES,
)
from gatecal._common.display import Displayed
from gatecal._common.intervals import Interval, binomial_interval
from gatecal._common.seeds import renamed_seed
from gatecal._common.validate import (
    ParameterError,
    check_count,
    check_instance,
    check_level,
    check_probability,
)
from gatecal._engines.exact import PassCountDistribution, exact_pass_counts
from gatecal._engines.montecarlo import PassCountSample, simulate_pass_counts
from gatecal._model.gates import Gate, GateLike, as_gates, equivalent_gates
from gatecal._model.suite import BUILDS, JudgeNoise, Suite

__all__ = [
    "DEFAULT_FLIPS",
    "DEFAULT_GATES",
    "DEFAULT_RUNS",
    "DEFAULT_SEED",
    "BuildComparison",
    "GateRow",
    "Interval",
    "SimulationReport",
    "binomial_interval",
    "compare_samples",
    "failure_percentiles",
    "one_suite_ranges",
    "simulate_gates",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildComparison:
    """One build under one flip rate: the exact distribution and the simulated sample."""

    flip: float
    build: str
    exact: PassCountDistribution
    simulated: PassCountSample


@dataclass(frozen=True, slots=True, kw_only=True)
class GateRow:
    """One gate on one build at one flip rate, by both engines.

    Attributes
    ----------
    flip, build, gate : float, str, str
        The flip rate, ``"healthy"`` or ``"regressed"``, and the rule as written.
    rule : str
        The rule in words (``"pass rate >= 0.90"``).
    k_min : int
        Passing cases the gate needs.
    runs, simulated_failures : int
        Simulated runs, and those in which the gate failed the build.
    exact_failure_probability : float
        P(the gate fails the build), exactly.
    interval : Interval
        Central binomial interval of the failure count at the report's confidence
        level, around the exact probability.
    consistent : bool
        ``simulated_failures in interval``.
    exact_mean_pass_rate, simulated_mean_pass_rate : float
        The build's expected and simulated share of passing cases.
    same_gate_as : str or None
        The first listed rule with the same `k_min`, if it is another rule.
    one_suite : tuple of float or None
        With a case spread: the 10th and 90th percentiles of the failure probability of
        single suites drawn from the spread (:func:`one_suite_ranges`); `exact_failure_probability`
        is their average. None without a spread, or with a run-level correlation.
    """

    flip: float
    build: str
    gate: str
    rule: str
    k_min: int
    runs: int
    simulated_failures: int
    exact_failure_probability: float
    interval: Interval
    consistent: bool
    exact_mean_pass_rate: float
    simulated_mean_pass_rate: float
    same_gate_as: str | None
    one_suite: tuple[float, float] | None = None

    @property
    def simulated_failure_rate(self) -> float:
        """``simulated_failures / runs``."""
        return self.simulated_failures / self.runs

    def to_dict(self) -> dict[str, Any]:
        """The row as the JSON/CSV contract spells it."""
        return {
            "flip": self.flip,
            "build": self.build,
            "gate": self.gate,
            "rule": self.rule,
            "k_min": self.k_min,
            "same_gate_as": self.same_gate_as,
            "runs": self.runs,
            "simulated_failures": self.simulated_failures,
            "simulated_failure_rate": self.simulated_failure_rate,
            "exact_failure_probability": self.exact_failure_probability,
            "interval_low": self.interval.low,
            "interval_high": self.interval.high,
            "consistent": self.consistent,
            "exact_mean_pass_rate": self.exact_mean_pass_rate,
            "simulated_mean_pass_rate": self.simulated_mean_pass_rate,
            **(
                {"one_suite_low": self.one_suite[0], "one_suite_high": self.one_suite[1]}
                if self.one_suite is not None
                else {}
            ),
        }


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class SimulationReport(Displayed):
    """Gate failure rates of a suite's builds at several flip rates, by both engines.

    Attributes
    ----------
    suite : Suite
        The model.
    seed : int
        Root seed. Every (flip, build) pair draws from the same seed (common random
        numbers), so a row does not change when other flip rates are added.
    n_runs : int
        Simulated runs per build and flip rate.
    flips : tuple of float
        Symmetric judge flip rates.
    gates : tuple of Gate
        The rules, in the order given.
    confidence_level : float
        Level of the binomial interval that decides `consistent`.
    comparisons : tuple of BuildComparison
        One per (flip, build), flips outermost.
    rows : tuple of GateRow
        One per (flip, build, gate), in that order.
    noise : JudgeNoise
        The noise template: unparseable share, run-level icc, per-check and
        per-case rates; each block sets ``fnr`` (and ``fpr`` unless `fixed_fpr`)
        to its flip rate.
    fixed_fpr : bool
        Whether the false-"yes" rate stays at ``noise.fpr`` in every block.
    """

    suite: Suite
    seed: int
    n_runs: int
    flips: tuple[float, ...]
    gates: tuple[Gate, ...]
    confidence_level: float
    comparisons: tuple[BuildComparison, ...]
    rows: tuple[GateRow, ...]
    noise: JudgeNoise = dataclasses.field(default_factory=lambda: JudgeNoise(fnr=0.0, fpr=0.0))
    fixed_fpr: bool = False

    _renderer: ClassVar[str] = "gatecal._render.simulate"

    def summary(self) -> str:
        """How many gates and flip rates, on what suite, with how many runs."""
        return (
            f"{len(self.gates)} gates x {len(self.flips)} flip rates on a "
            f"{self.suite.n_cases}-case suite, {self.n_runs:,} simulated runs each "
            f"(seed {self.seed})"
        )

    def noise_at(self, flip: float) -> JudgeNoise:
        """The judge noise of the block with flip rate `flip`."""
        return noise_at(self.noise, flip, fixed_fpr=self.fixed_fpr)

    def equivalent_gates(self) -> list[tuple[int, tuple[Gate, ...]]]:
        """Groups of distinct rules that are one gate for this suite's case count."""
        return equivalent_gates(self.gates, self.suite.n_cases)

    def noise_free_pass_rate(self, build: str) -> float:
        """Share of cases that pass `build` when no verdict flips."""
        return 1.0 - self.suite.failing(build) / self.suite.n_cases

    @property
    def inconsistent_rows(self) -> tuple[GateRow, ...]:
        """Rows whose simulated count lies outside its interval."""
        return tuple(r for r in self.rows if not r.consistent)

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame (the CSV contract's columns), for notebooks."""
        import pandas as pd  # deferred: `import gatecal` stays light

        return pd.DataFrame([r.to_dict() for r in self.rows])

    def to_dict(self) -> dict[str, Any]:
        """Everything the report shows, as the JSON contract ``gatecal.simulate`` spells
        it, its header first.

        Raises
        ------
        ValueError
            If a row holds a value that is not finite (JSON has none; never emit them).
        """
        rows = [r.to_dict() for r in self.rows]
        for row in rows:
            for key, value in row.items():
                if isinstance(value, float) and not math.isfinite(value):
                    raise ValueError(f"row value `{key}` is not finite (got {value!r})")
        return {
            **json_header("simulate"),
            "seed": self.seed,
            "runs": self.n_runs,
            "cases": self.suite.n_cases,
            "judge_checks": self.suite.judge_checks,
            "code_checks": self.suite.code_checks,
            "failing": self.suite.failing("regressed"),
            "flips": list(self.flips),
            "gates": [g.text for g in self.gates],
            "confidence_level": self.confidence_level,
            "fpr": self.noise.fpr if self.fixed_fpr else None,
            "unparseable": self.noise.unparseable,
            "icc": self.noise.icc,
            "case_spread": self.noise.case_spread,
            "systematic": self.noise.systematic,
            "noise_free_pass_rate": {b: self.noise_free_pass_rate(b) for b in BUILDS},
            "equivalent_gates": [
                {"k_min": k, "gates": [g.text for g in gs]} for k, gs in self.equivalent_gates()
            ],
            "rows": rows,
        }


def noise_at(template: JudgeNoise, flip: float, *, fixed_fpr: bool) -> JudgeNoise:
    """`template` with its false-"no" rate (and false-"yes" rate unless fixed) set to `flip`.

    Parameters
    ----------
    template : JudgeNoise
        The noise whose other settings (unparseable share, icc, per-check rates) are kept.
    flip : float
        The new false-"no" rate (fnr), in [0, 1].
    fixed_fpr : bool
        Keep `template`'s false-"yes" rate; otherwise it is set to `flip` too.

    Returns
    -------
    JudgeNoise
        A copy of `template` with the new rates.
    """
    fpr = template.fpr if fixed_fpr else flip
    return dataclasses.replace(template, fnr=flip, fpr=fpr)


def simulate_gates(
    suite: Suite,
    *,
    flips: Sequence[float] = DEFAULT_FLIPS,
    noise: JudgeNoise | None = None,
    fixed_fpr: bool = False,
    gates: GateLike | Sequence[GateLike] = DEFAULT_GATES,
    n_runs: int = DEFAULT_RUNS,
    rng: int = DEFAULT_SEED,
    confidence_level: float = 0.99,
    workers: int | None = 1,
    progress: Callable[[int], object] | None = None,
    seed: int | None = None,
) -> SimulationReport:
    """How often each gate fails the healthy and the regressed build, exactly and simulated.

    For every flip rate p (judge verdicts wrong with probability p either way) and
    both builds, the exact engine gives the distribution of passing cases and the
    Monte Carlo engine simulates `n_runs` CI runs verdict by verdict; each gate's
    simulated failure count is then checked against the central binomial interval
    of its exact probability.

    Parameters
    ----------
    suite : Suite
        Cases, checks, and each build's truth.
    flips : sequence of float
        Flip rates in [0, 1]: each block's false-"no" rate, and its false-"yes" rate
        unless `fixed_fpr`.
    noise : JudgeNoise, optional
        Template for the rest of the noise model (``fpr`` when `fixed_fpr`,
        ``unparseable``, ``icc``, per-check and per-case rates).
    fixed_fpr : bool
        Keep ``noise.fpr`` as the false-"yes" rate of every block.
    gates : str or sequence
        Gate rules (see :func:`parse_gate`), or a comma-separated string of them.
    n_runs : int
        Simulated runs per build and flip rate.
    rng : int
        Root seed, a non-negative integer (recorded in the report, so that the output
        can be quoted and rerun); every (flip, build) pair draws from it.
    confidence_level : float
        Level of the consistency interval.
    workers : int, optional
        Workers for large simulations (None: the cores available; the second a thread), see
        :func:`simulate_pass_counts`; the result does not depend on it.
    progress : callable, optional
        Called with each finished number of simulated runs.
    seed : int, optional
        The old name of `rng` (deprecated).

    Examples
    --------
    >>> import gatecal
    >>> suite = gatecal.Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=3)
    >>> report = gatecal.simulate_gates(suite, flips=[0.03], gates="all,0.80", n_runs=200)
    >>> for row in report.rows:
    ...     exact = row.exact_failure_probability
    ...     print(row.build, row.gate, row.simulated_failures, f"{exact:.4f}")
    healthy all 104 0.5186
    healthy 0.80 9 0.0304
    regressed all 200 1.0000
    regressed 0.80 200 1.0000
    >>> report.inconsistent_rows  # every simulated count inside its exact interval
    ()
    """
    rng = renamed_seed(rng, seed, "simulate_gates")
    if isinstance(flips, str | bytes) or not isinstance(flips, Sequence):
        raise ParameterError("flips", "must be a sequence of numbers in [0, 1]", flips)
    check_instance("suite", suite, Suite, "a gatecal.Suite")
    flip_rates = tuple(check_probability("flip", p) for p in flips)
    if not flip_rates:
        raise ParameterError("flip", "must give at least one flip rate", list(flips))
    rules = as_gates(gates)
    n_runs = check_count("n_runs", n_runs, low=1)
    root = check_count("rng", rng, low=0)
    level = check_level("confidence_level", confidence_level)
    template = JudgeNoise(fnr=0.0, fpr=0.0) if noise is None else noise
    samples: dict[tuple[float, str], PassCountSample] = {}
    for p in flip_rates:
        block = noise_at(template, p, fixed_fpr=fixed_fpr)
        for build in BUILDS:
            samples[p, build] = simulate_pass_counts(
                suite, build, block, n_runs=n_runs, rng=root, workers=workers, progress=progress
            )
    return compare_samples(
        suite,
        samples,
        gates=rules,
        seed=root,
        confidence_level=level,
        noise=template,
        fixed_fpr=fixed_fpr,
    )


def one_suite_ranges(
    suite: Suite, build: str, noise: JudgeNoise, k_mins: Sequence[int]
) -> list[tuple[float, float] | None]:
    """How much one suite drawn from a case spread varies around the average: for each
    gate (its `k_min`), the 10th and 90th percentiles of P(the gate fails `build`) over
    :data:`SPREAD_SUITES` suites drawn with :data:`SPREAD_SEED`, each computed exactly
    (its cases' pass probabilities at their drawn rates, a Poisson-binomial). None for
    every gate without a spread, or with a run-level correlation (a run's count is then
    no Poisson-binomial)."""
    if noise.case_spread <= 0 or noise.icc > 0:
        return [None] * len(k_mins)
    import numpy as np  # deferred: the headline has no spread

    gen = np.random.default_rng(SPREAD_SEED)
    calls = noise.drawn_report_pass(gen, suite, build, SPREAD_SUITES)
    code = suite.truth_matrix(build)[:, ~suite.judge_mask()].all(axis=1)
    return failure_percentiles(calls.prod(axis=2) * code, k_mins)


def failure_percentiles(q: Any, k_mins: Sequence[int]) -> list[tuple[float, float] | None]:
    """For each `k_min`, the 10th and 90th percentiles over the rows of `q` (one drawn
    suite each: its cases' pass probabilities) of P(fewer than `k_min` cases pass), to 12
    decimals (the arithmetic's own error is about 1e-15)."""
    import numpy as np  # deferred: the headline has no spread

    from gatecal._engines.exact import pass_count_pmfs

    below = np.cumsum(pass_count_pmfs(q), axis=1)
    out: list[tuple[float, float] | None] = []
    for k in k_mins:
        fails = np.clip(below[:, k - 1], 0.0, 1.0) if k > 0 else np.zeros(len(below))
        # to 12 decimals: below that the interpolated and convolved rates are rounding
        low, high = np.round(np.quantile(fails, [0.1, 0.9]), 12)
        out.append((float(low), float(high)))
    return out


def compare_samples(
    suite: Suite,
    samples: Mapping[tuple[float, str], PassCountSample],
    *,
    gates: GateLike | Sequence[GateLike] = DEFAULT_GATES,
    seed: int,
    confidence_level: float = 0.99,
    noise: JudgeNoise | None = None,
    fixed_fpr: bool = False,
) -> SimulationReport:
    """Set simulated pass counts, from any source, beside the exact engine's numbers.

    `samples` maps ``(flip, build)`` to the pass-count histogram of simulated runs:
    from :func:`simulate_pass_counts`, or from repeated runs of a real evaluator
    path with a flaky judge. Every sample must have the same number of runs.
    `noise` and `fixed_fpr` are as in :func:`simulate_gates` (default: symmetric flips).

    Parameters
    ----------
    suite : Suite
        The suite whose runs were simulated.
    samples : mapping of (float, str) to PassCountSample
        ``(flip, build)`` to the pass-count histogram of that build's simulated runs at
        that flip rate; all with the same number of runs and the suite's number of cases.
    gates : str, Gate or sequence of them, default DEFAULT_GATES
        The gates to evaluate, as :func:`as_gates` reads them.
    seed : int
        The seed the samples were drawn with, recorded in the report.
    confidence_level : float, default 0.99
        The level of the interval each simulated failure rate is checked against,
        strictly between 0 and 1.
    noise : JudgeNoise, optional
        The template of the exact engine's noise at each flip rate; default symmetric
        flips and nothing else.
    fixed_fpr : bool, default False
        Keep ``noise.fpr`` as the false-"yes" rate at every flip rate.

    Returns
    -------
    SimulationReport
        One row per flip rate, build and gate: the exact and the simulated failure rate.

    Raises
    ------
    ParameterError
        If the samples differ in their number of runs or cases, a gate does not parse, or
        the level is out of range.
    """
    template = JudgeNoise(fnr=0.0, fpr=0.0) if noise is None else noise
    rules = as_gates(gates)
    level = check_level("confidence_level", confidence_level)
    run_counts = {s.n_runs for s in samples.values()}
    if len(run_counts) != 1:
        raise ParameterError("samples", "must all have the same number of runs", sorted(run_counts))
    n_runs = run_counts.pop()
    n = suite.n_cases
    k_mins = [g.k_min(n) for g in rules]
    first_with_k: dict[int, str] = {}
    for g, k in zip(rules, k_mins, strict=True):
        first_with_k.setdefault(k, g.text)
    comparisons: list[BuildComparison] = []
    rows: list[GateRow] = []
    intervals: dict[float, Interval] = {}  # gates with one k_min share theirs (10 ms at 2e7 runs)
    for (p, build), sample in samples.items():
        if sample.n_cases != n:
            raise ParameterError("samples", f"must count passes of {n} cases", sample.n_cases)
        block = noise_at(template, p, fixed_fpr=fixed_fpr)
        exact = exact_pass_counts(suite, build, block)
        comparisons.append(BuildComparison(flip=p, build=build, exact=exact, simulated=sample))
        ranges = one_suite_ranges(suite, build, block, k_mins)
        for g, k, one in zip(rules, k_mins, ranges, strict=True):
            prob = exact.failure_probability(k)
            failures = sample.failures(k)
            if prob not in intervals:
                intervals[prob] = binomial_interval(n_runs, prob, level)
            interval = intervals[prob]
            same = first_with_k[k]
            rows.append(
                GateRow(
                    flip=p,
                    build=build,
                    gate=g.text,
                    rule=g.describe(),
                    k_min=k,
                    runs=n_runs,
                    simulated_failures=failures,
                    exact_failure_probability=prob,
                    interval=interval,
                    consistent=failures in interval,
                    exact_mean_pass_rate=exact.mean_pass_rate,
                    simulated_mean_pass_rate=sample.mean_pass_rate,
                    same_gate_as=None if same == g.text else same,
                    one_suite=one,
                )
            )
    return SimulationReport(
        suite=suite,
        seed=seed,
        n_runs=n_runs,
        flips=tuple(dict.fromkeys(p for p, _ in samples)),
        gates=rules,
        confidence_level=level,
        comparisons=tuple(comparisons),
        rows=tuple(rows),
        noise=template,
        fixed_fpr=fixed_fpr,
    )
