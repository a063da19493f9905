"""Options that take every path up to the next option, as a shell glob gives them.

``check CURRENT --baseline nightly/*`` expands to ``--baseline a b c``: a repeatable option
that kept only ``a`` would silently make ``b`` and ``c`` current runs. A command declared
with :func:`spread_command` reads ``--baseline a b c --candidate d e`` as ``--baseline a
--baseline b --baseline c --candidate d --candidate e``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer

from gatecal.cli._help import HelpCommand

__all__ = ["spread_command", "spread_paths"]


def spread_paths(args: Sequence[str], options: Sequence[str]) -> list[str]:
    """`args` with each word after one of `options`, up to the next option, given that
    option of its own (the word right after the option is its own value; ``--`` ends it)."""
    out: list[str] = []
    current: str | None = None
    first = False  # the word right after `--baseline` is its own value
    for i, arg in enumerate(args):
        if arg == "--":
            return out + list(args[i:])
        name = arg.split("=", 1)[0]
        if name in options:
            current, first = name, "=" not in arg
            out.append(arg)
        elif arg.startswith("-") and arg != "-":
            current, first = None, False
            out.append(arg)
        elif current is not None and not first:
            out += [current, arg]
        else:
            first = False
            out.append(arg)
    return out


def spread_command(options: Sequence[str]) -> type[typer.core.TyperCommand]:
    """A command class whose `options` each take every path up to the next option."""

    class SpreadCommand(HelpCommand):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            return super().parse_args(ctx, spread_paths(args, options))

    return SpreadCommand
