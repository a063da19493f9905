"""Text renderings of a Recommendation: table, markdown, csv and json."""

from __future__ import annotations

import functools

from gatecal._analyses.recommend.gate import RateEstimate, Recommendation
from gatecal._common.defaults import RUNS_FOR_GATE_MAX
from gatecal._common.names import shown
from gatecal._common.tables import (
    csv_text,
    format_probability,
    plural,
    table_lines,
)
from gatecal._render.dispatch import render, written

__all__ = ["recommendation_text", "render_recommendation"]


def _rate(e: RateEstimate) -> str:
    return f"{e.estimate:.4f} [{e.low:.4f}, {e.high:.4f}]"


@render.register
def render_recommendation(rec: Recommendation, fmt: str = "table", *, top: int = 10) -> str:
    """:func:`recommend_gate` as ``table``, ``markdown``, ``csv`` or ``json``, leading with
    the decision (:func:`gatecal.render`).

    Parameters
    ----------
    rec : Recommendation
        What :func:`recommend_gate` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.
    top : int, default 10
        The most per-case noise lines the table and markdown show; the rest are counted.
    """
    text = functools.partial(recommendation_text, rec, top=top)
    return written(rec, fmt, text=text, csv=_csv)


def _csv(rec: Recommendation) -> str:
    table = enumerate(rec.table)
    return csv_text([{"k_min": k, "false_alarm": fa, "detection": det} for k, (fa, det) in table])


def recommendation_text(rec: Recommendation, fmt: str, *, top: int = 10) -> str:
    """The table or markdown of `rec` (``gatecal recommend``'s text)."""
    lines = [
        *_headline_lines(rec),
        "",
        *_read_lines(rec, fmt),
        *_noise_lines(rec, fmt, top),
        *_case_lines(rec, fmt),
        *_chosen_lines(rec, fmt),
        *_decision_lines(rec),
    ]
    lines += ["", "operating table:"]
    shown, note = _shown_gates(rec)
    decimals = max(3, len(str(rec.cases)) - 1)  # k / n apart from (k + 1) / n
    rows = [
        [str(k), f"{k / rec.cases:.{decimals}f}", format_probability(fa), format_probability(det)]
        for k, (fa, det) in ((k, rec.table[k]) for k in shown)
    ]
    lines += table_lines(["k_min", "rate", "false alarm", "detection"], rows, fmt)
    if note:
        lines += ["", note] if fmt == "markdown" else [note]
    return "\n".join(lines) + "\n"


#: A table or markdown rendering lists every gate up to this many; a bigger suite's table
#: this many around the gate the recommendation names (csv and json list every gate).
TABLE_ROWS = 41


def _shown_gates(rec: Recommendation) -> tuple[range, str]:
    """The gates the operating table lists, and the line that says which when not all: the
    :data:`TABLE_ROWS` around the recommended gate (or the strictest within budget, or
    else the first gate over the budget)."""
    count = len(rec.table)
    if count <= TABLE_ROWS:
        return range(count), ""
    if rec.recommended is not None:
        focus, what = rec.recommended, "the recommended gate"
    elif rec.within_budget is not None:
        focus, what = rec.within_budget, "the strictest gate within the false-alarm budget"
    else:
        over = [k for k, (fa, _) in enumerate(rec.table) if fa > rec.targets.false_alarm]
        focus, what = (over[0] if over else 0), "the first gate over the false-alarm budget"
    start = min(max(focus - TABLE_ROWS // 2, 0), count - TABLE_ROWS)
    shown = range(start, start + TABLE_ROWS)
    note = (
        f"(k_min {shown[0]} to {shown[-1]} of 0 to {count - 1}, around {what}: "
        "--format csv or json lists every gate)"
    )
    return shown, note


def _headline_lines(rec: Recommendation) -> list[str]:
    """The decision and the next step, in plain words, before the statistics."""
    chosen = rec.chosen
    if chosen is None or chosen.kind == "none":
        return [
            "gatecal recommend: NO GATE: none keeps healthy builds failing within the "
            f"{rec.targets.false_alarm:g} budget",
            "next: add known-good runs (or cases), then run recommend again",
        ]
    what = (
        "the case-aware gate (each failing case weighed by its own record)"
        if chosen.kind == "cases"
        else f"at least {chosen.k_min} of {rec.cases} cases pass"
    )
    figures = (
        f"fails healthy builds with probability {format_probability(chosen.false_alarm)} "
        f"and catches the regression with probability {format_probability(chosen.detection)}"
    )
    head = (
        f"gatecal recommend: use {what}: it {figures}"
        if chosen.meets_targets
        else f"gatecal recommend: use {what}, the best valid gate: it {figures}, short of "
        f"the {rec.targets.detection:g} target (what would close it: below)"
    )
    lines = [head]
    sees = _sees_line(rec)
    if sees:
        lines.append(sees)
    return [
        *lines,
        "next: write it with --format json --out gate.json, then decide each CI run with "
        "gatecal check CURRENT --baseline RUNS --gate-from gate.json",
    ]


def _sees_line(rec: Recommendation) -> str | None:
    """What the written gate can see: one, two and three broken stable cases, in words."""
    gate, chosen = rec.case_gate, rec.chosen
    if gate is None or chosen is None or chosen.kind != "cases":
        return None
    if not gate.can_fail:
        return (
            f"it can see nothing yet: {gate.runs_needed} known-good runs are needed to fail "
            f"any run within {rec.targets.false_alarm:g}; it has {gate.known_good_runs}"
        )
    dets = [(k, d) for k, d in gate.detections if k in (1, 2, 3)]
    if not dets:
        return None
    ks = " / ".join(str(k) for k, _ in dets)
    ps = " / ".join(format_probability(d) for _, d in dets)
    line = (
        f"it catches a regression that breaks {ks} stable cases with probability {ps} "
        "(each known-good run in turn playing the CI run)"
    )
    one = dict(dets).get(1)
    if one is not None and one < 0.5:
        line += (
            "; one broken case is often missed: known-good runs with one-off failures of "
            "their own look as surprising"
        )
    return line


def _read_lines(rec: Recommendation, fmt: str) -> list[str]:
    """What was read, what was left out, and the reader's warnings."""
    builds = plural(rec.runs, "known-good run")
    if rec.regressed_runs:
        builds += f" and {plural(rec.regressed_runs, 'regressed run')}"
    lines = [
        f"read: {builds} of {plural(rec.cases, 'case')} from {plural(len(rec.sources), 'file')}"
        + (f" ({plural(rec.sessions, 'session')})" if rec.sessions != rec.runs else ""),
    ]
    left_out = []
    if rec.skipped:
        left_out.append(f"{plural(rec.skipped, 'skipped test')}")
    if rec.errors:
        words = ("error or unscored verdict", "errors or unscored verdicts")
        left_out.append(plural(rec.errors, *words))
    if left_out:
        lines.append(
            f"  left out as missing data: {', '.join(left_out)}"
            + (
                f" ({rec.missing} of {rec.runs * rec.cases} case runs missing)"
                if rec.missing
                else ""
            )
        )
    if rec.reruns:
        counted = (
            "the first attempt counts"
            if rec.attempts_policy == "first"
            else "the last attempt counts"
        )
        lines.append(f"  {plural(rec.reruns, 'rerun attempt')} seen: {counted}")
    lines += [f"  warning: {shown(w, fmt)}" for w in rec.warnings]
    return lines


def _noise_lines(rec: Recommendation, fmt: str, top: int) -> list[str]:
    """The measured noise: pooled and judge rates, run-to-run correlation, flakiest cases."""
    level = f"{100 * rec.confidence_level:g}%"
    m = rec.measured
    lines = [
        "",
        f"noise ({level} {rec.method} intervals)",
        f"  case failure rate, pooled: {_rate(m.noise)}"
        f"  ({m.noise.failures:g} of {m.noise.trials:g} case runs)",
    ]
    if m.judge_noise is not None:
        lines.append(
            f"  judge verdicts wrongly 'no':  {_rate(m.judge_noise)}"
            f"  ({m.judge_noise.failures:g} of {m.judge_noise.trials:g})"
        )
    od = m.overdispersion
    verdict = (
        "correlated: runs vary more than independent verdicts allow"
        if m.correlated
        else "no evidence of run-to-run correlation"
    )
    lines += [
        f"  run-to-run correlation: icc {od.icc:.3f} (moments {od.moment_icc:.3f}), "
        f"design effect {od.design_effect:.2f}, LR test p = {format_probability(od.p_value)}: "
        f"{verdict}",
    ]
    if rec.sessions < rec.runs:
        lines.append(
            f"  (the test compares {plural(rec.runs, 'run')} from "
            f"{plural(rec.sessions, 'session')}: repeats inside one invocation share a process "
            "and a time window, so drift between invocations shows only across sessions)"
        )
    if m.icc_for_gate > 0:
        lines.append(
            f"  the runs allow an icc up to {m.icc_for_gate:.3f} and, jointly, a rate in "
            f"{_rate(m.noise_for_gate)[7:]} ({level} confidence region)"
        )
    lines += ["", f"flakiest cases (failures in {plural(rec.runs, 'known-good run')}):"]
    for c in rec.per_case[:top]:
        name = shown(c.case, fmt)
        lines.append(f"  {name:<32} {c.rate.failures:>4g}  {_rate(c.rate)}")
    if len(rec.per_case) > top:
        lines.append(f"  ... {len(rec.per_case) - top} more")
    return lines


def _case_lines(rec: Recommendation, fmt: str) -> list[str]:
    """Each case's own record: how much cases differ, how much whole runs differ."""
    spread = rec.case_spread
    if spread is None:
        return []
    lines = [
        "",
        "the noise case by case (each case's own record, shrunk toward the suite's):",
        f"  how much cases differ: {spread.cases_differ()}",
        f"  how much whole runs differ: {spread.runs_differ()}",
    ]
    if spread.systematic:
        names = ", ".join(shown(c, fmt) for c in spread.systematic)
        lines.append(
            f"  systematic (a judge error or a broken test to fix, not flaky; no evidence "
            f"about a regression): {names}"
        )
    advice = spread.advice()
    if advice:
        lines.append(f"  {shown(advice, fmt)}")
    return lines


def _chosen_lines(rec: Recommendation, fmt: str) -> list[str]:
    """The case-aware gate and the gate recommend writes (always one, with any shortfall)."""
    gate, chosen = rec.case_gate, rec.chosen
    lines: list[str] = []
    if gate is not None and not gate.can_fail:
        lines += [
            "",
            f"case-aware gate: none within the false-alarm budget ({gate.runs_needed} "
            f"known-good runs are needed to fail any run; there are {gate.known_good_runs})",
        ]
    elif gate is not None:
        lines += ["", f"case-aware gate: {gate.describe()}"]
        if gate.can_fail:
            lines.append(
                f"  false alarm {format_probability(gate.false_alarm)} (at most "
                f"{gate.allowed} in {gate.known_good_runs + 1}: the CI run ranked among the "
                "known-good runs, exact when healthy runs are alike in distribution)"
            )
            need = gate.stable_needed()
            if need is not None:
                fails = "fails" if need == 1 else "fail"
                lines.append(f"  {plural(need, 'stable case')} failing alone {fails} the build")
            dets = ", ".join(f"{k}: {format_probability(d)}" for k, d in gate.detections)
            lines.append(
                f"  detection of a regression of k stable cases (k: detection, each "
                f"known-good run in turn playing the CI run): {dets}"
            )
            if rec.case_detection is not None:
                lines.append(
                    f"  detection of the regression to catch ({rec.regression}): "
                    f"{format_probability(rec.case_detection)}"
                )
        else:
            lines.append("  it cannot fail a build within the false-alarm budget")
    if chosen is None:
        return lines
    if chosen.kind == "cases":
        what = "the case-aware gate"
    elif chosen.kind == "count":
        what = f"at least {chosen.k_min} of {rec.cases} cases pass"
    else:
        return [*lines, "", f"gate written: none; {chosen.shortfall}"]
    lines += [
        "",
        f"gate written to the gate file and used by check: {what}: false alarm "
        f"{format_probability(chosen.false_alarm)}, detection "
        f"{format_probability(chosen.detection)}"
        + ("" if chosen.meets_targets else " (the best valid gate; it misses a target)"),
    ]
    if chosen.shortfall:
        lines.append(f"  shortfall: {chosen.shortfall}")
    return lines


def _decision_lines(rec: Recommendation) -> list[str]:
    """The targets and the recommended gate, or what would work instead."""
    lines = [
        "",
        f"regression to catch: {rec.regression}",
        f"targets: false alarm <= {rec.targets.false_alarm:g}, detection >= "
        f"{rec.targets.detection:g}; each gate's false alarm (detection) its one-sided "
        f"{100 * rec.measured.gate_level:g}% upper (lower) profile-likelihood bound over "
        "(rate, icc)",
        "",
    ]
    if rec.recommended is not None:
        k = rec.recommended
        low, high = rec.threshold_range(k)
        digits = max(4, len(str(rec.cases)) + 1)  # the two ends apart
        fa, det = rec.table[k]
        lines.append(
            f"recommended gate: at least {k} of {rec.cases} cases pass (at most {rec.cases - k} "
            f"failing): any pass-rate threshold in ({float(low):.{digits}g}, "
            f"{float(high):.{digits}g}]"
        )
        lines.append(f"  false alarm {format_probability(fa)}, detection {format_probability(det)}")
    else:
        cases_meet = rec.chosen is not None and rec.chosen.kind == "cases"
        cases_meet = cases_meet and rec.chosen is not None and rec.chosen.meets_targets
        lines.append(
            "no count gate ('at least k of n pass') meets both targets with this suite "
            "(the case-aware gate above does)."
            if cases_meet
            else "no gate meets both targets with this suite."
        )
        within = rec.within_budget
        if within is None:
            lines.append("  not even 'at least 1 passes' keeps the false alarm within budget")
        else:
            fa, det = rec.table[within]
            lines.append(
                f"  strictest gate within the false-alarm budget: at least {within} of "
                f"{rec.cases} pass (at most {rec.cases - within} failing): false alarm "
                f"{format_probability(fa)}, "
                f"detection {format_probability(det)} (short of {rec.targets.detection:g})"
            )
        systematic = rec.case_spread is not None and rec.case_spread.mostly_systematic
        if rec.plans is not None:
            for plan, policy in zip(rec.plans.plans, rec.plans.policies, strict=True):
                if systematic and policy.majority > 1:
                    lines.append(f"  {policy.describe()}: no help, the noise is mostly systematic")
                elif plan is None:
                    lines.append(
                        f"  {policy.describe()}: no suite up to {rec.plans.max_cases} cases"
                    )
                else:
                    lines.append(
                        f"  {policy.describe()}: {plan.cases} cases with at most "
                        f"{plan.max_failures} failing (false alarm "
                        f"{format_probability(plan.false_alarm)}, detection "
                        f"{format_probability(plan.detection)})"
                    )
            lines.append(
                f"  (each case one judge verdict; rate {rec.plans.noise.fnr:.4f} and icc "
                f"{rec.plans.noise.icc:.3f}, the region's worst for this suite)"
            )
        lines += _more_runs_lines(rec)
    return lines


def _more_runs_lines(rec: Recommendation) -> list[str]:
    """What more known-good runs, failing as these did, would buy."""
    more = rec.more_runs
    if more is None:
        return []
    if more.k_min is None:
        return [
            "  more known-good runs alone would not help: at the measured noise no gate of "
            f"{plural(rec.cases, 'case')} meets both targets"
        ]
    gate = f"'at least {more.k_min} of {rec.cases} pass'"
    if more.runs is None:
        return [
            f"  more known-good runs: not even {RUNS_FOR_GATE_MAX:,} in all, failing as these "
            f"did, would certify {gate} (false alarm {format_probability(more.false_alarm)} "
            "at the measured noise)"
        ]
    return [
        f"  more known-good runs: {more.runs - more.measured_runs} more ({more.runs} in all), "
        f"failing as these did, would certify {gate} for both targets (at the measured noise "
        f"false alarm {format_probability(more.false_alarm)}, detection "
        f"{format_probability(more.detection)})"
    ]
