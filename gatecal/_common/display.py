"""How a result shows itself: a one-line ``repr`` and markdown in a notebook.

Every result object (a frozen dataclass declared with ``repr=False``) inherits
:class:`Displayed` and owns its contract: ``summary()`` (the one line ``repr`` shows,
leading with the decision: the dataclass's own repr ran to thousands of characters),
``to_dict()`` (its JSON, header included), ``to_frame()`` (its rows as a pandas DataFrame)
and, in the class variable ``_renderer``, the module that renders it. Jupyter shows
``_repr_markdown_`` (the markdown rendering) and ``result.render(fmt)`` is
:func:`gatecal.render`, reached through the public dispatcher (the renderers import the
result classes, so this module never imports them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from gatecal._common.names import code_fence
from gatecal._common.validate import ParameterError

__all__ = ["Displayed", "notebook_markdown", "use_renderer"]

#: The public dispatcher (:func:`gatecal.render`), handed down by the package face: the
#: renderers import the result classes, so this module, under them all, never imports them.
_RENDERER: list[Callable[..., str]] = []


def use_renderer(render: Callable[..., str]) -> None:
    """Make `render` (``render(result, fmt, **options)``) what ``result.render()`` calls."""
    _RENDERER[:] = [render]


class Displayed:
    """Mixin for result objects: a short repr, markdown in Jupyter, render and to_frame.

    A result class sets ``_renderer`` to the module that registers its renderer with
    :func:`gatecal.render` (a name, not an import: the renderers sit above the results,
    and rendering one result loads its own renderer only), and defines ``summary()``
    and ``to_dict()``.
    """

    __slots__ = ()

    #: The module that registers this type's renderer (imported on its first render).
    _renderer: ClassVar[str]

    def __repr__(self) -> str:
        return f"<gatecal.{type(self).__name__}: {self.summary()}>"

    def summary(self) -> str:
        """One line: the decision first, then the size of the evidence."""
        return type(self).__name__

    def _repr_markdown_(self) -> str:
        return notebook_markdown(self.render("markdown"))

    def render(self, fmt: str = "table", **options: Any) -> str:
        """This result as text: ``table``, ``markdown``, ``csv`` or ``json`` (as
        :func:`gatecal.render`)."""
        return _RENDERER[0](self, fmt, **options)

    def to_frame(self) -> Any:
        """The result's rows as a pandas DataFrame (needs pandas)."""
        raise ParameterError("result", "has no rows to make a frame of", type(self).__name__)


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
