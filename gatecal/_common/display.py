"""How a result shows itself: a one-line ``repr`` and markdown in a notebook.

Every result object (a frozen dataclass declared with ``repr=False``) inherits
:class:`Displayed`: ``repr(result)`` is one line that leads with the decision (the
dataclass's own repr ran to thousands of characters), Jupyter shows
``_repr_markdown_`` (the markdown rendering), ``result.render(fmt)`` is
:func:`gatecal.render`, and ``to_frame()`` gives the rows as a pandas DataFrame. The
summaries and renderings live in :mod:`gatecal._render.dispatch`; this module imports
nothing so that a result class costs nothing to declare.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Displayed"]


class Displayed:
    """Mixin for result objects: a short repr, markdown in Jupyter, render and to_frame."""

    __slots__ = ()

    def __repr__(self) -> str:
        from gatecal._render.dispatch import summary

        return f"<gatecal.{type(self).__name__}: {summary(self)}>"

    def _repr_markdown_(self) -> str:
        from gatecal._render.dispatch import render

        return render(self, "markdown")

    def render(self, fmt: str = "table", **options: Any) -> str:
        """This result as text: ``table``, ``markdown``, ``csv`` or ``json`` (as
        :func:`gatecal.render`)."""
        from gatecal._render.dispatch import render

        return render(self, fmt, **options)

    def to_frame(self) -> Any:
        """The result's rows as a pandas DataFrame (needs pandas)."""
        from gatecal._render.dispatch import to_frame

        return to_frame(self)
