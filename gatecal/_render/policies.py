"""Text renderings of compare_policies' report: table, markdown, csv and json."""

from __future__ import annotations

import functools

from gatecal._analyses.policies.rules import PolicyComparisonRow, PolicyReport
from gatecal._analyses.policies.sequential import SequentialComparisonRow
from gatecal._common.tables import (
    csv_text,
    flat_rows,
    format_probability,
    noise_words,
    plural,
    table_lines,
)
from gatecal._render.dispatch import render, written
from gatecal._render.simulate import ONE_SUITE

__all__ = ["render_policies"]


@render.register
def render_policies(report: PolicyReport, fmt: str = "table") -> str:
    """:func:`compare_policies` as ``table``, ``markdown``, ``csv`` or ``json``
    (:func:`gatecal.render`).

    Parameters
    ----------
    report : PolicyReport
        What :func:`compare_policies` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.
    """
    text = functools.partial(_text, report)
    return written(report, fmt, text=text, csv=_csv)


def _csv(report: PolicyReport) -> str:
    return csv_text(flat_rows(report.row_dicts()))


def _text(report: PolicyReport, fmt: str) -> str:
    how = "call by call" if report.simulation == "calls" else "call by call, alike cases by counts"
    lines = [
        f"judge: {noise_words(report.noise)}; {plural(report.suite.n_cases, 'case')}",
        f"P exact; counts from {report.n_runs} CI runs simulated {how} (seed "
        f"{report.seed}); judge calls are expected per CI run",
        "",
    ]
    header = [
        "policy",
        "gate",
        "false alarm (healthy fails)",
        "detection (regressed fails)",
        "judge calls (healthy)",
    ]
    table = []
    by = {(r.policy, r.build, r.gate): r for r in report.rows}
    seen: list[tuple[str, str]] = []
    for r in report.rows:
        if (r.policy, r.gate) not in seen:
            seen.append((r.policy, r.gate))
    for policy, gate in seen:
        h, g = by[policy, "healthy", gate], by[policy, "regressed", gate]

        def cell(row: PolicyComparisonRow) -> str:
            mark = "" if row.consistent else " !"
            return (
                f"{format_probability(row.failure_probability)}"
                f" ({row.simulated_failures}/{row.runs}){mark}"
            )

        table.append(
            [
                policy,
                h.rule,
                cell(h),
                cell(g),
                f"{h.judge_calls:.1f} ({h.simulated_judge_calls:.1f})",
            ]
        )
    lines += table_lines(header, table, fmt)
    lines += _one_suite_lines(report, seen, fmt)
    lines += _sequential_lines(report)
    bad = [r for r in report.rows if not r.consistent]
    level = f"{100 * report.confidence_level:g}%"
    lines += [
        "",
        (
            f"consistent: every simulated count lies inside the {level} binomial interval"
            " of its exact probability"
        )
        if not bad
        else f"! {len(bad)} of {len(report.rows)} counts lie outside their {level} interval",
    ]
    return "\n".join(lines) + "\n"


def _one_suite_lines(report: PolicyReport, seen: list[tuple[str, str]], fmt: str) -> list[str]:
    """Below the table, with a case spread: where 8 in 10 single drawn suites lie."""
    by = {
        (r.policy, r.build, r.gate): f"{format_probability(r.one_suite_low)} to "
        f"{format_probability(r.one_suite_high)}"
        for r in report.rows
        if isinstance(r, PolicyComparisonRow)
        and r.one_suite_low is not None
        and r.one_suite_high is not None
    }
    rows = [
        [policy, gate, by[policy, "healthy", gate], by[policy, "regressed", gate]]
        for policy, gate in seen
        if (policy, "healthy", gate) in by
    ]
    if not rows:
        return []
    rules = {(r.policy, r.gate): r.rule for r in report.rows}
    for row in rows:
        row[1] = rules[row[0], row[1]]
    header = ["policy", "gate", "false alarm (healthy fails)", "detection (regressed fails)"]
    return ["", ONE_SUITE, *([""] if fmt == "markdown" else []), *table_lines(header, rows, fmt)]


def _sequential_lines(report: PolicyReport) -> list[str]:
    """Below the table: each sequential policy's boundaries and expected runs."""
    out: list[str] = []
    rows = [r for r in report.rows if isinstance(r, SequentialComparisonRow)]
    for h in rows:
        if h.build != "healthy":
            continue
        g = next(r for r in rows if r.policy == h.policy and r.build == "regressed")
        looks = "; ".join(
            f"{b.look}: fail <= {b.fail_at_most}, pass >= {b.pass_at_least}" for b in h.boundaries
        )
        met = "" if h.meets_targets else " (targets not met: the highest detection in budget)"
        anytime = h.gate.startswith("evalue-")
        if anytime:
            met = ""
        out += [
            "",
            f"{h.gate}: after run j, S_j = passing cases over the runs so far; {looks}{met}",
            f"  expected runs: healthy {h.expected_runs:.3f} ({h.simulated_expected_runs:.3f}), "
            f"regressed {g.expected_runs:.3f} ({g.simulated_expected_runs:.3f}); "
            "P(stop after run j), healthy: "
            + ", ".join(format_probability(p) for p in h.stop_distribution),
        ]
        if report.noise.run_correlated:
            out.append(
                "  the runs of one build share one flip rate (reruns back to back; "
                "--runs-independent: each draws its own)"
                if h.run_model == "shared"
                else "  each run of a build draws its own flip rate (--runs-independent)"
            )
        if anytime:
            out.append(
                f"  e-process: fails once the e-value reaches 1/{h.targets.false_alarm:g}; "
                f"nominal false alarm {h.targets.false_alarm:g} (Ville's inequality, for "
                f"independent runs at icc 0), exact {format_probability(h.failure_probability)}"
                " under this stopping"
            )
    return out
