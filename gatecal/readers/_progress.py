"""How far a read has got, for a progress bar: the bytes of each input file read so far.

A reader announces the files it is about to read (:func:`expect`) and says how far it has
got in each (:func:`advance`: the block readers after each block, the JUnit stream every
few thousand testcases, every reader once a file is read); whatever shows the progress
installs a :class:`Listener` with :func:`listening`. Without one a call costs one
comparison.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Protocol

__all__ = ["Listener", "advance", "done", "expect", "listening"]


class Listener(Protocol):
    def expect(self, path: str, size: int) -> None: ...
    def advance(self, path: str, done: int) -> None: ...


_listener: Listener | None = None


def expect(paths: Iterable[str | Path]) -> None:
    """These files are about to be read (their sizes are the bar's total)."""
    if _listener is None:
        return
    for path in paths:
        try:
            size = os.stat(path).st_size
        except OSError:
            continue  # the reader says what is wrong with it
        _listener.expect(str(path), size)


def advance(path: str | Path, done: int) -> None:
    """`done` bytes of `path` are read (a position in the file, never going back)."""
    if _listener is not None:
        _listener.advance(str(path), done)


def done(path: str | Path) -> None:
    """`path` is read to its end."""
    if _listener is not None:
        with suppress(OSError):  # the reader has said what is wrong with it
            _listener.advance(str(path), os.stat(path).st_size)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send every :func:`expect` and :func:`advance` to `listener` while the block runs."""
    global _listener
    before, _listener = _listener, listener
    try:
        yield
    finally:
        _listener = before
