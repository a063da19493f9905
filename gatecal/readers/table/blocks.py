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
from gatecal.readers.table.columns import (
    _KEYS,
    Factorized,
    SlowPath,
    _block,
    _indices,
    arrow_factorized,
)

__all__ = [
    "BLOCK_ROWS",
    "STREAM_MIN_BYTES",
    "SlowPath",
    "csv_blocks",
    "has_blank_looking_rows",
    "has_pyarrow",
    "jsonl_blocks",
    "read_table_blocks",
]

#: files from this size on are read in blocks (smaller ones row by row, as always)
STREAM_MIN_BYTES = 1 << 20
#: rows per block: bounds the memory a block takes (about 1 KB a row at most)
BLOCK_ROWS = 50_000


def jsonl_blocks(
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


def csv_blocks(
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
    if has_pyarrow():
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


def has_pyarrow() -> bool:
    """Whether pyarrow is installed (the Parquet extra): CSV blocks are then parsed by
    Arrow, each column dictionary-encoded (else by pandas, into Python strings)."""
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def read_table_blocks(path: Path, build: str, fmt: str) -> Batch:
    """Read one big long table in blocks (``fmt`` csv or jsonl); SlowPath when the row
    reader must decide."""

    if fmt == "csv" and not has_pyarrow() and has_blank_looking_rows(path):
        raise SlowPath  # (Arrow refuses such a line: see _arrow_csv_blocks)
    if fmt == "jsonl" and has_pyarrow():
        try:
            return _fold(path, build, fmt, _arrow_jsonl_blocks(path))
        except SlowPath:
            pass  # json.loads a block at a time decides (or leaves it to the row reader)
    return _fold(path, build, fmt, csv_blocks(path) if fmt == "csv" else jsonl_blocks(path))


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


def has_blank_looking_rows(path: Path) -> bool:
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
