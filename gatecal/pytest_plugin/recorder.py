"""The verdict recorder: :class:`GatecalVerdicts`, what the ``gatecal_verdicts`` fixture
hands a gated test that runs several checks, and the stash keys the session reads each
test's verdicts and phases from. Imports pytest only."""

from __future__ import annotations

import math
from typing import Any

import pytest

__all__ = ["KINDS", "PHASES", "RECORDER", "STATUSES", "GatecalVerdicts"]

KINDS = ("judge", "code")
STATUSES = ("ok", "error", "unscored")


class GatecalVerdicts:
    """The verdicts of a gated test that runs several checks: one :meth:`record` each.

    The test fails at its end if a recorded check did not pass, so a soft check is
    never lost; the gate sees every recorded check.
    """

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def record(
        self,
        check: str,
        passed: bool | None,
        *,
        kind: str = "judge",
        score: float | None = None,
        status: str = "ok",
    ) -> bool:
        """Record one check's verdict; return whether it passed.

        `passed` must be a bool when `status` is ``ok`` and None otherwise (an error or
        unscored verdict is never a pass).
        """
        if not isinstance(check, str) or not check.strip():
            raise ValueError(f"gatecal_verdicts: `check` must be a non-empty name (got {check!r})")
        if any(item["check"] == check for item in self.items):
            raise ValueError(f"gatecal_verdicts: check {check!r} recorded twice")
        if kind not in KINDS:
            raise ValueError(f"gatecal_verdicts: `kind` must be judge or code (got {kind!r})")
        if status not in STATUSES:
            rule = "must be ok, error or unscored"
            raise ValueError(f"gatecal_verdicts: `status` {rule} (got {status!r})")
        if status == "ok" and not isinstance(passed, bool):
            raise TypeError(f"gatecal_verdicts: `passed` must be True or False (got {passed!r})")
        if status != "ok" and passed is not None:
            raise ValueError(f"gatecal_verdicts: `passed` must be None when status is {status}")
        if score is not None and (isinstance(score, bool) or not math.isfinite(float(score))):
            raise ValueError(f"gatecal_verdicts: `score` must be a finite number (got {score!r})")
        self.items.append(
            {
                "check": check,
                "kind": kind,
                "passed": passed,
                "status": status,
                "score": None if score is None else float(score),
            }
        )
        return passed is True

    def not_passed(self) -> list[str]:
        """Checks recorded as failed, errored or unscored."""
        return [i["check"] for i in self.items if i["passed"] is not True]


RECORDER = pytest.StashKey[GatecalVerdicts]()
PHASES = pytest.StashKey[dict[str, str]]()
