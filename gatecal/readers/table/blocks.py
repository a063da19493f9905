"""Big long tables (CSV, JSONL) read in blocks: each column's distinct values checked once.

:mod:`gatecal.readers.table.rows` reads a table row by row and names the line of the first
thing wrong. A table of a million rows holds a few hundred distinct runs, checks and
statuses, so here each block of rows is split into columns, each column's distinct
values are normalised and checked once, and the verdicts go into the columns as codes.
Anything this path does not decide for sure (a value it cannot check by itself, a row
that is not an object, text that is not UTF-8, a parse error) sends the whole file to
the row-by-row reader, which then reads it exactly as it always has, errors included.
The two paths give the same verdicts, skips, components, counts and run order
(``tests/readers/test_scale.py`` reads every table both ways).
"""

from __future__ import annotations

import io
import itertools
import json
import re
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from gatecal.readers._base import Batch
from gatecal.readers._data import Skip
from gatecal.readers._verdict import BUILDS, COMPONENT, LONG_COLUMNS, OPTIONAL_COLUMNS, Verdict

__all__ = ["BLOCK_ROWS", "STREAM_MIN_BYTES", "SlowPath", "read_table_blocks"]

#: files from this size on are read in blocks (smaller ones row by row, as always)
STREAM_MIN_BYTES = 1 << 20
#: rows per block: bounds the memory a block takes (about 1 KB a row at most)
BLOCK_ROWS = 50_000

_KEYS = (*LONG_COLUMNS, *OPTIONAL_COLUMNS)  # every column a block may carry


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
        batch.skips.append(
            Skip(
                build=text("build", i),
                run=text("run", i),
                case=text("case", i),
                source=text("source", i),
                session=text("session", i),
            )
        )
    for i in np.flatnonzero(component).tolist():
        batch.components.append(
            Verdict(
                build=text("build", i),
                run=text("run", i),
                case=text("case", i),
                check=text("check", i),
                kind=text("kind", i),
                passed=bool(passed[i]),
                status=COMPONENT,
                score=number("score", i, float),
                session=text("session", i),
                attempts=number("attempts", i, int),
                cached=number("cached", i, bool),
                source=text("source", i),
                cost=number("cost", i, float),
                tokens=number("tokens", i, int),
            )
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


def _jsonl_blocks(
    path: Path, keys: Sequence[str] = _KEYS
) -> Iterator[tuple[dict[str, list[Any]], int]]:
    """Blocks of a JSONL table: ({key: one value per row}, rows) for the `keys` any row of
    the block has."""
    from gatecal.readers._progress import advance
    from gatecal.readers.table.cells import unique_keys

    with open(path, "rb") as handle:
        first = True
        while True:
            lines = list(itertools.islice(handle, BLOCK_ROWS))
            if not lines:
                return
            if first and lines[0].startswith(b"\xef\xbb\xbf"):
                lines[0] = lines[0][3:]
            first = False
            lines = [line for line in lines if line.strip()]
            if not lines:
                continue
            joined = b"[" + b",".join(lines) + b"]"
            if _SURROGATE.search(joined):
                raise SlowPath  # json.loads passes an encoded surrogate; UTF-8 does not
            try:  # one parse for the block; each line must have held one object
                rows = json.loads(joined, object_pairs_hook=unique_keys)
            except (ValueError, RecursionError):
                raise SlowPath from None  # the row reader names the line
            del joined
            # (a row with two keys of one name is a TwiceKeys: the row reader refuses it)
            if len(rows) != len(lines) or not all(type(r) is dict for r in rows):
                raise SlowPath
            found: set[str] = set()
            for row in rows:
                found.update(row)
            yield {k: [r.get(k) for r in rows] for k in keys if k in found}, len(rows)
            advance(path, handle.tell())


#: bytes of JSONL a row of a block stands for: Arrow parses BLOCK_ROWS times this at a
#: time (whole lines), and the bytes read are reported after each
_JSON_ROW_BYTES = 64
# two values on one line (Arrow would read two rows; the row reader refuses the line)
_TWO_ON_A_LINE = re.compile(rb"\}[ \t\r]*\{")
#: columns whose value the rules read as text: an integral float there might have been
#: written as an integer (1 and 1.0 are told apart: "1" and "1.0"), which Arrow merges
_AS_TEXT = frozenset(_KEYS) - {"score", "cost"}


def _arrow_jsonl_blocks(
    path: Path, keys: Sequence[str] = _KEYS
) -> Iterator[tuple[dict[str, Any], int]]:
    """Blocks of a JSONL table parsed by Arrow's JSON reader (in C++, on every core), each
    column dictionary-encoded: the values json.loads gives, or SlowPath. Arrow reads what
    the row reader reads (a line an object, blank lines none) except where it is looser,
    and each such place is refused here: two objects on one line, a byte order mark
    after the first, a column of numbers where an integer and a float would differ as
    text; a value Arrow cannot hold as a plain column (mixed types, nested) or any parse
    error is one too."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa
    import pyarrow.json as pajson

    from gatecal.readers._progress import advance

    def pieces() -> Iterator[tuple[bytes, int]]:
        """The file in pieces of whole lines (its byte order mark dropped), and where
        each ends."""
        bom = b"\xef\xbb\xbf"
        with open(path, "rb") as handle:
            first, tail = True, b""
            while True:
                data = handle.read(BLOCK_ROWS * _JSON_ROW_BYTES)
                piece = tail + data
                if not piece:
                    return
                cut = piece.rfind(b"\n") + 1 if data else len(piece)
                if not cut:
                    tail = piece
                    continue
                chunk, tail = piece[:cut], piece[cut:]
                if first:
                    chunk = chunk.removeprefix(bom)
                    first = False
                if chunk.startswith(bom):
                    raise SlowPath  # a second one: not whitespace to the row reader
                yield chunk, handle.tell() - len(tail)

    def parsed(chunk: bytes) -> Any:
        if _SURROGATE.search(chunk) or _TWO_ON_A_LINE.search(chunk):
            raise SlowPath
        try:
            table = pajson.read_json(
                pa.py_buffer(chunk),
                read_options=pajson.ReadOptions(block_size=1 << 20),
                memory_pool=pa.system_memory_pool(),
            )
        except Exception:
            raise SlowPath from None  # the row reader names the line
        lines = chunk.count(b"\n") + (not chunk.endswith(b"\n"))
        # fewer rows than lines: blank lines (no row to either), or not
        if table.num_rows != lines and table.num_rows != sum(
            1 for line in chunk.split(b"\n") if line.strip()
        ):
            raise SlowPath
        return table

    # the next piece parsed by Arrow (the GIL released) while this one is folded in
    with ThreadPoolExecutor(1) as parser:
        pending: tuple[Any, int] | None = None
        for chunk, end in itertools.chain(pieces(), [(b"", 0)]):
            following = (parser.submit(parsed, chunk), end) if chunk else None
            if pending is not None:
                table = pending[0].result()
                yield _arrow_columns(table, keys), table.num_rows
                advance(path, pending[1])
            pending = following


def _arrow_columns(table: Any, keys: Sequence[str]) -> dict[str, Any]:
    """A block's columns as :class:`Factorized`, or SlowPath (see _arrow_jsonl_blocks)."""
    import numpy as np
    import pyarrow as pa

    if len({n.casefold() for n in table.column_names}) < table.num_columns:
        raise SlowPath  # two keys of one name but for case: the row reader refuses them
    columns: dict[str, Any] = {}
    for name in keys:
        if name not in table.column_names:
            continue
        column = table.column(name)
        if pa.types.is_null(column.type):  # null in every row of the block
            columns[name] = Factorized(np.zeros(table.num_rows, dtype=np.intp), [None])
            continue
        floating = pa.types.is_floating(column.type)
        if floating and name in _AS_TEXT and _has_integral(column):
            raise SlowPath
        factorized = arrow_factorized(column)
        if factorized is None:
            raise SlowPath
        columns[name] = factorized
    return columns


def _has_integral(column: Any) -> bool:
    """Whether a float column holds a whole number (or an infinity)."""
    import numpy as np

    values = column.to_numpy(zero_copy_only=False)
    values = values[~np.isnan(values)]
    return bool((values == np.trunc(values)).any())


# a UTF-16 surrogate encoded as UTF-8 (bytes.decode("utf-8") refuses it)
_SURROGATE = re.compile(b"\xed[\xa0-\xbf]")


def _csv_blocks(
    path: Path,
    keys: Sequence[str] = _KEYS,
    required: Sequence[str] = ("run", "case", "passed"),
    *,
    delimiter: str | None = None,
    exact_names: bool = False,
) -> Iterator[tuple[dict[str, Any], int]]:
    """Blocks of a CSV table: ({key: one value per row}, rows) for the `keys` the header
    names. The delimiter is sniffed from the header unless given; names are compared
    stripped and lowercased unless `exact_names`."""
    import csv

    with open(path, encoding="utf-8-sig", newline="") as handle:
        header_line = handle.readline()
    if delimiter is None:
        delimiter = max(",;\t", key=header_line.split("\n", 1)[0].count)
    fields = next(csv.reader(io.StringIO(header_line), delimiter=delimiter), [])
    names = list(fields) if exact_names else [f.strip().lower() for f in fields]
    twice = len({f.strip().casefold() for f in fields}) < len(fields)  # the row reader refuses
    if twice or len(set(names)) < len(names) or not set(required) <= set(names):
        raise SlowPath  # the row reader says what is wrong with the header
    if _has_pyarrow():
        yield from _arrow_csv_blocks(path, fields, names, keys, delimiter)
        return
    import pandas as pd

    from gatecal.readers._progress import advance

    options: dict[str, Any] = {
        "sep": delimiter,
        "dtype": object,
        "keep_default_na": False,
        "na_filter": False,
        "skip_blank_lines": True,
        "index_col": False,
        "encoding": "utf-8-sig",
        "chunksize": BLOCK_ROWS,
        "engine": "c",
    }
    try:
        with open(path, "rb") as raw, pd.read_csv(raw, **options) as reader:
            while True:
                with warnings.catch_warnings():  # rows longer than the header, say
                    warnings.simplefilter("error", pd.errors.ParserWarning)
                    chunk = next(reader, None)
                if chunk is None:
                    return
                if list(chunk.columns) != fields:
                    raise SlowPath
                columns = {
                    name: chunk.iloc[:, i].to_numpy(dtype=object)
                    for i, name in enumerate(names)
                    if name in keys
                }
                yield columns, len(chunk)
                advance(path, raw.tell())
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.ParserWarning):
        raise SlowPath from None


#: bytes of CSV in one piece Arrow parses, per row of BLOCK_ROWS: a long table's row is
#: about 60 bytes, so a piece holds about 4 x BLOCK_ROWS rows (each piece's distinct
#: values are normalised once: fewer, bigger pieces do less of that, and its columns are
#: codes, a few bytes a row)
_ROW_BYTES = 64
#: bytes Arrow reads at a time from a file with quotes (read ahead: up to 32 of them)
_STREAM_BYTES = 1 << 20


def _arrow_csv_blocks(
    path: Path, fields: list[str], names: list[str], keys: Sequence[str], delimiter: str
) -> Iterator[tuple[dict[str, Any], int]]:
    """Blocks of a CSV table parsed by Arrow, each column dictionary-encoded as it is
    parsed: rows split as the csv module splits them (quotes, doubled quotes, newlines
    in quotes, CR, LF or CR LF; empty lines no row), every cell a string. A row of
    another length than the header, or text that is not UTF-8, is an error here (the
    row reader decides), and so is a line of spaces (one cell where the header has at
    least three)."""
    import pyarrow as pa

    wanted = [(i, name) for i, name in enumerate(names) if name in keys]
    try:
        for part in _arrow_csv_parts(path, fields, delimiter):
            if part.schema.names != fields:
                raise SlowPath  # Arrow read another header than the csv module
            if part.num_rows:
                columns = {name: _dictionary_factorized(part.column(i)) for i, name in wanted}
                yield columns, part.num_rows
    except (pa.ArrowException, ValueError, UnicodeDecodeError):
        raise SlowPath from None


def _arrow_csv_parts(path: Path, fields: list[str], delimiter: str) -> Iterator[Any]:
    """Arrow's record batches of a CSV table (see :func:`_arrow_csv_blocks`), the bytes
    read reported after each. The file is cut into pieces of whole lines, each parsed on
    its own, while no piece holds a quote (a line end is then a row end); from a piece
    with a quote on, Arrow reads the rest as one stream (its line ends may be inside
    quoted cells)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from gatecal.readers._progress import advance

    size = BLOCK_ROWS * _ROW_BYTES
    parse = pacsv.ParseOptions(
        delimiter=delimiter,
        quote_char='"',
        double_quote=True,
        escape_char=False,
        newlines_in_values=True,
        ignore_empty_lines=True,
    )
    convert = pacsv.ConvertOptions(
        column_types=dict.fromkeys(fields, pa.dictionary(pa.int32(), pa.string())),
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )

    # each piece is freed once its block is folded in: malloc's pool gives that back for
    # the next piece to take (Arrow's default pool kept it, some 25 MB more at the peak)
    pool = pa.system_memory_pool()

    def read(first: bool, size: int = size) -> Any:  # the header in the data, or the names
        return pacsv.ReadOptions(block_size=size, column_names=None if first else fields)

    def parsed(piece: bytes, cut: int, first: bool) -> Any:
        return pacsv.read_csv(
            pa.py_buffer(memoryview(piece)[:cut]), read_options=read(first),
            parse_options=parse, convert_options=convert, memory_pool=pool,
        )  # fmt: skip

    # the next piece parsed by Arrow (the GIL released) while this one's block is folded
    with open(path, "rb") as raw, ThreadPoolExecutor(1) as parser:
        first, tail = True, b""
        pending: tuple[Any, int] | None = None  # (the parse of a piece, where it ends)

        def done() -> Iterator[Any]:
            if pending is not None:
                yield from pending[0].result().to_batches()
                advance(path, pending[1])

        while True:
            data = raw.read(size)
            piece = tail + data
            if b'"' in piece:  # the rest as one stream
                start = raw.tell() - len(piece)
                yield from done()
                raw.seek(start)
                stream = pacsv.open_csv(
                    raw,
                    read_options=read(first, _STREAM_BYTES),
                    parse_options=parse,
                    convert_options=convert,
                    memory_pool=pool,
                )
                for part in stream:
                    yield part
                    advance(path, raw.tell())
                return
            if not piece:
                yield from done()
                return
            cut = len(piece)  # at the end: all of it
            if data:  # else whole lines (a CR LF cut in two: an empty line after)
                cut = max(piece.rfind(b"\n"), piece.rfind(b"\r")) + 1
                if not cut:
                    tail = piece
                    continue
            tail = piece[cut:]
            parse_next = parser.submit(parsed, piece, cut, first)
            first = False
            yield from done()
            pending = (parse_next, raw.tell() - len(tail))


def _dictionary_factorized(column: Any) -> Factorized:
    """A dictionary-encoded Arrow array as :class:`Factorized`: its distinct values in
    order of first appearance, and the codes into them. (Arrow's CSV encoding numbers
    the values as they first appear; a dictionary unified from several is renumbered
    here if need be; a value twice goes to the row reader.)"""
    import numpy as np

    codes = _indices(column.indices)  # (no cell is null when strings cannot be)
    # numbered in order of first appearance, every value used: each code at most one
    # more than every code before it, the last value's code reached (as Arrow numbers)
    top = np.maximum.accumulate(codes)
    size = len(column.dictionary)
    dictionary = column.dictionary.to_pylist()
    if not len(codes):
        dictionary = []
    elif top[0] != 0 or top[-1] != size - 1 or (np.diff(top) > 1).any():
        used, first = np.unique(codes, return_index=True)
        used = used[np.argsort(first, kind="stable")]  # in order of first appearance
        lookup = np.zeros(size, dtype=np.intp)
        lookup[used] = np.arange(len(used))
        codes = lookup[codes]
        dictionary = [dictionary[i] for i in used.tolist()]
    if len(set(dictionary)) != len(dictionary):
        raise SlowPath
    return Factorized(codes, dictionary)


def _has_pyarrow() -> bool:
    """Whether pyarrow is installed (the Parquet extra): CSV blocks are then parsed by
    Arrow, each column dictionary-encoded (else by pandas, into Python strings)."""
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def read_table_blocks(path: Path, build: str, fmt: str) -> Batch:
    """Read one big long table in blocks (``fmt`` csv or jsonl); SlowPath when the row
    reader must decide."""

    if fmt == "csv" and not _has_pyarrow() and _has_blank_looking_rows(path):
        raise SlowPath  # (Arrow refuses such a line: see _arrow_csv_blocks)
    if fmt == "jsonl" and _has_pyarrow():
        try:
            return _fold(path, build, fmt, _arrow_jsonl_blocks(path))
        except SlowPath:
            pass  # json.loads a block at a time decides (or leaves it to the row reader)
    return _fold(path, build, fmt, _csv_blocks(path) if fmt == "csv" else _jsonl_blocks(path))


def _fold(path: Path, build: str, fmt: str, blocks: Iterator[tuple[dict[str, Any], int]]) -> Batch:
    """A table's blocks folded into one batch (:func:`_block` each)."""
    from gatecal.readers.table import cells

    batch = Batch()
    runs: dict[str, None] = {}
    memos: dict[str, dict[type, dict[Any, Any]]] = {}
    n_verdicts = n_errors = 0
    for columns, n in blocks:
        added, errors = _block(columns, n, path, build, batch, runs, fmt == "csv", memos)
        n_verdicts += added
        n_errors += errors
    batch.files.append(cells.long_table_read(path, fmt, build, runs, batch, n_verdicts, n_errors))
    return batch


#: bytes read at a time when looking for blank-looking lines
_SCAN_BYTES = 1 << 24
#: a line of ASCII whitespace only, other than an empty line or a lone CR before its LF
_BLANK_LOOKING = re.compile(rb"(?m)^(?:[ \t\x0b\x0c][ \t\r\x0b\x0c]*|\r[ \t\r\x0b\x0c]+)$")
#: spaces only between line ends where one is a CR (CR too ends a line to both parsers):
#: after a CR, up to a line end; after an LF (or where the text starts), up to a CR. Three
#: patterns, each but the last starting with a plain byte, which re finds fast.
_SPACES_AFTER_CR = re.compile(rb"\r[ \t\x0b\x0c]+(?![^\r\n])")
_SPACES_BEFORE_CR = re.compile(rb"\n[ \t\x0b\x0c]+\r")
_SPACES_FIRST = re.compile(rb"[ \t\x0b\x0c]+\r")


def _spaces_between_line_ends(data: bytes, end: int) -> bool:
    """Whether `data` (from a line's start, up to `end`) has spaces only between two line
    ends where one is a CR (a row, ``r1,a,true``, CR, three spaces, LF: the spaces are a
    row to the csv module, none to pandas)."""
    return bool(
        _SPACES_AFTER_CR.search(data, 0, end)
        or _SPACES_BEFORE_CR.search(data, 0, end)
        or _SPACES_FIRST.match(data, 0, end)
    )


def _has_blank_looking_rows(path: Path) -> bool:
    """A line of spaces only (or a lone carriage return), or spaces between a CR and a
    line end, is a row to the csv module and no row to pandas: such a file is read row
    by row. (An empty line is no row to
    either.) Searched 16 MiB at a time, whole lines only."""
    with open(path, "rb") as handle:
        tail = b""
        while chunk := handle.read(_SCAN_BYTES):
            data = tail + chunk
            cut = data.rfind(b"\n") + 1
            if _BLANK_LOOKING.search(data, 0, cut) or _spaces_between_line_ends(data, cut):
                return True
            tail = data[cut:]
    # the last line, with no newline after it
    return bool(tail) and (not tail.strip() or _spaces_between_line_ends(tail, len(tail)))
