"""One entry point for every result: :func:`render`, the one-line :func:`summary` a result's
``repr`` shows, and :func:`to_frame` for the results without their own.

``gatecal.render(result, fmt)`` picks the ``render_*`` function of the result's type (they
stay public; their keyword options pass through, e.g. ``top=`` for a recommendation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gatecal._common.tables import FORMATS, format_probability
from gatecal._common.validate import ParameterError

__all__ = ["RESULT_TYPES", "render", "summary", "to_frame"]

#: The result types :func:`render` knows, by class name (their modules load lazily).
RESULT_TYPES = (
    "SimulationReport",
    "Recommendation",
    "PolicyRecommendation",
    "GateCheck",
    "SequentialCheck",
    "Comparison",
    "CompareDesign",
    "SuitePlans",
    "PolicyReport",
    "Calibration",
)


def _renderer(result: Any) -> Callable[..., str]:
    from gatecal._analyses.calibrate.judge import Calibration
    from gatecal._analyses.check.gate import GateCheck
    from gatecal._analyses.check.sequential import SequentialCheck
    from gatecal._analyses.compare.builds import Comparison
    from gatecal._analyses.compare.oc import CompareDesign
    from gatecal._analyses.plan.suite import SuitePlans
    from gatecal._analyses.policies.rules import PolicyReport
    from gatecal._analyses.recommend.gate import Recommendation
    from gatecal._analyses.recommend.policy import PolicyRecommendation
    from gatecal._analyses.simulate import SimulationReport
    from gatecal._render.calibrate import render_calibration
    from gatecal._render.check import render_check
    from gatecal._render.compare import render_compare_design, render_comparison
    from gatecal._render.plans import render_plans
    from gatecal._render.policies import render_policies
    from gatecal._render.recommend import render_recommendation
    from gatecal._render.recommend_policy import render_policy_recommendation
    from gatecal._render.sequential import render_sequential_check
    from gatecal._render.simulate import render_simulation

    table: list[tuple[type, Callable[..., str]]] = [
        (SimulationReport, render_simulation),
        (Recommendation, render_recommendation),
        (
            PolicyRecommendation,
            lambda rules, fmt, **kw: render_policy_recommendation(None, rules, fmt, **kw),
        ),
        (GateCheck, render_check),
        (SequentialCheck, render_sequential_check),
        (Comparison, render_comparison),
        (CompareDesign, render_compare_design),
        (SuitePlans, render_plans),
        (PolicyReport, render_policies),
        (Calibration, render_calibration),
    ]
    if isinstance(result, tuple) and len(result) == 2:
        rec, rules = result
        if isinstance(rec, Recommendation) and isinstance(rules, PolicyRecommendation):
            return lambda _, fmt, **kw: render_policy_recommendation(rec, rules, fmt, **kw)
    for kind, function in table:
        if isinstance(result, kind):
            return function
    rule = f"must be a gatecal result ({', '.join(RESULT_TYPES)})"
    raise ParameterError("result", rule, type(result).__name__)


def render(result: Any, fmt: str = "table", **options: Any) -> str:
    """Render any gatecal result as text: ``table`` (the CLI's), ``markdown``, ``csv`` or
    ``json`` (and ``junit`` for a :class:`~gatecal.GateCheck`).

    `result` is what a gatecal function returned (:data:`RESULT_TYPES`), or the pair
    ``(recommendation, policy_recommendation)`` that ``gatecal recommend --policies``
    prints together. `options` go to the type's own ``render_*`` function (``top=`` for
    a recommendation or a comparison, ``baseline=`` for plans). A format the type does
    not have, or an object that is not a result, is a ParameterError.
    """
    if not isinstance(fmt, str):
        raise ParameterError("fmt", f"must be one of {FORMATS}", fmt)
    function = _renderer(result)
    try:
        return function(result, fmt, **options)
    except ParameterError:
        raise
    except TypeError as exc:  # an option this type's renderer does not take
        raise ParameterError("options", f"not taken for {type(result).__name__}", options) from exc
    except ValueError as exc:  # the renderers that spell their own format error
        raise ParameterError("fmt", str(exc).split(" (got")[0].removeprefix("`fmt` "), fmt) from exc


def _pct(value: float | None) -> str:
    return "n/a" if value is None else format_probability(value)


def summary(result: Any) -> str:
    """One line for ``repr``: the decision first, then the size of the evidence."""
    name = type(result).__name__
    r = result
    if name == "Recommendation":
        if r.recommended is None:
            head = "no gate meets both targets"
            if r.within_budget is not None:
                fa, det = r.table[r.within_budget]
                head += (
                    f"; strictest within the false-alarm budget: at least {r.within_budget} of "
                    f"{r.cases} (false alarm {_pct(fa)}, detection {_pct(det)})"
                )
        else:
            fa, det = r.table[r.recommended]
            head = (
                f"gate at least {r.recommended} of {r.cases} cases pass (false alarm "
                f"{_pct(fa)}, detection {_pct(det)})"
            )
        return f"{head}; from {r.runs} known-good runs"
    if name == "GateCheck":
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
