"""Text renderings of a Comparison: table, markdown, csv and json."""

from __future__ import annotations

import functools
from typing import Any

from gatecal._analyses.compare.oc import CompareDesign
from gatecal._analyses.compare.result import Comparison
from gatecal._common.names import shown as shown_as
from gatecal._common.tables import (
    csv_text,
    format_probability,
    plural,
    table_lines,
)
from gatecal._render.dispatch import render, written

__all__ = ["render_compare_design", "render_comparison"]

_TESTS = {
    "mcnemar": "exact McNemar test (one run per build: an exact binomial test on the "
    "discordant cases)",
    "runs": "exact permutation test over whole runs (on each case's surprise: how seldom "
    "its failures would fall on the candidate's runs by chance; repeats and run-to-run "
    "correlation kept inside the runs)",
    "cases": "exact sign-flip test over cases (per-case pass-share differences; valid "
    "for independent runs only)",
}


@render.register
def render_comparison(result: Comparison, fmt: str = "table", *, top: int = 20) -> str:
    """:func:`compare_builds` as ``table``, ``markdown``, ``csv`` or ``json``, leading with
    the decision (:func:`gatecal.render`).

    Parameters
    ----------
    result : Comparison
        What :func:`compare_builds` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.
    top : int, default 20
        The most changed cases the table and markdown list by name; the rest are counted.
    """
    text = functools.partial(_comparison_text, result, top=top)
    return written(result, fmt, text=text, csv=lambda _: _comparison_csv(result))


def _comparison_csv(result: Comparison) -> str:
    if not result.changes.cases:
        return (
            "case,baseline_passes,baseline_runs,candidate_passes,candidate_runs,"
            "p_value,adjusted,direction,flagged\n"
        )
    return csv_text([c.to_dict() for c in result.changes.cases])


def _comparison_text(result: Comparison, fmt: str, *, top: int) -> str:
    def name(text: str) -> str:
        return shown_as(text, fmt)

    r = result
    t, runs, ch, oc = r.paired, r.compared, r.changes, r.rates
    alt = "worse (one-sided)" if t.alternative == "worse" else "different (two-sided)"
    verdict = {
        "regression": "REGRESSION: the candidate is worse than the baseline",
        "better": "the candidate differs from the baseline, in its favour",
        "no evidence": "no evidence that the candidate is worse",
        "incomplete": "INCOMPLETE EVIDENCE",
    }[r.decision]
    lines = [
        f"compare: {plural(runs.baseline_runs, 'baseline run')} vs "
        f"{plural(runs.candidate_runs, 'candidate run')} on {plural(runs.cases_compared, 'case')} "
        f"seen in both",
    ]
    for label, only in (("baseline", runs.baseline_only), ("candidate", runs.candidate_only)):
        if only:
            shown = ", ".join(name(c) for c in only[:top])
            more = f" ... {len(only) - top} more" if len(only) > top else ""
            lines.append(f"  seen in the {label} only: {shown}{more}")
    lines += [f"  warning: {name(w)}" for w in r.warnings]
    lines += ["", f"decision: {verdict}"]
    lines += [f"  {name(reason)}" for reason in r.reasons]
    if runs.errors and len(runs.errors) <= runs.max_errors:
        lines.append(
            f"  {len(runs.errors)} error or unscored verdicts counted as failures (at most "
            f"{runs.max_errors} allowed)"
        )
    if runs.assume_independent_runs and t.test == "mcnemar":
        lines.append(
            "  assumes the two runs are independent (asserted: one run per build cannot "
            "measure the run-to-run correlation)"
        )
    if not runs.cases_compared:
        lines.append(
            "  next: give both builds' runs of the same cases (no case has a verdict in both)"
        )
        return "\n".join(lines) + "\n"
    p_text = format_probability(t.p_value)
    test_p = format_probability(t.p_test)
    if not t.exact:  # the run test's p was sampled: say so beside it
        sampled = f" (Monte Carlo, standard error {t.p_value_se:.2g})"
        if t.mode == "test":
            p_text += sampled
        else:
            test_p += sampled
    cases_p = format_probability(t.p_cases)
    how = {
        "both": f"p = {p_text} at alpha {t.alpha:g}: twice the smaller of the run test's "
        f"{test_p} and the per-case tests' {cases_p} (each has half the level)",
        "test": f"p = {p_text} at alpha {t.alpha:g} (the per-case tests can't reach half the "
        "level with these runs, so the test decides alone)",
        "cases": f"p = {p_text} at alpha {t.alpha:g}, the per-case tests' (the test itself "
        f"can't reach alpha; its p is {test_p})",
        "none": f"p = {test_p}; neither part can reach alpha {t.alpha:g}",
    }[t.mode]
    lines += [
        f"  test: {_TESTS.get(t.test, t.test)}, and Fisher's exact test per case",
        f"  alternative: {alt}; {how}",
    ]
    if ch.discordant is not None:
        lines.append(
            f"  discordant cases: {ch.discordant.worse} passed in the baseline and failed in the "
            f"candidate, {ch.discordant.better} the reverse"
        )
    elif t.test == "runs":
        lines.append(f"  mean pass share, baseline minus candidate: {t.statistic:+.4f}")
    else:
        lines.append(f"  sum of per-case pass-share differences: {t.statistic:+.4f}")
    control = {
        "holm": "Holm (family-wise error)",
        "bh": "Benjamini-Hochberg (false-discovery rate)",
        "tarone": "Tarone's discrete Bonferroni over the cases that can reach the level "
        "(family-wise error)",
    }.get(ch.multiplicity, ch.multiplicity)
    level = t.alpha / 2 if t.mode == "both" else t.alpha
    lines += ["", f"changed cases (Fisher's exact test per case, {control} at {level:g}):"]
    lines.append("  worse: " + (", ".join(name(c) for c in ch.worse) or "none"))
    if t.alternative == "two-sided":
        lines.append("  better: " + (", ".join(name(c) for c in ch.better) or "none"))
    changed = [c for c in ch.cases if c.direction != "same"][:top]
    if changed:
        rows = [
            [
                name(c.case),
                f"{c.baseline_passes}/{c.baseline_runs}",
                f"{c.candidate_passes}/{c.candidate_runs}",
                format_probability(c.p_value),
                format_probability(c.adjusted),
                "yes" if c.flagged else "",
            ]
            for c in changed
        ]
        lines += [
            "",
            *table_lines(["case", "baseline", "candidate", "p", "adjusted", "flagged"], rows, fmt),
        ]
        rest = sum(c.direction != "same" for c in ch.cases) - len(changed)
        if rest > 0:
            lines.append(f"  ... {rest} more changed cases")
    if oc.operating:
        lines += [
            "",
            f"this comparison's own error rates (simulated, {oc.oc_samples} pairs of builds per "
            "point; each run's failure rate drawn from the baseline's measured noise):",
            f"  false alarm on two healthy builds: {format_probability(oc.false_alarm or 0.0)}; "
            f"detection of {oc.regression} ({oc.regression_failing} of {runs.cases_compared}): "
            f"{format_probability(oc.detection or 0.0)} (the worst over the points below)",
        ]
        rows = [
            [
                o.point,
                f"{o.rate:.4f}",
                f"{o.icc:.3f}",
                f"{format_probability(o.false_alarm)} ± {o.false_alarm_se:.2g}",
                f"{format_probability(o.detection)} ± {o.detection_se:.2g}",
            ]
            for o in oc.operating
        ]
        lines += table_lines(["noise point", "rate", "icc", "false alarm", "detection"], rows, fmt)
    return "\n".join(lines) + "\n"


@render.register
def render_compare_design(design: CompareDesign, fmt: str = "table") -> str:
    """:func:`plan_compare` as ``table``, ``markdown``, ``csv`` or ``json``
    (:func:`gatecal.render`).

    Parameters
    ----------
    design : CompareDesign
        What :func:`plan_compare` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.
    """
    text = functools.partial(_design_text, design)
    return written(design, fmt, text=text, csv=lambda _: csv_text(_rows(design)))


def _rows(design: CompareDesign) -> list[dict[str, Any]]:
    return [
        {
            "runs": r,
            "false_alarm": o.false_alarm,
            "false_alarm_se": o.false_alarm_se,
            "detection": o.detection,
            "detection_se": o.detection_se,
        }
        for r, o in design.rows
    ]


def _design_text(design: CompareDesign, fmt: str) -> str:
    rows = _rows(design)
    d = design
    lines = [
        f"compare plan: {plural(d.cases, 'case')}, each run's failure rate {d.rate:g} on "
        f"average (icc {d.icc:g}); the regression: {plural(d.failing, 'case')} failing in the "
        "candidate",
        f"targets: false alarm <= {d.targets.false_alarm:g} (the comparison's level), "
        f"detection >= {d.targets.detection:g}; simulated, {d.samples} pairs of builds per row",
        "",
    ]
    if d.runs is None:
        top = max(r for r, _ in d.rows)
        lines.append(f"no number of runs per build up to {top} meets both targets")
    else:
        o = dict(d.rows)[d.runs]
        lines.append(
            f"runs per build: {d.runs} (false alarm {format_probability(o.false_alarm)} ± "
            f"{o.false_alarm_se:.2g}, detection {format_probability(o.detection)} ± "
            f"{o.detection_se:.2g})"
        )
    lines += ["", "runs tried:"]
    table = [
        [
            str(r["runs"]),
            f"{format_probability(r['false_alarm'])} ± {r['false_alarm_se']:.2g}",
            f"{format_probability(r['detection'])} ± {r['detection_se']:.2g}",
        ]
        for r in rows
    ]
    lines += table_lines(["runs per build", "false alarm", "detection"], table, fmt)
    return "\n".join(lines) + "\n"
