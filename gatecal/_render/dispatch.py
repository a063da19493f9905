"""One entry point for every result: :func:`render` (``gatecal.render``).

``gatecal.render(result, fmt)`` picks the ``render_*`` function of the result's type (they
stay public; their keyword options pass through, e.g. ``top=`` for a recommendation).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

from gatecal._common.tables import FORMATS
from gatecal._common.validate import ParameterError

__all__ = ["RESULT_TYPES", "render"]

#: Each result type's defining module and class, and its renderer's module and function.
_TABLE = (
    ("gatecal._analyses.simulate", "SimulationReport", "simulate", "render_simulation"),
    ("gatecal._analyses.recommend.gate", "Recommendation", "recommend", "render_recommendation"),
    (
        "gatecal._analyses.recommend.policy",
        "PolicyRecommendation",
        "recommend_policy",
        "render_policy_recommendation",
    ),
    ("gatecal._analyses.check.gate", "GateCheck", "check", "render_check"),
    (
        "gatecal._analyses.check.sequential",
        "SequentialCheck",
        "sequential",
        "render_sequential_check",
    ),
    ("gatecal._analyses.compare.builds", "Comparison", "compare", "render_comparison"),
    ("gatecal._analyses.compare.oc", "CompareDesign", "compare", "render_compare_design"),
    ("gatecal._analyses.plan._search", "SuitePlans", "plans", "render_plans"),
    ("gatecal._analyses.policies.rules", "PolicyReport", "policies", "render_policies"),
    ("gatecal._analyses.calibrate.judge", "Calibration", "calibrate", "render_calibration"),
    ("gatecal._analyses.history.record", "History", "history", "render_history"),
)

#: The result types :func:`render` knows, by class name (their modules load lazily).
RESULT_TYPES = tuple(name for _, name, _, _ in _TABLE)


def _loaded(module: str, name: str) -> type | None:
    """Class `name` of `module` if that module is loaded, else None: an object of a class
    exists only once its module ran, so a module not loaded cannot be the result's, and
    rendering one result loads its own renderer and no other analysis."""
    loaded = sys.modules.get(module)
    kind = getattr(loaded, name, None)
    return kind if isinstance(kind, type) else None


def _function(renderer: str, function: str) -> Callable[..., str]:
    found: Callable[..., str] = getattr(
        importlib.import_module(f"gatecal._render.{renderer}"), function
    )
    return found


def _renderer(result: Any) -> Callable[..., str]:
    policy = _loaded("gatecal._analyses.recommend.policy", "PolicyRecommendation")
    if isinstance(result, tuple) and len(result) == 2 and policy is not None:
        rec, rules = result
        recommendation = _loaded("gatecal._analyses.recommend.gate", "Recommendation")
        if recommendation and isinstance(rec, recommendation) and isinstance(rules, policy):
            pair = _function("recommend_policy", "render_policy_recommendation")
            return lambda _, fmt, **kw: pair(rec, rules, fmt, **kw)
    for module, name, renderer, function in _TABLE:
        kind = _loaded(module, name)
        if kind is not None and isinstance(result, kind):
            found = _function(renderer, function)
            if kind is policy:  # alone, without the recommendation it may come with
                return lambda rules, fmt, **kw: found(None, rules, fmt, **kw)
            return found
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
