"""Text renderings of plan_suite's answer: table, markdown, csv and json."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from gatecal._analyses.plan._search import SuitePlans
from gatecal._analyses.plan.baseline import BaselineRuns
from gatecal._analyses.plan.sequential import SequentialSuitePlan
from gatecal._analyses.policies.sequential import SequentialPolicy
from gatecal._common.tables import (
    csv_text,
    flat_rows,
    format_probability,
    noise_words,
    plural,
    table_lines,
)
from gatecal._render.dispatch import render, written

__all__ = ["render_plans"]


@render.register
def render_plans(
    plans: SuitePlans,
    fmt: str = "table",
    baseline: Sequence[BaselineRuns | None] | None = None,
) -> str:
    """:func:`plan_suite`'s answer as ``table``, ``markdown``, ``csv`` or ``json``, with,
    given `baseline` (:func:`gatecal.baseline_runs`), the known-good runs each plan's gate
    needs (:func:`gatecal.render`).

    Parameters
    ----------
    plans : SuitePlans
        What :func:`plan_suite` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.
    baseline : sequence of BaselineRuns or None, optional
        One entry per plan of `plans` (None where there is none): the known-good runs its
        gate needs, from :func:`gatecal.baseline_runs`. Default: not shown.
    """
    text = functools.partial(_text, plans, baseline)
    return written(
        plans,
        fmt,
        document=lambda: plans.to_dict(baseline=baseline),
        text=text,
        csv=functools.partial(_csv, baseline=baseline),
    )


def _csv(plans: SuitePlans, *, baseline: Sequence[BaselineRuns | None] | None) -> str:
    rows = [p.to_dict() if p else None for p in plans.plans]
    if baseline is not None:
        rows = [
            None if r is None else {**r, **_baseline_columns(b)}
            for r, b in zip(rows, baseline, strict=True)
        ]
    rows = [_spread_columns(r) for r in rows]
    empty = ("cases", "k_min", "max_failures", "failing", "false_alarm", "detection", "judge_calls")
    return csv_text(
        flat_rows(
            [
                r if r else {"policy": pol.describe(), **dict.fromkeys(empty)}
                for r, pol in zip(rows, plans.policies, strict=True)
            ]
        )
    )


def _text(plans: SuitePlans, baseline: Sequence[BaselineRuns | None] | None, fmt: str) -> str:
    checks = f"{plural(plans.judge_checks, 'judge check')} and "
    checks += plural(plans.code_checks, "code check")
    kind = "a code check" if plans.code_checks else "a judge check"
    head = [
        f"targets: false alarm <= {plans.targets.false_alarm:g}, "
        f"detection >= {plans.targets.detection:g}",
        f"judge: {noise_words(plans.noise)}; each case: {checks}",
        f"regression: {plans.regression.describe()} ({kind}; rounded half up to whole cases)",
        "",
    ]
    header = ["policy", "cases", "gate", "false alarm", "detection", "judge calls per run"]
    table = []
    for index, (plan, policy) in enumerate(zip(plans.plans, plans.policies, strict=True)):
        if plan is None:
            limit = plans.limit(index)
            beyond = "none" if limit is None else f"> {limit}"
            table.append([policy.describe(), beyond, "none meets both", "", "", ""])
            continue
        gate = f"at most {plan.max_failures} failing (k_min {plan.k_min})"
        if isinstance(plan, SequentialSuitePlan):
            gate = f"{plan.gate}: boundaries below"
        table.append(
            [
                plan.policy.describe(),
                str(plan.cases),
                gate,
                format_probability(plan.false_alarm),
                format_probability(plan.detection),
                f"{plan.judge_calls:.1f}",
            ]
        )
    lines = head + table_lines(header, table, fmt)
    lines += _spread_lines(plans)
    lines += _sequential_lines(plans)
    if baseline is not None:
        lines += _baseline_lines(baseline)
    cheapest = plans.cheapest
    if cheapest is not None:
        lines += [
            "",
            f"cheapest in judge calls: {cheapest.policy.describe()}, "
            f"{cheapest.cases} cases, about {cheapest.judge_calls:.0f} calls per CI run",
        ]
    else:
        sizes = "at any size" if plans.max_cases is None else f"with up to {plans.max_cases} cases"
        lines += ["", f"no policy meets both targets {sizes}"]
    lines.append("exact search over every suite size (not bisection: feasibility is not monotone)")
    sequential = [p for p in plans.policies if isinstance(p, SequentialPolicy)]
    if sequential:
        shared = plans.noise.run_correlated and any(p.runs == "shared" for p in sequential)
        lines.append(
            "sequential gates: judge calls are expected until the gate stops (healthy build); "
            + (
                "the runs of one build share one flip rate (--runs-independent: each draws "
                "its own); each size gets the exact boundary search"
                if shared
                else "each size screened by the runs' Chernoff affinities, then the exact "
                "boundary search"
            )
        )
    return "\n".join(lines) + "\n"


def _spread_columns(row: dict[str, Any] | None) -> dict[str, Any] | None:
    """A CSV row: the nested suite spread as ``suite_spread_*`` columns."""
    if row is None or "suite_spread" not in row:
        return row
    flat = {k: v for k, v in row.items() if k != "suite_spread"}
    flat.update({f"suite_spread_{k}": v for k, v in row["suite_spread"].items()})
    return flat


def _spread_lines(plans: SuitePlans) -> list[str]:
    """Below the table, when cases spread: the figures above are averages over suites
    drawn from the spread; how far one suite may be from them."""
    spread = [p for p in plans.plans if p is not None and getattr(p, "spread", None)]
    if not spread:
        return []
    first = spread[0].spread
    assert first is not None
    out = [
        "",
        "false alarm and detection are averages over suites drawn from this spread; your suite "
        f"is one of them. Of {first.suites:,} suites drawn (seed {first.seed}):",
    ]
    for plan in spread:
        s = plan.spread
        assert s is not None
        out.append(
            f"  {plan.policy.describe()}: {s.false_alarm_over:.0%} of suites have a false alarm "
            f"above {plans.targets.false_alarm:g} (9 in 10 at most "
            f"{format_probability(s.false_alarm_high)}); {s.detection_under:.0%} detect less "
            f"than {plans.targets.detection:g} (9 in 10 at least "
            f"{format_probability(s.detection_low)})"
        )
    return out


def _sequential_lines(plans: SuitePlans) -> list[str]:
    """Below the table: each sequential plan's boundaries and expected runs."""
    out: list[str] = []
    for plan in plans.plans:
        if not isinstance(plan, SequentialSuitePlan):
            continue
        looks = "; ".join(
            f"{b.look}: fail <= {b.fail_at_most}, pass >= {b.pass_at_least}"
            for b in plan.boundaries
        )
        out += [
            "",
            f"{plan.gate} at {plan.cases} cases: after run j, S_j = passing cases over the "
            f"runs so far; {looks}",
            f"  expected runs: healthy {plan.expected_runs:.3f}, regressed "
            f"{plan.expected_runs_regressed:.3f} (judge calls {plan.judge_calls:.1f} and "
            f"{plan.judge_calls_regressed:.1f}; one run {plan.judge_calls_per_run}); "
            "P(stop after run j), healthy: "
            + ", ".join(format_probability(p) for p in plan.stop_distribution),
        ]
    return out


def _baseline_columns(b: BaselineRuns | None) -> dict[str, Any]:
    """The CSV columns of one plan's known-good runs."""
    keys = ("needed", "runs", "suite", "suite_k_min", "suite_false_alarm", "suite_detection",
            "share", "needed_share", "share_hits", "sets")  # fmt: skip
    return {f"baseline_{k}": None if b is None else getattr(b, k) for k in keys}


def _baseline_lines(baseline: Sequence[BaselineRuns | None]) -> list[str]:
    """Below the table: the known-good runs that would let recommend certify each gate."""
    out = [
        "",
        "known-good runs to measure the noise (recommend allows a gate by its bounds; runs "
        "failing as the planned noise typically does: a typical count, not a guarantee; "
        "then the count that certifies it in a stated share of simulated sets of runs):",
    ]
    for b in baseline:
        if b is None:
            continue
        if b.reason is not None:
            out.append(f"  {b.policy}: not computed ({b.reason})")
            continue
        needed = f"{b.needed:,} runs" if b.needed is not None else f"more than {b.limit:,} runs"
        line = f"  {b.policy}: the planned gate (k_min {b.k_min} of {b.cases}) needs {needed}"
        if b.share is not None and b.needed is not None:
            line += (
                f" typically, {b.needed_share:,} runs for {b.share:.0%} of sets (certified "
                f"in {b.share_hits} of {b.sets} simulated sets)"
                if b.needed_share is not None
                else f" typically; {b.share:.0%} of sets not reached by {b.limit:,} runs"
            )
        if b.runs is not None and b.suite is not None:
            assert b.suite_false_alarm is not None and b.suite_detection is not None
            line += (
                f"; with {b.runs} runs: {b.suite} cases, k_min {b.suite_k_min} (false alarm "
                f"<= {format_probability(b.suite_false_alarm)}, detection >= "
                f"{format_probability(b.suite_detection)})"
            )
        elif b.runs is not None:
            line += f"; with {b.runs} runs: no suite up to {b.suite_limit} cases"
        out.append(line)
    return out
