"""Human labels of the judge: one row per judgement of a labelled item (``gatecal calibrate``).

Columns ``item``, ``human`` (the true verdict), ``judge`` (the judge's), optionally ``check``
and ``repeat``; CSV (comma, semicolon or tab) or JSONL, in any encoding gatecal reads.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatecal.readers._columns import OnDemand

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["UNPARSEABLE_VALUES", "Label", "LabelColumns", "LabelsError", "read_labels"]

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
            from gatecal.readers.table.rows import jsonl_rows  # one JSONL reader for every table

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


def read_labels(path: str | Path) -> LabelColumns:
    """Read a label table (``.csv`` or ``.jsonl``, UTF-8 with or without a BOM).

    Columns: ``item``, ``human`` and ``judge`` (pass/fail, yes/no, true/false or 1/0,
    any case; the judge may also be ``unparseable``, ``error`` or ``unscored``), and
    optionally ``check`` and ``repeat``. Rows of one item without a ``repeat`` are
    repeated judgements of it.

    The labels come as :class:`LabelColumns`, a sequence of :class:`Label` (made on
    demand) that holds a few bytes per label: a table from 1 MiB on is read in blocks
    straight into its columns.

    Raises
    ------
    LabelsError
        Naming the file and line: a missing column or value, an unknown verdict, an item
        whose human label differs between rows, a repeated (check, item, repeat), or no
        rows at all.
    """
    from gatecal.readers import _progress

    file = Path(path)
    _progress.expect([file])
    if _big(file):
        from gatecal.readers.labels.blocks import read_label_blocks
        from gatecal.readers.table.blocks import SlowPath

        try:
            return read_label_blocks(file)
        except SlowPath:
            pass  # read row by row, as a small file is: it names the line of what is wrong
    labels = _read_rows(file)
    _progress.done(file)
    return LabelColumns.of(labels)


def _big(file: Path) -> bool:
    """Is `file` a table to read in blocks (csv or jsonl, from STREAM_MIN_BYTES on)?"""
    from gatecal.readers.table.blocks import STREAM_MIN_BYTES

    if file.suffix.lower() not in (".csv", ".jsonl"):
        return False
    try:
        if file.stat().st_size < STREAM_MIN_BYTES:
            return False
        with open(file, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False  # the row reader says why
    return not head.startswith((b"\xff\xfe", b"\xfe\xff")) and b"\0" not in head


def _read_rows(file: Path) -> list[Label]:
    """The row-by-row reader: every rule checked row by row, errors naming the line."""
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
    return labels


class LabelColumns(OnDemand[Label]):
    """Labels held as columns; a sequence of :class:`Label` made on demand.

    ``codes(name)`` and ``values(name)`` give a text column (``check``, ``item``,
    ``repeat``; ``values(name)[codes]`` is the column, values in order of first
    appearance); ``array("human")`` is 1 or 0 and ``array("judge")`` 1, 0 or -1 for an
    unparseable reply (int8). ``keys()`` codes each label's (check, item).
    """

    __slots__ = ("_keys",)
    _what = "label"

    def __init__(self, columns: dict[str, Any], values: dict[str, tuple[str, ...]]) -> None:
        super().__init__(columns, values)
        self._keys: tuple[Any, Any] | None = None

    @classmethod
    def of(cls, labels: Sequence[Label]) -> LabelColumns:
        """`labels` as columns (as they are, when they already are)."""
        import numpy as np

        if isinstance(labels, LabelColumns):
            return labels
        index: dict[str, dict[str, int]] = {"check": {}, "item": {}, "repeat": {}}
        codes: dict[str, list[int]] = {name: [] for name in index}
        human, judge = [], []
        for lab in labels:
            for name, value in (("check", lab.check), ("item", lab.item), ("repeat", lab.repeat)):
                codes[name].append(index[name].setdefault(value, len(index[name])))
            human.append(bool(lab.human))
            judge.append(1 if lab.judge is True else -1 if lab.judge is None else 0)
        columns: dict[str, Any] = {k: np.asarray(v, dtype=np.int32) for k, v in codes.items()}
        columns["human"] = np.asarray(human, dtype=np.int8)
        columns["judge"] = np.asarray(judge, dtype=np.int8)
        return cls(columns, {name: tuple(values) for name, values in index.items()})

    def __len__(self) -> int:
        return len(self._columns["human"])

    def array(self, name: str) -> npt.NDArray[np.int8]:
        column: npt.NDArray[np.int8] = self._columns[name]
        return column

    def keys(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        """(codes, first): each label's (check, item) coded in order of first appearance,
        and each code's first label."""
        if self._keys is None:
            import numpy as np

            from gatecal.readers._columns import first_codes

            size = max(len(self._values["item"]), 1)
            pair = self.codes("check").astype(np.int64) * size + self.codes("item")
            self._keys = first_codes(pair)
        return self._keys

    def _make(self, i: int) -> Label:
        col, values = self._columns, self._values
        judge = int(col["judge"][i])
        return Label(
            item=values["item"][int(col["item"][i])],
            check=values["check"][int(col["check"][i])],
            repeat=values["repeat"][int(col["repeat"][i])],
            human=bool(col["human"][i]),
            judge=None if judge < 0 else bool(judge),
        )

    def __iter__(self) -> Iterator[Label]:
        col, values = self._columns, self._values
        text = {
            name: [values[name][c] for c in col[name].tolist()]
            for name in ("check", "item", "repeat")
        }
        verdict = {1: True, 0: False, -1: None}
        for item, check, repeat, human, judge in zip(
            text["item"],
            text["check"],
            text["repeat"],
            col["human"].tolist(),
            col["judge"].tolist(),
            strict=True,
        ):
            yield Label(
                item=item, check=check, repeat=repeat, human=bool(human), judge=verdict[judge]
            )
