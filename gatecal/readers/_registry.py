"""Every input format, once: its name and where its reader lives.

The order is the order in which format detection asks each reader's ``sniff`` (the first
that says yes reads the file) and the order ``--input-format`` and its help list them.
Adding a format takes its reader (a class following :class:`~gatecal.readers._base.Reader`
in a module of its own) and one line here. Nothing is imported until a reader is asked
for, so the command line builds its options from this tuple at no cost.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from gatecal._common.text import joined

if TYPE_CHECKING:
    from gatecal.readers._base import Reader

__all__ = ["FORMATS", "INPUT_FORMATS", "listed", "reader", "readers"]

#: (format, "module:class of its reader"), in the order detection tries them
FORMATS = (
    ("junit", "gatecal.readers.junit.reader:JUnit"),
    ("csv", "gatecal.readers.table.rows:Csv"),
    ("jsonl", "gatecal.readers.table.rows:Jsonl"),
    ("parquet", "gatecal.readers.table.parquet:Parquet"),
    ("promptfoo", "gatecal.readers.promptfoo:Promptfoo"),
    ("inspect", "gatecal.readers.inspect:Inspect"),
    ("deepeval", "gatecal.readers.deepeval:DeepEval"),
    ("open-test-reporting", "gatecal.readers.open_test_reporting:OpenTestReporting"),
)
#: the formats' names, in that order
INPUT_FORMATS = tuple(name for name, _ in FORMATS)


def listed(last: str = "or") -> str:
    """The formats' names for a sentence: ``junit, csv, ... or deepeval``."""
    return joined(INPUT_FORMATS, last)


def reader(fmt: str) -> Reader:
    """The reader of format `fmt` (one of INPUT_FORMATS)."""
    where = dict(FORMATS)[fmt]
    module, _, name = where.partition(":")
    found = cast("Reader", getattr(importlib.import_module(module), name))
    if fmt != found.FORMAT:
        raise RuntimeError(f"{where} reads {found.FORMAT!r}, registered as {fmt!r}")
    return found


def readers() -> tuple[Reader, ...]:
    """Every reader, in the order detection tries them."""
    return tuple(reader(fmt) for fmt in INPUT_FORMATS)
