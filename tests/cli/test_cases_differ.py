"""--case-spread and --systematic on the command line: simulate, policies and plan model a
suite whose cases differ from two numbers; what they do not combine with is refused."""

from __future__ import annotations

import csv
import io

import pytest

from tests.conftest import run_cli


def test_simulate_names_the_spread_and_the_systematic_cases():
    code, out, err = run_cli(
        "simulate", "--cases", "12", "--flip", "0.05", "--case-spread", "0.9",
        "--systematic", "0.1", "--runs", "400",
    )  # fmt: skip
    assert code == 0, err
    assert "each case draws its own flip rate, kept in every run (case spread 0.9" in out
    assert "P is the average over suites drawn from the spread" in out
    assert "1 of 12 cases misjudged every time (the last case)" in out
    assert "every case must pass  12     400 of 400 runs  P = 1" in out  # a case always fails
    assert "consistent: every simulated count lies inside" in out


def test_policies_show_a_vote_that_no_longer_helps():
    def false_alarm(*extra: str) -> list[str]:
        code, out, err = run_cli(
            "policies", "--flip", "0.05", "--cases", "20", "--gates", "all",
            "--policies", "single,majority-3", "--runs", "2000", "--format", "csv", *extra,
        )  # fmt: skip
        assert code == 0, err
        rows = csv.DictReader(io.StringIO(out))
        return [r["failure_probability"] for r in rows if r["build"] == "healthy"]

    single, vote = map(float, false_alarm())
    assert vote < single / 3
    single, vote = map(float, false_alarm("--case-spread", "0.95"))
    assert vote > 0.95 * single  # 0.659 and 0.652


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("simulate", "--icc", "0.1", "--case-spread", "0.3"),
            "--icc combines only with one flip rate for every case (no --case-spread, no "
            "--systematic) (got 0.1)",
        ),
        (("simulate", "--case-spread", "1"), "--case-spread must be a number in [0, 1) (got '1')"),
        (("plan", "--systematic", "1.5"), "--systematic must be a number in [0, 1] (got '1.5')"),
        (
            ("plan", "--compare", "--cases", "10", "--case-spread", "0.3"),
            "--case-spread does not combine with --compare (it plans for one rate for every "
            "case) (got 0.3)",
        ),
        (
            ("plan", "--case-spread", "0.3", "--policies", "sprt-5"),
            "--policies must not hold a sequential gate when cases differ",
        ),
    ],
)
def test_what_does_not_combine_is_one_line_and_exit_2(args, message):
    code, out, err = run_cli(*args)
    assert code == 2 and not out
    assert message in err and len(err.strip().splitlines()) == 1
