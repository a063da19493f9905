"""Every file a user gives gatecal to read: a regular file, and no bigger than its limit.

A character device of endless bytes (``/dev/zero``) read whole takes all memory; a FIFO
nobody writes blocks for ever. So each input is opened without blocking, checked to be a
regular file on the open descriptor (no race between a check and the open), and read up
to its limit: beyond it, one error naming the file, the rule and the size. The limits are
the table in docs/reference/limits.md. Standard library only: the pytest plugin reads gate
files before it has decided anything.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = [
    "GATE_FILE_MAX_BYTES",
    "INPUT_MAX_BYTES",
    "SPEC_MAX_BYTES",
    "WHOLE_MAX_BYTES",
    "InputFileError",
    "check_regular",
    "read_limited",
]

#: A gate file (``--gate-from``, a ``recommend --format json`` output): 50,000 cases'
#: count gate is about 10 MB.
GATE_FILE_MAX_BYTES = 64 * 2**20
#: A suite spec (``--suite``, ``golden --suite``).
SPEC_MAX_BYTES = 64 * 2**20
#: A file read whole into memory (a small runs or label table, a JSON runs document).
WHOLE_MAX_BYTES = 2**30
#: A runs or label file read in blocks (CSV, JSONL, JUnit XML, Parquet from 1 MiB on).
INPUT_MAX_BYTES = 16 * 2**30


class InputFileError(ValueError):
    """An input that is not a regular file, or is over its limit: ``path: rule``.

    Attributes
    ----------
    path : str
    rule : str
        What is wrong, without the path (for an error that names the option instead).
    """

    def __init__(self, path: str | Path, rule: str) -> None:
        self.path = str(path)
        self.rule = rule
        super().__init__(f"{path}: {rule}")


def _kind(mode: int) -> str:
    for test, word in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return word
    return "not a file"


def _size(n: int) -> str:
    if n >= 2**30:
        return f"{n / 2**30:g} GiB"
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n:,} bytes"


def _refuse_stat(path: str | Path, st: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise InputFileError(path, f"is {_kind(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise InputFileError(
            path,
            f"holds {st.st_size:,} bytes, over the {_size(limit)} an input of its kind may "
            "hold (docs/reference/limits.md)",
        )


def check_regular(path: str | Path, limit: int = INPUT_MAX_BYTES) -> None:
    """Refuse `path` unless it is a regular file (a symlink to one is) of at most `limit`
    bytes; OSError (missing, unreadable) passes through."""
    _refuse_stat(path, os.stat(path), limit)


def read_limited(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them.

    Raises
    ------
    InputFileError
        Not a regular file (checked on the descriptor opened without blocking, so a FIFO
        never blocks), or more than `limit` bytes (also when it grows while read).
    OSError
        It cannot be opened or read (missing, a permission).
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        _refuse_stat(path, os.fstat(fd), limit)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        size = os.fstat(fd).st_size
        with os.fdopen(fd, "rb", closefd=False) as handle:
            # what the file holds, in one read (read(limit) would reserve all of limit)
            chunks = [handle.read(size)]
            got = len(chunks[0])
            while got <= limit:  # a file that grows while read: on, but never past limit
                chunk = handle.read(min(1 << 20, limit + 1 - got))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks) if len(chunks) > 1 else chunks[0]
    if len(data) > limit:
        raise InputFileError(
            path, f"holds more than the {_size(limit)} an input of its kind may hold"
        )
    return data
