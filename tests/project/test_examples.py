"""The Examples sections of the public names run, and print what they say they print.

Every example formats its floats to a few digits, so it holds on any CPU. The entry points
a new user reaches for first each carry one.
"""

from __future__ import annotations

import doctest

import pytest

import gatecal

ENTRY_POINTS = (
    "simulate_gates",
    "exact_pass_counts",
    "operating_table",
    "policy_rates",
    "plan_suite",
    "cases_needed",
    "recommend_gate",
    "check_gate",
    "compare_builds",
    "read_runs",
)


def _with_examples() -> list[str]:
    return sorted(
        name
        for name in gatecal.__all__
        if ">>>" in (getattr(getattr(gatecal, name), "__doc__", None) or "")
        and not isinstance(getattr(gatecal, name), (int, float, str, tuple, dict, frozenset))
    )


def test_every_entry_point_has_examples():
    missing = [n for n in ENTRY_POINTS if "Examples\n" not in (getattr(gatecal, n).__doc__ or "")]
    assert missing == []


@pytest.mark.parametrize("name", _with_examples())
def test_the_examples_run(name):
    obj = getattr(gatecal, name)
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    tests = finder.find(obj, name, globs={"gatecal": gatecal})
    assert tests and any(t.examples for t in tests)
    for test in tests:
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
