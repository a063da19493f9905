"""Coverage and power of the case-aware gate beside today's count gate, in one run.

Known-good runs are simulated with a known truth: each case has its own healthy failure
rate (the setting's), and whole runs may vary together (a logit run effect: in run t
every case's log-odds shift by ``sigma z_t``, z_t standard normal; a different mechanism
from the probit effect the gate assumes). From each data set's known-good runs:

- **count**: today's count gate, the strictest "at least k of n pass" whose one-sided
  99.5% profile-likelihood bound over (rate, icc) is within the budget
  (:class:`gatecal._analyses.noise.bounds.NoiseBounds`, what ``check --gate count`` uses);
- **cases**: the case-aware gate (:func:`gatecal._analyses.noise.casegate.case_gate` on
  :func:`gatecal._analyses.noise.cases.case_spread`);
- **check**: check's default gate: the case-aware gate when the known-good runs show
  that cases differ (and it can fail a build), else the count gate;
- **oracle**: knows every case's rate and the run effect: the same likelihood-ratio
  statistic with the true rates, its threshold from the true distribution (the best a
  gate of this form can do; not randomised).

Per setting and gate: **over budget**, the share of data sets whose gate has a true false
alarm above the budget 0.05 (target: at most 0.01 with 40 runs or more, 0.05
everywhere), and **detection**, the mean over data sets of the gate's true probability of
failing a CI run in which 2 stable cases (the two of lowest true rate) are broken (always
fail), the others healthy. True probabilities are exact (weighted Poisson-binomial, the
run effect by 40-node Gauss-Hermite quadrature).

The first VERIFY data sets of every setting also run :func:`gatecal.check_gate` on the
in-memory runs and assert that its default gate is the one this study counts.

Seeded: one root seed, one spawned stream per setting.

Usage: python experiments/case_gate_coverage.py [--reps 60] [--seed 20261205] [--runs 30,60]
       python experiments/case_gate_coverage.py --runs 40 --reps 400 \
           --out reports/case-gate-coverage-40-runs.md   (the 1% claim; about 25 minutes)
       (about 7 minutes on a shared 2-core machine at 60 replicates)
       python experiments/case_gate_coverage.py --quick   (5 replicates, printed only)
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gatecal._analyses.noise.bounds import noise_bounds
from gatecal._analyses.noise.casegate import case_gate, weighted_tails, weights
from gatecal._analyses.noise.cases import case_spread
from gatecal._model.gates import strictest_within
from gatecal.readers._columns import VerdictColumns
from gatecal.readers._data import RunsData
from gatecal.readers._verdict import Verdict

BUDGET = 0.05
BROKEN = 2
VERIFY = 1
GH = np.polynomial.hermite_e.hermegauss(40)


@dataclass
class Gate:
    over: int = 0
    detection: float = 0.0


@dataclass
class Setting:
    name: str
    rates: tuple[float, ...]
    runs: int
    sigma: float = 0.0
    reps: int = 0
    chose_cases: int = 0
    gates: dict[str, Gate] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)


def homogeneous(n: int, rate: float) -> tuple[float, ...]:
    return (rate,) * n


def systematic_suite() -> tuple[float, ...]:
    """A temperature-0-like judge: 16 cases it gets right every time but rarely, 4 it
    gets wrong every time but rarely."""
    return (0.002,) * 16 + (0.99,) * 4


def mixed_suite() -> tuple[float, ...]:
    """A mixed judge: 12 stable cases, 4 flaky ones, 4 systematic."""
    return (0.005,) * 12 + (0.05, 0.1, 0.2, 0.35) + (0.97,) * 4


def beta_suite(rng: np.random.Generator, n: int = 20) -> tuple[float, ...]:
    """Rates drawn from a Beta with mean 0.03 and shape 0.6 (most near 0, a few flaky)."""
    return tuple(rng.beta(0.6, 0.6 * 0.97 / 0.03, size=n).tolist())


def run_rates_true(rates: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Each case's rate at each quadrature node of the logit run effect, and the weights."""
    if sigma <= 0:
        return rates[None, :], np.ones(1)
    x, w = GH
    logit = np.log(rates / (1 - rates))
    return 1.0 / (1.0 + np.exp(-(logit[None, :] + sigma * x[:, None]))), w / w.sum()


def true_tail(rates: np.ndarray, units: np.ndarray, sigma: float) -> np.ndarray:
    rows, w = run_rates_true(rates, sigma)
    return np.asarray(w @ weighted_tails(rows, units))


def true_fa_det(rates: np.ndarray, units: np.ndarray, threshold: int, sigma: float,
                broken: np.ndarray) -> tuple[float, float]:  # fmt: skip
    """True false alarm and detection (the `broken` cases always failing) of "fail when
    the failing cases' units reach `threshold`"."""
    fa_tail = true_tail(rates, units, sigma)
    fa = float(fa_tail[min(threshold, fa_tail.size - 1)]) if threshold > 0 else 1.0
    need = threshold - int(units[broken].sum())
    if need <= 0:
        return fa, 1.0
    rest = true_tail(rates[~broken], units[~broken], sigma)
    return fa, float(rest[min(need, rest.size - 1)])


def simulate(rates: np.ndarray, runs: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Known-good runs: 1 where a case failed."""
    logit = np.log(rates / (1 - rates))
    z = rng.standard_normal((runs, 1)) * sigma
    p = 1.0 / (1.0 + np.exp(-(logit[None, :] + z)))
    return np.asarray(rng.random((runs, rates.size)) < p, dtype=np.int8)


def runs_data(failed: np.ndarray) -> RunsData:
    verdicts = tuple(
        Verdict(build="healthy", run=f"r{i}", case=f"c{j:03d}", passed=not bool(failed[i, j]))
        for i in range(failed.shape[0])
        for j in range(failed.shape[1])
    )
    return RunsData(verdicts=VerdictColumns.of(verdicts))


def one(setting: Setting, rates: np.ndarray, rng: np.random.Generator, verify: bool) -> None:
    n = rates.size
    failed = simulate(rates, setting.runs, setting.sigma, rng)
    broken = np.zeros(n, dtype=bool)
    broken[np.argsort(rates, kind="stable")[:BROKEN]] = True
    start = time.perf_counter()
    # today's count gate
    bounds = noise_bounds(failed.sum(axis=1), np.full(setting.runs, n))
    k_min = strictest_within(list(bounds.false_alarms(n)), BUDGET)
    ones = np.ones(n, dtype=np.int64)
    count = true_fa_det(rates, ones, n - k_min + 1, setting.sigma, broken)
    # the case-aware gate
    names = [f"c{j:03d}" for j in range(n)]
    spread = case_spread(names, 1 - failed)
    gate = case_gate(spread, false_alarm=BUDGET)
    units = np.asarray(gate.units, dtype=np.int64)
    cases = true_fa_det(rates, units, gate.threshold, setting.sigma, broken)
    setting.seconds.append(time.perf_counter() - start)
    use_cases = spread.heterogeneous and gate.can_fail
    check = cases if use_cases else count
    setting.chose_cases += use_cases
    for name, (fa, det) in (("count", count), ("cases", cases), ("check", check)):
        g = setting.gates.setdefault(name, Gate())
        g.over += fa > BUDGET
        g.detection += det
    if verify:
        from gatecal import check_gate

        current = np.zeros((1, n), dtype=np.int8)
        res = check_gate(runs_data(current), runs_data(failed), false_alarm=BUDGET)
        assert res.gate_kind == ("cases" if use_cases else "count"), (res.gate_kind, use_cases)
        if use_cases:
            assert res.threshold is not None
            assert abs(res.threshold - gate.threshold * gate.unit) < 1e-9
        else:
            assert res.k_min == k_min


def oracle(setting: Setting, rates: np.ndarray) -> tuple[float, float]:
    """The oracle's gate: true rates' weights, the threshold from the truth."""
    n = rates.size
    w = weights(rates, min(0.5, 1.0 / n))
    units = np.rint(w * 50).astype(np.int64)
    tail = true_tail(rates, units, setting.sigma)
    within = np.flatnonzero(tail[1:] <= BUDGET)
    threshold = int(within[0]) + 1 if within.size else int(units.sum()) + 1
    broken = np.zeros(n, dtype=bool)
    broken[np.argsort(rates, kind="stable")[:BROKEN]] = True
    return true_fa_det(rates, units, threshold, setting.sigma, broken)


def study(setting: Setting, reps: int, rng: np.random.Generator, beta: bool) -> float:
    oracle_det = 0.0
    for r in range(reps):
        rates = np.asarray(beta_suite(rng) if beta else setting.rates, dtype=np.float64)
        one(setting, rates, rng, verify=r < VERIFY)
        oracle_det += oracle(setting, rates)[1]
        setting.reps += 1
    return oracle_det / reps


def settings(run_counts: tuple[int, ...] = (30, 60)) -> list[tuple[Setting, bool]]:
    out = []
    for runs in run_counts:
        out += [
            (Setting("homogeneous 0.03", homogeneous(20, 0.03), runs), False),
            (
                Setting(
                    "homogeneous 0.03, runs vary (sigma 0.5)", homogeneous(20, 0.03), runs, 0.5
                ),
                False,
            ),
            (Setting("systematic (temperature-0-like)", systematic_suite(), runs), False),
            (Setting("mixed", mixed_suite(), runs), False),
            (Setting("mixed, runs vary (sigma 0.5)", mixed_suite(), runs, 0.5), False),
            (Setting("mixed, runs vary more (sigma 1)", mixed_suite(), runs, 1.0), False),
            (Setting("Beta(0.6, 19.4) rates", (), runs), True),
        ]
    return out


def render(
    rows: list[tuple[Setting, float]], reps: int, seed: int, elapsed: float, command: str
) -> str:
    lines = [
        "# The case-aware gate beside the count gate: coverage and power",
        "",
        f"Generated by `{command}`.",
        f"{reps} simulated data sets per row, 20 cases; false-alarm budget {BUDGET}; the "
        f"regression: {BROKEN} stable cases (the two of lowest true rate) broken, always "
        "failing. Each cell is **count / cases / check**: today's count gate, the "
        "case-aware gate, and check's default (the case-aware gate when the known-good runs "
        "show that cases differ, else the count gate).",
        "",
        "- **over budget**: data sets whose gate has a true false alarm above the budget, "
        "of all (target: at most 1% with 40 runs or more, 5% everywhere);",
        "- **detection**: the mean true probability that the gate fails a CI run with the "
        "regression; **oracle**: the same statistic with every case's true rate and the "
        "threshold from the truth;",
        "- **cases chosen**: share of data sets where check's default is the case-aware "
        "gate; **time**: both gates' bounds per data set, median (s).",
        "",
        "Settings: *homogeneous*: every case at 0.03; *systematic*: 16 cases at 0.002, 4 at "
        "0.99; *mixed*: 12 at 0.005, 4 flaky at 0.05, 0.1, 0.2, 0.35, 4 at 0.97; *Beta*: each "
        "data set's 20 rates drawn from Beta(0.6, 19.4) (mean 0.03); *runs vary*: every "
        "case's log-odds shift by sigma z in each run (z standard normal).",
        "",
        "| setting | runs | over budget | detection | oracle | cases chosen | time (s) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s, oracle_det in rows:
        over = " / ".join(f"{s.gates[g].over}/{s.reps}" for g in ("count", "cases", "check"))
        det = " / ".join(
            f"{s.gates[g].detection / s.reps:.3f}" for g in ("count", "cases", "check")
        )
        lines.append(
            f"| {s.name} | {s.runs} | {over} | {det} | {oracle_det:.3f} | "
            f"{s.chose_cases / s.reps:.2f} | {float(np.median(s.seconds)):.2f} |"
        )
    worst = {g: max(s.gates[g].over / s.reps for s, _ in rows) for g in ("count", "cases", "check")}
    many = [s for s, _ in rows if s.runs >= 40]
    worst40 = {g: max((s.gates[g].over / s.reps for s in many), default=0.0) for g in worst}
    pooled = {g: (sum(s.gates[g].over for s in many), sum(s.reps for s in many)) for g in worst}
    lines += [
        "",
        "Largest share over budget at one row: "
        + ", ".join(f"{g} {v:.3f}" for g, v in worst.items())
        + "; with 40 runs or more: "
        + ", ".join(f"{g} {v:.3f}" for g, v in worst40.items())
        + f". A share of k/{reps} has a binomial standard error of about "
        f"{(0.01 * 0.99 / reps) ** 0.5:.3f} at 0.01. Study run time {elapsed / 60:.1f} min.",
    ]
    if many:
        lines += [
            "",
            "Over budget with 40 runs or more, all rows together (95% Wilson interval): "
            + "; ".join(
                f"{g} {k}/{n} = {k / n:.4f} [{_wilson(k, n)[0]:.4f}, {_wilson(k, n)[1]:.4f}]"
                for g, (k, n) in pooled.items()
            )
            + ".",
        ]
    return "\n".join(lines) + "\n"


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95% Wilson score interval of k successes in n."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=60)
    parser.add_argument("--seed", type=int, default=20261205)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quick", action="store_true", help="5 replicates, printed only")
    parser.add_argument(
        "--runs", default="30,60", help="known-good runs of each setting, comma-separated"
    )
    parser.add_argument(
        "--only", default="", help="only the settings whose name starts with this (printed only)"
    )
    args = parser.parse_args()
    reps = 5 if args.quick else args.reps
    run_counts = tuple(int(r) for r in args.runs.split(","))
    grid = settings(run_counts)
    streams = np.random.SeedSequence(args.seed).spawn(len(grid))
    start = time.perf_counter()
    rows = []
    for (setting, beta), stream in zip(grid, streams, strict=True):
        if not setting.name.startswith(args.only):
            continue  # (each setting keeps its own stream either way)
        oracle_det = study(setting, reps, np.random.default_rng(stream), beta)
        rows.append((setting, oracle_det))
        names = ("count", "cases", "check")
        print(f"{setting.name} runs {setting.runs}: over "
              f"{[setting.gates[g].over for g in names]}, detection "
              f"{[round(setting.gates[g].detection / reps, 3) for g in names]}"
              f", oracle {oracle_det:.3f}", flush=True)  # fmt: skip
    command = f"python experiments/case_gate_coverage.py --reps {reps} --seed {args.seed}"
    if run_counts != (30, 60):
        command += f" --runs {args.runs}"
    if args.out is not None:
        command += f" --out {args.out}"
    text = render(rows, reps, args.seed, time.perf_counter() - start, command)
    root = Path(__file__).resolve().parent.parent
    out = args.out or (
        None if args.quick or args.only else root / "reports" / "case-gate-coverage.md"
    )
    if out is not None:
        out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
