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


def _site_functions() -> dict[str, object]:
    """The public functions as the documentation site reads them: griffe over the sources,
    with the extension mkdocs.yml loads (docs/_ext/griffe_shared_docs.py)."""
    import pathlib

    import griffe

    root = pathlib.Path(__file__).resolve().parents[2]
    extension = f"{root / 'docs' / '_ext' / 'griffe_shared_docs.py'}:SharedDocs"
    package = griffe.load(
        "gatecal",
        search_paths=[str(root)],
        extensions=griffe.load_extensions(extension),
        docstring_parser=griffe.Parser.numpy,
    )
    return {name: package[name] for name in _functions()}


def test_the_site_documents_every_parameter_too():
    """The site reads docstrings from the sources, not ``__doc__``: a block shared by
    several functions (``%(suite_noise)s``, gatecal._common.docstrings) is expanded there by
    the site's Griffe extension, so every parameter is listed on the site as in help()."""
    import griffe

    shared = 0
    for name, obj in _site_functions().items():
        function = getattr(gatecal, name)
        wanted = {p for p in inspect.signature(function).parameters if p != "self"}
        sections = obj.docstring.parse(griffe.Parser.numpy) if obj.docstring else []
        listed = {
            p.name.lstrip("*")
            for s in sections
            if s.kind is griffe.DocstringSectionKind.parameters
            for p in s.value
        }
        assert wanted <= listed, f"{name}: the site lists {sorted(listed)}"
        assert "%(" not in (obj.docstring.value if obj.docstring else "")
        shared += "%(" in inspect.getsource(function).split('"""')[1]
    assert shared >= 5  # the functions that share blocks are among those checked
