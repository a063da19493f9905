"""Coverage study of ``gatecal recommend`` under run-to-run correlation (issue 14).

Known-good runs are simulated from the model recommend assumes, with a known truth:
each run draws its case failure rate from a Beta with mean MEAN and intra-run
correlation icc (exactly MEAN when icc = 0), and each case fails independently at
that rate. For every data set, :func:`gatecal.recommend_gate` runs with its defaults
(false alarm <= 0.05, detection >= 0.95, a regression of a quarter of the cases
failing a code check, 95% Wilson intervals), on the in-memory runs exactly as the
CLI builds them. Per grid point the study reports:

- the share of data sets that get a gate: the strictest gate within the false-alarm
  budget (``within_budget``, what a CI job would set), and the share whose gate also
  meets the detection target (``recommended``), beside whether the *true* parameters
  admit such a gate at all (the oracle);
- the share of those gates whose **true** false alarm (beta-binomial at the true mean
  and icc, computed exactly) exceeds the 0.05 budget (target: at most 1%), with its
  binomial standard error, and the worst true false alarm seen; the same count among
  the gates that meet both targets (a data set that understates the noise also
  overstates detection, so the gates over budget concentrate there);
- the rejection rate of the likelihood-ratio test of icc = 0 at 0.05 (at icc = 0 the
  null rejection rate, nominal 0.05 or less: the boundary test is conservative in
  small samples);
- the wall time per recommendation (median and maximum), fallback search included.

Seeded: one root seed, one spawned stream per grid point; the same seed and
replicate count give the same table (the wall times vary with the machine).

Usage: python experiments/recommend_coverage.py [--reps 300] [--seed 20261214]
(14 to 21 minutes on a 2-core machine at 300 replicates)
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gatecal import parse_regression, recommend_gate
from gatecal._analyses.recommend import _below
from gatecal._engines.exact import beta_binomial_pmf
from gatecal.readers import RunsData, Verdict

MEAN = 0.03
ICCS = (0.0, 0.03, 0.1, 0.2)
CASES = (20, 60)
RUNS = (20, 100)
BUDGET, POWER, REGRESSION = 0.05, 0.95, "0.25"


@dataclass
class Point:
    icc: float
    cases: int
    runs: int
    reps: int = 0
    gates: int = 0
    exceed: int = 0
    both: int = 0
    both_exceed: int = 0
    worst: float = 0.0
    rejections: int = 0
    oracle: bool = False
    times: list[float] | None = None


def true_table(n: int, icc: float, mean: float = MEAN) -> tuple[np.ndarray, np.ndarray]:
    """True false alarm and detection of "at least k of n pass", k = 0..n."""
    fa = _below(beta_binomial_pmf(n, mean, icc)[::-1])
    f = parse_regression(REGRESSION).failing(n)
    rest = beta_binomial_pmf(n - f, mean, icc)[::-1]
    det = _below(np.concatenate((rest, np.zeros(f))))
    return fa, det


def meets_both(n: int, icc: float, mean: float = MEAN) -> bool:
    """Whether some gate meets both targets at these true parameters."""
    fa, det = true_table(n, icc, mean)
    return any(a <= BUDGET and d >= POWER for a, d in zip(fa, det, strict=True))


def rate_room(n: int, icc: float, step: float = 0.0005) -> float:
    """How far the rate can rise from MEAN, at this icc, with a gate meeting both targets
    at every rate on the way: scanned in `step`s, the last step bisected to 1e-6."""
    low = MEAN
    while meets_both(n, icc, low + step):
        low += step
    high = low + step
    while high - low > 1e-6:
        mid = (low + high) / 2
        low, high = (mid, high) if meets_both(n, icc, mid) else (low, mid)
    return low


def room_rows() -> list[str]:
    """The rows of the room table: one per icc, :func:`rate_room` per suite size."""
    rows = []
    for icc in ICCS:
        rooms = " | ".join(f"{rate_room(n, icc):.4f}" for n in CASES)
        rows.append(f"| {icc:g} | {rooms} |")
    return rows


def runs_data(failed: np.ndarray) -> RunsData:
    """The in-memory runs the readers would build from a long table of these verdicts."""
    verdicts = tuple(
        Verdict(build="healthy", run=f"r{i}", case=f"c{j:03d}", passed=not bool(failed[i, j]))
        for i in range(failed.shape[0])
        for j in range(failed.shape[1])
    )
    return RunsData(verdicts=verdicts)


def study(point: Point, reps: int, rng: np.random.Generator) -> Point:
    fa_true, _ = true_table(point.cases, point.icc)
    point.oracle = meets_both(point.cases, point.icc)
    point.times = []
    for _ in range(reps):
        if point.icc == 0:
            rates = np.full(point.runs, MEAN)
        else:
            scale = (1 - point.icc) / point.icc
            rates = rng.beta(MEAN * scale, (1 - MEAN) * scale, size=point.runs)
        failed = rng.random((point.runs, point.cases)) < rates[:, None]
        data = runs_data(failed)
        start = time.perf_counter()
        rec = recommend_gate(data, false_alarm=BUDGET, detection=POWER, regression=REGRESSION)
        point.times.append(time.perf_counter() - start)
        point.reps += 1
        point.rejections += rec.overdispersion.p_value < 0.05
        if rec.within_budget is not None:
            point.gates += 1
            truth = float(fa_true[rec.within_budget])
            point.exceed += truth > BUDGET
            point.worst = max(point.worst, truth)
        if rec.recommended is not None:
            point.both += 1
            point.both_exceed += float(fa_true[rec.recommended]) > BUDGET
    return point


def render(points: list[Point], reps: int, seed: int, elapsed: float) -> str:
    lines = [
        "# recommend under run-to-run correlation: coverage study",
        "",
        f"Generated by `python experiments/recommend_coverage.py --reps {reps} --seed {seed}`.",
        f"{reps} simulated data sets per row; true mean case failure rate {MEAN}; "
        f"budget: false alarm <= {BUDGET}, detection >= {POWER} of a regression failing "
        f"{float(REGRESSION):.0%} of the cases (a code check); 95% Wilson intervals.",
        "",
        "- **gate**: share of data sets that get a gate within the false-alarm budget",
        "  (`within_budget`: the strictest gate whose false alarm, the largest over the",
        "  region, is at most the budget); **both**: share whose gate also meets the",
        "  detection target (`recommended`); **oracle**: whether the true parameters admit",
        "  a gate meeting both targets.",
        "- **true FA > budget**: gates whose true false alarm exceeds the budget, as a count",
        "  and share of the gates, with its binomial standard error (target <= 1%);",
        "  **among both**: the same count among the gates meeting both targets (a data set",
        "  that understates the noise also overstates detection, so the gates over budget",
        "  are among these: where few data sets meet both, their share is large).",
        "- **LR rejects**: the test of icc = 0 at 0.05 (at icc 0: the null rejection rate).",
        "- **time**: wall time per recommendation, fallback search included (median / max).",
        "",
        "| icc | cases | runs | gate | both | oracle | true FA > budget | among both "
        "| worst true FA | LR rejects | time median / max (s) |",
        "|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|",
    ]
    for p in points:
        assert p.times is not None
        share = p.exceed / p.gates if p.gates else 0.0
        se = math.sqrt(max(share * (1 - share), 1 / p.gates) / p.gates) if p.gates else 0.0
        lines.append(
            f"| {p.icc:g} | {p.cases} | {p.runs} | {p.gates / p.reps:.3f} "
            f"| {p.both / p.reps:.3f} | {'yes' if p.oracle else 'no'} "
            f"| {p.exceed}/{p.gates} = {share:.4f} (SE {se:.4f}) | {p.both_exceed}/{p.both} "
            f"| {p.worst:.4f} "
            f"| {p.rejections / p.reps:.3f} "
            f"| {statistics.median(p.times):.3f} / {max(p.times):.3f} |"
        )
    total = sum(p.reps for p in points)
    exceed = sum(p.exceed for p in points)
    gates = sum(p.gates for p in points)
    worst_share = max(p.exceed / p.gates for p in points if p.gates)
    worst_time = max(max(p.times or [0.0]) for p in points)
    lines += [
        "",
        f"All rows: {exceed} of {gates} gates over budget in truth (the largest share at "
        f"one grid point {worst_share:.4f}); "
        f"{total} recommendations, the slowest {worst_time:.2f} s. "
        f"(SE for a share of 0 uses one event: an upper scale, not an estimate.) "
        f"Study run time {elapsed / 60:.1f} min on this machine.",
        "",
        "Room the truth leaves for meeting both targets: the rate (true "
        f"{MEAN}) can rise to this, at the true icc, before no gate meets both (exact "
        "tables; a data set meets both only when its confidence region stays below it).",
        "",
        "| icc | " + " | ".join(f"{n} cases" for n in CASES) + " |",
        "|---:|" + "---:|" * len(CASES),
        *room_rows(),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20261214)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    grid = [Point(icc, n, r) for icc in ICCS for n in CASES for r in RUNS]
    streams = np.random.SeedSequence(args.seed).spawn(len(grid))
    start = time.perf_counter()
    points = []
    for point, stream in zip(grid, streams, strict=True):
        points.append(study(point, args.reps, np.random.default_rng(stream)))
        print(f"icc {point.icc:g} n {point.cases} runs {point.runs}: {point.exceed}/"
              f"{point.gates} over, {point.gates}/{point.reps} gates, {point.both} "
              f"meet both", flush=True)  # fmt: skip
    text = render(points, args.reps, args.seed, time.perf_counter() - start)
    root = Path(__file__).resolve().parent.parent
    out = args.out or root / "reports" / "recommend-coverage.md"
    out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
