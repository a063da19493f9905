"""The per-case policies are listed once: the parser reads every spelling of the registry,
and every help that lists them lists them all."""

import re

import pytest
from typer.testing import CliRunner

from gatecal._analyses.policies.parse import CHECK_POLICIES, parse_check_policy, parse_policy
from gatecal._model.policy_names import POLICY_NAMES
from gatecal.cli import app


def _example(spelling: str) -> str:
    """``repeat-K-of-N`` as ``repeat-2-of-3``: each capital a small number."""
    numbers = iter(("2", "3", "4"))
    return re.sub(r"\b[A-Z]\b", lambda _: next(numbers), spelling)


@pytest.mark.parametrize("name", POLICY_NAMES, ids=lambda p: p.spelling)
def test_every_spelling_parses(name):
    policy = parse_policy(_example(name.spelling))
    assert not policy.sequential
    if name.runs:  # and check applies exactly the ones marked as whole runs
        assert parse_check_policy(_example(name.spelling)) == policy
        assert name.spelling in CHECK_POLICIES
    else:
        assert name.spelling not in CHECK_POLICIES


@pytest.mark.parametrize(
    ("command", "runs_only"), [("policies", False), ("plan", False), ("check", True)]
)
def test_every_spelling_is_in_the_help(command, runs_only):
    output = CliRunner().invoke(app, [command, "--help"], terminal_width=200).output
    text = re.sub(r"-\s+", "-", " ".join(output.split()))  # a spelling wrapped at a hyphen
    for name in POLICY_NAMES:
        if name.runs or not runs_only:
            assert name.spelling in text, (command, name.spelling)
