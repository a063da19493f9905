"""Text renderings of a SimulationReport: a plain table, markdown, CSV and JSON."""

from __future__ import annotations

from gatecal._analyses.simulate import GateRow, SimulationReport
from gatecal._common.defaults import SPREAD_SUITES
from gatecal._common.tables import csv_text, format_probability, percent, plural
from gatecal._model.suite import BUILDS
from gatecal._render.dispatch import render, written

__all__ = ["render_simulation"]

_HEADERS = {"healthy": "healthy build fails it", "regressed": "regressed build fails it"}


def _cell(row: GateRow, *, align: bool = True) -> str:
    mark = "" if row.consistent else " !"
    width = len(str(row.runs)) if align else 0
    return (
        f"{row.simulated_failures:>{width}} of {row.runs} runs"
        f"  P = {format_probability(row.exact_failure_probability)}{mark}"
    )


def _suite_lines(report: SimulationReport) -> list[str]:
    s = report.suite
    checks = f"{plural(s.judge_checks, 'judge check')} and {plural(s.code_checks, 'code check')}"
    code, judge_only = s.failing_by_kind("regressed")
    verb = {True: "fails", False: "fail"}
    parts = (
        [f"{plural(code, 'case')} {verb[code == 1]} a code check"] if code or not judge_only else []
    )
    if judge_only:
        parts.append(f"{plural(judge_only, 'case')} {verb[judge_only == 1]} only a judge check")
    nf = {b: f"{report.noise_free_pass_rate(b):.2f}" for b in BUILDS}
    extra = []
    nz = report.noise
    if report.fixed_fpr:
        extra.append(
            f'a truly failing check is wrongly passed ("yes") {percent(nz.fpr)} of the time'
        )
    if nz.unparseable:
        extra.append(f"{percent(nz.unparseable)} of judge replies are unparseable (they fail)")
    if nz.icc:
        extra.append(f"each run draws its own flip rate (run-level correlation, icc {nz.icc:g})")
    if nz.cases_differ:
        extra.append(_cases_differ(report))
    if nz.per_check or nz.per_case:
        checks_, cases_ = plural(len(nz.per_check), "check"), plural(len(nz.per_case), "case")
        extra.append(f"own rates for {checks_} and {cases_}")
    noise_lines = [f"judge noise: {'; '.join(extra)}"] if extra else []
    return [
        f"suite: {plural(s.n_cases, 'case')}, each with {checks}",
        f"regressed build: {'; '.join(parts)}",
        f"noise-free pass rate: healthy build {nf['healthy']}, regressed build {nf['regressed']}",
        *noise_lines,
        f"{report.n_runs} simulated runs per build and flip rate, seed {report.seed};"
        " counts are simulated, P is exact",
    ]


def _cases_differ(report: SimulationReport) -> str:
    """The case spread and the systematic cases in words, with the first flip rate's
    middle and upper case rates."""
    from dataclasses import replace

    from gatecal._model.suite import systematic_count

    nz, n = report.noise, report.suite.n_cases
    stuck = systematic_count(n, nz.systematic)
    parts = []
    if nz.case_spread and stuck < n:
        flip = report.flips[0]
        at = replace(nz, fnr=flip, fpr=nz.fpr if report.fixed_fpr else flip)

        def rate(x: float) -> str:
            return "0.0001" if x < 1e-4 else f"{x:.4f}"

        parts.append(
            f"each case draws its own flip rate, kept in every run (case spread "
            f"{nz.case_spread:g}; at {percent(report.flips[0])} on average, half the cases "
            f"below {rate(at.case_rate_quantile(0.5))}, one in ten above "
            f"{rate(at.case_rate_quantile(0.9))}); P is the average over suites drawn "
            "from the spread, and each simulated run draws its suite afresh"
        )
    if stuck:
        last = "the last case" if stuck == 1 else f"the last {stuck}"
        parts.append(f"{stuck} of {n} cases misjudged every time ({last})")
    return "; ".join(parts)


def _flip_unused(report: SimulationReport) -> bool:
    """Every judge verdict has its own rate from the suite spec, so the flip rate is unused."""
    nz, s = report.noise, report.suite
    judge_checks = {c.name for c in s.checks if c.kind == "judge"}
    return set(s.cases) <= set(nz.per_case) or judge_checks <= set(nz.per_check)


def _block_title(report: SimulationReport, p: float) -> str:
    if _flip_unused(report):
        return f"judge rates from the suite spec (--flip {p:g} does not apply: each has its own)"
    if report.fixed_fpr:
        return f'{percent(p)} of passing judge verdicts flipped to "no"'
    return f"{percent(p)} of judge verdicts flipped"


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


def _one_suite(rows: list[GateRow]) -> list[tuple[str, str, str]]:
    """(rule, healthy, regressed) ranges of single drawn suites, when the rows have them."""
    cells = {
        (r.build, r.gate): f"{format_probability(r.one_suite[0])} to "
        f"{format_probability(r.one_suite[1])}"
        for r in rows
        if r.one_suite is not None
    }
    return [
        (r.rule, cells[("healthy", r.gate)], cells[("regressed", r.gate)])
        for r in rows
        if r.build == "healthy" and ("healthy", r.gate) in cells
    ]


#: The heading of the block that says how much one suite drawn from a case spread varies.
ONE_SUITE = (
    f"one suite, not the average: P for 8 in 10 of {SPREAD_SUITES:,} suites drawn from the "
    "spread (10th to 90th percentile)"
)


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
        if ranges := _one_suite(rows):
            w_range = max(len(_HEADERS["healthy"]), *(len(h) for _, h, _ in ranges)) + 3
            out += ["", ONE_SUITE]
            out.append(
                f"{'gate':<{w_rule + 7}}{_HEADERS['healthy']:<{w_range}}{_HEADERS['regressed']}"
            )
            out += [f"{rule:<{w_rule + 7}}{h:<{w_range}}{g}" for rule, h, g in ranges]
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
        if ranges := _one_suite(rows):
            out += ["", ONE_SUITE, ""]
            out += [f"| gate | {_HEADERS['healthy']} | {_HEADERS['regressed']} |", "|---|---|---|"]
            out += [f"| {rule} | {h} | {g} |" for rule, h, g in ranges]
    return "\n".join([*out, "", *_footer(report)]) + "\n"


@render.register
def render_simulation(report: SimulationReport, fmt: str = "table") -> str:
    """`report` as ``table``, ``markdown``, ``csv`` or ``json`` text (:func:`gatecal.render`).

    Parameters
    ----------
    report : SimulationReport
        What :func:`simulate_gates` or :func:`compare_samples` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.
    """
    return written(report, fmt, table=_table, markdown=_markdown, csv=_csv)


def _csv(report: SimulationReport) -> str:
    return csv_text([r.to_dict() for r in report.rows])
