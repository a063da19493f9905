"""``gatecal check`` with a sequential policy: the decision so far, in a table, markdown, JSON."""

from __future__ import annotations

from gatecal._analyses.check.sequential import SequentialCheck
from gatecal._common.names import text_name
from gatecal._common.tables import format_probability, md_text
from gatecal._render.dispatch import render, written

__all__ = ["render_sequential_check"]

_WORD = {"pass": "PASS", "fail": "FAIL", "continue": "CONTINUE", "incomplete": "INCOMPLETE"}


def _looks(res: SequentialCheck) -> list[tuple[str, str, str, str]]:
    """(look, S so far, fail at most, pass at least) per look of the design."""
    rows = []
    for b in res.gate.design.boundaries:
        seen = str(res.cumulative[b.look - 1]) if b.look <= len(res.cumulative) else ""
        rows.append((str(b.look), seen, str(b.fail_at_most), str(b.pass_at_least)))
    return rows


def _facts(res: SequentialCheck) -> list[str]:
    g = res.gate
    level = "meets both targets" if g.meets_targets else "does not reach the detection target"
    model = (
        "the runs of this build share one judge flip rate (reruns back to back)"
        if res.runs == "shared"
        else "each run of this build draws its own judge flip rate (--runs-independent)"
    )
    return [
        f"policy: {res.policy} over {len(res.current_runs)} current run(s), at most "
        f"{g.design.looks}; {level}",
        f"false alarm: {format_probability(res.false_alarm)} (budget "
        f"{res.targets.false_alarm:g}; the largest over the baseline's region of "
        f"{res.baseline_runs} known-good runs)",
        f"detection of {res.regressed_cases} more failing case(s): "
        f"{format_probability(res.detection)} (target {res.targets.detection:g}; the "
        "smallest over that region)",
        f"model: {model}",
        f"expected runs: {g.healthy.expected_runs:.3f} healthy, "
        f"{g.regressed.expected_runs:.3f} regressed",
    ]


@render.register
def render_sequential_check(res: SequentialCheck, fmt: str = "table") -> str:
    """The decision as ``table``, ``markdown`` or ``json``, leading with the decision
    (:func:`gatecal.render`).

    Parameters
    ----------
    res : SequentialCheck
        What :func:`check_sequential` returned.
    fmt : {"table", "markdown", "json"}, default "table"
        The output format.
    """
    return written(res, fmt, table=_table, markdown=_markdown)


def _markdown(res: SequentialCheck) -> str:
    lines = [f"### gatecal check: {_WORD[res.decision]}", ""]
    lines += [f"- {md_text(line)}" for line in [*_facts(res), *res.reasons]]
    lines += [
        "",
        "| look | passing so far | fail at most | pass at least |",
        "|---|---|---|---|",
    ]
    lines += [f"| {' | '.join(row)} |" for row in _looks(res)]
    lines += [f"\n> warning: {md_text(w)}" for w in res.warnings]
    return "\n".join(lines) + "\n"


def _table(res: SequentialCheck) -> str:
    head = f"gatecal check: {_WORD[res.decision]} (exit {res.exit_code})"
    lines = [head, *_facts(res), "look  passing so far  fail at most  pass at least"]
    lines += [f"{a:>4}  {b:>14}  {c:>12}  {d:>13}" for a, b, c, d in _looks(res)]
    lines += [f"  - {text_name(r)}" for r in res.reasons]
    lines += [f"warning: {text_name(w)}" for w in res.warnings]
    return "\n".join(lines) + "\n"
