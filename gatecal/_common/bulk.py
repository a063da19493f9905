"""Building many small objects at once."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cycle collector while building many acyclic objects (a record per case of
    a suite of 10^5): each collection it would start walks every tracked object of the
    process (scipy's and pandas' included) and finds nothing to free; the build took
    about three times as long with it. Resumed afterwards if it was running before; a
    caller that had paused it keeps it paused."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()
