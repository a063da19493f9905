"""What recommend writes: the gate chosen (always one: the loop never dead-ends), its
shortfall and what would close it, and the case-aware gate's part in it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._analyses.noise.casegate import (
    CASE_GATE_MAX_CASES,
    CaseGate,
    case_gate,
    measured_detection,
)
from gatecal._analyses.noise.cases import CaseSpread, case_spread
from gatecal._analyses.plan._search import SuitePlans
from gatecal._common.contracts import FieldsJSON
from gatecal._model.arrays import Floats
from gatecal._model.rankgate import allowed_rank
from gatecal.readers._data import RunsData

__all__ = [
    "ChosenGate",
    "MoreRuns",
    "case_aware",
    "choose",
    "regressed_outcome",
    "regressed_rates",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class MoreRuns:
    """What more known-good runs buy when no gate meets both targets.

    At the measured estimate (the beta-binomial fit's rate and icc), `k_min` is the
    strictest gate within the false-alarm budget, or None when at the estimate no gate
    of this suite meets both targets (more runs alone cannot help). `runs` is how many
    known-good runs in all, failing as the measured ones did (repeated in turn), would
    let the bounds certify it for both targets (:func:`runs_for_gate`); None when not
    even :data:`RUNS_FOR_GATE_MAX` would.
    """

    k_min: int | None
    runs: int | None
    measured_runs: int
    false_alarm: float
    detection: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "k_min": self.k_min,
            "runs": self.runs,
            "more": None if self.runs is None else self.runs - self.measured_runs,
            "false_alarm_at_estimate": self.false_alarm,
            "detection_at_estimate": self.detection,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ChosenGate(FieldsJSON):
    """The gate recommend names and writes, always (the loop never dead-ends).

    `kind` is ``cases`` (the case-aware gate, when the known-good runs show that cases
    differ) or ``count`` (at least `k_min` of n pass). It is the strictest valid gate:
    its false alarm is within the budget. `meets_targets` says whether its detection also
    reaches the target; when it does not, `shortfall` says by how much and what would
    close it. None of the kind's gate can fail a build only when `kind` is ``none``.
    """

    kind: str
    k_min: int | None
    false_alarm: float
    detection: float
    meets_targets: bool
    shortfall: str | None


def case_aware(
    data: RunsData,
    cases: list[str],
    outcome: npt.NDArray[np.int8],
    alpha: float,
    power: float,
    regressed_runs: int,
    failing_cases: float,
    low_rate: float,
    run_names: list[str] | None = None,
    *,
    estimate_detection: bool = True,
) -> tuple[CaseSpread | None, CaseGate | None, float | None]:
    """Each case's record, the case-aware gate and its detection of the regression (the
    share of measured regressed runs it fails, or its estimated detection of that many
    stable cases broken); Nones above :data:`CASE_GATE_MAX_CASES` cases. `estimate_detection`
    False: no detection is estimated (check decides with the gate alone)."""
    del power, low_rate
    if len(cases) > CASE_GATE_MAX_CASES:
        return None, None, None
    spread = case_spread(cases, outcome)
    k = max(1, round(failing_cases))
    ks = {1, 2, 3} if regressed_runs else {1, 2, 3, k}
    gate = case_gate(
        spread,
        outcome,
        run_names=run_names,
        false_alarm=alpha,
        stable_cases=sorted(ks) if estimate_detection else (),
    )
    if not estimate_detection:
        det = 0.0
    elif regressed_runs:
        det = measured_detection(gate, regressed_outcome(data, cases))
    else:
        det = gate.detection(k) or 0.0
    return spread, gate, det


def choose(
    *,
    n: int,
    table: tuple[tuple[float, float], ...],
    within_budget: int | None,
    recommended: int | None,
    spread: CaseSpread | None,
    gate: CaseGate | None,
    case_detection: float | None,
    power: float,
    plans: SuitePlans | None,
    more_runs: MoreRuns | None,
    runs: int,
) -> ChosenGate:
    """The gate to write: the case-aware gate when cases differ and it can fail a build,
    else the count gate (the strictest within budget), with its shortfall if any."""
    # the case-aware gate when cases differ, or when no count gate can be certified within
    # the budget (a clean deterministic suite: the rank gate needs no model of the noise)
    use_cases = (
        spread is not None
        and gate is not None
        and gate.can_fail
        and (spread.heterogeneous or within_budget is None)
    )
    if use_cases and gate is not None:
        det = 0.0 if case_detection is None else case_detection
        kind, k, fa = "cases", None, gate.false_alarm
    elif within_budget is not None:
        kind, k, (fa, det) = "count", within_budget, table[within_budget]
    else:
        return ChosenGate(
            kind="none",
            k_min=None,
            false_alarm=0.0,
            detection=0.0,
            meets_targets=False,
            shortfall=(
                "no gate keeps the false alarm within the budget: add cases or known-good runs"
            ),
        )
    if (kind == "count" and recommended is not None) or (kind == "cases" and det >= power):
        return ChosenGate(
            kind=kind, k_min=k, false_alarm=fa, detection=det, meets_targets=True, shortfall=None
        )
    return ChosenGate(
        kind=kind,
        k_min=k,
        false_alarm=fa,
        detection=det,
        meets_targets=False,
        shortfall=(
            _case_shortfall(det, power, runs, spread, gate)
            if kind == "cases"
            else _shortfall(det, power, plans, more_runs, runs, spread)
        ),
    )


def _shortfall(
    det: float,
    power: float,
    plans: SuitePlans | None,
    more: MoreRuns | None,
    runs: int,
    spread: CaseSpread | None,
) -> str:
    """One line: how far the gate's detection falls short, and what would close it (no
    majority vote when the noise is mostly systematic: the judge repeats itself)."""
    closes = []
    systematic = spread is not None and spread.mostly_systematic
    if plans is not None:
        for plan in plans.plans:
            if plan is not None and not (systematic and plan.policy.majority > 1):
                calls = plan.cases * plan.policy.majority
                closes.append(
                    f"{plan.cases} cases ({plan.policy.describe()}, {calls:g} judge calls a run)"
                )
    if more is not None and more.runs is not None and more.runs > runs:
        closes.append(f"{more.runs - runs} more known-good runs")
    what = "; would close it: " + " or ".join(closes) if closes else ""
    return f"detection {det:.3g}, short of the target {power:g}{what}"


def _case_shortfall(
    det: float,
    power: float,
    runs: int,
    spread: CaseSpread | None,
    gate: CaseGate | None,
) -> str:
    """One line for the case-aware gate: how far its detection falls short, and what would
    close it. The rank gate fails a CI run only when it is more surprising than all but a
    few known-good runs, so what holds it back is known-good runs with surprising failures
    of their own: flaky cases failing once (fix or quiet them), and at few runs the rank's
    resolution (more runs let the gate tolerate one more such run)."""
    short = f"detection {det:.3g}, short of the target {power:g}"
    closes = []
    if spread is not None and spread.mostly_systematic:
        closes.append(f"fix {_names(spread.systematic)} (judged wrong every time)")
    elif spread is not None and 2 * len(spread.systematic + spread.flaky) > spread.cases:
        noisy = len(spread.systematic + spread.flaky)
        closes.append(
            f"the judge errs on {noisy} of {spread.cases} cases: quiet it with repeated "
            f"calls (gatecal policies prices them) or fix the flakiest "
            f"({_names(_flakiest(spread))})"
        )
    elif spread is not None and spread.flaky:
        closes.append(f"fix or quiet the flaky cases ({_names(_flakiest(spread))})")
    more = runs if gate is None else next_allowed_runs(gate.false_alarm_target, runs)
    if more > runs:
        closes.append(
            f"{more - runs} more known-good runs (at {more} the gate tolerates one more "
            "known-good run as surprising as the CI run)"
        )
    what = "; would close it: " + " or ".join(closes) if closes else ""
    return short + what


def next_allowed_runs(false_alarm: float, runs: int) -> int:
    """The fewest known-good runs above `runs` at which the rank gate allows one more
    known-good run to score as high as the CI run."""
    if false_alarm <= 0:
        return runs  # no number of runs allows one
    now = allowed_rank(false_alarm, runs)
    more = runs + 1
    while allowed_rank(false_alarm, more) <= now:
        more += 1
    return more


def _flakiest(spread: CaseSpread) -> tuple[str, ...]:
    """The flaky cases, most failures first."""
    flaky = [r for r in spread.records if r.kind == "flaky"]
    return tuple(r.case for r in sorted(flaky, key=lambda r: -r.failures / max(r.runs, 1)))


def _names(cases: tuple[str, ...], most: int = 4) -> str:
    shown = ", ".join(cases[:most])
    return shown + (f" and {len(cases) - most} more" if len(cases) > most else "")


def regressed_outcome(data: RunsData, cases: list[str]) -> npt.NDArray[np.int8]:
    """The measured regressed runs' outcomes (runs x `cases`, short names; 1 pass, 0 fail,
    -1 not observed there)."""
    names = data.short_names()
    _, reg_cases, reg_outcome = data.outcome_array("regressed")
    column = {names[c]: j for j, c in enumerate(reg_cases)}
    padded = np.concatenate((reg_outcome, np.full((reg_outcome.shape[0], 1), -1, np.int8)), 1)
    return np.asarray(padded[:, [column.get(c, -1) for c in cases]], dtype=np.int8)


def regressed_rates(data: RunsData, cases: list[str], low_rate: float) -> Floats:
    """Each case's failure rate in the measured regressed runs, in the order of `cases`
    (short names); a case never observed there fails at `low_rate`."""
    names = data.short_names()
    _, reg_cases, reg_outcome = data.outcome_array("regressed")
    column = {names[c]: j for j, c in enumerate(reg_cases)}
    padded = np.concatenate((reg_outcome, np.full((reg_outcome.shape[0], 1), -1, np.int8)), 1)
    reg_outcome = padded[:, [column.get(c, -1) for c in cases]]  # -1: never reported
    reg_fail = (reg_outcome == 0).sum(axis=0)
    reg_seen = (reg_outcome >= 0).sum(axis=0)
    # each case at its observed failure rate in the regressed runs (cases that always
    # failed never pass); the noise of the rest is what those runs showed; a case
    # never observed there passes as often as the healthy build's lower bound allows
    return np.asarray(np.where(reg_seen > 0, reg_fail / np.maximum(reg_seen, 1), low_rate))
