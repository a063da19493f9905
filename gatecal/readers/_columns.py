"""Verdicts held as columns: for each text column, codes into its distinct values.

A read of a million verdicts keeps a few bytes per verdict (one small integer per text
column, the flags and numbers in arrays; a column holding one value throughout, as the
build, check or source of most files and the absent scores do, is that value repeated
and costs nothing per verdict) and each distinct run, case or check name once,
instead of a Python object per verdict. :class:`VerdictColumns` is still a sequence of
:class:`~gatecal.readers._data.Verdict` (made on demand), so a consumer that wants objects
iterates it; the counts every analysis needs are taken from the columns directly.

Codes are given in order of first appearance, so a column's ``values`` are its distinct
values in the order the verdicts first show them (the order ``runs()`` and ``cases()``
report).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

from gatecal.readers._verdict import Verdict

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["TEXT_COLUMNS", "OnDemand", "VerdictBuilder", "VerdictColumns", "nfc_cases"]

T = TypeVar("T")

# The verdict's text columns, coded; the rest are numbers and flags.
TEXT_COLUMNS = ("build", "run", "case", "check", "kind", "status", "session", "source")
_NUMBERS: tuple[str, ...] = ("passed", "score", "has_score", "attempts", "cached", "cost")
_NUMBERS += ("has_cost", "tokens", "has_tokens")
# array typecodes of the numbers while they are appended
_TYPECODES = {
    "passed": "b",  # 1 pass, 0 fail, -1 none
    "score": "d",
    "has_score": "b",
    "attempts": "q",
    "cached": "b",
    "cost": "d",
    "has_cost": "b",
    "tokens": "q",
    "has_tokens": "b",
}
_DTYPES = {"b": "int8", "d": "float64", "q": "int64", "i": "int32"}


class VerdictBuilder:
    """Verdicts appended one by one (:meth:`append`, :meth:`add`) or a block at a time
    (:meth:`add_block`), in order; :meth:`build` freezes them into :class:`VerdictColumns`."""

    __slots__ = ("_blocks", "_codes", "_index", "_numbers", "_values")

    def __init__(self) -> None:
        # value -> code; None while only `_values` is kept (rebuilt when next needed)
        self._index: dict[str, dict[str, int] | None] = {name: {} for name in TEXT_COLUMNS}
        self._values: dict[str, list[str]] = {name: [] for name in TEXT_COLUMNS}
        self._codes: dict[str, array[int]] = {name: array("i") for name in TEXT_COLUMNS}
        self._numbers: dict[str, array[Any]] = {k: array(t) for k, t in _TYPECODES.items()}
        self._blocks: list[dict[str, Any]] = []  # numpy columns, in order

    def __len__(self) -> int:
        appended = len(self._numbers["passed"])
        return appended + sum(len(b["passed"]) for b in self._blocks)

    def __bool__(self) -> bool:
        return len(self) > 0

    def _index_of(self, column: str) -> dict[str, int]:
        index = self._index[column]
        if index is None:
            index = self._index[column] = {v: i for i, v in enumerate(self._values[column])}
        return index

    def code(self, column: str, value: str) -> int:
        """The code of `value` in `column`, given it if new."""
        index = self._index_of(column)
        found = index.get(value)
        if found is None:
            found = index[value] = len(self._values[column])
            self._values[column].append(value)
        return found

    def column_codes(self, column: str, values: Sequence[str]) -> Any:
        """The codes (int32) of a whole column of text values, one per row; new values are
        given codes in order of first appearance. Into an empty column no table of values
        is built (values are told apart by their hashes, checked; the table is made if
        ever needed), so a million distinct case ids cost their strings and 8 bytes each."""
        import numpy as np

        if self._values[column]:
            return np.asarray(self.codes_of(column, values), dtype=np.int32)
        hashes = np.fromiter(map(hash, values), dtype=np.int64, count=len(values))
        codes, first = first_codes(hashes)
        del hashes
        distinct: list[str] = []
        step = 1 << 16  # Python ints made a slice at a time
        firsts = first
        for start in range(0, len(firsts), step):
            distinct += [values[i] for i in firsts[start : start + step].tolist()]
        for start in range(0, len(values), step):
            part = codes[start : start + step].tolist()
            if any(
                a != distinct[c] for a, c in zip(values[start : start + step], part, strict=True)
            ):
                return np.asarray(self.codes_of(column, values), dtype=np.int32)  # hashes met
        self._values[column] = distinct
        self._index[column] = None
        return codes

    def codes_of(self, column: str, values: Sequence[str]) -> list[int]:
        """The codes of several values (a block's distinct ones), in their order; new
        ones are given codes in that order."""
        index, known = self._index_of(column), self._values[column]
        get = index.get
        out: list[Any] = list(map(get, values))  # the known ones at once
        if None in out:
            for i, found in enumerate(out):
                if found is None:
                    value = values[i]
                    found = get(value)  # (given a code a moment ago, if repeated)
                    if found is None:
                        found = index[value] = len(known)
                        known.append(value)
                    out[i] = found
        return out

    def add(
        self,
        build: str,
        run: str,
        case: str,
        check: str,
        kind: str,
        passed: bool | None,
        status: str,
        score: float | None,
        session: str,
        attempts: int,
        cached: bool,
        source: str,
        cost: float | None = None,
        tokens: int | None = None,
    ) -> None:
        """Append one verdict from its fields (the fast path of a reader's loop)."""
        codes, numbers = self._codes, self._numbers
        for column, value in (
            ("build", build),
            ("run", run),
            ("case", case),
            ("check", check),
            ("kind", kind),
            ("status", status),
            ("session", session),
            ("source", source),
        ):
            index = self._index[column]
            if index is None:
                index = self._index_of(column)
            found = index.get(value)
            if found is None:
                found = index[value] = len(self._values[column])
                self._values[column].append(value)
            codes[column].append(found)
        numbers["passed"].append(-1 if passed is None else int(passed))
        numbers["score"].append(0.0 if score is None else score)
        numbers["has_score"].append(score is not None)
        numbers["attempts"].append(attempts)
        numbers["cached"].append(cached)
        numbers["cost"].append(0.0 if cost is None else cost)
        numbers["has_cost"].append(cost is not None)
        numbers["tokens"].append(0 if tokens is None else tokens)
        numbers["has_tokens"].append(tokens is not None)

    def append(self, v: Verdict) -> None:
        """Append one :class:`Verdict`."""
        self.add(
            v.build,
            v.run,
            v.case,
            v.check,
            v.kind,
            v.passed,
            v.status,
            v.score,
            v.session,
            v.attempts,
            v.cached,
            v.source,
            v.cost,
            v.tokens,
        )

    def _flush(self) -> None:
        """Move the verdicts appended one by one into a block, keeping the order."""
        import numpy as np

        if not len(self._numbers["passed"]):
            return
        block: dict[str, Any] = {}
        for name, codes in self._codes.items():
            block[name] = np.frombuffer(codes, dtype=np.int32).copy()
            self._codes[name] = array("i")
        for name, values in self._numbers.items():
            block[name] = np.frombuffer(values, dtype=_DTYPES[values.typecode]).copy()
            self._numbers[name] = array(values.typecode)
        self._blocks.append(_compact(block))

    def add_block(self, block: dict[str, Any]) -> None:
        """Append verdicts given as numpy columns: every TEXT_COLUMNS name as int32 codes
        of this builder (from :meth:`code`), every number column as in `_TYPECODES`."""
        self._flush()
        self._blocks.append(_compact(block))

    def extend(self, other: VerdictBuilder) -> None:
        """Append every verdict of `other`, its codes mapped into this builder's; `other`
        is left empty (its blocks move here)."""
        import numpy as np

        other._flush()
        if not other._blocks and not any(other._values.values()):
            return  # nothing to add
        self._flush()
        if not self._blocks and not any(self._values.values()):
            self._index, self._values = other._index, other._values  # nothing to map
            self._blocks = other._blocks
        else:
            lookups = {
                name: np.asarray(self.codes_of(name, other._values[name]), dtype=np.int32)
                for name in TEXT_COLUMNS
            }
            for block in other._blocks:
                for name, lookup in lookups.items():
                    block[name] = lookup[block[name]] if len(lookup) else block[name]
                self._blocks.append(_compact(block))
        other._index = {name: {} for name in TEXT_COLUMNS}
        other._values = {name: [] for name in TEXT_COLUMNS}
        other._blocks = []

    def __iadd__(self, other: VerdictBuilder) -> VerdictBuilder:
        self.extend(other)
        return self

    def __iter__(self) -> Iterator[Verdict]:
        return iter(self.build())

    def build(self) -> VerdictColumns:
        """The verdicts so far, frozen (the builder keeps them, as one block)."""
        import numpy as np

        self._flush()
        columns: dict[str, Any] = {}
        for name in (*TEXT_COLUMNS, *_NUMBERS):
            parts = [b.pop(name) for b in self._blocks]  # freed column by column
            dtype = np.int32 if name in TEXT_COLUMNS else _DTYPES[_TYPECODES[name]]
            if len(parts) == 1:
                columns[name] = parts[0]
            elif parts and all(_constant(p) for p in parts) and len({p[0] for p in parts}) == 1:
                columns[name] = np.broadcast_to(parts[0][:1], (sum(len(p) for p in parts),))
            else:
                columns[name] = np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)
            del parts
        self._blocks = [dict(columns)] if len(columns["passed"]) else []
        values = {name: tuple(self._values[name]) for name in TEXT_COLUMNS}
        return VerdictColumns(columns, values)


def _constant(column: Any) -> bool:
    """Whether `column` is held as one value repeated (a read-only zero-stride view)."""
    return bool(column.ndim == 1 and len(column) > 1 and column.strides == (0,))


def _compact(block: dict[str, Any]) -> dict[str, Any]:
    """`block` with every column that holds one value throughout kept as that value
    repeated (a zero-stride view of one element): the build, check, kind, session and
    source of most files, and the absent scores, costs and tokens, cost no memory per
    verdict. Consumers only read columns (indexing, comparing, summing)."""
    import numpy as np

    for name, column in block.items():
        if len(column) > 1 and not _constant(column):
            first = column[:1].copy()
            if (column == first[0]).all():
                block[name] = np.broadcast_to(first, column.shape)
    return block


def first_codes(keys: Any) -> tuple[Any, Any]:
    """(codes, first): for each row a code (int32) of its key, codes given in order of
    first appearance, and each code's first row. A stable sort, about 30 bytes a row
    (np.unique takes more, for the same)."""
    import numpy as np

    n = len(keys)
    if not n:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    del ordered
    group = np.cumsum(new, dtype=np.int64) - 1
    first = order[new]  # the smallest row of each key: the sort is stable
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=np.int32)
    rank[by_first] = np.arange(len(first), dtype=np.int32)
    codes = np.empty(n, dtype=np.int32)
    codes[order] = rank[group]
    return codes, first[by_first]


class OnDemand(Sequence[T]):
    """A sequence of records held as columns (a text column as codes into its distinct
    values), each record made on demand by `_make`."""

    __slots__ = ("_columns", "_values")
    _what = "record"  # for the error of an index out of range

    def __init__(self, columns: dict[str, Any], values: dict[str, tuple[str, ...]]) -> None:
        self._columns = columns
        self._values = values

    def codes(self, name: str) -> npt.NDArray[np.int32]:
        codes: npt.NDArray[np.int32] = self._columns[name]
        return codes

    def values(self, name: str) -> tuple[str, ...]:
        return self._values[name]

    def _make(self, i: int) -> T:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            return tuple(self._make(i) for i in range(*index.indices(len(self))))
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"{self._what} index out of range")
        return self._make(index % n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, type(self) | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} {self._what}s)"


class VerdictColumns(OnDemand[Verdict]):
    """Read verdicts as columns; a sequence of :class:`Verdict` made on demand.

    ``codes(name)`` and ``values(name)`` give a text column (``values(name)[codes]`` is
    the column); ``array(name)`` a number column (``passed``: 1, 0, -1 for none;
    ``score``, ``cost``, ``tokens`` with ``has_score``, ``has_cost``, ``has_tokens``).
    """

    __slots__ = ()
    _what = "verdict"

    @classmethod
    def of(cls, verdicts: Sequence[Verdict] | VerdictColumns) -> VerdictColumns:
        """`verdicts` as columns (as they are, when they already are)."""
        if isinstance(verdicts, VerdictColumns):
            return verdicts
        builder = VerdictBuilder()
        for v in verdicts:
            builder.append(v)
        return builder.build()

    def __len__(self) -> int:
        return len(self._columns["passed"])

    def array(self, name: str) -> npt.NDArray[Any]:
        column: npt.NDArray[Any] = self._columns[name]
        return column

    def code(self, name: str, value: str) -> int:
        """The code of `value` in text column `name`, or -1 when no verdict has it."""
        try:
            return self._values[name].index(value)
        except ValueError:
            return -1

    def mask(self, name: str, value: str) -> npt.NDArray[np.bool_]:
        """Which verdicts have `value` in text column `name`."""
        result: npt.NDArray[np.bool_] = self.codes(name) == self.code(name, value)
        return result

    def ordered(self, name: str, where: npt.NDArray[np.bool_] | None = None) -> list[str]:
        """The distinct values of a text column among the verdicts `where` selects, in order
        of first appearance."""
        import numpy as np

        if where is None:
            return list(self._values[name])  # codes are given in order of first appearance
        codes = self.codes(name)[where]
        seen, first = np.unique(codes, return_index=True)
        values = self._values[name]
        return [values[c] for c in seen[np.argsort(first, kind="stable")].tolist()]

    def _text(self, name: str) -> list[str]:
        values = self._values[name]
        return [values[c] for c in self.codes(name).tolist()]

    def _make(self, i: int) -> Verdict:
        def text(name: str) -> str:
            return self._values[name][int(self._columns[name][i])]

        col = self._columns
        passed = int(col["passed"][i])
        return Verdict(
            build=text("build"),
            run=text("run"),
            case=text("case"),
            check=text("check"),
            kind=text("kind"),
            passed=None if passed < 0 else bool(passed),
            status=text("status"),
            score=float(col["score"][i]) if col["has_score"][i] else None,
            session=text("session"),
            attempts=int(col["attempts"][i]),
            cached=bool(col["cached"][i]),
            source=text("source"),
            cost=float(col["cost"][i]) if col["has_cost"][i] else None,
            tokens=int(col["tokens"][i]) if col["has_tokens"][i] else None,
        )

    def __iter__(self) -> Iterator[Verdict]:
        if not len(self):
            return
        text = {name: self._text(name) for name in TEXT_COLUMNS}
        col = self._columns
        passed = col["passed"].tolist()
        score = col["score"].tolist()
        has_score = col["has_score"].tolist()
        attempts = col["attempts"].tolist()
        cached = col["cached"].tolist()
        cost = col["cost"].tolist()
        has_cost = col["has_cost"].tolist()
        tokens = col["tokens"].tolist()
        has_tokens = col["has_tokens"].tolist()
        for i in range(len(passed)):
            yield Verdict(
                build=text["build"][i],
                run=text["run"][i],
                case=text["case"][i],
                check=text["check"][i],
                kind=text["kind"][i],
                passed=None if passed[i] < 0 else bool(passed[i]),
                status=text["status"][i],
                score=score[i] if has_score[i] else None,
                session=text["session"][i],
                attempts=attempts[i],
                cached=bool(cached[i]),
                source=text["source"][i],
                cost=cost[i] if has_cost[i] else None,
                tokens=tokens[i] if has_tokens[i] else None,
            )


def nfc_cases(table: VerdictColumns) -> tuple[VerdictColumns, dict[str, str]]:
    """`table` with every case id in Unicode NFC, and the ids read in another spelling
    (NFC id -> the spelling first read). One id typed on macOS (NFD) and on Linux (NFC)
    is one case, not two listed identically; the codes of the two are merged, so a run
    holding both is a duplicate verdict. A table whose ids are all NFC (any ASCII one) is
    returned as it is."""
    import unicodedata

    import numpy as np

    values = table.values("case")
    normal = [v if v.isascii() else unicodedata.normalize("NFC", v) for v in values]
    if normal == list(values):
        return table, {}
    merged: dict[str, int] = {}
    spelled: dict[str, str] = {}
    remap = np.empty(len(values), dtype=np.int32)
    for code, (read, nfc) in enumerate(zip(values, normal, strict=True)):
        remap[code] = merged.setdefault(nfc, len(merged))
        if read != nfc:
            spelled.setdefault(nfc, read)
    columns = {name: table._columns[name] for name in table._columns}
    columns["case"] = remap[np.asarray(table.codes("case"))]
    texts = {name: tuple(table.values(name)) for name in TEXT_COLUMNS}
    texts["case"] = tuple(merged)
    return VerdictColumns(columns, texts), spelled
