"""The exact sequential engine against gsDesign, an independent implementation run offline.

gsDesign's ``gsBinomialExact`` computes the boundary-crossing probabilities and expected
sample size of a one-proportion group sequential design by its own recursion (R, dbinom and
a matrix product per analysis); ``binomialSPRT`` builds Wald's truncated SPRT on it. Their
outputs, for gatecal's designs and for gsDesign's own vignette and test examples, are in
tests/fixtures/gsdesign/ (README there; regenerate with
``bash experiments/gsdesign_reference/regenerate.sh``). The overlap is a suite of equal
cases, no run-to-run correlation: gsDesign's observations are the cases, its "successes"
the failing cases (or, the mirror, the passing ones), its analyses the runs.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from fractions import Fraction

import numpy as np
import pytest

from experiments.gsdesign_reference.compare import sprt_gate
from gatecal import SequentialBoundary, sequential_outcome, wald_sprt
from tests.paths import FIXTURES, ROOT

FIXTURE = FIXTURES / "gsdesign"
REL, ABS = 1e-10, 1e-15


def read(name: str) -> list[dict[str, str]]:
    with (FIXTURE / name).open(newline="") as fh:
        return list(csv.DictReader(fh))


def close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=REL, abs_tol=ABS)


def relative_error(got: float, want: float) -> float:
    return 0.0 if got == want else abs(got - want) / max(abs(want), ABS / REL)


def pass_pmf(cases: int, p_pass: Fraction) -> np.ndarray:
    """One run's passing-case count, Binomial(cases, p_pass), in exact fractions, rounded."""
    return np.array(
        [
            float(math.comb(cases, k) * p_pass**k * (1 - p_pass) ** (cases - k))
            for k in range(cases + 1)
        ]
    )


DESIGNS: dict[str, list[dict[str, str]]] = defaultdict(list)
for _row in read("designs.csv"):
    DESIGNS[_row["id"]].append(_row)
EXACT: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
for _row in read("gsbinomialexact.csv"):
    EXACT[_row["id"], _row["theta"]].append(_row)
SPRT: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
for _row in read("binomialsprt.csv"):
    SPRT[_row["id"], _row["fun"], _row["theta"]].append(_row)
CALLS = {row["id"]: row for row in read("sprt_calls.csv")}


def boundaries(rows: list[dict[str, str]]) -> list[SequentialBoundary]:
    return [
        SequentialBoundary(
            look=int(r["look"]),
            pass_at_least=int(r["pass_at_least"]),
            fail_at_most=int(r["fail_at_most"]),
        )
        for r in rows
    ]


# -- gatecal's designs through gsBinomialExact -----------------------------------------------


def test_the_fixture_covers_every_design_at_three_rates():
    assert len(DESIGNS) >= 12
    assert {key[0] for key in EXACT} == set(DESIGNS)
    assert all(sum(1 for key in EXACT if key[0] == d) == 3 for d in DESIGNS)


def against_gsdesign(
    key: tuple[str, str], bounds: list[SequentialBoundary]
) -> list[tuple[str, float, float]]:
    """(what, gatecal, gsDesign) for every figure gsBinomialExact gives for design `key`."""
    design_id, theta_text = key
    rows, looks = EXACT[key], DESIGNS[design_id]
    cases, counted = int(looks[0]["cases"]), looks[0]["counted"]
    theta = Fraction(float(theta_text))  # the double gsDesign computed with
    p_pass = 1 - theta if counted == "failures" else theta
    out = sequential_outcome(bounds, pass_pmf(cases, p_pass))
    fail_col, pass_col = (
        ("upper_prob", "lower_prob") if counted == "failures" else ("lower_prob", "upper_prob")
    )
    fails = [float(r[fail_col]) for r in rows]
    passes = [float(r[pass_col]) for r in rows]
    k = len(rows)
    pairs = []
    for j in range(k):
        pairs.append((f"fail at look {j + 1}", out.fail_by_look[j], fails[j]))
        pairs.append((f"pass at look {j + 1}", out.pass_by_look[j], passes[j]))
    en_runs = float(rows[0]["en"]) / cases
    if k == len(bounds):  # the whole design: gsDesign's totals are gatecal's
        pairs.append(("P(fail)", out.failure_probability, math.fsum(fails)))
        pairs.append(("P(pass)", out.pass_probability, math.fsum(passes)))
        pairs.append(("expected runs", out.expected_runs, en_runs))
    else:  # its first k looks: gsDesign's expected size stops what is left at look k
        beyond = math.fsum(out.stop_distribution[k:])
        truncated = math.fsum(j * s for j, s in enumerate(out.stop_distribution[:k], 1))
        pairs.append((f"expected runs, stopped by look {k}", truncated + k * beyond, en_runs))
    return pairs


@pytest.mark.parametrize("key", sorted(EXACT), ids=lambda k: f"{k[0]}@{float(k[1]):g}")
def test_engine_matches_gsbinomialexact(key):
    """Per-look crossing probabilities, the totals and the expected runs, to 1e-10."""
    rows, looks = EXACT[key], DESIGNS[key[0]]
    cases, counted = int(looks[0]["cases"]), looks[0]["counted"]
    bounds = boundaries(looks)
    # gsDesign evaluated these boundaries, mapped as documented (re-derived here)
    sent = [r for r in looks if r["to_gsdesign"] == "1"]
    assert [(r["look"], r["n_I"], r["a"], r["b"]) for r in rows] == [
        (r["look"], r["n_I"], r["a"], r["b"]) for r in sent
    ]
    for r, b in zip(rows, bounds, strict=False):
        n = b.look * cases
        assert int(r["n_I"]) == n
        if counted == "failures":  # F = n - S: fail at F >= n - fail_at_most, pass at F <= ..
            assert (int(r["a"]), int(r["b"])) == (n - b.pass_at_least, n - b.fail_at_most)
        else:  # S itself: fail at S <= a, pass at S >= b
            assert (int(r["a"]), int(r["b"])) == (b.fail_at_most, b.pass_at_least)
    for what, got, want in against_gsdesign(key, bounds):
        assert close(got, want), (what, got, want)


def reachable(bounds: list[SequentialBoundary], cases: int) -> list[tuple[int, int]]:
    """The range of S that paths still running can have at each look (by interval logic)."""
    out, low, high = [], 0, cases
    for b in bounds:
        out.append((low, high))
        low, high = max(low, b.fail_at_most + 1), min(high, b.pass_at_least - 1) + cases
    return out


@pytest.mark.parametrize("design_id", sorted(DESIGNS))
def test_a_boundary_one_case_off_is_seen(design_id):
    """The comparison can see an engine that puts a boundary one case off: moving any one
    compared boundary by one case onto or off a count the running paths can reach makes the
    comparison above fail."""
    key = next(k for k in sorted(EXACT) if k[0] == design_id)
    bounds = boundaries(DESIGNS[design_id])
    reach = reachable(bounds, int(DESIGNS[design_id][0]["cases"]))
    moved = 0
    for j in range(len(EXACT[key])):
        b, (low, high) = bounds[j], reach[j]
        last = j == len(bounds) - 1
        trials = []
        for step in (1, -1):  # the count that changes side: the larger of old and new
            f = b.fail_at_most + step
            if low <= max(f, b.fail_at_most) <= high:
                trials.append((f + 1 if last else b.pass_at_least, f))
            s = b.pass_at_least + step
            if not last and low <= min(s, b.pass_at_least) <= high:
                trials.append((s, b.fail_at_most))
        for s, f in trials:
            if s <= f:
                continue
            other = list(bounds)
            other[j] = SequentialBoundary(look=b.look, pass_at_least=s, fail_at_most=f)
            figures = against_gsdesign(key, other)
            assert not all(close(g, w) for _, g, w in figures), (j + 1, s, f)
            moved += 1
    assert moved >= len(EXACT[key])


# -- gsDesign's own binomialSPRT examples as gatecal gates (one case per run) -----------------


def test_sprt_bounds_are_within_gsdesigns_own_rules():
    """So that its recursion is sound there: b - a >= 2 before the last analysis."""
    for rows in SPRT.values():
        a, b = [int(r["a"]) for r in rows], [int(r["b"]) for r in rows]
        assert min(a) >= -1 and min(b) > 1
        assert all(y - x >= 2 for x, y in zip(a[:-1], b[:-1], strict=True))
        assert a == sorted(a) and b == sorted(b)


@pytest.mark.parametrize("key", sorted(SPRT), ids=lambda k: f"{k[0]}-{k[1]}@{float(k[2]):g}")
def test_engine_matches_binomialsprt(key):
    rows = SPRT[key]
    theta = Fraction(float(key[2]))
    pmf = pass_pmf(1, 1 - theta)  # gsDesign's success: a failing case
    got = {}
    for side in ("a", "b"):
        got[side] = sequential_outcome(sprt_gate(rows, side), pmf)
    by_n = {int(r["n_I"]): r for r in rows}
    last = max(by_n)
    for out in got.values():
        for n in range(1, last):
            r = by_n.get(n)
            fail, passed = (float(r["upper_prob"]), float(r["lower_prob"])) if r else (0.0, 0.0)
            assert close(out.fail_by_look[n - 1], fail), (n, out.fail_by_look[n - 1], fail)
            assert close(out.pass_by_look[n - 1], passed), (n, out.pass_by_look[n - 1], passed)
        # gsDesign's expected size counts the undecided as stopped at its last analysis
        assert close(out.expected_runs, float(rows[0]["en"]))
    assert close(got["b"].fail_by_look[-1], float(by_n[last]["upper_prob"]))
    assert close(got["a"].pass_by_look[-1], float(by_n[last]["lower_prob"]))
    undecided = 1 - math.fsum(float(r["upper_prob"]) + float(r["lower_prob"]) for r in rows)
    middle = got["a"].fail_by_look[-1] - got["b"].fail_by_look[-1]
    assert math.isclose(middle, undecided, rel_tol=1e-9, abs_tol=1e-12)


# -- Wald's lines: gatecal.wald_sprt beside binomialSPRT ---------------------------------------


def slope(p0: float, p1: float) -> float:
    """The per-run slope of Wald's lines on S (passing cases), from the two pass rates."""
    up, down = math.log(p1 / p0), math.log((1 - p0) / (1 - p1))
    return up / (up + down)


@pytest.mark.parametrize("call_id", sorted(CALLS))
def test_wald_sprt_draws_binomialsprts_lines(call_id):
    """The same boundaries at every look before the last from gsDesign's first analysis on
    (minn); at the last, where gsDesign may leave a build undecided and gatecal must decide,
    gatecal's cut lies inside gsDesign's undecided region."""
    c = CALLS[call_id]
    p0, p1 = float(c["p0"]), float(c["p1"])
    minn, maxn = int(c["minn"]), int(c["maxn"])
    gate = wald_sprt(
        maxn,
        [p0, 1 - p0],
        [p1, 1 - p1],
        false_alarm=float(c["alpha"]),
        detection=1 - float(c["beta"]),
    )
    # binomialSPRT's own output at theta = p0 (its bounds are the same at every theta)
    (rows,) = [
        v for k, v in SPRT.items() if k[:2] == (call_id, "binomialSPRT") and float(k[2]) == p0
    ]
    assert math.isclose(float(rows[0]["slope"]), 1 - slope(p0, p1), rel_tol=1e-12)
    by_n = {int(r["n_I"]): (int(r["a"]), int(r["b"])) for r in rows}
    for b in gate.design.boundaries[minn - 1 : -1]:
        n = b.look
        a, up = by_n.get(n, (-1, n + 1))  # no analysis: neither bound can be crossed
        assert (b.pass_at_least, b.fail_at_most) == (n - a, max(n - up, -1)), n
    last = gate.design.boundaries[-1]
    a, up = by_n.get(maxn, (-1, maxn + 1))
    fails_from = maxn - last.fail_at_most  # gatecal fails the build at F >= this
    assert a < fails_from <= up


def test_comparison_report_regenerates():
    from experiments.gsdesign_reference import compare
    from tests.regen import assert_same

    committed = ROOT / "reports" / "gsdesign-reference.md"
    assert_same(compare.render(), committed.read_text(), committed.name)
