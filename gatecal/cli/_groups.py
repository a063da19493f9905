"""Option groups: options several commands share, declared once and handed to a command as
one object.

Typer has no option groups, so a group here is a plain function, its *builder*: its
parameters are the group's options, declared as a command declares its own
(``Annotated[T, typer.Option(...)]`` with a default), and it returns the object the
options describe, checked (a bad combination is one ``CliError`` line, exit 2). A group
whose object is its options as given is that object's dataclass itself: its fields,
declared the same way, are the options, so the names are written once. A command
names the group once, with a parameter whose annotation carries the builder::

    NoiseOpt = Annotated["JudgeNoise", Group(judge_noise)]

    @grouped
    def policies(..., noise: NoiseOpt, ...) -> None: ...

:func:`grouped` gives the command the signature typer (and the headline's fast path) reads,
with the group's options in place of that parameter, and when called builds the object
from their values and hands it to the command. A new option in a group is one parameter of
its builder: no command changes. A builder may itself be :func:`grouped` (a group inside a
group); it is read through the signature it shows.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, overload

__all__ = ["Group", "grouped"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Group:
    """The marker of a group in a parameter's annotation: ``Annotated[T, Group(build)]``;
    `build` is a function or a dataclass whose fields are the options."""

    build: Callable[..., Any]


def _parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    """`function`'s parameters, their annotations evaluated as typer evaluates them (the
    return annotation is left alone: it may name a type imported for type checkers only)."""
    target = inspect.unwrap(function)  # a class's annotations: its module's names
    names = getattr(target, "__globals__", None) or vars(sys.modules[target.__module__])
    return [  # evaluated as inspect.signature(eval_str=True) evaluates them
        p.replace(annotation=eval(p.annotation, names)) if isinstance(p.annotation, str) else p
        for p in inspect.signature(function).parameters.values()
    ]


def _group(annotation: Any) -> Group | None:
    found = [m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, Group)]
    return found[0] if found else None


def _shown(
    parameters: Iterable[inspect.Parameter],
    spelled: Mapping[str, Any],
    first: Iterable[str],
    after: Mapping[str, str],
) -> tuple[list[inspect.Parameter], dict[str, tuple[Group, list[str]]]]:
    """The parameters typer shows (each group's options where its parameter stands, moved
    where `first` and `after` say) and, for each group parameter, its group and options."""
    shown: list[inspect.Parameter] = []
    groups: dict[str, tuple[Group, list[str]]] = {}
    for p in parameters:
        group = _group(p.annotation)
        if group is None:
            shown.append(p)
            continue
        options = _parameters(group.build)
        groups[p.name] = (group, [o.name for o in options])
        shown += [o.replace(annotation=spelled.get(o.name, o.annotation)) for o in options]
    names = [p.name for p in shown]
    if len(set(names)) != len(names):
        raise TypeError(f"a group's option has the name of another parameter: {names}")
    moved = [*first, *after]
    unknown = [n for n in [*moved, *spelled, *after.values()] if n not in names]
    if unknown:
        raise TypeError(f"no such parameter to place or spell: {unknown}")
    by_name = {p.name: p for p in shown}
    order = [p for p in shown if p.name not in moved]
    order[:0] = [by_name[n] for n in first]
    for name, before in after.items():
        order.insert(order.index(by_name[before]) + 1, by_name[name])
    return [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in order], groups


@overload
def grouped(command: Callable[..., R], /) -> Callable[..., R]: ...


@overload
def grouped(
    *,
    first: Iterable[str] = (),
    after: Mapping[str, str] | None = None,
    spelled: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., R]], Callable[..., R]]: ...


def grouped(
    command: Callable[..., R] | None = None,
    /,
    *,
    first: Iterable[str] = (),
    after: Mapping[str, str] | None = None,
    spelled: Mapping[str, Any] | None = None,
) -> Any:
    """Show each group's options in place of the command's group parameter; build the
    group's object from their values when the command is called.

    Parameters
    ----------
    command : callable
        Its parameters are typer declarations; a group parameter's annotation carries a
        :class:`Group`.
    first, after : options to show first, or right after another parameter (``{"flip":
        "cases"}``), where the help has always listed them.
    spelled : ``{option: annotation}``: a group option this command spells otherwise.
    """

    def decorate(body: Callable[..., R]) -> Callable[..., R]:
        shown, groups = _shown(_parameters(body), spelled or {}, first, after or {})
        defaults = {p.name: p.default for p in shown}

        @functools.wraps(body)
        def command(**values: Any) -> R:
            for name, (group, options) in groups.items():
                given = {o: values.pop(o, defaults[o]) for o in options}
                values[name] = group.build(**given)
            return body(**values)

        command.__signature__ = inspect.Signature(shown)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in shown}
        return command

    return decorate if command is None else decorate(command)
