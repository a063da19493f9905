"""Stored runs as Parquet: the long table, and what the store knows of each run."""

from __future__ import annotations

import io
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gatecal.store._select import StoredRuns

__all__ = ["HISTORY_COLUMNS", "export_parquet"]

#: The columns added after the long table's: each row's run as the store knows it.
HISTORY_COLUMNS = ("ci_build", "branch", "judge", "known_good", "recorded_at")


def export_parquet(stored: StoredRuns) -> bytes:
    """`stored` as Parquet bytes: the long table ``gatecal runs --format parquet`` writes
    (``build`` is ``healthy``), then ``ci_build``, ``branch``, ``judge``, ``known_good``
    and ``recorded_at`` (a UTC timestamp). DuckDB, pandas or any warehouse reads it:
    ``SELECT judge, "case", avg(NOT passed) FROM 'history.parquet' GROUP BY ALL``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from gatecal.readers.table.parquet import write_parquet

    table = pq.read_table(io.BytesIO(write_parquet(stored.data)))
    by_run = {r.run: r for r in stored.runs}
    runs = table.column("run").to_pylist()
    records = [by_run[run] for run in runs]
    added = {
        "ci_build": pa.array([r.build for r in records], type=pa.string()),
        "branch": pa.array([r.branch for r in records], type=pa.string()),
        "judge": pa.array([r.judge for r in records], type=pa.string()),
        "known_good": pa.array([r.known_good for r in records], type=pa.bool_()),
        "recorded_at": pa.array(
            [datetime.fromisoformat(r.recorded_at.replace("Z", "+00:00")) for r in records],
            type=pa.timestamp("us", tz="UTC"),
        ),
    }
    for name in HISTORY_COLUMNS:
        table = table.append_column(name, added[name])
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()
