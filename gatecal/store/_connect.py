"""Where a store lives and how it is opened: a SQLite file, or a PostgreSQL URL.

The embedded default is SQLite from the standard library: no server and no new
dependency, one file a CI cache or artifact keeps, and transactions that let parallel
jobs append at once (write-ahead log; a writer waits for the lock up to `wait` seconds,
then gives up with one line). A team's shared store is PostgreSQL, through psycopg (the
``store`` extra), imported only when a ``postgresql://`` URL is given.

Rules: a URL's password never appears in a message (:func:`masked`); every error is a
:class:`StoreError` of one line; a store is created only by a writer (``create``), so a
mistyped path to read from is an error, not a new empty file; a store of a newer schema
is refused before anything is read or written.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from gatecal.store._schema import SCHEMA_VERSION, migration

__all__ = ["Connection", "StoreError", "masked", "open_store"]

_URL_SCHEMES = ("postgresql", "postgres")
#: Seconds to wait for a PostgreSQL server to answer (at most; --wait may be shorter).
CONNECT_TIMEOUT = 15
#: The lock PostgreSQL writers take while migrating (any number, the same everywhere).
_MIGRATION_LOCK = 0x6761_7465  # "gate"


class StoreError(ValueError):
    """A store that cannot be used: unreachable, wrong URL, newer schema, locked; one line."""


def masked(location: str) -> str:
    """`location` with any password replaced by ``***`` (URL userinfo or a query field)."""
    if "://" not in location:
        return location
    try:
        parts = urlsplit(location)
        netloc = parts.netloc
        if parts.password is not None:
            user, _, host = netloc.rpartition("@")
            name = user.split(":", 1)[0]
            netloc = f"{name}:***@{host}"
        query = re.sub(r"(?i)(password=)[^&]*", r"\1***", parts.query)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:
        return re.sub(r"//[^@/]*@", "//***@", location)


def _scrub(text: str, location: str) -> str:
    """`text` on one line, without the password of `location` anywhere in it."""
    line = " ".join(str(text).split())
    try:
        secrets = [urlsplit(location).password or ""]
    except ValueError:
        secrets = []
    secrets += re.findall(r"(?i)password=([^&\s]+)", location)
    secrets += re.findall(r"://[^:/@]*:([^@]*)@", location)  # even in a URL that won't parse
    for secret in secrets:
        if secret:
            line = line.replace(secret, "***").replace(unquote(secret), "***")
    return line


@dataclass(slots=True)
class Connection:
    """An open store: run statements (``?`` placeholders in either dialect) in
    transactions. `where` is the location as it may be shown (password masked)."""

    dialect: str
    where: str
    raw: Any
    location: str

    def _sql(self, sql: str) -> str:
        return sql if self.dialect == "sqlite" else sql.replace("?", "%s")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement; its rows (an empty list when it returns none)."""
        cursor = self.raw.cursor()
        try:
            cursor.execute(self._sql(sql), tuple(params))
            return list(cursor.fetchall()) if cursor.description else []
        finally:
            cursor.close()

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each row."""
        cursor = self.raw.cursor()
        try:
            cursor.executemany(self._sql(sql), rows)
        finally:
            cursor.close()

    def copy_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        """Append `rows` to `table`: PostgreSQL's COPY, else one INSERT per row."""
        if self.dialect == "sqlite":
            marks = ", ".join("?" * len(columns))
            self.many(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
            return
        cursor = self.raw.cursor()
        try:
            with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        finally:
            cursor.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One transaction: all of it lands, or (on any error) none of it."""
        with self.errors("write"):
            if self.dialect == "sqlite":
                self.raw.execute("BEGIN IMMEDIATE")  # take the write lock now (or wait)
                try:
                    yield self
                except BaseException:
                    self.raw.rollback()
                    raise
                self.raw.commit()
            else:
                with self.raw.transaction():
                    yield self

    @contextlib.contextmanager
    def errors(self, doing: str) -> Iterator[None]:
        """The driver's errors as one :class:`StoreError` line naming the store."""
        try:
            yield
        except StoreError:
            raise
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreError(
                    f"{self.where}: the store is locked by another writer "
                    "(waited for it and gave up; try again, or raise --wait)"
                ) from None
            raise StoreError(f"{self.where}: could not {doing} ({_scrub(str(exc), '')})") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.where}: not a gatecal store ({exc})") from None
        except Exception as exc:
            if type(exc).__module__.split(".")[0] != "psycopg":
                raise
            raise StoreError(
                f"{self.where}: could not {doing} ({_scrub(str(exc), self.location)})"
            ) from None

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.raw.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_url(location: str) -> bool:
    return "://" in location or location.split(":", 1)[0].lower() in _URL_SCHEMES


def open_store(location: str, *, create: bool = False, wait: float = 60.0) -> Connection:
    """Open the store at `location`, migrated to :data:`SCHEMA_VERSION` when `create`.

    Parameters
    ----------
    location : str
        A file path (SQLite, the embedded default) or a ``postgresql://`` URL.
    create : bool, default False
        A writer's open: make the file (or the tables) if absent and apply any pending
        migration. A reader's open refuses a missing file and an empty database.
    wait : float, default 60
        Seconds a writer waits for another writer's lock (and for a server to answer, at
        most 15).

    Raises
    ------
    StoreError
        One line naming the store (password masked): a wrong URL, an unreachable server,
        a missing file, a file that is not a store, a store of a newer schema, a lock held
        longer than `wait`.
    """
    if _is_url(location):
        scheme = location.split(":", 1)[0].lower()
        if scheme not in _URL_SCHEMES:
            raise StoreError(
                f"{masked(location)}: a store is a file path or a postgresql:// URL "
                f"(got the scheme {scheme!r})"
            )
        conn = _open_postgres(location, wait)
    else:
        conn = _open_sqlite(location, create=create, wait=wait)
    try:
        _migrate(conn, create=create)
    except BaseException:
        conn.close()
        raise
    return conn


def _open_sqlite(location: str, *, create: bool, wait: float) -> Connection:
    path = Path(location)
    if not create and not path.is_file():
        what = "not a file" if path.exists() else "no such store"
        raise StoreError(f"{location}: {what} (record runs into it first: gatecal record)")
    if create and path.exists() and not path.is_file():
        raise StoreError(f"{location}: not a regular file (a store is one SQLite file)")
    if create and not path.parent.is_dir():
        raise StoreError(f"{location}: no such directory ({path.parent})")
    mode = "rwc" if create else "rw"
    try:
        raw = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode={mode}",
            uri=True,
            timeout=wait,
            isolation_level=None,  # transactions are begun explicitly
            check_same_thread=False,
        )
    except sqlite3.Error as exc:
        raise StoreError(f"{location}: could not open the store ({exc})") from None
    conn = Connection("sqlite", location, raw, location)
    with conn.errors("open the store"):
        raw.execute("PRAGMA foreign_keys = ON")
        if create:  # readers never change the file's mode
            mode_now = raw.execute("PRAGMA journal_mode").fetchone()[0]
            if mode_now != "wal":
                raw.execute("PRAGMA journal_mode = WAL")
    return conn


def _open_postgres(location: str, wait: float) -> Connection:
    where = masked(location)
    try:
        import psycopg
    except ImportError:
        raise StoreError(
            f"{where}: a PostgreSQL store needs psycopg: pip install 'psycopg[binary]' "
            "(gatecal's extra 'store')"
        ) from None
    try:
        # a server that does not answer is given at most CONNECT_TIMEOUT seconds
        timeout = max(1, int(min(wait, CONNECT_TIMEOUT)))
        raw = psycopg.connect(location, connect_timeout=timeout, autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"{where}: could not connect ({_scrub(str(exc), location)})") from None
    except Exception as exc:  # a malformed URL (psycopg's own parser)
        raise StoreError(f"{where}: not a usable URL ({_scrub(str(exc), location)})") from None
    return Connection("postgresql", where, raw, location)


def _versions(conn: Connection) -> int | None:
    """The store's schema version; None when it has no schema_version table."""
    if conn.dialect == "sqlite":
        found = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        )
    else:
        found = conn.execute("SELECT to_regclass('schema_version')::text")
        found = [row for row in found if row[0]]
    if not found:
        return None
    rows = conn.execute("SELECT MAX(version) FROM schema_version")
    return int(rows[0][0]) if rows and rows[0][0] is not None else 0


def _check_version(conn: Connection, version: int | None, create: bool) -> None:
    if version is None and not create:
        raise StoreError(f"{conn.where}: not a gatecal store (no schema_version table)")
    if version is not None and version > SCHEMA_VERSION:
        raise StoreError(
            f"{conn.where}: the store has schema version {version}, newer than this gatecal "
            f"reads ({SCHEMA_VERSION}): upgrade gatecal"
        )
    if version is not None and version < SCHEMA_VERSION and not create:
        raise StoreError(
            f"{conn.where}: the store has schema version {version}; gatecal record "
            f"migrates it to {SCHEMA_VERSION}"
        )


def _migrate(conn: Connection, *, create: bool) -> None:
    """Check the schema version; a writer applies the pending steps in one transaction."""
    with conn.errors("read the store"):
        version = _versions(conn)
    _check_version(conn, version, create)
    if version == SCHEMA_VERSION:
        return
    if conn.dialect == "postgresql":
        # writers migrate one at a time: a session lock taken before the transaction
        # begins, so the transaction sees the tables another writer has just made
        with conn.errors("lock the store"):
            conn.execute("SELECT pg_advisory_lock(?)", (_MIGRATION_LOCK,))
    try:
        _apply(conn, create)
    finally:
        if conn.dialect == "postgresql":
            with conn.errors("unlock the store"):
                conn.execute("SELECT pg_advisory_unlock(?)", (_MIGRATION_LOCK,))


def _apply(conn: Connection, create: bool) -> None:
    """The pending migration steps, in one transaction."""
    from datetime import UTC, datetime

    with conn.transaction():
        version = _versions(conn)  # again, under the lock: another writer may have done it
        _check_version(conn, version, create)
        if version is None:
            conn.execute(
                "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT "
                "NOT NULL)"
            )
            version = 0
        now = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        for step in range(version + 1, SCHEMA_VERSION + 1):
            for statement in migration(step, conn.dialect):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version VALUES (?, ?)", (step, now))
