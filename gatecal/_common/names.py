"""A user's text (a case name, a path, a reason that quotes one) in any text gatecal writes.

One rule for every writer of text, whatever stdout is (a terminal, a pipe, a CI log):

- **No name starts or ends a line.** Every character that is not printable (the C0 and
  C1 controls, a newline, a tab, a carriage return, U+2028 and U+2029, bidirectional
  overrides) is written as its escape (``\\n``, ``\\x1b``, ``\\u202e``), so a name holding a
  newline stays on its line and stays visible.
- **No name is a workflow command.** A CI runner reads a line that starts (after spaces) with
  ``::`` (GitHub Actions: ``::error::``, ``::add-mask::``) or ``##[`` (the older form) as a
  command. A name that starts that way has its first character written as its escape
  (``\\x3a:error::x``; in markdown the ``\\:`` that renders as ``:``), wherever on a line it
  stands.
- **Markdown**: no HTML, no table break, no emphasis (:func:`md_text`); a block of text
  shown as it is gets a fence longer than any run of fence characters in it
  (:func:`code_fence`).

Ordinary names come out unchanged, byte for byte. Standard library only: the pytest plugin
and the Action's step use it too.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

__all__ = [
    "action_lines",
    "code_fence",
    "md_text",
    "safe_terminal",
    "shown",
    "text_name",
]

#: Characters that end a line somewhere (markdown, a browser, a spreadsheet).
BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: How a line a CI runner reads as a command starts (after spaces or tabs).
COMMAND_STARTS = ("::", "##[")


def _escape(ch: str) -> str:
    return ascii(ch)[1:-1]


def _command_at(text: str) -> int | None:
    """Where the workflow command `text` would start, after its leading blanks, or None."""
    rest = text.lstrip(" \t")
    return len(text) - len(rest) if rest.startswith(COMMAND_STARTS) else None


def text_name(text: str) -> str:
    """`text` as one line of plain text: every character that is not printable written as
    its escape, and a leading workflow command (``::``, ``##[``) broken by its first
    character's escape. An ordinary name is returned as it is.

    >>> text_name("case\\n::error::x")
    'case\\\\n::error::x'
    >>> text_name("::add-mask::x")
    '\\\\x3a:add-mask::x'
    """
    out = "".join(
        ch if ch.isprintable() and not 0x80 <= ord(ch) < 0xA0 else _escape(ch) for ch in text
    )
    at = _command_at(out)
    if at is not None:
        out = out[:at] + f"\\x{ord(out[at]):02x}" + out[at + 1 :]
    return out


def safe_terminal(text: str) -> str:
    """A whole output for a terminal: control characters other than newline and tab
    shown as escapes (a name cannot move the cursor, clear the screen or retitle it). The
    names in it were already made one line each by :func:`text_name`."""
    return "".join(
        ch if ch in "\n\t" or (ch.isprintable() and not 0x80 <= ord(ch) < 0xA0) else _escape(ch)
        for ch in text
    )


def md_text(text: str) -> str:
    """A user's text (a case name) inside markdown: no HTML, no table breaks, no emphasis,
    no line break (a name cannot start a heading, a fake verdict or a workflow command)."""
    flat = "".join(" " if ch in BREAKS else ch for ch in text)
    escaped = html.escape(flat, quote=False)
    out = "".join("\\" + ch if ch in "\\`*_[]|#!~<>" else ch for ch in escaped)
    at = _command_at(out)
    if at is not None and out[at] == ":":  # "##[" is already "\#\#\["
        out = out[:at] + "\\" + out[at:]
    return out


def shown(text: str, fmt: str) -> str:
    """`text` for a rendering in `fmt`: :func:`md_text` in markdown, else :func:`text_name`."""
    return md_text(text) if fmt == "markdown" else text_name(text)


def code_fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`, so the text cannot
    close the block it is shown in (CommonMark: a fence closes at as many backticks, and a
    tilde line never closes a backtick fence)."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def action_lines(names: Iterable[str]) -> str:
    """Names for a CI output that lists one a line: each :func:`text_name`, so a newline
    or carriage return in a name is ``\\n`` or ``\\r`` and never a second entry."""
    return "\n".join(text_name(n) for n in names)
