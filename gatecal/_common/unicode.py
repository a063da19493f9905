"""Any string a reader can produce, made safe for every writer.

Two kinds of string break writers:

- a lone surrogate (U+D800..U+DFFF, as a JSON ``"\\ud800"`` escape produces): no UTF-8
  encoder takes it, so CSV, markdown, JUnit and Parquet writers crashed on it. Every
  output replaces it with U+FFFD (the replacement character), and the command says so
  once on standard error (:func:`surrogate_note`);
- a character XML 1.0 does not allow (the C0 controls but tab, newline and return;
  U+FFFE, U+FFFF; surrogates): JUnit XML holding one does not parse. :func:`xml_safe`
  replaces each with its escape written out (``\\x1b``, ``\\ufffe``), visibly, so two
  names that differ only there stay different.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

__all__ = ["has_surrogates", "scrub", "surrogate_note", "xml_safe"]


# Compiled on first use (a few ms each): every command's output asks has_surrogates, and
# an ASCII text (most outputs) is answered without either pattern.
@functools.cache
def _surrogate() -> re.Pattern[str]:
    return re.compile("[\ud800-\udfff]")


@functools.cache
def _not_xml() -> re.Pattern[str]:
    # what XML 1.0 allows: tab, newline, return, U+0020..U+D7FF, U+E000..U+FFFD, U+10000..
    return re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


#: What a lone surrogate is written as.
REPLACEMENT = "\ufffd"


def has_surrogates(text: str) -> bool:
    """Whether `text` holds a lone surrogate (no UTF-8 encoder takes one)."""
    return not text.isascii() and _surrogate().search(text) is not None


def scrub(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD: encodable as UTF-8."""
    return _surrogate().sub(REPLACEMENT, text) if has_surrogates(text) else text


def xml_safe(text: str) -> str:
    """`text` with each character XML 1.0 does not allow written as its escape
    (``\\x00``, ``\\ufffe``, ``\\ud800``): the XML parses, and the name stays visible."""
    return _not_xml().sub(lambda m: ascii(m.group())[1:-1], text)


def surrogate_note(values: Iterable[str]) -> str | None:
    """The one note a command prints when names it read hold lone surrogates, or None."""
    count = sum(1 for v in values if has_surrogates(v))
    if not count:
        return None
    return (
        f"{count} name(s) read hold a lone surrogate (invalid Unicode, such as a JSON "
        '"\\ud800" escape): outputs write each as U+FFFD, or as its escape where the '
        "format has one (JSON, JUnit XML)"
    )
