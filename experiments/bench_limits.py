"""Benchmark: the three figures of issue 49, each a ratio of two commands timed side by side.

Every figure is a pair of fresh processes, run in turn (A, B, A, B, ...) after a warm-up, with
the ratio taken pair by pair, so that the load of other processes hits both sides alike; the
median ratio is quoted with its range. Wall seconds are what a user waits; CPU seconds (user +
system, of the process and its children) say how much of that the machine gave.

1. The headline: ``gatecal simulate --cases 12 --flip 0.03,0.08`` against
   ``python -c "import numpy"`` (target: at most 2x).
2. The Monte Carlo engine against plain numpy (one uniform per verdict, the same chunks) on
   the headline's model, 2e7 runs, one process each (target: plain numpy takes at least 25x):
   a. the engine's call alone, the healthy build at flip rate 0.03 (the model of
      ``bench_montecarlo.py``), in a fresh process: imports and start included; with one
      worker (plain numpy's one core), and with two (a forked helper);
   b. the whole command, ``gatecal simulate --cases 12 --flip 0.03,0.08 --runs 20000000
      --workers 1`` (both builds at both flip rates, the exact engine, the intervals, the
      table), against plain numpy simulating the same four; and the same command with its
      default workers (the cores), as a user runs it.
3. Workers: 10^8 runs of the healthy build at 0.03 with 2 workers against 1, each a fresh
   process, the histograms compared (target: at least 1.6x on 2 cores): the second worker a
   forked copy of the caller (the default on Linux), a thread of the caller, and a worker
   process started by the forkserver; and what the machine gave right then: two one-worker
   simulations at once against one after the other.
4. Where the engine's call of 2a goes: starting Python, importing numpy and gatecal, seeding
   the chunks' streams, drawing their exponentials (the floor of the skipping method), and
   the rest; and the best ratio to plain numpy that leaves for one process.

Every process runs from bytecode, as after ``pip install`` (where the shell sets
PYTHONDONTWRITEBYTECODE, each run would compile gatecal from source).

Usage: python experiments/bench_limits.py [--pairs 5] [--long-pairs 3] [--only 1,3]
       [--out reports/benchmark-limits.md]   (--only: printed, the report is not written)
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PY = sys.executable
HERE = Path(__file__).resolve()
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
CASES, JUDGE_CHECKS, FAILING = 12, 2, 3  # the headline's model: 3 cases fail a code check
CHUNK_RUNS = (1 << 20) // (CASES * JUDGE_CHECKS)  # gatecal's chunk: 2^20 verdicts


def plain_numpy(runs_total: int, flips: Sequence[float], builds: Sequence[str]) -> list[str]:
    """The headline's model in plain numpy: one uniform per judge verdict, chunk by chunk."""
    rng = np.random.default_rng(20261130)
    lines = []
    for p in flips:
        for build in builds:
            code_ok = np.arange(CASES) >= (FAILING if build == "regressed" else 0)
            hist = np.zeros(CASES + 1, dtype=np.int64)
            left = runs_total
            while left:
                runs = min(CHUNK_RUNS, left)
                passed = (rng.random((runs, CASES, JUDGE_CHECKS)) >= p).all(axis=2) & code_ok
                hist += np.bincount(passed.sum(axis=1), minlength=CASES + 1)
                left -= runs
            lines.append(f"{p} {build} {hist.tolist()}")
    return lines


def _gatecal() -> list[str]:
    script = Path(PY).parent / "gatecal"
    return [str(script)] if script.exists() else [PY, "-m", "gatecal"]


_ENGINE = (
    "import hashlib, sys, time, gatecal\n"
    "if __name__ == '__main__':\n"
    "    if len(sys.argv) > 3:\n"
    "        import gatecal._engines.pool as pool\n"
    "        pool._FORK_HELPERS = False\n"
    "        pool._HELPER_THREADS = int(sys.argv[3] == 'thread')\n"
    "    suite = gatecal.Suite.uniform(cases=12, judge_checks=2, code_checks=1)\n"
    "    start = time.perf_counter()\n"
    "    s = gatecal.simulate_pass_counts(suite, 'healthy', gatecal.JudgeNoise.flip(0.03), "
    "n_runs=int(sys.argv[1]), rng=1, workers=int(sys.argv[2]))\n"
    "    call = time.perf_counter() - start\n"
    "    print(hashlib.sha256(repr(s.counts).encode()).hexdigest(), call)\n"
)


def engine(runs: int, workers: int, helper: str | None = None) -> list[str]:
    """The engine's call in a fresh process; `helper`: the second worker not forked (the
    default on Linux) but a ``"thread"`` of the caller, or a forkserver ``"process"``."""
    cmd = [PY, "-c", _ENGINE, str(runs), str(workers)]
    return cmd if helper is None else [*cmd, helper]


def plain(runs: int, flips: str, builds: str) -> list[str]:
    return [PY, str(HERE), "--plain", str(runs), flips, builds]


@dataclass(frozen=True)
class Run:
    wall: float
    cpu: float
    out: str

    @property
    def call(self) -> float:
        """The seconds of the call an engine process timed itself (its last word)."""
        return float(self.out.split()[-1])


def run(cmd: Sequence[str]) -> Run:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=ENV, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu, done.stdout)


@dataclass(frozen=True)
class Pairs:
    a: list[Run]
    b: list[Run]

    def ratios(self, clock: str, b_over_a: bool = False) -> list[float]:
        pairs = zip(self.a, self.b, strict=True)
        if b_over_a:
            return [getattr(b, clock) / getattr(a, clock) for a, b in pairs]
        return [getattr(a, clock) / getattr(b, clock) for a, b in pairs]

    def row(self, clock: str, b_over_a: bool = False) -> str:
        r = self.ratios(clock, b_over_a)
        return f"**{statistics.median(r):.2f}x** ({min(r):.2f}-{max(r):.2f})"

    def seconds(self, side: str, clock: str) -> str:
        return f"{statistics.median(getattr(r, clock) for r in getattr(self, side)):.3f}"


def pairs(a: Sequence[str], b: Sequence[str], n: int, warmup: bool = True) -> Pairs:
    """A and B in turn, `n` counted pairs (after one warm-up of each)."""
    if warmup:
        run(a)
        run(b)
    got_a, got_b = [], []
    for _ in range(n):
        got_a.append(run(a))
        got_b.append(run(b))
    return Pairs(got_a, got_b)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f} (1 min), {five:.1f} (5 min)"


def table(rows: list[tuple[str, Pairs, bool]]) -> list[str]:
    out = [
        "| figure | A s (median wall) | B s | ratio, wall (range) | ratio, CPU (range) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, got, b_over_a in rows:
        out.append(
            f"| {name} | {got.seconds('a', 'wall')} | {got.seconds('b', 'wall')} | "
            f"{got.row('wall', b_over_a)} | {got.row('cpu', b_over_a)} |"
        )
    return out


def headline(n: int) -> list[str]:
    cmd = [*_gatecal(), "simulate", "--cases", "12", "--flip", "0.03,0.08"]
    before = load()
    got = pairs(cmd, [PY, "-c", "import numpy"], n)
    return [
        "## 1. The headline against importing numpy",
        "",
        f'A = `gatecal simulate --cases 12 --flip 0.03,0.08`, B = `python -c "import numpy"`; '
        f"{n} pairs; ratio A/B (target <= 2x); load before {before}, after {load()}.",
        "",
        *table([("headline / import numpy", got, False)]),
        "",
    ]


def montecarlo(n: int, long_n: int) -> list[str]:
    runs = 20_000_000
    before = load()
    call = pairs(engine(runs, 1), plain(runs, "0.03", "healthy"), n)
    call_two = pairs(engine(runs, 2), plain(runs, "0.03", "healthy"), n)
    whole = [*_gatecal(), "simulate", "--cases", "12", "--flip", "0.03,0.08"]
    whole += ["--runs", str(runs), "--workers", "1"]
    both = plain(runs, "0.03,0.08", "healthy,regressed")
    command = pairs(whole, both, long_n, warmup=False)
    command_auto = pairs(whole[:-2], both, long_n, warmup=False)  # --workers auto: the cores
    return [
        "## 2. The Monte Carlo engine against plain numpy, 2e7 runs",
        "",
        "A = gatecal, B = plain numpy (one float64 uniform per judge verdict, the same chunks "
        "of 2^20 verdicts); ratio B/A: how many times longer plain numpy takes (target >= "
        f"25x). Load before {before}, after {load()}.",
        "",
        *table(
            [
                (
                    f"the engine's call, healthy build at 0.03, fresh process ({n} pairs)",
                    call,
                    True,
                ),
                (f"the same call with 2 workers ({n} pairs)", call_two, True),
                (
                    "the whole command `--runs 20000000 --workers 1`, both builds at 0.03 and "
                    f"0.08 ({long_n} pairs, no warm-up)",
                    command,
                    True,
                ),
                (
                    "the same command with its default workers (`--workers auto`: the "
                    f"cores, {os.cpu_count()} here; {long_n} pairs, no warm-up)",
                    command_auto,
                    True,
                ),
            ]
        ),
        "",
    ]


def workers(n: int) -> list[str]:
    runs = 100_000_000
    before = load()
    got = pairs(engine(runs, 2), engine(runs, 1), n)
    thread = pairs(engine(runs, 2, "thread"), engine(runs, 1), n, warmup=False)
    procs = pairs(engine(runs, 2, "process"), engine(runs, 1), n, warmup=False)
    every = got.a + got.b + thread.a + thread.b + procs.a + procs.b
    digests = {r.out.split()[0] for r in every}
    one = engine(runs // 2, 1)
    serial, together = [], []
    for _ in range(max(1, n // 2)):
        start = time.perf_counter()
        run(one)
        run(one)
        serial.append(time.perf_counter() - start)
        start = time.perf_counter()
        both = [subprocess.Popen(one, env=ENV, stdout=subprocess.DEVNULL) for _ in range(2)]
        for proc in both:
            proc.wait()
        together.append(time.perf_counter() - start)
    room = [s / t for s, t in zip(serial, together, strict=True)]
    return [
        "## 3. Two workers against one, 10^8 runs",
        "",
        "A = 2 workers, B = 1 worker: `simulate_pass_counts` of the healthy build at 0.03 in "
        f"a fresh process each; {n} pairs; ratio B/A, the speed-up (target >= 1.6x): of the "
        "call as the process timed it (the workers' start included, the imports not: they "
        "are the same on both sides), and of the whole process. The second worker is a "
        "forked copy of the caller (the default on Linux in a process of one thread); then, "
        f"{n} more pairs each, a thread of the caller (`pool._FORK_HELPERS = False`, the "
        "default where a process runs other threads) and a worker process started by the "
        f"forkserver (`_HELPER_THREADS = 0` too). Load before {before}, after {load()}.",
        "",
        "| figure | A s (median) | B s | speed-up (range) |",
        "|---|---:|---:|---:|",
        f"| the call | {got.seconds('a', 'call')} | {got.seconds('b', 'call')} | "
        f"{got.row('call', True)} |",
        f"| the whole process, wall | {got.seconds('a', 'wall')} | {got.seconds('b', 'wall')} | "
        f"{got.row('wall', True)} |",
        f"| the call, a thread | {thread.seconds('a', 'call')} | "
        f"{thread.seconds('b', 'call')} | {thread.row('call', True)} |",
        f"| the whole process, a thread | {thread.seconds('a', 'wall')} | "
        f"{thread.seconds('b', 'wall')} | {thread.row('wall', True)} |",
        f"| the call, a forkserver process | {procs.seconds('a', 'call')} | "
        f"{procs.seconds('b', 'call')} | {procs.row('call', True)} |",
        f"| the whole process, a forkserver process | {procs.seconds('a', 'wall')} | "
        f"{procs.seconds('b', 'wall')} | {procs.row('wall', True)} |",
        "",
        f"Identical histograms in every run: {len(digests) == 1}. What the machine gave "
        "right then: two one-worker simulations of 5e7 runs took "
        f"{statistics.median(room):.2f}x less time at once than one after the other "
        f"({min(room):.2f}-{max(room):.2f}; an idle 2-core machine: 2x): no worker count "
        "can beat that.",
        "",
    ]


_PARTS = (
    "import sys, time\n"
    "import numpy as np, gatecal\n"
    "from gatecal._common.seeds import ChunkSeeder, root_seed\n"
    "from gatecal._engines.skipping import _draw_sizes\n"
    "runs, repeat = int(sys.argv[1]), int(sys.argv[2])\n"
    "suite = gatecal.Suite.uniform(cases=12, judge_checks=2, code_checks=1)\n"
    "noise = gatecal.JudgeNoise.flip(0.03)\n"
    "per_chunk = (1 << 20) // 24\n"
    "chunks = -(-runs // per_chunk)\n"
    "draw = _draw_sizes(per_chunk * 24 * 0.03)[0]\n"
    "gaps = np.empty(draw)\n"
    "def call():\n"
    "    gatecal.simulate_pass_counts(suite, 'healthy', noise, n_runs=runs, rng=1)\n"
    "def streams():\n"
    "    seeder = ChunkSeeder(root_seed(1))\n"
    "    for i in range(chunks):\n"
    "        seeder(i)\n"
    "def exponentials():\n"
    "    seeder = ChunkSeeder(root_seed(1))\n"
    "    for i in range(chunks):\n"
    "        seeder(i).standard_exponential(out=gaps)\n"
    "def best(f):\n"
    "    f()\n"
    "    times = []\n"
    "    for _ in range(repeat):\n"
    "        start = time.process_time()\n"
    "        f()\n"
    "        times.append(time.process_time() - start)\n"
    "    return min(times)\n"
    "print(best(call), best(streams), best(exponentials))\n"
)


def parts(n: int) -> list[str]:
    """Where the engine's call of section 2 goes, and the best ratio that leaves."""
    runs = 20_000_000
    before = load()
    imports = (
        "import time\n"
        "start = time.process_time()\n"
        "import numpy.random\n"
        "numpy_s = time.process_time() - start\n"
        "import gatecal, gatecal._engines.montecarlo\n"
        "gatecal.Suite.uniform()\n"
        "print(numpy_s, time.process_time() - start - numpy_s)\n"
    )
    for cmd in ([PY, "-c", "pass"], [PY, "-c", imports]):  # warm-up: bytecode, file cache
        run(cmd)
    python = statistics.median(run([PY, "-c", "pass"]).cpu for _ in range(n))
    took = [[float(x) for x in run([PY, "-c", imports]).out.split()] for _ in range(n)]
    numpy_s, gatecal_s = (statistics.median(column) for column in zip(*took, strict=True))
    call, streams, exps = (float(x) for x in run([PY, "-c", _PARTS, str(runs), str(n)]).out.split())
    plain_s = run(plain(runs, "0.03", "healthy")).cpu
    floor = python + numpy_s + gatecal_s + exps  # start, import, seed and draw: no more
    rows = [
        ("starting Python (`python -c pass`)", python),
        ("importing numpy (and numpy.random)", numpy_s),
        ("importing gatecal's model and engine", gatecal_s),
        ("the call, warm (best of the process's runs)", call),
        ("... of which seeding the chunks' streams", streams),
        ("... of which drawing their exponentials", exps - streams),
        ("... of which the rest: the passes over the flips, Python", call - exps),
    ]
    return [
        "## 4. Where the engine's call goes, 2e7 runs",
        "",
        "The call of section 2 (one worker), taken apart, in CPU seconds (what other "
        f"processes change least): fresh processes (median of {n}) for the start and the "
        f"imports (each timed by the process); in one process, best of {n} after a warm-up, "
        "the call and the same chunks' streams and exponentials drawn alone (the skipping "
        "method's floor: one exponential per flipped verdict). Load before "
        f"{before}, after {load()}.",
        "",
        "| part | CPU s |",
        "|---|---:|",
        *(f"| {name} | {seconds:.3f} |" for name, seconds in rows),
        "",
        f"Plain numpy took {plain_s:.2f} s here (one process). A process that only started, "
        f"imported, seeded the streams and drew the exponentials ({floor:.3f} s) would be "
        f"{plain_s / floor:.1f}x faster than plain numpy: the best ratio one process can reach "
        f"with these random numbers; the engine's call adds {call - exps:.3f} s to that.",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--long-pairs", type=int, default=3)
    parser.add_argument("--only", default="", help="sections, e.g. 1,3: printed, not written")
    parser.add_argument("--out", type=Path, default=Path("reports/benchmark-limits.md"))
    parser.add_argument("--plain", nargs=3, metavar=("RUNS", "FLIPS", "BUILDS"))
    args = parser.parse_args()
    if args.plain:
        runs, flips, builds = args.plain
        flip_rates = [float(f) for f in flips.split(",")]
        print("\n".join(plain_numpy(int(runs), flip_rates, builds.split(","))))
        return
    only = {int(x) for x in args.only.split(",") if x.strip()}
    started = load()
    sections: dict[int, Callable[[], list[str]]] = {
        1: lambda: headline(args.pairs),
        2: lambda: montecarlo(args.pairs, args.long_pairs),
        3: lambda: workers(args.pairs),
        4: lambda: parts(args.pairs),
    }
    lines = [
        "# The headline and the engines at the machine's limit (issue 49)",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.python_implementation()} {platform.python_version()}, numpy "
        f"{np.__version__}; load average at the start {started} (other processes share the "
        "machine: seconds vary, the ratios are taken pair by pair).",
        f"Regenerate: `python experiments/bench_limits.py --pairs {args.pairs} --long-pairs "
        f"{args.long_pairs}`",
        "",
    ]
    for number, section in sections.items():
        if not only or number in only:
            lines += section()
    lines.append(f"Load average at the end: {load()}.")
    text = "\n".join(lines) + "\n"
    if not only:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
