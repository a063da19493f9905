"""The store's one schema, versioned: a list of migration steps applied in order.

Every store (a SQLite file or a PostgreSQL database) holds the same tables, so any SQL
tool reads either. ``schema_version`` holds one row per step applied; a store whose
highest version is above :data:`SCHEMA_VERSION` was written by a newer gatecal and is
refused, never rewritten. docs/reference/store.md documents every column.

Four tables, from the call down to the verdict:

- ``recordings``: one ``gatecal record`` (or ``check --record``) that added something:
  the CI build id, branch, judge (as the team names it), known-good flag and time.
- ``sources``: one file read by that call; ``content_key`` (the SHA-256 of the file's
  bytes and the runs read from it) is unique, so recording a file twice adds nothing.
- ``runs``: one run of a build; ``(build, run)`` is unique, so two calls cannot both
  claim a run.
- ``verdicts``: the long table's row, under its run and source, in the order read.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "migration"]

#: Each step: the statements that take the store from the previous version to this one.
#: ``{id}`` is the dialect's auto-numbered key, ``{real}`` its float type, ``{bigint}``
#: its 64-bit integer. A step is never edited once released; a change is a new step.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE recordings (
            id {id},
            build TEXT NOT NULL,
            branch TEXT NOT NULL,
            judge TEXT NOT NULL,
            known_good INTEGER NOT NULL,
            recorded_at TEXT NOT NULL,
            gatecal_version TEXT NOT NULL
        )""",
        """CREATE TABLE sources (
            id {id},
            recording_id {bigint} NOT NULL REFERENCES recordings (id),
            content_key TEXT NOT NULL UNIQUE,
            path TEXT NOT NULL,
            format TEXT NOT NULL,
            detail TEXT NOT NULL
        )""",
        """CREATE TABLE runs (
            id {id},
            recording_id {bigint} NOT NULL REFERENCES recordings (id),
            build TEXT NOT NULL,
            run TEXT NOT NULL,
            UNIQUE (build, run)
        )""",
        """CREATE TABLE verdicts (
            run_id {bigint} NOT NULL REFERENCES runs (id),
            source_id {bigint} NOT NULL REFERENCES sources (id),
            seq {bigint} NOT NULL,
            case_id TEXT NOT NULL,
            check_name TEXT NOT NULL,
            kind TEXT NOT NULL,
            passed INTEGER,
            status TEXT NOT NULL,
            score {real},
            session TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            cached INTEGER NOT NULL,
            cost {real},
            tokens {bigint}
        )""",
        "CREATE INDEX verdicts_by_run ON verdicts (run_id, seq)",
        "CREATE INDEX recordings_by_judge ON recordings (judge, known_good, recorded_at)",
        "CREATE INDEX runs_by_recording ON runs (recording_id)",
    ),
)

#: The version this gatecal writes and reads.
SCHEMA_VERSION = len(MIGRATIONS)

_DIALECTS = {
    "sqlite": {"id": "INTEGER PRIMARY KEY", "real": "REAL", "bigint": "INTEGER"},
    "postgresql": {"id": "BIGSERIAL PRIMARY KEY", "real": "DOUBLE PRECISION", "bigint": "BIGINT"},
}


def migration(step: int, dialect: str) -> list[str]:
    """The statements of migration `step` (1-based) in `dialect` (sqlite or postgresql)."""
    return [statement.format(**_DIALECTS[dialect]) for statement in MIGRATIONS[step - 1]]
