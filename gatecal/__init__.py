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

__version__ = "0.1.0"

_load, __dir__, __all__ = _lazy.attach_stub(__name__, __file__)


def __getattr__(name: str) -> Any:
    value = _load(name)
    # Show the public path in reprs and docs (as httpx does): gatecal.Suite.
    if (isinstance(value, type) or callable(value)) and value.__module__.startswith("gatecal._"):
        value.__module__ = "gatecal"
    globals()[name] = value
    return value
