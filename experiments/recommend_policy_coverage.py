"""Coverage of ``recommend --policies``: is the chosen rule's gate within budget in truth?

Known-good runs are drawn from a known truth, as in ``experiments/recommend_coverage.py``:
each run draws its case failure rate from a Beta with mean RATE and intra-run correlation
icc (exactly RATE at icc 0) and each of the cases fails independently at that rate; in
the *own rates* rows each case has its own rate instead (drawn once per data set from a
Beta with mean RATE and shape HET_SHAPE, as recommend's study draws them: most cases near
0, a few flaky) and runs are independent. Every
data set goes through :func:`gatecal.recommend_policy` with the default candidate rules
(single, rerun-failing-1, rerun-failing-2, repeat-2-of-3, pass^2), the default targets
(false alarm <= 0.05, detection >= 0.95) and a regression of FAILING cases failing a code
check. For every rule's gate (the strictest within the budget by its bound) the *true*
false alarm and detection are computed exactly at the truth
(:func:`gatecal._analyses.recommend.policy.rule_rates`, pinned to exact fractions and the
policies engine in tests/analyses/recommend/test_policy.py; with own rates, each case's failure
under the rule at its own rate and the Poisson-binomial count). Per row:

- **chosen over**: data sets whose chosen rule's gate has a true false alarm above the
  budget, as a share of all data sets (what the per-gate bound promises to keep rare:
  recommend's own gate got at most 1.0% at any row of its study, at most 0.67% with 40
  runs or more);
- **any over**: data sets where some candidate's gate is over budget in truth, and which
  (rule: data sets);
- **chosen**: data sets given a rule meeting both targets, and how often each rule;
- **truly meets**: data sets whose chosen rule's gate meets both targets in truth;
- the worst true false alarm of a chosen gate, the wall time per data set.

Seeded: one root seed, one spawned stream per row; the same seed and replicate count give
the same table (the wall times vary with the machine).

Usage: python experiments/recommend_policy_coverage.py [--reps 3] [--seed 20261201]
       (the default, 3 replicates per row, runs in under a minute on a shared 2-core
       machine and prints; --out FILE writes the report, as for
       reports/recommend-policy-coverage.md with --reps 100, about 25 minutes)
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gatecal import parse_policy, recommend_policy
from gatecal._analyses.noise.tails import gate_fail_probabilities
from gatecal._analyses.recommend.policy import DEFAULT_RULES, _case_fail, rule_rates
from gatecal._engines.exact import pass_count_pmf
from gatecal.readers._columns import VerdictColumns
from gatecal.readers._data import RunsData
from gatecal.readers._verdict import Verdict

BUDGET, POWER = 0.05, 0.95
#: (cases, runs, rate, icc, failing): the nightly suite's shape and noise (12 cases, a
#: rate of 0.07, 3 cases regressing), independent and correlated runs, a noisier judge
#: with more runs (the bounds tighter, the gates nearer the budget) and a wider suite.
ROWS = (
    (12, 40, 0.07, 0.0, 3),
    (12, 40, 0.07, 0.03, 3),
    (12, 100, 0.15, 0.0, 3),
    (20, 40, 0.05, 0.1, 5),
    (12, 40, 0.07, None, 3),
    (20, 40, 0.05, None, 5),
)
HET_SHAPE = 0.6


@dataclass
class Row:
    cases: int
    runs: int
    rate: float
    icc: float | None  # None: each case its own rate, runs independent
    failing: int
    reps: int = 0
    chosen_over: int = 0
    any_over: int = 0
    over_by_rule: Counter[str] = field(default_factory=Counter)
    chosen: Counter[str] = field(default_factory=Counter)
    truly_meets: int = 0
    worst: float = 0.0
    seconds: float = 0.0


def runs_data(failed: np.ndarray) -> RunsData:
    """The in-memory runs the readers would build from a long table of these verdicts."""
    verdicts = tuple(
        Verdict(build="healthy", run=f"r{i}", case=f"c{j:03d}", passed=not bool(failed[i, j]))
        for i in range(failed.shape[0])
        for j in range(failed.shape[1])
    )
    return RunsData(verdicts=VerdictColumns.of(verdicts))


def draw(row: Row, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None]:
    """Failed[run, case], and the cases' own rates (None when they share each run's)."""
    if row.icc is None:
        own = rng.beta(HET_SHAPE, HET_SHAPE * (1 - row.rate) / row.rate, size=row.cases)
        return rng.random((row.runs, row.cases)) < own[None, :], own
    if row.icc == 0:
        x = np.full(row.runs, row.rate)
    else:
        scale = (1 - row.icc) / row.icc
        x = rng.beta(row.rate * scale, (1 - row.rate) * scale, size=row.runs)
    return rng.random((row.runs, row.cases)) < x[:, None], None


Truth = dict[str, tuple[np.ndarray, np.ndarray]]


def shared_truth(row: Row) -> Truth:
    """Every rule's true false alarm and detection, k = 0..n, at a shared (rate, icc)."""
    out = {}
    for rule in DEFAULT_RULES:
        policy = parse_policy(rule)
        fa, _ = rule_rates(policy, row.cases, row.rate, row.icc or 0.0)
        det, _ = rule_rates(policy, row.cases, row.rate, row.icc or 0.0, broken=row.failing)
        out[rule] = (fa, det)
    return out


def own_truth(own: np.ndarray, failing: int) -> Truth:
    """The same when case i fails every evaluation at its own rate `own[i]`."""
    out = {}
    for rule in DEFAULT_RULES:
        fail, _ = _case_fail(parse_policy(rule), own)
        fa = gate_fail_probabilities(pass_count_pmf(1.0 - fail, fail))
        fail_reg = np.concatenate((np.ones(failing), fail[failing:]))
        det = gate_fail_probabilities(pass_count_pmf(1.0 - fail_reg, fail_reg))
        out[rule] = (fa, det)
    return out


def study(row: Row, reps: int, rng: np.random.Generator) -> Row:
    truth = None if row.icc is None else shared_truth(row)
    start = time.perf_counter()
    for _ in range(reps):
        failed, own = draw(row, rng)
        data = runs_data(failed)
        now = truth if own is None else own_truth(own, row.failing)
        assert now is not None
        got = recommend_policy(data, regression=str(row.failing))
        over = [
            r.rule for r in got.rows if r.k_min is not None and now[r.rule][0][r.k_min] > BUDGET
        ]
        row.any_over += bool(over)
        row.over_by_rule.update(over)
        choice = got.choice
        row.chosen[got.chosen or "none"] += 1
        if choice is not None and choice.k_min is not None:
            fa, det = now[choice.rule][0][choice.k_min], now[choice.rule][1][choice.k_min]
            row.chosen_over += fa > BUDGET
            row.truly_meets += fa <= BUDGET and det >= POWER
            row.worst = max(row.worst, float(fa))
        row.reps += 1
    row.seconds = (time.perf_counter() - start) / reps
    return row


def render(rows: list[Row], reps: int, seed: int, elapsed: float) -> str:
    lines = [
        "# recommend --policies: the chosen rule's gate against the truth",
        "",
        f"`python experiments/recommend_policy_coverage.py --reps {reps} --seed {seed}` "
        f"({elapsed / 60:.1f} minutes). Defaults: false alarm <= {BUDGET}, detection >= "
        f"{POWER}, candidates {', '.join(DEFAULT_RULES)}; {reps} data sets per row.",
        "",
        "| cases x runs | rate, icc, failing | chosen over | any over (rule: data sets) | "
        "chosen (rule: data sets) | truly meets | worst chosen FA | s/data set |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        chosen = ", ".join(f"{rule}: {n}" for rule, n in sorted(r.chosen.items()))
        over = ", ".join(f"{rule}: {n}" for rule, n in sorted(r.over_by_rule.items()))
        lines.append(
            f"| {r.cases}x{r.runs} | {r.rate:g}, "
            f"{'own rates' if r.icc is None else f'{r.icc:g}'}, {r.failing} | "
            f"{r.chosen_over}/{r.reps} | {r.any_over}/{r.reps}{f' ({over})' if over else ''} | "
            f"{chosen} | {r.truly_meets}/{r.reps} | {r.worst:.4f} | {r.seconds:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    streams = np.random.SeedSequence(args.seed).spawn(len(ROWS))
    start = time.perf_counter()
    rows = [
        study(Row(*spec), args.reps, np.random.default_rng(s))
        for spec, s in zip(ROWS, streams, strict=True)
    ]
    text = render(rows, args.reps, args.seed, time.perf_counter() - start)
    if args.out is not None:
        args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
