"""Text renderings of a SimulationReport: a plain table, markdown, CSV and JSON."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gatecal._analyses.simulate import GateRow, SimulationReport
from gatecal._common.validate import ParameterError
from gatecal._model.suite import BUILDS, JudgeNoise

if TYPE_CHECKING:  # annotations only: the simulate command need not import these modules
    from gatecal._analyses.plan import SuitePlans
    from gatecal._analyses.policies import PolicyComparisonRow, PolicyReport
    from gatecal._analyses.recommend import RateEstimate, Recommendation

__all__ = [
    "FORMATS",
    "format_probability",
    "render",
    "render_plans",
    "render_policies",
    "render_recommendation",
]

FORMATS = ("table", "markdown", "csv", "json")
_HEADERS = {"healthy": "healthy build fails it", "regressed": "regressed build fails it"}


def format_probability(p: float) -> str:
    """Four significant digits; never shows a probability below 1 as ``1``."""
    if p in (0.0, 1.0):
        return f"{p:g}"
    if p < 1e-4:
        return f"{p:.2e}"
    text = f"{p:.4g}"
    return "> 0.9999" if float(text) >= 1.0 else text


def _percent(p: float) -> str:
    return f"{100 * p:.10g}%"


def _md_text(text: str) -> str:
    """A user's text (a case name) inside markdown: no HTML, no table breaks, no emphasis."""
    import html

    escaped = html.escape(text, quote=False)
    return "".join("\\" + ch if ch in "\\`*_[]|#" else ch for ch in escaped)


def safe_terminal(text: str) -> str:
    """`text` with control characters (other than newline and tab) shown as escapes, so a
    case name cannot move the cursor, clear the screen or retitle a terminal."""
    return "".join(
        ch if ch in "\n\t" or (ch.isprintable() and not 0x80 <= ord(ch) < 0xA0) else ascii(ch)[1:-1]
        for ch in text
    )


def _plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {words or word + 's'}"


def _cell(row: GateRow, *, align: bool = True) -> str:
    mark = "" if row.consistent else " !"
    width = len(str(row.runs)) if align else 0
    return (
        f"{row.simulated_failures:>{width}} of {row.runs} runs"
        f"  P = {format_probability(row.exact_failure_probability)}{mark}"
    )


def _suite_lines(report: SimulationReport) -> list[str]:
    s = report.suite
    checks = f"{_plural(s.judge_checks, 'judge check')} and {_plural(s.code_checks, 'code check')}"
    code, judge_only = s.failing_by_kind("regressed")
    verb = {True: "fails", False: "fail"}
    parts = (
        [f"{_plural(code, 'case')} {verb[code == 1]} a code check"]
        if code or not judge_only
        else []
    )
    if judge_only:
        parts.append(f"{_plural(judge_only, 'case')} {verb[judge_only == 1]} only a judge check")
    nf = {b: f"{report.noise_free_pass_rate(b):.2f}" for b in BUILDS}
    extra = []
    nz = report.noise
    if report.fixed_fpr:
        extra.append(
            f'a truly failing check is wrongly passed ("yes") {_percent(nz.fpr)} of the time'
        )
    if nz.unparseable:
        extra.append(f"{_percent(nz.unparseable)} of judge replies are unparseable (they fail)")
    if nz.icc:
        extra.append(f"each run draws its own flip rate (run-level correlation, icc {nz.icc:g})")
    if nz.per_check or nz.per_case:
        checks_, cases_ = _plural(len(nz.per_check), "check"), _plural(len(nz.per_case), "case")
        extra.append(f"own rates for {checks_} and {cases_}")
    noise_lines = [f"judge noise: {'; '.join(extra)}"] if extra else []
    return [
        f"suite: {_plural(s.n_cases, 'case')}, each with {checks}",
        f"regressed build: {'; '.join(parts)}",
        f"noise-free pass rate: healthy build {nf['healthy']}, regressed build {nf['regressed']}",
        *noise_lines,
        f"{report.n_runs} simulated runs per build and flip rate, seed {report.seed};"
        " counts are simulated, P is exact",
    ]


def _flip_unused(report: SimulationReport) -> bool:
    """Every judge verdict has its own rate from the suite spec, so the flip rate is unused."""
    nz, s = report.noise, report.suite
    judge_checks = {c.name for c in s.checks if c.kind == "judge"}
    return set(s.cases) <= set(nz.per_case) or judge_checks <= set(nz.per_check)


def _block_title(report: SimulationReport, p: float) -> str:
    if _flip_unused(report):
        return f"judge rates from the suite spec (--flip {p:g} does not apply: each has its own)"
    if report.fixed_fpr:
        return f'{_percent(p)} of passing judge verdicts flipped to "no"'
    return f"{_percent(p)} of judge verdicts flipped"


def _blocks(report: SimulationReport) -> list[tuple[float, list[GateRow]]]:
    return [(p, [r for r in report.rows if r.flip == p]) for p in report.flips]


def _footer(report: SimulationReport) -> list[str]:
    lines = []
    n = report.suite.n_cases
    for k, gates in report.equivalent_gates():
        rules = (
            ", ".join(f'"{g.describe()}"' for g in gates[:-1]) + f' and "{gates[-1].describe()}"'
        )
        every = "both" if len(gates) == 2 else "all"
        lines.append(f"same gate: {rules} {every} need {k} of {n} cases to pass")
    level = f"{100 * report.confidence_level:g}%"
    bad = report.inconsistent_rows
    if not bad:
        lines.append(
            f"consistent: every simulated count lies inside the {level} binomial interval"
            " of its exact probability"
        )
    else:
        lines.append(
            f"! {len(bad)} of {len(report.rows)} simulated counts lie outside the {level}"
            f" binomial interval of their exact probability (by chance, about"
            f" {1 - report.confidence_level:.0%} of them would)"
        )
    return lines


def _table(report: SimulationReport) -> str:
    out = _suite_lines(report)
    for p, rows in _blocks(report):
        means = {r.build: r for r in rows}
        out += ["", f"== {_block_title(report, p)} =="]
        out.append(f"{'mean pass rate':<18}{'exact':<10}simulated")
        for build in BUILDS:
            r = means[build]
            out.append(
                f"{build + ' build':<18}{r.exact_mean_pass_rate:<10.4f}"
                f"{r.simulated_mean_pass_rate:.4f}"
            )
        out.append("")
        gates = [r for r in rows if r.build == "healthy"]
        cells = {(r.build, r.gate): _cell(r) for r in rows}
        w_rule = max(len("gate"), *(len(r.rule) for r in gates)) + 2
        w_cell = max(len(_HEADERS["healthy"]), *(len(c) for c in cells.values())) + 3
        out.append(
            f"{'gate':<{w_rule}}{'k_min':<7}{_HEADERS['healthy']:<{w_cell}}{_HEADERS['regressed']}"
        )
        for r in gates:
            out.append(
                f"{r.rule:<{w_rule}}{r.k_min:<7}{cells[('healthy', r.gate)]:<{w_cell}}"
                f"{cells[('regressed', r.gate)]}".rstrip()
            )
    return "\n".join([*out, "", *_footer(report)]) + "\n"


def _markdown(report: SimulationReport) -> str:
    out = [f"- {line}" for line in _suite_lines(report)]
    for p, rows in _blocks(report):
        means = {r.build: r for r in rows}
        out += ["", f"### {_block_title(report, p)}", ""]
        out += ["| mean pass rate | exact | simulated |", "|---|---:|---:|"]
        for build in BUILDS:
            r = means[build]
            exact, simulated = r.exact_mean_pass_rate, r.simulated_mean_pass_rate
            out.append(f"| {build} build | {exact:.4f} | {simulated:.4f} |")
        out += ["", f"| gate | k_min | {_HEADERS['healthy']} | {_HEADERS['regressed']} |"]
        out.append("|---|---:|---|---|")
        cells = {(r.build, r.gate): _cell(r, align=False) for r in rows}
        for r in rows:
            if r.build == "healthy":
                out.append(
                    f"| {r.rule} | {r.k_min} | {cells[('healthy', r.gate)]}"
                    f" | {cells[('regressed', r.gate)]} |"
                )
    return "\n".join([*out, "", *_footer(report)]) + "\n"


def _csv(rows: Sequence[GateRow]) -> str:
    return _csv_text([r.to_dict() for r in rows])


def _json(report: SimulationReport) -> str:
    data = report.to_dict()
    for row in data["rows"]:  # JSON has no NaN or infinity; never emit them
        for key, value in row.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"row value `{key}` is not finite (got {value!r})")
    return json.dumps(data, indent=2) + "\n"


def render(report: SimulationReport, fmt: str = "table") -> str:
    """Render `report` as ``table``, ``markdown``, ``csv`` or ``json`` text."""
    if fmt == "table":
        return _table(report)
    if fmt == "markdown":
        return _markdown(report)
    if fmt == "csv":
        return _csv(report.rows)
    if fmt == "json":
        return _json(report)
    raise ParameterError("fmt", f"must be one of {FORMATS}", fmt)


def _table_lines(header: Sequence[str], rows: Sequence[Sequence[str]], fmt: str) -> list[str]:
    """A plain aligned table, or a markdown one."""
    if fmt == "markdown":
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return out + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return lines


def _csv_text(dicts: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(dicts[0]), lineterminator="\n")
    writer.writeheader()
    for d in dicts:
        writer.writerow(
            {
                k: "" if v is None else str(v).lower() if isinstance(v, bool) else v
                for k, v in d.items()
            }
        )
    return buffer.getvalue()


def _noise_words(noise: JudgeNoise) -> str:
    if noise.fnr == noise.fpr:
        words = f"{_percent(noise.fnr)} of judge verdicts wrong"
    else:
        words = f'false "no" {_percent(noise.fnr)}, false "yes" {_percent(noise.fpr)}'
    if noise.unparseable:
        words += f", {_percent(noise.unparseable)} unparseable"
    if noise.icc:
        words += f", run-level icc {noise.icc:g}"
    return words


def render_plans(plans: SuitePlans, fmt: str = "table") -> str:
    """Render :func:`plan_suite`'s answer as ``table``, ``markdown``, ``csv`` or ``json``."""
    rows = [p.to_dict() if p else None for p in plans.plans]
    if fmt == "json":
        best = plans.recommended
        data: dict[str, Any] = {
            **(
                best.to_dict()
                if best
                else {"cases": None, "k_min": None, "false_alarm": None, "detection": None}
            ),
            "feasible": best is not None,
            "targets": {"false_alarm": plans.false_alarm, "detection": plans.detection},
            "flip": plans.noise.fnr,
            "fpr": plans.noise.fpr,
            "unparseable": plans.noise.unparseable,
            "icc": plans.noise.icc,
            "regression": plans.regression.text,
            "judge_checks": plans.judge_checks,
            "code_checks": plans.code_checks,
            "max_cases": plans.max_cases,
            "alternatives": [
                r if r else {"policy": pol.describe(), "cases": None}
                for r, pol in zip(rows, plans.policies, strict=True)
            ],
        }
        return json.dumps(data, indent=2) + "\n"
    if fmt == "csv":
        return _csv_text(
            [
                r
                if r
                else {
                    "policy": pol.describe(),
                    "cases": None,
                    "k_min": None,
                    "max_failures": None,
                    "failing": None,
                    "false_alarm": None,
                    "detection": None,
                    "judge_calls": None,
                }
                for r, pol in zip(rows, plans.policies, strict=True)
            ]
        )
    if fmt not in ("table", "markdown"):
        raise ParameterError("fmt", f"must be one of {FORMATS}", fmt)
    checks = f"{_plural(plans.judge_checks, 'judge check')} and "
    checks += _plural(plans.code_checks, "code check")
    kind = "a code check" if plans.code_checks else "a judge check"
    head = [
        f"targets: false alarm <= {plans.false_alarm:g}, detection >= {plans.detection:g}",
        f"judge: {_noise_words(plans.noise)}; each case: {checks}",
        f"regression: {plans.regression.describe()} ({kind}; rounded half up to whole cases)",
        "",
    ]
    header = ["policy", "cases", "gate", "false alarm", "detection", "judge calls per run"]
    table = []
    for plan, policy in zip(plans.plans, plans.policies, strict=True):
        if plan is None:
            beyond = "none" if plans.max_cases is None else f"> {plans.max_cases}"
            table.append([policy.describe(), beyond, "none meets both", "", "", ""])
            continue
        table.append(
            [
                plan.policy.describe(),
                str(plan.cases),
                f"at most {plan.max_failures} failing (k_min {plan.k_min})",
                format_probability(plan.false_alarm),
                format_probability(plan.detection),
                f"{plan.judge_calls:.1f}",
            ]
        )
    lines = head + _table_lines(header, table, fmt)
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
    return "\n".join(lines) + "\n"


def render_policies(report: PolicyReport, fmt: str = "table") -> str:
    """Render :func:`compare_policies` as ``table``, ``markdown``, ``csv`` or ``json``."""
    dicts = [dataclasses.asdict(r) for r in report.rows]
    if fmt == "json":
        data = {
            "seed": report.seed,
            "runs": report.n_runs,
            "cases": report.suite.n_cases,
            "flip": report.noise.fnr,
            "fpr": report.noise.fpr,
            "unparseable": report.noise.unparseable,
            "icc": report.noise.icc,
            "confidence_level": report.confidence_level,
            "rows": dicts,
        }
        return json.dumps(data, indent=2) + "\n"
    if fmt == "csv":
        return _csv_text(dicts)
    if fmt not in ("table", "markdown"):
        raise ParameterError("fmt", f"must be one of {FORMATS}", fmt)
    lines = [
        f"judge: {_noise_words(report.noise)}; {_plural(report.suite.n_cases, 'case')}",
        f"P exact; counts from {report.n_runs} CI runs simulated call by call (seed "
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
    lines += _table_lines(header, table, fmt)
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


def _rate(e: RateEstimate) -> str:
    return f"{e.estimate:.4f} [{e.low:.4f}, {e.high:.4f}]"


def render_recommendation(rec: Recommendation, fmt: str = "table", *, top: int = 10) -> str:
    """Render :func:`recommend_gate` as ``table``, ``markdown``, ``csv`` or ``json``."""
    if fmt == "json":
        return json.dumps(rec.to_dict(), indent=2) + "\n"
    if fmt == "csv":
        return _csv_text([{"k_min": k, "false_alarm": fa, "detection": det}
                          for k, (fa, det) in enumerate(rec.table)])  # fmt: skip
    if fmt not in ("table", "markdown"):
        raise ParameterError("fmt", f"must be one of {FORMATS}", fmt)
    level = f"{100 * rec.confidence_level:g}%"
    builds = _plural(rec.runs, "known-good run")
    if rec.regressed_runs:
        builds += f" and {_plural(rec.regressed_runs, 'regressed run')}"
    lines = [
        f"read: {builds} of {_plural(rec.cases, 'case')} from {_plural(len(rec.sources), 'file')}"
        + (f" ({_plural(rec.sessions, 'session')})" if rec.sessions != rec.runs else ""),
    ]
    left_out = []
    if rec.skipped:
        left_out.append(f"{_plural(rec.skipped, 'skipped test')}")
    if rec.errors:
        words = ("error or unscored verdict", "errors or unscored verdicts")
        left_out.append(_plural(rec.errors, *words))
    if left_out:
        lines.append(f"  left out as missing data: {', '.join(left_out)}"
                     + (f" ({rec.missing} of {rec.runs * rec.cases} case runs missing)"
                        if rec.missing else ""))  # fmt: skip
    if rec.reruns:
        counted = ("the first attempt counts" if rec.attempts_policy == "first"
                   else "the last attempt counts")  # fmt: skip
        lines.append(f"  {_plural(rec.reruns, 'rerun attempt')} seen: {counted}")
    lines += [f"  warning: {w}" for w in rec.warnings]
    lines += [
        "",
        f"noise ({level} {rec.method} intervals)",
        f"  case failure rate, pooled: {_rate(rec.noise)}"
        f"  ({rec.noise.failures:g} of {rec.noise.trials:g} case runs)",
    ]
    if rec.judge_noise is not None:
        lines.append(f"  judge verdicts wrongly 'no':  {_rate(rec.judge_noise)}"
                     f"  ({rec.judge_noise.failures:g} of {rec.judge_noise.trials:g})")  # fmt: skip
    od = rec.overdispersion
    verdict = ("correlated: runs vary more than independent verdicts allow"
               if rec.correlated else "no evidence of run-to-run correlation")  # fmt: skip
    lines += [
        f"  run-to-run correlation: icc {od.icc:.3f} (moments {od.moment_icc:.3f}), "
        f"design effect {od.design_effect:.2f}, LR test p = {format_probability(od.p_value)}: "
        f"{verdict}",
    ]
    if rec.sessions < rec.runs:
        lines.append(
            f"  (the test compares {_plural(rec.runs, 'run')} from "
            f"{_plural(rec.sessions, 'session')}: repeats inside one invocation share a process "
            "and a time window, so drift between invocations shows only across sessions)"
        )
    if rec.icc_for_gate > 0:
        lines.append(
            f"  the gate allows for an icc up to {rec.icc_for_gate:.3f} and, jointly, a rate in "
            f"{_rate(rec.noise_for_gate)[7:]} ({level} confidence region)"
        )
    lines += ["", f"flakiest cases (failures in {_plural(rec.runs, 'known-good run')}):"]
    for c in rec.per_case[:top]:
        name = _md_text(c.case) if fmt == "markdown" else c.case
        lines.append(f"  {name:<32} {c.rate.failures:>4g}  {_rate(c.rate)}")
    if len(rec.per_case) > top:
        lines.append(f"  ... {len(rec.per_case) - top} more")
    lines += [
        "",
        f"regression to catch: {rec.regression}",
        f"targets: false alarm <= {rec.false_alarm_target:g}, detection >= "
        f"{rec.detection_target:g}; false alarm the largest and detection the smallest over "
        "that (rate, icc) region",
        "",
    ]
    if rec.recommended is not None:
        k = rec.recommended
        low, high = rec.threshold_range(k)
        fa, det = rec.table[k]
        lines.append(
            f"recommended gate: at least {k} of {rec.cases} cases pass (at most {rec.cases - k} "
            f"failing): any pass-rate threshold in ({float(low):.4g}, {float(high):.4g}]"
        )
        lines.append(f"  false alarm {format_probability(fa)}, detection {format_probability(det)}")
    else:
        lines.append("no gate meets both targets with this suite.")
        within = rec.within_budget
        if within is None:
            lines.append("  not even 'at least 1 passes' keeps the false alarm within budget")
        else:
            fa, det = rec.table[within]
            lines.append(
                f"  strictest gate within the false-alarm budget: at least {within} of "
                f"{rec.cases} pass (at most {rec.cases - within} failing): false alarm "
                f"{format_probability(fa)}, "
                f"detection {format_probability(det)} (short of {rec.detection_target:g})"
            )
        if rec.plans is not None:
            for plan, policy in zip(rec.plans.plans, rec.plans.policies, strict=True):
                if plan is None:
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
    lines += ["", "operating table:"]
    rows = [[str(k), f"{k / rec.cases:.3f}", format_probability(fa), format_probability(det)]
            for k, (fa, det) in enumerate(rec.table)]  # fmt: skip
    lines += _table_lines(["k_min", "rate", "false alarm", "detection"], rows, fmt)
    return "\n".join(lines) + "\n"
