"""30 nightly runs recorded by 6 writers at once decide as the same files do."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

import gatecal
from gatecal.cli import main
from tests.store.nightly import CASES, current_runs, nightly


def _writer(store: str, files: list[str]) -> None:
    """One CI job: records its files one call at a time (a forked process: gatecal is
    imported already, so the test pays for the writes, not for six interpreters)."""
    import contextlib
    import io
    import os

    for f in files:
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["record", f, "--store", store, "--build", "nightly-" + Path(f).stem,
                         "--judge", "judge-a", "--known-good", "--branch", "main"])  # fmt: skip
        if code:
            os._exit(code)
    os._exit(0)


def _record_in_parallel(store: str, files: list[Path], writers: int = 6) -> None:
    fork = multiprocessing.get_context("fork")
    procs = [
        fork.Process(target=_writer, args=(store, [str(f) for f in files[w::writers]]))
        for w in range(writers)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=300)
        assert proc.exitcode == 0, proc.exitcode


def _decision(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    code = main(["check", *args, "--format", "json"])
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    # where the baseline's verdicts were read from differs by design; nothing else may
    for key in ("sources", "baseline_sources", "files"):
        document.pop(key, None)
    return code, document


def _same_decisions(tmp_path: Path, store: str, capsys: pytest.CaptureFixture[str]) -> None:
    files = nightly(tmp_path / "nightly")
    _record_in_parallel(store, files)
    stored = gatecal.stored_runs(store, gatecal.Selection(latest=None))
    assert len(stored.runs) == len(files) and len(stored.data.verdicts) == 30 * len(CASES)
    decisions = set()
    for name, current in current_runs(tmp_path / "ci").items():
        by_files = _decision(capsys, [str(current), "--baseline", *map(str, files)])
        by_store = _decision(capsys, [str(current), "--store", store, "--judge", "judge-a"])
        assert by_store == by_files, name
        decisions.add(by_store[1]["decision"])
    # the runs' decisions differ among themselves: the comparison is not of constants
    assert decisions == {"pass", "fail"}


def test_six_writers_on_a_file_store_decide_as_the_files(tmp_path, capsys):
    _same_decisions(tmp_path, str(tmp_path / "history.db"), capsys)


def test_six_writers_on_postgresql_decide_as_the_files(tmp_path, pg_store, capsys):
    _same_decisions(tmp_path, pg_store, capsys)
