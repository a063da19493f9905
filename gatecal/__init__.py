"""gatecal: calibrate the CI gates of LLM-judge test suites.

How often does each gate rule fail a healthy build, and how often does it catch a
regressed one? Exactly (Poisson-binomial) and by seeded Monte Carlo, side by side.

The public names are declared once, in ``__init__.pyi``, and load lazily from the module
it names (``lazy_loader.attach_stub``): ``import gatecal`` costs nothing until a name is
used, and ``import gatecal.evaluators`` never pulls in numpy.

PYTEST_DONT_REWRITE: gatecal ships a pytest plugin, so pytest would rewrite the asserts
of this package, and warn (an error under ``-W error``) when gatecal was imported before
pytest started, as in ``pytest.main()`` or pytester; the library's asserts are not tests.
"""

from __future__ import annotations

from typing import Any

import lazy_loader as _lazy

from gatecal._common import display as _display
from gatecal._version import __version__ as __version__

_load, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)


def __getattr__(name: str) -> Any:
    value = _load(name)
    # Show the public path in reprs and docs (as httpx does): gatecal.Suite.
    if (isinstance(value, type) or callable(value)) and value.__module__.startswith("gatecal._"):
        value.__module__ = "gatecal"
    globals()[name] = value
    return value


def _render(result: Any, fmt: str, **options: Any) -> str:
    """:func:`gatecal.render`, loaded on first use: what ``result.render()`` calls."""
    text: str = __getattr__("render")(result, fmt, **options)
    return text


# The renderers sit above the results; the face, above them all, hands the dispatcher down
# (every module of gatecal runs this file first, so a result never exists without it).
_display.use_renderer(_render)
