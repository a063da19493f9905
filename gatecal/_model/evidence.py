"""One evidence rule for every decision: check, the sequential checks, compare and the plugin.

A decision rests only on complete evidence. Whatever the command, these are incomplete
evidence (exit 1), or counted where a count is defined, and never a pass:

- a baseline case, or a check the baseline ran on it, with no verdict in a run of a build
  (a dropped row is missing evidence, exactly like a missing case);
- an error or unscored verdict beyond ``max_errors`` (within it, each counts as a
  failure: an error is never a pass);
- a skipped verdict where the other build (or the baseline) has one: a skip is missing
  evidence, never a neutral row;
- a later run that would change the decision: a sequential gate stops at its first
  boundary, so a pass stands only if the runs given decide it in every order (the
  worst order is the runs sorted by passing cases, fewest first: its running sums are
  the smallest at every look, so if it passes every order passes).

A case's state in a run is one of :data:`STATE_NAMES` (its code is its place there);
:func:`gatecal.readers.run_states` reads them from the verdicts. :func:`evidence_reasons`
turns what is lacking into the reasons every command prints, in the words of its
:class:`Subject` (a check's baseline cases, a pytest session's marked tests);
:func:`paired_reasons` and :func:`matrix_evidence` apply the rule to two builds (``compare``, with
:func:`gatecal.readers.run_states.paired_states` for runs read from files);
:func:`order_reason` is the later-run rule of the sequential gates (check and plugin).
This module imports only the standard library at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gatecal._common.tables import few

__all__ = [
    "BASELINE_CASES",
    "ERROR",
    "FAIL",
    "MARKED_TESTS",
    "MISSING",
    "PASS",
    "STATE_NAMES",
    "Decide",
    "PairedEvidence",
    "Subject",
    "evidence_reasons",
    "matrix_evidence",
    "order_reason",
    "paired_reasons",
]

_PASS, _FAIL, _ERROR, _MISSING = "passed", "failed", "error", "missing"
#: The states a case can have in a run; a state's code is its place here.
STATE_NAMES = (_FAIL, _ERROR, _PASS, _MISSING)
FAIL, ERROR, PASS, MISSING = range(4)

# -- the rule's reasons ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Subject:
    """What a decision needs a verdict on, in the words the rule's reasons use for it; by
    default a check's baseline cases in the runs of the current build.

    ``whole``: the things counted; ``lacking``: what is said of those without a verdict;
    ``part``: one of them in one run; ``skipped`` and ``errored``: the words after the
    count of skipped and of errored parts (``{max_errors}`` is filled in); ``run``: what
    may stop early; ``shown``: how many names a reason lists.
    """

    whole: str = "baseline cases"
    lacking: str = "have no complete verdict"
    part: str = "case run(s)"
    skipped: str = (
        "case run(s) skipped where the other build has a verdict (a skip is missing evidence)"
    )
    errored: str = (
        "error or unscored verdicts (at most {max_errors} allowed; an error is never a pass)"
    )
    run: str = "run"
    shown: int = 10


#: The cases of a check's baseline, in the runs of the current build.
BASELINE_CASES = Subject()
#: The tests marked ``gatecal`` in a pytest session (their node ids are long: 5 shown).
MARKED_TESTS = Subject(
    whole="marked tests",
    lacking="gave no verdict",
    part="marked test(s)",
    skipped="marked test(s) skipped",
    errored="marked test(s) errored",
    run="session",
    shown=5,
)


def evidence_reasons(
    *,
    missing: Sequence[str],
    cases: int,
    gaps: Sequence[str],
    errors: Sequence[str],
    max_errors: int,
    skipped: Sequence[str] = (),
    where: str = "",
    subject: Subject = BASELINE_CASES,
    stopped: str = "",
) -> list[str]:
    """Why the evidence is incomplete (empty: it is complete): `missing` of the `cases`
    things the decision needs without a complete verdict, checks missing inside them
    (`gaps`), `skipped` verdicts, more error or unscored verdicts than `max_errors`.

    `subject` names what is counted; `stopped` is why the run stopped early, if it did;
    `where` prefixes each reason (``"candidate: "``). A run with no verdict at all is the
    caller's to name (check says the current run is empty): it passes the cases it misses
    here only when it has not said so.
    """
    reasons = []
    names = subject.shown
    if missing:
        stop = f" (the {subject.run} stopped early: {stopped})" if stopped else ""
        reasons.append(
            f"{where}{len(missing)} of {cases} {subject.whole} {subject.lacking}{stop}: "
            f"{few(list(missing), names)}"
        )
    if gaps:
        reasons.append(
            f"{where}{len(gaps)} {subject.part} lack a check the baseline ran (a missing "
            f"check is missing evidence): {few(list(gaps), names)}"
        )
    if skipped:
        reasons.append(f"{where}{len(skipped)} {subject.skipped}: {few(list(skipped), names)}")
    if len(errors) > max_errors:
        errored = subject.errored.format(max_errors=max_errors)
        reasons.append(f"{where}{len(errors)} {errored}: {few(list(errors), names)}")
    return reasons


# -- a later run that would change a sequential decision ---------------------------------------


Decide = Callable[[Sequence[int]], tuple[str, int]]


def order_reason(decide: Decide, passing: Sequence[int], runs: Sequence[str] = ()) -> str | None:
    """None when the runs given decide the same in every order; else why a later run would
    change the decision (a reason of incomplete evidence).

    `decide` is a sequential design's decision on passing cases per run, in order:
    ``(decision, look)``. Only a pass can be undone by order: the runs sorted fewest
    passing first have the smallest running sum at every look (the sum of the j smallest
    is the smallest of any j), so they never pass later nor fail earlier than another
    order; if they pass, every order passes. A fail or a continue is never turned into a
    pass by this rule.
    """
    decision, look = decide(list(passing))
    if decision != "pass" or len(passing) < 2:
        return None
    worst = sorted(range(len(passing)), key=lambda t: (passing[t], t))
    other, at = decide([passing[t] for t in worst])
    if other == "pass":
        return None
    name = (lambda t: runs[t]) if len(runs) == len(passing) else (lambda t: f"run {t + 1}")
    later = [name(t) for t in range(look, len(passing)) if passing[t] < max(passing[:look])]
    which = few(later) if later else few([name(t) for t in worst[:at]])
    return (
        f"the gate passed at run {look}, but the {len(passing)} runs given decide "
        f"'{other}' in another order (the run(s) that would change the decision: {which}); "
        "a later run that would change the decision is evidence, never ignored"
    )


# -- two builds (compare) ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedEvidence:
    """Two builds' runs on the cases either reports, under the evidence rule.

    ``baseline``, ``candidate``: outcome matrices (runs x `cases`; 1 pass, 0 fail or
    counted error, -1 missing). ``baseline_only``/``candidate_only``: cases with a verdict
    in one build only; ``incomplete``: compared cases lacking a verdict in some run of a
    build (``case in run: why``), ``left_out`` those of them left out under `partial`
    (``notes`` says so); ``errors``: error or unscored verdicts on the cases
    (``case in run``); ``reasons``: the rule's reasons, with `partial` and `max_errors`
    applied.
    """

    baseline: Any
    candidate: Any
    cases: tuple[str, ...]
    baseline_only: tuple[str, ...]
    candidate_only: tuple[str, ...]
    incomplete: tuple[str, ...]
    left_out: tuple[str, ...]
    errors: tuple[str, ...]
    max_errors: int
    partial: bool
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.reasons


def paired_reasons(
    baseline_only: Sequence[str],
    candidate_only: Sequence[str],
    incomplete: Sequence[str],
    left_out: Sequence[str],
    errors: Sequence[str],
    max_errors: int,
    partial: bool,
) -> tuple[list[str], list[str]]:
    """(reasons the evidence is incomplete, notes of what `partial` left out)."""
    reasons: list[str] = []
    notes: list[str] = []
    one_build = [*baseline_only, *candidate_only]
    what = "1 case" if len(one_build) == 1 else f"{len(one_build)} cases"
    if partial:
        if one_build:
            notes.append(
                f"{what} seen in one build only left out (--allow-missing): {few(one_build)}"
            )
        if left_out:
            notes.append(
                f"{len(left_out)} case(s) lacking a verdict in some run left out "
                "(--allow-missing): "
                f"{few(list(incomplete))}"
            )
    else:
        if one_build:
            reasons.append(
                f"{what} seen in one build only: incomplete evidence (--allow-missing "
                "compares the rest): "
                f"{few(one_build)}"
            )
        if incomplete:
            reasons.append(
                f"{len(incomplete)} case run(s) of compared cases lack a verdict (a dropped "
                f"row, a missing check or a skip is missing evidence; --allow-missing leaves "
                "those cases out): "
                f"{few(list(incomplete))}"
            )
    if len(errors) > max_errors:
        reasons.append(
            f"{len(errors)} error or unscored verdicts (at most {max_errors} allowed; an "
            f"error is never a pass): {few(list(errors))}"
        )
    return reasons, notes


def matrix_evidence(
    baseline: Any, candidate: Any, names: Sequence[str], *, partial: bool = False
) -> PairedEvidence:
    """The evidence rule on two outcome matrices (runs x cases; 1 pass, 0 fail, -1
    missing), the same columns in both: a run with no verdict is no run; a case with a
    verdict in one build only, or missing in some run of a build, is incomplete evidence
    (with `partial`: left out and named)."""
    import numpy as np

    base = baseline[(baseline >= 0).any(axis=1)]
    cand = candidate[(candidate >= 0).any(axis=1)]
    seen_b = (base >= 0).any(axis=0) if len(base) else np.zeros(len(names), bool)
    seen_c = (cand >= 0).any(axis=0) if len(cand) else np.zeros(len(names), bool)
    pairs = list(zip(names, seen_b.tolist(), seen_c.tolist(), strict=True))
    baseline_only = tuple(n for n, b, c in pairs if b and not c)
    candidate_only = tuple(n for n, b, c in pairs if c and not b)
    both = seen_b & seen_c
    holes: dict[int, list[str]] = {}
    for side, m in (("baseline", base), ("candidate", cand)):
        for t, j in zip(*np.nonzero((m < 0) & both), strict=True):
            holes.setdefault(int(j), []).append(f"{names[int(j)]} in {side} run {int(t) + 1}")
    incomplete = [h for j in sorted(holes) for h in holes[j]]
    left_out = [names[j] for j in sorted(holes)] if partial else []
    if partial:
        both[sorted(holes)] = False
    reasons, notes = paired_reasons(
        baseline_only, candidate_only, incomplete, left_out, (), 0, partial
    )
    return PairedEvidence(
        baseline=base[:, both],
        candidate=cand[:, both],
        cases=tuple(n for n, k in zip(names, both.tolist(), strict=True) if k),
        baseline_only=baseline_only,
        candidate_only=candidate_only,
        incomplete=tuple(incomplete),
        left_out=tuple(left_out),
        errors=(),
        max_errors=0,
        partial=partial,
        reasons=tuple(reasons),
        notes=tuple(notes),
    )
