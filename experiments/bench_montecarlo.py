"""Benchmark: verdicts per second of the Monte Carlo engine against two plain baselines.

All three simulate the seed article's healthy build (12 cases x 2 judge checks, every
verdict flipped with probability 0.03) and are timed in the same process, one after the
other, best of `--repeat` runs after a warm-up:

* gatecal    - ``simulate_pass_counts(method="skip")``: one exponential per *flipped*
               verdict (geometric skipping), bounded chunks, spawned streams.
* numpy      - the plain vectorised version: one float64 uniform per verdict,
               ``rng.random((runs, cases, checks)) < p`` (gatecal's ``method="dense"``).
* python     - a literal port of the article's per-verdict loop with ``random.Random``.

Usage: python experiments/bench_montecarlo.py [--runs 10000000] [--out reports/...]
Timings vary from machine to machine and run to run; the ratios are the point.
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np

import gatecal
from gatecal._engines.montecarlo import CHUNK_VERDICTS

CASES, JUDGE_CHECKS, FLIP = 12, 2, 0.03
VERDICTS_PER_RUN = CASES * JUDGE_CHECKS


def article_loop(n_runs: int, seed: int) -> list[int]:
    """The seed article's NoisyJudgeTest, verdict by verdict, in pure Python."""
    rng = random.Random(seed)
    counts = [0] * (CASES + 1)
    for _ in range(n_runs):
        passed = 0
        for _case in range(CASES):
            case_ok = True  # the healthy build: every check truly passes
            for _check in range(JUDGE_CHECKS):
                verdict = True
                if rng.random() < FLIP:  # FlakyJudge flips the verdict
                    verdict = not verdict
                case_ok = case_ok and verdict
            passed += case_ok
        counts[passed] += 1
    return counts


def best_time(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    fn()  # warm-up: first-touch page faults and caches are not the engine's cost
    times = []
    result: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000_000)
    parser.add_argument("--python-runs", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=gatecal.DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=Path("reports/benchmark-montecarlo.md"))
    args = parser.parse_args()

    suite = gatecal.Suite.uniform(cases=CASES, judge_checks=JUDGE_CHECKS, code_checks=1)
    noise = gatecal.JudgeNoise.flip(FLIP)
    exact = gatecal.exact_pass_counts(suite, "healthy", noise)

    def engine(method: Literal["skip", "dense"], runs: int) -> Callable[[], object]:
        return lambda: gatecal.simulate_pass_counts(
            suite, "healthy", noise, n_runs=runs, rng=args.seed, method=method
        )

    rows = []
    for name, fn, runs in [
        ("gatecal (skip), 1 thread", engine("skip", args.runs), args.runs),
        ("plain numpy, one uniform per verdict", engine("dense", args.runs), args.runs),
        (
            "pure Python, the article's loop",
            lambda: article_loop(args.python_runs, args.seed),
            args.python_runs,
        ),
    ]:
        seconds, result = best_time(fn, args.repeat if runs == args.runs else 1)
        counts = result.counts if isinstance(result, gatecal.PassCountSample) else result
        assert isinstance(counts, (list, tuple))
        all_pass_fails = 1 - counts[CASES] / runs
        rows.append((name, runs, seconds, runs * VERDICTS_PER_RUN / seconds, all_pass_fails))

    base = {name: vps for name, _, _, vps, _ in rows}
    ours = base["gatecal (skip), 1 thread"]
    exact_all = exact.failure_probability(CASES)
    draws = FLIP + (6 * math.sqrt(CHUNK_VERDICTS * FLIP) + 16) / CHUNK_VERDICTS
    lines = [
        "# Monte Carlo engine: verdicts per second",
        "",
        f"Suite: {CASES} cases x {JUDGE_CHECKS} judge checks (+1 code check), healthy build, "
        f"flip rate {FLIP}; seed {args.seed}. Best of {args.repeat} after a warm-up, all in one "
        "process, one after the other.",
        f"Machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, numpy {np.__version__}.",
        f"Regenerate: `python experiments/bench_montecarlo.py --runs {args.runs}`",
        "",
        "| engine | runs | seconds | verdicts/s | its time per verdict / gatecal 1-thread | "
        "P(all-pass fails), simulated |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, runs, seconds, vps, fails in rows:
        lines.append(
            f"| {name} | {runs:,} | {seconds:.3f} | {vps / 1e6:,.1f} M | "
            f"{ours / vps:.1f}x | {fails:.5f} |"
        )
    lines += [
        "",
        f"Exact P(all-pass fails the healthy build) = 1 - 0.97^24 = {exact_all:.5f}; every "
        "engine simulates the same distribution, verdict by verdict.",
        "",
        f"Random numbers drawn per verdict: plain numpy 1; gatecal about {draws:.4f} "
        f"(one exponential per flip, p = {FLIP}, plus a margin of 6 standard deviations "
        "per chunk), so the cost follows the flips, not the verdicts.",
        "The pure-Python loop runs fewer runs (its rate does not depend on the run count).",
        "Worker processes, the other rows of issue 13 and the random-number limit: "
        "`reports/benchmark-speed.md` (`python experiments/bench_speed.py`).",
    ]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
