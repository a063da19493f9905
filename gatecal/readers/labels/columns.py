"""Human labels as read: one label, the labels as columns, and what a verdict cell may hold."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gatecal.readers._columns import OnDemand

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["UNPARSEABLE_VALUES", "Label", "LabelColumns", "LabelsError", "verdict"]

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


def verdict(value: object, column: str, where: str) -> bool | None:
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
