"""Every public function documents each of its parameters in a numpydoc ``Parameters``
section, so the generated API reference (mkdocstrings, numpy style) lists them all.

A parameter counts as documented when its name heads an entry of the section; numpydoc
allows several names on one line (``confidence_level, method : float, str``), and
``*args`` / ``**kwargs`` may be written with or without their stars.
"""

from __future__ import annotations

import inspect
import re

import pytest

import gatecal

_SECTION = re.compile(
    r"^(\s*)Parameters\n\1-{10}-*\n(.*?)(?=^\s*\S[^\n]*\n\s*-{3,}\n|\Z)", re.M | re.S
)


def _functions() -> list[str]:
    return sorted(name for name in gatecal.__all__ if inspect.isfunction(getattr(gatecal, name)))


def documented_parameters(doc: str) -> set[str]:
    """The names heading entries of `doc`'s Parameters section (empty if it has none)."""
    doc = inspect.cleandoc(doc)
    match = _SECTION.search(doc)
    if match is None:
        return set()
    names: set[str] = set()
    for line in match.group(2).splitlines():
        if not line or line[0].isspace():
            continue  # a description line, indented under its entry
        head = line.split(" : ", 1)[0].rstrip(":").strip()
        names.update(n.strip().lstrip("*") for n in head.split(","))
    return names


def test_the_section_parser_reads_numpydoc_entries():
    doc = """Summary.

    Parameters
    ----------
    a, b : float
        Two numbers.
    *args
        More.
    flag : bool, default False
        A switch; it mentions `c` : not an entry.

    Returns
    -------
    c : float
        Not a parameter.
    """
    assert documented_parameters(doc) == {"a", "b", "args", "flag"}


@pytest.mark.parametrize("name", _functions())
def test_every_parameter_is_documented(name):
    function = getattr(gatecal, name)
    wanted = {p for p in inspect.signature(function).parameters if p != "self"}
    missing = sorted(wanted - documented_parameters(function.__doc__ or ""))
    assert missing == [], f"{name}: undocumented parameters {missing}"
