"""JUnit files parsed as a stream: each testcase folded into a few columns as it is read.

expat (the C parser behind ElementTree) calls :func:`parse_file`'s handlers at each
element's start and end; a testcase's id, outcome, reruns and gatecal properties go
straight into a :class:`CaseList` (one string per case id, a few bytes per testcase), with
no element tree and nothing kept per file but the columns. The parser is hardened as
defusedxml's is (entity declarations and external references refused). ``read_junit``
takes the columns directly when nothing calls for objects (no properties, no testcase
repeated), and makes a ``Case`` per testcase from them otherwise.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

from gatecal.readers._verdict import RunsError
from gatecal.readers.junit.cases import (
    _EARLIER,
    _FAILED,
    _LATER,
    Case,
    JUnitFile,
    check_root,
    writer,
)

__all__ = ["CaseList", "distinct", "fold_file", "parse_file"]

OUTCOMES = ("passed", "failed", "error", "skipped")
_CODE = {name: i for i, name in enumerate(OUTCOMES)}
_FAILED_CODE = {tag: _CODE[outcome] for tag, outcome in _FAILED.items()}
T = TypeVar("T")


class _MadeOnDemand(Sequence[T]):
    """A sequence whose items are made when asked for, by ``_make(i)``; a slice is a list."""

    __slots__ = ()

    def _make(self, i: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._make(i) for i in range(*index.indices(len(self)))]
        return self._make(range(len(self))[index])

    def __iter__(self) -> Iterator[T]:
        return (self._make(i) for i in range(len(self)))


class CaseList(_MadeOnDemand[Case]):
    """The testcases of one streamed file, as columns; a sequence of ``Case``."""

    __slots__ = (
        "attempts",
        "cut",
        "engine",
        "full",
        "outcome",
        "platform",
        "props",
        "suite",
        "suites",
    )

    def __init__(self) -> None:
        self.full: list[str] = []  # classname.name (or name)
        self.cut = array("i")  # where the name starts in `full`
        self.outcome = array("b")  # the one attempt's outcome (OUTCOMES), when alone
        self.attempts: dict[int, list[str]] = {}  # testcases with rerun children
        self.props: dict[int, dict[str, str]] = {}  # testcases with gatecal.* properties
        self.suites: list[str] = []
        self.suite = array("i")
        #: the JUnit Platform console launcher's (unique id, display name) of a testcase,
        #: from its <system-out>
        self.platform: dict[int, tuple[str, str]] = {}
        #: the engine's unique id a console launcher file names in its own <system-out>
        self.engine = ""

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


class _Names(_MadeOnDemand[str]):
    """The testcase names of a CaseList, made one at a time."""

    __slots__ = ("_cases",)

    def __init__(self, cases: CaseList) -> None:
        self._cases = cases

    def __len__(self) -> int:
        return len(self._cases)

    def _make(self, i: int) -> str:
        return self._cases.name(i)


#: bytes given to the parser at a time (a big file's progress is reported after each)
_CHUNK = 1 << 16


def parse_file(path: Path) -> JUnitFile:
    """Parse a JUnit file into a :class:`CaseList` (see the module docstring)."""
    from xml.parsers import expat

    from defusedxml.common import DefusedXmlException

    from gatecal.readers._progress import advance
    from gatecal.readers.table.blocks import STREAM_MIN_BYTES

    cases = CaseList()
    full, cut, outcome = cases.full, cases.cut, cases.outcome
    suites: dict[str, int] = {}
    open_suites: list[int] = []  # the codes of the testsuites open
    # (first testcase, suite code) at each change of the innermost testsuite open
    changes: list[tuple[int, int]] = [(0, 0)]
    root: list[Any] = []  # [tag, attributes]
    first_suite: list[dict[str, str]] = []
    names: set[str] = set()
    depth = 0
    suite = 0  # the code of the innermost testsuite open ("" when none)
    # the testcase open: its depth (0: none) and index; `enclosing` holds the same of the
    # testcases that hold it. Its outcome code goes into `outcome` at once; rerun outcomes
    # before and after it into `earlier` and `later`, its properties into cases.props.
    at = index = 0
    enclosing: list[tuple[int, int]] = []
    earlier: dict[int, list[str]] = {}
    later: dict[int, list[str]] = {}
    # the text of a <system-out> being read, and which testcase it belongs to (-1: the suite)
    out_text: list[str] = []
    out_of: list[int] = []
    # a big file is refused at its first element when that is not JUnit's; a small one
    # is parsed first, so that XML that is not well-formed says so
    early = path.stat().st_size >= STREAM_MIN_BYTES

    def suite_code(name: str) -> int:
        code = suites.get(name)
        if code is None:
            code = suites[name] = len(cases.suites)
            cases.suites.append(name)
        return code

    def first_start(tag: str, attrs: dict[str, str]) -> None:
        root[:] = ["{" + tag if "}" in tag else tag, attrs]
        if early:
            check_root(path, root[0])
        parser.StartElementHandler = start
        start(tag, attrs)

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal depth, suite, at, index
        depth += 1
        if tag == "testcase":
            name = attrs.get("name")
            if not name:
                raise RunsError(f"{path}: a <testcase> has no name attribute")
            classname = attrs.get("classname")
            if at:  # a testcase inside a testcase
                enclosing.append((at, index))
            index = len(full)
            if classname:
                full.append(f"{classname}.{name}")
                cut.append(len(classname) + 1)
            else:
                full.append(name)
                cut.append(0)
            outcome.append(0)
            at = depth
            return
        if at:
            if depth == at + 1:
                if tag == "skipped" and attrs.get("type") == "gatecal.tolerated":
                    tag = "failure"  # a failure gatecal's gate tolerated is still a failure
                code = _FAILED_CODE.get(tag)
                if code is not None:
                    if not outcome[index]:  # the first outcome element decides
                        outcome[index] = code
                elif tag in _EARLIER:
                    earlier.setdefault(index, []).append(_EARLIER[tag])
                elif tag in _LATER:
                    later.setdefault(index, []).append(_LATER[tag])
            if tag == "system-out" and depth == at + 1:
                _listen(index)
            if tag == "property":
                key = attrs.get("name", "")
                if key.startswith("gatecal."):
                    value = attrs.get("value", "")
                    for i in (index, *(i for _, i in enclosing)):  # every enclosing one's
                        cases.props.setdefault(i, {})[key] = value
        elif tag == "system-out" and depth == 2 and root[0] == "testsuite":
            _listen(-1)
        if tag == "testsuite" and (depth == 1 or root[0] != "testsuite"):
            name = attrs.get("name", "")
            open_suites.append(suite)
            suite = suite_code(name)
            changes.append((len(full), suite))
            names.add(name)
            if not first_suite:
                first_suite.append(attrs)

    def _listen(owner: int) -> None:
        out_text.clear()
        out_of[:] = [owner]
        parser.CharacterDataHandler = out_text.append

    def end(tag: str) -> None:
        nonlocal depth, suite, at, index
        if out_of and tag == "system-out":
            parser.CharacterDataHandler = None
            _platform_output(cases, out_of.pop(), "".join(out_text))
            out_text.clear()
        if depth == at:
            at, index = enclosing.pop() if enclosing else (0, index)
        elif tag == "testsuite" and (depth == 1 or root[0] != "testsuite"):
            suite = open_suites.pop()
            changes.append((len(full), suite))
        depth -= 1

    suite_code("")  # code 0: no testsuite
    parser = expat.ParserCreate(namespace_separator="}")  # tags as ElementTree names them
    parser.StartElementHandler = first_start
    parser.EndElementHandler = end
    # hardened as defusedxml's parser is: no entity declared, nothing external fetched
    parser.EntityDeclHandler = _refuse_entity
    parser.UnparsedEntityDeclHandler = _refuse_unparsed_entity
    parser.ExternalEntityRefHandler = _refuse_external
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                parser.Parse(chunk, False)
                if early:
                    advance(path, handle.tell())
            parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise RunsError(f"{path}: not well-formed XML ({exc})") from None
    except RunsError:
        raise
    except DefusedXmlException as exc:  # an entity declared, an external reference
        raise RunsError(f"{path}: refused unsafe XML ({type(exc).__name__})") from None
    check_root(path, root[0])
    _suites_of(cases, changes)
    for i in sorted({*earlier, *later}):
        final = OUTCOMES[outcome[i]]
        cases.attempts[i] = [*earlier.get(i, ()), final, *later.get(i, ())]
    _drop_gate_records(cases)
    if not cases.full and not cases.engine:
        raise RunsError(f"{path}: JUnit XML with no <testcase>")
    root_tag, root_attrib = root
    first = dict(first_suite[0]) if first_suite else None
    schema = " ".join(root_attrib.values()) + " ".join((first or {}).values())
    detail = writer(path, root_tag, root_attrib.get("name"), names, schema, first)
    if cases.platform or cases.engine:
        detail = "junit-platform"  # the JUnit Platform console launcher's --reports-dir
    return JUnitFile(path=path, detail=detail, cases=cases)  # type: ignore[arg-type]


def _platform_output(cases: CaseList, owner: int, text: str) -> None:
    """Keep what the JUnit Platform console launcher writes in a <system-out>: the unique id
    and the display name (``unique-id: [engine:...]/...`` and ``display-name: ...`` lines)."""
    unique_id = display = None
    for line in text.splitlines():
        if line.startswith("unique-id: [engine:") and unique_id is None:
            unique_id = line.removeprefix("unique-id: ").strip()
        elif line.startswith("display-name: ") and display is None:
            display = line.removeprefix("display-name: ").strip()
    if unique_id is None:
        return
    if owner < 0:
        cases.engine = unique_id
    else:
        cases.platform[owner] = (unique_id, display or "")


def _suites_of(cases: CaseList, changes: list[tuple[int, int]]) -> None:
    """Each testcase's testsuite, from where the innermost testsuite open changed."""
    import numpy as np

    starts = np.asarray([first for first, _ in changes] + [len(cases)], dtype=np.int64)
    codes = np.asarray([code for _, code in changes], dtype=np.int32)
    cases.suite = array("i", np.repeat(codes, np.diff(starts)).tobytes())


def _drop_gate_records(cases: CaseList) -> None:
    """Leave out the testcase gatecal's pytest plugin adds for its gate's decision
    (class ``gatecal``, name ``gate``, a ``gatecal.decision`` property): not a test case."""
    drop = {
        i
        for i, props in cases.props.items()
        if "gatecal.decision" in props and cases.full[i] == "gatecal.gate" and cases.cut[i] == 8
    }
    if not drop:
        return
    keep = [i for i in range(len(cases.full)) if i not in drop]
    renumber = {old: new for new, old in enumerate(keep)}
    cases.full[:] = [cases.full[i] for i in keep]
    cases.cut = array("i", [cases.cut[i] for i in keep])
    cases.outcome = array("b", [cases.outcome[i] for i in keep])
    cases.suite = array("i", [cases.suite[i] for i in keep])
    cases.props = {renumber[i]: p for i, p in cases.props.items() if i in renumber}
    cases.attempts = {renumber[i]: a for i, a in cases.attempts.items() if i in renumber}
    cases.platform = {renumber[i]: p for i, p in cases.platform.items() if i in renumber}


def _refuse_entity(name: str, *_: Any) -> None:
    from defusedxml.common import EntitiesForbidden

    raise EntitiesForbidden(name, None, None, None, None, None)


def _refuse_unparsed_entity(name: str, *_: Any) -> None:
    from defusedxml.common import EntitiesForbidden

    raise EntitiesForbidden(name, None, None, None, None, None)


def _refuse_external(context: str, base: str | None, sysid: str | None, pubid: str | None) -> int:
    from defusedxml.common import ExternalReferenceForbidden

    raise ExternalReferenceForbidden(context, base, sysid, pubid)


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
    if cases.props or not distinct(cases.full):
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
    if split is not None:  # repeats in order (#1, #2, ...) whatever order the file lists them
        repeat = np.fromiter((split[i][1] for i in range(n)), dtype=np.int64, count=n)
        order = keep[np.argsort(repeat[keep], kind="stable")]
        every = every and bool((order == keep).all())
        keep = order
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


def distinct(items: Sequence[Any]) -> bool:
    """No two items equal: their hashes all differ (8 bytes an item), or, where two
    hashes meet, a set says."""
    import numpy as np

    hashes = np.fromiter(map(hash, items), dtype=np.int64, count=len(items))
    hashes.sort()
    if not (hashes[1:] == hashes[:-1]).any():
        return True
    return len(set(items)) == len(items)
