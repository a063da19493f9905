"""``gatecal history``: each case's record over time, and whether the judge changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from gatecal._analyses.history.changes import Shift, judge_shifts, shift_between, window_shift
from gatecal._common.contracts import json_header
from gatecal._common.display import Displayed
from gatecal._common.validate import ParameterError

if TYPE_CHECKING:
    from gatecal.store._select import RunRecord, StoredRuns

__all__ = ["History", "baseline_warnings", "case_history"]


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class History(Displayed):
    """Each case's record over the stored runs, and the cases whose rate changed.

    Attributes
    ----------
    store : str
        Where the runs were read (password masked).
    selection : str
        Which runs, in words.
    runs : tuple of RunRecord
        Oldest first.
    cases : tuple of str
    short : tuple of str
        The cases' display names.
    grid : tuple of str
        One string per case, one character per run: ``.`` pass, ``x`` fail, ``-`` no
        verdict.
    judges : tuple of Shift
        One per change of the judge's name: the cases that moved.
    window : Shift or None
        Within the latest judge's runs, the cases whose rate changed at some time
        (the split searched), or at the time given (``split``).
    describes_today : bool
        Whether the latest judge's runs, taken as a baseline, still describe that
        judge today: no case changed within them.
    advice : str
        What to select as the baseline.
    """

    store: str
    selection: str
    runs: tuple[RunRecord, ...]
    cases: tuple[str, ...]
    short: tuple[str, ...]
    grid: tuple[str, ...]
    judges: tuple[Shift, ...]
    window: Shift | None
    describes_today: bool
    advice: str

    _renderer: ClassVar[str] = "gatecal._render.history"

    @property
    def changed(self) -> tuple[str, ...]:
        """Every case named as changed (between judges or within the latest judge's runs)."""
        found = [c.case for s in (*self.judges, *self.shifts_within()) for c in s.changed]
        return tuple(dict.fromkeys(found))

    def shifts_within(self) -> tuple[Shift, ...]:
        return () if self.window is None else (self.window,)

    def summary(self) -> str:
        """The answer first: does the baseline still describe today's judge."""
        latest = self.runs[-1].judge
        if self.describes_today:
            head = f"the latest judge's runs ({latest}) still describe it"
        else:
            head = f"the record of judge {latest} changed: {self.advice}"
        moved = sum(len(s.changed) for s in self.judges)
        if self.judges:
            head += f"; {moved} case(s) moved at {len(self.judges)} judge change(s)"
        return f"{head} ({len(self.runs)} runs, {len(self.cases)} cases)"

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``gatecal.history``, its header first."""
        return {
            **json_header("history"),
            "store": self.store,
            "selection": self.selection,
            "describes_today": self.describes_today,
            "advice": self.advice,
            "changed": list(self.changed),
            "runs": [r.to_dict() for r in self.runs],
            "cases": [
                {"case": c, "short": s, "record": g}
                for c, s, g in zip(self.cases, self.short, self.grid, strict=True)
            ],
            "judge_changes": [s.to_dict() for s in self.judges],
            "window": None if self.window is None else self.window.to_dict(),
        }

    def to_frame(self) -> Any:
        """The tested cases of every comparison, one row each."""
        import pandas as pd  # deferred: `import gatecal` stays light

        rows = [
            {"kind": s.kind, "before": s.before, "after": s.after, **c.to_dict()}
            for s in (*self.judges, *self.shifts_within())
            for c in s.cases
        ]
        return pd.DataFrame(rows)


def _latest_segment(judges: list[str]) -> int:
    """The first run of the latest judge's last stretch."""
    start = len(judges) - 1
    while start > 0 and judges[start - 1] == judges[-1]:
        start -= 1
    return start


def case_history(
    stored: StoredRuns,
    *,
    alpha: float = 0.05,
    multiplicity: str = "holm",
    split: str | None = None,
) -> History:
    """Each case's record over `stored`'s runs, and the cases whose failure rate changed.

    Parameters
    ----------
    stored : StoredRuns
        Runs read from a store (``gatecal.store.stored_runs``), oldest first.
    alpha : float, default 0.05
        The level of the per-case tests, after the multiplicity control.
    multiplicity : {'holm', 'bh'}, default 'holm'
    split : str, optional
        A store time: compare the latest judge's runs before it with those after it
        (no search); by default the split is searched.

    Returns
    -------
    History
    """
    data = stored.data
    runs, cases, outcome = data.outcome_array("healthy")
    records = stored.runs
    if [r.run for r in records] != runs:
        raise ParameterError("stored", "must list its runs in the order of its data", "")
    judges = [r.judge for r in records]
    times = [r.recorded_at for r in records]
    between = judge_shifts(outcome, cases, times, judges, alpha=alpha, multiplicity=multiplicity)
    start = _latest_segment(judges)
    latest = judges[-1]
    seg_out, seg_times = outcome[start:], times[start:]
    if split is not None:
        at = next((i for i, t in enumerate(seg_times) if t >= split), len(seg_times))
        if not 0 < at < len(seg_times):
            raise ParameterError("split", f"must fall between two runs of judge {latest!r}", split)
        window: Shift | None = shift_between(
            seg_out, cases, seg_times, at, before=latest, after=latest,
            alpha=alpha, multiplicity=multiplicity,
        )  # fmt: skip
    else:
        window = window_shift(
            seg_out, cases, seg_times, judge=latest, alpha=alpha, multiplicity=multiplicity
        )
    moved = window is not None and bool(window.changed)
    if moved and window is not None:
        names = ", ".join(c.case for c in window.changed[:5])
        advice = (
            f"case(s) {names} changed at {window.at}: take the baseline since then "
            f"(--since {window.at})"
        )
    elif len(set(judges)) > 1:
        advice = f"take its runs as the baseline (--judge {latest})"
    else:
        advice = "the baseline can be taken as it is"
    symbol = {1: ".", 0: "x", -1: "-"}
    grid = tuple("".join(symbol[int(v)] for v in outcome[:, j]) for j in range(len(cases)))
    short = data.short_names()
    return History(
        store=stored.store,
        selection=stored.selection.describe(),
        runs=tuple(records),
        cases=tuple(cases),
        short=tuple(short[c] for c in cases),
        grid=grid,
        judges=between,
        window=window,
        describes_today=not moved,
        advice=advice,
    )


def baseline_warnings(
    stored: StoredRuns,
    latest: RunRecord | None = None,
    *,
    recent: StoredRuns | None = None,
    alpha: float = 0.05,
) -> list[str]:
    """What check says when its baseline may not describe today's judge: the baseline
    spans a change of judge (by name, or cases whose rate moved within one judge's
    runs), or the store's latest known-good run is another judge's; and, given `recent`
    (the store's latest runs of every judge) for a baseline shorter than asked, that
    its judge took over recently and which cases moved then."""
    history = case_history(stored, alpha=alpha)
    out = []
    judge = stored.runs[-1].judge
    if recent is not None and len(set(stored.judges())) == 1:
        for shift in case_history(recent, alpha=alpha).judges:
            if shift.after == judge:
                names = ", ".join(c.case for c in shift.changed[:5]) or "none significantly"
                out.append(
                    f"the judge changed recently ({shift.before} -> {judge} at {shift.at}; "
                    f"cases that moved: {names}): the baseline holds only "
                    f"{len(stored.runs)} runs of {judge}"
                )
    for shift in history.judges:
        names = ", ".join(c.case for c in shift.changed[:5]) or "no case significantly"
        out.append(
            f"the baseline spans a judge change ({shift.before} -> {shift.after} at "
            f"{shift.at}); cases that moved: {names}. Take one judge's runs "
            f"(--judge {stored.runs[-1].judge})"
        )
    window = history.window
    if window is not None and window.changed:
        names = ", ".join(c.case for c in window.changed[:5])
        out.append(
            f"the baseline spans a judge change: case(s) {names} changed their failure "
            f"rate at {window.at} (exact test per case, {window.multiplicity}); take the "
            f"runs since then (--since {window.at})"
        )
    if latest is not None and latest.judge != stored.runs[-1].judge:
        out.append(
            f"the baseline is judge {stored.runs[-1].judge}'s, but the store's latest "
            f"known-good run is judge {latest.judge}'s ({latest.recorded_at}): the "
            "baseline may no longer describe today's judge"
        )
    return out
