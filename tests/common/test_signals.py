"""SIGTERM leaves nothing hidden beside a target, as Ctrl-C does: a real subprocess, a
real signal. Before: a ``report`` killed after 2-4 s left ``.rep.<random>/`` with partial
files; a Parquet write killed in the middle left ``.gatecal-<hex>.tmp``.

Each child is stalled at a known point (a patched step that sleeps, injected before the
command runs) so the signal lands while the temporary exists, without guessing a time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.paths import ROOT

STALL = """
import os, sys, time
{patch}
from gatecal.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def _start(patch: str, *args: object) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = STALL.format(patch=patch)
    return subprocess.Popen(
        [sys.executable, "-c", code, *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _wait_for(folder: Path, pattern: str, child: subprocess.Popen[bytes]) -> list[Path]:
    for _ in range(6000):  # up to 10 minutes on a loaded machine; usually well under one
        found = list(folder.glob(pattern))
        if found:
            return found
        if child.poll() is not None:
            raise AssertionError(f"the child ended first: {child.communicate()}")
        time.sleep(0.1)
    child.kill()
    raise AssertionError(f"no {pattern} appeared")


def _terminate(child: subprocess.Popen[bytes]) -> int:
    child.send_signal(signal.SIGTERM)
    child.communicate(timeout=120)
    return child.returncode


def test_sigterm_during_a_parquet_write_leaves_no_temporary(tmp_path):
    pytest.importorskip("pyarrow")
    runs = tmp_path / "runs.jsonl"
    runs.write_text("".join(json.dumps({"run": f"r{r}", "case": f"c{j}", "passed": True}) + "\n"
                            for r in range(3) for j in range(5)))  # fmt: skip
    out = tmp_path / "out" / "runs.parquet"
    out.parent.mkdir()
    # the disk is slow: fsync of the temporary never returns
    child = _start("os.fsync = lambda fd: time.sleep(600)", "runs", runs, "--format",
                   "parquet", "--out", out)  # fmt: skip
    _wait_for(out.parent, ".gatecal-*.tmp", child)
    assert _terminate(child) == -signal.SIGTERM  # ended by the signal, as before
    assert list(out.parent.iterdir()) == []  # neither the target nor a temporary


def test_sigterm_during_report_leaves_no_hidden_folder(tmp_path):
    target = tmp_path / "rep"
    # the report's last page takes forever to write
    patch = "import gatecal.report as r; r._html = lambda *a, **k: time.sleep(600)"
    child = _start(patch, "report", "--out", target, "--cases", "20", "--runs", "20")
    _wait_for(tmp_path, ".rep.*/index.md", child)
    assert _terminate(child) == -signal.SIGTERM
    assert list(tmp_path.iterdir()) == []
