"""Text, markdown, CSV and JSON for ``gatecal calibrate``."""

from __future__ import annotations

import functools
from typing import Any

from gatecal._analyses.calibrate.judge import Calibration, CheckCalibration, Estimate
from gatecal._common.names import shown as shown_as
from gatecal._common.tables import csv_text, plural, table_lines
from gatecal._render.dispatch import render, written

__all__ = ["render_calibration"]


def _est(e: Estimate, digits: int = 3) -> str:
    return f"{e.estimate:.{digits}f} [{e.low:.{digits}f}, {e.high:.{digits}f}]"


def _name(c: CheckCalibration) -> str:
    return c.check or "judge"


def _csv(cal: Calibration) -> str:
    return csv_text(_csv_rows(cal))


def _csv_rows(cal: Calibration) -> list[dict[str, Any]]:
    rows = []
    checks = list(cal.checks) + ([cal.pooled] if len(cal.checks) > 1 else [])
    for c in checks:
        row: dict[str, Any] = {
            "check": _name(c),
            "items": c.items,
            "pass_items": c.pass_items,
            "fail_items": c.fail_items,
            "judgements": c.judgements,
            "human_pass_judge_pass": c.matrix.pass_pass,
            "human_pass_judge_fail": c.matrix.pass_fail,
            "human_pass_unparseable": c.matrix.pass_unparseable,
            "human_fail_judge_pass": c.matrix.fail_pass,
            "human_fail_judge_fail": c.matrix.fail_fail,
            "human_fail_unparseable": c.matrix.fail_unparseable,
        }
        for key in ("sensitivity", "specificity", "fnr", "fpr", "accuracy", "kappa"):
            e: Estimate = getattr(c, key)
            row |= {key: e.estimate, f"{key}_low": e.low, f"{key}_high": e.high}
        row["ac1"] = c.ac1
        row["unparseable"] = c.unparseable.estimate
        flip = c.consistency.flip_rate.estimate if c.consistency else None
        row["self_consistency_flip_rate"] = flip
        corrected = cal.corrected if cal.corrected and c.check == cal.corrected_check else None
        row["corrected"] = corrected.estimate if corrected else None
        row["corrected_low"] = corrected.low if corrected else None
        row["corrected_high"] = corrected.high if corrected else None
        rows.append(row)
    return rows


def _check_lines(c: CheckCalibration, level: str, fmt: str) -> list[str]:
    m = c.matrix
    lines = [
        f"confusion matrix of {shown_as(_name(c), fmt)} ({plural(c.judgements, 'judgement')}):"
    ]
    lines += table_lines(
        ["human says", "judge pass", "judge fail", "unparseable"],
        [
            ["pass", str(m.pass_pass), str(m.pass_fail), str(m.pass_unparseable)],
            ["fail", str(m.fail_pass), str(m.fail_fail), str(m.fail_unparseable)],
        ],
        fmt,
    )
    rows = [
        [
            "sensitivity: judge passes a truly passing answer",
            _est(c.sensitivity),
            c.sensitivity.method,
        ],
        [
            "specificity: judge fails a truly failing answer",
            _est(c.specificity),
            c.specificity.method,
        ],
        ['fnr: false "no" on a passing answer', _est(c.fnr), c.fnr.method],
        ['fpr: false "yes" on a failing answer', _est(c.fpr), c.fpr.method],
        ["accuracy", _est(c.accuracy), c.accuracy.method],
        ["Cohen's kappa", _est(c.kappa), c.kappa.method],
        ["Gwet's AC1", f"{c.ac1:.3f}", "(behaves when one class is rare)"],
        ["unparseable replies", _est(c.unparseable), c.unparseable.method],
    ]
    if c.consistency is not None:
        s = c.consistency
        rows.append(
            [
                f"repeats disagree ({plural(s.items, 'item')} judged twice or more)",
                _est(s.flip_rate),
                f"noise floor {s.noise_floor:.3f} per verdict",
            ]
        )
    lines += [
        "",
        f"{shown_as(_name(c), fmt)}: {c.pass_items} truly passing, {c.fail_items} truly "
        "failing items",
    ]
    lines += table_lines(["measure", f"estimate [{level} interval]", "method"], rows, fmt)
    lines += _systematic_lines(c, fmt)
    return lines


def _systematic_lines(c: CheckCalibration, fmt: str, shown: int = 8) -> list[str]:
    """The items the judge gets wrong (nearly) every time, named as errors to fix."""
    if not c.systematic:
        return []
    names = ", ".join(
        f"{shown_as(item, fmt)} ({wrong} of {judged})"
        for item, wrong, judged in c.systematic[:shown]
    )
    more = f" and {len(c.systematic) - shown} more" if len(c.systematic) > shown else ""
    share = f"{100 * c.systematic_share:.0f}%"
    whose = f"{shown_as(c.check, fmt)}'s" if c.check else "the judge's"
    return [
        f"wrong every time or nearly ({plural(len(c.systematic), 'item')}, {share} of "
        f"{whose} errors): {names}{more}",
        "  systematic, not noise: fix the judge's prompt or rubric (or the label) for them; "
        "repeats, majority votes and reruns cannot help",
    ]


@render.register
def render_calibration(cal: Calibration, fmt: str = "table") -> str:
    """:func:`calibrate_judge` as ``table``, ``markdown``, ``csv`` or ``json``
    (:func:`gatecal.render`).

    Parameters
    ----------
    cal : Calibration
        What :func:`calibrate_judge` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.
    """
    text = functools.partial(_text, cal)
    return written(cal, fmt, text=text, csv=_csv)


def _text(cal: Calibration, fmt: str) -> str:
    level = f"{100 * cal.confidence_level:g}%"
    p = cal.pooled
    checks = (
        ""
        if len(cal.checks) == 1 and not cal.checks[0].check
        else (f" of {plural(len(cal.checks), 'check')}")
    )
    lines = [
        f"read: {plural(p.items, 'labelled item')}{checks} ({p.pass_items} truly pass, "
        f"{p.fail_items} truly fail), {plural(p.judgements, 'judgement')}"
        + (f", from {shown_as(cal.source, fmt)}" if cal.source else ""),
        "",
    ]
    for c in cal.checks:
        lines += [*_check_lines(c, level, fmt), ""]
    if len(cal.checks) > 1:
        rows = [
            [shown_as(_name(c), fmt), str(c.items), _est(c.fnr), _est(c.fpr), _est(c.kappa)]
            for c in (*cal.checks, p)
        ]
        lines += ["per check:"]
        lines += [*table_lines(["check", "items", "fnr", "fpr", "kappa"], rows, fmt), ""]
    if cal.observed is not None and cal.corrected is not None:
        k, n = cal.observed
        r = cal.corrected
        source = f" ({shown_as(cal.observed_source, fmt)})" if cal.observed_source else ""
        which = f" with the rates of {shown_as(cal.corrected_check or 'the judge', fmt)}"
        lines += [
            f"observed: the judge passed {k:g} of {n:g} items{source}: {k / n:.3f}",
            f"corrected{which}: {r.verdict()}",
            "",
        ]
    pl = cal.plan
    target = f"intervals {pl.width:g} wide ({level})"
    lines += [
        f"labels needed for {target}, at the measured rates:",
        f"  fnr: {pl.fnr_pass_items} truly passing items; fpr: {pl.fpr_fail_items} truly "
        "failing items (each rate is measured on its own class only)",
    ]
    if pl.min_observed is not None:
        lines.append(
            f"  corrected pass rate: no number of labels is enough; the judged run itself "
            f"needs at least {pl.min_observed} items"
        )
    elif pl.pass_items is not None and pl.fail_items is not None:
        lines.append(
            f"  corrected pass rate: {pl.pass_items} passing + {pl.fail_items} failing "
            f"(optimal split, {pl.pass_items + pl.fail_items} in all); "
            f"a 50/50 split needs {pl.balanced_items} + {pl.balanced_items}"
        )
    if pl.run_only_width is not None:
        lines.append(
            f"  (the judged run alone, with Se and Sp known exactly, gives an interval "
            f"{pl.run_only_width:.3f} wide: labels cannot go below that)"
        )
    return "\n".join(lines).rstrip() + "\n"
