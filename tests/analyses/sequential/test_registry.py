"""The sequential designs are listed once: the designers, the parsers and every help text
come from that one registry."""

import re

import pytest
from typer.testing import CliRunner

from gatecal._analyses.policies.parse import parse_policy
from gatecal._analyses.sequential import DESIGNERS, designer
from gatecal._common.validate import ParameterError
from gatecal._model.sequential import SEQUENTIAL_DESIGNS, design_names, walk_boundaries
from gatecal.cli import app


def test_every_design_has_a_designer_and_no_designer_is_unnamed():
    assert sorted(DESIGNERS) == sorted(design_names())


@pytest.mark.parametrize("command", ["check", "policies", "plan"])
def test_every_spelling_is_in_the_help(command):
    output = CliRunner().invoke(app, [command, "--help"], terminal_width=200).output
    text = re.sub(r"-\s+", "-", " ".join(output.split()))  # a spelling wrapped at a hyphen
    for design in SEQUENTIAL_DESIGNS:
        assert design.spelling in text, (command, design.spelling)


@pytest.mark.parametrize("design", SEQUENTIAL_DESIGNS, ids=lambda d: d.name)
def test_every_design_parses_as_a_policy(design):
    policy = parse_policy(design.spelling.split("-")[0] + "-3")
    assert policy.sequential and policy.design == design.name and policy.looks == 3


def test_an_unknown_design_names_them_all():
    with pytest.raises(ParameterError, match="sprt, pocock, obf, evalue"):
        designer("wald")


@pytest.mark.parametrize(
    ("passing", "decision", "look", "sums"),
    [
        ([5, 5, 5], "continue", 3, [5, 10, 15]),  # never crosses within the runs given
        ([9], "pass", 1, [9]),
        ([0], "fail", 1, [0]),
        ([5, 9, 0], "pass", 2, [5, 14]),  # a later run is not read once a look decides
        ([5, 5, 5, 5, 5], "continue", 3, [5, 10, 15]),  # runs beyond the last look
    ],
)
def test_the_walk_stops_at_the_first_crossed_boundary(passing, decision, look, sums):
    boundaries = [(9, 0), (14, 3), (30, 4)]  # (pass_at_least, fail_at_most) per look
    assert walk_boundaries(passing, boundaries) == (decision, look, sums)
