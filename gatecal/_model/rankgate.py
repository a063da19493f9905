"""The case-aware gate's decision: the CI run ranked among the known-good runs.

**The score.** A run's score is the sum, over its failing cases, of how surprising each
failure is given what the *other* runs say of that case: case ``c`` failed ``f`` times in
``m`` other runs, so its rate is estimated ``(f + a) / (m + a + b)`` (a weak prior,
:data:`PRIOR`), and its failure weighs ``log(1 + eps / ((1 - eps) rate))``, the
log-likelihood ratio of "one case of the suite broke" (``eps = 1/n``) against that rate.
A case that never failed elsewhere weighs most; a case that failed in every other run
weighs about nothing (a systematic case is no evidence). Weights are rounded to whole
units (:data:`UNITS` per unit of log-likelihood ratio) so that equal scores are equal
exactly, on any machine.

**The calibration.** Every one of the R + 1 runs (the R known-good ones and the CI run) is
scored the same way against the other R. The score is a symmetric function of the runs, so
when healthy runs are exchangeable (whatever their per-case rates, whole-run effects
included) the CI run's rank among the R + 1 scores is uniform, ties counted against it.
The gate fails the CI run when at most ``allowed - 1`` known-good runs score as high as it
does, ``allowed = floor(false_alarm (R + 1))``: its false alarm, averaged over the
known-good runs a judge may produce, is at most ``allowed / (R + 1)`` exactly, with no
model of the rates and no bound on how much runs differ. The price is resolution: with R
known-good runs the smallest p-value is ``1 / (R + 1)``, so fewer than
``ceil(1 / false_alarm) - 1`` runs (19 at 0.05) can fail nothing.

Standard library only: the pytest plugin decides a gate file's case-aware gate with it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

__all__ = [
    "PRIOR",
    "UNITS",
    "RankTest",
    "allowed_rank",
    "rank_test",
    "runs_needed",
    "weight_units",
]

#: Pseudo failures and pseudo passes added to a case's record for its rate estimate: a
#: weak prior (mean 0.1, worth one run). On the study's suites it gave the best detection
#: of one to three broken stable cases among (0.5, 0.5), (0.1, 0.9), (0.02, 0.98) and
#: (1, 1), the false alarm being exact for any of them (experiments/case_gate_coverage.py).
PRIOR = (0.1, 0.9)
#: Weight units per unit of log-likelihood ratio: scores are whole numbers of units.
UNITS = 100


def allowed_rank(false_alarm: float, runs: int) -> int:
    """``floor(false_alarm (runs + 1))``: the CI run fails when fewer than this many of the
    R + 1 runs (itself included) score at least as high as it does."""
    return max(0, math.floor(false_alarm * (runs + 1) + 1e-9))


def runs_needed(false_alarm: float) -> int:
    """The fewest known-good runs with which the rank gate can fail a run at all."""
    if false_alarm <= 0:
        return 0
    return max(1, math.ceil(1.0 / false_alarm - 1e-9) - 1)


def weight_units(
    failures: int, observed: int, cases: int, prior: tuple[float, float] = PRIOR
) -> int:
    """A failure's weight, in units, for a case that failed `failures` of `observed` other
    runs, in a suite of `cases` cases."""
    eps = min(0.5, 1.0 / max(cases, 1))
    a, b = prior
    rate = (failures + a) / (observed + a + b)
    return round(math.log1p(eps / (1.0 - eps) / rate) * UNITS)


@dataclass(frozen=True, slots=True)
class RankTest:
    """The CI run ranked among the known-good runs.

    Attributes
    ----------
    score : int
        The CI run's score, in units (each failing case weighed against the known-good runs).
    scores : tuple of int
        Each known-good run's score, against the other known-good runs and the CI run.
    at_least : int
        How many known-good runs score at least as high as the CI run.
    allowed : int
        The CI run fails when `at_least` is below this (``floor(false_alarm (R + 1))``).
    """

    score: int
    scores: tuple[int, ...]
    at_least: int
    allowed: int

    @property
    def runs(self) -> int:
        return len(self.scores)

    @property
    def fails(self) -> bool:
        return self.at_least < self.allowed

    @property
    def p_value(self) -> float:
        """The CI run's rank p-value: ``(1 + at_least) / (R + 1)``."""
        return (1 + self.at_least) / (len(self.scores) + 1)

    @property
    def threshold(self) -> int | None:
        """The score the CI run must exceed to fail: the `allowed`-th highest known-good
        score (None when no score can fail)."""
        if self.allowed < 1 or self.allowed > len(self.scores):
            return None
        return sorted(self.scores, reverse=True)[self.allowed - 1]


def rank_test(
    failing: Sequence[Collection[int]],
    missing: Sequence[Collection[int]],
    current_failing: Collection[int],
    current_missing: Collection[int],
    *,
    cases: int,
    false_alarm: float,
    prior: tuple[float, float] = PRIOR,
) -> RankTest:
    """Rank the CI run among the known-good runs.

    Parameters
    ----------
    failing, missing : sequence of collections of int
        For each known-good run, the cases (indices in ``range(cases)``) that failed, and
        those with no verdict.
    current_failing, current_missing : collection of int
        The same for the CI run.
    cases : int
        The suite's cases.
    false_alarm : float
        The budget: the CI run fails when fewer than ``floor(false_alarm (R + 1))`` of
        the R + 1 runs score at least as high as it does.
    """
    runs = [*failing, current_failing]
    gaps = [*missing, current_missing]
    fails = [0] * cases
    seen = [len(runs)] * cases
    for run in runs:
        for c in run:
            fails[c] += 1
    for gap in gaps:
        for c in gap:
            seen[c] -= 1
    cache: dict[tuple[int, int], int] = {}

    def score(run: Collection[int]) -> int:
        total = 0
        for c in run:
            key = (fails[c] - 1, seen[c] - 1)
            w = cache.get(key)
            if w is None:
                w = cache[key] = weight_units(key[0], key[1], cases, prior)
            total += w
        return total

    scores = tuple(score(run) for run in failing)
    mine = score(current_failing)
    at_least = sum(s >= mine for s in scores)
    return RankTest(
        score=mine,
        scores=scores,
        at_least=at_least,
        allowed=allowed_rank(false_alarm, len(failing)),
    )
