"""Big tables are read in blocks; every table reads the same either way.

The block reader (gatecal/readers/table/blocks.py) is engaged for files from STREAM_MIN_BYTES
on. Here that limit is set to 0 (every table read in blocks) and to a size no test file
reaches (every table read row by row, as before), and the two reads must agree on every
verdict, skip, component, count, run order, warning and error message.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gatecal
from gatecal.readers._columns import VerdictBuilder, VerdictColumns
from gatecal.readers._verdict import RunsError, Verdict
from gatecal.readers.table import blocks as _blocks
from tests.paths import FIXTURES


@pytest.fixture(params=["arrow", "python"])
def csv_strings(request, monkeypatch):
    """CSV blocks parsed into Arrow strings (pyarrow installed) or Python strings."""
    monkeypatch.setattr(_blocks, "has_pyarrow", lambda: request.param == "arrow")
    return request.param


def _read(paths, monkeypatch, blocks: bool, **kwargs):
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0 if blocks else 1 << 40)
    try:
        return gatecal.read_runs([str(p) for p in paths], **kwargs)
    except RunsError as exc:
        return f"RunsError: {exc}"


def _same(a, b) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return

    def rows(data):
        return [tuple(_key(getattr(v, f)) for f in v.__slots__) for v in data.verdicts]

    assert rows(a) == rows(b)
    assert a.skips == b.skips and a.components == b.components
    assert a.files == b.files and a.reruns == b.reruns and a.warnings == b.warnings
    for build in ("healthy", "regressed"):
        assert a.case_outcomes(build) == b.case_outcomes(build)
        assert a.sessions(build) == b.sessions(build)
    assert a.cases() == b.cases() and a.checks() == b.checks()


def _key(value):
    """NaN equals NaN, and -0.0 is not 0.0, when comparing reads."""
    if isinstance(value, float):
        return ("float", repr(value)) if not math.isnan(value) else ("nan",)
    return value


def _long_tables() -> list[Path]:
    found = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in (".csv", ".jsonl") and path.is_file():
            found.append(path)
    return found


@pytest.mark.parametrize("path", _long_tables(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_fixture_table_reads_the_same_in_blocks(path, monkeypatch, csv_strings):
    _same(_read([path], monkeypatch, True), _read([path], monkeypatch, False))


def test_a_written_long_table_reads_back_the_same_in_blocks(tmp_path, monkeypatch):
    """Every framework's fixtures, converted to the long table, read back both ways."""
    junit = FIXTURES / "junit" / "artefacts"
    data = gatecal.read_runs([str(junit)])
    from gatecal.readers._summary import render_runs

    for fmt in ("csv", "jsonl"):
        out = tmp_path / f"runs.{fmt}"
        out.write_text(render_runs(data, fmt))
        blocks, rows = _read([out], monkeypatch, True), _read([out], monkeypatch, False)
        _same(blocks, rows)
        assert not isinstance(blocks, str) and len(blocks.verdicts) == len(data.verdicts)


def _edge_rows():
    yield {"run": "r1", "case": "a", "passed": "true"}
    yield {"run": " r1 ", "case": "b", "passed": "FAIL", "check": "rel", "kind": "Judge"}
    yield {"run": "r1", "case": "c", "passed": "", "status": "skipped", "attempts": "3"}
    yield {"run": "r1", "case": "d", "passed": "no", "status": "component", "check": "x"}
    yield {"run": "r2", "case": "a", "passed": "1", "score": "-0.0", "attempts": "3"}
    yield {"run": "r2", "case": "b", "passed": "", "status": "error", "cost": "0.25"}
    yield {"run": "r2", "case": "f", "passed": "true", "status": "unscored"}
    yield {"run": "r2", "case": "'=SUM(A1)", "passed": "yes", "tokens": "12", "cached": "true"}
    yield {"run": "r2", "case": "e, quoted", "passed": "pass", "build": "regressed"}
    yield {"run": "r3", "case": "a", "passed": "false", "score": "nan", "session": "s"}


def _write_csv(path: Path, rows, delimiter=",") -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=keys, delimiter=delimiter, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(buffer.getvalue())


def test_edge_cases_read_the_same_in_blocks(tmp_path, monkeypatch, csv_strings):
    rows = list(_edge_rows())
    for delimiter in (",", ";", "\t"):
        path = tmp_path / f"t{ord(delimiter)}.csv"
        _write_csv(path, rows, delimiter)
        got = _read([path], monkeypatch, True)
        _same(got, _read([path], monkeypatch, False))
        assert not isinstance(got, str) and len(got.skips) == 1 and len(got.components) == 1
        assert got.unscored == 1 and got.errors == 1
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _same(_read([jsonl], monkeypatch, True), _read([jsonl], monkeypatch, False))


@pytest.mark.parametrize(
    "text",
    [
        "run,case,passed\nr1,a,true\nr1,a,false\n",  # a duplicate verdict
        "run,case,passed\nr1,a,maybe\n",  # not a verdict
        "run,case,passed\nr1,,true\n",  # no case
        "run,case,passed\nr1,a,true\n   \nr1,b,true\n",  # a row of spaces
        "run,case,passed,attempts\nr1,a,true,0\n",
        "run,case,passed,score\nr1,a,true,inf\n",
        "run,case,passed,cost\nr1,a,true,-1\n",
        "run,case\nr1,a\n",  # no passed column
        "run,case,passed\nr1,a,true,extra,more\n",
        '{"run": "r1", "case": "a", "passed": true}\n[1, 2]\n',
        '{"run": "r1", "case": "a", "passed": true}\n{"run": "r1", "case": "b", "passed": 1}\n',
        '{"run": "r1", "case": "a", "passed": true}, {"run": "r2", "case": "a", "passed": 1}\n',
        '{"run": 1, "case": "a", "passed": true}\n{"run": "1", "case": "b", "passed": false}\n',
        '{"run": "r1", "case": "a", "passed": "x"}\n',
        '{"run": "r1", "case": "a", "passed": true, "score": true}\n',
        '{"run": "r1", "case": "a",\n "passed": true}\n',
    ],
)
def test_unusual_tables_read_the_same_in_blocks(text, tmp_path, monkeypatch, csv_strings):
    """Whatever the block path does not decide goes to the row reader: same data, or the
    same one-line error naming the line."""
    path = tmp_path / ("t.jsonl" if text.startswith("{") else "t.csv")
    path.write_text(text)
    _same(_read([path], monkeypatch, True), _read([path], monkeypatch, False))


_ODD = ["", " ", "x", "'=x", "''", "=1+1", "nan", "-1", "2"]  # mostly refused somewhere
_POOLS = {
    "build": ["healthy", "regressed", "Healthy ", ""],
    "run": ["r1", "r2", " r1", "r3"],
    "case": ["a", "b", "'=a", "c d"],
    "check": ["", "rel", "code"],
    "kind": ["", "judge", "code", "JUDGE"],
    "passed": ["true", "false", "1", "0", "yes", "NO", "pass", ""],
    "status": ["ok", "ok", "error", "unscored", "skipped", "component", ""],
    "score": ["", "0.5", "-0.0", "1e3", "nan"],
    "session": ["", "s1", "s2"],
    "attempts": ["", "1", "2", "3"],
    "cached": ["", "false", "true"],
    "source": ["", "f.xml"],
    "cost": ["", "0.25", "0"],
    "tokens": ["", "5", "0"],
}
_OPTIONAL = tuple(k for k in _POOLS if k not in ("run", "case", "passed"))


@st.composite
def _tables(draw):
    names = ["run", "case", "passed"]
    names += draw(st.lists(st.sampled_from(_OPTIONAL), max_size=6, unique=True))
    odd = draw(st.booleans())  # now and then a value some rule refuses
    rows = []
    for _ in range(draw(st.integers(1, 14))):
        row = {}
        for name in names:
            pool = _POOLS[name] + (_ODD if odd else [])
            row[name] = draw(st.sampled_from(pool))
        rows.append(row)
    return rows


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=_tables(),
    jsonl=st.booleans(),
    typed=st.lists(st.sampled_from([True, False, 1, 0, 1.0, 2, None, "t"]), max_size=14),
    arrow=st.booleans(),
)
def test_random_tables_read_the_same_in_blocks(
    rows, jsonl, typed, arrow, tmp_path_factory, monkeypatch
):
    monkeypatch.setattr(_blocks, "has_pyarrow", lambda: arrow)
    if jsonl:  # JSON's own types, mixed in
        for row, value in zip(rows, typed, strict=False):
            row["passed" if len(typed) % 2 else "run"] = value
    folder = tmp_path_factory.mktemp("t")
    if jsonl:
        path = folder / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        path = folder / "t.csv"
        _write_csv(path, rows)
    _same(_read([path], monkeypatch, True), _read([path], monkeypatch, False))


# cells as a CSV file holds them: quoted, with the delimiter, a line end or a doubled
# quote inside, a quote in the middle, spaces, and values some rule refuses
_CELLS = {
    "run": ["r1", "r2", '"r1"', " r2 ", '"r,1"', 'r"1', '"r""1"', '"r\n1"', '"r1"x', ""],
    "case": ["a", "b", '"a,b"', '"a\r\nb"', "'=a", '"\'=x"', "é", "a b", '"a\rb"'],
    "passed": ["true", "false", "1", "0", "True", "FALSE", "yes", '"no"', "pass", "maybe", ""],
    "score": ["", "0.5", '"1e3"', "nan", "x", " 2 "],
}


@st.composite
def _csv_texts(draw):
    names = ["run", "case", "passed"] + (["score"] if draw(st.booleans()) else [])
    spelled = [draw(st.sampled_from([n, n.upper(), f" {n} ", f'"{n}"'])) for n in names]
    lines = [",".join(spelled)]
    for _ in range(draw(st.integers(0, 12))):
        cells = [draw(st.sampled_from(_CELLS[n])) for n in names]
        shape = draw(st.sampled_from(["row"] * 8 + ["empty", "spaces", "short", "long"]))
        lines.append(
            {
                "row": ",".join(cells),
                "empty": "",
                "spaces": draw(st.sampled_from(["   ", " \t", "\x0b"])),
                "short": ",".join(cells[:-1]),
                "long": ",".join([*cells, "x"]),
            }[shape]
        )
    ends = [draw(st.sampled_from(["\n", "\r\n", "\r"])) for _ in lines]
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    if draw(st.booleans()):
        text = text.rstrip("\r\n")  # no line end after the last row
    return ("\ufeff" if draw(st.booleans()) else "") + text


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_csv_texts(), arrow=st.booleans(), small=st.booleans())
def test_quoted_and_odd_csv_reads_the_same_in_blocks(
    text, arrow, small, tmp_path_factory, monkeypatch
):
    """Quotes, delimiters and line ends inside quotes, CR, CR LF, a BOM, empty lines,
    lines of spaces, short and long rows: read in blocks (in pieces of 64 bytes when
    `small`), the same data or the same error as the row reader."""
    monkeypatch.setattr(_blocks, "has_pyarrow", lambda: arrow)
    if small:
        monkeypatch.setattr(_blocks, "BLOCK_ROWS", 1)
        monkeypatch.setattr(_blocks, "_ROW_BYTES", 64)
    path = tmp_path_factory.mktemp("q") / "t.csv"
    path.write_bytes(text.encode())
    _same(_read([path], monkeypatch, True), _read([path], monkeypatch, False))


def _quirky_csv() -> str:
    """Plain rows (Arrow reads them in pieces of whole lines), then quoted ones (Arrow
    reads the rest as one stream): a BOM, CR LF, CR, empty lines, no last line end."""
    spelled = ["true", "False", "1", "0", "YES", "no", "pass", "Fail"]
    plain = "".join(f"r{i % 3},c{i},{spelled[i % 8]},\r\n" for i in range(40))
    return (
        "\ufeffrun,Case, passed ,score\r\n" + plain + "\n\nr1,c40,true,0.5\r"
        'r1,"c, quoted",yes,0.5\r\nr2,"multi\nline ""q""",no,\n\r\n'
        "r2,'=c,pass,1e3\nr3,last,0,"
    )


@pytest.mark.parametrize("small", [True, False])
def test_quirky_csv_is_read_by_arrow_in_blocks(small, tmp_path, monkeypatch):
    """With pyarrow the block reader decides such a file itself (no fallback to the row
    reader), and reads it as the row reader does."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.csv"
    path.write_bytes(_quirky_csv().encode())
    if small:
        monkeypatch.setattr(_blocks, "BLOCK_ROWS", 1)
        monkeypatch.setattr(_blocks, "_ROW_BYTES", 64)
    real, fell_back = _blocks.read_table_blocks, []

    def spy(*args):
        try:
            return real(*args)
        except _blocks.SlowPath:
            fell_back.append(args)
            raise

    monkeypatch.setattr(_blocks, "read_table_blocks", spy)
    got = _read([path], monkeypatch, True)
    assert not fell_back and not isinstance(got, str)
    _same(got, _read([path], monkeypatch, False))
    assert len(got.verdicts) == 45 and 'multi\nline "q"' in got.cases()


def test_an_arrow_dictionary_is_renumbered_in_order_of_first_appearance():
    """Arrow's CSV encoding numbers values as they first appear; a dictionary that does
    not (unified from several, or with values no row uses) is renumbered so, and one
    that holds a value twice is for the row reader."""
    pa = pytest.importorskip("pyarrow")
    column = pa.DictionaryArray.from_arrays(
        pa.array([2, 0, 2, 1, 0], pa.int32()), pa.array(["z", "x", "y", "unused"])
    )
    got = _blocks._dictionary_factorized(column)
    assert got.uniques == ["y", "z", "x"] and got.codes.tolist() == [0, 1, 0, 2, 1]
    plain = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int32()), pa.array(["a", "b"]))
    got = _blocks._dictionary_factorized(plain.slice(1))  # an offset into the codes
    assert got.uniques == ["b", "a"] and got.codes.tolist() == [0, 1]
    twice = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["a", "a"]))
    with pytest.raises(_blocks.SlowPath):
        _blocks._dictionary_factorized(twice)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("t.csv", "run,case,passed\nr1,a,true\nr1,b,false\nr2,a,1\n"),
        ("t.jsonl", "".join(
            json.dumps({"run": f"r{r}", "case": f"c{c}", "passed": c != r}) + "\n"
            for r in range(3) for c in range(1)
        )),
    ],
)  # fmt: skip
def test_a_table_read_by_arrow_imports_no_pandas(name, text, tmp_path):
    """pandas takes longer to import than Arrow takes to parse a million rows (and
    Array.to_numpy imports it: the codes are read from Arrow's buffers)."""
    pytest.importorskip("pyarrow")
    path = tmp_path / name
    path.write_text(text)
    code = (
        "import sys\nfrom gatecal.readers.table import blocks\nblocks.STREAM_MIN_BYTES = 0\n"
        "import gatecal\ndata = gatecal.read_runs([sys.argv[1]])\n"
        "print(len(data.verdicts), 'pandas' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["3", "False"]


def test_columns_are_a_sequence_of_the_verdicts_given():
    verdicts = [
        Verdict(build="healthy", run="r1", case="a", passed=True, score=0.5, cost=0.1),
        Verdict(build="regressed", run="r9", case="b", check="c", kind="judge", passed=None,
                status="error", attempts=2, cached=True, tokens=7),
    ]  # fmt: skip
    table = VerdictColumns.of(verdicts)
    assert list(table) == verdicts and table[1] == verdicts[1] and table[-1] == verdicts[1]
    assert table[0:1] == (verdicts[0],) and len(table) == 2 and table == verdicts
    with pytest.raises(IndexError):
        table[2]
    merged = VerdictBuilder()
    for v in verdicts[::-1]:
        merged.append(v)
    other = VerdictBuilder()
    other.append(verdicts[0])
    merged.extend(other)  # codes of another builder, mapped into this one's
    assert list(merged.build()) == [verdicts[1], verdicts[0], verdicts[0]]
    assert list(other.build()) == []  # its verdicts moved


def _junit_inputs() -> list[tuple[str, dict[str, str]]]:
    """Each JUnit fixture folder (a folder is what a user passes), and read options."""
    folders = sorted({p.parent for p in FIXTURES.rglob("*.xml")} - {FIXTURES / "junit" / "source"})
    otr = FIXTURES / "junit" / "open-test-reporting"  # not JUnit XML: its own reader
    folders = [f for f in folders if not f.is_relative_to(otr)]
    out = [(str(f.relative_to(FIXTURES)), {}) for f in folders]
    out += [("junit/flakefinder", {"junit_repeats": "flakefinder"})]
    out += [("junit/rerunfailures/v16.6", {"attempts": "last"})]
    out += [("junit/surefire/night-1", {"attempts": "last"})]
    return out


@pytest.mark.parametrize(("folder", "options"), _junit_inputs(), ids=lambda x: str(x))
def test_every_junit_fixture_reads_the_same_streamed(folder, options, monkeypatch):
    """Parsed as a stream (and folded into columns where it can be) or as a tree: the
    same runs, verdicts, skips, notes and errors."""
    paths = [p for p in sorted((FIXTURES / folder).glob("*.xml"))]
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0)
    streamed = _read(paths, monkeypatch, True, **options)
    tree = _read(paths, monkeypatch, False, **options)
    _same(streamed, tree)


@pytest.mark.parametrize(
    "text",
    [
        '<testsuites><testsuite name="pytest"><testcase classname="a" name="t1"/>'
        '<testcase classname="a" name="t2"><skipped/></testcase>'
        '<testcase classname="a" name="t3"><error message="x"/></testcase>'
        '<testcase classname="a" name="t4"><failure/></testcase></testsuite></testsuites>',
        '<testsuite name="s"><testsuite name="inner"><testcase name="t1"/></testsuite>'
        '<testcase name="t2"><flakyFailure/></testcase></testsuite>',
        '<testsuites><testcase name="t1"/><testcase name="t1"><failure/></testcase></testsuites>',
        '<testsuites><testsuite name="pytest"><testcase name="t[a-1-2]"/>'
        '<testcase name="t[a-2-2]"><failure/></testcase></testsuite></testsuites>',
        "<testsuites><testsuite><testcase/></testsuite></testsuites>",
        "<testsuites><testsuite></testsuite></testsuites>",
        "<results><testcase name='x'/></results>",
        "<testsuites><testsuite><testcase name='x'></testsuite></testsuites>",
        '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><testsuites>&a;</testsuites>',
        "<promptfoo/>",
    ],
)
def test_unusual_junit_reads_the_same_streamed(text, tmp_path, monkeypatch):
    path = tmp_path / "TEST-x.xml"
    path.write_text(text)
    _same(_read([path], monkeypatch, True), _read([path], monkeypatch, False))


def _parquet_of(rows, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    keys = list(dict.fromkeys(k for r in rows for k in r))
    pq.write_table(pa.table({k: [r.get(k) for r in rows] for k in keys}), path)


def test_parquet_round_trip_reads_back_what_was_written(tmp_path, monkeypatch):
    """runs --format parquet, read back: the same verdicts, skips, components and counts
    as the CSV long table of the same runs (only each row's `source` names its file)."""
    rows = list(_edge_rows())
    csv_path = tmp_path / "t.csv"
    _write_csv(csv_path, rows)
    data = gatecal.read_runs([str(csv_path)])
    from gatecal.readers.table.parquet import write_parquet

    out = tmp_path / "t.parquet"
    out.write_bytes(write_parquet(data))
    back = gatecal.read_runs([str(out)])
    again = tmp_path / "again.csv"
    from gatecal.readers._summary import render_runs

    again.write_text(render_runs(back, "csv"))
    assert render_runs(back, "csv") == render_runs(gatecal.read_runs([str(again)]), "csv")
    fields = [f for f in Verdict.__slots__ if f != "source"]
    assert [tuple(_key(getattr(v, f)) for f in fields) for v in back.verdicts] == [
        tuple(_key(getattr(v, f)) for f in fields) for v in data.verdicts
    ]
    assert len(back.skips) == len(data.skips) == 1
    assert [(c.case, c.check, c.passed) for c in back.components] == [
        (c.case, c.check, c.passed) for c in data.components
    ]
    assert back.reruns == data.reruns and back.cost == data.cost and back.tokens == data.tokens
    assert back.files[0].format == "parquet" and back.files[0].verdicts == len(data.verdicts)


def test_parquet_with_typed_columns_reads_as_its_table(tmp_path, monkeypatch):
    """Booleans and numbers typed in the file read as the long table's text would."""
    rows = [
        {"run": "r1", "case": "a", "passed": True, "score": 0.5, "attempts": 2},
        {"run": "r1", "case": "b", "passed": False, "score": None, "attempts": 1},
        {"run": "r2", "case": "a", "passed": None, "status": "error", "attempts": 1},
    ]
    path = tmp_path / "typed.parquet"
    _parquet_of(rows, path)
    data = gatecal.read_runs([str(path)])
    text = tmp_path / "typed.jsonl"
    text.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _same(
        _read([path], monkeypatch, True),
        _read([path], monkeypatch, False),
    )
    reference = gatecal.read_runs([str(text)])
    assert data.case_outcomes("healthy") == reference.case_outcomes("healthy")
    assert data.reruns == reference.reruns == 1 and data.errors == 1


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"run": "r1", "case": "a", "passed": "maybe"}], r"t\.parquet: row 1: `passed` must be"),
        (
            [{"run": "r1", "case": "a", "passed": True}, {"run": "r1", "case": "", "passed": True}],
            r"t\.parquet: row 2: missing `case`",
        ),
        ([{"run": "r1", "case": "a"}], r"needs columns run, case, passed \(missing \['passed'\]"),
    ],
)
def test_bad_parquet_is_one_error_naming_the_row(rows, message, tmp_path):
    path = tmp_path / "t.parquet"
    _parquet_of(rows, path)
    with pytest.raises(RunsError, match=message):
        gatecal.read_runs([str(path)])


def test_a_file_that_only_starts_like_parquet_is_refused(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(RunsError, match=r"t\.parquet: not a readable Parquet file"):
        gatecal.read_runs([str(path)])


def _blank_looking_line_by_line(data: bytes) -> bool:
    """The definition, line by line: a line that strips to nothing and is not an empty
    line or a CR LF, or a part between line ends (CR, LF, CR LF) of spaces only."""
    lines = _lf_lines(data)
    whole = any(not line.strip() and line not in (b"\n", b"\r\n") for line in lines)
    # or spaces only between line ends of either kind (a row to the csv module, none to
    # pandas: "r1,a,true\r   \n")
    return whole or any(part and not part.strip() for part in re.split(rb"\r\n|\r|\n", data))


def _lf_lines(data: bytes) -> list[bytes]:
    """Lines split at LF only (as iterating a binary file does)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    return lines + ([parts[-1]] if parts[-1] else [])


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(st.sampled_from([b"a", b",", b" ", b"\t", b"\r", b"\n", b"\x0b", b"\r\n"])),
    scan=st.sampled_from([1, 2, 3, 7, 1 << 24]),  # lines across the reads' edges too
)
def test_blank_looking_rows_are_found_as_line_by_line(tmp_path_factory, pieces, scan):
    data = b"".join(pieces)
    path = tmp_path_factory.mktemp("b") / "t.csv"
    path.write_bytes(data)
    _blocks._SCAN_BYTES, before = scan, _blocks._SCAN_BYTES
    try:
        assert _blocks.has_blank_looking_rows(path) == _blank_looking_line_by_line(data)
    finally:
        _blocks._SCAN_BYTES = before


# -- JSONL through Arrow's JSON reader --------------------------------------------------

_JSONL_EDGES = {
    "bom": '\ufeff{"run": "r1", "case": "a", "passed": true}\n{"run": "r1", "case": "b", "passed": false}\n',
    "two boms": '\ufeff\ufeff{"run": "r1", "case": "a", "passed": true}\n',
    "blank lines": '\n{"run": "r1", "case": "a", "passed": true}\n\n   \n\t\n{"run": "r2", "case": "a", "passed": false}\n\n',
    "crlf": '{"run": "r1", "case": "a", "passed": true}\r\n{"run": "r2", "case": "a", "passed": false}\r\n',
    "no newline at the end": '{"run": "r1", "case": "a", "passed": true}\n{"run": "r2", "case": "a", "passed": 0}',
    "passed true, pass and 1": '{"run": "r1", "case": "a", "passed": true}\n{"run": "r1", "case": "b", "passed": "pass"}\n{"run": "r1", "case": "c", "passed": 1}\n',
    "passed 1 and 0": '{"run": "r1", "case": "a", "passed": 1}\n{"run": "r1", "case": "b", "passed": 0}\n',
    "passed 1.0": '{"run": "r1", "case": "a", "passed": 1.0}\n',
    "passed 1 and 0.5": '{"run": "r1", "case": "a", "passed": 1}\n{"run": "r1", "case": "b", "passed": 0.5}\n',
    "optional columns missing here and there": '{"run": "r1", "case": "a", "passed": true, "score": 0.5}\n{"run": "r1", "case": "b", "passed": false, "check": "c", "kind": "judge"}\n{"run": "r2", "case": "a", "passed": true, "cost": 0.25, "tokens": 7}\n',
    "scores int and float": '{"run": "r1", "case": "a", "passed": true, "score": 1}\n{"run": "r1", "case": "b", "passed": true, "score": 0.1000000000000000055511151231257827}\n{"run": "r1", "case": "c", "passed": true, "score": 1e-320}\n',
    "tokens 5.0": '{"run": "r1", "case": "a", "passed": true, "tokens": 5.0}\n',
    "attempts 2 and 2.0": '{"run": "r1", "case": "a", "passed": true, "attempts": 2}\n{"run": "r1", "case": "b", "passed": true, "attempts": 2.0}\n',
    "run numbers": '{"run": 1, "case": "a", "passed": true}\n{"run": 2, "case": "a", "passed": false}\n',
    "run 1 and 1.0": '{"run": 1, "case": "a", "passed": true}\n{"run": 1.0, "case": "b", "passed": false}\n',
    "a big integer": '{"run": 123456789012345678901234, "case": "a", "passed": true}\n',
    "nulls": '{"run": "r1", "case": "a", "passed": true, "score": null, "check": null}\n',
    "status not ok, passed empty": '{"run": "r1", "case": "a", "passed": null, "status": "error"}\n{"run": "r1", "case": "b", "passed": "", "status": "unscored"}\n{"run": "r1", "case": "c", "passed": true, "status": "skipped"}\n',
    "NaN score": '{"run": "r1", "case": "a", "passed": true, "score": NaN}\n',
    "nested value": '{"run": "r1", "case": "a", "passed": true, "meta": {"x": 1}}\n',
    "nested in a column": '{"run": "r1", "case": {"id": 1}, "passed": true}\n',
    "two objects on one line": '{"run": "r1", "case": "a", "passed": true} {"run": "r1", "case": "b", "passed": true}\n',
    "two objects on one line, and a blank line": '{"run": "r1", "case": "a", "passed": true}\n{"run": "r1", "case": "b", "passed": true} {"run": "r1", "case": "c", "passed": true}\n\n',
    "two objects, a CR between": '{"run": "r1", "case": "a", "passed": true}\r{"run": "r1", "case": "b", "passed": true}\n',
    "an object over two lines": '{"run": "r1", "case": "a",\n"passed": true}\n',
    "a key twice": '{"run": "r1", "run": "r2", "case": "a", "passed": true}\n',
    "not an object": '{"run": "r1", "case": "a", "passed": true}\n[1]\n',
    "unicode": '{"run": "r\u00e9", "case": "\\ud83d\\ude00 \u2028", "passed": true}\n',
    "a lone surrogate": '{"run": "r1", "case": "\\ud800", "passed": true}\n',
    "a form feed line": '{"run": "r1", "case": "a", "passed": true}\n\x0c\n',
    "missing passed": '{"run": "r1", "case": "a"}\n',
    "a duplicate verdict": '{"run": "r1", "case": "a", "passed": true}\n{"run": "r1", "case": "a", "passed": false}\n',
    "bad kind": '{"run": "r1", "case": "a", "passed": true, "kind": "human"}\n',
    "empty object": '{}\n{"run": "r1", "case": "a", "passed": true}\n',
}


def _three_ways(path, monkeypatch):
    """The table read by Arrow's JSON reader, by json.loads a block at a time, and row by
    row: each a RunsData or the error message."""
    got = []
    for arrow, blocks in ((True, True), (False, True), (False, False)):
        monkeypatch.setattr(_blocks, "has_pyarrow", lambda arrow=arrow: arrow)
        got.append(_read([path], monkeypatch, blocks))
    return got


@pytest.mark.parametrize("name", sorted(_JSONL_EDGES))
def test_jsonl_reads_the_same_through_arrow_python_blocks_and_rows(name, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    path = tmp_path / "t.jsonl"
    path.write_text(_JSONL_EDGES[name], encoding="utf-8", newline="")
    arrow, python, rows = _three_ways(path, monkeypatch)
    _same(arrow, rows)
    _same(python, rows)
    if not isinstance(rows, str):  # the long table as written, byte for byte
        assert arrow.to_rows() == rows.to_rows()


def test_a_long_jsonl_table_is_read_by_arrow_in_several_pieces(tmp_path, monkeypatch):
    """Pieces of whole lines (a line never cut in two), blank lines and a BOM on the
    first: the same as row by row; and the Arrow reader does read it (no fallback)."""
    pytest.importorskip("pyarrow")
    monkeypatch.setattr(_blocks, "BLOCK_ROWS", 16)  # pieces of 16 x 256 bytes
    lines = []
    for i in range(3000):
        row = {"run": f"run-{i % 7}", "case": f"c{i // 7}", "passed": i % 5 != 0}
        if i % 3 == 0:
            row["score"] = i / 7
        lines.append(json.dumps(row))
        if i % 500 == 0:
            lines.append("")
    path = tmp_path / "long.jsonl"
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    arrow, python, rows = _three_ways(path, monkeypatch)
    _same(arrow, rows)
    _same(python, rows)
    assert arrow.to_rows() == rows.to_rows()
    pieces = list(_blocks._arrow_jsonl_blocks(path))
    assert len(pieces) > 10 and sum(n for _, n in pieces) == 3000


def test_blocks_with_and_without_skips_share_one_set_of_case_codes(tmp_path, monkeypatch):
    """A case id spelled with spaces in one block and without in another is one case; a
    block whose every row is a verdict gives its cases the verdicts' codes straight from
    the raw ids, a block with a skip or a component the long way, and the two agree with
    the row reader on every verdict, skip and the order of the cases."""
    pytest.importorskip("pyarrow")
    monkeypatch.setattr(_blocks, "BLOCK_ROWS", 16)  # blocks of a few dozen rows
    lines = []
    for i in range(2000):
        case = f"c{(i * 7) % 131}"
        row = {"run": f"run-{i // 131}", "case": f" {case} " if i % 3 else case}
        row["passed"] = i % 11 != 0
        if i % 400 < 40 and i % 13 == 0:  # skips in a few blocks only
            row["status"] = "skipped"
        if 800 <= i < 840 and i % 7 == 0:  # and components
            row["status"], row["check"] = "component", f"check-{i % 3}"
        lines.append(json.dumps(row))
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    arrow, python, rows = _three_ways(path, monkeypatch)
    assert not isinstance(rows, str) and rows.skips and rows.components
    _same(arrow, rows)
    _same(python, rows)
    assert arrow.cases() == rows.cases()
    assert len(rows.cases()) == 131
