"""One parser per kind of option value, each refusing bad text with one line (option, rule, value).

Every option declares its parser (``typer.Option(parser=...)``), so a command receives
typed values. All parsers read numbers the same way: ASCII digits only, no ``_``
separators, no ``nan`` or ``inf`` (``int()`` and ``float()`` accept ``'٣'``, ``'1_0'`` and
``'nan'``). Each parser is also called on its option's default, which is already typed,
and returns it unchanged.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gatecal._common.validate import ParameterError
from gatecal.cli._errors import CliError, from_library

if TYPE_CHECKING:
    from gatecal._model.gates import Gate
    from gatecal._model.regression import Regression

__all__ = [
    "Choice",
    "FlipRates",
    "Flips",
    "GateList",
    "GateRules",
    "Number",
    "Observed",
    "Passes",
    "Probability",
    "RegressionValue",
    "ScoreThreshold",
    "Threshold",
    "Whole",
    "Workers",
    "read_number",
    "read_whole",
]

_WHOLE = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def read_whole(text: str) -> int | None:
    """A whole number of ASCII digits with an optional sign, or None."""
    raw = text.strip()
    return int(raw) if _WHOLE.fullmatch(raw) else None


def read_number(text: str) -> float | None:
    """A finite decimal number of ASCII digits (``0.05``, ``5e-2``, ``.5``), or None."""
    raw = text.strip()
    if not _NUMBER.fullmatch(raw):
        return None
    number = float(raw)
    return number if math.isfinite(number) else None  # 1e999


@dataclass(frozen=True, slots=True)
class Whole:
    """A whole number, optionally bounded: ``--runs 200``."""

    option: str
    low: int | None = None
    high: int | None = None
    #: the refusal above `high`, e.g. "must be at most 50,000 on the command line"
    above: str = ""

    def __call__(self, value: str | int) -> int:
        if isinstance(value, int):
            return value
        number = read_whole(value)
        if number is None:
            raise CliError(f"{self.option} must be a whole number (got {value!r})")
        if self.low is not None and number < self.low:
            raise CliError(f"{self.option} must be a whole number >= {self.low} (got {value!r})")
        if self.high is not None and number > self.high:
            rule = self.above or f"must be at most {self.high:,}"
            raise CliError(f"{self.option} {rule} (got {value!r})")
        return number


@dataclass(frozen=True, slots=True)
class Workers:
    """``auto`` (None: the cores available) or a whole number of workers."""

    option: str = "--workers"

    def __call__(self, value: str | int | None) -> int | None:
        if value is None or value == "auto":
            return None
        return Whole(self.option)(value)


@dataclass(frozen=True, slots=True)
class Number:
    """A finite number in ``(low, high]`` (or ``[low, high]``), with the rule spelled out."""

    option: str
    low: float
    high: float
    rule: str
    low_open: bool = True

    def __call__(self, value: str | float) -> float:
        if isinstance(value, float | int):
            return float(value)
        number = read_number(value)
        if (
            number is None
            or number > self.high
            or number < self.low
            or (self.low_open and number == self.low)
        ):
            raise CliError(f"{self.option} {self.rule} (got {value!r})")
        return number


@dataclass(frozen=True, slots=True)
class Probability:
    """A number in [0, 1], with either end excluded if asked: ``--confidence`` is in (0, 1)."""

    option: str
    low_open: bool = False
    high_open: bool = False

    def __call__(self, value: str | float) -> float:
        if isinstance(value, float | int):
            return float(value)
        interval = ("(" if self.low_open else "[") + "0, 1" + (")" if self.high_open else "]")
        number = read_number(value)
        if (
            number is None
            or not 0.0 <= number <= 1.0
            or (self.low_open and number == 0.0)
            or (self.high_open and number == 1.0)
        ):
            raise CliError(f"{self.option} must be a number in {interval} (got {value!r})")
        return number


class FlipRates(tuple[float, ...]):
    """Flip rates as one option value (a tuple type would make typer read several values)."""

    __slots__ = ()


class GateRules(tuple["Gate", ...]):
    """Gate rules as one option value."""

    __slots__ = ()


class Passes(tuple[int, int]):
    """``K/N`` as one option value: K passes of N items."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Flips:
    """A comma-separated list of flip rates: ``0.03,0.08``."""

    option: str = "--flip"

    def __call__(self, value: str | Sequence[float]) -> FlipRates:
        if not isinstance(value, str):
            return FlipRates(value)
        flips = []
        for part in value.split(","):
            number = read_number(part)
            if number is None or not 0.0 <= number <= 1.0:
                rule = "must be a comma-separated list of numbers in [0, 1]"
                raise CliError(f"{self.option} {rule} (got {part.strip()!r})")
            flips.append(number)
        return FlipRates(flips)


@dataclass(frozen=True, slots=True)
class GateList:
    """Gate rules, comma-separated: ``all,0.90,fails<=2``, read exactly as the library does."""

    option: str = "--gates"

    def __call__(self, value: str | Sequence[Gate]) -> GateRules:
        if not isinstance(value, str):
            return GateRules(value)
        from gatecal._model.gates import parse_gates

        try:
            return GateRules(parse_gates(value))
        except ParameterError as exc:
            raise from_library(exc, {"gate": self.option, "gates": self.option}) from None


@dataclass(frozen=True, slots=True)
class RegressionValue:
    """``--regression``: a share of the cases (``0.10``, ``10%``) or a number of cases (``3``)."""

    option: str = "--regression"

    def __call__(self, value: str | Regression) -> Regression:
        if not isinstance(value, str):
            return value
        from gatecal._model.regression import parse_regression

        try:
            return parse_regression(value)
        except ParameterError as exc:
            raise from_library(exc, {"regression": self.option}) from None


@dataclass(frozen=True, slots=True)
class Choice:
    """One of a few words; `allowed` may be a callable, for a list that lives in a heavy module."""

    option: str
    allowed: Sequence[str] | Callable[[], Sequence[str]]
    #: how the choices are listed, e.g. "healthy, regressed or both"; default "one of a, b, c"
    words: str = ""

    def __call__(self, value: str) -> str:
        allowed = self.allowed() if callable(self.allowed) else self.allowed
        if value not in allowed:
            if self.words:
                words = self.words
            elif len(allowed) == 2:
                words = " or ".join(allowed)
            else:
                words = f"one of {', '.join(allowed)}"
            raise CliError(f"{self.option} must be {words} (got {value!r})")
        return value


@dataclass(frozen=True, slots=True)
class ScoreThreshold:
    """``CHECK=T``: a numeric score of CHECK passes when it is at least T."""

    check: str
    value: float


@dataclass(frozen=True, slots=True)
class Threshold:
    """Parse one ``--score-threshold CHECK=T``."""

    option: str = "--score-threshold"

    def __call__(self, value: str | ScoreThreshold) -> ScoreThreshold:
        if isinstance(value, ScoreThreshold):
            return value
        check, sep, number_text = value.rpartition("=")
        number = read_number(number_text)
        if not sep or not check.strip() or number is None:
            rule = "must be CHECK=T with a finite number T"
            raise CliError(f"{self.option} {rule} (got {value!r})")
        return ScoreThreshold(check.strip(), number)


@dataclass(frozen=True, slots=True)
class Observed:
    """``K/N``: the judge passed K of N items."""

    option: str = "--observed"

    def __call__(self, value: str | tuple[int, int]) -> Passes:
        if not isinstance(value, str):
            return Passes(value)
        rule = "must be K/N: the judge passed K of N items, whole numbers with 0 <= K <= N, N > 0"
        parts = value.split("/")
        k, n = (read_whole(parts[0]), read_whole(parts[-1])) if len(parts) == 2 else (None, None)
        if k is None or n is None or not 0 <= k <= n or n <= 0:
            raise CliError(f"{self.option} {rule} (got {value!r})")
        return Passes((k, n))


def thresholds(items: Sequence[ScoreThreshold] | None) -> dict[str, float]:
    """``--score-threshold`` values as the readers take them: check -> cut-off."""
    return {item.check: item.value for item in items or ()}
