"""gatecal's long table as Parquet: read in row groups' batches, written with pyarrow.

Teams export eval results to warehouses and data lakes as Parquet. The columns are the
long table's (``gatecal runs --format csv`` writes the same ones); ``passed`` and
``cached`` may be booleans or the table's text values, numbers may be numbers or text.
Reading goes a batch of rows at a time (bounded memory however long the file), each
column's distinct values checked once, as for a big CSV; a batch the block path does not
decide for sure is read row by row with the long table's own rules, an error naming the
row. Needs ``pyarrow`` (``pip install pyarrow``, gatecal's extra ``parquet``).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gatecal.readers._base import Batch, Head, ReaderBase, ReadOptions, Source, each_source
from gatecal.readers._data import RunsData
from gatecal.readers._verdict import LONG_COLUMNS, RunsError

__all__ = ["MAGIC", "Parquet", "read_parquet", "write_parquet"]

MAGIC = b"PAR1"
_INSTALL = "pip install pyarrow (gatecal's extra 'parquet')"


def _pyarrow(what: str) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise RunsError(f"{what} needs pyarrow: {_INSTALL}") from None
    return pq


def read_parquet(path: Path, build: str) -> Batch:
    """Read one long table stored as Parquet."""
    from gatecal.readers._progress import advance
    from gatecal.readers.table import cells
    from gatecal.readers.table.blocks import BLOCK_ROWS
    from gatecal.readers.table.columns import _KEYS, SlowPath, _block, arrow_factorized
    from gatecal.readers.table.rows import rows_to_batch

    pq = _pyarrow(f"{path}: reading Parquet")
    try:
        # each column chunk streamed through a 1 MiB buffer, not a row group read whole
        handle = pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
        fields = [f.strip().lower() for f in handle.schema_arrow.names]
    except Exception as exc:  # pyarrow's own errors: not a Parquet file, truncated, ...
        raise RunsError(f"{path}: not a readable Parquet file ({exc})") from None
    twice = cells.duplicate_columns(handle.schema_arrow.names)
    if twice:
        raise RunsError(f"{path}: {twice}")
    missing = [k for k in ("run", "case", "passed") if k not in fields]
    if missing:
        raise RunsError(
            f"{path}: a runs table needs columns run, case, passed (missing {missing}; "
            f"found {fields[:8]})"
        )
    import pyarrow as pa

    # a list, struct or map where a name or verdict belongs: its text (``['b0']``) is no id
    for name, kind in zip(fields, handle.schema_arrow.types, strict=True):
        if name in _KEYS and pa.types.is_nested(kind):
            raise RunsError(
                f"{path}: column {name} must hold text, numbers or booleans, one per row "
                f"(got {kind})"
            )
    batch = Batch()
    runs: dict[str, None] = {}
    memos: dict[str, dict[type, dict[Any, Any]]] = {}
    n_verdicts = n_errors = 0
    row = 0
    try:
        for part in handle.iter_batches(batch_size=BLOCK_ROWS):
            wanted = [(i, name) for i, name in enumerate(fields) if name in _KEYS]
            columns: dict[str, Any] = {
                name: arrow_factorized(part.column(i)) or part.column(i).to_pylist()
                for i, name in wanted
            }
            n = part.num_rows
            try:
                added, errors = _block(columns, n, path, build, batch, runs, False, memos)
            except SlowPath:
                columns = {name: part.column(i).to_pylist() for i, name in wanted}
                rows = (
                    (f"{path}: row {row + i + 1}", {k: v[i] for k, v in columns.items()})
                    for i in range(n)
                )
                one = rows_to_batch(rows, path, build, "parquet")
                runs.update(dict.fromkeys(one.files[0].runs))
                added, errors = one.files[0].verdicts, one.files[0].errors
                one.files.clear()
                batch.extend(one)
            n_verdicts += added
            n_errors += errors
            row += n
            rows_in_file = handle.metadata.num_rows
            if rows_in_file:  # the share of the rows read, as bytes of the file
                advance(path, path.stat().st_size * row // rows_in_file)
    except RunsError:
        raise
    except Exception as exc:
        raise RunsError(f"{path}: not a readable Parquet file ({exc})") from None
    batch.files.append(
        cells.long_table_read(path, "parquet", build, runs, batch, n_verdicts, n_errors)
    )
    import pyarrow as pa

    pa.default_memory_pool().release_unused()  # the batches' buffers, kept for reuse
    return batch


class Parquet(ReaderBase):
    """The long table as Parquet, known by its signature and read in batches."""

    FORMAT = "parquet"
    MAGIC = b"PAR1"
    SUFFIXES = (".parquet",)

    @staticmethod
    def sniff(head: Head) -> bool:
        return False  # text is never Parquet: the signature decides

    @staticmethod
    def read(sources: Sequence[Source], build: str, options: ReadOptions) -> Batch:
        return each_source(sources, lambda s: read_parquet(s.path, build))


def write_parquet(data: RunsData) -> bytes:
    """The long table (verdicts, components, skips: :meth:`RunsData.to_rows`' rows) as
    Parquet bytes: text columns dictionary-encoded, ``passed`` and ``cached`` booleans,
    ``score``, ``cost`` and ``tokens`` numbers (null where a row has none)."""
    pq = _pyarrow("--format parquet")
    import pyarrow as pa

    table = data.verdicts
    extra = [*data.components]
    skips = data.skips
    columns = data.columns()
    arrays: dict[str, Any] = {}
    text = ("build", "run", "case", "check", "kind", "status", "session", "source")
    from gatecal._common.unicode import scrub  # a lone surrogate is written as U+FFFD

    for name in text:
        values = pa.array([scrub(v) for v in table.values(name)] or [""], type=pa.string())
        head = pa.DictionaryArray.from_arrays(pa.array(table.codes(name)), values)
        tail = [getattr(v, name) for v in extra]
        if name == "status":
            tail += ["skipped"] * len(skips)
        elif name in ("build", "run", "case", "session", "source"):
            tail += [getattr(s, name) for s in skips]
        else:
            tail += [""] * len(skips)
        tail = [scrub(v) for v in tail]
        arrays[name] = pa.concat_arrays([head.cast(pa.string()), pa.array(tail, type=pa.string())])
    passed = table.array("passed")
    arrays["passed"] = pa.concat_arrays(
        [
            pa.array(passed == 1, mask=passed < 0, type=pa.bool_()),
            pa.array([v.passed for v in extra] + [None] * len(skips), type=pa.bool_()),
        ]
    )

    def numbers(name: str, kind: Any, has: str | None) -> Any:
        values = table.array(name)
        mask = None if has is None else table.array(has) == 0
        head = pa.array(values, mask=mask, type=kind)
        rest: list[Any] = [getattr(v, name) for v in extra]
        rest += [1 if name == "attempts" else None] * len(skips)
        return pa.concat_arrays([head, pa.array(rest, type=kind)])

    arrays["score"] = numbers("score", pa.float64(), "has_score")
    arrays["attempts"] = numbers("attempts", pa.int64(), None)
    cached = table.array("cached").astype(bool)
    arrays["cached"] = pa.concat_arrays(
        [
            pa.array(cached, type=pa.bool_()),
            pa.array([v.cached for v in extra] + [False] * len(skips), type=pa.bool_()),
        ]
    )
    arrays["cost"] = numbers("cost", pa.float64(), "has_cost")
    arrays["tokens"] = numbers("tokens", pa.int64(), "has_tokens")
    order = [c for c in (*LONG_COLUMNS, "cost", "tokens") if c in columns]
    out = io.BytesIO()
    pq.write_table(pa.table({c: arrays[c] for c in order}), out, compression="zstd")
    return out.getvalue()
