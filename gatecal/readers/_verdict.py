"""A verdict, the row every reader produces, and the long table's columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "BUILDS",
    "COMPONENT",
    "LONG_COLUMNS",
    "OPTIONAL_COLUMNS",
    "STATUSES",
    "RunsError",
    "Verdict",
]

BUILDS = ("healthy", "regressed")
STATUSES = ("ok", "error", "unscored")
# The long table's columns, in the order `gatecal runs --format csv` writes them.
LONG_COLUMNS = (
    "build",
    "run",
    "case",
    "check",
    "kind",
    "passed",
    "status",
    "score",
    "session",
    "attempts",
    "cached",
    "source",
)
# Written after LONG_COLUMNS when any row has them: what the case's run cost, as the source
# reports it (promptfoo's `cost` and `tokenUsage.total`), on the first row of a (run, case).
OPTIONAL_COLUMNS = ("cost", "tokens")
# The status of a check underneath a case-level verdict (promptfoo's assertions under a
# test-level `threshold:`): read and written with the long table, never a verdict.
COMPONENT = "component"


class RunsError(ValueError):
    """Input that is not what it claims: the message names the file, line or element."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """One reported verdict of one check (or one whole case) in one run.

    Attributes
    ----------
    build, run, case : str
        ``healthy`` or ``regressed``; the run (one invocation or one repeat of the
        suite); the case's full id (e.g. ``classname.test_name[param]``).
    check : str
        The check (an assertion, metric or scorer); ``""`` when the source gives one
        verdict per case.
    kind : str
        ``judge`` (an LLM answers; can be wrong), ``code`` (plain code) or ``""``.
    passed : bool or None
        The verdict; None exactly when `status` is neither ``ok`` nor ``component``.
    status : str
        ``ok``; ``error`` (the check or the system under test failed to run: neither
        a pass nor a failure); ``unscored`` (no verdict, e.g. a NaN score).
    score : float or None
        The numeric score where the source gives one.
    session : str
        The invocation the run came from (a file, a log, an eval id): repeats inside
        one session share a process and a time window.
    attempts : int
        Attempts behind this verdict (reruns of a failed test make it > 1).
    cached : bool
        The source says the response was replayed from a cache.
    source : str
        The file it was read from.
    cost : float or None
        What producing this (run, case) cost, in the source's currency (promptfoo:
        USD), on the first verdict of the (run, case) only, so that a sum over rows
        is the total.
    tokens : int or None
        Tokens the (run, case) used (promptfoo's ``tokenUsage.total``), placed as `cost`.

    A verdict with status ``component`` (only in :attr:`RunsData.components`) is a check
    underneath a case-level verdict: it keeps its `passed` but decides nothing.
    """

    build: str
    run: str
    case: str
    check: str = ""
    kind: str = ""
    passed: bool | None
    status: str = "ok"
    score: float | None = None
    session: str = ""
    attempts: int = 1
    cached: bool = False
    source: str = ""
    cost: float | None = None
    tokens: int | None = None

    def to_record(self) -> dict[str, Any]:
        """The verdict as a row of the long table with typed values (JSONL, pandas)."""
        record = {
            **self.to_row(),
            "passed": self.passed,
            "score": self.score,
            "cached": self.cached,
        }
        for key in OPTIONAL_COLUMNS:
            if key in record:
                record[key] = getattr(self, key)
        return record

    def to_row(self) -> dict[str, Any]:
        """The verdict as a row of the long table (LONG_COLUMNS, then `cost` and `tokens`
        where set)."""
        row = {
            "build": self.build,
            "run": self.run,
            "case": self.case,
            "check": self.check,
            "kind": self.kind,
            "passed": "" if self.passed is None else ("true" if self.passed else "false"),
            "status": self.status,
            "score": "" if self.score is None else repr(self.score),
            "session": self.session,
            "attempts": self.attempts,
            "cached": "true" if self.cached else "false",
            "source": self.source,
        }
        if self.cost is not None:
            row["cost"] = repr(self.cost)
        if self.tokens is not None:
            row["tokens"] = self.tokens
        return row
