"""Open Test Reporting XML: the JUnit Platform's own report (``open-test-report.xml``,
``junit-platform-events-*.xml``) and any other tool's.

The format (schemas at https://github.com/ota4j-team/open-test-reporting) comes in two
shapes: *events* (``<e:events>``: ``started`` and ``finished`` elements joined by ``id``,
nested by ``parentId``), which the JUnit Platform writes when
``junit.platform.reporting.open.xml.enabled=true``, and *hierarchy* (``<h:execution>``:
``root`` and ``child`` elements nested), which its converter makes from events. Namespace
versions 0.1.0 (JUnit 5.9) and 0.2.0 are read alike.

Run
    One file is one invocation: one run, named after the file (``#i`` added for
    repetitions, below).
Case
    A test is a node JUnit marks ``TEST`` (or ``CONTAINER_AND_TEST``) in its metadata; in a
    file without JUnit's metadata, a node without children. Its id is its class and its
    legacy reporting name (``example.JudgeTest.consistency()``), as the console launcher's
    legacy XML names it; an invocation of a ``@ParameterizedTest`` takes its display name in
    place of its index (``example.JudgeTest.relevancy(String)[answer-broken]``), unless two
    invocations share one (then the index stays: ``relevancy(String)[2]``). Without JUnit's
    metadata the id is the path of names below the root
    (``fn-analyze-string/analyzeString-001``).
Repetitions
    An invocation whose display name is ``repetition i of n`` (``@RepeatedTest``) is
    repetition i of its test: run ``<run>#i``; the file's other tests are in ``<run>#1``.
Outcomes
    ``SUCCESSFUL`` passes, ``FAILED`` fails, ``ERRORED`` is an error (neither), ``SKIPPED``
    and ``ABORTED`` (an assumption that did not hold) are missing data; a test started and
    never finished is an error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gatecal.readers._base import (
    Batch,
    Head,
    ReaderBase,
    ReadOptions,
    Source,
    each_source,
    is_open_test_reporting,
    outcome_verdict,
)
from gatecal.readers._data import Skip
from gatecal.readers._verdict import RunsError

__all__ = ["OpenTestReporting", "read_open_test_reporting"]

_NS = "https://schemas.opentest4j.org/reporting/"
_JUNIT = "{https://schemas.junit.org/open-test-reporting}"
_STATUS = {
    "SUCCESSFUL": "passed",
    "FAILED": "failed",
    "ERRORED": "error",
    "SKIPPED": "skipped",
    "ABORTED": "skipped",
}
_REPETITION = re.compile(r"^repetition (?P<i>\d+) of (?P<n>\d+)$")
_INVOCATION = "[test-template-invocation:#"


@dataclass(slots=True)
class _Node:
    name: str
    parent: str | None
    unique_id: str = ""
    legacy: str = ""
    kind: str = ""
    class_name: str = ""
    status: str | None = None
    children: list[str] = field(default_factory=list)


def _local(tag: str) -> tuple[str, str]:
    """(namespace family, local name): ``{https://.../events/0.2.0}started`` -> (events,
    started); the family is empty outside Open Test Reporting's namespaces."""
    if tag.startswith("{" + _NS):
        uri, _, local = tag[1:].partition("}")
        return uri[len(_NS) :].split("/", 1)[0], local
    if tag.startswith(_JUNIT):
        return "junit", tag[len(_JUNIT) :]
    return "", tag.rpartition("}")[2]


def _parse(path: Path) -> tuple[str, dict[str, _Node], list[str]]:
    """(shape, nodes by id, ids in document order) of one file."""
    from xml.etree.ElementTree import ParseError

    from defusedxml.common import DefusedXmlException
    from defusedxml.ElementTree import iterparse

    nodes: dict[str, _Node] = {}
    order: list[str] = []
    shape = ""
    stack: list[str] = []  # hierarchy: the ids of the nodes open
    current: str | None = None  # the node whose metadata, sources or result are being read
    try:
        with open(path, "rb") as handle:  # closed however the parse ends
            for event, element in iterparse(handle, events=("start", "end")):
                family, local = _local(element.tag)
                if not shape:
                    if (family, local) not in (("events", "events"), ("hierarchy", "execution")):
                        raise RunsError(
                            f"{path}: not Open Test Reporting XML (root element <{local}>)"
                        )
                    shape = family
                    continue
                if event == "start":
                    if family == "events" and local == "started":
                        key = element.get("id", "")
                        if not key or key in nodes:
                            raise RunsError(
                                f"{path}: a <started> with no id or a repeated id {key!r}"
                            )
                        nodes[key] = _Node(
                            name=element.get("name", ""), parent=element.get("parentId")
                        )
                        order.append(key)
                        current = key
                    elif family == "events" and local == "finished":
                        current = element.get("id", "")
                        if current not in nodes:
                            raise RunsError(f"{path}: <finished id={current!r}> was never started")
                    elif family == "hierarchy" and local in ("root", "child"):
                        key = str(len(order))
                        parent = stack[-1] if stack else None
                        nodes[key] = _Node(name=element.get("name", ""), parent=parent)
                        order.append(key)
                        stack.append(key)
                        current = key
                    continue
                # end events: the element's text and attributes are complete
                if family == "hierarchy" and local in ("root", "child"):
                    stack.pop()
                    current = stack[-1] if stack else None
                elif current is not None and family == "junit":
                    node = nodes[current]
                    text = (element.text or "").strip()
                    if local == "uniqueId":
                        node.unique_id = text
                    elif local == "legacyReportingName":
                        node.legacy = text
                    elif local == "type":
                        node.kind = text
                elif current is not None and family == "java" and local.endswith("Source"):
                    nodes[current].class_name = nodes[current].class_name or element.get(
                        "className", ""
                    )
                elif current is not None and family == "core" and local == "result":
                    status = element.get("status", "")
                    if status not in _STATUS:
                        raise RunsError(f"{path}: unknown result status {status!r}")
                    nodes[current].status = status
                elif family == "events" and local in ("started", "finished", "reported"):
                    current = None
                if local in ("started", "finished", "reported", "root", "child"):
                    element.clear()
    except ParseError as exc:
        raise RunsError(f"{path}: not well-formed XML ({exc})") from None
    except DefusedXmlException as exc:
        raise RunsError(f"{path}: refused unsafe XML ({type(exc).__name__})") from None
    for key in order:
        parent = nodes[key].parent
        if parent is not None:
            if parent not in nodes:
                raise RunsError(f"{path}: node {key!r} names parent {parent!r}, never started")
            nodes[parent].children.append(key)
    _refuse_cycles(path, nodes)
    return shape, nodes, order


def _refuse_cycles(path: Path, nodes: dict[str, _Node]) -> None:
    """One error when a node is its own ancestor (parentId going round)."""
    done: set[str] = set()
    for key in nodes:
        trail: list[str] = []
        at: str | None = key
        while at is not None and at not in done:
            if at in trail:
                raise RunsError(f"{path}: node {at!r} is its own ancestor (parentId goes round)")
            trail.append(at)
            at = nodes[at].parent
        done.update(trail)


def _tests(nodes: dict[str, _Node], order: list[str]) -> list[str]:
    junit = any(n.kind for n in nodes.values())
    if junit:
        return [k for k in order if nodes[k].kind in ("TEST", "CONTAINER_AND_TEST")]
    return [k for k in order if not nodes[k].children]


def _case_ids(nodes: dict[str, _Node], tests: list[str]) -> dict[str, tuple[str, int]]:
    """Each test's (case id, repetition i; 0 when not a repetition)."""
    out: dict[str, tuple[str, int]] = {}
    shared: dict[str | None, list[str]] = {}  # template -> its invocations' display names
    for key in tests:
        node = nodes[key]
        if _INVOCATION in node.unique_id:
            shared.setdefault(node.parent, []).append(node.name)
    for key in tests:
        node = nodes[key]
        if not node.kind:  # no JUnit metadata: the path of names below the root
            names = []
            at: str | None = key
            while at is not None and nodes[at].parent is not None:
                names.append(nodes[at].name)
                at = nodes[at].parent
            out[key] = ("/".join(reversed(names)) or node.name, 0)
            continue
        name, repeat = node.legacy or node.name, 0
        parent = nodes.get(node.parent or "")
        if _INVOCATION in node.unique_id and parent is not None:
            match = _REPETITION.match(node.name)
            displays = shared.get(node.parent, [])
            if match and int(match.group("i")) <= int(match.group("n")):
                name, repeat = parent.legacy or parent.name, int(match.group("i"))
            elif node.name and displays.count(node.name) == 1:
                name = f"{parent.legacy or parent.name}[{node.name}]"
        out[key] = (f"{node.class_name}.{name}" if node.class_name else name, repeat)
    return out


def read_open_test_reporting(path: Path, build: str, label: str = "") -> Batch:
    """Read one Open Test Reporting file (see the module docstring)."""
    shape, nodes, order = _parse(path)
    tests = _tests(nodes, order)
    if not tests:
        raise RunsError(f"{path}: Open Test Reporting XML with no test")
    ids = _case_ids(nodes, tests)
    session = label or path.stem
    repeated = any(i for _, i in ids.values())
    notes = ["one run per file"]
    if repeated:
        n_tests = len({case for case, i in ids.values() if i})
        notes.append(
            f"{n_tests} test(s) repeated in one invocation (@RepeatedTest): repetition i is "
            "run #i, not a rerun"
        )
    batch = Batch()
    seen: set[tuple[str, str]] = set()
    runs: dict[str, None] = {}
    n_skipped = n_errors = 0
    for key in sorted(tests, key=lambda k: ids[k][1]):  # repetitions in order
        case, i = ids[key]
        run = f"{session}#{max(i, 1)}" if repeated else session
        if (run, case) in seen:
            raise RunsError(f"{path}: two tests are both {case!r}; read with the index kept")
        seen.add((run, case))
        runs[run] = None
        status = nodes[key].status
        outcome = "error" if status is None else _STATUS[status]
        if outcome == "skipped":
            batch.skips.append(
                Skip(build=build, run=run, case=case, source=str(path), session=session)
            )
            n_skipped += 1
            continue
        verdict = outcome_verdict(
            outcome, build=build, run=run, case=case, session=session, source=str(path)
        )
        batch.verdicts.append(verdict)
        n_errors += verdict.status == "error"
    detail = ("junit " if any(n.kind for n in nodes.values()) else "") + shape
    batch.add_file(
        path,
        "open-test-reporting",
        detail,
        build,
        runs,
        errors=n_errors,
        notes=notes,
        skipped=n_skipped,
    )
    return batch


class OpenTestReporting(ReaderBase):
    """Open Test Reporting XML, events or hierarchy (see the module docstring)."""

    FORMAT = "open-test-reporting"
    STREAMS = True
    SUFFIXES = (".xml",)

    @staticmethod
    def sniff(head: Head) -> bool:
        return is_open_test_reporting(head.text)

    @staticmethod
    def read(sources: Sequence[Source], build: str, options: ReadOptions) -> Batch:
        return each_source(sources, lambda s: read_open_test_reporting(s.path, build, s.label))
