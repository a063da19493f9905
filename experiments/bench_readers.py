"""Reading speed: the readers package against the reader it replaced (commit 655459b).

Two runs of a JUnit suite with N testcases each (one file per run, pytest's shape), read by
``gatecal.read_runs`` and by the old ``gatecal._runs.read_runs``, which looked up each
testcase's name in a list of every name (quadratic), at growing N, best of 3, in one
process. Writes reports/benchmark-readers.md.

Usage: python experiments/bench_readers.py [--sizes 1000,2000,5000,20000]
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

from gatecal import read_runs

ROOT = Path(__file__).resolve().parent.parent
OLD_COMMIT = "655459b"


def _old_reader() -> Callable[..., object]:
    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:gatecal/_runs.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("old_runs")
    sys.modules["old_runs"] = module  # dataclasses look their module up
    exec(compile(source, "old_runs.py", "exec"), module.__dict__)
    reader: Callable[..., object] = module.read_runs
    return reader


def _write(folder: Path, n: int) -> None:
    for run in (1, 2):
        cases = "".join(
            f'<testcase classname="tests.test_golden" name="test_golden[case-{i}]" time="0.001"'
            + ("><failure message='no'/></testcase>" if (i * run) % 17 == 0 else "/>")
            for i in range(n)
        )
        (folder / f"run-{run}.xml").write_text(
            f'<testsuites><testsuite name="pytest" tests="{n}">{cases}</testsuite></testsuites>'
        )


def _best(fn: Callable[[], object], repeats: int = 3, budget: float = 120.0) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
        if sum(times) > budget:
            break
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,5000,20000")
    parser.add_argument("--old-max", type=int, default=20000, help="largest N for the old reader")
    args = parser.parse_args()
    old = _old_reader()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            _write(folder, n)
            new_s = _best(functools.partial(read_runs, [folder]))
            old_s = _best(functools.partial(old, [folder])) if n <= args.old_max else None
        rows.append((n, new_s, old_s))
        print(n, new_s, old_s, flush=True)
    lines = [
        "# Reading speed: two JUnit runs of N testcases",
        "",
        f"`python experiments/bench_readers.py --sizes {args.sizes}` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; best of 3 (a run over "
        f"two minutes is timed once). Old reader: `gatecal/_runs.py` at {OLD_COMMIT}.",
        "",
        "| N testcases per run | readers package | old reader | old / new |",
        "|---:|---:|---:|---:|",
    ]
    for n, new_s, old_s in rows:
        old_text = f"{old_s:.3f} s" if old_s is not None else "not run"
        ratio = f"{old_s / new_s:.0f}x" if old_s is not None else ""
        lines.append(f"| {n:,} | {new_s:.3f} s | {old_text} | {ratio} |")
    lines += [
        "",
        "The new reader's time grows linearly with N; the old one's quadratically (each testcase "
        "counted its name in the list of all names).",
    ]
    (ROOT / "reports" / "benchmark-readers.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
