"""Every writer takes any string a reader can produce.

Names are drawn from the whole of Unicode, lone surrogates included (a JSON ``"\\ud800"``
escape reads as one), and XML-illegal characters (C0 controls, U+FFFE, U+FFFF). Before:
``check --format junit`` wrote XML that did not parse for a control character, and
``check --format junit``, ``runs --format csv/markdown/parquet`` crashed with
UnicodeEncodeError on a lone surrogate.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from hypothesis import HealthCheck, Phase, assume, example, given, settings, strategies as st

import gatecal
from gatecal._common.unicode import has_surrogates, scrub, xml_safe
from gatecal.cli import main

CASES = [f"case-{j}" for j in range(4)]
ANY = st.characters(codec=None, exclude_categories=())  # every code point, surrogates too
NAMES = st.text(alphabet=ANY, min_size=1, max_size=12)


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # ASCII: \ud800 escapes
    return path


def _files(folder: Path, name: str) -> tuple[Path, Path]:
    base = [{"run": f"n{r}", "case": c, "passed": True} for r in range(20) for c in CASES]
    base += [{"run": f"n{r}", "case": name, "passed": True} for r in range(20)]
    cur = [{"run": "ci", "case": c, "passed": True} for c in CASES]
    cur += [{"run": "ci", "case": name, "passed": False}]
    return _jsonl(folder / "base.jsonl", base), _jsonl(folder / "ci.jsonl", cur)


def run(capsys, *args):
    code = main([str(a) for a in args])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "name", ["bad\x00\x01\x0b\x1bname", "bad\ufffe\uffffname", "bad\ud800name", "\udfff"]
)
def test_the_names_that_broke_each_writer(tmp_path, capsys, name):
    base, ci = _files(tmp_path, name)
    _assert_every_writer(tmp_path, capsys, base, ci)


# a handful of examples, no shrinking: each runs check (a baseline measured) and the writers
@settings(
    max_examples=15,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=list(HealthCheck),
)
@given(name=NAMES)
@example(name="0\r\x13")  # a bare carriage return split the CSV row in two
def test_every_writer_takes_any_name_a_reader_gives(tmp_path_factory, capsys, name):
    folder = tmp_path_factory.mktemp("w")
    base, ci = _files(folder, name)
    try:
        data = gatecal.read_runs([ci])
    except gatecal.RunsError:
        assume(False)  # a name the reader refuses (with one line): nothing to write
    assume(len(data.cases()) == len(CASES) + 1)  # a name that is one of the others
    _assert_every_writer(folder, capsys, base, ci)


def _assert_every_writer(folder: Path, capsys, base: Path, ci: Path) -> None:
    # JUnit: parses, one testcase per baseline case and one for the gate
    code, out, err = run(capsys, "check", ci, "--baseline", base, "--format", "junit")
    assert code in (0, 1) and "Traceback" not in err, err
    root = ET.fromstring(out.encode("utf-8"))
    assert len(root.findall("testsuite/testcase")) == len(CASES) + 2
    for fmt in ("csv", "jsonl", "markdown", "json"):
        target = folder / f"runs.{fmt}"
        code, _, err = run(capsys, "runs", ci, "--format", fmt, "--out", target)
        assert code == 0, err
        text = target.read_bytes().decode("utf-8")  # strict: valid UTF-8
        if fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(text, newline="")))
            assert len(rows) == len(CASES) + 1
        elif fmt == "jsonl":
            assert len([json.loads(x) for x in text.splitlines() if x]) == len(CASES) + 1
        elif fmt == "json":
            json.loads(text)
        code, out, err = run(capsys, "runs", ci, "--format", fmt)  # to standard output
        assert code == 0 and "Traceback" not in err, err
    for fmt in ("table", "markdown", "json"):
        code, out, err = run(capsys, "check", ci, "--baseline", base, "--format", fmt)
        assert code in (0, 1) and "Traceback" not in err, err
    pytest.importorskip("pyarrow")
    target = folder / "runs.parquet"
    code, _, err = run(capsys, "runs", ci, "--format", "parquet", "--out", target)
    assert code == 0, err
    assert len(gatecal.read_runs([target]).cases()) >= len(CASES)  # reads back


@given(text=st.text(alphabet=ANY))
def test_xml_safe_keeps_every_allowed_character_and_always_parses(text):
    safe = xml_safe(text)
    parsed = ET.fromstring(f"<a>{_escape(safe)}</a>".encode())
    # an XML parser reads a carriage return as a newline; nothing else changes
    assert (parsed.text or "") == safe.replace("\r\n", "\n").replace("\r", "\n")
    safe.encode("utf-8")  # never a surrogate left
    if not any(c in text for c in "\\"):
        assert (safe == text) == all(
            c in "\t\n\r" or 0x20 <= ord(c) <= 0xD7FF or 0xE000 <= ord(c) <= 0xFFFD
            or ord(c) >= 0x10000
            for c in text
        )  # fmt: skip


@given(text=st.text(alphabet=ANY))
def test_scrub_replaces_exactly_the_surrogates(text):
    out = scrub(text)
    assert not has_surrogates(out) and len(out) == len(text)
    out.encode("utf-8")
    assert all(a == b or (0xD800 <= ord(a) <= 0xDFFF and b == "\ufffd")
               for a, b in zip(text, out, strict=True))  # fmt: skip


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_the_golden_runs_writer_takes_a_lone_surrogate(tmp_path):
    """Before: UnicodeEncodeError (json.dumps without ASCII escapes, written as UTF-8)."""
    from gatecal.evaluators._repeat import write_runs

    path = write_runs(tmp_path / "runs.jsonl", [{"run": "r", "case": "bad\ud800", "passed": True}])
    assert json.loads(path.read_text(encoding="utf-8"))["case"] == "bad\ufffd"
