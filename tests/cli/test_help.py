"""The help screens in plain words: each command's summary whole in `gatecal --help`, no
Python types, a glossary, and one meaning per option name."""

import csv
import re

import pytest

from gatecal.cli import app, main

COMMANDS = ["simulate", "golden", "plan", "policies", "recommend", "report", "runs",
            "calibrate", "check", "compare", "record", "history"]  # fmt: skip


def _help(capsys, *args):
    assert main([*args, "--help"]) == 0
    return capsys.readouterr().out


def _summary(name):
    """A command's summary: the first paragraph of its docstring, on one line."""
    command = next(c for c in app.registered_commands if c.name == name)
    return " ".join(command.callback.__doc__.split("\n\n")[0].split())


@pytest.mark.parametrize("name", COMMANDS)
def test_every_summary_is_shown_whole(capsys, monkeypatch, name):
    monkeypatch.setenv("COLUMNS", "80")
    text = _help(capsys)
    block = text.split("Commands:\n")[1].split("\n\n")[0]
    entries = re.split(r"\n  (?=\S)", "\n" + block)
    shown = {e.split()[0]: " ".join(e.split()[1:]) for e in entries if e.strip()}
    assert shown[name] == _summary(name)  # cut at ~45-65 characters with "..." before
    assert not shown[name].endswith("...")


@pytest.mark.parametrize("name", COMMANDS)
def test_no_python_types_in_the_help(capsys, name):
    text = _help(capsys, name)
    assert not re.search(r"<(list|str|int|float|bool|path|dict|tuple)\b[^>]*>", text), text
    usage = text.splitlines()[0]
    assert "{" not in usage and "}" not in usage and "...]..." not in usage, usage


def test_the_usage_names_the_arguments_plainly(capsys):
    # RUNS is optional: the known-good runs may come from --store instead
    usage = _help(capsys, "recommend").splitlines()[0]
    assert usage == "Usage: gatecal recommend [OPTIONS] [RUNS...]"
    assert "RUNS...  Known-good runs" in _help(capsys, "recommend")


def test_the_help_ends_with_a_glossary(capsys):
    text = _help(capsys)
    words = text.split("Words:")[1]
    for term in ("gate", "false alarm", "detection", "run-to-run correlation",
                 "systematic case", "known-good runs", "flip rate"):  # fmt: skip
        assert re.search(rf"^\s+{re.escape(term)}\b", words, re.M), term
    assert "how much a whole run's judge mood varies" in " ".join(words.split())
    assert max(len(line) for line in text.splitlines()) <= 80


def _builds(path, extra_case):
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["build", "run", "case", "passed"])
        for build, prefix in (("healthy", "b"), ("regressed", "c")):
            for r in range(4):
                for j in range(8):
                    w.writerow([build, f"{prefix}{r}", f"case-{j}", "true"])
        w.writerow(["regressed", "c0", extra_case, "true"])
    return path


def test_compare_calls_missing_cases_allow_missing_and_partial_still_works(capsys, tmp_path):
    runs = str(_builds(tmp_path / "both.csv", "new-case"))
    args = ["compare", runs, "--oc-samples", "0"]
    assert main(args) == 1  # a case in one build only: incomplete evidence
    out = capsys.readouterr().out
    assert "--allow-missing compares the rest" in out
    assert main([*args, "--allow-missing"]) == 0
    new = capsys.readouterr()
    assert main([*args, "--partial"]) == 0  # the old spelling, hidden, still works
    old = capsys.readouterr()
    assert old.out == new.out
    assert "compare --partial is now --allow-missing (the old spelling works)" in old.err
    text = _help(capsys, "compare")
    assert "--allow-missing" in text and "--partial " not in text
    assert "--inspect-partial" in text  # inspect_ai's 'P' score, as recommend's --partial
    assert "inspect_ai 'P'" in " ".join(
        _help(capsys, "recommend").split("--partial")[1].split()[:8]
    )


@pytest.mark.parametrize("name", COMMANDS)
def test_each_help_opens_with_what_the_command_normally_does(capsys, monkeypatch, name):
    """The paragraph after the summary is the common use; variants (sequential policies,
    options that change the command's shape) come after it. check's help opened on
    sequential policies, which few CI runs use."""
    monkeypatch.setenv("COLUMNS", "100")
    text = _help(capsys, name)
    body = text.split("\n\n")
    second = " ".join(body[2].split())  # usage, summary, then the first paragraph
    assert not re.match(r"(With|For) (a|the)? ?sequential|With --", second), second


def test_check_help_says_the_usual_decision_before_the_sequential_policies(capsys):
    text = " ".join(_help(capsys, "check").split())
    assert text.index("Reads the current run and known-good baseline runs") < text.index(
        "With a sequential --policy"
    )
