"""mkdocs hooks for the docs site (mkdocs.yml ``hooks:``).

The docstrings cross-reference with Sphinx roles (``:func:`check_gate```), which numpydoc
readers know and Markdown does not: the role's name would show before the code. The
reference keeps the code (a formula too) and drops the role's name.
"""

from __future__ import annotations

import re
from typing import Any

_ROLE = re.compile(r":(?:func|meth|class|data|attr|mod|exc|obj|math):(?=<code)")


def on_page_content(html: str, **kwargs: Any) -> str:
    return _ROLE.sub("", html)
