"""The JSON of a result whose contract is its own fields, in their order.

Many small results (a case's record, a boundary, one row of an operating table) spell
their JSON exactly as their fields: the same names, in the order they are declared. Such a
result inherits :class:`FieldsJSON`, whose ``to_dict`` is :func:`field_dict` of itself: a
field added to the class is in its JSON too, and the names are written once. A result whose
JSON renames, leaves out or reorders a field spells its ``to_dict`` out instead.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

__all__ = ["FieldsJSON", "field_dict"]


def field_dict(result: Any) -> dict[str, Any]:
    """``{name: value}`` for every field of the dataclass `result`, in declaration order.

    A value with a ``to_dict`` method is its ``to_dict()``; a tuple is a list of its items,
    each converted the same way; anything else is as it is.

    Parameters
    ----------
    result : dataclass instance
        The result whose fields are its JSON.

    Returns
    -------
    dict
        JSON-ready, its keys the field names.
    """
    return {f.name: _plain(getattr(result, f.name)) for f in fields(result)}


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


class FieldsJSON:
    """The base of a result whose JSON is its own fields, in the order the class declares
    them (a frozen dataclass; no slots of its own, so ``slots=True`` subclasses keep theirs)."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every field under its own name, in its order (:func:`field_dict`)."""
        return field_dict(self)
