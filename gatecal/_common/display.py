"""How a result shows itself: a one-line ``repr`` and markdown in a notebook.

Every result object (a frozen dataclass declared with ``repr=False``) inherits
:class:`Displayed`: ``repr(result)`` is one line that leads with the decision (the
dataclass's own repr ran to thousands of characters), Jupyter shows
``_repr_markdown_`` (the markdown rendering), ``result.render(fmt)`` is
:func:`gatecal.render`, and ``to_frame()`` gives the rows as a pandas DataFrame. The
renderings are reached through the public :func:`gatecal.render` (the renderers import the
result classes, so this module never imports them); the summaries and frames are here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gatecal._common.names import code_fence
from gatecal._common.tables import format_probability
from gatecal._common.validate import ParameterError

__all__ = ["Displayed", "notebook_markdown", "summary", "to_frame", "use_renderer"]

#: The public dispatcher (:func:`gatecal.render`), handed down by the package face: the
#: renderers import the result classes, so this module, under them all, never imports them.
_RENDERER: list[Callable[..., str]] = []


def use_renderer(render: Callable[..., str]) -> None:
    """Make `render` (``render(result, fmt, **options)``) what ``result.render()`` calls."""
    _RENDERER[:] = [render]


class Displayed:
    """Mixin for result objects: a short repr, markdown in Jupyter, render and to_frame."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<gatecal.{type(self).__name__}: {summary(self)}>"

    def _repr_markdown_(self) -> str:
        return notebook_markdown(self.render("markdown"))

    def render(self, fmt: str = "table", **options: Any) -> str:
        """This result as text: ``table``, ``markdown``, ``csv`` or ``json`` (as
        :func:`gatecal.render`)."""
        return _RENDERER[0](self, fmt, **options)

    def to_frame(self) -> Any:
        """The result's rows as a pandas DataFrame (needs pandas)."""
        return to_frame(self)


def notebook_markdown(text: str) -> str:
    """A markdown rendering for a notebook: each block of indented, column-aligned lines (a
    renderer's text table) fenced as monospace, where markdown would run it into one
    paragraph; tables, lists and headings stay as they are."""
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            fence = code_fence("\n".join(block))  # no line of the block can close it
            out.extend([f"{fence}text", *block, fence])
            block.clear()

    for line in text.splitlines():
        if line.startswith("  ") and line.strip() and not line.lstrip().startswith("|"):
            block.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _pct(value: float | None) -> str:
    return "n/a" if value is None else format_probability(value)


def summary(result: Any) -> str:
    """One line for ``repr``: the decision first, then the size of the evidence."""
    name = type(result).__name__
    r = result
    if name == "Recommendation":
        chosen = r.chosen
        if chosen is not None and chosen.kind in ("cases", "count"):
            what = (
                "the case-aware gate"
                if chosen.kind == "cases"
                else f"at least {chosen.k_min} of {r.cases} cases pass"
            )
            head = (
                f"use {what} (false alarm {_pct(chosen.false_alarm)}, detection "
                f"{_pct(chosen.detection)})"
            )
            if not chosen.meets_targets:
                head += f", short of the {r.detection_target:g} detection target"
        else:
            head = "no gate keeps the false alarm within the budget"
        return f"{head}; from {r.runs} known-good runs"
    if name == "GateCheck":
        if r.gate_kind == "cases" and r.score is not None and r.heavier_runs is not None:
            return (
                f"{r.decision.upper()}: {r.passed} of {r.cases} cases passed; the failing "
                f"cases weigh {r.score:.2f}, {r.heavier_runs} of {r.baseline_runs} known-good "
                "runs as much or more"
            )
        return (
            f"{r.decision.upper()}: {r.passed} of {r.cases} cases passed, the gate needs "
            f"{r.k_min} ({r.gate})"
        )
    if name == "SequentialCheck":
        return (
            f"{r.decision.upper()} after look {r.look} of {r.gate.design.looks} "
            f"({r.policy}, {r.cases} cases)"
        )
    if name == "Comparison":
        return (
            f"{r.decision.upper()}: p = {r.p_value:.3g} ({r.test}) over {r.cases_compared} "
            f"cases, {r.baseline_runs} baseline and {r.candidate_runs} candidate runs"
        )
    if name == "CompareDesign":
        head = "no run count meets both targets" if r.runs is None else f"{r.runs} runs a build"
        return f"{head} for {r.cases} cases, {r.failing} failing in the regression"
    if name == "SuitePlans":
        plan = r.recommended
        if plan is None:
            return f"no suite meets both targets ({r.regression.describe()})"
        return (
            f"{plan.cases} cases, gate at least {plan.k_min} pass (false alarm "
            f"{_pct(plan.false_alarm)}, detection {_pct(plan.detection)}); "
            f"{len(r.plans)} polic{'y' if len(r.plans) == 1 else 'ies'} planned"
        )
    if name == "PolicyRecommendation":
        choice = r.choice
        head = (
            "no rule meets both targets"
            if choice is None
            else f"rule {choice.rule}, gate at least {choice.k_min} of {r.cases} cases pass"
        )
        return f"{head}; {len(r.rows)} rules from {r.runs} known-good runs"
    if name == "SimulationReport":
        return (
            f"{len(r.gates)} gates x {len(r.flips)} flip rates on a {r.suite.n_cases}-case "
            f"suite, {r.n_runs:,} simulated runs each (seed {r.seed})"
        )
    if name == "PolicyReport":
        return (
            f"{len(r.policies)} policies x {len(r.rows)} rows on a {r.suite.n_cases}-case "
            f"suite, {r.n_runs:,} runs each"
        )
    if name == "Calibration":
        p = r.pooled
        return (
            f"judge false negatives {_pct(p.fnr.estimate)}, false positives "
            f"{_pct(p.fpr.estimate)}, over {p.items} labelled items ({len(r.checks)} checks)"
        )
    return name


def to_frame(result: Any) -> Any:
    """The rows of a result without a ``to_frame`` of its own, as a pandas DataFrame."""
    import pandas as pd  # deferred: `import gatecal` stays light

    name = type(result).__name__
    r = result
    if name == "GateCheck":
        failing = {f.case_id: f for f in r.failing}
        rows = [
            {
                "case": case,
                "failed": case in failing,
                "status": failing[case].status if case in failing else "passed",
                "new": failing[case].new if case in failing else False,
            }
            for case in r.case_names
        ]
        return pd.DataFrame(rows, columns=["case", "failed", "status", "new"])
    if name == "SequentialCheck":
        bounds = r.gate.design.boundaries
        rows = [
            {
                "look": j + 1,
                "run": run,
                "passed": passed,
                "cumulative": cum,
                "fail_at_most": bounds[j].fail_at_most,
                "pass_at_least": bounds[j].pass_at_least,
            }
            for j, (run, passed, cum) in enumerate(
                zip(r.current_runs, r.passed_per_run, r.cumulative, strict=False)
            )
        ]
        columns = ["look", "run", "passed", "cumulative", "fail_at_most", "pass_at_least"]
        return pd.DataFrame(rows, columns=columns)
    if name == "CompareDesign":
        return pd.DataFrame(
            [{"runs": runs, **oc.to_dict()} for runs, oc in r.rows],
        )
    if name == "PolicyRecommendation":
        return pd.DataFrame(
            [
                {
                    "rule": g.rule,
                    "k_min": g.k_min,
                    "false_alarm": g.false_alarm,
                    "detection": g.detection,
                    "judge_calls": g.judge_calls,
                    "meets": g.meets,
                    "checkable": g.checkable,
                    "chosen": g.rule == r.chosen,
                }
                for g in r.rows
            ]
        )
    if name == "Calibration":
        return pd.DataFrame(
            [
                {
                    "check": "pooled" if c is r.pooled else c.check,
                    "items": c.items,
                    "sensitivity": c.sensitivity.estimate,
                    "specificity": c.specificity.estimate,
                    "fnr": c.fnr.estimate,
                    "fpr": c.fpr.estimate,
                    "kappa": c.kappa.estimate,
                    "unparseable": c.unparseable.estimate,
                }
                for c in (*r.checks, r.pooled)
            ]
        )
    raise ParameterError("result", "has no rows to make a frame of", name)
