"""JUnit testcases as read: a testcase's id, outcome and reruns; which tool wrote a file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatecal.readers._verdict import RunsError

__all__ = ["Case", "JUnitFile", "check_root", "is_gate_record", "read_testcase", "writer"]

_FAILED = {"failure": "failed", "error": "error", "skipped": "skipped"}
_EARLIER = {"flakyFailure": "failed", "flakyError": "error"}
_LATER = {"rerunFailure": "failed", "rerunError": "error"}


@dataclass(slots=True)
class Case:
    full: str
    name: str
    attempts: list[str]  # outcomes in order: passed, failed, error, skipped
    props: dict[str, str] = field(default_factory=dict)
    suite: str = ""


@dataclass(slots=True)
class JUnitFile:
    path: Path
    detail: str
    cases: list[Case]


def check_root(path: Path, tag: str) -> None:
    """Refuse a root element that is not JUnit's (promptfoo's XML dump, anything else)."""
    if tag == "promptfoo":
        raise RunsError(
            f"{path}: promptfoo's XML dump (-o results.xml) is not read; write "
            "promptfoo eval -o results.json and read that"
        )
    if tag not in ("testsuites", "testsuite"):
        raise RunsError(f"{path}: not JUnit XML (root element <{tag}>)")


def is_gate_record(element: Any) -> bool:
    """The testcase gatecal's pytest plugin adds for its gate's decision: not a test case."""
    return (
        element.get("classname") == "gatecal"
        and element.get("name") == "gate"
        and any(p.get("name") == "gatecal.decision" for p in element.iter("property"))
    )


def read_testcase(
    element: Any, path: Path
) -> tuple[str, str, str, list[str], list[str], dict[str, str]]:
    """One ``<testcase>``: (full id, name, outcome, earlier and later rerun outcomes,
    gatecal.* properties)."""
    name = element.get("name")
    if not name:
        raise RunsError(f"{path}: a <testcase> has no name attribute")
    classname = element.get("classname") or ""
    final = "passed"
    earlier: list[str] = []
    later: list[str] = []
    for child in element:
        tag = child.tag
        if tag == "skipped" and child.get("type") == "gatecal.tolerated":
            tag = "failure"  # a failure gatecal's gate tolerated is still a failed verdict
        if tag in _FAILED and final == "passed":
            final = _FAILED[tag]
        elif tag in _EARLIER:
            earlier.append(_EARLIER[tag])
        elif tag in _LATER:
            later.append(_LATER[tag])
    props = {
        p.get("name", ""): p.get("value", "")
        for p in element.iter("property")
        if p.get("name", "").startswith("gatecal.")
    }
    return (f"{classname}.{name}" if classname else name), name, final, earlier, later, props


def writer(
    path: Path,
    root_tag: str,
    root_name: str | None,
    names: set[str],
    schema: str,
    first_suite: dict[str, str] | None,
) -> str:
    """Which tool wrote the file: promptfoo, pytest, surefire, gradle or junit."""
    if root_tag == "testsuites" and root_name == "promptfoo":
        return "promptfoo"
    if "pytest" in names:
        return "pytest"
    if "surefire" in schema.lower():
        return "surefire"
    if path.name.startswith("TEST-") and (first_suite or {}).get("hostname") is not None:
        return "gradle"
    return "junit"
