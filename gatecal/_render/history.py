"""Text renderings of a History: table, markdown, csv and json."""

from __future__ import annotations

import functools

from gatecal._analyses.history.changes import Shift
from gatecal._analyses.history.record import History
from gatecal._common.tables import (
    csv_text,
    md_text,
    plural,
    safe_terminal,
    table_lines,
)
from gatecal._render.dispatch import render, written

__all__ = ["render_history"]

#: The latest runs the grid shows (older ones are counted, not drawn).
GRID_RUNS = 60
#: Cases the grid shows: the changed and the failing first.
GRID_CASES = 200


def _grid(result: History) -> list[str]:
    """Each case's record, one column per run, a ``|`` where the judge's name changes."""
    runs = result.runs[-GRID_RUNS:]
    offset = len(result.runs) - len(runs)
    changed = set(result.changed)
    order = sorted(
        range(len(result.cases)),
        key=lambda j: (result.cases[j] not in changed, "x" not in result.grid[j], j),
    )[:GRID_CASES]
    width = min(max((len(result.short[j]) for j in order), default=4), 40)
    bounds = {i for i in range(1, len(runs)) if runs[i].judge != runs[i - 1].judge}
    older = f" (and {offset} older)" if offset else ""
    lines = [
        f"  {len(runs)} runs, oldest first{older}: . pass  x fail  - no verdict  "
        "| judge changes  * changed"
    ]
    for j in order:
        row = result.grid[j][offset:]
        cells = "".join(("|" if i in bounds else "") + ch for i, ch in enumerate(row))
        mark = "*" if result.cases[j] in changed else " "
        lines.append(f"  {mark} {safe_terminal(result.short[j][:width]):<{width}}  {cells}")
    if len(result.cases) > len(order):
        lines.append(f"  ... and {len(result.cases) - len(order)} more cases")
    return lines


def _segments(result: History) -> list[str]:
    lines, start = [], 0
    runs = result.runs
    for i in range(1, len(runs) + 1):
        if i == len(runs) or runs[i].judge != runs[start].judge:
            lines.append(
                f"  {runs[start].judge}: {plural(i - start, 'run')}, "
                f"{runs[start].recorded_at} to {runs[i - 1].recorded_at}"
            )
            start = i
    return lines


def _shift_lines(shift: Shift, fmt: str) -> list[str]:
    if shift.kind == "judge":
        head = f"Judge {shift.before} -> {shift.after} (at {shift.at})"
    elif shift.kind == "window":
        head = f"Within judge {shift.after}'s runs (every split tried: {shift.splits})"
    else:
        head = f"Judge {shift.after}'s runs before and after {shift.at}"
    test = (
        f"Fisher's exact test per case, {'Holm' if shift.multiplicity == 'holm' else 'BH'} "
        f"over the {plural(shift.tested, 'case')} whose record can reach {shift.alpha:g}"
    )
    changed = shift.changed
    verdict = f"{plural(len(changed), 'case')} changed" if changed else "no case changed"
    lines = [f"{head}: {verdict} ({test})."]
    if changed:
        rows = [
            [
                md_text(c.case) if fmt == "markdown" else safe_terminal(c.case),
                f"{c.before_failed}/{c.before_runs}",
                f"{c.after_failed}/{c.after_runs}",
                c.direction,
                f"{c.adjusted:.2g}",
                c.at,
            ]
            for c in changed
        ]
        header = ["case", "failed before", "failed after", "direction", "adjusted p", "from"]
        table = table_lines(header, rows, fmt)
        lines += table if fmt == "markdown" else [f"  {line}" for line in table]
    return lines


@render.register
def render_history(result: History, fmt: str = "table") -> str:
    """:func:`case_history` as ``table``, ``markdown``, ``csv`` or ``json``, leading with
    the answer: does the baseline still describe today's judge, and which cases changed
    (:func:`gatecal.render`).

    Parameters
    ----------
    result : History
        What :func:`case_history` returned.
    fmt : {"table", "markdown", "csv", "json"}, default "table"
        The output format.
    """
    text = functools.partial(_text, result)
    return written(result, fmt, text=text, csv=_csv)


def _csv(result: History) -> str:
    rows = [
        {"comparison": s.kind, "before": s.before, "after": s.after, **c.to_dict()}
        for s in (*result.judges, *result.shifts_within())
        for c in s.cases
    ]
    if not rows:
        return "comparison,before,after,case,before_failed,before_runs,after_failed,after_runs,p_value,adjusted,changed,direction,at\n"  # noqa: E501
    return csv_text(rows)


def _text(result: History, fmt: str) -> str:
    latest = result.runs[-1].judge
    parts = []
    for shift in result.judges:
        moved = [c.case for c in shift.changed]
        names = ", ".join(moved[:10]) + (f" and {len(moved) - 10} more" if len(moved) > 10 else "")
        parts.append(
            f"The judge changed ({shift.before} -> {shift.after}, {shift.at}): "
            + (f"{plural(len(moved), 'case')} moved: {names}." if moved else "no case moved.")
        )
    if result.describes_today:
        parts.append(
            f"The latest judge's runs ({latest}) still describe it: no case changed within "
            f"them; {result.advice}."
        )
    else:
        parts.append(f"Judge {latest}'s record changed within its runs: {result.advice}.")
    head = " ".join(parts)
    lines = [
        head if fmt == "table" else md_text(head),
        "",
        f"{plural(len(result.runs), 'run')} of {plural(len(result.cases), 'case')} from "
        f"{result.store} ({result.selection}), by judge:",
        *_segments(result),
    ]
    for shift in (*result.judges, *result.shifts_within()):
        lines += ["", *_shift_lines(shift, fmt)]
    lines += ["", *_grid(result)]  # aligned lines: a notebook fences them (monospace)
    return "\n".join(lines) + "\n"
