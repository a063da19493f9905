"""One tuple of formats: format detection, ``--input-format`` and its help come from it."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

import gatecal
from gatecal.cli import main
from gatecal.readers._base import Head, Source
from gatecal.readers._read import detect_format
from gatecal.readers._registry import FORMATS, INPUT_FORMATS, listed, reader, readers
from gatecal.readers._verdict import RunsError
from tests.paths import FIXTURES

# a file of each format, and the format detection must find in it
EXAMPLES = {
    "junit": FIXTURES / "junit" / "artefacts" / "build-1041" / "junit.xml",
    "promptfoo": FIXTURES / "promptfoo" / "main.json",
    "inspect": FIXTURES / "inspect_ai" / "main.json",
    "deepeval": next((FIXTURES / "deepeval" / "two-invocations").rglob("*.json")),
}


def _help(command: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([command, "--help"])
    assert code == 0
    return " ".join(out.getvalue().split())  # help text is wrapped at any space


def test_every_format_is_registered_once_under_its_own_name():
    assert len(set(INPUT_FORMATS)) == len(INPUT_FORMATS) == len(FORMATS)
    for fmt, found in zip(INPUT_FORMATS, readers(), strict=True):
        assert fmt == found.FORMAT
        assert isinstance(found.MAGIC, bytes)
        assert isinstance(found.GROUPED, bool) and isinstance(found.STREAMS, bool)
        assert found.SUFFIXES and all(s.startswith(".") and s == s.lower() for s in found.SUFFIXES)
        assert callable(found.sniff) and callable(found.read)
    assert gatecal.INPUT_FORMATS == INPUT_FORMATS


def test_a_registry_line_naming_the_wrong_reader_is_refused(monkeypatch):
    from gatecal.readers import _registry

    wrong = tuple((name, "gatecal.readers.table.rows:Csv") for name, _ in FORMATS)
    monkeypatch.setattr(_registry, "FORMATS", wrong)
    with pytest.raises(RuntimeError, match="reads 'csv', registered as 'junit'"):
        reader("junit")


@pytest.mark.parametrize("command", ["runs", "recommend", "check", "compare"])
def test_every_format_is_named_in_the_help_of_commands_that_read_runs(command):
    text = _help(command)
    assert f"detecting it from the content: {listed()}." in text
    for fmt in INPUT_FORMATS:
        assert fmt in text


def test_an_unknown_input_format_lists_every_format():
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["runs", str(EXAMPLES["junit"]), "--input-format", "xlsx"])
    assert code == 2
    assert f"must be one of {', '.join(INPUT_FORMATS)} (got 'xlsx')" in err.getvalue()


@pytest.mark.parametrize("fmt", sorted(EXAMPLES))
def test_detection_finds_each_format_and_no_other_reader_claims_the_file(fmt):
    raw = EXAMPLES[fmt].read_bytes()
    assert detect_format(EXAMPLES[fmt], raw) == fmt
    head = Head(EXAMPLES[fmt], raw)
    claimed = [r.FORMAT for r in readers() if r.sniff(head)]
    assert claimed == [fmt]


def test_the_long_table_and_parquet_are_detected(tmp_path):
    data = gatecal.read_runs([EXAMPLES["junit"]])
    csv = tmp_path / "t.csv"
    csv.write_text("run,case,passed\nr1,a,true\n", encoding="utf-8")
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(json.dumps({"run": "r1", "case": "a", "passed": True}) + "\n")
    assert detect_format(csv, csv.read_bytes()) == "csv"
    assert detect_format(jsonl, jsonl.read_bytes()) == "jsonl"
    pytest.importorskip("pyarrow")
    from gatecal.readers.table.parquet import write_parquet

    parquet = tmp_path / "t.parquet"
    parquet.write_bytes(write_parquet(data))
    assert detect_format(parquet, parquet.read_bytes()) == "parquet"
    assert gatecal.read_runs([parquet]).cases() == data.cases()


def test_text_no_reader_claims_is_one_error_naming_the_file(tmp_path):
    odd = tmp_path / "odd.json"
    odd.write_text('{"neither": 1}')
    with pytest.raises(RunsError, match=r"odd\.json: JSON that is not a promptfoo results file"):
        detect_format(odd, odd.read_bytes())
    empty = tmp_path / "empty.csv"
    empty.write_text("  \n")
    with pytest.raises(RunsError, match=r"empty\.csv: the file is empty"):
        detect_format(empty, empty.read_bytes())


def test_a_source_reads_its_file_only_when_no_bytes_were_given(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"on disk")
    assert Source(path).read_bytes() == b"on disk"
    assert Source(path, raw=b"given").read_bytes() == b"given"


def test_a_folder_is_searched_for_every_format_s_files(tmp_path):
    suffixes = sorted({s for found in readers() for s in found.SUFFIXES})
    with pytest.raises(RunsError, match=f"no run files \\({re.escape(', '.join(suffixes))}\\)"):
        gatecal.read_runs([tmp_path])
