"""Gate rules and the exact minimum pass count each one reduces to."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from gatecal._common.validate import ParameterError, check_count

__all__ = [
    "Gate",
    "GateLike",
    "as_gates",
    "equivalent_gates",
    "parse_gate",
    "parse_gates",
    "strictest_within",
]

GateKind = Literal["all", "rate", "fails"]

_RATE = re.compile(r"^(?:rate\s*>=|>=)?\s*(?P<t>[^\s%]+)\s*(?P<pct>%?)$")
_FAILS = re.compile(r"^fails\s*<=\s*(?P<f>\S+)$")
GATE_SYNTAX = "'all', a pass rate t in [0, 1] (e.g. 0.90, rate>=0.9, 90%), or fails<=F"


@dataclass(frozen=True, slots=True, kw_only=True)
class Gate:
    """A CI gate on the number of passing cases.

    Every gate passes a build iff at least `k_min` of its `n` cases pass; see
    :meth:`k_min`.

    Attributes
    ----------
    text : str
        The rule as the user wrote it (``"all"``, ``"0.90"``, ``"fails<=2"``).
    kind : {'all', 'rate', 'fails'}
        Every case must pass; the pass rate must be at least `threshold`; at most
        `max_failures` cases may fail.
    threshold : fractions.Fraction or None
        The exact threshold of a ``rate`` gate (``Fraction("0.90") == 9/10``).
    max_failures : int or None
        The allowance of a ``fails`` gate.
    """

    text: str
    kind: GateKind
    threshold: Fraction | None = None
    max_failures: int | None = None

    def k_min(self, n: int) -> int:
        """The fewest passing cases out of `n` with which the gate passes the build.

        Computed in exact rational arithmetic: with ``n = 12``, ``rate >= 0.90``
        and ``rate >= 0.85`` both give ``ceil(12 * t) = 11``.
        """
        n = check_count("n", n, low=1)
        if self.kind == "all":
            return n
        if self.kind == "rate":
            assert self.threshold is not None
            return math.ceil(n * self.threshold)
        assert self.max_failures is not None
        return max(n - self.max_failures, 0)

    def describe(self) -> str:
        """The rule in words, as the article's table writes it."""
        if self.kind == "all":
            return "every case must pass"
        if self.kind == "rate":
            return f"pass rate >= {_threshold_text(self)}"
        if self.max_failures == 1:
            return "at most 1 case fails"
        return f"at most {self.max_failures} cases fail"


def _threshold_text(gate: Gate) -> str:
    raw = gate.text.strip().lower().removeprefix("rate").strip().removeprefix(">=").strip()
    return raw or str(gate.threshold)


#: What every function taking a gate accepts: a :class:`Gate`, its text, or a pass rate
#: in [0, 1] as a float or Fraction (see :func:`parse_gate`).
GateLike = Gate | str | float | Fraction


def parse_gate(text: GateLike) -> Gate:
    """Parse one gate rule.

    A :class:`Gate` is returned as it is; a float or Fraction is a pass-rate threshold
    (``0.9`` is ``"0.9"``: a float is read as its shortest decimal). A whole number is
    refused (is ``1`` a rate of 100% or one case?): write ``1.0`` or ``"fails<=1"``.

    Accepted forms: ``all``; a pass-rate threshold ``t`` in [0, 1] written as a
    decimal (``0.90``), a fraction (``9/10``), a percentage (``90%``) or with a
    prefix (``rate>=0.9``, ``>=0.9``); and ``fails<=F`` for at most ``F`` failing
    cases. The threshold is kept exactly (``Fraction("0.90")``), never as a float.

    Parameters
    ----------
    text : str, float, Fraction or Gate
        The rule: ``all``, a pass rate in [0, 1] (``0.90``, ``9/10``, ``90%``,
        ``rate>=0.9``), or ``fails<=F`` with a whole F >= 0. A float or Fraction is a
        pass rate; a Gate is returned as it is.

    Returns
    -------
    Gate
        The parsed rule, its threshold kept exactly.

    Raises
    ------
    ParameterError
        If the rule does not parse or its number lies outside its range.
    """
    if isinstance(text, Gate):
        return text
    if isinstance(text, float | Fraction) and not isinstance(text, bool):
        if isinstance(text, float) and not math.isfinite(text):
            raise ParameterError("gate", "must be a pass rate in [0, 1]", text)
        given = text if isinstance(text, Fraction) else Fraction(repr(text))
        if not 0 <= given <= 1:
            raise ParameterError("gate", "must be a pass rate in [0, 1]", text)
        return Gate(text=f"{float(given):g}", kind="rate", threshold=given)
    if isinstance(text, int):
        rule = (
            "must be a pass rate as a float (1.0), 'all' or 'fails<=F': a whole number "
            "is not read as either"
        )
        raise ParameterError("gate", rule, text)
    if not isinstance(text, str):
        raise ParameterError("gate", f"must be {GATE_SYNTAX}", text)
    rule = text.strip()
    low = rule.lower()
    if low == "all":
        return Gate(text=rule, kind="all")
    fails = _FAILS.match(low)
    if fails:
        raw = fails.group("f")
        if not (raw.isascii() and raw.isdecimal()):
            raise ParameterError("gate", "fails<=F needs a whole number F >= 0", text)
        return Gate(text=rule, kind="fails", max_failures=int(raw))
    rate = _RATE.match(low)
    if rate:
        try:
            t = Fraction(rate.group("t"))
        except (ValueError, ZeroDivisionError):
            t = None
        if t is not None:
            if rate.group("pct"):
                t /= 100
            if not 0 <= t <= 1:
                raise ParameterError("gate", "must be a pass rate in [0, 1]", text)
            return Gate(text=rule, kind="rate", threshold=t)
    raise ParameterError("gate", f"must be {GATE_SYNTAX}", text)


def parse_gates(text: GateLike | Iterable[GateLike]) -> tuple[Gate, ...]:
    """Parse a comma-separated list (or an iterable) of gate rules; at least one.

    Parameters
    ----------
    text : str, float, Fraction, Gate or iterable of them
        Comma-separated rules (``"all,0.9,fails<=2"``), one rule, or an iterable of
        rules, each as :func:`parse_gate` accepts it.

    Returns
    -------
    tuple of Gate
        The rules, in the order given.

    Raises
    ------
    ParameterError
        If the list is empty, a rule is blank, or a rule does not parse.
    """
    if isinstance(text, Gate | float | int | Fraction):
        return (parse_gate(text),)
    if not isinstance(text, str | Iterable):
        raise ParameterError("gates", "must be a comma-separated list of gate rules", text)
    parts: list[GateLike] = list(text.split(",")) if isinstance(text, str) else list(text)
    if not parts or any(isinstance(p, str) and not p.strip() for p in parts):
        raise ParameterError("gates", "must be a comma-separated list of gate rules", text)
    return tuple(parse_gate(p) for p in parts)


def as_gates(gates: GateLike | Iterable[GateLike]) -> tuple[Gate, ...]:
    """Gates from a comma-separated string, one gate (a rule, a rate, a :class:`Gate`), or
    an iterable of them.

    At least one; a blank rule is refused as in :func:`parse_gates`.

    Parameters
    ----------
    gates : str, float, Fraction, Gate or iterable of them
        Comma-separated rules, one rule, or an iterable of rules and :class:`Gate`
        objects (each as :func:`parse_gate` accepts it).

    Returns
    -------
    tuple of Gate
        The gates, in the order given.

    Raises
    ------
    ParameterError
        If there is no gate, a rule is blank or does not parse.
    """
    if isinstance(gates, str | Gate | float | int | Fraction):
        return parse_gates(gates)
    if not isinstance(gates, Iterable):
        raise ParameterError("gates", "must be a comma-separated list of gate rules", gates)
    items = list(gates)
    rules = tuple(g if isinstance(g, Gate) else parse_gates([g])[0] for g in items)
    if not rules:
        raise ParameterError("gates", "must give at least one gate", items)
    return rules


def equivalent_gates(gates: Sequence[Gate], n: int) -> list[tuple[int, tuple[Gate, ...]]]:
    """Groups of two or more distinct rules that are the same gate for `n` cases.

    Returns ``(k_min, gates)`` pairs, in order of first appearance.

    Parameters
    ----------
    gates : sequence of Gate
        The rules to group.
    n : int
        The number of cases in the suite, at least 1.

    Returns
    -------
    list of (int, tuple of Gate)
        Each ``k_min`` shared by two or more distinct rules, with those rules.
    """
    groups: dict[int, list[Gate]] = {}
    for gate in gates:
        members = groups.setdefault(gate.k_min(n), [])
        if all(g.text != gate.text for g in members):
            members.append(gate)
    return [(k, tuple(gs)) for k, gs in groups.items() if len(gs) > 1]


def strictest_within(false_alarms: Sequence[float], budget: float) -> int:
    """The strictest gate within the false-alarm budget: the largest ``k_min`` whose false
    alarm ``false_alarms[k_min]`` is at most `budget`.

    ``false_alarms[k]`` is P(fewer than k of n cases pass) for k = 0..n, so it starts at 0
    ("at least 0 pass" never fails: the answer is at least 0) and never decreases in k,
    which lets a bisection find the answer. Every caller (recommend, check's default gate,
    plan's search, the report) uses this one function.
    """
    return bisect.bisect_right(false_alarms, budget) - 1
