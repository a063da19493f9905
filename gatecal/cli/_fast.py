"""The headline command without building the whole command line.

``gatecal simulate --cases 12 --flip 0.03,0.08`` must start about as fast as numpy
imports. Building typer's command line (every command, a pydantic validator per option)
takes longer than the simulation, so when every argument is a plain ``--option value``
pair of a command in `FAST`, :func:`fast_call` reads the options from the command's own
declarations (the same names and parsers typer uses) and calls the command itself.
Anything else (help, a flag, ``--opt=value``, a repeated or unknown option, a value that
starts with ``-``, text that is not valid Unicode, shell completion) goes through typer.
tests/cli/test_cli.py checks that both ways see the same options and print the same bytes.
"""

from __future__ import annotations

import errno
import inspect
import os
import sys
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import typer

__all__ = ["FAST", "fast_arguments", "fast_call", "fast_options"]


def _commands() -> dict[str, Callable[..., Any]]:
    from gatecal.cli.simulate import simulate

    return {"simulate": simulate}


#: The commands that can be called directly.
FAST = ("simulate",)


def fast_options(command: Callable[..., Any]) -> dict[str, tuple[str, Callable[[Any], Any]]]:
    """``--option -> (parameter, parser)`` as typer reads the command's declarations."""
    hints = typing.get_type_hints(command, include_extras=True)
    options: dict[str, tuple[str, Callable[[Any], Any]]] = {}
    for name, hint in hints.items():
        if name == "return":
            continue
        info = next(m for m in typing.get_args(hint)[1:] if isinstance(m, typer.models.OptionInfo))
        # in Annotated, typer reads a first positional "--name" (OptionInfo.default) as a name
        named = (info.default,) if isinstance(info.default, str) else ()
        decls = [d for d in (*named, *(info.param_decls or ())) if d.startswith("--")] or [
            "--" + name.replace("_", "-")
        ]
        parser = info.parser
        if parser is None:
            kinds = typing.get_args(typing.get_args(hint)[0]) or (typing.get_args(hint)[0],)
            parser = Path if Path in kinds else str
        for decl in decls:
            options[decl] = (name, parser)
    return options


def fast_arguments(args: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would pass to the command `args` name, or None when
    typer must parse (see the module docstring)."""
    if not args or args[0] not in FAST or len(args) % 2 == 0:
        return None
    if "_GATECAL_COMPLETE" in os.environ:
        return None
    command = _commands()[args[0]]
    options = fast_options(command)
    given: dict[str, str] = {}
    for option, value in zip(args[1::2], args[2::2], strict=True):
        found = options.get(option)
        if found is None or found[0] in given or value.startswith("-"):
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # surrogates from undecodable bytes: typer's rules
            return None
        given[found[0]] = value
    parsers = {name: parser for name, parser in options.values()}
    kwargs = {name: parsers[name](value) for name, value in given.items()}  # in typed order
    for name, parameter in inspect.signature(command).parameters.items():
        if name not in kwargs and parameter.default is not None:
            kwargs[name] = parsers[name](parameter.default)  # typer parses defaults too
    return kwargs


def fast_call(name: str, kwargs: dict[str, Any]) -> Any:
    """Call command `name` as typer's main loop would, without a click context."""
    command = _commands()[name]
    try:
        return command(**kwargs)
    except EOFError as exc:  # as click: a new line on stderr, then "aborted"
        sys.stderr.write("\n")
        raise typer.Abort() from exc
    except KeyboardInterrupt as exc:
        raise typer.Exit(130) from exc
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # as click: exit 1 on a closed pipe, and no second error while flushing at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        raise SystemExit(1) from None
