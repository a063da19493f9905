"""Big JUnit files parsed as a stream: each testcase folded into a few columns, then freed.

``junit._parse`` builds the whole element tree, about a kilobyte per testcase. A file from
STREAM_MIN_BYTES on is parsed here with (defused) ``iterparse`` instead: each
``<testcase>`` is read when it ends (name, class, outcome, reruns, gatecal properties)
and removed from the tree, so memory holds one string per case id and a few bytes per
testcase. What comes out is the same ``JUnitFile`` the tree parser gives, its cases a
:class:`CaseList` that makes each ``Case`` on demand; ``read_junit`` takes the columns
directly when nothing calls for objects (no properties, no rerun elements).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from gatecal.readers._verdict import RunsError
from gatecal.readers.junit.cases import (
    Case,
    JUnitFile,
    check_root,
    is_gate_record,
    read_testcase,
    writer,
)

__all__ = ["CaseList", "parse_stream"]

OUTCOMES = ("passed", "failed", "error", "skipped")
_CODE = {name: i for i, name in enumerate(OUTCOMES)}


class CaseList(Sequence[Case]):
    """The testcases of one streamed file, as columns; a sequence of ``Case``."""

    __slots__ = ("attempts", "cut", "full", "outcome", "props", "suite", "suites")

    def __init__(self) -> None:
        self.full: list[str] = []  # classname.name (or name)
        self.cut = array("i")  # where the name starts in `full`
        self.outcome = array("b")  # the one attempt's outcome (OUTCOMES), when alone
        self.attempts: dict[int, list[str]] = {}  # testcases with rerun children
        self.props: dict[int, dict[str, str]] = {}  # testcases with gatecal.* properties
        self.suites: list[str] = []
        self.suite = array("i")

    def __len__(self) -> int:
        return len(self.full)

    def name(self, i: int) -> str:
        return self.full[i][self.cut[i] :]

    def names(self) -> _Names:
        return _Names(self)

    def outcomes(self, i: int) -> list[str]:
        found = self.attempts.get(i)
        return found if found is not None else [OUTCOMES[self.outcome[i]]]

    def _make(self, i: int) -> Case:
        return Case(
            full=self.full[i],
            name=self.name(i),
            attempts=list(self.outcomes(i)),
            props=dict(self.props.get(i, {})),
            suite=self.suites[self.suite[i]],
        )

    @overload
    def __getitem__(self, index: int) -> Case: ...
    @overload
    def __getitem__(self, index: slice) -> list[Case]: ...
    def __getitem__(self, index: int | slice) -> Case | list[Case]:
        if isinstance(index, slice):
            return [self._make(i) for i in range(*index.indices(len(self)))]
        return self._make(range(len(self))[index])

    def __iter__(self) -> Iterator[Case]:
        return (self._make(i) for i in range(len(self)))


class _Names(Sequence[str]):
    """The testcase names of a CaseList, made one at a time."""

    __slots__ = ("_cases",)

    def __init__(self, cases: CaseList) -> None:
        self._cases = cases

    def __len__(self) -> int:
        return len(self._cases)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self._cases.name(i) for i in range(*index.indices(len(self)))]
        return self._cases.name(range(len(self))[index])

    def __iter__(self) -> Iterator[str]:
        return (self._cases.name(i) for i in range(len(self)))


def parse_stream(path: Path) -> JUnitFile:
    """Parse a JUnit file as ``junit._parse`` does, streaming (see the module docstring)."""
    from defusedxml import ElementTree

    from gatecal.readers._progress import advance

    cases = CaseList()
    suite_codes: dict[str, int] = {}
    open_suites: list[str] = []
    elements: list[Any] = []
    root: Any = None
    root_attrib: dict[str, str] = {}
    first_suite: dict[str, str] | None = None
    names: set[str] = set()
    handle = None
    try:
        handle = open(path, "rb")  # noqa: SIM115 (closed below, as an error in it is handled)
        for event, element in ElementTree.iterparse(handle, events=("start", "end")):
            if event == "start":
                if root is None:
                    root, root_attrib = element, dict(element.attrib)
                    check_root(path, element.tag)
                if element.tag == "testsuite" and (root is element or root.tag != "testsuite"):
                    name = element.get("name", "")
                    open_suites.append(name)
                    names.add(name)
                    if first_suite is None:
                        first_suite = dict(element.attrib)
                elements.append(element)
                continue
            elements.pop()
            tag = element.tag
            if tag == "testsuite" and (root is element or root.tag != "testsuite"):
                open_suites.pop()
            if tag != "testcase" or is_gate_record(element):
                continue
            full, name, final, earlier, later, props = read_testcase(element, path)
            index = len(cases.full)
            if not index % 8192:
                advance(path, handle.tell())
            cases.full.append(full)
            cases.cut.append(len(full) - len(name))
            cases.outcome.append(_CODE[final])
            if earlier or later:
                cases.attempts[index] = [*earlier, final, *later]
            if props:
                cases.props[index] = props
            suite = open_suites[-1] if open_suites else ""
            code = suite_codes.get(suite)
            if code is None:
                code = suite_codes[suite] = len(cases.suites)
                cases.suites.append(suite)
            cases.suite.append(code)
            element.clear()
            if elements:
                elements[-1].remove(element)  # the last child: found at once
    except ElementTree.ParseError as exc:
        raise RunsError(f"{path}: not well-formed XML ({exc})") from None
    except RunsError:
        raise
    except Exception as exc:  # defusedxml refuses entity bombs and external references
        raise RunsError(f"{path}: refused unsafe XML ({type(exc).__name__})") from None
    finally:
        if handle is not None:
            handle.close()
    if root is None:
        raise RunsError(f"{path}: not well-formed XML (no element found)")
    if not cases.full:
        raise RunsError(f"{path}: JUnit XML with no <testcase>")
    schema = " ".join(root_attrib.values()) + " ".join((first_suite or {}).values())
    detail = writer(path, root.tag, root_attrib.get("name"), names, schema, first_suite)
    return JUnitFile(path=path, detail=detail, cases=cases)  # type: ignore[arg-type]


def fold_file(
    cases: CaseList,
    unit: str,
    split: dict[int, tuple[str, int]] | None,
    build: str,
    attempts_policy: str,
    source: str,
    batch: Any,
) -> tuple[list[str], int, int, int] | None:
    """Fold a streamed file's testcases into `batch` as columns: (runs, verdicts, skipped,
    errors), or None when objects are needed (gatecal properties, or a testcase repeated
    as pytest-rerunfailures writes reruns), as ``read_junit``'s own loop handles them."""
    import numpy as np

    from gatecal.readers._data import Skip

    n = len(cases)
    if cases.props or not _distinct(cases.full):
        return None
    if split is None:
        bases: Sequence[str] = cases.full
        run_of: list[str] = [unit] * n
    else:
        bases = [split[i][0] for i in range(n)]
        labels = {k: f"{unit}#{k}" for k in {i for _, i in split.values()}}
        run_of = [labels[split[i][1]] for i in range(n)]
    # distinct full ids make distinct (run, case) pairs: a repeat's id is its case's id
    # with "-i-N" in its brackets, one N in the file
    final = np.frombuffer(cases.outcome, dtype=np.int8).copy()
    tried = (final != _CODE["skipped"]).astype(np.int64)
    for i, outcomes in cases.attempts.items():
        real = [a for a in outcomes if a != "skipped"] or ["skipped"]
        final[i] = _CODE[real[0] if attempts_policy == "first" else real[-1]]
        tried[i] = sum(a != "skipped" for a in outcomes)
    batch.reruns += int(np.maximum(tried - 1, 0).sum())
    skipped = final == _CODE["skipped"]
    for i in np.flatnonzero(skipped).tolist():
        batch.skips.append(
            Skip(build=build, run=run_of[i], case=bases[i], source=source, session=unit)
        )
    keep = np.flatnonzero(~skipped)
    every = len(keep) == n
    builder = batch.verdicts
    kept = len(keep)
    block: dict[str, Any] = {}

    def constant(column: str, value: str) -> Any:
        return np.full(kept, builder.code(column, value), dtype=np.int32)

    block["build"] = constant("build", build)
    kept_runs = run_of if every else [run_of[i] for i in keep.tolist()]
    kept_bases = bases if every else [bases[i] for i in keep.tolist()]
    if split is None:
        block["run"] = constant("run", unit)
    else:
        block["run"] = builder.column_codes("run", kept_runs)
    block["case"] = builder.column_codes("case", kept_bases)
    block["check"] = constant("check", "")
    block["kind"] = constant("kind", "")
    outcome = final[keep]
    error = outcome == _CODE["error"]
    status = np.full(kept, builder.code("status", "ok"), dtype=np.int32)
    if error.any():
        status[error] = builder.code("status", "error")
    block["status"] = status
    block["session"] = constant("session", unit)
    block["source"] = constant("source", source)
    block["passed"] = np.where(error, -1, (outcome == _CODE["passed"]).astype(np.int8))
    block["passed"] = block["passed"].astype(np.int8)
    block["score"] = np.zeros(kept, dtype=np.float64)
    block["has_score"] = np.zeros(kept, dtype=np.int8)
    block["attempts"] = np.maximum(tried[keep], 1)
    block["cached"] = np.zeros(kept, dtype=np.int8)
    block["cost"] = np.zeros(kept, dtype=np.float64)
    block["has_cost"] = np.zeros(kept, dtype=np.int8)
    block["tokens"] = np.zeros(kept, dtype=np.int64)
    block["has_tokens"] = np.zeros(kept, dtype=np.int8)
    builder.add_block(block)
    runs = list(dict.fromkeys(run_of))
    return runs, kept, int(skipped.sum()), int(error.sum())


def _distinct(items: Sequence[Any]) -> bool:
    """No two items equal: their hashes all differ (8 bytes an item), or, where two
    hashes meet, a set says."""
    import numpy as np

    hashes = np.fromiter(map(hash, items), dtype=np.int64, count=len(items))
    hashes.sort()
    if not (hashes[1:] == hashes[:-1]).any():
        return True
    return len(set(items)) == len(items)
