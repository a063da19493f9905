"""30 nightly runs recorded by 6 writers at once decide as the same files do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gatecal.cli import main
from tests.store.nightly import current_runs, nightly

#: Each writer records its files one call at a time, as six CI jobs would.
WRITER = """
import sys
from gatecal.cli import main
store, writer, *files = sys.argv[1:]
for f in files:
    code = main(["record", f, "--store", store, "--build", "nightly-" + f.rsplit("-", 1)[-1],
                 "--judge", "judge-a", "--known-good", "--branch", "main"])
    if code:
        sys.exit(code)
"""


def _record_in_parallel(store: str, files: list[Path], writers: int = 6) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, store, str(w), *map(str, files[w::writers])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.count("recorded 1 known-good run(s)") == len(files) // writers, out


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
