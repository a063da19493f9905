"""JUnit testcases as read: a testcase's id, outcome and reruns; which tool wrote a file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gatecal.readers._verdict import RunsError

__all__ = ["Case", "JUnitFile", "check_root", "writer"]

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
    if tag.startswith("{https://schemas.opentest4j.org/reporting/"):
        raise RunsError(
            f"{path}: Open Test Reporting XML, not JUnit XML: read it with --input-format "
            "open-test-reporting (or leave the format to detection)"
        )
    if tag not in ("testsuites", "testsuite"):
        raise RunsError(f"{path}: not JUnit XML (root element <{tag}>)")


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
