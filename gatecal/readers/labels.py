"""Human labels of the judge: one row per judgement of a labelled item (``gatecal calibrate``).

Columns ``item``, ``human`` (the true verdict), ``judge`` (the judge's), optionally ``check``
and ``repeat``; CSV (comma, semicolon or tab) or JSONL, in any encoding gatecal reads.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["UNPARSEABLE_VALUES", "Label", "LabelsError", "read_labels"]

_TRUE = {"true", "1", "pass", "passed", "yes"}
_FALSE = {"false", "0", "fail", "failed", "no"}
#: Judge values that mean "no clean verdict": their own share, never a pass.
UNPARSEABLE_VALUES = ("unparseable", "error", "unscored")
_VALUES = "pass/fail, yes/no, true/false or 1/0"


class LabelsError(ValueError):
    """A label table that is not usable: the message names the file, line and value."""


@dataclass(frozen=True, slots=True)
class Label:
    """One judgement of one labelled item. `judge` is None for an unparseable reply."""

    item: str
    check: str
    repeat: str
    human: bool
    judge: bool | None


def _verdict(value: object, column: str, where: str) -> bool | None:
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if column == "judge" and text in UNPARSEABLE_VALUES:
        return None
    if text == "" or value is None:
        hint = " (write 'unparseable' for a reply with no verdict)" if column == "judge" else ""
        raise LabelsError(f"{where}: missing `{column}`{hint}")
    allowed = _VALUES + (", or unparseable/error/unscored" if column == "judge" else "")
    raise LabelsError(f"{where}: `{column}` must be {allowed} (got {value!r})")


def _label_rows(path: Path) -> Iterable[tuple[str, Mapping[str, object]]]:
    from gatecal._common.text import TextError, read_text

    suffix = path.suffix.lower()
    try:
        text = read_text(path)
    except TextError as exc:
        raise LabelsError(str(exc)) from None
    with io.StringIO(text, newline="" if suffix == ".csv" else None) as handle:
        if suffix == ".jsonl":
            from gatecal.readers.table import jsonl_rows  # one JSONL reader for every table

            yield from jsonl_rows(text, path, LabelsError)
            return
        if suffix != ".csv":
            raise LabelsError(f"{path}: a label table must be .csv or .jsonl")
        reader = csv.DictReader(handle)
        missing = sorted({"item", "human", "judge"} - set(reader.fieldnames or []))
        if missing:
            raise LabelsError(
                f"{path}: a label table needs columns item, human, judge (missing {missing})"
            )
        for row in reader:
            yield f"{path}:{reader.line_num}", row


def read_labels(path: str | Path) -> tuple[Label, ...]:
    """Read a label table (``.csv`` or ``.jsonl``, UTF-8 with or without a BOM).

    Columns: ``item``, ``human`` and ``judge`` (pass/fail, yes/no, true/false or 1/0,
    any case; the judge may also be ``unparseable``, ``error`` or ``unscored``), and
    optionally ``check`` and ``repeat``. Rows of one item without a ``repeat`` are
    repeated judgements of it.

    Raises
    ------
    LabelsError
        Naming the file and line: a missing column or value, an unknown verdict, an item
        whose human label differs between rows, a repeated (check, item, repeat), or no
        rows at all.
    """
    file = Path(path)
    try:
        rows = list(_label_rows(file))
    except OSError as exc:
        raise LabelsError(f"{file}: cannot read the label table ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise LabelsError(f"{file}: not UTF-8 text") from None
    labels: list[Label] = []
    first: dict[tuple[str, str], tuple[bool, str]] = {}
    seen: set[tuple[str, str, str]] = set()
    counts: dict[tuple[str, str], int] = {}
    for where, row in rows:
        item = str(row.get("item") if row.get("item") is not None else "").strip()
        if not item:
            raise LabelsError(f"{where}: missing `item`")
        check = str(row.get("check") or "").strip()
        human = _verdict(row.get("human", ""), "human", where)
        judge = _verdict(row.get("judge", ""), "judge", where)
        assert human is not None  # only the judge may be unparseable
        key = (check, item)
        counts[key] = counts.get(key, 0) + 1
        raw_repeat = row.get("repeat")
        repeat = str(raw_repeat).strip() if raw_repeat not in (None, "") else f"#{counts[key]}"
        if (check, item, repeat) in seen:
            what = f"check {check!r}, " if check else ""
            raise LabelsError(f"{where}: {what}item {item!r}, repeat {repeat!r} appears twice")
        seen.add((check, item, repeat))
        if key in first and first[key][0] != human:
            was, line = first[key]
            raise LabelsError(
                f"{where}: item {item!r} is labelled {'pass' if human else 'fail'} here and "
                f"{'pass' if was else 'fail'} at {line}; one item has one true verdict"
            )
        first.setdefault(key, (human, where))
        labels.append(Label(item=item, check=check, repeat=repeat, human=human, judge=judge))
    if not labels:
        raise LabelsError(f"{file}: no labelled items")
    return tuple(labels)
