"""Argument checks shared by the library: one error type that names the parameter."""

from __future__ import annotations

import math
import operator
from typing import Any

__all__ = [
    "ParameterError",
    "check_count",
    "check_instance",
    "check_level",
    "check_probability",
]


class ParameterError(ValueError):
    """A parameter broke a rule.

    The message reads ``` `name` rule (got value)```. The attributes let a front end
    (the CLI) name the parameter its own way, e.g. ``--runs`` for ``n_runs``.

    Attributes
    ----------
    name : str
        The parameter, as the library spells it.
    rule : str
        What the value must satisfy, e.g. ``"must be an integer >= 1"``.
    value : object
        The offending value, as received.
    """

    def __init__(self, name: str, rule: str, value: Any) -> None:
        self.name = name
        self.rule = rule
        self.value = value
        super().__init__(f"`{name}` {rule} (got {value!r})")


def check_count(name: str, value: Any, *, low: int = 0, high: int | None = None) -> int:
    """Return `value` as an int in ``[low, high]``; bools and non-integers are refused."""
    rule = f"must be an integer >= {low}"
    if high is not None:
        rule = f"must be an integer in [{low}, {high}]"
    try:
        number = operator.index(value)
    except TypeError:
        raise ParameterError(name, rule, value) from None
    if isinstance(value, bool) or number < low or (high is not None and number > high):
        raise ParameterError(name, rule, value)
    return number


def check_probability(name: str, value: Any) -> float:
    """Return `value` as a float in [0, 1]; NaN, infinities and non-numbers are refused."""
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, "must be a number in [0, 1]", value) from None
    if isinstance(value, bool) or not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise ParameterError(name, "must be a number in [0, 1]", value)
    return p


def check_level(name: str, value: Any) -> float:
    """Return a confidence level: a float strictly between 0 and 1."""
    level = check_probability(name, value)
    if not 0.0 < level < 1.0:
        raise ParameterError(name, "must be a number in (0, 1)", value)
    return level


def check_instance(name: str, value: Any, kind: type, what: str) -> Any:
    """Return `value` if it is a `kind`; else a ParameterError saying `what` it must be
    (the library's boundary: no AttributeError from deep inside on a wrong type)."""
    if not isinstance(value, kind):
        raise ParameterError(name, f"must be {what}", type(value).__name__)
    return value
