"""The sequential designs gsDesign checks: gatecal's boundaries, mapped to gsBinomialExact's.

gatecal's gate looks at S_j, the passing cases over j runs of `cases` cases each. gsDesign's
``gsBinomialExact`` looks at the number of "successes" after n.I_j observations; here a
success is a *failing* case, so its count is ``F_j = j cases - S_j`` with
``n.I_j = j cases`` and the per-case success probability ``theta`` = the per-case failure
probability (every case alike, no run-to-run correlation: the one-proportion overlap).
gatecal fails the build at ``S_j <= fail_at_most``, i.e. ``F_j >= b_j = j cases -
fail_at_most``: gsDesign's upper bound; it passes at ``S_j >= pass_at_least``, i.e.
``F_j <= a_j = j cases - pass_at_least``: gsDesign's lower bound.

Writes, into the folder given (default tests/fixtures/gsdesign/):

``designs.csv``
    ``id, look, n_I, pass_at_least, fail_at_most, a, b``: one row per look of each design
    (sprt/pocock/obf from :func:`gatecal.design_sequential`, :func:`gatecal.wald_sprt`).
``thetas.csv``
    ``id, theta``: the per-case failure probabilities each design is evaluated at (the
    healthy flip, the regressed build's, and one between).
``sprt_calls.csv``
    ``id, p0, p1, alpha, beta, minn, maxn, thetas``: the ``binomialSPRT`` calls, gsDesign's
    own vignette and test examples and Wald comparisons from ``minn = 1`` (``thetas``: the
    extra rates its bounds are evaluated at, space separated, as the vignette's tables).

Every design is checked against gsBinomialExact's input rules first (and against the one
rule it does not check but needs, see :func:`check_gsdesign_rules`); a design that breaks
one is an error here, not a silent skip.

Usage: python experiments/gsdesign_reference/designs.py [OUT_DIR]
"""

from __future__ import annotations

import csv
import itertools
import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

import gatecal

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "gsdesign"


@dataclass(frozen=True)
class Spec:
    """One gatecal design: `kind` is sprt/pocock/obf (searched) or wald (Wald's own lines)."""

    id: str
    kind: str
    looks: int
    cases: int
    healthy: float  # per-case failure probability of a healthy build (the judge's flip)
    regressed: float  # per-case failure probability of a regressed build
    false_alarm: float = 0.05
    detection: float = 0.8


SPECS = (
    Spec("sprt5-c12", "sprt", 5, 12, 0.08, 0.25),
    Spec("pocock4-c20", "pocock", 4, 20, 0.05, 0.15),
    Spec("obf4-c20", "obf", 4, 20, 0.05, 0.15),
    Spec("sprt10-c1", "sprt", 10, 1, 0.1, 0.35),
    Spec("pocock3-c50", "pocock", 3, 50, 0.02, 0.08),
    Spec("obf6-c30", "obf", 6, 30, 0.1, 0.2),
    Spec("sprt20-c5", "sprt", 20, 5, 0.3, 0.5, false_alarm=0.01, detection=0.95),
    Spec("pocock20-c3", "pocock", 20, 3, 0.2, 0.45),
    Spec("obf2-c40", "obf", 2, 40, 0.03, 0.1),
    Spec("wald8-c10", "wald", 8, 10, 0.05, 0.2),
    Spec("wald15-c1", "wald", 15, 1, 0.1, 0.35, false_alarm=0.08, detection=0.8),
    Spec("wald20-c2", "wald", 20, 2, 0.02, 0.3, false_alarm=0.05, detection=0.9),
    # strict budgets: crossing probabilities down to 1e-14, where relative accuracy tells
    Spec("sprt6-c40", "sprt", 6, 40, 0.02, 0.15, false_alarm=1e-6, detection=0.999),
    Spec("obf5-c25", "obf", 5, 25, 0.02, 0.2, false_alarm=1e-7, detection=0.9999),
)


@dataclass(frozen=True)
class SprtCall:
    id: str
    p0: float
    p1: float
    alpha: float
    beta: float
    minn: int
    maxn: int
    thetas: tuple[float, ...]


SPRT_CALLS = (
    # vignettes/binomialSPRTExample.Rmd, "Response rate example" and its table's rates
    SprtCall("vignette-response", 0.1, 0.35, 0.08, 0.2, 10, 25, (0.15, 0.2, 0.25, 0.3, 0.4, 0.45)),
    # man/gsBinomialExact.Rd's example and tests/testthat/test-independent-test-binomialSPRT.R
    SprtCall("test-example", 0.05, 0.25, 0.1, 0.15, 10, 35, (0.1, 0.15, 0.2)),
    # the vignette's "Safety monitoring example" and its table's rates
    SprtCall("vignette-safety", 0.04, 0.1, 0.04, 0.2, 4, 75, (0.02, 0.06, 0.08, 0.12, 0.14, 0.16)),
    # from the first look: Wald's lines beside gatecal.wald_sprt's, one case per run
    SprtCall("wald-response-from1", 0.1, 0.35, 0.08, 0.2, 1, 25, ()),
    SprtCall("wald-test-from1", 0.05, 0.25, 0.1, 0.15, 1, 35, ()),
    SprtCall("wald-a-from1", 0.1, 0.35, 0.05, 0.2, 1, 15, ()),
    SprtCall("wald-b-from1", 0.02, 0.3, 0.05, 0.1, 1, 20, ()),
    SprtCall("wald-c-from1", 0.2, 0.3, 0.05, 0.2, 1, 60, ()),
)


def pass_pmf(cases: int, theta: float) -> list[float]:
    """One run's passing-case pmf when each case fails with probability `theta`: binomial
    (cases, 1 - theta), in exact fractions of the double `theta`, then rounded."""
    t = Fraction(theta)
    return [float(math.comb(cases, k) * (1 - t) ** k * t ** (cases - k)) for k in range(cases + 1)]


def build(spec: Spec) -> gatecal.SequentialGate:
    ph = np.array(pass_pmf(spec.cases, spec.healthy))
    pr = np.array(pass_pmf(spec.cases, spec.regressed))
    if spec.kind == "wald":
        return gatecal.wald_sprt(
            spec.looks, ph, pr, false_alarm=spec.false_alarm, detection=spec.detection
        )
    return gatecal.design_sequential(
        spec.kind, spec.looks, ph, pr, false_alarm=spec.false_alarm, detection=spec.detection
    )


def to_gsdesign(
    boundaries: tuple[gatecal.SequentialBoundary, ...], cases: int, counted: str
) -> list[tuple[int, int, int]]:
    """(n.I, a, b) per look. Counting failing cases (F_j): F_j <= a_j is gatecal's pass,
    F_j >= b_j its fail. Counting passing cases (S_j, the mirror): S_j <= a_j is its fail,
    S_j >= b_j its pass."""
    if counted == "failures":
        return [
            (j * cases, j * cases - bd.pass_at_least, j * cases - bd.fail_at_most)
            for j, bd in enumerate(boundaries, start=1)
        ]
    return [
        (j * cases, bd.fail_at_most, bd.pass_at_least) for j, bd in enumerate(boundaries, start=1)
    ]


def check_gsdesign_rules(rows: list[tuple[int, int, int]]) -> list[str]:
    """The rules gsBinomialExact (R/gsBinomialExact.R) checks on its input, and one more.

    Checked there: k >= 2; a >= -1 and b > 1 (``checkVector`` intervals); n.I - a > 0;
    b - a > 0; a, b and n.I - b non-decreasing. Not checked there but needed: before the last
    look its continuation region ``(a+1):(b-1)`` is an R sequence, which for ``b = a + 1``
    runs *downwards* over the two stopped counts a+1 and a and carries them on (its lower
    and upper probabilities then sum past 1); so ``b - a >= 2`` at every look but the last.
    Returns the rules broken ([] if none).
    """
    n = [r[0] for r in rows]
    a = [r[1] for r in rows]
    b = [r[2] for r in rows]
    broken = []
    if len(rows) < 2:
        broken.append("k >= 2")
    if min(a) < -1:
        broken.append("a >= -1")
    if min(b) <= 1:
        broken.append("b > 1")
    if min(x - y for x, y in zip(n, a, strict=True)) <= 0:
        broken.append("n.I - a > 0")
    if min(y - x for x, y in zip(a, b, strict=True)) <= 0:
        broken.append("b - a > 0")
    if min(y - x for x, y in zip(a[:-1], b[:-1], strict=True)) < 2:
        broken.append("b - a >= 2 before the last look")
    for name, seq in (("a", a), ("b", b), ("n.I - b", [x - y for x, y in zip(n, b, strict=True)])):
        if any(y < x for x, y in itertools.pairwise(seq)):
            broken.append(f"{name} non-decreasing")
    return broken


def representation(
    boundaries: tuple[gatecal.SequentialBoundary, ...], cases: int
) -> tuple[str, int, list[tuple[int, int, int]]]:
    """How much of the design gsBinomialExact takes: (counted, looks, rows).

    Every look if either count (failures first, then passes) meets its rules; else the
    longest first looks that do (gatecal's last look, where its boundaries meet, is often
    what breaks them: a fail line that drops, or "fail all that is left"). Those first
    looks' crossing probabilities do not depend on the looks after them.
    """
    for looks in range(len(boundaries), 1, -1):
        for counted in ("failures", "passes"):
            rows = to_gsdesign(boundaries[:looks], cases, counted)
            if not check_gsdesign_rules(rows):
                return counted, looks, rows
    raise SystemExit(f"designs.py: no two first looks of {boundaries} meet gsDesign's rules")


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    design_rows: list[list[object]] = []
    theta_rows: list[list[object]] = []
    for spec in SPECS:
        gate = build(spec)
        bounds = gate.design.boundaries
        counted, looks, rows = representation(bounds, spec.cases)
        for bd in bounds:
            n_i, a, b = rows[bd.look - 1] if bd.look <= looks else (bd.look * spec.cases, "", "")
            design_rows.append(
                [
                    spec.id,
                    spec.cases,
                    bd.look,
                    bd.pass_at_least,
                    bd.fail_at_most,
                    counted,
                    n_i,
                    a,
                    b,
                    int(bd.look <= looks),
                ]
            )
        middle = (spec.healthy + spec.regressed) / 2
        for failure in (spec.healthy, middle, spec.regressed):
            # gsDesign's success probability: a case's failure, or (mirror) its pass
            theta = failure if counted == "failures" else 1 - failure
            theta_rows.append([spec.id, repr(theta), repr(failure)])
        print(
            f"{spec.id}: {spec.kind}, {spec.looks} looks of {spec.cases} cases; gsDesign counts"
            f" {counted}, looks 1-{looks}; false alarm {gate.false_alarm:.4g},"
            f" detection {gate.detection:.4g}"
        )
    tables: list[tuple[str, list[str], list[list[object]]]] = [
        (
            "designs.csv",
            [
                "id",
                "cases",
                "look",
                "pass_at_least",
                "fail_at_most",
                "counted",
                "n_I",
                "a",
                "b",
                "to_gsdesign",
            ],
            design_rows,
        ),
        ("thetas.csv", ["id", "theta", "failure"], theta_rows),
        (
            "sprt_calls.csv",
            ["id", "p0", "p1", "alpha", "beta", "minn", "maxn", "thetas"],
            [
                [c.id, c.p0, c.p1, c.alpha, c.beta, c.minn, c.maxn, " ".join(map(repr, c.thetas))]
                for c in SPRT_CALLS
            ],
        ),
    ]
    for name, header, body in tables:
        tmp = out / (name + ".tmp")
        with tmp.open("w", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(header)
            writer.writerows(body)
        tmp.replace(out / name)


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
