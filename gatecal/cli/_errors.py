"""The command line's one error: a line on stderr that names the option, the rule and the value."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping

import typer

from gatecal._common.validate import ParameterError

__all__ = ["OPTION", "CliError", "from_library", "library_errors"]


class CliError(typer.TyperException):
    """A bad value or file: one line on stderr, exit code 2."""

    exit_code = 2


#: Library parameter -> the option that sets it, so errors name what the user typed. A
#: command whose options spell one differently passes its own names to `from_library`.
OPTION = {
    "cases": "--cases",
    "judge_checks": "--judge-checks",
    "code_checks": "--code-checks",
    "failing": "--failing",
    "flip": "--flip",
    "gate": "--gates",
    "gates": "--gates",
    "n_runs": "--runs",
    "seed": "--seed",
    "rng": "--seed",
    "workers": "--workers",
    "icc": "--icc",
    "case_spread": "--case-spread",
    "systematic": "--systematic",
    "fpr": "--fpr",
    "fnr": "--flip",
    "unparseable": "--unparseable",
    "regression": "--regression",
    "false_alarm": "--false-alarm",
    "detection": "--detection",
    "max_cases": "--max-cases",
    "confidence_level": "--confidence",
    "method": "--interval",
    "policies": "--policies",
    "retry_rate": "--retry-rate",
}


def from_library(
    exc: ParameterError, names: Mapping[str, str] | None = None, *, in_rule: bool = True
) -> CliError:
    """The library's error as the command line says it: ``--runs must be ... (got '0')``.

    With `in_rule`, a rule that names another library parameter in backticks names its
    option too; without, backticks name something else (calibrate's label columns).
    """
    table = {**OPTION, **(names or {})}
    option = table.get(exc.name, exc.name)
    rule = exc.rule
    if in_rule:
        rule = re.sub(r"`(\w+)`", lambda m: table.get(m.group(1), m.group(0)), rule)
    return CliError(f"{option} {rule} (got {exc.value!r})")


@contextlib.contextmanager
def library_errors(
    names: Mapping[str, str] | None = None, *, in_rule: bool = True
) -> Iterator[None]:
    """Inside, the library's ParameterError is the command line's one line
    (:func:`from_library`, with the same `names` and `in_rule`)."""
    try:
        yield
    except ParameterError as exc:
        raise from_library(exc, names, in_rule=in_rule) from None
