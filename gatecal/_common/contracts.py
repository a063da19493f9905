"""The machine contracts of gatecal's JSON outputs.

Every ``--format json`` document opens with the same three keys, so a tool can check what it
reads before it reads it: ``"format": "gatecal.<command>"``, the contract ``"version"`` the
document follows, and the ``"gatecal_version"`` that wrote it. A contract's version goes up
when a field changes meaning or goes away (new fields do not change it).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from gatecal._version import __version__

__all__ = [
    "CONTRACTS",
    "HEADER_KEYS",
    "FieldsJSON",
    "fields_dict",
    "json_document",
    "json_header",
    "json_text",
]

#: Each document's contract version, by its format name's command part.
CONTRACTS: dict[str, int] = {
    "simulate": 1,
    "plan": 1,
    "plan.compare": 1,
    "policies": 1,
    # 2: "format" became "gatecal.recommend" (was "gatecal recommend"), "gatecal_version" added
    # 3: "case_gate" is the rank gate: each known-good run's failing cases ("known_good_runs"),
    # "allowed" and "method": "rank" (was units, a threshold and a tail)
    "recommend": 3,
    # 2: "format" became "gatecal.check" (was "gatecal check"), "gatecal_version" added
    "check": 2,
    "check.sequential": 1,
    # 2: "version" is the contract's; the package's moved to "gatecal_version"
    "compare": 2,
    "calibrate": 1,
    "runs": 1,
    "golden": 1,
    "history": 1,
    "record": 1,
}

HEADER_KEYS = ("format", "version", "gatecal_version")


def json_header(command: str) -> dict[str, Any]:
    """``{"format": "gatecal.<command>", "version": ..., "gatecal_version": ...}``."""
    return {
        "format": f"gatecal.{command}",
        "version": CONTRACTS[command],
        "gatecal_version": __version__,
    }


def fields_dict(result: Any, names: Sequence[str] | None = None) -> dict[str, Any]:
    """A dataclass's fields as JSON-ready data, each under its own name: all of them in the
    order the class declares them, or those `names` lists, in that order. A value with a
    ``to_dict`` method (a nested result) is its ``to_dict()``; a tuple is a list of its
    items, each converted the same way; anything else is as it is."""
    if names is None:
        names = [f.name for f in dataclasses.fields(result)]
    return {name: _plain(getattr(result, name)) for name in names}


def _plain(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


class FieldsJSON:
    """The base of a result whose JSON is its own fields, in their order (a dataclass, with
    or without slots: this base has none of its own): its ``to_dict()`` is
    :func:`fields_dict` of itself, so a field added to the class is in its JSON too, and
    the names are written once. A result whose JSON renames, leaves out or reorders a field
    spells its ``to_dict`` out instead."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready data, in the order the class declares them."""
        return fields_dict(self)


def json_text(document: Mapping[str, Any]) -> str:
    """`document` (a result's ``to_dict()``, header first) as the indented JSON every
    ``--format json`` writes."""
    return json.dumps(document, indent=2) + "\n"


def json_document(command: str, body: Mapping[str, Any]) -> str:
    """`body` as indented JSON under the command's header (the header's keys in `body`,
    if any, are replaced)."""
    return json_text(
        {**json_header(command), **{k: v for k, v in body.items() if k not in HEADER_KEYS}}
    )
