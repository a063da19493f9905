"""Benchmark: how `policies` and `plan` scale with the cases, measured side by side.

One process, one after the other, on the article's case shape (2 judge checks and 1 code
check per case, flip 0.08, gates ``all,0.80``, 20,000 runs, the default policies
``single,majority-3,majority-5,rerun-failing-1,rerun-1``):

* policies, exact side: :func:`gatecal.policy_rates` of every policy; without and with
  run-level correlation (``icc`` 0.1, majority-5 alone: its quadrature has the most nodes).
* policies, simulated side: :func:`gatecal.simulate_policy` of both builds and every
  policy, call by call (``method="calls"``, what every size used before) and by counts of
  alike cases (``method="counts"``, what ``auto`` uses above 100 cases).
* the command itself: ``python -m gatecal policies --cases N`` (wall time, start-up included).
* plan: :func:`gatecal.plan_suite` searching ever further (``--max-cases``) for a 1%
  regression at flip 0.3, a 0.2% one at flip 0.45 (no size works: the whole range is
  screened), and with ``icc`` 0.05 (searched up to 5,000 cases).

Usage: python experiments/bench_policies_scale.py [--out reports/benchmark-policies-scale.md]
Timings vary from machine to machine and with the load (noted in the report); the ratios,
measured in the same run, are the point. About two minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import gatecal
from gatecal import JudgeNoise, Suite, parse_policy, policy_rates, simulate_policy

ROOT = Path(__file__).resolve().parent.parent
POLICIES = "single,majority-3,majority-5,rerun-failing-1,rerun-1"
GATES = "all,0.80"
RUNS = 20_000


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def exact_side(cases: int, noise: JudgeNoise, policies: str) -> float:
    suite = Suite.uniform(cases=cases)
    chosen = [parse_policy(p) for p in policies.split(",")]
    return timed(lambda: [policy_rates(suite, noise, GATES, p) for p in chosen])


def simulated_side(cases: int, method: Literal["calls", "counts"]) -> tuple[float, str]:
    suite = Suite.uniform(cases=cases)
    noise = JudgeNoise.flip(0.08)
    chosen = [parse_policy(p) for p in POLICIES.split(",")]
    methods: set[str] = set()

    def run() -> None:
        for p in chosen:
            for build in ("healthy", "regressed"):
                sample = simulate_policy(
                    suite, build, noise, GATES, p, n_runs=RUNS, rng=1, method=method
                )
                methods.add(sample.method)

    return timed(run), ",".join(sorted(methods))


def command(cases: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "gatecal", "policies", "--cases", str(cases)]
    return timed(lambda: subprocess.run(args, check=True, capture_output=True, env=env))


def plan(flip: float, regression: str, icc: float, max_cases: int | None) -> tuple[float, str]:
    found: list[str] = []

    def run() -> None:
        result = gatecal.plan_suite(
            noise=JudgeNoise(fnr=flip, fpr=flip, icc=icc),
            regression=regression,
            max_cases=max_cases,
        )
        found.extend(str(p.cases) if p else "none" for p in result.plans)

    return timed(run), " / ".join(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "reports/benchmark-policies-scale.md")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    exact_side(12, JudgeNoise.flip(0.08), POLICIES)  # warm-up: scipy's import is nobody's cost

    sizes = (200, 2000, 50_000)
    exact = {n: exact_side(n, JudgeNoise.flip(0.08), POLICIES) for n in sizes}
    icc_noise = JudgeNoise(fnr=0.08, fpr=0.08, icc=0.1)
    exact_icc = {n: exact_side(n, icc_noise, "majority-5") for n in (200, 2000)}
    counts = {n: simulated_side(n, "counts") for n in sizes}
    calls = {n: simulated_side(n, "calls") for n in (200, 2000)}
    cli = {n: command(n) for n in sizes}
    searches = [
        ("flip 0.08, regression 10%, no cap", (0.08, "0.10", 0.0, None)),
        ("flip 0.3, regression 1%, max 2,000", (0.3, "0.01", 0.0, 2000)),
        ("flip 0.3, regression 1%, max 20,000", (0.3, "0.01", 0.0, 20_000)),
        ("flip 0.3, regression 1%, max 200,000", (0.3, "0.01", 0.0, 200_000)),
        ("flip 0.45, regression 0.2%, max 200,000", (0.45, "0.002", 0.0, 200_000)),
        ("flip 0.45, regression 0.2%, max 400,000", (0.45, "0.002", 0.0, 400_000)),
        ("flip 0.45, regression 0.2%, max 800,000", (0.45, "0.002", 0.0, 800_000)),
        ("flip 0.45, regression 0.2%, no cap (2,000,000)", (0.45, "0.002", 0.0, None)),
        ("flip 0.08, icc 0.05, regression 2%, max 500", (0.08, "0.02", 0.05, 500)),
        ("flip 0.08, icc 0.05, regression 2%, max 2,000", (0.08, "0.02", 0.05, 2000)),
        ("flip 0.08, icc 0.05, regression 2%, no cap (5,000)", (0.08, "0.02", 0.05, None)),
    ]  # fmt: skip
    plans = [(label, *plan(*how)) for label, how in searches]

    def ratio(a: float, b: float) -> str:
        return f"{a / b:.2f}x"

    lines = [
        "# Benchmark: policies and plan as the suite grows",
        "",
        f"Python {platform.python_version()}, numpy, scipy; {platform.machine()}, "
        f"{os.cpu_count()} cores shared, load average {load:.2f} at the start. "
        f"`python experiments/bench_policies_scale.py`, one process, one after the other. "
        f"Article case shape (2 judge checks, 1 code check), flip 0.08, gates `{GATES}`, "
        f"{RUNS:,} runs, policies `{POLICIES}`.",
        "",
        "## policies: exact side and simulated side apart (seconds)",
        "",
        "| cases | exact (5 policies) | exact, icc 0.1, majority-5 | simulated by counts "
        "| simulated call by call | `gatecal policies --cases N` (wall, start-up included) |",
        "|---|---|---|---|---|---|",
    ]
    for n in sizes:
        icc_cell = f"{exact_icc[n]:.2f}" if n in exact_icc else "refused (--icc: at most 2,000)"
        call_cell = f"{calls[n][0]:.2f}" if n in calls else "not run (hours)"
        lines.append(
            f"| {n:,} | {exact[n]:.2f} | {icc_cell} | {counts[n][0]:.2f} | {call_cell} "
            f"| {cli[n]:.2f} |"
        )
    lines += [
        "",
        "Ratios, 2,000 cases over 200 (target: within 2.5x), and 50,000 over 200:",
        "",
        f"- exact side: {ratio(exact[2000], exact[200])}; 50,000: "
        f"{ratio(exact[50_000], exact[200])}",
        f"- exact side, icc 0.1, majority-5: {ratio(exact_icc[2000], exact_icc[200])} (200 cases "
        "take the per-node path whose numbers earlier releases printed; above 200 all nodes at "
        "once)",
        f"- simulated by counts: {ratio(counts[2000][0], counts[200][0])}; 50,000: "
        f"{ratio(counts[50_000][0], counts[200][0])}",
        f"- simulated call by call (every size before): {ratio(calls[2000][0], calls[200][0])}",
        f"- the command: {ratio(cli[2000], cli[200])}; 50,000: {ratio(cli[50_000], cli[200])}",
        f"- at 2,000 cases, counts against call by call: "
        f"{ratio(calls[2000][0], counts[2000][0])} faster",
        "",
        "## plan: the exact search as it searches further (seconds, 3 default policies)",
        "",
        "| search | seconds | cases found (single / majority-3 / rerun-1) |",
        "|---|---|---|",
    ]
    lines += [f"| {label} | {seconds:.2f} | {found} |" for label, seconds, found in plans]
    lines += [
        "",
        "Without icc the screen rules out most sizes at once; where no size can be ruled out "
        "early (flip 0.45, a 0.2% regression) every size up to the limit is screened with "
        "binomial tails whose cost grows with the size (scipy.special.bdtr), so the search "
        "grows faster than the range. With icc the search stops at 5,000 cases by default.",
        "",
    ]
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
