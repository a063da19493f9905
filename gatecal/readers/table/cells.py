"""One cell of the long table: the rules every reader of it (rows, blocks, Parquet) applies."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gatecal.readers._base import Batch
from gatecal.readers._data import FileRead
from gatecal.readers._verdict import COMPONENT, RunsError

__all__ = [
    "REQUIRED",
    "STATUSES",
    "TwiceKeys",
    "duplicate_columns",
    "from_cell",
    "long_table_read",
    "passed",
    "score",
    "text",
    "tokens",
    "unique_keys",
]

_TRUE = {"true", "1", "pass", "passed", "yes"}
_FALSE = {"false", "0", "fail", "failed", "no"}
STATUSES = ("ok", "error", "unscored", "skipped", COMPONENT)
REQUIRED = ("run", "case", "passed")


def duplicate_columns(names: Iterable[str]) -> str | None:
    """The words of a refusal when two columns share a name, exactly or but for case or
    the spaces around it (``passed,PASSED``: one of them would silently win), else None.
    Every reader of a table asks it: CSV (both paths), JSON Lines, Parquet, labels."""
    seen: dict[str, str] = {}
    for name in names:
        key = name.strip().casefold()
        if key in seen:
            return f"columns named twice: {seen[key]!r} and {name!r} (keep one)"
        seen[key] = name
    return None


class TwiceKeys(dict[str, Any]):
    """A JSON object read with two keys of one name (but for case): its keys as written."""

    keys_read: list[str]


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json's object hook: the object, marked (:class:`TwiceKeys`) when two of its keys
    share a name; a row so marked is refused (a nested object, such as metadata, may hold
    what it likes)."""
    row = dict(pairs)
    if len(row) == len(pairs) and len({k.casefold() for k in row}) == len(row):
        return row
    marked = TwiceKeys(row)
    marked.keys_read = [k for k, _ in pairs]
    return marked


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
