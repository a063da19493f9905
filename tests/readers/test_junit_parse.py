"""JUnit files parsed by expat callbacks read what an ElementTree walk of them reads.

The reference below builds the whole element tree (with defusedxml, as a reader of
untrusted files must) and reads every testcase from it: its full id, its outcome and
rerun outcomes, its gatecal properties and its testsuite; `parse_file` must give the same
for every JUnit fixture and for the odd shapes here, and the same error for XML that is
not well-formed or not safe.
"""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from defusedxml import ElementTree as SafeET

import gatecal
from gatecal.readers._verdict import RunsError
from gatecal.readers.junit.stream import parse_file
from gatecal.readers.table import blocks as _blocks
from tests.paths import FIXTURES

XML_FIXTURES = sorted(FIXTURES.rglob("*.xml"))
_FAILED = {"failure": "failed", "error": "error", "skipped": "skipped"}
_EARLIER = {"flakyFailure": "failed", "flakyError": "error"}
_LATER = {"rerunFailure": "failed", "rerunError": "error"}


def _reference(path: Path) -> list[tuple[str, str, list[str], dict[str, str], str]]:
    """(full id, name, attempts, gatecal properties, testsuite) of every testcase, from
    the element tree."""
    root = SafeET.fromstring(path.read_bytes())
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    suite_of = {id(c): s.get("name", "") for s in suites for c in s.iter("testcase")}
    out = []
    for element in root.iter("testcase"):
        name, classname = element.get("name"), element.get("classname") or ""
        if (classname, name) == ("gatecal", "gate") and any(
            p.get("name") == "gatecal.decision" for p in element.iter("property")
        ):
            continue  # the plugin's record of its gate's decision: not a test case
        final, earlier, later = "passed", [], []
        for child in element:
            tag = child.tag
            if tag == "skipped" and child.get("type") == "gatecal.tolerated":
                tag = "failure"  # a failure the plugin's gate tolerated
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
        full = f"{classname}.{name}" if classname else name
        out.append((full, name, [*earlier, final, *later], props, suite_of.get(id(element), "")))
    return out


def _parsed(path: Path) -> list[tuple[str, str, list[str], dict[str, str], str]]:
    return [(c.full, c.name, c.attempts, c.props, c.suite) for c in parse_file(path).cases]


def _junit_root(path: Path) -> bool:
    return ET.parse(path).getroot().tag in ("testsuites", "testsuite")


@pytest.mark.parametrize("path", [p for p in XML_FIXTURES if _junit_root(p)], ids=str)
def test_every_junit_fixture_reads_as_its_element_tree(path):
    assert _parsed(path) == _reference(path)


ODD = {
    "nested suites": '<testsuites name="all"><testsuite name="outer"><testcase name="a"/>'
    '<testsuite name="inner"><testcase classname="k" name="b"><failure/><error/></testcase>'
    '</testsuite><testcase name="c"><skipped/></testcase></testsuite></testsuites>',
    "root testsuite with a nested one": '<testsuite name="top"><testsuite name="sub">'
    '<testcase name="a"><error/></testcase></testsuite><testcase name="b"/></testsuite>',
    "reruns and flaky": '<testsuite><testcase name="a"><flakyFailure/><flakyError/>'
    '</testcase><testcase name="b"><failure/><rerunFailure/><rerunError/></testcase></testsuite>',
    "properties": '<testsuite><testcase name="a"><properties><property name="gatecal.case" '
    'value="x"/><property name="other" value="y"/><property name="gatecal.case" value="z"/>'
    '</properties></testcase><testcase name="b"><property name="gatecal.check" value="c"/>'
    "</testcase></testsuite>",
    "outcome not a direct child": '<testsuite><testcase name="a"><system-out><failure/>'
    "</system-out></testcase></testsuite>",
    "namespaces": '<testsuites xmlns:x="urn:x"><testsuite name="s" x:hostname="h">'
    '<testcase name="a"/><x:testcase name="hidden"/></testsuite></testsuites>',
    "a testcase in a testcase": '<testsuite><testcase name="outer"><property '
    'name="gatecal.kind" value="judge"/><testcase name="inner"><failure/><property '
    'name="gatecal.check" value="c"/></testcase><error/></testcase></testsuite>',
    "latin-1 declared": '<?xml version="1.0" encoding="ISO-8859-1"?>'
    '<testsuite><testcase name="caf\xe9"/></testsuite>',
    "the plugin's gate record and a tolerated failure": '<testsuite><testcase name="a">'
    '<skipped type="gatecal.tolerated"/></testcase><testcase classname="gatecal" name="gate">'
    '<properties><property name="gatecal.decision" value="pass"/></properties></testcase>'
    '<testcase classname="gatecal" name="gate"/><testcase name="b"><skipped/></testcase>'
    "</testsuite>",
    "CDATA and comments": '<testsuite><!-- c --><testcase name="a"><failure><![CDATA[<x>]]>'
    "</failure></testcase></testsuite>",
}


@pytest.mark.parametrize("name", sorted(ODD))
@pytest.mark.parametrize("big", [False, True])
def test_odd_shapes_read_as_their_element_tree(name, big, tmp_path, monkeypatch):
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0 if big else 1 << 40)
    path = tmp_path / "t.xml"
    encoding = "latin-1" if "latin-1" in name else "utf-8"
    path.write_bytes(ODD[name].encode(encoding))
    assert _parsed(path) == _reference(path)


def test_who_wrote_a_file_is_read_from_its_root_and_first_suite(tmp_path):
    path = tmp_path / "TEST-x.xml"
    path.write_text('<testsuite name="x" hostname="h"><testcase name="a"/></testsuite>')
    assert parse_file(path).detail == "gradle"
    path.write_text(
        '<testsuites name="promptfoo"><testsuite><testcase name="a"/></testsuite></testsuites>'
    )
    assert parse_file(path).detail == "promptfoo"
    path.write_text(
        '<testsuites><testsuite name="pytest"><testcase name="a"/></testsuite></testsuites>'
    )
    assert parse_file(path).detail == "pytest"


BROKEN = [
    "<testsuite><testcase name='a'></testsuite>",
    "<testsuite><testcase name='a'/>",
    "<testsuite>&nope;</testsuite>",
    "<testsuite/><testsuite/>",
    "",
    "   ",
    "<testsuite name='a' name='b'/>",
]


@pytest.mark.parametrize("text", BROKEN)
def test_xml_that_is_not_well_formed_is_named_as_elementtree_names_it(text, tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text(text)
    with pytest.raises(ET.ParseError) as expected:
        ET.fromstring(text.encode())
    with pytest.raises(RunsError) as got:
        parse_file(path)
    assert str(got.value) == f"{path}: not well-formed XML ({expected.value})"


UNSAFE = {
    "entity bomb": '<!DOCTYPE t [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>'
    '<testsuite><testcase name="&b;"/></testsuite>',
    "external entity": '<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    '<testsuite><testcase name="&x;"/></testsuite>',
    "unparsed entity": '<!DOCTYPE t [<!NOTATION n SYSTEM "n"><!ENTITY u SYSTEM "u" NDATA n>]>'
    '<testsuite><testcase name="a"/></testsuite>',
    "external DTD": '<!DOCTYPE testsuite SYSTEM "http://example.invalid/x.dtd">'
    '<testsuite><testcase name="a"/></testsuite>',
}


@pytest.mark.parametrize("name", sorted(UNSAFE))
def test_unsafe_xml_is_refused_as_defusedxml_refuses_it(name, tmp_path):
    path = tmp_path / "unsafe.xml"
    path.write_text(UNSAFE[name])
    try:
        SafeET.fromstring(UNSAFE[name].encode(), forbid_dtd=False)
    except Exception as exc:
        refused = type(exc).__name__
    else:
        refused = None
    if refused is None:  # defusedxml reads it (a DTD named, nothing fetched): so do we
        assert _parsed(path) == _reference(path)
    else:
        with pytest.raises(RunsError, match=rf"unsafe\.xml: refused unsafe XML \({refused}\)"):
            parse_file(path)


def test_a_root_that_is_not_junit_is_refused_after_parsing_a_small_file(tmp_path, monkeypatch):
    path = tmp_path / "page.xml"
    path.write_text("<html><body></html>")
    with pytest.raises(RunsError, match="not well-formed XML"):
        parse_file(path)
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0)  # a big file: at its first element
    with pytest.raises(RunsError, match=r"not JUnit XML \(root element <html>\)"):
        parse_file(path)
    path.write_text("<results/>")
    with pytest.raises(RunsError, match=r"not JUnit XML \(root element <results>\)"):
        parse_file(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<testsuite><testcase classname='k'/></testsuite>", "a <testcase> has no name attribute"),
        ("<testsuite name='s'/>", "JUnit XML with no <testcase>"),
        ("<promptfoo/>", "promptfoo's XML dump"),
    ],
)
def test_junit_errors_name_the_file(text, message, tmp_path):
    path = tmp_path / "r.xml"
    path.write_text(text)
    with pytest.raises(RunsError, match=f"r\\.xml: {message}"):
        parse_file(path)


def test_many_small_files_are_one_run_each(tmp_path):
    """30 folders of one file each (the CI-artefact layout): each file's outcomes are its
    run's, folded as columns."""
    for k in range(30):
        folder = tmp_path / f"build-{k}"
        folder.mkdir()
        cases = "".join(
            f'<testcase classname="t" name="c{i}">{"<failure/>" if (i + k) % 7 == 0 else ""}'
            "</testcase>"
            for i in range(50)
        )
        (folder / "junit.xml").write_text(f'<testsuite name="pytest">{cases}</testsuite>')
    data = gatecal.read_runs([tmp_path])
    runs, cases, outcome = data.outcome_array("healthy")
    assert sorted(runs) == sorted(f"build-{k}" for k in range(30))
    assert cases == [f"t.c{i}" for i in range(50)]
    ks = [int(run.removeprefix("build-")) for run in runs]
    expected = [[0 if (i + k) % 7 == 0 else 1 for i in range(50)] for k in ks]
    assert outcome.tolist() == expected
