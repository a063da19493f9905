"""Coverage of the corrected-pass-rate intervals: which method holds its nominal level?

For every point of a grid (true pass rate, judge sensitivity and specificity, labelled
items per class, items in the judged run) this measures how often each method's 95%
interval contains the true pass rate:

- closed-form methods (``lang-reiczigel``, ``delta`` and the two wrong baselines) *exactly*,
  by enumerating every possible outcome (judged passes, true positives, true negatives)
  weighted by its binomial probability (outcomes below 1e-10 dropped; the dropped mass is
  at most 3e-10 per point);
- simulation methods (``bootstrap``, ``jeffreys-simulation``) by Monte Carlo: `reps` data
  sets per point, seeded, each with its own simulated interval.

Two label designs. *Per class*: a batch of m1 truly passing and one of m0 truly failing
items (the grid's labelled pairs). *Random sample*: N items drawn at random from the judged
population, so m0 ~ Binomial(N, 1 - pass rate) (about 3 truly failing items in 60 at a 95%
pass rate); the coverage is exact there too, every m0 from 1 to N - 1 enumerated with its
binomial weight (both classes needed for a correction; the share of samples without one
is reported). Both designs run the shipped method (``auto``), the method shipped before
(``lang-reiczigel``) and the exact box in the same run.

The wrong baselines show what the study catches: ``known`` treats the measured
sensitivity and specificity as exact (no calibration error); ``calibration-only`` treats the
observed rate as exact (what judgy's corrected interval does, the issue's 79.5%).

Writes reports/calibrate-coverage.md. Usage:
    python experiments/calibrate_coverage.py [--reps 300] [--draws 2000] [--seed 20261212]
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
import numpy.typing as npt
from scipy import stats

from gatecal._analyses.calibrate.correct import CORRECTION_METHODS, corrected_intervals

FloatArray = npt.NDArray[np.float64]

PASS_RATES = (0.5, 0.8, 0.95, 0.99, 1.0)
SENSITIVITIES = (0.85, 0.97)
SPECIFICITIES = (0.6, 0.9)
LABELLED = ((20, 20), (50, 50), (20, 50), (50, 20))  # (truly passing, truly failing) items
RUN_SIZES = (100, 500)
CLOSED_FORM = ("auto", "lang-reiczigel", "exact-box", "delta", "known", "calibration-only")
SIMULATED = ("bootstrap", "jeffreys-simulation")
METHODS = CLOSED_FORM[:4] + SIMULATED + CLOSED_FORM[4:]
SAMPLE_SIZES = (40, 60, 100)  # random-sample design: labelled items in all
SAMPLE_RATES = (0.5, 0.8, 0.95, 0.99)  # (at 1.0 no truly failing item is ever drawn)
SAMPLE_METHODS = ("auto", "lang-reiczigel", "exact-box")
CUT = 1e-10
SEED = 20261212


@dataclass(frozen=True, slots=True)
class Point:
    pass_rate: float
    sensitivity: float
    specificity: float
    m1: int
    m0: int
    n: int


def grid() -> list[Point]:
    return [
        Point(pi, se, sp, m1, m0, n)
        for pi, se, sp, (m1, m0), n in itertools.product(
            PASS_RATES, SENSITIVITIES, SPECIFICITIES, LABELLED, RUN_SIZES
        )
    ]


def baseline_intervals(
    k: FloatArray, n: float, tp: FloatArray, m1: float, tn: FloatArray, m0: float,
    *, confidence: float, which: str,
) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    """Two wrong intervals: Wald with only one of the two sources of sampling error."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p, se, sp = k / n, tp / m1, tn / m0
    youden = se + sp - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.clip((p + sp - 1.0) / youden, 0.0, 1.0)
        if which == "known":
            var = p * (1 - p) / n
        else:
            var = pi**2 * se * (1 - se) / m1 + (1 - pi) ** 2 * sp * (1 - sp) / m0
        half = z * np.sqrt(var) / np.abs(youden)
        centre = (p + sp - 1.0) / youden
        ok = youden > 0
        low = np.where(ok, np.clip(centre - half, 0, 1), 0.0)
        high = np.where(ok, np.clip(centre + half, 0, 1), 1.0)
    return low, high


def _intervals(
    method: str, k: FloatArray, pt: Point, tp: FloatArray, tn: FloatArray, confidence: float
) -> tuple[FloatArray, FloatArray]:
    if method in ("known", "calibration-only"):
        return baseline_intervals(k, pt.n, tp, pt.m1, tn, pt.m0, confidence=confidence,
                                  which=method)  # fmt: skip
    return corrected_intervals(k, pt.n, tp, pt.m1, tn, pt.m0, confidence=confidence,
                               method=method)  # fmt: skip


def exact_coverage(method: str, pt: Point, confidence: float = 0.95) -> tuple[float, float]:
    """(coverage, mean width) of a closed-form method, exactly, by enumerating outcomes."""
    cover, width, _ = _exact_coverage(method, pt, confidence)
    return cover, width


def _exact_coverage(method: str, pt: Point, confidence: float = 0.95) -> tuple[float, float, float]:
    """(coverage, mean width, share of zero-width intervals), by enumerating outcomes."""
    q = pt.pass_rate * pt.sensitivity + (1 - pt.pass_rate) * (1 - pt.specificity)
    axes = []
    for size, prob in ((pt.n, q), (pt.m1, pt.sensitivity), (pt.m0, pt.specificity)):
        x = np.arange(size + 1)
        w = stats.binom.pmf(x, size, prob)
        axes.append((x[w > CUT].astype(np.float64), w[w > CUT]))
    (k, wk), (tp, w1), (tn, w0) = axes
    weight = wk[:, None, None] * w1[None, :, None] * w0[None, None, :]
    low, high = _intervals(method, k[:, None, None], pt, tp[None, :, None], tn[None, None, :],
                           confidence)  # fmt: skip
    covered = (low <= pt.pass_rate + 1e-12) & (pt.pass_rate - 1e-12 <= high)
    total = float(weight.sum())
    return (
        float((weight * covered).sum()) / total,
        float((weight * (high - low)).sum()) / total,
        float((weight * ~(high > low)).sum()) / total,
    )


@dataclass(frozen=True, slots=True)
class SamplePoint:
    """Random-sample design: `labels` items drawn from the judged population."""

    pass_rate: float
    sensitivity: float
    specificity: float
    labels: int
    n: int


def sample_grid() -> list[SamplePoint]:
    return [
        SamplePoint(pi, se, sp, size, n)
        for pi, se, sp, size, n in itertools.product(
            SAMPLE_RATES, SENSITIVITIES, SPECIFICITIES, SAMPLE_SIZES, RUN_SIZES
        )
    ]


def sample_coverage(
    method: str, sp_: SamplePoint, confidence: float = 0.95
) -> tuple[float, float, float, float]:
    """(coverage, mean width, zero-width share, share of samples missing a class), exactly:
    every truly failing count m0 in 1..N-1 with its binomial weight, given both classes."""
    m0s = np.arange(1, sp_.labels)
    weights = stats.binom.pmf(m0s, sp_.labels, 1 - sp_.pass_rate)
    keep = weights > CUT
    cover = width = zero = 0.0
    for m0, w in zip(m0s[keep].tolist(), weights[keep].tolist(), strict=True):
        pt = Point(sp_.pass_rate, sp_.sensitivity, sp_.specificity, sp_.labels - m0, m0, sp_.n)
        c, wd, z = _exact_coverage(method, pt, confidence)
        cover, width, zero = cover + w * c, width + w * wd, zero + w * z
    total = float(weights[keep].sum())
    missing = max(0.0, float(1.0 - weights.sum()))
    return cover / total, width / total, zero / total, missing


def simulated_coverage(
    method: str, pt: Point, rng: np.random.Generator, *, reps: int, draws: int,
    confidence: float = 0.95,
) -> tuple[float, float]:  # fmt: skip
    """(coverage, mean width) of any method by Monte Carlo over `reps` data sets."""
    q = pt.pass_rate * pt.sensitivity + (1 - pt.pass_rate) * (1 - pt.specificity)
    k = rng.binomial(pt.n, q, reps).astype(np.float64)
    tp = rng.binomial(pt.m1, pt.sensitivity, reps).astype(np.float64)
    tn = rng.binomial(pt.m0, pt.specificity, reps).astype(np.float64)
    low, high = corrected_intervals(k, pt.n, tp, pt.m1, tn, pt.m0, confidence=confidence,
                                    method=method, rng=rng, draws=draws)  # fmt: skip
    covered = (low <= pt.pass_rate) & (pt.pass_rate <= high)
    return float(covered.mean()), float((high - low).mean())


def sample_study() -> dict[str, list[tuple[float, float, float, float]]]:
    return {m: [sample_coverage(m, pt) for pt in sample_grid()] for m in SAMPLE_METHODS}


def study(reps: int, draws: int, seed: int) -> dict[str, list[tuple[float, float]]]:
    points = grid()
    streams = np.random.default_rng(seed).spawn(len(points))
    out: dict[str, list[tuple[float, float]]] = {m: [] for m in METHODS}
    for pt, stream in zip(points, streams, strict=True):
        for method in METHODS:
            if method in SIMULATED:
                out[method].append(simulated_coverage(method, pt, stream, reps=reps, draws=draws))
            else:
                out[method].append(exact_coverage(method, pt))
    return out


def _subset(points: list[Point], results: list[tuple[float, float]], keep: object) -> list[float]:
    return [c for p, (c, _) in zip(points, results, strict=True) if keep(p)]  # type: ignore[operator]


def render(
    results: dict[str, list[tuple[float, float]]],
    reps: int,
    draws: int,
    seed: int,
    sampled: dict[str, list[tuple[float, float, float, float]]],
) -> str:
    points = grid()
    lines = [
        "# Coverage of the corrected pass rate's 95% interval",
        "",
        "Regenerate: `python experiments/calibrate_coverage.py` "
        f"(`--reps {reps} --draws {draws} --seed {seed}`).",
        "",
        f"Grid: {len(points)} points: true pass rate {PASS_RATES}, judge sensitivity "
        f"{SENSITIVITIES}, specificity {SPECIFICITIES}, labelled (pass, fail) items "
        f"{LABELLED}, judged items in the run {RUN_SIZES}. Closed-form methods: exact coverage "
        "(every outcome enumerated). Simulation methods: "
        f"{reps} seeded data sets per point, {draws} draws per interval (coverage standard "
        f"error about {100 * (0.05 * 0.95 / reps) ** 0.5:.1f} points).",
        "",
        "| method | mean coverage | lowest | share of points below 93% | lowest, 20 labels "
        "per class | lowest, pass rate >= 0.95 | mean width |",
        "|---|---|---|---|---|---|---|",
    ]
    for method in METHODS:
        res = results[method]
        cov = [c for c, _ in res]
        width = float(np.mean([w for _, w in res]))
        small = _subset(points, res, lambda p: p.m1 == 20 and p.m0 == 20)
        edge = _subset(points, res, lambda p: p.pass_rate >= 0.95)
        below = sum(c < 0.93 for c in cov) / len(cov)
        how = "simulated" if method in SIMULATED else "exact"
        lines.append(
            f"| {method} ({how}) | {np.mean(cov):.3f} | {min(cov):.3f} | {100 * below:.0f}% | "
            f"{min(small):.3f} | {min(edge):.3f} | {width:.3f} |"
        )
    lines += [
        "",
        "`known` ignores the calibration's sampling error (sensitivity and specificity taken "
        "as exact); `calibration-only` ignores the judged run's (judgy's interval does this). "
        "Both are shown to prove the study can tell a wrong method; neither is offered.",
        "",
        "`auto` (shipped) is Lang-Reiczigel with 20 or more labelled items in each class and a "
        "positive width, the exact box otherwise; `exact-box` is the range of the corrected "
        "rate over three Clopper-Pearson intervals at level 0.95^(1/3) each (valid under "
        "both designs, conservative); `lang-reiczigel` is the method shipped before.",
        "",
        "## Random-sample design",
        "",
        f"Grid: {len(sample_grid())} points: true pass rate {SAMPLE_RATES}, Se "
        f"{SENSITIVITIES}, Sp {SPECIFICITIES}, labelled items drawn at random from the judged "
        f"population {SAMPLE_SIZES}, judged items in the run {RUN_SIZES}. Exact coverage, "
        "every number of truly failing labels enumerated (given at least one of each class).",
        "",
        "| method | mean coverage | lowest | share of points below 93% | lowest, pass rate >= "
        "0.95 | zero-width intervals (largest share at a point) | mean width |",
        "|---|---|---|---|---|---|---|",
    ]
    spoints = sample_grid()
    for method in SAMPLE_METHODS:
        got = sampled[method]
        cov = [c for c, _, _, _ in got]
        edge = [c for sp_, (c, _, _, _) in zip(spoints, got, strict=True) if sp_.pass_rate >= 0.95]
        below = sum(c < 0.93 for c in cov) / len(cov)
        lines.append(
            f"| {method} | {np.mean(cov):.3f} | {min(cov):.3f} | {100 * below:.0f}% | "
            f"{min(edge):.3f} | {max(z for _, _, z, _ in got):.4f} | "
            f"{np.mean([w for _, w, _, _ in got]):.3f} |"
        )
    missing = max(m for _, _, _, m in sampled[SAMPLE_METHODS[0]])
    lines += [
        "",
        f"Samples with no truly failing (or no truly passing) item, where no correction is "
        f"made: at most {100 * missing:.1f}% of them at a point.",
        "",
        "| method | pass rate | Se | Sp | labelled items | run | coverage | width |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method in SAMPLE_METHODS:
        ranked_s = sorted(zip(spoints, sampled[method], strict=True), key=lambda t: t[1][0])[:3]
        for sp_, (c, w, _, _) in ranked_s:
            lines.append(
                f"| {method} | {sp_.pass_rate} | {sp_.sensitivity} | {sp_.specificity} | "
                f"{sp_.labels} | {sp_.n} | {c:.3f} | {w:.3f} |"
            )
    lines += [
        "",
        "## Worst points per method (per-class design)",
        "",
        "| method | pass rate | Se | Sp | labelled (pass, fail) | run | coverage |",
        "|---|---|---|---|---|---|---|",
    ]
    for method in METHODS:
        ranked = sorted(zip(points, results[method], strict=True), key=lambda t: t[1][0])[:3]
        for p, (c, _) in ranked:
            lines.append(
                f"| {method} | {p.pass_rate} | {p.sensitivity} | {p.specificity} | "
                f"({p.m1}, {p.m0}) | {p.n} | {c:.3f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    assert set(CORRECTION_METHODS) <= set(METHODS)
    start = time.perf_counter()
    results = study(args.reps, args.draws, args.seed)
    text = render(results, args.reps, args.draws, args.seed, sample_study())
    out = Path(__file__).resolve().parent.parent / "reports" / "calibrate-coverage.md"
    out.write_text(text, encoding="utf-8")
    print(text)
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
