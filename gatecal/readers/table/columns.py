"""A block of a long table, column by column: each column factorized (by pandas, or from an
Arrow dictionary), each distinct value normalised and checked once, and the verdicts,
skips and components of the block built from the codes (:func:`coded`). Anything it does
not decide for sure raises :class:`SlowPath`: the row-by-row reader then reads the file.
``blocks.py`` cuts CSV and JSONL files into the blocks; ``parquet.py`` reads its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gatecal.readers._base import Batch
from gatecal.readers._data import Skip
from gatecal.readers._verdict import BUILDS, COMPONENT, LONG_COLUMNS, OPTIONAL_COLUMNS, Verdict

__all__ = ["Factorized", "SlowPath", "arrow_factorized", "coded"]

_KEYS = (*LONG_COLUMNS, *OPTIONAL_COLUMNS)  # every column a block may carry
# a skip's and a component's fields, read from the block's columns (text, or numbers by kind)
_SKIP_TEXTS = ("build", "run", "case", "source", "session")
_COMPONENT_TEXTS = ("build", "run", "case", "check", "kind", "session", "source")
_COMPONENT_NUMBERS = {"score": float, "attempts": int, "cached": bool, "cost": float, "tokens": int}


class SlowPath(Exception):
    """This file is for the row-by-row reader to decide."""


class Factorized:
    """A block's column already split into codes and its distinct values (in order of
    first appearance, one Python type and None), as Arrow's dictionary encoding gives."""

    __slots__ = ("codes", "uniques")

    def __init__(self, codes: Any, uniques: list[Any]) -> None:
        self.codes, self.uniques = codes, uniques

    def __len__(self) -> int:
        return len(self.codes)


def arrow_factorized(column: Any) -> Factorized | None:
    """`column` (a pyarrow Array or ChunkedArray) as :class:`Factorized`, by Arrow's
    dictionary encoding (nulls a value of their own, None); None for a type whose Python
    values the row reader must see (dates, decimals, lists, ...)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_dictionary(kind):  # its dictionary may repeat or be unused: encode again
        column = column.cast(kind.value_type)
        kind = kind.value_type
    plain = (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
    )
    if not plain:
        return None
    encoded = pc.dictionary_encode(column, null_encoding="encode")
    parts = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
    if not parts:
        return Factorized(np.zeros(0, dtype=np.intp), [])
    dictionary = parts[0].dictionary  # the chunks of one encoding share one dictionary
    if any(not p.dictionary.equals(dictionary) for p in parts[1:]):
        return None
    codes = np.concatenate([_indices(p.indices) for p in parts])
    return Factorized(codes, dictionary.to_pylist())


def _indices(indices: Any) -> Any:
    """A dictionary array's indices (an Arrow integer array without nulls) as numpy intp,
    read from Arrow's buffer (``Array.to_numpy`` imports pandas, 0.2 s)."""
    import numpy as np

    if indices.null_count:
        raise SlowPath
    dtype = np.dtype(indices.type.to_pandas_dtype())
    data = indices.buffers()[1]
    values = np.frombuffer(data, dtype, len(indices), indices.offset * dtype.itemsize)
    return values.astype(np.intp)


def _factorize(values: Sequence[Any] | Factorized) -> tuple[Any, list[Any]]:
    """(codes, distinct values in order of first appearance) of one column of a block.

    Only columns of one Python type (and None) are taken: True == 1 == 1.0 in a hash
    table, and the row reader tells them apart.
    """
    if isinstance(values, Factorized):  # (pandas not imported: Arrow's columns need none)
        return values.codes, values.uniques

    import numpy as np
    import pandas as pd

    kinds = set(map(type, values))
    has_none = type(None) in kinds
    kinds.discard(type(None))
    if len(kinds) > 1 or not kinds <= {str, bool, int, float}:
        raise SlowPath
    if has_none:  # pandas takes None for NaN and merges the two
        values = [_NONE if v is None else v for v in values]
    if isinstance(values, np.ndarray) and values.dtype == object:
        array = values
    else:
        array = np.empty(len(values), dtype=object)
        array[:] = values
    codes, uniques = pd.factorize(array, use_na_sentinel=False)
    return codes, [None if u is _NONE else u for u in uniques]


_NONE = object()  # None while pandas factorizes
_UNSEEN = object()  # a raw value no block has normalised yet


def _normalised(
    values: Sequence[Any], rule: Any, memo: dict[type, dict[Any, Any]]
) -> tuple[Any, list[Any]]:
    """(codes, results): per row, a code into the block's distinct raw values, and what
    `rule` makes of each (in order of first appearance; two raw values can give one
    result). `memo` keeps results across blocks, one table per raw type (True == 1).
    Anything `rule` raises sends the file to the row reader."""
    codes, uniques = _factorize(values)
    results: list[Any] = []
    try:
        kinds = set(map(type, uniques))
        if len(kinds) == 1:  # one raw type (the usual): the known ones looked up at once
            known = memo.setdefault(kinds.pop(), {})
            results = list(map(known.get, uniques, itertools.repeat(_UNSEEN)))
            if _UNSEEN in results:
                for i, got in enumerate(results):
                    if got is _UNSEEN:
                        results[i] = known.setdefault(uniques[i], rule(uniques[i]))
        else:
            for u in uniques:
                known = memo.setdefault(type(u), {})
                if u in known:
                    results.append(known[u])
                else:
                    results.append(known.setdefault(u, rule(u)))
    except Exception:
        raise SlowPath from None
    return codes, results


def coded(
    columns: dict[str, Any],
    key: str,
    n: int,
    rule: Any,
    memos: dict[str, dict[type, dict[Any, Any]]],
) -> tuple[Any, list[Any]]:
    """(codes, results) of column `key` of a block of `n` rows (see :func:`_normalised`);
    an absent column is one value, None, for every row."""
    import numpy as np

    if key not in columns:
        try:
            return np.zeros(n, dtype=np.intp), [rule(None)]
        except Exception:
            raise SlowPath from None
    return _normalised(columns[key], rule, memos.setdefault(key, {}))


def _block(
    columns: dict[str, Any],
    n: int,
    path: Path,
    build: str,
    batch: Batch,
    runs: dict[str, None],
    unescape: bool,
    memos: dict[str, dict[type, dict[Any, Any]]],
) -> tuple[int, int]:
    """Fold one block of rows into `batch`; (verdicts, errors) it added."""
    import numpy as np

    from gatecal.readers.table import cells

    where = str(path)

    def unesc(value: Any) -> Any:
        if unescape and type(value) is str and value.startswith("'"):
            return cells.from_cell(value)
        return value

    def norm(key: str, rule: Any) -> tuple[Any, list[Any]]:
        return coded(columns, key, n, lambda v: rule(unesc(v)), memos)

    def text(value: Any) -> str:
        return "" if value is None else str(value).strip()

    def required(value: Any) -> str:
        found = text(value)
        if not found:
            raise ValueError("missing")
        return found

    def of_set(allowed: Sequence[str], default: str = "") -> Any:
        def rule(value: Any) -> str:
            found = (text(value) or default).lower()
            if found not in allowed:
                raise ValueError(found)
            return found

        return rule

    run_c, run_v = norm("run", required)
    kind_c, kind_v = norm("kind", of_set(("", "judge", "code")))
    build_c, build_v = norm("build", of_set(BUILDS, build))
    status_c, status_v = norm("status", of_set(cells.STATUSES, "ok"))
    # the columns that may hold a value a row (the case): normalised when first seen
    wide = {
        "case": required,
        "check": text,
        "session": lambda v: text(v) or where,
        "source": lambda v: text(v) or where,
    }
    for value in run_v:  # in order of first appearance (see _normalised)
        runs[value] = None
    status_names = np.asarray(status_v, dtype=object)[status_c] if n else np.zeros(0, object)
    skipped = status_names == "skipped"
    component = status_names == COMPONENT
    counted = ~skipped
    passed_c, passed_v = norm("passed", lambda v: cells.passed(v, where))
    passed_of = np.asarray([-1 if p is None else int(p) for p in passed_v], dtype=np.int8)
    passed = passed_of[passed_c] if len(passed_of) else np.zeros(n, np.int8)
    needs = counted & ((status_names == "ok") | component)
    if (passed[needs] < 0).any():
        raise SlowPath  # a missing `passed`: the row reader names the line
    passed = np.where(needs, passed, -1).astype(np.int8)

    def numbers(key: str, rule: Any, kind: Any) -> tuple[Any, Any]:
        codes, distinct = norm(key, rule)
        if not len(distinct):
            return np.zeros(n, kind), np.zeros(n, bool)
        have = np.asarray([d is not None for d in distinct], dtype=bool)
        value = np.asarray([0 if d is None else d for d in distinct], dtype=kind)
        return value[codes], have[codes]

    score, has_score = numbers("score", lambda v: cells.score(v, where), np.float64)
    cost, has_cost = numbers("cost", lambda v: _cost(cells.score(v, where, "cost")), np.float64)
    tokens, has_tokens = numbers("tokens", lambda v: cells.tokens(v, where), np.int64)
    attempts, _ = numbers("attempts", _attempts(text), np.int64)
    cached_c, cached_v = norm("cached", lambda v: cells.passed(v, where))
    cached = np.asarray([bool(c) for c in cached_v], dtype=bool)[cached_c] if n else cached_c
    batch.reruns += int((attempts[counted] - 1).sum())
    numbered = {  # (values, whether each row has one; None: every row has)
        "score": (score, has_score),
        "cost": (cost, has_cost),
        "tokens": (tokens, has_tokens),
        "attempts": (attempts, None),
        "cached": (cached, None),
    }
    keep = counted & ~component
    every = bool(keep.all())
    builder = batch.verdicts
    block: dict[str, Any] = {}
    texts = {
        "build": (build_c, build_v),
        "run": (run_c, run_v),
        "kind": (kind_c, kind_v),
        "status": (status_c, status_v),
    }
    if every:  # (the usual) the wide columns go straight to the verdicts' codes
        for name, rule in wide.items():
            block[name] = _verdict_codes(
                columns, name, n, lambda v, r=rule: r(unesc(v)), memos, builder
            )
    else:  # skips or components: they and the verdicts from the normalised values
        texts.update((name, norm(name, rule)) for name, rule in wide.items())
        _skips_and_components(batch, texts, skipped, component, passed, numbered)
    for name, (codes, values) in texts.items():
        kept = codes if every else codes[keep]
        present: list[int]
        if every:  # values are in order of first appearance (see _normalised)
            present = list(range(len(values)))
        else:
            local, first = np.unique(kept, return_index=True)
            present = local[np.argsort(first, kind="stable")].tolist()
        lookup = np.zeros(len(values), dtype=np.int32)
        lookup[present] = builder.codes_of(name, values if every else [values[c] for c in present])
        block[name] = lookup[kept] if len(kept) else np.zeros(0, np.int32)
    block["passed"] = passed[keep]
    block["score"] = score[keep].astype(np.float64)
    block["has_score"] = has_score[keep].astype(np.int8)
    block["attempts"] = attempts[keep].astype(np.int64)
    block["cached"] = cached[keep].astype(np.int8)
    block["cost"] = cost[keep].astype(np.float64)
    block["has_cost"] = has_cost[keep].astype(np.int8)
    block["tokens"] = tokens[keep].astype(np.int64)
    block["has_tokens"] = has_tokens[keep].astype(np.int8)
    builder.add_block(block)
    errors = int((status_names[keep] == "error").sum())
    return int(keep.sum()), errors


def _skips_and_components(
    batch: Batch,
    texts: dict[str, tuple[Any, list[Any]]],
    skipped: Any,
    component: Any,
    passed: Any,
    numbered: dict[str, tuple[Any, Any]],
) -> None:
    """A block's skips and components, in row order, as objects (they are few)."""
    import numpy as np

    def text(name: str, i: int) -> Any:
        codes, values = texts[name]
        return values[codes[i]]

    def number(name: str, i: int, kind: Any) -> Any:
        values, present = numbered[name]
        return kind(values[i]) if present is None or present[i] else None

    for i in np.flatnonzero(skipped).tolist():
        batch.skips.append(Skip(**{key: text(key, i) for key in _SKIP_TEXTS}))
    for i in np.flatnonzero(component).tolist():
        texts_of = {key: text(key, i) for key in _COMPONENT_TEXTS}
        numbers_of = {key: number(key, i, kind) for key, kind in _COMPONENT_NUMBERS.items()}
        batch.components.append(
            Verdict(passed=bool(passed[i]), status=COMPONENT, **texts_of, **numbers_of)
        )


def _verdict_codes(
    columns: dict[str, Any],
    key: str,
    n: int,
    rule: Any,
    memos: dict[str, dict[type, dict[Any, Any]]],
    builder: Any,
) -> Any:
    """The verdicts' codes (int32, one a row) of column `key` of a block whose every row
    is a verdict: each raw value is looked up once in a memo of the codes its normalised
    value was given (``memos["code:" + key]``, one table per raw type), and only a raw
    value no block has shown is normalised by `rule` (a column of a million distinct case
    ids costs one lookup a distinct value in a block, not three)."""
    import numpy as np

    if key not in columns:
        try:
            return np.full(n, builder.codes_of(key, [rule(None)])[0], dtype=np.int32)
        except Exception:
            raise SlowPath from None
    codes, uniques = _factorize(columns[key])
    kinds = set(map(type, uniques))
    memo = memos.setdefault("code:" + key, {})
    if len(kinds) == 1:  # (the usual) the known ones looked up at once
        known = memo.setdefault(kinds.pop(), {})
        found = np.fromiter(
            map(known.get, uniques, itertools.repeat(-1)), dtype=np.int32, count=len(uniques)
        )
        unseen = np.flatnonzero(found < 0).tolist()
    else:
        found = np.full(len(uniques), -1, dtype=np.int32)
        unseen = list(range(len(uniques)))
    if unseen:  # normalised, then given the verdicts' codes together (in order)
        raws = [uniques[i] for i in unseen]
        try:
            values = [rule(raw) for raw in raws]
        except Exception:
            raise SlowPath from None
        new = builder.codes_of(key, values)
        found[unseen] = new
        for raw, code in zip(raws, new, strict=True):
            memo.setdefault(type(raw), {})[raw] = code
    return found[codes] if n else np.zeros(0, np.int32)


def _cost(value: float | None) -> float | None:
    if value is not None and value < 0:
        raise ValueError("negative")
    return value


def _attempts(text: Any) -> Any:
    def rule(value: Any) -> int:
        found = text(value) or "1"
        if not found.isascii() or not found.isdecimal() or int(found) < 1:
            raise ValueError(found)
        return int(found)

    return rule
