"""One entry point for every result: :func:`render` (``gatecal.render``), one
:func:`functools.singledispatch` on the result's type.

Each renderer module registers its own type (``@render.register`` on its ``render_*``
function, which stays public). A result class names that module in its class variable
``_renderer`` (a name, not an import: the renderers sit above the results), so the first
render of a type imports the module, which registers, and the call dispatches again:
``import gatecal`` stays light and rendering one result loads its own renderer only. A
renderer writes its text formats and leaves the rest to :func:`written`: the JSON is the
result's own ``to_dict()``, and a format the type lacks is one error, spelt here.

So a new result type is two files: its analysis (a frozen class with ``summary()``,
``to_dict()`` and ``_renderer``) and its renderer (a registered function).
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from gatecal._common.contracts import json_text
from gatecal._common.tables import FORMATS
from gatecal._common.validate import ParameterError

if TYPE_CHECKING:
    from functools import _SingleDispatchCallable

__all__ = ["RESULT_TYPES", "not_a_result", "render", "written"]

#: The result types gatecal's functions return, by class name (their modules load lazily).
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

#: Every format a result may have, in the order an error lists them.
_ORDER = (*FORMATS, "junit")
#: The formats a renderer's `text` writes.
_TEXT = ("table", "markdown")


def not_a_result(value: object) -> ParameterError:
    """The error for an object :func:`render` has no renderer for."""
    rule = f"must be a gatecal result ({', '.join(RESULT_TYPES)})"
    return ParameterError("result", rule, type(value).__name__)


@functools.singledispatch
def _registry(result: object, fmt: str = "table", **options: Any) -> str:
    """No renderer is registered for this type: it is no result."""
    raise not_a_result(result)


def _implementation(kind: type) -> Callable[..., str]:
    """The function registered for `kind`, its renderer module imported first if the
    class names one that has not registered yet."""
    found = _registry.dispatch(kind)
    module = getattr(kind, "_renderer", None)
    if found is _registry.registry[object] and isinstance(module, str):
        importlib.import_module(module)  # it registers `kind`
        found = _registry.dispatch(kind)
    return found


def _face_of(
    registry: _SingleDispatchCallable[str],
) -> Callable[[Callable[..., str]], _SingleDispatchCallable[str]]:
    """Make the decorated function the face of `registry`: it is called, and its
    ``register``, ``dispatch`` and ``registry`` are the singledispatch's own."""

    def face(function: Callable[..., str]) -> _SingleDispatchCallable[str]:
        functools.update_wrapper(function, registry, assigned=(), updated=("__dict__",))
        return cast("_SingleDispatchCallable[str]", function)

    return face


@_face_of(_registry)
def render(result: Any, fmt: str = "table", **options: Any) -> str:
    """Render any gatecal result as text: ``table`` (the CLI's), ``markdown``, ``csv`` or
    ``json`` (and ``junit`` for a :class:`~gatecal.GateCheck`).

    `result` is what a gatecal function returned (:data:`RESULT_TYPES`), or the pair
    ``(recommendation, policy_recommendation)`` that ``gatecal recommend --policies``
    prints together. `options` go to the type's own ``render_*`` function (``top=`` for
    a recommendation or a comparison, ``baseline=`` for plans). A format the type does
    not have, or an object that is not a result, is a ParameterError.

    ``render`` is a :func:`functools.singledispatch`: ``@gatecal.render.register`` on a
    function whose first parameter is annotated with a type makes it that type's
    renderer, and ``render.dispatch(type)`` finds it.

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
    function = _implementation(type(result))
    try:
        inspect.signature(function).bind(result, fmt, **options)
    except TypeError:  # an option this type's renderer does not take
        raise ParameterError("options", f"not taken for {type(result).__name__}", options) from None
    return function(result, fmt, **options)


@_registry.register(tuple)
def _pair(result: tuple[Any, ...], fmt: str = "table", **options: Any) -> str:
    """A pair ``(first, second)``: the second rendered beside the first, when the second's
    renderer takes ``beside`` (the recommendation and its rules, as ``gatecal recommend
    --policies`` prints them)."""
    if len(result) == 2:
        first, second = result
        if "beside" in inspect.signature(_implementation(type(second))).parameters:
            return render(second, fmt, beside=first, **options)
    raise not_a_result(result)


def written(
    result: Any,
    fmt: Any,
    *,
    document: Callable[[], Mapping[str, Any]] | None = None,
    text: Callable[[str], str] | None = None,
    **writers: Callable[[Any], str],
) -> str:
    """`result` in `fmt`: ``json`` from its ``to_dict()`` (or from `document`, when an
    option changes it), ``table`` and ``markdown`` by `text`, called with `fmt`, every
    other format by its own writer, called with `result` (so a module's ``_table`` or
    ``_csv`` of the result is its writer as it is).

    Parameters
    ----------
    result : object
        A result with a ``to_dict()``.
    fmt : str
        The format asked for.
    document : callable, optional
        What gives the JSON's dict instead of ``result.to_dict()``.
    text : callable, optional
        The writer of both ``table`` and ``markdown``: takes the format, returns the text.
    **writers : callable
        One per other text format the type has (``table``, ``markdown``, ``csv``,
        ``junit``), each taking the result and returning the text.

    Returns
    -------
    str
        The text.

    Raises
    ------
    ParameterError
        If `fmt` is not ``json`` nor one of `writers`, naming the type's formats.
    """
    if fmt == "json":
        return json_text(result.to_dict() if document is None else document())
    if text is not None and fmt in _TEXT:
        return text(fmt)
    writer = writers.get(fmt) if isinstance(fmt, str) else None
    if writer is None:
        has = {*writers, "json", *(_TEXT if text is not None else ())}
        have = [f for f in _ORDER if f in has]
        raise ParameterError("fmt", f"must be one of {', '.join(have)}", fmt)
    return writer(result)
