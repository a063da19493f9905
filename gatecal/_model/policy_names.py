"""The per-case policies by name: standard library only, so the command line's help, the
parsers and their errors all list them from here."""

from __future__ import annotations

from dataclasses import dataclass

from gatecal._common.text import joined

__all__ = ["POLICY_NAMES", "PolicyName", "policy_spellings"]


@dataclass(frozen=True, slots=True)
class PolicyName:
    """One policy as users spell it.

    Attributes
    ----------
    spelling : str
        ``majority-M``, with its numbers as capitals.
    summary : str
        What it does, in a few words.
    runs : bool
        Its attempts are whole runs that ``gatecal check`` can read from run files
        (a majority vote or a confirmation happens inside one verdict).
    """

    spelling: str
    summary: str
    runs: bool = False


#: Every per-case policy, once, in the order the help lists them.
POLICY_NAMES: tuple[PolicyName, ...] = (
    PolicyName("single", "one judge call per check, one run", runs=True),
    PolicyName("majority-M", "M judge calls per check, majority wins"),
    PolicyName("repeat-K-of-N", "each case passes K of N runs", runs=True),
    PolicyName("pass^K", "all K repeats of a case pass, as repeat-K-of-K"),
    PolicyName("pass@K", "any of K repeats of a case passes, as repeat-1-of-K"),
    PolicyName("confirm-M", "a failing call is re-asked M times, majority decides"),
    PolicyName("rerun-failing-R", "rerun only the failing cases, up to R times", runs=True),
    PolicyName("rerun-R", "rerun the suite while the gate fails, up to R times", runs=True),
)


def policy_spellings(*, runs: bool = False, conjunction: str = "") -> str:
    """``single, majority-M, ...``; only the ones check can read from runs with `runs`;
    the last joined by `conjunction` when one is given (``... or rerun-R``)."""
    words = [p.spelling for p in POLICY_NAMES if p.runs or not runs]
    return joined(words, conjunction) if conjunction else ", ".join(words)
