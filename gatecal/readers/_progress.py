"""How far a read has got, for a progress bar: the bytes of each input file read so far.

The readers call :func:`advance` as they go (the block readers after each block, every
reader once a file is read); whatever shows the progress installs a listener with
:func:`listening`. Without a listener a call costs one comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["advance", "listening"]

_listener: Callable[[str, int], None] | None = None


def advance(path: str | Path, done: int) -> None:
    """`done` bytes of `path` are read (a position in the file, never going back)."""
    if _listener is not None:
        _listener(str(path), done)


@contextmanager
def listening(callback: Callable[[str, int], None]) -> Iterator[None]:
    """Send every :func:`advance` to `callback` while the block runs."""
    global _listener
    before, _listener = _listener, callback
    try:
        yield
    finally:
        _listener = before
