"""The regression to catch: a share of the cases or a number of them, read exactly."""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from fractions import Fraction

from gatecal._common.validate import ParameterError

__all__ = ["REGRESSION_HELP", "Regression", "RegressionLike", "as_regression", "parse_regression"]

REGRESSION_HELP = (
    "a share of the cases written with a decimal point or a percent sign (0.10, 10%), "
    "rounded half up to whole cases; or a whole number of cases (3)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Regression:
    """How big the regression to detect is: a share of the cases, or a number of them.

    Attributes
    ----------
    text : str
        As the user wrote it.
    share : Fraction or None
        Exact share in (0, 1] (``"0.10"`` -> 1/10).
    count : int or None
        Number of failing cases, at least 1.
    """

    text: str
    share: Fraction | None = None
    count: int | None = None

    def failing(self, n: int) -> int:
        """Failing cases in a suite of `n`: ``floor(share * n + 1/2)``, or `count`."""
        if self.share is not None:
            return min(n, math.floor(self.share * n + Fraction(1, 2)))
        assert self.count is not None
        return self.count

    def describe(self) -> str:
        """In words."""
        if self.share is not None:
            return f"{float(self.share) * 100:g}% of the cases fail"
        return f"{self.count} case{'s' if self.count != 1 else ''} fail"


#: What every function taking a regression accepts (see :func:`as_regression`).
RegressionLike = Regression | str | int | float | Fraction

_SHARE = re.compile(r"^(\d*\.\d+|\d+\.\d*)$")
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)\s*%$")


def parse_regression(text: str) -> Regression:
    """Read ``--regression``: a share (``0.10``, ``10%``) or a whole number of cases (``3``).

    A decimal point or a percent sign means a share, which must lie in (0, 1]; a plain
    whole number means cases. Anything else is refused rather than guessed, e.g.
    ``3.0`` (a share above 1: write ``3`` for three cases) or ``0`` (no regression).

    Parameters
    ----------
    text : str
        A share in (0, 1] written with a decimal point or a percent sign (``0.10``,
        ``10%``), or a whole number of cases, at least 1 (``3``).

    Returns
    -------
    Regression
        The regression, as a share or as a number of cases.

    Raises
    ------
    ParameterError
        If the text is neither form, or its number is out of range.
    """
    raw = str(text).strip()
    if raw.isascii() and raw.isdecimal():  # '²'.isdigit() is true, int('²') fails
        count = int(raw)
        if count < 1:
            raise ParameterError("regression", "must be at least 1 case or a share in (0, 1]", text)
        return Regression(text=raw, count=count)
    share: Fraction | None = None
    if _SHARE.match(raw):
        share = Fraction(raw)
    elif (match := _PERCENT.match(raw)) is not None:
        share = Fraction(match.group(1)) / 100
    if share is None:
        raise ParameterError("regression", f"must be {REGRESSION_HELP}", text)
    if not 0 < share <= 1:
        rule = "as a share must lie in (0, 1]; for a number of cases write a whole number"
        raise ParameterError("regression", rule, text)
    return Regression(text=raw, share=share)


def as_regression(value: RegressionLike) -> Regression:
    """A regression from what a caller naturally writes: a :class:`Regression`, the CLI's
    text (:func:`parse_regression`), a whole number of cases (``3``), or a share in (0, 1]
    as a float or Fraction (``0.25``). A float is read as its shortest decimal
    (``0.1`` -> 1/10). Anything else, bools included, is a ParameterError.

    Parameters
    ----------
    value : Regression, str, int, float or Fraction
        A Regression (returned as it is), the CLI's text, a whole number of cases
        (at least 1), or a share in (0, 1].

    Returns
    -------
    Regression
        The regression, as a share or as a number of cases.

    Raises
    ------
    ParameterError
        If the value is of another type (bools included), not finite, or out of range.
    """
    if isinstance(value, Regression):
        return value
    if isinstance(value, str):
        return parse_regression(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError("regression", f"must be {REGRESSION_HELP}", value)
    if isinstance(value, numbers.Integral):
        return parse_regression(str(int(value)))
    share = value if isinstance(value, Fraction) else None
    if share is None:
        number = float(value)
        if not math.isfinite(number):
            raise ParameterError("regression", f"must be {REGRESSION_HELP}", value)
        share = Fraction(repr(number))
    if not 0 < share <= 1:
        rule = "as a share must lie in (0, 1]; for a number of cases pass an int"
        raise ParameterError("regression", rule, value)
    return Regression(text=f"{float(share):g}", share=share)
