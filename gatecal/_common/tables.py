"""Text tables shared by every rendering: aligned plain tables, markdown, CSV, and the
escaping that keeps a user's text (a case name) from breaking any of them."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

# the one rule for a user's text in any output, re-exported where the renderers look
from gatecal._common.names import code_fence, md_text, safe_terminal

__all__ = [
    "FORMATS",
    "FORMULA_START",
    "NoiseRates",
    "code_fence",
    "csv_cell",
    "csv_text",
    "few",
    "flat_rows",
    "format_probability",
    "md_text",
    "noise_words",
    "percent",
    "plural",
    "safe_terminal",
    "table_lines",
]

FORMATS = ("table", "markdown", "csv", "json")


def format_probability(p: float | None) -> str:
    """Four significant digits; never shows a probability below 1 as ``1``.

    Parameters
    ----------
    p : float or None
        A probability, in [0, 1], or None (not known).

    Returns
    -------
    str
        ``0`` and ``1`` as they are; below 1e-4 in scientific notation (``1.23e-05``);
        else four significant digits, and ``> 0.9999`` where that would round to 1;
        ``n/a`` for None.
    """
    if p is None:
        return "n/a"
    if p in (0.0, 1.0):
        return f"{p:g}"
    if p < 1e-4:
        return f"{p:.2e}"
    text = f"{p:.4g}"
    return "> 0.9999" if float(text) >= 1.0 else text


def percent(p: float) -> str:
    return f"{100 * p:.10g}%"


#: A cell starting with one of these is a formula to a spreadsheet (OWASP's CSV injection).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """A text cell a spreadsheet shows as text: one ``'`` before a formula start (and before
    a ``'``, so reading back strips exactly one). Numbers stay numbers."""
    if isinstance(value, str) and value.startswith((*FORMULA_START, "'")):
        return "'" + value
    return value


def few(items: Sequence[str], shown: int = 10) -> str:
    """The first `shown` items, and how many more."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {words or word + 's'}"


def table_lines(header: Sequence[str], rows: Sequence[Sequence[str]], fmt: str) -> list[str]:
    """A plain aligned table, or a markdown one."""
    if fmt == "markdown":
        out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return out + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return lines


def flat_rows(dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """CSV rows: every row with every column (a sequential row or plan has more), lists
    and objects as JSON; rows that already share their columns as they are (the columns
    every release wrote)."""
    columns = list(dict.fromkeys(k for d in dicts for k in d))
    if all(list(d) == columns for d in dicts):
        return dicts
    return [
        {
            k: json.dumps(d[k]) if isinstance(d.get(k), list | tuple | dict) else d.get(k)
            for k in columns
        }
        for d in dicts
    ]


def csv_text(dicts: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    rows = (
        {
            k: "" if v is None else str(v).lower() if isinstance(v, bool) else csv_cell(v)
            for k, v in d.items()
        }
        for d in dicts
    )
    write_csv(buffer, list(dicts[0]), rows)
    return buffer.getvalue()


def write_csv(
    buffer: io.StringIO, fieldnames: Sequence[str], rows: Iterable[dict[str, Any]]
) -> None:
    """A header and `rows`, one per line ending in a newline; a cell holding a carriage
    return is quoted (Python's csv quotes only the characters of its line terminator, so
    with "\n" a bare "\r" was written unquoted and read back as a line break: a case
    name holding one split its row in two). Such a row ends in "\r\n", a CSV line end."""
    plain = csv.DictWriter(buffer, fieldnames=list(fieldnames), restval="", lineterminator="\n")
    quoted = csv.DictWriter(buffer, fieldnames=list(fieldnames), restval="", lineterminator="\r\n")
    plain.writeheader()
    for row in rows:
        has_return = any(isinstance(v, str) and "\r" in v for v in row.values())
        (quoted if has_return else plain).writerow(row)


class NoiseRates(Protocol):
    """What :func:`noise_words` reads of a judge's noise (a ``gatecal.JudgeNoise``, which
    sits above this module: the words take any object with these rates)."""

    @property
    def fnr(self) -> float: ...
    @property
    def fpr(self) -> float: ...
    @property
    def unparseable(self) -> float: ...
    @property
    def icc(self) -> float: ...
    @property
    def case_spread(self) -> float: ...
    @property
    def systematic(self) -> float: ...


def noise_words(noise: NoiseRates) -> str:
    """The judge's noise in words, as the renderings print it."""
    if noise.fnr == noise.fpr:
        words = f"{percent(noise.fnr)} of judge verdicts wrong"
    else:
        words = f'false "no" {percent(noise.fnr)}, false "yes" {percent(noise.fpr)}'
    if noise.unparseable:
        words += f", {percent(noise.unparseable)} unparseable"
    if noise.icc:
        words += f", run-level icc {noise.icc:g}"
    if noise.case_spread:
        words += f" on average, each case at its own rate (case spread {noise.case_spread:g})"
    if noise.systematic:
        words = f"{percent(noise.systematic)} of cases misjudged every time; on the others, {words}"
    return words
