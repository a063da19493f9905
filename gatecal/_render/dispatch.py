"""One entry point for every result: :func:`render` (``gatecal.render``).

``gatecal.render(result, fmt)`` picks the ``render_*`` function of the result's type (they
stay public; their keyword options pass through, e.g. ``top=`` for a recommendation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gatecal._common.tables import FORMATS
from gatecal._common.validate import ParameterError

__all__ = ["RESULT_TYPES", "render"]

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
    "History",
)


def _renderer(result: Any) -> Callable[..., str]:
    from gatecal._analyses.calibrate.judge import Calibration
    from gatecal._analyses.check.gate import GateCheck
    from gatecal._analyses.check.sequential import SequentialCheck
    from gatecal._analyses.compare.builds import Comparison
    from gatecal._analyses.compare.oc import CompareDesign
    from gatecal._analyses.history.record import History
    from gatecal._analyses.plan._search import SuitePlans
    from gatecal._analyses.policies.rules import PolicyReport
    from gatecal._analyses.recommend.gate import Recommendation
    from gatecal._analyses.recommend.policy import PolicyRecommendation
    from gatecal._analyses.simulate import SimulationReport
    from gatecal._render.calibrate import render_calibration
    from gatecal._render.check import render_check
    from gatecal._render.compare import render_compare_design, render_comparison
    from gatecal._render.history import render_history
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
        (History, render_history),
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

    Parameters
    ----------
    result : object
        A result a gatecal function returned (:data:`RESULT_TYPES`), or the pair
        ``(recommendation, policy_recommendation)``.
    fmt : {"table", "markdown", "csv", "json", "junit"}, default "table"
        The output format; ``junit`` only for a :class:`~gatecal.GateCheck`, and not every
        type has ``csv``.
    **options
        Keyword arguments for the type's own ``render_*`` function, e.g. ``top=`` or
        ``baseline=``.

    Returns
    -------
    str
        The rendered text.

    Raises
    ------
    ParameterError
        If `result` is not a result, the format is not one of its type's, or an option is
        not taken by its type.
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
