"""The sequential gates by name, and how their boundaries decide: standard library only,
shared by the analyses, the command line and the pytest plugin.

A sequential gate runs the same build again until the passing cases summed over the runs
so far cross a boundary: pass at ``S_j >= pass_at_least``, fail at ``S_j <= fail_at_most``,
or run again. :data:`SEQUENTIAL_DESIGNS` lists every design once; the help texts, error
messages and parsers are built from it, and ``gatecal._analyses.sequential`` maps each name
to the search that designs its boundaries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from gatecal._common.text import joined

__all__ = [
    "SEQUENTIAL_DESIGNS",
    "DesignName",
    "design_names",
    "spellings",
    "walk_boundaries",
]

Decision = Literal["pass", "fail", "continue"]


@dataclass(frozen=True, slots=True)
class DesignName:
    """One sequential design as users spell it.

    Attributes
    ----------
    name : str
        The policy's prefix (``sprt``).
    spelling : str
        Its spelling with the number of runs it may take (``sprt-MAX``).
    summary : str
        What it is, in a few words.
    searched : bool
        Its boundaries are searched for a false alarm and a detection target (the
        e-process instead fails at a fixed e-value).
    """

    name: str
    spelling: str
    summary: str
    searched: bool = True


#: Every sequential design, once.
SEQUENTIAL_DESIGNS: tuple[DesignName, ...] = (
    DesignName("sprt", "sprt-MAX", "Wald's sequential probability ratio test, at most MAX runs"),
    DesignName("pocock", "pocock-LOOKS", "Pocock's group-sequential boundaries over LOOKS runs"),
    DesignName("obf", "obf-LOOKS", "O'Brien-Fleming boundaries over LOOKS runs"),
    DesignName(
        "evalue",
        "evalue-MAX",
        "an anytime-valid e-process, failing at e-value 1/false alarm, at most MAX runs",
        searched=False,
    ),
)


def design_names(*, searched: bool | None = None) -> tuple[str, ...]:
    """The designs' names (``sprt``, ...); only those whose boundaries are searched (or
    not) when `searched` is given."""
    return tuple(d.name for d in SEQUENTIAL_DESIGNS if searched is None or d.searched == searched)


def spellings(conjunction: str = "or", designs: Iterable[DesignName] = SEQUENTIAL_DESIGNS) -> str:
    """``sprt-MAX, pocock-LOOKS, obf-LOOKS or evalue-MAX``."""
    return joined([d.spelling for d in designs], conjunction)


def walk_boundaries(
    passing: Iterable[int], boundaries: Sequence[tuple[int, int]]
) -> tuple[Decision, int, list[int]]:
    """The decision on the runs so far: the first look whose boundary the running sum of
    `passing` (passing cases per run, in order) crosses, or ``continue`` after the last run
    given; with that look (1-based) and the running sums up to it.

    ``boundaries[j - 1]`` is ``(pass_at_least, fail_at_most)`` after run j; runs beyond
    the last look are not read.
    """
    total, sums = 0, []
    for look, (count, (at_least, at_most)) in enumerate(
        zip(passing, boundaries, strict=False), start=1
    ):
        total += int(count)
        sums.append(total)
        if total >= at_least:
            return "pass", look, sums
        if total <= at_most:
            return "fail", look, sums
    return "continue", len(sums), sums
