"""The case-aware gate: the CI run ranked among the known-good runs by its surprise.

**The statistic.** Each failing case weighs by how surprising its failure is given its own
record (:mod:`gatecal._model.rankgate`): ``log(1 + eps / ((1 - eps) rate))`` with the
case's rate estimated from the other runs. A case that never failed weighs most, one that
fails half the time little, a systematic case nothing. When every case has one record,
every weight is the same and the statistic is the count of failing cases.

**The calibration.** The known-good runs themselves: each of the R + 1 runs (the known-good
ones and the CI run) is scored against the other R, and the CI run fails when it outranks
all but fewer than ``floor(false_alarm (R + 1))`` of them. Under exchangeable healthy runs
(any per-case rates, whole-run effects included) the false alarm is at most
``floor(false_alarm (R + 1)) / (R + 1)`` exactly: no model of the rates, no bound on the
run correlation. It averages over the known-good runs a judge may produce: one set of
runs' own false alarm varies around it (``experiments/case_gate_coverage.py`` measures by
how much). Where it stops holding: runs that are not exchangeable (a judge that drifts
between the known-good runs and CI, a baseline recorded under another model or prompt);
with fewer than ``ceil(1 / false_alarm) - 1`` known-good runs (19 at 0.05) it can fail
nothing.

**What it can see.** Its detection of k broken stable cases is estimated from the runs
themselves: each known-good run in turn plays the CI run with k stable cases broken,
ranked against the other known-good runs (one run fewer than the gate has: a slightly
low estimate).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._analyses.noise.cases import CaseSpread
from gatecal._common.validate import ParameterError, check_probability
from gatecal._model.rankgate import (
    PRIOR,
    UNITS,
    RankTest,
    allowed_rank,
    rank_test,
    runs_needed,
    weight_units,
)

__all__ = [
    "CASE_GATE_MAX_CASES",
    "CaseGate",
    "case_gate",
    "measured_detection",
    "stable_order",
]

#: Above this many cases recommend and check keep the count gate (a gate file lists each
#: known-good run's failing cases; the detection estimate ranks R runs R times).
CASE_GATE_MAX_CASES = 2000


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CaseGate:
    """The case-aware gate: the CI run fails when its failing cases are more surprising
    than all but a few known-good runs' (the rank rule of :mod:`gatecal._model.rankgate`).

    Attributes
    ----------
    cases : tuple of str
        The baseline's cases, in order (short names).
    rates : tuple of float
        Each case's healthy (predictive) failure rate, from its record (for display).
    kinds : tuple of str
        Each case's kind: stable, flaky or systematic.
    failures, runs : tuple of int
        Each case's record in the known-good runs.
    run_names : tuple of str
        The known-good runs, in order.
    failing, missing : tuple of tuple of int
        For each known-good run, the cases (indices) that failed and those with no verdict.
    allowed : int
        The CI run fails when fewer than this many known-good runs score at least as high
        (``floor(false_alarm_target (R + 1))``); 0: the gate can fail nothing.
    false_alarm : float
        ``allowed / (R + 1)``: the false alarm, exact under exchangeable healthy runs.
    false_alarm_target : float
    detections : tuple of (int, float)
        (k, estimated detection) of a regression that breaks k stable cases.
    """

    cases: tuple[str, ...]
    rates: tuple[float, ...]
    kinds: tuple[str, ...]
    failures: tuple[int, ...]
    runs: tuple[int, ...]
    run_names: tuple[str, ...]
    failing: tuple[tuple[int, ...], ...]
    missing: tuple[tuple[int, ...], ...]
    allowed: int
    false_alarm: float
    false_alarm_target: float
    detections: tuple[tuple[int, float], ...]

    def __repr__(self) -> str:
        """One line, whatever the number of cases."""
        return (
            f"<gatecal.CaseGate: {len(self.cases)} cases ranked among "
            f"{self.known_good_runs} known-good runs, false alarm {self.false_alarm:.4g} "
            f"(target {self.false_alarm_target:.4g})>"
        )

    @property
    def known_good_runs(self) -> int:
        return len(self.failing)

    @property
    def can_fail(self) -> bool:
        return self.allowed >= 1

    @property
    def runs_needed(self) -> int:
        """The fewest known-good runs with which this budget can fail a run."""
        return runs_needed(self.false_alarm_target)

    def test(self, failed: Sequence[int], missing: Sequence[int] = ()) -> RankTest:
        """Rank a CI run whose failing cases (indices) are `failed` among the known-good
        runs."""
        return rank_test(
            self.failing,
            self.missing,
            failed,
            missing,
            cases=len(self.cases),
            false_alarm=self.false_alarm_target,
        )

    def weight(self, i: int) -> float:
        """What a failure of case `i` alone weighs against the known-good runs (in units of
        log-likelihood ratio)."""
        return weight_units(self.failures[i], self.runs[i], len(self.cases)) / UNITS

    def detection(self, k: int) -> float | None:
        """The estimated detection of k broken stable cases (None if not computed)."""
        for kk, det in self.detections:
            if kk == k:
                return det
        return None

    def describe(self) -> str:
        """The gate in words."""
        r = self.known_good_runs
        if not self.can_fail:
            return (
                f"rank the CI run among {r} known-good runs: {self.runs_needed} are needed "
                f"to fail anything within {self.false_alarm_target:g}"
            )
        beaten = r - self.allowed + 1
        return (
            f"fail when the failing cases are more surprising than in {beaten} of the {r} "
            f"known-good runs (each case weighed by its own record: a case that never failed "
            f"weighs {self._stable_weight():.2f}, a systematic one about 0)"
        )

    def _stable_weight(self) -> float:
        return weight_units(0, self.known_good_runs, len(self.cases)) / UNITS

    def stable_needed(self) -> int | None:
        """How many stable cases failing alone (and nothing else) fail the build (None if no
        number does)."""
        order = [i for i in stable_order(self) if self.kinds[i] == "stable"]
        for k in range(1, len(order) + 1):
            if self.test(order[:k]).fails:
                return k
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "cases",
            "method": "rank",
            "prior": list(PRIOR),
            "units": UNITS,
            "allowed": self.allowed,
            "false_alarm": self.false_alarm,
            "false_alarm_target": self.false_alarm_target,
            "runs_needed": self.runs_needed,
            "stable_needed": self.stable_needed(),
            "detections": [{"stable_cases": k, "detection": d} for k, d in self.detections],
            "cases": [
                {"case": c, "failures": f, "runs": r, "rate": p, "kind": kd}
                for c, f, r, p, kd in zip(
                    self.cases, self.failures, self.runs, self.rates, self.kinds, strict=True
                )
            ],
            "known_good_runs": [
                {"run": name, "failing": list(f), "missing": list(m)}
                for name, f, m in zip(self.run_names, self.failing, self.missing, strict=True)
            ],
        }


def case_gate(
    spread: CaseSpread,
    outcome: npt.ArrayLike,
    *,
    run_names: Sequence[str] | None = None,
    false_alarm: float = 0.05,
    stable_cases: Sequence[int] = (1, 2, 3),
) -> CaseGate:
    """The case-aware gate of a measured suite within the false-alarm budget.

    Parameters
    ----------
    spread : CaseSpread
        The known-good runs' per-case records (:func:`gatecal._analyses.noise.cases.case_spread`).
    outcome : array of int, runs x cases
        The known-good runs the records were measured from (1 pass, 0 fail, -1 not observed).
    run_names : sequence of str, optional
        The runs' names, in order.
    false_alarm : float
        The budget.
    stable_cases : sequence of int
        The regressions (k stable cases broken) whose detection is estimated.
    """
    alpha = check_probability("false_alarm", false_alarm)
    y = np.asarray(outcome, dtype=np.int8)
    if y.ndim != 2 or y.shape[1] != spread.cases:
        raise ParameterError("outcome", "must be runs x cases, one column per case", y.shape)
    r = y.shape[0]
    names = tuple(run_names) if run_names is not None else tuple(f"run-{j + 1}" for j in range(r))
    if len(names) != r:
        raise ParameterError("run_names", f"must name the {r} runs", len(names))
    failing = tuple(tuple(np.flatnonzero(row == 0).tolist()) for row in y)
    missing = tuple(tuple(np.flatnonzero(row < 0).tolist()) for row in y)
    allowed = allowed_rank(alpha, r)
    gate = CaseGate(
        cases=tuple(rec.case for rec in spread.records),
        rates=tuple(float(p) for p in spread.rates().tolist()),
        kinds=tuple(rec.kind for rec in spread.records),
        failures=tuple(rec.failures for rec in spread.records),
        runs=tuple(rec.runs for rec in spread.records),
        run_names=names,
        failing=failing,
        missing=missing,
        allowed=allowed,
        false_alarm=allowed / (r + 1),
        false_alarm_target=alpha,
        detections=(),
    )
    dets = tuple((k, d) for k in stable_cases if (d := _jackknife(gate, k)) is not None)
    return replace(gate, detections=dets)


def stable_order(gate: CaseGate) -> list[int]:
    """The cases a regression of stable cases breaks, in turn: the stable cases (those with
    the most runs first: the hardest to call new), then the flaky ones, lowest rate first."""
    stable = sorted(
        (j for j, k in enumerate(gate.kinds) if k == "stable"), key=lambda j: -gate.runs[j]
    )
    rest = sorted(
        (j for j, k in enumerate(gate.kinds) if k == "flaky"),
        key=lambda j: gate.failures[j] / max(gate.runs[j], 1),
    )
    return stable + rest


def _jackknife(gate: CaseGate, k: int) -> float | None:
    """The share of known-good runs that, with k stable cases broken and ranked against the
    other known-good runs, fail the gate (None when k is out of range)."""
    order = stable_order(gate)
    r = gate.known_good_runs
    if k < 1 or k > len(order) or r < 2:
        return None
    broken = set(order[:k])
    caught = 0
    for j in range(r):
        others_f = gate.failing[:j] + gate.failing[j + 1 :]
        others_m = gate.missing[:j] + gate.missing[j + 1 :]
        current = sorted(set(gate.failing[j]) | broken)
        gaps = [c for c in gate.missing[j] if c not in broken]
        test = rank_test(
            others_f,
            others_m,
            current,
            gaps,
            cases=len(gate.cases),
            false_alarm=gate.false_alarm_target,
        )
        caught += test.at_least < gate.allowed  # the gate's own rank rule
    return caught / r


def measured_detection(gate: CaseGate, outcome: npt.ArrayLike) -> float:
    """The share of measured regressed runs (`outcome`: runs x the gate's cases, 1 pass,
    0 fail, -1 not observed) that the gate fails."""
    y = np.asarray(outcome, dtype=np.int8)
    if not y.shape[0]:
        return 0.0
    caught = 0
    for row in y:
        test = gate.test(np.flatnonzero(row == 0).tolist(), np.flatnonzero(row < 0).tolist())
        caught += test.fails
    return caught / int(y.shape[0])
