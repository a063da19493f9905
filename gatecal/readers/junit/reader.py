"""JUnit XML: pytest ``--junitxml``, Maven Surefire/Failsafe ``TEST-*.xml``, Gradle.

Run identity
    A *run* is one invocation of the suite. A folder holding several JUnit files whose
    test ids do not overlap is one run split per class (Surefire writes one file per
    test class): the run is named after the folder. Otherwise each file is a run, named
    after its folder when every file has the same name (``build-1041/junit.xml``, the
    CI-artefact layout), else after the file (``TEST-`` dropped).
Repeats
    pytest-repeat and ``deepeval test run -r N`` name the i-th copy ``test_x[case-i-N]``
    (``test_x[i-N]`` without parameters): when every testcase of a file carries such a
    suffix, with one N, the copies become runs ``<run>#i`` of one session.
    pytest-flakefinder copies only when asked (``junit_repeats="flakefinder"``).
    ``gatecal.*`` properties written by gatecal's pytest plugin beat any name parsing.
    A JUnit 5 ``@RepeatedTest``'s repetitions are repeats of one case, and parameterized
    invocations take the display name the file carries (``invocations``: Surefire's
    testcases of one name, ``repetition i of n``, the console launcher's ``<system-out>``).
Reruns
    pytest-rerunfailures (and Gradle's test-retry) repeat a testcase element; Surefire never
    does (a repeated name there is a repetition) but adds ``flakyFailure`` /
    ``flakyError`` (failed, then passed) or ``rerunFailure`` / ``rerunError`` children.
    Each is an attempt; ``attempts="first"`` keeps the first attempt's outcome.
Outcomes
    ``failure`` fails; ``error`` is an error (neither pass nor fail); ``skipped`` is
    missing data, except ``<skipped type="gatecal.tolerated">``: a failure gatecal's pytest
    plugin tolerated, still a failure (its ``gatecal.gate`` testcase is not a case).
    pytest-rerunfailures writes earlier attempts as empty elements: they
    count as failures, or as errors when the last attempt is an ``error`` (a setup
    error is rerun like a failure and repeats like one).
promptfoo
    ``promptfoo eval -o results.junit.xml`` (``<testsuites name="promptfoo">``) names
    its testcases ``test N: <description>`` with N running over tests x repeats, one
    ``<testsuite>`` per target. The case is the description (as in the results JSON);
    ``--repeat R`` writes each test's R copies as consecutive numbers, so a description
    in an aligned block of R consecutive testcases is repeated R times (runs
    ``<run>#1..R``). Where that cannot be told for sure (a test without a description
    while tests repeat, blocks of unequal length, a description in two places), the
    file is refused with a pointer to ``-o results.json``; so is a file of several
    targets unless ``target`` names one testsuite. promptfoo's ``-o results.xml`` dump
    is refused the same way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatecal.readers._base import (
    Batch,
    Head,
    ReaderBase,
    ReadOptions,
    Source,
    is_open_test_reporting,
    load_json,
    outcome_verdict,
    split_repeats,
)
from gatecal.readers._data import Skip
from gatecal.readers._verdict import RunsError, Verdict
from gatecal.readers.junit.cases import Case, JUnitFile

if TYPE_CHECKING:
    from gatecal.readers.junit.invocations import Invocations

__all__ = ["JUnit", "read_junit"]


def _units(files: Sequence[JUnitFile]) -> list[tuple[str, list[JUnitFile], str]]:
    """Group files into runs: (name, files, note)."""
    by_dir: dict[Path, list[JUnitFile]] = {}
    for f in files:
        by_dir.setdefault(f.path.resolve().parent, []).append(f)
    units: list[tuple[Path, list[JUnitFile], str]] = []
    for folder, group in by_dir.items():
        disjoint = False
        if len(group) > 1:
            ids = [set(_fulls(f)) for f in group]
            disjoint = sum(map(len, ids)) == len(set().union(*ids))
        if disjoint:
            note = f"one run per folder: {len(group)} files with disjoint tests (per class)"
            units.append((folder, group, note))
        else:
            units += [(f.path.resolve(), [f], "one run per file") for f in group]
    file_units = [u for u in units if u[0].is_file()]
    same_name = len(file_units) > 1 and len({u[0].name for u in file_units}) == 1
    # (anchor, label, files, note): the label is the anchor's name, or the file's stem
    named: list[tuple[Path, str, list[JUnitFile], str]] = []
    for where, group, note in units:
        if where.is_file() and same_name:
            note = f"run named after its folder (every file is {where.name})"
            named.append((where.parent, where.parent.name, group, note))
        elif where.is_file():
            stem = (
                where.stem.removeprefix("TEST-") if where.name.startswith("TEST-") else where.stem
            )
            named.append((where, stem, group, note))
        else:
            named.append((where, where.name, group, note))
    labels = _unique([(anchor, label) for anchor, label, _, _ in named])
    return [(label, group, note) for label, (_, _, group, note) in zip(labels, named, strict=True)]


def _fulls(f: JUnitFile) -> Sequence[str]:
    """The full ids of a file's testcases."""
    from gatecal.readers.junit.stream import CaseList

    return f.cases.full if isinstance(f.cases, CaseList) else [c.full for c in f.cases]


def _unique(named: Sequence[tuple[Path, str]]) -> list[str]:
    """Labels made unique by prefixing parent folders where two units share one."""
    labels = [label for _, label in named]
    for depth in range(1, 64):
        counts: dict[str, int] = {}
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
        if max(counts.values(), default=1) == 1:
            return labels
        for i, (anchor, label) in enumerate(named):
            if counts[labels[i]] > 1:
                parents = [p.name for p in anchor.parents[:depth] if p.name]
                labels[i] = "/".join([*reversed(parents), label])
    return [str(anchor) for anchor, _ in named]


def _repeat_split(f: JUnitFile, mode: str) -> dict[int, tuple[str, int]] | None:
    """For each testcase index: (base id, repeat i), if the file is a set of repeats."""
    from gatecal.readers.junit.stream import CaseList

    if isinstance(f.cases, CaseList):
        if any("gatecal.case" in p for p in f.cases.props.values()):
            return None  # our plugin says what each case is
        split = split_repeats(f.cases.names(), mode)
        if split is None:
            return None
        return {
            index: (f.cases.full[index][: f.cases.cut[index]] + base, i)
            for index, (base, i) in enumerate(split)
        }
    if any("gatecal.case" in c.props for c in f.cases):
        return None  # our plugin says what each case is
    split = split_repeats([c.name for c in f.cases], mode)
    if split is None:
        return None
    return {
        index: (case.full[: len(case.full) - len(case.name)] + base, i)
        for index, (case, (base, i)) in enumerate(zip(f.cases, split, strict=True))
    }


class JUnit(ReaderBase):
    """The JUnit reader (see the module docstring): every file of a build at once, as a
    folder of per-class files is one run."""

    FORMAT = "junit"
    GROUPED = True
    STREAMS = True
    SUFFIXES = (".xml",)

    @staticmethod
    def sniff(head: Head) -> bool:
        # the reader parses safely and names what is wrong; Open Test Reporting has its own
        return head.text.startswith("<") and not is_open_test_reporting(head.text)

    @staticmethod
    def read(sources: Sequence[Source], build: str, options: ReadOptions) -> Batch:
        return read_junit([source.path for source in sources], build, options)


_PROMPTFOO_NAME = re.compile(r"^test (\d+)(?:: (.*))?$", re.S)


def _promptfoo(f: JUnitFile, target: str | None) -> tuple[JUnitFile, dict[int, tuple[str, int]]]:
    """One target's testcases of a promptfoo JUnit file, and (case, repeat) of each."""
    json_hint = "write promptfoo eval -o results.json and read that"
    suites = list(dict.fromkeys(c.suite for c in f.cases))
    if len(suites) > 1:
        if target not in suites:
            listed = "; ".join(suites)
            raise RunsError(
                f"{f.path}: promptfoo JUnit of {len(suites)} targets ({listed}): name one with "
                f"--target, or {json_hint}"
            )
        f = replace(f, cases=[c for c in f.cases if c.suite == target])
    numbered: list[tuple[int, str | None]] = []
    for case in f.cases:
        match = _PROMPTFOO_NAME.match(case.name)
        if match is None:
            raise RunsError(f"{f.path}: promptfoo testcase {case.name!r} is not 'test N: ...'")
        numbered.append((int(match.group(1)), match.group(2)))
    order = sorted(range(len(numbered)), key=lambda i: numbered[i][0])
    if [numbered[i][0] for i in order] != list(range(1, len(order) + 1)):
        raise RunsError(
            f"{f.path}: promptfoo testcases are not numbered 1..{len(order)}; {json_hint}"
        )
    # blocks of consecutive testcases with one description
    blocks: list[tuple[str | None, list[int]]] = []
    for i in order:
        description = numbered[i][1]
        if blocks and description is not None and blocks[-1][0] == description:
            blocks[-1][1].append(i)
        else:
            blocks.append((description, [i]))
    sizes = {len(members) for _, members in blocks}
    described = [d for d, _ in blocks if d is not None]
    undescribed = len(described) < len(blocks)
    repeats = max(sizes)
    if not described:
        raise RunsError(
            f"{f.path}: promptfoo JUnit names these tests by number only, so its repeats "
            f"cannot be told from distinct tests; {json_hint}"
        )
    why = ""
    if undescribed and repeats > 1:
        why = "a test without a description cannot be matched to its repeats"
    elif len(sizes) > 1:
        why = f"the tests appear {', '.join(map(str, sorted(sizes)))} times"
    elif len(set(described)) < len(described):
        twice = next(d for d in described if described.count(d) > 1)
        why = f"description {twice!r} names tests in two places"
    if why:
        raise RunsError(
            f"{f.path}: promptfoo JUnit whose repeats cannot be read for sure ({why}); {json_hint}"
        )
    split: dict[int, tuple[str, int]] = {}
    for description, members in blocks:
        for k, i in enumerate(members, start=1):
            split[i] = (description if description is not None else f.cases[i].name, k)
    return f, split


def _verdicts_from_props(case: Case, where: str) -> list[dict[str, Any]] | None:
    text = case.props.get("gatecal.verdicts")
    if text is None:
        return None
    items = load_json(text.encode(), where)
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise RunsError(f"{where}: property gatecal.verdicts must be a JSON list of objects")
    return items


def _outcome(attempts: list[str], policy: str) -> str:
    real = [a for a in attempts if a != "skipped"] or ["skipped"]
    return real[0] if policy == "first" else real[-1]


def read_junit(paths: Sequence[Path], build: str, options: ReadOptions) -> Batch:
    """Read JUnit XML files of one build; see the module's docstring for the rules."""
    from gatecal.readers import _progress
    from gatecal.readers.junit.stream import CaseList, fold_file, parse_file

    files = []
    for p in paths:
        files.append(parse_file(p))
        _progress.done(p)
    batch = Batch()
    for unit, group, note in _units(files):
        found_invocations = _invocations(group, options.junit_repeats)
        for f in group:
            notes = [note]
            if not f.cases:  # a console launcher file of an engine that ran nothing
                why = f"no tests: the JUnit Platform engine {f.cases.engine} ran none"  # type: ignore[attr-defined]
                batch.add_file(f.path, "junit", f.detail, build, (), verdicts=0, notes=(note, why))
                continue
            if f.detail == "promptfoo":
                f, split_pf = _promptfoo(f, options.target)
                repeats = max(i for _, i in split_pf.values())
                split: dict[int, tuple[str, int]] | None = split_pf if repeats > 1 else None
                if split is None:
                    split_pf = {i: (base, 0) for i, (base, _) in split_pf.items()}
            else:
                split_pf = None
                split = _repeat_split(f, options.junit_repeats)
            found = found_invocations.get(id(f))
            if split is None and found is not None:
                _rename(f, found.names)
                split = found.repeats or None
                notes += found.notes
            elif split is not None:
                repeats = max(i for _, i in split.values())
                how = "promptfoo test numbers" if split_pf else options.junit_repeats
                notes.append(f"{repeats} repeats of each test in one session ({how})")
            folded = None
            if isinstance(f.cases, CaseList) and split_pf is None:
                folded = fold_file(
                    f.cases, unit, split, build, options.attempts, str(f.path), batch
                )
            if folded is None:
                folded = _read_cases(f, unit, split, split_pf, build, options, batch)
            runs, n_verdicts, n_skipped, n_errors = folded
            batch.add_file(
                f.path,
                "junit",
                f.detail,
                build,
                runs,
                errors=n_errors,
                notes=notes,
                verdicts=n_verdicts,
                skipped=n_skipped,
            )
    return batch


def _read_cases(
    f: JUnitFile,
    unit: str,
    split: dict[int, tuple[str, int]] | None,
    split_pf: dict[int, tuple[str, int]] | None,
    build: str,
    options: ReadOptions,
    batch: Batch,
) -> tuple[list[str], int, int, int]:
    """Read a file's testcases into `batch` one object at a time (gatecal properties,
    reruns, promptfoo's test numbers): (runs, verdicts, skipped, errors), as ``fold_file``
    returns them."""
    # attempts of the same (run, case) in document order: reruns
    attempts_of: dict[tuple[str, str], list[Case]] = {}
    for index, case in enumerate(f.cases):
        base, run = case.full, unit
        if "gatecal.case" in case.props:
            base = case.props["gatecal.case"]
            if case.props.get("gatecal.repeat"):
                run = f"{unit}#{case.props['gatecal.repeat']}"
        elif split is not None:
            base, i = split[index]
            run = f"{unit}#{i}"
        elif split_pf is not None:
            base = split_pf[index][0]
        attempts_of.setdefault((run, base), []).append(case)
    n_verdicts = n_skipped = n_errors = 0
    runs: dict[str, None] = {}
    # repeats in order (#1, #2, ...) whatever order the file lists them in
    ordered = sorted(attempts_of.items(), key=lambda item: _repeat_of(item[0][0], unit))
    for (run, base), attempts in ordered:
        runs[run] = None
        # pytest-rerunfailures >= 16.6.1 writes one element per attempt; only the
        # last carries its outcome (earlier ones look like passes, but a test is
        # rerun only after it failed or errored), so every earlier element is a
        # failure, or an error when the last attempt errored (a setup error
        # repeats as one: the rerun changed nothing the error came from)
        last = attempts[-1].attempts[-1] if attempts[-1].attempts else "passed"
        earlier = "error" if last == "error" else "failed"
        outcomes = [
            earlier if a == "passed" and k < len(attempts) - 1 else a
            for k, c in enumerate(attempts)
            for a in c.attempts
        ]
        tried = sum(a != "skipped" for a in outcomes)
        batch.reruns += max(tried - 1, 0)
        outcome = _outcome(outcomes, options.attempts)
        if outcome == "skipped":
            batch.skips.append(
                Skip(build=build, run=run, case=base, source=str(f.path), session=unit)
            )
            n_skipped += 1
            continue
        chosen = attempts[0] if options.attempts == "first" else attempts[-1]
        if not chosen.props:  # the common case, kept fast
            verdict = outcome_verdict(
                outcome,
                build=build,
                run=run,
                case=base,
                session=unit,
                attempts=max(tried, 1),
                source=str(f.path),
            )
            batch.verdicts.append(verdict)
            n_verdicts += 1
            n_errors += verdict.status == "error"
            continue
        items = _verdicts_from_props(chosen, f"{f.path}: testcase {chosen.full}")
        if items is None:
            items = [
                {
                    "check": chosen.props.get("gatecal.check", ""),
                    "kind": chosen.props.get("gatecal.kind", ""),
                }
            ]
            items[0]["status"] = "ok" if outcome in ("passed", "failed") else "error"
            items[0]["passed"] = outcome == "passed" if outcome != "error" else None
        for item in items:
            verdict = _verdict(item, build, run, base, unit, max(tried, 1), f.path)
            batch.verdicts.append(verdict)
            n_verdicts += 1
            n_errors += verdict.status == "error"
    return list(runs), n_verdicts, n_skipped, n_errors


def _repeat_of(run: str, unit: str) -> int:
    """The repeat i of run ``<unit>#i`` (0 for the unit itself)."""
    return int(run[len(unit) + 1 :]) if run != unit and run[len(unit) + 1 :].isdigit() else 0


def _invocations(group: Sequence[JUnitFile], mode: str) -> dict[int, Invocations]:
    """Each file's repetitions and display names (by ``id`` of the file), unless ``mode`` is
    ``none``. When one file of a run has repetitions, every file's cases go to run ``#1``:
    one invocation stays one set of runs."""
    from gatecal.readers.junit.invocations import Invocations, invocations

    if mode == "none":
        return {}
    found = {id(f): invocations(f) for f in group if f.cases and f.detail != "promptfoo"}
    if any(i.repeats for i in found.values()):
        for f in group:
            i = found.get(id(f))
            if i is not None and not i.repeats:
                every = {
                    index: (i.names.get(index, full), 1) for index, full in enumerate(_fulls(f))
                }
                found[id(f)] = Invocations(names=i.names, repeats=every, notes=i.notes)
    return found


def _rename(f: JUnitFile, names: dict[int, str]) -> None:
    """Give testcases their new full ids (same class, so the class part keeps its length)."""
    from gatecal.readers.junit.stream import CaseList

    if not names:
        return
    if isinstance(f.cases, CaseList):
        for index, full in names.items():
            f.cases.full[index] = full
        return
    for index, full in names.items():
        case = f.cases[index]
        case.name = full[len(case.full) - len(case.name) :]
        case.full = full


def _verdict(
    item: dict[str, Any], build: str, run: str, case: str, session: str, tries: int, path: Path
) -> Verdict:
    where = f"{path}: testcase {case}"
    status = str(item.get("status") or "ok")
    if status not in ("ok", "error", "unscored"):
        raise RunsError(f"{where}: gatecal status must be ok, error or unscored (got {status!r})")
    kind = str(item.get("kind") or "")
    if kind not in ("", "judge", "code"):
        raise RunsError(f"{where}: gatecal kind must be judge or code (got {kind!r})")
    passed = item.get("passed")
    if status == "ok" and not isinstance(passed, bool):
        raise RunsError(f"{where}: an ok gatecal verdict needs passed true/false (got {passed!r})")
    score = item.get("score")
    return Verdict(
        build=build,
        run=run,
        case=case,
        check=str(item.get("check") or ""),
        kind=kind,
        passed=passed if status == "ok" else None,
        status=status,
        score=float(score)
        if isinstance(score, int | float) and not isinstance(score, bool)
        else None,
        session=session,
        attempts=tries,
        source=str(path),
    )
