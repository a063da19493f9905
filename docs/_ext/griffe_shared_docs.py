"""Griffe extension for the documentation site: expand gatecal's shared parameter blocks.

The API reference reads docstrings from the sources, where a line holding only
``%(name)s`` stands for a block written once in ``gatecal._common.docstrings.SHARED``
(the runtime ``__doc__`` is expanded by its ``@shared_docs``). This does the same for the
site, with the same function, so both read the same words. mkdocs.yml loads it.
"""

from __future__ import annotations

from typing import Any

import griffe

from gatecal._common.docstrings import expand


class SharedDocs(griffe.Extension):
    """Expands ``%(name)s`` lines in every docstring Griffe reads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and "%(" in obj.docstring.value:
            obj.docstring.value = expand(obj.docstring.value)
