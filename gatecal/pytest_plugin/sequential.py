"""The pytest plugin's sequential gate: boundaries read from JSON, decided across repeats.

``pytest --gatecal-sequential FILE --gatecal-repeat N``: FILE is a JSON object with
``boundaries`` (``look``, ``pass_at_least``, ``fail_at_most``, on the passing marked cases
summed over the repeats so far) and ``cases`` (``gatecal check --policy sprt-5 --format
json`` writes one, so does ``SequentialDesign.to_dict()``); each repeat is one run, one
look. Without pytest-xdist the tests run repeat after repeat and the session stops once a
boundary is crossed (the later repeats cost nothing); under xdist every repeat runs and
the first crossing decides. Exit 0 when the gate passes, 1 when it fails, and 1 when no
boundary is crossed within the N repeats (CONTINUE, incomplete evidence: N is below the
design's looks, and a new session starts a new sequence, so run all its looks at once).
Missing, skipped or errored verdicts in the repeats the decision rests on, a deselected
marked test, or boundaries for another number of cases are incomplete evidence (exit 1).

The repeats of one session run back to back and share the judge's flip rate: the file
``gatecal check`` writes says (``"runs": "shared"``, its default) that its boundaries were
designed and quoted under that model; a file designed with ``--runs-independent`` is
used, with a line that says so.

Standard library only, as the plugin: the boundaries are computed by gatecal elsewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeGuard

import pytest

from gatecal._model.sequential import walk_boundaries
from gatecal.pytest_plugin.results import marked_evidence

__all__ = ["SequentialRule", "decide", "from_options", "load_rule", "stop_once_decided", "walk"]


@dataclass(frozen=True, slots=True)
class SequentialRule:
    """A sequential gate's boundaries on the passing cases summed over the runs so far.

    ``boundaries[j - 1] = (pass_at_least, fail_at_most)`` after run j; at the last look
    they meet, so the last look always decides.
    """

    name: str
    cases: int
    boundaries: tuple[tuple[int, int], ...]
    source: str
    runs: str = ""  # the run model the file says its boundaries were designed under

    @property
    def looks(self) -> int:
        return len(self.boundaries)

    def decide(
        self, passing: list[int]
    ) -> tuple[Literal["pass", "fail", "continue"], int, list[int]]:
        """The decision on the runs so far (passing cases per run, in order): the first
        look whose boundary is crossed, or ``continue`` after the last run given; with
        the look and the running sums up to it."""
        return walk_boundaries(passing, self.boundaries)


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def load_rule(path: str | Path) -> SequentialRule:
    """Read a JSON object with ``boundaries`` (a list of ``look``, ``pass_at_least``,
    ``fail_at_most``) and ``cases``; ValueError with the rule broken otherwise."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"could not be read ({exc.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("must be a JSON file") from None
    if not isinstance(data, dict) or not isinstance(data.get("boundaries"), list):
        raise ValueError("must be a JSON object with a 'boundaries' list")
    cases = data.get("cases")
    if not _whole(cases) or cases < 1:
        raise ValueError(f"must give 'cases', a whole number >= 1 (got {cases!r})")
    bounds = []
    for j, b in enumerate(data["boundaries"], start=1):
        top = j * cases
        if not isinstance(b, dict) or b.get("look") != j:
            raise ValueError(f"boundary {j} must be an object with look {j}")
        s, f = b.get("pass_at_least"), b.get("fail_at_most")
        if not (_whole(s) and _whole(f) and -1 <= f < s <= top + 1):
            rule = f"-1 <= fail_at_most < pass_at_least <= {top + 1}"
            raise ValueError(f"boundary {j} must have whole numbers with {rule} (got {b!r})")
        bounds.append((s, f))
    if not bounds or bounds[-1][0] != bounds[-1][1] + 1:
        raise ValueError("boundaries must meet at the last look (pass_at_least = fail_at_most + 1)")
    name = data.get("policy") or (
        f"{data['design']}-{len(bounds)}" if isinstance(data.get("design"), str) else "sequential"
    )
    runs = data.get("runs")
    if runs is not None and runs not in ("shared", "independent"):
        raise ValueError(f"'runs' must be 'shared' or 'independent' (got {runs!r})")
    return SequentialRule(
        name=str(name),
        cases=cases,
        boundaries=tuple(bounds),
        source=str(path),
        runs=runs or "",
    )


_REPEAT_TOKEN = re.compile(r"[\[-]gatecal-r(\d+)[\]-]")


def nodeid_repeat(nodeid: str) -> int:
    """The repeat a collected copy of a marked test belongs to (0: not a repeat)."""
    found = _REPEAT_TOKEN.search(nodeid)
    return int(found.group(1)) if found else 0


@dataclass(frozen=True, slots=True)
class Walk:
    """The repeats walked in order up to a decision or to the first incomplete one."""

    decision: Literal["pass", "fail", "continue"]
    look: int
    passing: list[int]
    sums: list[int]
    gap: int  # the first repeat lacking evidence (0: none up to `look`)
    gaps: list[str]  # what it lacks
    later: str | None = None  # a later repeat that would change a pass (incomplete)


def walk(rule: SequentialRule, repeat: int, gated: dict[str, str], results: dict[str, Any]) -> Walk:
    """Repeats 1..`repeat` in turn: a repeat counts once every marked test of it gave ok
    verdicts; the first boundary crossed decides (`results`: nodeid -> the plugin's
    result, with ``verdicts`` None when skipped). A pass with later repeats that ran is
    kept only if they would not change it (the evidence rule, _model/evidence.py): else
    `later` says why and the evidence is incomplete."""
    from gatecal._model.evidence import order_reason

    by_repeat: dict[int, list[str]] = {}
    for nodeid in gated:
        by_repeat.setdefault(nodeid_repeat(nodeid), []).append(nodeid)

    def counted(j: int) -> tuple[int, list[str]]:
        nodeids = by_repeat.get(j, [])
        gaps, outcome = marked_evidence(nodeids, results, where=f"run {j}: ")
        return sum(outcome.values()), gaps if nodeids else [f"run {j}: none ran"]

    def decide(passing: Sequence[int]) -> tuple[str, int]:
        decision, look, _ = rule.decide(list(passing))
        return decision, look

    passing: list[int] = []
    for j in range(1, repeat + 1):
        k, gaps = counted(j)
        if gaps:
            return Walk("continue", j, passing, rule.decide(passing)[2], j, gaps)
        passing.append(k)
        decision, look, sums = rule.decide(passing)
        if decision != "continue":
            later = None
            if decision == "pass":
                rest = [counted(t) for t in range(j + 1, repeat + 1)]
                ran = [k for k, g in rest if not g]  # later repeats that ran whole
                later = order_reason(decide, [*passing, *ran])
            return Walk(decision, look, passing, sums, 0, [], later)
    decision, look, sums = rule.decide(passing)
    return Walk(decision, look, passing, sums, 0, [])


def decide(
    rule: SequentialRule,
    repeat: int,
    gated: dict[str, str],
    results: dict[str, Any],
    reasons: list[str],
    tail: str,
    unmarked: bool,
) -> tuple[str, str, int]:
    """(decision, the line the plugin prints, the exit status) at the end of the session;
    `reasons` are gaps found before any repeat is walked, `tail` the unmarked failures."""
    cases = len(set(gated.values()))
    if gated and cases != rule.cases:
        reasons.append(
            f"{rule.source} holds boundaries for {rule.cases} cases and this session gates {cases}"
        )
    head = f"gatecal: sequential gate {rule.name}"
    if rule.runs == "independent":  # the repeats of one session share the judge's rate
        head += (
            " (designed for runs that each draw their own flip rate: its false alarm is "
            "higher when repeats share one; design it with the default --runs-share-rate)"
        )
    state = walk(rule, repeat, gated, results)
    if not reasons and state.gap:
        reasons += state.gaps
    if not reasons and state.later:
        reasons.append(state.later)
    if reasons:
        line = f"{head} INCOMPLETE, exit 1: incomplete evidence never passes: "
        return "incomplete", line + "; ".join(reasons) + tail, 1
    sums = ", ".join(str(s) for s in state.sums)
    at_least, at_most = rule.boundaries[state.look - 1]
    seen = f"passing cases summed over runs 1..{state.look}: {sums}"
    if state.decision == "continue":
        return (
            "continue",
            f"{head} CONTINUE, exit 1: after {state.look} of {rule.looks} runs ({seen}) no "
            f"boundary is crossed (fail at most {at_most}, pass at least {at_least}); "
            f"the evidence is incomplete: run all {rule.looks} (--gatecal-repeat "
            f"{rule.looks} stops at the first decision){tail}",
            1,
        )
    if state.decision == "pass":
        status = 1 if unmarked else 0
        return (
            "pass",
            f"{head} PASSED after run {state.look} of {rule.looks} ({seen}; pass at least "
            f"{at_least}), exit {status}{tail}",
            status,
        )
    return (
        "fail",
        f"{head} FAILED after run {state.look} of {rule.looks} ({seen}; fail at most "
        f"{at_most}), exit 1{tail}",
        1,
    )


def from_options(config: pytest.Config, gate: Any, repeat: int, gate_option: str) -> SequentialRule:
    """--gatecal-sequential FILE, read and checked against the other options."""
    path = config.getoption("gatecal_sequential")
    if gate is not None:
        raise pytest.UsageError(
            f"gatecal: --gatecal-sequential can't be combined with {gate_option} (got {path!r})"
        )
    try:
        rule = load_rule(path)
    except ValueError as exc:
        raise pytest.UsageError(f"gatecal: --gatecal-sequential {path} {exc}") from None
    if not 1 <= repeat <= rule.looks:
        raise pytest.UsageError(
            f"gatecal: --gatecal-sequential needs --gatecal-repeat N with N in [1, "
            f"{rule.looks}] (the runs of its {rule.looks} looks) (got {repeat or None!r})"
        )
    return rule


def stop_once_decided(
    session: pytest.Session,
    rule: SequentialRule,
    repeats: int,
    repeat: int,
    gated: dict[str, str],
    results: dict[str, Any],
) -> bool:
    """Once every marked test of `repeat` has run, walk the repeats; a decision before the
    last repeat stops the session (the later repeats are not needed): True when it did."""
    if session.shouldstop or any(n not in results for n in gated if nodeid_repeat(n) == repeat):
        return False
    state = walk(rule, repeats, gated, results)
    if state.decision != "continue" and state.look < repeats:
        session.shouldstop = (
            f"gatecal: the sequential gate {rule.name} decided after run {state.look}"
        )
        return True
    return False
