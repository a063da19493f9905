"""gatecal's long runs table, as CSV (comma, semicolon or tab separated) or JSONL.

One row per verdict (or per case and run). Required: ``run``, ``case``, ``passed``.
Optional: ``check``, ``kind`` (judge|code), ``build`` (healthy|regressed), ``score``,
``status`` (ok|error|unscored|skipped|component), ``session``, ``attempts``, ``cached``,
``source``, ``cost`` (a number >= 0) and ``tokens`` (a whole number >= 0). A ``component``
row is a check underneath its case's verdict (a promptfoo assertion under a test-level
threshold): kept, never counted.
``passed`` accepts true/false, 1/0, pass/fail, yes/no (any case); it may be empty
when ``status`` is not ok. This is also what ``gatecal runs --format csv|jsonl`` writes,
so every format converts to it and reads back the same.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from gatecal.readers._base import Batch, Head, ReaderBase, ReadOptions, Source, decode, each_source
from gatecal.readers._data import Skip
from gatecal.readers._verdict import BUILDS, COMPONENT, RunsError, Verdict
from gatecal.readers.table import cells

__all__ = ["Csv", "Jsonl", "jsonl_rows", "read_table", "rows_to_batch", "sniff_jsonl"]


def sniff_jsonl(text: str) -> bool:
    """Is the first non-empty line a JSON object with run, case and passed?"""
    for line in text.split("\n"):  # JSON Lines end at "\n" only (see jsonl_rows)
        if line.strip():
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                return False
            return isinstance(row, dict) and all(k in row for k in cells.REQUIRED)
    return False


def jsonl_rows(
    text: str, path: Path, error: type[ValueError] = RunsError
) -> Iterator[tuple[str, dict[str, object]]]:
    """(``file:line``, object) for each non-empty line; anything but an object is one
    `error` naming the line."""
    # JSON Lines are separated by "\n" alone: str.splitlines would also cut at U+2028,
    # which JSON allows unescaped inside a string
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line, object_pairs_hook=cells.unique_keys)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{number}: not a JSON object ({exc.msg})") from None
        except RecursionError:
            raise error(
                f"{path}:{number}: not a readable JSON object (nested too deeply)"
            ) from None
        if not isinstance(row, dict):
            raise error(f"{path}:{number}: not a JSON object (got {row!r})")
        if isinstance(row, cells.TwiceKeys):
            raise error(f"{path}:{number}: {cells.duplicate_columns(row.keys_read)}")
        yield f"{path}:{number}", row


def _csv_rows(text: str, path: Path) -> Iterator[tuple[str, dict[str, object]]]:
    header = text.split("\n", 1)[0]
    # Excel writes ';' where ',' is the decimal mark, and tabs for "Unicode text"
    delimiter = max(",;\t", key=header.count)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    twice = cells.duplicate_columns(reader.fieldnames or [])
    if twice:
        raise RunsError(f"{path}: {twice}")
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    reader.fieldnames = fields
    missing = [k for k in cells.REQUIRED if k not in fields]
    if missing and {"status", "score", "grader reason"} <= set(fields):
        raise RunsError(
            f"{path}: promptfoo's CSV table (-o results.csv) is not read: it keeps no "
            "assertions and no repeat identity; write promptfoo eval -o results.json and "
            "read that"
        )
    if missing:
        raise RunsError(
            f"{path}: a runs table needs columns run, case, passed (missing {missing}; "
            f"found {fields[:8]})"
        )
    for row in reader:
        yield f"{path}:{reader.line_num}", {k: cells.from_cell(v) for k, v in row.items()}


def rows_to_batch(
    rows: Iterable[tuple[str, dict[str, object]]], path: Path, build: str, fmt: str
) -> Batch:
    batch = Batch()
    runs: dict[str, None] = {}
    n_verdicts = n_errors = 0
    for where, row in rows:
        for key in ("run", "case"):
            if not cells.text(row, key):
                raise RunsError(f"{where}: missing `{key}`")
        kind = cells.text(row, "kind").lower()
        if kind not in ("", "judge", "code"):
            raise RunsError(f"{where}: `kind` must be judge or code (got {row.get('kind')!r})")
        row_build = (cells.text(row, "build") or build).lower()
        if row_build not in BUILDS:
            raise RunsError(
                f"{where}: `build` must be healthy or regressed (got {row.get('build')!r})"
            )
        status = (cells.text(row, "status") or "ok").lower()
        if status not in cells.STATUSES:
            rule = "must be ok, error, unscored, skipped or component"
            raise RunsError(f"{where}: `status` {rule} (got {row.get('status')!r})")
        run, case = cells.text(row, "run"), cells.text(row, "case")
        session = cells.text(row, "session") or str(path)
        source = cells.text(row, "source") or str(path)
        runs[run] = None
        if status == "skipped":
            batch.skips.append(
                Skip(build=row_build, run=run, case=case, source=source, session=session)
            )
            continue
        passed = cells.passed(row.get("passed"), where)
        if status in ("ok", COMPONENT) and passed is None:
            raise RunsError(f"{where}: missing `passed` (status {status})")
        score = cells.score(row.get("score"), where)
        attempts_text = cells.text(row, "attempts") or "1"
        if not attempts_text.isascii() or not attempts_text.isdecimal() or int(attempts_text) < 1:
            raise RunsError(
                f"{where}: `attempts` must be a whole number >= 1 (got {attempts_text!r})"
            )
        attempts = int(attempts_text)
        batch.reruns += attempts - 1
        cached = cells.passed(row.get("cached"), where) or False
        cost = cells.score(row.get("cost"), where, "cost")
        if cost is not None and cost < 0:
            raise RunsError(f"{where}: `cost` must be a number >= 0 (got {row.get('cost')!r})")
        verdict = Verdict(
            build=row_build,
            run=run,
            case=case,
            check=cells.text(row, "check"),
            kind=kind,
            passed=passed if status in ("ok", COMPONENT) else None,
            status=status,
            score=score,
            session=session,
            attempts=attempts,
            cached=cached,
            source=source,
            cost=cost,
            tokens=cells.tokens(row.get("tokens"), where),
        )
        if status == COMPONENT:
            batch.components.append(verdict)
            continue
        batch.verdicts.append(verdict)
        n_verdicts += 1
        n_errors += status == "error"
    batch.files.append(cells.long_table_read(path, fmt, build, runs, batch, n_verdicts, n_errors))
    return batch


def read_table(path: Path, raw: bytes, build: str, fmt: str, options: ReadOptions) -> Batch:
    """Read one long table (``fmt`` is ``csv`` or ``jsonl``)."""
    del options  # the long table leaves nothing open
    text = decode(raw, path)
    rows = jsonl_rows(text, path) if fmt == "jsonl" else _csv_rows(text, path)
    return rows_to_batch(rows, path, build, fmt)


def _read_one(source: Source, build: str, fmt: str) -> Batch:
    """One long table: a big one (no bytes read yet) in blocks, unless the block reader
    leaves it to the row reader, which reads every other."""
    if source.raw is None:
        from gatecal.readers.table.blocks import SlowPath, read_table_blocks

        try:
            return read_table_blocks(source.path, build, fmt)
        except SlowPath:
            pass  # read row by row, as a small file is
    return read_table(source.path, source.read_bytes(), build, fmt, ReadOptions())


class _LongTable(ReaderBase):
    """A text long table (its FORMAT is ``csv`` or ``jsonl``): a big file streams."""

    FORMAT: str
    STREAMS = True

    @classmethod
    def read(cls, sources: Sequence[Source], build: str, options: ReadOptions) -> Batch:
        return each_source(sources, lambda s: _read_one(s, build, cls.FORMAT))


class Csv(_LongTable):
    """The long table as CSV: any text that is not markup or JSON."""

    FORMAT = "csv"
    SUFFIXES = (".csv", ".tsv")

    @staticmethod
    def sniff(head: Head) -> bool:
        return bool(head.text) and not head.text.startswith(("<", "{", "["))


class Jsonl(_LongTable):
    """The long table as JSON Lines: a first line that is an object with its columns."""

    FORMAT = "jsonl"
    SUFFIXES = (".jsonl",)

    @staticmethod
    def sniff(head: Head) -> bool:
        return head.text.startswith(("{", "[")) and sniff_jsonl(head.text)
