"""The run history: verdicts recorded to a store (a SQLite file or PostgreSQL), read back
as the readers' RunsData. An input/output layer beside the readers: it feeds the
analyses, and imports nothing above it."""

from gatecal.store._connect import StoreError, masked, open_store
from gatecal.store._record import Recorded, record_runs
from gatecal.store._schema import SCHEMA_VERSION
from gatecal.store._select import (
    DEFAULT_LATEST,
    RunRecord,
    Selection,
    StoredRuns,
    latest_run,
    parse_time,
    stored_runs,
)

__all__ = [
    "DEFAULT_LATEST",
    "SCHEMA_VERSION",
    "Recorded",
    "RunRecord",
    "Selection",
    "StoreError",
    "StoredRuns",
    "latest_run",
    "masked",
    "open_store",
    "parse_time",
    "record_runs",
    "stored_runs",
]
