"""The gate's decision written into pytest's ``--junitxml`` file, after pytest wrote it.

Without this, a session the gate passed (exit 0) leaves a JUnit file that says
``failures="N"`` and nothing of the gate: Jenkins marks the build unstable, GitLab lists the
failures in the merge request and JUnit-reporting actions fail their check, for a build the
gate accepted. So, once the gate has decided:

* a testcase ``gatecal.gate`` is added to the first test suite: passed when the gate passed
  (its ``system-out`` the decision line, the evidence), a ``failure`` whose message is the
  decision line when the gate failed or the evidence was incomplete;
* when the gate passed and the session exits 0, each failure of a marked test the gate
  tolerated becomes ``<skipped type="gatecal.tolerated">`` whose message starts with
  ``tolerated by the gatecal gate`` and carries the judge's own message, its text the
  original failure text: visible, never counted as a failure. ``--gatecal-keep-failures``
  keeps them as failures;
* the suites' ``tests``, ``failures`` and ``skipped`` counts follow.

The file is pytest's own output, parsed with the standard library and replaced atomically;
a file that is not a regular file, or cannot be parsed, is left as it is (the note says so).
Standard library only, as the plugin.
"""

from __future__ import annotations

import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

__all__ = ["GATE_CLASSNAME", "GATE_NAME", "TOLERATED", "write_decision"]

GATE_CLASSNAME = "gatecal"
GATE_NAME = "gate"
TOLERATED = "gatecal.tolerated"
_CASE_PROPERTY = "gatecal.case"


def _gated(testcase: ET.Element) -> bool:
    props = testcase.find("properties")
    return props is not None and any(
        p.get("name") == _CASE_PROPERTY for p in props.findall("property")
    )


def _add(suite: ET.Element, name: str, delta: int) -> None:
    if delta and suite.get(name) is not None:
        suite.set(name, str(int(suite.get(name) or 0) + delta))


def write_decision(
    path: str | Path, decision: str, line: str, exitstatus: int, *, keep_failures: bool
) -> str | None:
    """Write the gate's `decision` (pass, fail, incomplete or continue) and its `line` into
    the JUnit file at `path`; tolerate the marked failures when the gate passed and the
    session exits 0, unless `keep_failures`. Return a note when the file was left as it is."""
    target = Path(path)
    if not target.is_file():
        return f"{target} is not a regular file: the gate's decision is not written into it"
    try:
        tree = ET.parse(target)
    except (OSError, ET.ParseError) as exc:
        return f"{target} could not be read back ({exc}): the gate's decision is not in it"
    root = tree.getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    if not suites:
        return f"{target} holds no testsuite: the gate's decision is not written into it"
    tolerate = decision == "pass" and exitstatus == 0 and not keep_failures
    tolerated = 0
    if tolerate:
        for suite in suites:
            moved = 0
            for testcase in suite.iter("testcase"):
                if not _gated(testcase):
                    continue
                for failure in testcase.findall("failure"):
                    message = failure.get("message") or ""
                    skipped = ET.Element(
                        "skipped",
                        {
                            "type": TOLERATED,
                            "message": f"tolerated by the gatecal gate: {message}".rstrip(": "),
                        },
                    )
                    skipped.text = failure.text
                    index = list(testcase).index(failure)
                    testcase.remove(failure)
                    testcase.insert(index, skipped)
                    moved += 1
            _add(suite, "failures", -moved)
            _add(suite, "skipped", moved)
            tolerated += moved
    gate = ET.SubElement(
        suites[0], "testcase", {"classname": GATE_CLASSNAME, "name": GATE_NAME, "time": "0.000"}
    )
    props = ET.SubElement(gate, "properties")
    ET.SubElement(props, "property", {"name": "gatecal.decision", "value": decision})
    ET.SubElement(props, "property", {"name": "gatecal.tolerated", "value": str(tolerated)})
    passed = decision == "pass" and exitstatus == 0
    if passed:
        ET.SubElement(gate, "system-out").text = line
    else:
        failure = ET.SubElement(gate, "failure", {"type": "gatecal.gate", "message": line})
        failure.text = line
    _add(suites[0], "tests", 1)
    _add(suites[0], "failures", 0 if passed else 1)
    if root is not suites[0]:  # pytest's <testsuites> carries no counts today; if it does
        _add(root, "tests", 1)
        _add(root, "failures", 0 if passed else 1)
        _add(root, "failures", -tolerated)
        _add(root, "skipped", tolerated)
    fd, tmp = tempfile.mkstemp(prefix=".gatecal-", suffix=".xml", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            tree.write(out, encoding="utf-8", xml_declaration=True)
        os.chmod(tmp, target.stat().st_mode & 0o777)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        return f"{target} could not be rewritten ({exc.strerror}): the gate's decision is not in it"
    return None
