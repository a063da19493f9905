"""Every decision a command takes is its first line, in plain words, and the next step its
second: a reviewer who is not a statistician reads those two and stops."""

from gatecal.cli import main
from tests.paths import REPORTS

NIGHTLY = REPORTS / "nightly-junit"
STRICT = REPORTS / "real-judge" / "temperature-0" / "strict"


def _first_lines(capsys, *args):
    code = main([str(a) for a in args])
    return code, capsys.readouterr().out.splitlines()


def test_recommend_leads_with_the_gate_and_what_to_do_next(capsys):
    code, lines = _first_lines(capsys, "recommend", STRICT / "healthy.jsonl")
    assert code == 0
    assert lines[0].startswith("gatecal recommend: use the case-aware gate")
    assert "fails healthy builds with probability" in lines[0] and "short of" not in lines[0]
    # what it can see: one, two and three broken stable cases
    assert lines[1].startswith("it catches a regression that breaks 1 / 2 / 3 stable cases")
    assert lines[2].startswith("next: write it with --format json --out gate.json")
    assert lines[4].startswith("read: 30 known-good runs")  # the statistics follow


def test_recommend_says_when_its_gate_misses_a_target(capsys):
    code, lines = _first_lines(capsys, "recommend", NIGHTLY, "--format", "markdown")
    assert code == 0
    assert lines[0].startswith("gatecal recommend: use at least ")
    assert "the best valid gate" in lines[0] and "short of the 0.95 target" in lines[0]


def test_check_leads_with_its_decision(capsys):
    code, lines = _first_lines(
        capsys, "check", STRICT / "regressed-run-000.jsonl", "--baseline", STRICT / "healthy.jsonl"
    )
    assert code == 1 and lines[0] == "gatecal check: FAIL (exit 1)"
