"""One cell of the long table: the rules every reader of it (rows, blocks, Parquet) applies."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

from gatecal.readers._base import Batch
from gatecal.readers._data import FileRead
from gatecal.readers._verdict import COMPONENT, RunsError

__all__ = [
    "REQUIRED",
    "STATUSES",
    "from_cell",
    "long_table_read",
    "passed",
    "score",
    "text",
    "tokens",
]

_TRUE = {"true", "1", "pass", "passed", "yes"}
_FALSE = {"false", "0", "fail", "failed", "no"}
STATUSES = ("ok", "error", "unscored", "skipped", COMPONENT)
REQUIRED = ("run", "case", "passed")


def passed(value: object, where: str) -> bool | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise RunsError(f"{where}: `passed` must be true/false, 1/0 or pass/fail (got {value!r})")


def from_cell(value: object) -> object:
    """A cell as gatecal wrote it: one "'" before a formula start (or a "'") is removed."""
    from gatecal._common.tables import FORMULA_START

    if (
        isinstance(value, str)
        and value.startswith("'")
        and value[1:].startswith((*FORMULA_START, "'"))
    ):
        return value[1:]
    return value


def text(row: dict[str, object], key: str) -> str:
    value = row.get(key)
    return "" if value is None else str(value).strip()


def score(value: object, where: str, column: str = "score") -> float | None:
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


def tokens(value: object, where: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    if isinstance(value, bool) or not text.isascii() or not text.isdecimal():
        raise RunsError(f"{where}: `tokens` must be a whole number >= 0 (got {value!r})")
    return int(text)


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
