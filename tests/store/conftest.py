"""A real PostgreSQL server for the store's tests, started once per test session.

``initdb`` into a fresh directory and ``pg_ctl start`` on a free loopback port (trust
authentication, nothing persisted: fsync off), stopped at the end. PostgreSQL refuses to
run as root, so as root it runs as ``nobody``, owning its directory. The binaries are
PostgreSQL 15's (``initdb``, ``pg_ctl``, ``postgres`` on the PATH or in
/usr/lib/postgresql/*/bin); where there are none the PostgreSQL tests are skipped, saying so.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return versions[-1] if versions else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A ``postgresql://`` URL of a running server whose ``postgres`` database is empty."""
    pytest.importorskip("psycopg")
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("no PostgreSQL binaries (initdb, pg_ctl) on this machine")
    home = Path(tempfile.mkdtemp(prefix="gatecal-pg-"))
    prefix: list[str] = []
    if os.geteuid() == 0:  # postgres refuses root: run it as nobody, owning its folder
        shutil.chown(home, user="nobody")
        prefix = ["runuser", "-u", "nobody", "--"]
    data, port = home / "data", _free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run(
        [*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"], **run
    )
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(home / "log"), "-w",
         "start"],
        **run,
    )  # fmt: skip
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)  # fmt: skip
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def pg_store(postgres_url: str) -> Iterator[str]:
    """An empty database on the session's server, its URL (dropped afterwards)."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield postgres_url.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
