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
import math
from collections.abc import Iterable, Iterator
from pathlib import Path

from gatecal.readers._base import Batch, ReadOptions, decode
from gatecal.readers._data import FileRead, Skip
from gatecal.readers._verdict import BUILDS, COMPONENT, RunsError, Verdict

__all__ = ["jsonl_rows", "read_table", "sniff_jsonl"]

_TRUE = {"true", "1", "pass", "passed", "yes"}
_FALSE = {"false", "0", "fail", "failed", "no"}
_STATUS = ("ok", "error", "unscored", "skipped", COMPONENT)
_REQUIRED = ("run", "case", "passed")


def sniff_jsonl(text: str) -> bool:
    """Is the first non-empty line a JSON object with run, case and passed?"""
    for line in text.split("\n"):  # JSON Lines end at "\n" only (see jsonl_rows)
        if line.strip():
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                return False
            return isinstance(row, dict) and all(k in row for k in _REQUIRED)
    return False


def _passed(value: object, where: str) -> bool | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise RunsError(f"{where}: `passed` must be true/false, 1/0 or pass/fail (got {value!r})")


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
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{number}: not a JSON object ({exc.msg})") from None
        except RecursionError:
            raise error(
                f"{path}:{number}: not a readable JSON object (nested too deeply)"
            ) from None
        if not isinstance(row, dict):
            raise error(f"{path}:{number}: not a JSON object (got {row!r})")
        yield f"{path}:{number}", row


def _csv_rows(text: str, path: Path) -> Iterator[tuple[str, dict[str, object]]]:
    header = text.split("\n", 1)[0]
    # Excel writes ';' where ',' is the decimal mark, and tabs for "Unicode text"
    delimiter = max(",;\t", key=header.count)
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    fields = [f.strip().lower() for f in reader.fieldnames or []]
    reader.fieldnames = fields
    missing = [k for k in _REQUIRED if k not in fields]
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
        yield f"{path}:{reader.line_num}", {k: _from_cell(v) for k, v in row.items()}


def _from_cell(value: object) -> object:
    """A cell as gatecal wrote it: one "'" before a formula start (or a "'") is removed."""
    from gatecal._common.tables import FORMULA_START

    if (
        isinstance(value, str)
        and value.startswith("'")
        and value[1:].startswith((*FORMULA_START, "'"))
    ):
        return value[1:]
    return value


def _text(row: dict[str, object], key: str) -> str:
    value = row.get(key)
    return "" if value is None else str(value).strip()


def _rows_to_batch(
    rows: Iterable[tuple[str, dict[str, object]]], path: Path, build: str, fmt: str
) -> Batch:
    batch = Batch()
    runs: dict[str, None] = {}
    n_verdicts = n_errors = 0
    for where, row in rows:
        for key in ("run", "case"):
            if not _text(row, key):
                raise RunsError(f"{where}: missing `{key}`")
        kind = _text(row, "kind").lower()
        if kind not in ("", "judge", "code"):
            raise RunsError(f"{where}: `kind` must be judge or code (got {row.get('kind')!r})")
        row_build = (_text(row, "build") or build).lower()
        if row_build not in BUILDS:
            raise RunsError(
                f"{where}: `build` must be healthy or regressed (got {row.get('build')!r})"
            )
        status = (_text(row, "status") or "ok").lower()
        if status not in _STATUS:
            rule = "must be ok, error, unscored, skipped or component"
            raise RunsError(f"{where}: `status` {rule} (got {row.get('status')!r})")
        run, case = _text(row, "run"), _text(row, "case")
        session = _text(row, "session") or str(path)
        source = _text(row, "source") or str(path)
        runs[run] = None
        if status == "skipped":
            batch.skips.append(
                Skip(build=row_build, run=run, case=case, source=source, session=session)
            )
            continue
        passed = _passed(row.get("passed"), where)
        if status in ("ok", COMPONENT) and passed is None:
            raise RunsError(f"{where}: missing `passed` (status {status})")
        score = _score(row.get("score"), where)
        attempts_text = _text(row, "attempts") or "1"
        if not attempts_text.isascii() or not attempts_text.isdecimal() or int(attempts_text) < 1:
            raise RunsError(
                f"{where}: `attempts` must be a whole number >= 1 (got {attempts_text!r})"
            )
        attempts = int(attempts_text)
        batch.reruns += attempts - 1
        cached = _passed(row.get("cached"), where) or False
        cost = _score(row.get("cost"), where, "cost")
        if cost is not None and cost < 0:
            raise RunsError(f"{where}: `cost` must be a number >= 0 (got {row.get('cost')!r})")
        verdict = Verdict(
            build=row_build,
            run=run,
            case=case,
            check=_text(row, "check"),
            kind=kind,
            passed=passed if status in ("ok", COMPONENT) else None,
            status=status,
            score=score,
            session=session,
            attempts=attempts,
            cached=cached,
            source=source,
            cost=cost,
            tokens=_tokens(row.get("tokens"), where),
        )
        if status == COMPONENT:
            batch.components.append(verdict)
            continue
        batch.verdicts.append(verdict)
        n_verdicts += 1
        n_errors += status == "error"
    batch.files.append(long_table_read(path, fmt, build, runs, batch, n_verdicts, n_errors))
    return batch


def _score(value: object, where: str, column: str = "score") -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise RunsError(f"{where}: `{column}` must be a number (got {value!r})")
    try:
        score = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise RunsError(f"{where}: `{column}` must be a number (got {value!r})") from None
    if math.isinf(score):
        raise RunsError(f"{where}: `{column}` must be finite or empty (got {value!r})")
    return None if math.isnan(score) else score


def _tokens(value: object, where: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not text.isascii() or not text.isdecimal():
        raise RunsError(f"{where}: `tokens` must be a whole number >= 0 (got {value!r})")
    return int(text)


def read_table(path: Path, raw: bytes, build: str, fmt: str, options: ReadOptions) -> Batch:
    """Read one long table (``fmt`` is ``csv`` or ``jsonl``)."""
    del options  # the long table leaves nothing open
    text = decode(raw, path)
    rows = jsonl_rows(text, path) if fmt == "jsonl" else _csv_rows(text, path)
    return _rows_to_batch(rows, path, build, fmt)


def long_table_read(
    path: Path, fmt: str, build: str, runs: Iterable[str], batch: Batch, verdicts: int, errors: int
) -> FileRead:
    """What reading one long table (CSV, JSONL or Parquet) into `batch` found: its runs,
    verdicts and errors, and the skips `batch` holds."""
    return FileRead(
        path=str(path),
        format=fmt,
        detail="long table",
        build=build,
        runs=tuple(runs),
        verdicts=verdicts,
        skipped=len(batch.skips),
        errors=errors,
    )
