"""Reading big inputs shows a progress bar of the bytes read: the readers report how far
they have got in each file, and the command line draws it on a terminal's stderr only."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import gatecal
from gatecal.readers import _progress
from gatecal.readers.table import blocks as _blocks
from tests.cli.test_cli import _on_a_terminal as on_a_terminal


class _Record:
    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.steps: dict[str, list[int]] = {}

    def expect(self, path: str, size: int) -> None:
        self.sizes[path] = size

    def advance(self, path: str, done: int) -> None:
        self.steps.setdefault(path, []).append(done)


def _recorded(read, path: Path) -> _Record:
    record = _Record()
    with _progress.listening(record):
        read()
    size = path.stat().st_size
    assert record.sizes == {str(path): size}
    steps = record.steps[str(path)]
    assert steps == sorted(steps) and steps[-1] == size, steps  # forward, to the end
    return record


def _labels(path: Path, rows: int, fmt: str) -> Path:
    with open(path, "w") as f:
        if fmt == "csv":
            f.write("item,human,judge\n")
        for i in range(rows):
            human, judge = ["pass", "fail"][i % 3 == 0], ["pass", "fail", "error"][i % 5 % 3]
            if fmt == "csv":
                f.write(f"item-{i},{human},{judge}\n")
            else:
                f.write(json.dumps({"item": f"item-{i}", "human": human, "judge": judge}) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("blocks", [True, False])
def test_labels_report_the_bytes_read(fmt, blocks, tmp_path, monkeypatch):
    path = _labels(tmp_path / f"labels.{fmt}", 30_000, fmt)  # pandas reads 256 KiB at once
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0 if blocks else 1 << 40)
    monkeypatch.setattr(_blocks, "BLOCK_ROWS", 5000)
    record = _recorded(lambda: gatecal.read_labels(path), path)
    # in blocks: a step after each block (JSONL: exactly); row by row: one, at the end
    steps = len(set(record.steps[str(path)]))
    assert steps == 6 if blocks and fmt == "jsonl" else steps >= 2 if blocks else steps == 1


def _runs_table(path: Path, fmt: str) -> Path:
    rows = [{"run": f"r{i % 7}", "case": f"c{i}", "passed": i % 4 != 0} for i in range(30_000)]
    if fmt == "csv":
        path.write_text("run,case,passed\n" + "".join(f"{r['run']},{r['case']},{r['passed']}\n"
                                                     for r in rows))  # fmt: skip
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("blocks", [True, False])
def test_runs_tables_report_the_bytes_read(fmt, blocks, tmp_path, monkeypatch):
    path = _runs_table(tmp_path / f"runs.{fmt}", fmt)
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0 if blocks else 1 << 40)
    monkeypatch.setattr(_blocks, "BLOCK_ROWS", 5000)
    record = _recorded(lambda: gatecal.read_runs([str(path)]), path)
    steps = len(set(record.steps[str(path)]))
    assert steps >= 2 if blocks else steps == 1


@pytest.mark.parametrize("streamed", [True, False])
def test_junit_reports_the_bytes_read(streamed, tmp_path, monkeypatch):
    path = tmp_path / "big.xml"
    cases = "".join(f'<testcase classname="t" name="c{i}"/>' for i in range(20000))
    path.write_text(f'<testsuite name="pytest">{cases}</testsuite>')
    monkeypatch.setattr(_blocks, "STREAM_MIN_BYTES", 0 if streamed else 1 << 40)
    record = _recorded(lambda: gatecal.read_runs([str(path)]), path)
    # streamed: a step every 8192 testcases as well
    steps = len(set(record.steps[str(path)]))
    assert steps >= 3 if streamed else steps == 1


def test_parquet_reports_the_bytes_read(tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "runs.parquet"
    n = 3000
    table = pa.table({"run": ["r1"] * n, "case": [f"c{i}" for i in range(n)],
                      "passed": [i % 3 != 0 for i in range(n)]})  # fmt: skip
    pq.write_table(table, path, row_group_size=1000)
    monkeypatch.setattr(_blocks, "BLOCK_ROWS", 1000)
    record = _recorded(lambda: gatecal.read_runs([str(path)]), path)
    assert len(set(record.steps[str(path)])) >= 2


def _on_a_terminal(args, env, stdout: Path):
    """(exit code, what the terminal got): stderr on a pseudo-terminal, stdout in a file."""
    with open(stdout, "wb") as out:
        return on_a_terminal(*args, env=env, stdout=out)


def test_reading_labels_shows_the_bytes_on_a_terminal_only(tmp_path):
    """A label table past STREAM_MIN_BYTES: the bar counts its bytes against its size on
    the terminal's stderr; stdout has exactly what a plain run prints; nothing on stderr
    in a pipe, and no bar before the wait (2 s unless GATECAL_PROGRESS_AFTER says)."""
    path = _labels(tmp_path / "labels.csv", 60_000, "csv")
    size = path.stat().st_size
    assert size >= _blocks.STREAM_MIN_BYTES
    args = ["calibrate", str(path)]
    plain = subprocess.run([sys.executable, "-m", "gatecal", *args], capture_output=True,
                           text=True, env={**os.environ, "GATECAL_PROGRESS_AFTER": "0"})  # fmt: skip
    assert plain.returncode == 0 and plain.stderr == "" and plain.stdout
    code, seen = _on_a_terminal(args, {"GATECAL_PROGRESS_AFTER": "0"}, tmp_path / "out.txt")
    assert code == 0 and "reading labels" in seen
    total = f"{size / 1e6:.1f}"  # rich writes bytes in decimal units, one decimal
    assert re.search(rf"\d+\.\d/{re.escape(total)} MB", seen), seen
    assert (tmp_path / "out.txt").read_text() == plain.stdout
    code, seen = _on_a_terminal(args, {"GATECAL_PROGRESS_AFTER": "600"}, tmp_path / "o2.txt")
    assert code == 0 and "reading labels" not in seen


def test_reading_runs_shows_the_bytes_on_a_terminal(tmp_path):
    path = _runs_table(tmp_path / "runs.jsonl", "jsonl")
    code, seen = _on_a_terminal(
        ["runs", str(path)], {"GATECAL_PROGRESS_AFTER": "0"}, tmp_path / "out.txt"
    )
    size = path.stat().st_size
    assert code == 0 and "reading runs" in seen
    assert re.search(rf"/{re.escape(f'{size / 1e6:.1f}')} MB", seen), seen
