"""Big label tables are read in blocks into columns; every table reads the same either way,
and calibrate counts the columns to exactly the numbers a loop over the labels gives.

The block reader (gatecal/readers/labels/blocks.py) is engaged for files from
STREAM_MIN_BYTES on. Here that limit is set to 0 (every table read in blocks) and to a size
no test file reaches (every table read row by row), and the two reads must give the same
labels or the same error message.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gatecal
from gatecal.cli import main
from gatecal.readers.labels import reader as labels
from gatecal.readers.labels.columns import Label, LabelColumns
from gatecal.readers.table import blocks as _blocks
from tests.paths import ROOT

# the label tables the repository keeps (the worked example and the real judge's)
FIXTURES = sorted((ROOT / "reports").rglob("labels.*"))


def _read(path: Path, monkeypatch, blocks: bool):
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0 if blocks else 1 << 40)
    try:
        return [
            tuple(getattr(lab, f) for f in Label.__slots__) for lab in gatecal.read_labels(path)
        ]
    except gatecal.LabelsError as exc:
        return f"LabelsError: {exc}"


def _same_both_ways(path: Path, monkeypatch):
    blocks, rows = _read(path, monkeypatch, True), _read(path, monkeypatch, False)
    assert blocks == rows
    return rows


def test_there_are_label_fixtures():
    assert len(FIXTURES) >= 5 and {p.suffix for p in FIXTURES} == {".csv", ".jsonl"}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_reads_the_same_in_blocks(path, monkeypatch):
    got = _same_both_ways(path, monkeypatch)
    assert not isinstance(got, str) and len(got) > 100
    # and the block path decided it (no fallback to the row reader)
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(labels, "_read_rows", None)
    assert isinstance(gatecal.read_labels(path), LabelColumns)


def _reference(labels: list[Label], level: float = 0.95) -> dict:
    """calibrate's counts by a loop over Label objects (how they were counted before the
    columns): per item in order of first appearance, floats added in that order."""
    out = {}
    checks = list(dict.fromkeys(lab.check for lab in labels))
    groups = [(c, [lab for lab in labels if lab.check == c]) for c in checks]
    if len(checks) > 1:
        groups.append(("(all checks)", labels))
    for name, chosen in groups:
        items: dict[tuple[str, str], list[Label]] = {}
        for lab in chosen:
            items.setdefault((lab.check, lab.item), []).append(lab)
        tp = fn = fp = tn = unparseable = disagree = 0.0
        multi = 0
        for judgements in items.values():
            r = len(judgements)
            passed = sum(j.judge is True for j in judgements)
            share = passed / r
            unparseable += sum(j.judge is None for j in judgements) / r
            if judgements[0].human:
                tp, fn = tp + share, fn + 1 - share
            else:
                fp, tn = fp + share, tn + 1 - share
            if r >= 2:
                multi += 1
                disagree += passed * (r - passed) / (r * (r - 1) / 2)
        cells = [sum(lab.human == h and lab.judge is j for lab in chosen)
                 for h in (True, False) for j in (True, False, None)]  # fmt: skip
        out[name] = ((tp, fn, fp, tn, unparseable, disagree), multi, cells, len(chosen))
    return out


def _compare(labels: list[Label]) -> None:
    """The columns' counts against the loop's, to the last bit."""
    cal = gatecal.calibrate_judge(labels)
    ref = _reference(labels)
    measured = {c.check: c for c in (*cal.checks, cal.pooled)}
    assert [c.check for c in cal.checks] == list(ref)[: len(cal.checks)]
    for name, (sums, multi, cells, n) in ref.items():
        c = measured[name]
        tp, fn, fp, tn, unparseable, disagree = sums
        assert repr((c.tp, c.fn, c.fp, c.tn)) == repr((tp, fn, fp, tn)), name
        m = c.matrix
        assert [m.pass_pass, m.pass_fail, m.pass_unparseable, m.fail_pass, m.fail_fail,
                m.fail_unparseable] == cells  # fmt: skip
        assert c.judgements == n
        assert c.unparseable.estimate == unparseable / c.items  # the same sum, divided
        if multi:
            assert c.consistency is not None and c.consistency.items == multi
            assert c.consistency.flip_rate.estimate == disagree / multi
        else:
            assert c.consistency is None


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_calibrate_counts_the_columns_as_a_loop_over_labels(path):
    _compare(list(gatecal.read_labels(path)))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_calibrate_writes_the_same_bytes_either_way(path, monkeypatch, capsys):
    """Every format of the command's output, the table read in blocks or row by row."""
    outputs = []
    for blocks in (True, False):
        monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0 if blocks else 1 << 40)
        for fmt in ("json", "table", "markdown", "csv"):
            assert main(["calibrate", str(path), "--format", fmt, "--observed", "170/200"]) == 0
            outputs.append(capsys.readouterr())
    assert outputs[:4] == outputs[4:] and all(o.err == "" and o.out for o in outputs)


def test_fractional_shares_add_in_item_order():
    """Three judgements an item: shares of 1/3 and 2/3, whose float sums depend on the
    order they are added in; two checks, the pooled one interleaving them."""
    labels = []
    for i in range(40):
        for check in ("b", "a"):
            human = (i * 7) % 5 != 0
            for r in range(3 + i % 3):
                judge = [True, False, None][(i * 3 + r + len(check)) % 3 if i % 4 else 0]
                labels.append(Label(f"i{i}", check, f"#{r + 1}", human, judge))
    _compare(labels)
    assert not all(float(c.tp).is_integer() for c in gatecal.calibrate_judge(labels).checks)


# -- errors and odd tables: the block path or the row reader, the same answer -------------


def _write_csv(path: Path, header, rows) -> Path:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "text",
    [
        "item,human,judge\na,pass,pass\na,fail,fail\n",  # one item labelled both ways
        "item,human,judge,repeat\na,pass,pass,1\na,pass,fail,1\n",  # a repeat twice
        "item,human,judge,repeat\na,pass,pass,#2\na,pass,fail,\n",  # "#2" given, then made
        "item,human,judge,repeat\na,pass,pass, \na,pass,fail,\n",  # a blank repeat is ""
        "item,human,judge\na,pass,perhaps\n",
        "item,human,judge\na,maybe,pass\n",
        "item,human,judge\n,pass,pass\n",
        "item,human,judge\na,pass,\n",
        "item,human,judge\na,pass\n",  # a short row
        "item,human,judge\na,pass,pass,extra\n",  # a long one (the row reader keeps it)
        "item,human\na,pass\n",
        "item;human;judge\na;pass;pass\n",  # labels are comma separated
        "Item,human,judge\na,pass,pass\n",  # names as written
        "item,human,judge\n",  # no rows
        "\nitem,human,judge\na,pass,pass\n",
        "item,human,judge\na,pass,pass\n   \nb,fail,fail\n",
        "item,human,judge\na,pass,pass\r   \nb,fail,fail\n",  # spaces after a lone CR
        "item,human,judge\r\na,pass,pass\r\n\t\r\nb,pass,fail\r\n",  # a tab line, CR LF
        'item,human,judge\n""\na,pass,pass\n',
        'item,human,judge\n"a\nb",pass,pass\nc,fail,error\n',
        "item,human,judge,check\na,pass,pass,\na,fail,pass,x\n",  # two checks, one item each
        "item,item,human,judge\na,b,pass,pass\n",
        "\ufeffitem,human,judge\r\na,Pass,YES\r\nb,no,0\r\n",
        '{"item": "a", "human": true, "judge": 1}\n{"item": "a", "human": "yes", "judge": 0}\n',
        '{"item": "a", "human": true, "judge": 1}\n{"item": "a", "human": false, "judge": 0}\n',
        '{"item": 1, "human": 1, "judge": 1}\n{"item": "1", "human": 0, "judge": 0}\n',
        '{"item": 0, "human": 1, "judge": 1, "check": 0}\n{"item": false, "human": 0, "judge": 0}\n',
        '{"item": "a", "human": true, "judge": 1.0}\n',
        '{"item": "a", "human": true, "judge": null}\n',
        '{"item": "a", "human": true}\n',
        '{"item": null, "human": true, "judge": true}\n',
        '{"item": "a", "human": "pass", "judge": "pass", "repeat": 0}\n'
        '{"item": "a", "human": "pass", "judge": "fail", "repeat": "0"}\n',
        '{"item": "a", "human": "pass", "judge": "pass", "repeat": ""}\n'
        '{"item": "a", "human": "pass", "judge": "pass", "repeat": null}\n',
        '{"item": "a", "human": "pass", "judge": "pass"}\n[1]\n',
        '{"item": "a", "human": "pass", "judge": "pass"}, {"item": "b"}\n',
        '{"item": "a", "human": "pass",\n "judge": "pass"}\n',
        '\ufeff{"item": "a", "human": "pass", "judge": "pass"}\n\n\n',
        '{"item": "a", "human": "pass", "judge": "pass"}\n\ufeff{"item": "b", "human": 1, '
        '"judge": 1}\n',
        '{"item": "a\\ud800", "human": "pass", "judge": "pass"}\n',
        '{"item": "a", "human": "pass", "judge": "pass"}\n\x1c\n',
    ],
)
@pytest.mark.parametrize("arrow", [True, False], ids=["arrow", "pandas"])
def test_unusual_tables_read_the_same_in_blocks(text, arrow, tmp_path, monkeypatch):
    """Whatever the block path does not decide goes to the row reader: the same labels,
    or the same one-line error naming the line (CSV parsed by Arrow, or by pandas when
    pyarrow is not installed)."""
    monkeypatch.setattr(_blocks, "has_pyarrow", lambda: arrow)
    path = tmp_path / ("t.jsonl" if text.lstrip("\ufeff").startswith("{") else "t.csv")
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    _same_both_ways(path, monkeypatch)


def test_encoded_surrogates_are_the_row_readers(tmp_path, monkeypatch):
    """json.loads takes a UTF-8-encoded surrogate in bytes; the row reader, decoding UTF-8
    strictly, does not."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"item": "a\xed\xa0\x80", "human": "pass", "judge": "pass"}\n')
    got = _same_both_ways(path, monkeypatch)
    assert isinstance(got, str) and "not UTF-8 text" in got


_ITEMS = ["a", "b", " a", "c d", "", "0", "a,b"]
_VERDICTS = ["pass", "fail", "Pass ", "yes", "no", "1", "0", "true", "FALSE", "passed"]
_JUDGE_ONLY = ["unparseable", "error", "Unscored"]
_ODD = ["", " ", "maybe", "nan", "2"]


@st.composite
def _tables(draw):
    names = ["item", "human", "judge"]
    names += draw(st.lists(st.sampled_from(["check", "repeat"]), max_size=2, unique=True))
    names = draw(st.permutations(names))
    odd = draw(st.integers(0, 3)) == 0  # now and then a value some rule refuses
    human_of = {}
    rows = []
    for _ in range(draw(st.integers(1, 16))):
        item = draw(st.sampled_from(_ITEMS[:4] + (_ITEMS[4:] if odd else [])))
        check = draw(st.sampled_from(["", "rel", "grounded", " rel"]))
        # one true verdict per item, mostly (a conflict now and then)
        human = human_of.setdefault((check, item), draw(st.sampled_from(_VERDICTS)))
        if odd and draw(st.booleans()):
            human = draw(st.sampled_from(_VERDICTS + _ODD))
        pool = _VERDICTS + _JUDGE_ONLY + (_ODD if odd else [])
        row = {
            "item": item,
            "human": human,
            "judge": draw(st.sampled_from(pool)),
            "check": check,
            "repeat": draw(st.sampled_from(["", "", "1", "2", "#1", "#2", " 1"])),
        }
        rows.append({k: row[k] for k in names})
    return names, rows


_JSON_VALUES = [True, False, 1, 0, 1.0, 2, None, "t", "pass"]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    table=_tables(),
    jsonl=st.booleans(),
    typed=st.lists(st.sampled_from(_JSON_VALUES), max_size=16),
    column=st.sampled_from(["item", "human", "judge", "check", "repeat"]),
)
def test_random_tables_read_the_same_in_blocks(
    table, jsonl, typed, column, tmp_path_factory, monkeypatch
):
    names, rows = table
    folder = tmp_path_factory.mktemp("t")
    if jsonl:  # JSON's own types, mixed into one column
        for row, value in zip(rows, typed, strict=False):
            row[column] = value
        path = folder / "t.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        path = _write_csv(folder / "t.csv", names, [[r[k] for k in names] for r in rows])
    got = _same_both_ways(path, monkeypatch)
    if not isinstance(got, str):
        labels = list(gatecal.read_labels(path))
        # a check without both classes: calibrate refuses it, whichever way it was read
        with contextlib.suppress(gatecal.LabelsError):
            _compare(labels)


def test_columns_are_a_sequence_of_the_labels_given():
    labels = [Label("a", "", "#1", True, None), Label("b", "x", "2", False, True)]
    table = LabelColumns.of(labels)
    assert list(table) == labels and table[1] == labels[1] and table[-1] == labels[1]
    assert table[0:1] == (labels[0],) and len(table) == 2 and table == labels
    assert LabelColumns.of(table) is table
    with pytest.raises(IndexError):
        table[2]


def test_a_big_table_is_read_in_blocks_and_counted(tmp_path, monkeypatch):
    """Past STREAM_MIN_BYTES (as the limit is, untouched), with items judged 1 to 4 times:
    read as blocks, the same labels as the row reader's, counted as the loop counts."""
    from gatecal.readers.labels.reader import _read_rows

    rows = []
    for i in range(14000):
        for r in range(1 + i % 4):
            rows.append((f"answer-{i:05d}", ["rel", "grounded"][i % 2], ["pass", "fail"][i % 3 == 0],
                         ["pass", "fail", "unparseable", "pass"][(i * 7 + r) % 4]))  # fmt: skip
    path = _write_csv(tmp_path / "big.csv", ("item", "check", "human", "judge"), rows)
    assert path.stat().st_size >= _blocks.STREAM_MIN_BYTES
    rows_read = _read_rows(path)
    monkeypatch.setattr(labels, "_read_rows", None)  # not called: the blocks decided
    table = gatecal.read_labels(path)
    assert isinstance(table, LabelColumns) and table == rows_read
    _compare(list(table))
    assert gatecal.calibrate_judge(table).pooled.items == 14000
