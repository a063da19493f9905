"""What the controller makes of the marked tests' verdicts: a :class:`Result` per test as it
arrives (from this process or a worker), and :func:`marked_evidence`, the one evidence rule
(:mod:`gatecal._model.evidence`) applied to a set of them, by the count and case-aware
gates over the session and by the sequential gate repeat by repeat. Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from gatecal._model.evidence import MARKED_TESTS, evidence_reasons

__all__ = ["Result", "marked_evidence"]


@dataclass(slots=True)
class Result:
    """A marked test's verdicts as the controller received them."""

    case: str
    repeat: int
    verdicts: list[dict[str, Any]] | None  # None: skipped
    attempts: int = 1


def marked_evidence(
    nodeids: Iterable[str], results: Mapping[str, Result], *, where: str = "", stopped: str = ""
) -> tuple[list[str], dict[str, bool]]:
    """The marked tests `nodeids` under the one evidence rule (``gatecal._model.evidence``):
    (why they are incomplete evidence, each case's outcome on its ok verdicts).

    A test with no result gave no verdict (`stopped`: why the session stopped early), one
    whose verdicts are None was skipped, one with an error or unscored verdict errored;
    none of them is tolerated. A case passes when every ok verdict of its tests passed.
    """
    nodeids = list(nodeids)
    ran = [n for n in nodeids if n in results]
    errored = [n for n in ran if any(v["status"] != "ok" for v in results[n].verdicts or ())]
    reasons = evidence_reasons(
        missing=[n for n in nodeids if n not in results],
        cases=len(nodeids),
        gaps=(),
        skipped=[n for n in ran if results[n].verdicts is None],
        errors=errored,
        max_errors=0,
        subject=MARKED_TESTS,
        where=where,
        stopped=stopped,
    )
    outcome: dict[str, bool] = {}
    for n in ran:
        r = results[n]
        for v in r.verdicts or ():
            if v["status"] == "ok":
                outcome[r.case] = outcome.get(r.case, True) and v["passed"] is True
    return reasons, outcome
