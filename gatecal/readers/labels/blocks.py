"""Big label tables (CSV, JSONL) read in blocks, straight into :class:`LabelColumns`.

The blocks come from :mod:`gatecal.readers.table.blocks` (pandas' C parser for CSV, one
``json.loads`` per block for JSONL); each column's distinct values are checked once with
the row reader's own rules. The rules across rows (one true verdict per item, each
(check, item, repeat) once, at least one row) are checked on the whole columns at the
end. Anything not decided for sure, and every error, raises SlowPath: the row reader then
reads the file, so the labels and the errors are the row reader's
(``tests/readers/test_labels_scale.py`` reads every table both ways).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gatecal.readers.labels.columns import LabelColumns, verdict

__all__ = ["read_label_blocks"]

_KEYS = ("item", "human", "judge", "check", "repeat")


def _item(value: Any) -> str:
    found = "" if value is None else str(value).strip()
    if not found:
        raise ValueError("missing")
    return found


def _check(value: Any) -> str:
    return str(value or "").strip()


def _repeat(value: Any) -> str | None:
    """The repeat as given, or None for "number it" (an absent or empty one)."""
    return None if value is None or value == "" else str(value).strip()


def _human(value: Any) -> int:
    return int(bool(verdict(value, "human", "")))


def _judge(value: Any) -> int:
    found = verdict(value, "judge", "")
    return -1 if found is None else int(found)


def read_label_blocks(path: Path) -> LabelColumns:
    """Read one big label table in blocks; SlowPath when the row reader must decide."""
    import numpy as np

    from gatecal.readers.table.blocks import (
        csv_blocks,
        has_blank_looking_rows,
        has_pyarrow,
        jsonl_blocks,
    )
    from gatecal.readers.table.columns import SlowPath, coded

    suffix = path.suffix.lower()
    if suffix == ".csv":
        if not has_pyarrow() and has_blank_looking_rows(path):
            raise SlowPath  # (Arrow refuses such a line: see _blocks._arrow_csv_blocks)
        required = ("item", "human", "judge")
        blocks = csv_blocks(path, _KEYS, required, delimiter=",", exact_names=True)
    elif suffix == ".jsonl":
        blocks = jsonl_blocks(path, _KEYS)
    else:
        raise SlowPath
    # pandas gives every CSV cell as text (a short row's missing cells as ""): the row
    # reader's None there reads as "" in every rule
    rules = {"item": _item, "check": _check, "repeat": _repeat, "human": _human, "judge": _judge}
    memos: dict[str, dict[type, dict[Any, Any]]] = {}
    index: dict[str, dict[str, int]] = {"check": {}, "item": {}, "repeat": {}}
    parts: dict[str, list[Any]] = {name: [] for name in (*index, "human", "judge")}
    for columns, n in blocks:
        for name, rule in rules.items():
            codes, results = coded(columns, name, n, rule, memos)
            if name in ("human", "judge"):
                lookup = np.asarray(results, dtype=np.int8)
            else:  # codes of this file, in order of first appearance
                known = index[name]
                lookup = np.asarray(
                    [-1 if r is None else known.setdefault(r, len(known)) for r in results],
                    dtype=np.int32,
                )
            parts[name].append(lookup[codes])
    if not sum(map(len, parts["human"])):
        raise SlowPath  # no rows: the row reader says so
    col = {name: np.concatenate(p) for name, p in parts.items()}
    del parts
    values = {name: tuple(known) for name, known in index.items()}
    labels = LabelColumns(col, values)
    keys, first = labels.keys()
    if (col["human"] != col["human"][first][keys]).any():
        raise SlowPath  # an item labelled both ways: the row reader names both lines
    # rows without a repeat are numbered #1, #2, ... among the rows of their item
    order = np.argsort(keys, kind="stable")
    starts = np.flatnonzero(np.r_[True, keys[order][1:] != keys[order][:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    number = np.empty(len(order), dtype=np.int64)
    number[order] = np.arange(len(order)) - np.repeat(starts, sizes) + 1
    auto = col["repeat"] < 0
    if auto.any():
        known = index["repeat"]
        numbers = np.unique(number[auto])
        lookup = np.zeros(int(numbers[-1]) + 1, dtype=np.int32)
        lookup[numbers] = [known.setdefault(f"#{k}", len(known)) for k in numbers.tolist()]
        col["repeat"][auto] = lookup[number[auto]]
        values["repeat"] = tuple(known)
    del number, order
    pair = np.sort(keys.astype(np.int64) * max(len(values["repeat"]), 1) + col["repeat"])
    if (pair[1:] == pair[:-1]).any():
        raise SlowPath  # a (check, item, repeat) twice: the row reader names the line
    return labels  # its columns and values, the repeats numbered
