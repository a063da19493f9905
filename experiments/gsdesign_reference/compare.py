"""What gsDesign says beside what gatecal's exact sequential engine says, as a table.

Reads gsDesign's output in tests/fixtures/gsdesign/ (written by regenerate.sh beside this
file) and evaluates the same designs with :func:`gatecal.sequential_outcome`; the Wald
section builds :func:`gatecal.wald_sprt` for binomialSPRT's own calls. The check with its
tolerances is tests/analyses/sequential/test_gsdesign.py; this only shows it. The largest relative
difference is printed as "< 1e-13" when below that (the figures themselves differ in their
last bits from one CPU to another).

Writes reports/gsdesign-reference.md. Usage: python experiments/gsdesign_reference/compare.py
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import numpy as np
import numpy.typing as npt

import gatecal
from gatecal import SequentialBoundary

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "gsdesign"
OUT = ROOT / "reports" / "gsdesign-reference.md"
Row = dict[str, str]


def read(name: str) -> list[Row]:
    with (FIXTURE / name).open(newline="") as fh:
        return list(csv.DictReader(fh))


def pass_pmf(cases: int, p_pass: Fraction) -> npt.NDArray[np.float64]:
    return np.array(
        [
            float(math.comb(cases, k) * p_pass**k * (1 - p_pass) ** (cases - k))
            for k in range(cases + 1)
        ]
    )


def rel(got: float, want: float) -> float:
    return 0.0 if got == want else abs(got - want) / max(abs(want), 1e-5)


def worst_text(worst: float) -> str:
    return "< 1e-13" if worst < 1e-13 else f"{worst:.1e}"


def g(x: float) -> str:
    return f"{x:.10g}"


def designs_table() -> list[str]:
    designs: dict[str, list[Row]] = defaultdict(list)
    for row in read("designs.csv"):
        designs[row["id"]].append(row)
    exact: dict[str, list[list[Row]]] = defaultdict(list)
    current: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in read("gsbinomialexact.csv"):
        current[row["id"], row["theta"]].append(row)
    for (design_id, _), rows in current.items():
        exact[design_id].append(rows)
    lines = [
        "| design | cases x looks | gsDesign counts | looks compared | false alarm, gatecal"
        " | gsDesign | detection, gatecal | gsDesign | expected runs (healthy), gatecal"
        " | gsDesign | figures | largest relative difference |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for design_id, looks in designs.items():
        cases, counted = int(looks[0]["cases"]), looks[0]["counted"]
        bounds = [
            SequentialBoundary(
                look=int(r["look"]),
                pass_at_least=int(r["pass_at_least"]),
                fail_at_most=int(r["fail_at_most"]),
            )
            for r in looks
        ]
        worst, figures, shown = 0.0, 0, []
        for rows in exact[design_id]:  # the healthy rate first, the regressed one last
            theta = Fraction(float(rows[0]["theta"]))
            p_pass = 1 - theta if counted == "failures" else theta
            out = gatecal.sequential_outcome(bounds, pass_pmf(cases, p_pass))
            fail_col, pass_col = (
                ("upper_prob", "lower_prob")
                if counted == "failures"
                else ("lower_prob", "upper_prob")
            )
            k = len(rows)
            pairs = [(out.fail_by_look[j], float(rows[j][fail_col])) for j in range(k)] + [
                (out.pass_by_look[j], float(rows[j][pass_col])) for j in range(k)
            ]
            stops = out.stop_distribution
            runs = math.fsum(j * s for j, s in enumerate(stops[:k], 1)) + k * math.fsum(stops[k:])
            pairs.append((runs, float(rows[0]["en"]) / cases))
            fail_g = math.fsum(out.fail_by_look[:k])
            fail_r = math.fsum(float(r[fail_col]) for r in rows)
            pairs.append((fail_g, fail_r))
            worst = max([worst, *(rel(a, b) for a, b in pairs)])
            figures += len(pairs)
            shown.append((fail_g, fail_r, runs, float(rows[0]["en"]) / cases))
        k = len(exact[design_id][0])
        scope = f"1-{k}" if k == len(bounds) else f"1-{k} of {len(bounds)}"
        kind = looks[0]["id"].split("-")[0].rstrip("0123456789")
        (fa_g, fa_r, asn_g, asn_r), (det_g, det_r, _, _) = shown[0], shown[-1]
        lines.append(
            f"| {design_id} ({kind}) | {cases} x {len(bounds)} | {counted} | {scope} | {g(fa_g)}"
            f" | {g(fa_r)} | {g(det_g)} | {g(det_r)} | {g(asn_g)} | {g(asn_r)} | {figures}"
            f" | {worst_text(worst)} |"
        )
    return lines


def sprt_gate(rows: list[Row], last_fails_at: str) -> list[SequentialBoundary]:
    """binomialSPRT's bounds on F_n (failing cases among the first n, one per run) as gatecal
    boundaries: no decision where it has no analysis; at its last analysis the region
    between its bounds goes to pass (``last_fails_at="b"``: fail at F >= b) or to fail
    (``"a"``: pass only at F <= a), since gatecal's last look must decide."""
    by_n = {int(r["n_I"]): (int(r["a"]), int(r["b"])) for r in rows}
    last = max(by_n)
    out = []
    for n in range(1, last + 1):
        a, b = by_n.get(n, (-1, n + 1))
        if n == last:
            fail = max(n - b, -1) if last_fails_at == "b" else n - a - 1
            out.append(SequentialBoundary(look=n, pass_at_least=fail + 1, fail_at_most=fail))
        else:
            out.append(SequentialBoundary(look=n, pass_at_least=n - a, fail_at_most=max(n - b, -1)))
    return out


def sprt_tables() -> list[str]:
    calls = {row["id"]: row for row in read("sprt_calls.csv")}
    groups: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for row in read("binomialsprt.csv"):
        groups[row["id"], row["fun"], row["theta"]].append(row)
    oc = [
        "| call | p0 | p1 | alpha | beta | n | analyses | rates | P(reject p0) at p0, gatecal"
        " | gsDesign | at p1, gatecal | gsDesign | expected n at p0, gatecal | gsDesign | figures"
        " | largest relative difference |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    wald = [
        "| call | looks compared | boundaries the same | a line's nearest approach to a whole"
        " number | gatecal's last look fails at F >= | gsDesign's last analysis: a, b |",
        "|---|---|---|---|---|---|",
    ]
    for call_id, c in calls.items():
        p0, p1 = float(c["p0"]), float(c["p1"])
        minn, maxn = int(c["minn"]), int(c["maxn"])
        keys = [k for k in groups if k[0] == call_id]
        worst, figures = 0.0, 0
        at: dict[float, tuple[float, float, float, float]] = {}
        for key in keys:
            rows = groups[key]
            theta = Fraction(float(key[2]))
            pmf = pass_pmf(1, 1 - theta)
            by_b = gatecal.sequential_outcome(sprt_gate(rows, "b"), pmf)
            by_a = gatecal.sequential_outcome(sprt_gate(rows, "a"), pmf)
            by_n = {int(r["n_I"]): r for r in rows}
            pairs = []
            for n in range(1, max(by_n) + 1):
                r = by_n.get(n)
                up, low = (float(r["upper_prob"]), float(r["lower_prob"])) if r else (0.0, 0.0)
                pairs.append((by_b.fail_by_look[n - 1], up))
                pairs.append((by_a.pass_by_look[n - 1], low))
            en = float(rows[0]["en"])
            pairs += [(by_b.expected_runs, en), (by_a.expected_runs, en)]
            upper = math.fsum(float(r["upper_prob"]) for r in rows)
            pairs.append((by_b.failure_probability, upper))
            worst = max([worst, *(rel(x, y) for x, y in pairs)])
            figures += len(pairs)
            at[float(theta)] = (by_b.failure_probability, upper, by_b.expected_runs, en)
        sprt_rows = next(groups[k] for k in keys if k[1] == "binomialSPRT")
        rates = sorted(at)
        oc.append(
            f"| {call_id} | {p0:g} | {p1:g} | {float(c['alpha']):g} | {float(c['beta']):g}"
            f" | {minn}-{maxn} | {len(sprt_rows)} | {len(rates)} | {g(at[p0][0])}"
            f" | {g(at[p0][1])} | {g(at[p1][0])} | {g(at[p1][1])} | {g(at[p0][2])}"
            f" | {g(at[p0][3])} | {figures} | {worst_text(worst)} |"
        )
        gate = gatecal.wald_sprt(
            maxn,
            [p0, 1 - p0],
            [p1, 1 - p1],
            false_alarm=float(c["alpha"]),
            detection=1 - float(c["beta"]),
        )
        by_ab = {int(r["n_I"]): (int(r["a"]), int(r["b"])) for r in sprt_rows}
        same = 0
        early = gate.design.boundaries[minn - 1 : -1]
        for b in early:
            a, up = by_ab.get(b.look, (-1, b.look + 1))
            same += (b.pass_at_least, b.fail_at_most) == (b.look - a, max(b.look - up, -1))
        r0 = sprt_rows[0]
        slope = float(r0["slope"])
        near = min(
            abs(x - round(x))
            for n in range(minn, maxn)
            for x in (
                slope * n + float(r0["intercept_upper"]),
                slope * n + float(r0["intercept_lower"]),
            )
        )
        a_k, b_k = by_ab.get(maxn, (-1, maxn + 1))
        last = gate.design.boundaries[-1]
        wald.append(
            f"| {call_id} | {minn}-{maxn - 1} | {same} of {len(early)} | {near:.3g}"
            f" | {maxn - last.fail_at_most} | {a_k}, {b_k} |"
        )
    return [
        "## gsDesign's binomialSPRT examples as gatecal gates (one case per run)",
        "",
        "binomialSPRT's bounds on F_n (failing cases among the first n) become gatecal boundaries"
        " with no decision before `minn` or where binomialSPRT has no analysis; at its last"
        " analysis, where binomialSPRT may leave a build undecided and gatecal must decide, the"
        " undecided region goes once to pass (compared: the fail side there) and once to fail"
        " (compared: the pass side). `rates`: binomialSPRT's own p0 and p1, and the further"
        " rates gsBinomialExact evaluates its bounds at, as the vignette's tables do. Every"
        " per-look probability and the expected size at every rate are compared.",
        "",
        *oc,
        "",
        "## Wald's lines: gatecal.wald_sprt beside binomialSPRT",
        "",
        "`wald_sprt(maxn, [p0, 1 - p0], [p1, 1 - p1], false_alarm=alpha, detection=1 - beta)`"
        " with one case per run, against binomialSPRT's bounds at every look from `minn` to the"
        " one before the last. Both round the same two lines outwards (binomialSPRT on F with"
        " ceiling and floor, gatecal on S = n - F with floor and ceiling, taking a line within"
        " 1e-9 of a whole number as on it); the nearest approach of a line to a whole number at"
        " those looks is far above 1e-9, so the two roundings cannot differ there. At the last"
        " look gatecal fails the build at F >= ceil(maxn x slope), inside binomialSPRT's"
        " undecided region a < F < b or at b.",
        "",
        *wald,
    ]


def render() -> str:
    versions = (FIXTURE / "versions.txt").read_text().strip().splitlines()
    lines = [
        "# The exact sequential engine against gsDesign",
        "",
        "`python experiments/gsdesign_reference/compare.py` writes this page from"
        " tests/fixtures/gsdesign/, gsDesign's own output"
        " (`bash experiments/gsdesign_reference/regenerate.sh`, offline: R sources gsDesign's"
        " R/gsUtilities.R and R/gsBinomialExact.R from its git checkout):",
        "",
        *(f"- {v}" for v in versions),
        "",
        "The overlap is one proportion without run-to-run correlation: a suite of equal cases,"
        " each failing with the same probability. gsDesign's observations are the cases, its"
        " successes the failing cases (or, the mirror, the passing ones), its analyses the"
        " runs. The check with its tolerance (1e-10 relative, 1e-15 absolute) is"
        " tests/analyses/sequential/test_gsdesign.py.",
        "",
        "## gatecal's designs through gsBinomialExact",
        "",
        "Each design is evaluated at the healthy build's per-case failure probability (false"
        " alarm), the regressed build's (detection) and one between. Where gatecal's last look"
        ' breaks gsBinomialExact\'s input rules ("1-k of K": its fail boundary on F drops'
        " there, or it fails everything that is left, or, before the last look, pass and fail"
        " boundaries touch, which gsBinomialExact does not refuse but miscounts: see the"
        " fixture's README), gsDesign gets the first k looks that meet them. Their crossing"
        " probabilities do not depend on the looks after; the false alarm, detection and"
        " expected runs in those rows are then of the design stopped at look k (the fail side"
        " summed over looks 1-k; what is left counted as stopping at k). Figures: every"
        " per-look crossing probability on both sides, the summed fail side and the expected"
        " runs, at the three rates.",
        "",
        *designs_table(),
        "",
        *sprt_tables(),
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    OUT.write_text(render())
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
