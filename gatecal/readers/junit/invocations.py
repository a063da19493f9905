"""JUnit 5 invocations as their author meant them: repetitions and parameterized cases.

A ``@RepeatedTest`` runs one case several times in one invocation of the suite; a
``@ParameterizedTest`` runs several cases, one per argument. Each tool writes them its own way
(checked on files the tools wrote, ``tests/fixtures/junit/surefire3/`` and
``console-launcher/``):

Maven Surefire 3, default reporter
    Repetitions are testcases of one name (``factChecking`` three times); parameterized
    invocations are numbered (``relevancy(String)[2]``: the argument is not in the file, the
    index is kept). Surefire writes reruns (``rerunFailingTestsCount``) as ``flaky*`` /
    ``rerun*`` children of one testcase, never as testcases of their own, so the k-th
    testcase of a name is repetition k.
Surefire's phrased reporter (``usePhrasedTestCaseMethodName``), Gradle
    ``factChecking() repetition 1 of 3``: repetition 1 of ``factChecking()``; a parameterized
    invocation carries its display name after the method (``relevancy(String)
    answer-broken``): its case is ``relevancy(String)[answer-broken]``.
JUnit Platform console launcher (``--reports-dir``)
    Every invocation is numbered (``factChecking()[1]``, ``relevancy(String)[2]``) and its
    ``<system-out>`` holds its unique id and display name: an invocation whose display name
    is ``repetition i of n`` is repetition i; any other takes its display name in place of
    its index (``relevancy(String)[answer-broken]``), unless two invocations of the test share
    one (then the index stays).

So a parameterized case is ``method(Types)[what]``, where ``what`` is the display name when
the file has it, else the invocation's index, in every format (pytest's ids look the same:
``test_x[refund-annual]``).

Repetition i of a case is run ``<run>#i`` (one session, as pytest-repeat's copies are); the
other cases of that invocation are in run ``<run>#1``. pytest-rerunfailures and Gradle's
test-retry write reruns as repeated testcases, so only Surefire's repeated names are
repetitions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gatecal.readers.junit.cases import JUnitFile

__all__ = ["Invocations", "invocations"]

_REPETITION = re.compile(r"^(?P<base>.*?)\s*repetition (?P<i>\d+) of (?P<n>\d+)$")
_INVOCATION = re.compile(r"\[test-template-invocation:#(?P<k>\d+)\]$")
_INDEXED = re.compile(r"^(?P<base>.*)\[(?P<k>\d+)\]$")
#: the phrased reporter's parameterized invocation: ``method(Types) display name``
_PHRASED = re.compile(r"^(?P<method>[^\s()\[\]]+\([^()]*\)) (?P<display>\S.*)$", re.S)


@dataclass(frozen=True, slots=True)
class Invocations:
    """How a file's testcases map to cases and repetitions.

    Attributes
    ----------
    names : dict of int to str
        Testcases whose id becomes another (a parameterized invocation's display name in
        place of its index): the new full id, its class part unchanged.
    repeats : dict of int to (str, int)
        Every testcase's (case id, repetition i from 1) when the file has repetitions; empty
        when it has none.
    notes : tuple of str
        What was decided, for ``gatecal runs``.
    """

    names: dict[int, str]
    repeats: dict[int, tuple[str, int]]
    notes: tuple[str, ...]


def invocations(f: JUnitFile) -> Invocations:
    """The repetitions and renamed invocations of one JUnit file (see the module docstring)."""
    from gatecal.readers.junit.stream import CaseList, distinct

    cases = f.cases
    fulls: Sequence[str]
    cuts: Sequence[int]
    if isinstance(cases, CaseList):
        fulls, cuts, platform = cases.full, cases.cut, cases.platform
    else:
        fulls = [c.full for c in cases]
        cuts = [len(c.full) - len(c.name) for c in cases]
        platform = {}
    names: dict[int, str] = {}
    found: dict[int, tuple[str, int, int]] = {}  # index -> (case, i, n)
    if platform:
        names, found = _console(fulls, cuts, platform)
    elif f.detail == "surefire" and any(" " in full for full in fulls):
        names = _phrased(fulls, cuts)
    # (a big file without the word is not looked at name by name)
    named = "repetition" in "\n".join(fulls)
    for index, full in enumerate(fulls if named else ()):
        if index in found:
            continue
        match = _REPETITION.match(full[cuts[index] :])  # before any rename
        if match and match.group("base"):
            i, n = int(match.group("i")), int(match.group("n"))
            if 1 <= i <= n:
                found[index] = (full[: cuts[index]] + match.group("base"), i, n)
    repeats = _consistent(found)
    notes: list[str] = []
    if f.detail == "surefire" and not distinct(fulls):
        times: dict[str, int] = {}
        for full in fulls:
            times[full] = times.get(full, 0) + 1
        so_far: dict[str, int] = {}
        for index, full in enumerate(fulls):
            if times[full] > 1:  # Surefire writes reruns as children: these are repetitions
                so_far[full] = so_far.get(full, 0) + 1
                repeats[index] = (full, so_far[full])
    if names:
        notes.append(f"{len(names)} parameterized invocation(s) named method(Types)[display name]")
    if not repeats:
        return Invocations(names=names, repeats={}, notes=tuple(notes))
    tests = len({case for case, _ in repeats.values()})
    most = max(i for _, i in repeats.values())
    notes.append(
        f"{tests} test(s) repeated in one invocation (@RepeatedTest, up to {most} repetitions): "
        f"repetition i is run #i, not a rerun"
    )
    every = {
        index: repeats.get(index, (names.get(index, full), 1)) for index, full in enumerate(fulls)
    }
    return Invocations(names=names, repeats=every, notes=tuple(notes))


def _console(
    fulls: Sequence[str], cuts: Sequence[int], platform: dict[int, tuple[str, str]]
) -> tuple[dict[int, str], dict[int, tuple[str, int, int]]]:
    """Display names and repetitions from the console launcher's unique ids."""
    found: dict[int, tuple[str, int, int]] = {}
    # template (its id without the invocation) -> [(index, base, display)]
    templates: dict[str, list[tuple[int, str, str]]] = {}
    for index, (unique_id, display) in platform.items():
        invocation = _INVOCATION.search(unique_id)
        indexed = _INDEXED.match(fulls[index])
        if invocation is None or indexed is None:
            continue
        if invocation.group("k") != indexed.group("k"):
            continue
        base = indexed.group("base")
        repetition = _REPETITION.fullmatch(display)
        if repetition and not repetition.group("base"):
            i, n = int(repetition.group("i")), int(repetition.group("n"))
            if i == int(invocation.group("k")) and i <= n:
                found[index] = (base, i, n)
                continue
        if display:
            key = unique_id[: invocation.start()]
            templates.setdefault(key, []).append((index, base, display))
    names: dict[int, str] = {}
    taken = set(fulls)
    for members in templates.values():
        displays = [display for _, _, display in members]
        if len(set(displays)) < len(displays):
            continue  # two invocations share a display name: the index tells them apart
        for index, base, display in members:
            name = f"{base}[{display}]"
            if name not in taken:
                names[index] = name
    return names, found


def _phrased(fulls: Sequence[str], cuts: Sequence[int]) -> dict[int, str]:
    """``method(Types) display`` (Surefire's phrased reporter) as ``method(Types)[display]``,
    where every new id is distinct and none is a repetition."""
    names: dict[int, str] = {}
    for index, full in enumerate(fulls):
        name = full[cuts[index] :]
        match = _PHRASED.match(name)
        if match and not _REPETITION.match(name):
            names[index] = (
                full[: cuts[index]] + f"{match.group('method')}[{match.group('display')}]"
            )
    renamed = [names.get(i, full) for i, full in enumerate(fulls)]
    return names if len(set(renamed)) == len(renamed) else {}


def _consistent(found: dict[int, tuple[str, int, int]]) -> dict[int, tuple[str, int]]:
    """The repetitions of each case, where they are repetitions 1..n of one n, each once."""
    by_case: dict[str, list[tuple[int, int, int]]] = {}
    for index, (case, i, n) in found.items():
        by_case.setdefault(case, []).append((index, i, n))
    out: dict[int, tuple[str, int]] = {}
    for case, members in by_case.items():
        totals = {n for _, _, n in members}
        seen = [i for _, i, _ in members]
        if len(totals) == 1 and len(set(seen)) == len(seen):
            out.update({index: (case, i) for index, i, _ in members})
    return out
