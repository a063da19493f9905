"""Which cases' failure rates changed between judges, or between time windows.

Each case is tested on its own, exactly: Fisher's exact test of its failures before
against after, given its failures in all (the margins), two-sided as twice the smaller
one-sided tail (as ``gatecal compare``'s per-case tests). A case whose
margins cannot reach the level whatever the split (one that never fails, or always
does) is no evidence either way and is not tested: that choice depends on the margins
only, so the error rate of those tested holds given them (Tarone 1990). Among those
tested, Holm's step-down keeps the chance of naming any unchanged case within `alpha`
(``multiplicity='holm'``, the default), or Benjamini-Hochberg its expected share
(``'bh'``).

Where the judge is named differently on each side, the split is where its name changes.
Within one judge's runs (a provider's update under an unchanged name) the split is not
known: every split leaving `min_runs` runs on each side is tried, and each case's
smallest p-value is multiplied by the number of splits tried (Bonferroni over the
splits), so the search costs its own level too.

References
----------
R. E. Tarone, "A modified Bonferroni method for discrete data", Biometrics 46 (1990).
S. Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist.
6 (1979).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._analyses.compare.paired import (
    benjamini_hochberg,
    case_p_value,
    holm,
    smallest_case_p_value,
)
from gatecal._common.validate import ParameterError

__all__ = ["MULTIPLICITY", "CaseShift", "Shift", "judge_shifts", "shift_between", "window_shift"]

MULTIPLICITY = ("holm", "bh")
#: Runs each side of a split searched within one judge's runs.
MIN_RUNS = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseShift:
    """One case's record before and after a split, and its exact test.

    Attributes
    ----------
    case : str
    before_failed, before_runs, after_failed, after_runs : int
        Failures and runs with a verdict (missing runs left out), each side.
    p_value : float
        Fisher's exact two-sided p-value (times the splits tried, for a searched split).
    adjusted : float
        After the multiplicity control (1 for a case whose margins cannot reach it).
    changed : bool
        `adjusted` at most the level.
    at : str
        The time of the first run after this case's split.
    """

    case: str
    before_failed: int
    before_runs: int
    after_failed: int
    after_runs: int
    p_value: float
    adjusted: float
    changed: bool
    at: str

    @property
    def direction(self) -> str:
        """``worse`` (fails more often after), ``better`` or ``same``."""
        before = self.before_failed * self.after_runs
        after = self.after_failed * self.before_runs
        return "worse" if after > before else "better" if after < before else "same"

    def describe(self) -> str:
        """``failed 0 of 10 runs before, 6 of 6 after``."""
        return (
            f"failed {self.before_failed} of {self.before_runs} runs before, "
            f"{self.after_failed} of {self.after_runs} after"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "before_failed": self.before_failed,
            "before_runs": self.before_runs,
            "after_failed": self.after_failed,
            "after_runs": self.after_runs,
            "p_value": self.p_value,
            "adjusted": self.adjusted,
            "changed": self.changed,
            "direction": self.direction,
            "at": self.at,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Shift:
    """A comparison of runs before a split with runs after it.

    Attributes
    ----------
    kind : str
        ``judge`` (the judge's name changes at the split), ``window`` (a split searched
        within one judge's runs) or ``split`` (a time the user gave).
    before, after : str
        The judge (or judges) on each side.
    at : str
        The time of the first run after the split (for ``window``: of the split most
        changed cases share).
    before_runs, after_runs : int
    splits : int
        Splits tried (1 unless searched).
    alpha : float
    multiplicity : str
    tested : int
        Cases whose margins can reach the level.
    cases : tuple of CaseShift
        Every tested case, most significant first.
    """

    kind: str
    before: str
    after: str
    at: str
    before_runs: int
    after_runs: int
    splits: int
    alpha: float
    multiplicity: str
    tested: int
    cases: tuple[CaseShift, ...]

    @property
    def changed(self) -> tuple[CaseShift, ...]:
        """The cases whose failure rate changed."""
        return tuple(c for c in self.cases if c.changed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "before": self.before,
            "after": self.after,
            "at": self.at,
            "before_runs": self.before_runs,
            "after_runs": self.after_runs,
            "splits": self.splits,
            "alpha": self.alpha,
            "multiplicity": self.multiplicity,
            "tested": self.tested,
            "changed": [c.case for c in self.changed],
            "cases": [c.to_dict() for c in self.cases],
        }


Outcome = npt.NDArray[np.int8]


def _check(alpha: float, multiplicity: str) -> None:
    if not 0 < alpha < 1:
        raise ParameterError("alpha", "must lie in (0, 1)", alpha)
    if multiplicity not in MULTIPLICITY:
        raise ParameterError(
            "multiplicity", f"must be one of {', '.join(MULTIPLICITY)}", multiplicity
        )


def _counts(outcome: Outcome, split: int) -> tuple[Any, Any, Any, Any]:
    """Per case: (passes, runs) before row `split`, and after."""
    before, after = outcome[:split], outcome[split:]
    return (
        (before == 1).sum(axis=0),
        (before >= 0).sum(axis=0),
        (after == 1).sum(axis=0),
        (after >= 0).sum(axis=0),
    )


def _adjust(raw: list[float], lows: list[float], alpha: float, multiplicity: str) -> list[float]:
    """The multiplicity control over the cases whose smallest p-value reaches `alpha`."""
    tested = [i for i, low in enumerate(lows) if low <= alpha]
    adjusted = [1.0] * len(raw)
    family = [raw[i] for i in tested]
    done = holm(family) if multiplicity == "holm" else benjamini_hochberg(family)
    for i, value in zip(tested, done, strict=True):
        adjusted[i] = value
    return adjusted


def _shift(
    outcome: Outcome,
    cases: Sequence[str],
    times: Sequence[str],
    splits: Sequence[int],
    *,
    kind: str,
    before: str,
    after: str,
    alpha: float,
    multiplicity: str,
) -> Shift:
    """Each case tested at each split (its smallest p times the splits tried)."""
    n_splits = len(splits)
    raw, lows, best = [], [], []
    counted = {s: _counts(outcome, s) for s in splits}
    for j in range(len(cases)):
        p_min, low_min, at = 1.0, 1.0, splits[0]
        for s in splits:
            bp, bn, cp, cn = (int(x[j]) for x in counted[s])
            if bn == 0 or cn == 0:
                continue
            total = bp + cp
            if total in (0, bn + cn):  # never fails, or always: no evidence
                continue
            low = smallest_case_p_value(bn, cn, total, "two-sided")
            low_min = min(low_min, low)
            p = case_p_value(bp, bn, cp, cn, "two-sided")
            if p < p_min:
                p_min, at = p, s
        raw.append(min(1.0, p_min * n_splits))
        lows.append(min(1.0, low_min * n_splits))
        best.append(at)
    adjusted = _adjust(raw, lows, alpha, multiplicity)
    shifts = []
    for j, case in enumerate(cases):
        if lows[j] > alpha:
            continue
        bp, bn, cp, cn = (int(x[j]) for x in counted[best[j]])
        shifts.append(
            CaseShift(
                case=case,
                before_failed=bn - bp,
                before_runs=bn,
                after_failed=cn - cp,
                after_runs=cn,
                p_value=raw[j],
                adjusted=adjusted[j],
                changed=adjusted[j] <= alpha,
                at=times[best[j]],
            )
        )
    shifts.sort(key=lambda c: (c.adjusted, c.p_value, c.case))
    flagged = [c for c in shifts if c.changed]
    common = max((c.at for c in flagged), key=[c.at for c in flagged].count) if flagged else None
    split = next(s for s in splits if common is None or times[s] == common)
    return Shift(
        kind=kind,
        before=before,
        after=after,
        at=times[split],
        before_runs=split,
        after_runs=len(times) - split,
        splits=n_splits,
        alpha=alpha,
        multiplicity=multiplicity,
        tested=sum(low <= alpha for low in lows),
        cases=tuple(shifts),
    )


def shift_between(
    outcome: Outcome,
    cases: Sequence[str],
    times: Sequence[str],
    split: int,
    *,
    kind: str = "split",
    before: str = "",
    after: str = "",
    alpha: float = 0.05,
    multiplicity: str = "holm",
) -> Shift:
    """The cases whose failure rate differs between rows before `split` and after.

    Parameters
    ----------
    outcome : ndarray of int8, shape (runs, cases)
        1 pass, 0 fail, -1 missing; runs in time order.
    cases, times : sequence of str
        The cases' names; each run's time.
    split : int
        The first run after the split (0 < split < runs).
    """
    _check(alpha, multiplicity)
    if not 0 < split < len(times):
        raise ParameterError(
            "split", f"must leave runs on both sides (0 < split < {len(times)})", split
        )
    return _shift(
        outcome, cases, times, [split],
        kind=kind, before=before, after=after, alpha=alpha, multiplicity=multiplicity,
    )  # fmt: skip


def judge_shifts(
    outcome: Outcome,
    cases: Sequence[str],
    times: Sequence[str],
    judges: Sequence[str],
    *,
    alpha: float = 0.05,
    multiplicity: str = "holm",
) -> tuple[Shift, ...]:
    """One :class:`Shift` per change of judge name: the runs of the judge before (back to
    its previous change) against the runs of the judge after (up to the next)."""
    _check(alpha, multiplicity)
    bounds = [i for i in range(1, len(judges)) if judges[i] != judges[i - 1]]
    edges = [0, *bounds, len(judges)]
    out = []
    for k, split in enumerate(bounds):
        start, stop = edges[k], edges[k + 2]
        out.append(
            shift_between(
                outcome[start:stop],
                cases,
                times[start:stop],
                split - start,
                kind="judge",
                before=judges[split - 1],
                after=judges[split],
                alpha=alpha,
                multiplicity=multiplicity,
            )
        )
    return tuple(out)


def window_shift(
    outcome: Outcome,
    cases: Sequence[str],
    times: Sequence[str],
    *,
    judge: str = "",
    alpha: float = 0.05,
    multiplicity: str = "holm",
    min_runs: int = MIN_RUNS,
) -> Shift | None:
    """The cases whose failure rate changed at some time within one judge's runs, the
    split searched (see the module's notes); None when the runs are too few to split."""
    _check(alpha, multiplicity)
    splits = list(range(min_runs, len(times) - min_runs + 1))
    if not splits:
        return None
    return _shift(
        outcome, cases, times, splits,
        kind="window", before=judge, after=judge, alpha=alpha, multiplicity=multiplicity,
    )  # fmt: skip
