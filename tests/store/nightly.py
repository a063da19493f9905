"""Nightly runs for the store's tests: a seeded suite with stable, flaky and systematic cases."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

CASES = [f"suite.test_answer[case-{i:02d}]" for i in range(20)]
#: Each case's failure rate in the known-good runs: most stable, three flaky, one systematic.
RATES = {CASES[3]: 0.2, CASES[7]: 0.15, CASES[11]: 0.25, CASES[19]: 1.0}


def write_run(path: Path, run: str, rates: dict[str, float], rng: random.Random) -> Path:
    """One run as gatecal's JSONL long table: a verdict per case."""
    rows = [
        {"run": run, "case": case, "passed": rng.random() >= rates.get(case, 0.0)} for case in CASES
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def nightly(folder: Path, count: int = 30, seed: int = 20261206, *, start: int = 0,
            moved: Sequence[str] = ()) -> list[Path]:  # fmt: skip
    """`count` nightly runs in `folder`; the cases `moved` fail every time (a judge that
    changed its mind about them)."""
    rng = random.Random(seed)
    rates = {**RATES, **dict.fromkeys(moved, 1.0)}
    folder.mkdir(parents=True, exist_ok=True)
    return [
        write_run(folder / f"night-{i:02d}.jsonl", f"night-{i:02d}", rates, rng)
        for i in range(start, start + count)
    ]


def current_runs(folder: Path) -> dict[str, Path]:
    """CI runs to decide: clean, one flaky failure, the systematic case only, one new
    failure, three new failures."""
    folder.mkdir(parents=True, exist_ok=True)
    failing = {
        "clean": [CASES[19]],
        "flaky": [CASES[3], CASES[19]],
        "new-one": [CASES[0], CASES[19]],
        "new-three": [CASES[0], CASES[1], CASES[2], CASES[19]],
    }
    out = {}
    for name, fails in failing.items():
        rows = [{"run": f"ci-{name}", "case": c, "passed": c not in fails} for c in CASES]
        path = folder / f"ci-{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out[name] = path
    return out
