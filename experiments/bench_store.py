"""The run history at scale: 10^6 recorded verdicts, against reading the same runs from files.

RUNS runs of CASES cases (10^6 verdicts by default: 1000 x 1000), one JSONL file per run
(gatecal's long table, seeded: each case its own failure rate, most cases stable). Measured
in one process, each step once (wall-clock, time.perf_counter), on the embedded store (a
SQLite file) and, where PostgreSQL's binaries are on this machine, on a PostgreSQL server
this script starts for the purpose (initdb into a temporary folder, fsync off):

- **read from files**: ``gatecal.read_runs`` of all the files (the baseline as files today),
  and of the latest 30;
- **record**: ``gatecal.record_runs`` of the same runs, all in one call (one transaction),
  then once more (idempotent: nothing added, only the files hashed);
- **read from the store**: ``gatecal.store.stored_runs`` of every run (10^6 verdicts back
  into a RunsData), and of the latest 30 (what ``check --store`` takes by default);
- **check**: ``gatecal.check_gate`` of one current run against the latest 30 runs, the
  baseline read from the 30 files and from the store (the same decision, asserted).

Writes reports/benchmark-store.md. The machine is shared: other work ran beside it, so
the times are an upper bound of what this code costs, good to their order of magnitude.

Usage: python experiments/bench_store.py [--runs 1000] [--cases 1000]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import gatecal
from gatecal.store import Selection, stored_runs

ROOT = Path(__file__).resolve().parent.parent
SEED = 20261206
LATEST = 30
Rows = list[tuple[str, float]]


def _write(folder: Path, runs: int, cases: int, first: int = 0) -> list[Path]:
    """`runs` JSONL files of `cases` cases each; case c fails at its own seeded rate."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    rates = np.array([0.0 if rng.random() < 0.8 else rng.uniform(0.02, 0.3) for _ in range(cases)])
    names = [f"suite.test_case[c{c:05d}]" for c in range(cases)]
    out = []
    for r in range(first, first + runs):
        fails = (np.random.default_rng([SEED, r]).random(cases) < rates).tolist()
        body = "".join(
            f'{{"run": "night-{r:05d}", "case": "{n}", "passed": {"false" if f else "true"}}}\n'
            for n, f in zip(names, fails, strict=True)
        )
        path = folder / f"night-{r:05d}.jsonl"
        path.write_text(body, encoding="utf-8")
        out.append(path)
    return out


def _timed(label: str, rows: Rows, call: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    value = call()
    rows.append((label, time.perf_counter() - start))
    print(f"{label}: {rows[-1][1]:.2f} s", flush=True)
    return value


@contextmanager
def _postgres() -> Iterator[str | None]:
    """A throwaway PostgreSQL server on loopback, or None without its binaries."""
    initdb = shutil.which("initdb") or "/usr/lib/postgresql/15/bin/initdb"
    pg_ctl = shutil.which("pg_ctl") or "/usr/lib/postgresql/15/bin/pg_ctl"
    if not (Path(initdb).exists() and Path(pg_ctl).exists()):
        yield None
        return
    home = Path(tempfile.mkdtemp(prefix="gatecal-bench-pg-"))
    prefix = []
    if os.geteuid() == 0:  # postgres refuses root
        shutil.chown(home, user="nobody")
        prefix = ["runuser", "-u", "nobody", "--"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    data = home / "data"
    subprocess.run([*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "postgres",
                    "--no-sync"], check=True, capture_output=True)  # fmt: skip
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(home / "log"),
                    "-w", "start"], check=True, capture_output=True)  # fmt: skip
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True)  # fmt: skip
        shutil.rmtree(home, ignore_errors=True)


def _decision(result: Any) -> tuple[Any, ...]:
    return (result.decision, result.gate, result.k_min, result.passed, result.exit_code)


def _measure(name: str, store: str, data: Any, cur: Any, total: int, rows: Rows) -> Any:
    """Record `data` into `store`, again, read it back, and check `cur` from it."""
    done = _timed(
        f"{name}: record {total:,} verdicts (one call)",
        rows,
        lambda: gatecal.record_runs(data, store, build="b", judge="j", known_good=True),
    )
    assert done.verdicts == total
    again = _timed(
        f"{name}: record the same files again (nothing added)",
        rows,
        lambda: gatecal.record_runs(data, store, build="b2", judge="j"),
    )
    assert again.verdicts == 0
    every = _timed(
        f"{name}: read all {total:,} verdicts back",
        rows,
        lambda: stored_runs(store, Selection(latest=None)),
    )
    assert len(every.data.verdicts) == total
    _timed(f"{name}: read the latest {LATEST} runs", rows, lambda: stored_runs(store))
    return _timed(
        f"{name}: check, the baseline the latest {LATEST} runs from the store",
        rows,
        lambda: gatecal.check_gate(cur, stored_runs(store).data),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--cases", type=int, default=1000)
    args = parser.parse_args()
    total = args.runs * args.cases
    rows: Rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = _timed("write the files (setup)", [], lambda: _write(folder, args.runs, args.cases))
        current = _write(folder / "ci", 1, args.cases, first=args.runs)
        data = _timed(
            f"read_runs: {total:,} verdicts from {args.runs} files",
            rows,
            lambda: gatecal.read_runs(files),
        )
        cur = gatecal.read_runs(current)
        latest = files[-LATEST:]
        _timed(f"read_runs: the latest {LATEST} files", rows, lambda: gatecal.read_runs(latest))
        by_files = _timed(
            f"check, the baseline read from the latest {LATEST} files",
            rows,
            lambda: gatecal.check_gate(cur, gatecal.read_runs(latest)),
        )
        with _postgres() as url:
            stores = [("SQLite file", str(folder / "history.db"))]
            if url is not None:
                stores.append(("PostgreSQL 15", url))
            for name, store in stores:
                by_store = _measure(name, store, data, cur, total, rows)
                assert _decision(by_store) == _decision(by_files), (by_store, by_files)
        # once more, warm: the first check above also paid for imports and caches
        _timed(
            f"check, the baseline read from the latest {LATEST} files (again, warm)",
            rows,
            lambda: gatecal.check_gate(cur, gatecal.read_runs(latest)),
        )
    lines = [
        "# The run history at scale",
        "",
        f"{args.runs} runs x {args.cases} cases = {total:,} verdicts, one JSONL file per run",
        "(experiments/bench_store.py; each step once, wall-clock, in one process).",
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs.",
        "**The machine was shared** with other work while this ran: read the times as an",
        "upper bound, good to their order of magnitude, not as a benchmark.",
        "",
        "| step | seconds |",
        "|---|---|",
        *[f"| {label} | {seconds:.2f} |" for label, seconds in rows],
        "",
        "check decided the same from the store as from the files (asserted). The first",
        "check (from files) also paid for imports and caches: compare the warm one.",
        "",
    ]
    out = ROOT / "reports" / "benchmark-store.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
