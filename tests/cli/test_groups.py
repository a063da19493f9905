"""Option groups: declared once, shown where the command names them, handed to it as one
object; every command that models the judge's noise takes the whole noise group, every
command that reads runs the whole reading group."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Annotated

import pytest
import typer

from gatecal.cli import app
from gatecal.cli._groups import Group, grouped
from gatecal.cli._inputs import judge_noise, noise_sweep, read_options
from tests.conftest import run_cli


def _text(name: str, option: str) -> object:
    return typer.Option(option, metavar="X", help=f"the {name}")


def build_pair(
    left: Annotated[str, _text("left", "--left")] = "l",
    right: Annotated[int, _text("right", "--right")] = 1,
) -> tuple[str, int]:
    return left, right


PairOpt = Annotated[tuple[str, int], Group(build_pair)]


@grouped
def build_outer(top: Annotated[str, _text("top", "--top")] = "t", *, pair: PairOpt) -> tuple:
    return top, pair


def _run(command, *args: str):
    """Run the command as typer builds it; its options, in order."""
    toy = typer.Typer(add_completion=False)
    toy.command()(grouped(command) if not hasattr(command, "__signature__") else command)
    click = typer.main.get_command(toy)
    click.main(list(args), standalone_mode=False)
    return [p.opts[0] for p in click.params if p.name != "help"]


def test_the_group_stands_where_the_command_names_it_and_arrives_built():
    handed = []

    def command(first: Annotated[str, _text("first", "--first")] = "f", *, pair: PairOpt):
        handed.append((first, pair))

    options = _run(command, "--right", "7")
    assert options == ["--first", "--left", "--right"]
    assert handed == [("f", ("l", 7))]


def test_options_move_first_or_after_another_and_can_be_spelled_otherwise():
    handed = []

    @grouped(
        first=["right"],
        after={"left": "last"},
        spelled={"left": Annotated[str, _text("l", "--other")]},
    )
    def command(*, pair: PairOpt, middle: Annotated[str, _text("m", "--middle")] = "m",
                last: Annotated[str, _text("z", "--last")] = "z"):  # fmt: skip
        handed.append((pair, middle, last))

    options = _run(command, "--other", "x")
    assert options == ["--right", "--middle", "--last", "--other"]
    assert handed == [(("x", 1), "m", "z")]


def test_a_group_inside_a_group_is_read_through_the_options_it_shows():
    handed = []

    def command(*, outer: Annotated[tuple, Group(build_outer)]):
        handed.append(outer)

    options = _run(command, "--left", "a", "--top", "b")
    assert options == ["--top", "--left", "--right"]
    assert handed == [("b", ("a", 1))]


def test_a_called_command_builds_from_the_defaults_of_options_not_given():
    # the headline's fast path passes only the options given and those with a default
    handed = []

    @grouped
    def command(*, pair: PairOpt):
        handed.append(pair)

    command(right=3)
    assert handed == [("l", 3)]
    assert list(inspect.signature(command).parameters) == ["left", "right"]


@dataclass(frozen=True)
class Window:
    """A group whose object is its options as given: the dataclass is the builder."""

    start: Annotated[str, _text("start", "--start")] = "s"
    width: Annotated[int, _text("width", "--width")] = 2


def test_a_dataclass_is_its_own_group_its_fields_the_options():
    handed = []

    def command(*, window: Annotated[Window, Group(Window)], last: Annotated[str, _text("z", "--z")] = "z"):  # fmt: skip
        handed.append((window, last))

    options = _run(command, "--width", "5")
    assert options == ["--start", "--width", "--z"]
    assert handed == [(Window(start="s", width=5), "z")]


def test_a_group_option_named_like_a_parameter_is_refused():
    def command(left: str = "", *, pair: PairOpt):
        pass

    with pytest.raises(TypeError, match="the name of another parameter"):
        grouped(command)
    with pytest.raises(TypeError, match="no such parameter"):
        grouped(after={"left": "nowhere"})(lambda *, pair: None)


def _parameters(name: str) -> set[str]:
    command = typer.main.get_command(app).commands[name]
    return {p.name for p in command.params}


@pytest.mark.parametrize(
    ("builder", "commands"),
    [
        (judge_noise, ["simulate", "report", "policies", "plan"]),
        (read_options, ["runs", "recommend", "check", "compare", "record", "report"]),
    ],
)
def test_each_command_takes_the_whole_group(builder, commands):
    group = set(inspect.signature(builder).parameters)
    everyone = list(typer.main.get_command(app).commands)
    takes = [c for c in everyone if _parameters(c) & group]
    assert sorted(takes) == sorted(commands)
    for name in takes:
        assert group <= _parameters(name), name


def test_one_flip_rate_or_several_the_noise_options_are_the_same():
    one, several = (list(inspect.signature(b).parameters) for b in (judge_noise, noise_sweep))
    assert one == several == ["flip", "fpr", "unparseable", "icc", "case_spread", "systematic"]


def test_a_noise_option_is_checked_where_the_group_is_built():
    code, out, err = run_cli("plan", "--icc", "0.1", "--fpr", "0.2")
    assert (code, out) == (2, "")
    assert err == (
        "gatecal: error: --icc needs one symmetric flip rate (fnr == fpr, no per-check or "
        "per-case rates) (got 0.1)\n"
    )
