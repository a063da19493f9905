"""gatecal record: idempotent by content, one transaction, and one line for a bad store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gatecal.cli import main
from tests.store.nightly import CASES, current_runs, nightly


def _record(store: str, *files: Path, build: str = "b1", extra: tuple[str, ...] = ()) -> int:
    args = ["record", *map(str, files), "--store", store, "--build", build, "--judge", "j"]
    return main([*args, "--known-good", *extra])


def _verdicts(store: Path) -> int:
    with sqlite3.connect(store) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()[0])


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_recording_a_file_twice_adds_nothing(tmp_path, capsys):
    store = tmp_path / "h.db"
    files = nightly(tmp_path / "n", count=3)
    assert _record(str(store), *files) == 0
    assert _verdicts(store) == 3 * len(CASES)
    assert _record(str(store), *files, build="b2") == 0  # a retried job, another build id
    assert "nothing new" in capsys.readouterr().out
    assert _verdicts(store) == 3 * len(CASES)
    # one new file among recorded ones: only its verdicts are added
    more = nightly(tmp_path / "n", count=1, start=3)
    assert _record(str(store), *files, *more, build="b3") == 0
    assert _verdicts(store) == 4 * len(CASES)


def test_recording_twice_on_postgresql_adds_nothing(tmp_path, pg_store, capsys):
    import psycopg

    files = nightly(tmp_path / "n", count=2)
    assert _record(pg_store, *files) == 0
    assert _record(pg_store, *files) == 0
    with psycopg.connect(pg_store) as conn:
        count = conn.execute("SELECT COUNT(*) FROM verdicts").fetchone()
    assert count is not None and count[0] == 2 * len(CASES)


def test_the_verdicts_table_keeps_every_column_of_the_long_table(tmp_path):
    """The store's verdict columns are the long table's (a run, its build and its file as
    ids): a column added to the long table and not to the schema fails here."""
    from gatecal.store._record import VERDICT_COLUMNS

    store = tmp_path / "h.db"
    assert _record(str(store), *nightly(tmp_path / "n", count=1)) == 0
    with sqlite3.connect(store) as conn:
        columns = tuple(row[1] for row in conn.execute("PRAGMA table_info(verdicts)"))
    assert columns == VERDICT_COLUMNS
    assert VERDICT_COLUMNS[5:] == (
        "kind", "passed", "status", "score", "session", "attempts", "cached", "cost", "tokens",
    )  # fmt: skip


def test_the_same_bytes_as_another_run_are_recorded(tmp_path):
    """The key is the content and the runs read from it: a JUnit file's run comes from
    its name, so equal bytes under another name are another run."""
    junit = (
        '<testsuite name="s" tests="2"><testcase classname="m" name="test_a"/>'
        '<testcase classname="m" name="test_b"/></testsuite>'
    )
    first, second = tmp_path / "a" / "night-1.xml", tmp_path / "b" / "night-2.xml"
    for path in (first, second):
        path.parent.mkdir()
        path.write_text(junit, encoding="utf-8")
    store = tmp_path / "h.db"
    assert _record(str(store), first, build="1") == 0
    assert _record(str(store), second, build="2") == 0
    assert _verdicts(store) == 4


def test_a_failed_record_writes_nothing(tmp_path, capsys):
    store = tmp_path / "h.db"
    files = nightly(tmp_path / "n", count=2)
    assert _record(str(store), files[0]) == 0
    before = _verdicts(store)
    # the second file is new, but its run is in build b1 already (under other content)
    files[1].write_text(files[0].read_text().replace('"passed": true', '"passed": false', 1))
    capsys.readouterr()
    assert _record(str(store), files[1]) == 2
    assert "already" in _error(capsys)
    assert _verdicts(store) == before


def test_a_store_from_a_newer_schema_is_refused(tmp_path, capsys):
    store = tmp_path / "h.db"
    files = nightly(tmp_path / "n", count=2)
    assert _record(str(store), files[0]) == 0
    with sqlite3.connect(store) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, '2031-01-01T00:00:00Z')")
    capsys.readouterr()
    assert _record(str(store), files[1], build="b2") == 2
    assert "newer" in _error(capsys)
    assert main(["check", str(files[1]), "--store", str(store)]) == 2
    assert "schema version 99" in _error(capsys)
    assert _verdicts(store) == len(CASES)


def test_a_locked_store_is_one_line(tmp_path, capsys):
    store = tmp_path / "h.db"
    files = nightly(tmp_path / "n", count=2)
    assert _record(str(store), files[0]) == 0
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        capsys.readouterr()
        assert _record(str(store), files[1], build="b2", extra=("--wait", "0.2")) == 2
        assert "locked" in _error(capsys)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _verdicts(store) == len(CASES)


@pytest.mark.parametrize(
    ("store", "says"),
    [
        ("postgresql://ci:s3cret-pw@127.0.0.1:1/history", "could not connect"),
        ("postgresql://ci:s3cret-pw@[::1/history", "could not connect"),
        ("mysql://ci:s3cret-pw@db/history", "postgresql:// URL"),
        ("no-such-folder/history.db", "no such"),
    ],
)
def test_an_unreachable_or_wrong_store_is_one_line(tmp_path, capsys, store, says):
    pytest.importorskip("psycopg")
    current = current_runs(tmp_path / "ci")["clean"]
    for args in (
        ["check", str(current), "--store", store, "--judge", "j"],
        ["recommend", "--store", store],
        ["history", "--store", store],
        ["record", str(current), "--store", store, "--build", "1", "--judge", "j"],
    ):
        capsys.readouterr()
        assert main(args) == 2, args
        err = _error(capsys)
        assert err.startswith("gatecal: error: --store ") and says in err, err
        assert "s3cret-pw" not in err


def test_a_missing_file_store_is_not_created_by_a_reader(tmp_path, capsys):
    current = current_runs(tmp_path / "ci")["clean"]
    store = tmp_path / "history.db"
    assert main(["check", str(current), "--store", str(store)]) == 2
    assert "no such store" in _error(capsys)
    assert not store.exists()


def test_selection_options_need_a_store(tmp_path, capsys):
    files = nightly(tmp_path / "n", count=2)
    current = current_runs(tmp_path / "ci")["clean"]
    code = main(["check", str(current), "--baseline", *map(str, files), "--judge", "j"])
    assert code == 2
    assert "--judge needs --store" in _error(capsys)


def test_check_record_appends_the_current_run_after_deciding(tmp_path, capsys):
    store = tmp_path / "h.db"
    files = nightly(tmp_path / "n", count=10)
    assert _record(str(store), *files) == 0
    current = current_runs(tmp_path / "ci")["new-one"]
    args = ["check", str(current), "--store", str(store), "--record", "--build", "pr-7"]
    capsys.readouterr()
    assert main([*args, "--judge", "j"]) in (0, 1)  # decided (pass or fail), then recorded
    assert "recorded 1 run(s)" in capsys.readouterr().err
    assert _verdicts(store) == 11 * len(CASES)
    # not as known-good: the baseline is the nightly runs still
    with sqlite3.connect(store) as conn:
        (known,) = conn.execute("SELECT known_good FROM recordings WHERE build = 'pr-7'")
    assert known == (0,)
    assert main(["check", str(current), "--store", str(store), "--record"]) == 2
    assert "--record needs --build" in _error(capsys)
