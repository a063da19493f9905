"""README.md, .ci/run and reports/ must stay true to what the code does."""

import contextlib
import io
import re

import pytest

import gatecal
from experiments import simulate_article
from gatecal.cli import main
from tests.paths import ROOT
from tests.regen import assert_same

README = (ROOT / "README.md").read_text()


def _cli(args):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(args) == 0
    return buffer.getvalue()


def test_readme_quotes_the_real_default_output():
    quoted = re.search(
        r"<!-- simulate-default:start -->\n```text\n(.*?)```\n<!-- simulate-default:end -->",
        README,
        re.S,
    )
    assert quoted, "README lost its quoted default output"
    actual = _cli(["simulate", "--cases", "12", "--flip", "0.03,0.08"])
    assert quoted.group(1) == actual
    assert (ROOT / "reports" / "simulate-article.txt").read_text() == actual


def test_readme_commands_are_what_ci_runs():
    blocks = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    run_cmd, test_cmd = blocks[0], blocks[1]
    assert run_cmd.endswith("gatecal simulate --cases 12 --flip 0.03,0.08")
    assert test_cmd.endswith("&& pytest")
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_cmd in ci.splitlines()


@pytest.mark.parametrize("name", list(simulate_article.COMMANDS))
def test_reports_regenerate_byte_for_byte(name):
    assert_same(simulate_article.render(name), (ROOT / "reports" / name).read_text(), name)


def test_readme_python_example_runs():
    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, namespace)
    exact = namespace["exact"]
    assert exact.failure_probability(10) == pytest.approx(0.030357832863056648, rel=1e-13)
    assert "# 0.030357832863056648" in code
    assert isinstance(namespace["report"], gatecal.SimulationReport)


def test_readme_plan_example_is_the_real_output():
    quoted = re.search(
        r"<!-- plan-example:start -->\n```text\n(.*?)```\n<!-- plan-example:end -->", README, re.S
    )
    assert quoted, "README lost its plan example"
    actual = _cli(
        [
            "plan",
            "--flip",
            "0.08",
            "--regression",
            "0.10",
            "--false-alarm",
            "0.05",
            "--detection",
            "0.95",
        ]
    )
    assert quoted.group(1) == actual


def test_readme_recommend_examples_are_real_output():
    default = re.search(
        r"<!-- recommend-default:start -->\n```text\n(.*?)```\n<!-- recommend-default:end -->",
        README,
        re.S,
    )
    assert default.group(1) == (ROOT / "reports" / "recommend-nightly.txt").read_text()
    loose = re.search(
        r"<!-- recommend-loose:start -->\n```text\n(.*?)\n```\n<!-- recommend-loose:end -->",
        README,
        re.S,
    )
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        actual = _cli(
            ["recommend", "reports/nightly-junit", "--regression", "3", "--false-alarm", "0.2"]
        )
    finally:
        os.chdir(cwd)
    assert loose.group(1) in actual
    assert "recommended gate: at least 10 of 12 cases pass" in loose.group(1)


LOOP = ROOT / "reports" / "plugin-loop"


def _loop_blocks():
    text = (LOOP / "loop.txt").read_text()
    return ["$ " + b.removeprefix("$ ") for b in text.strip("\n").split("\n\n$ ")]


def test_readme_plugin_loop_quotes_the_real_transcript():
    quoted = re.search(r"<!-- plugin-loop:start -->\n(.*?)<!-- plugin-loop:end -->", README, re.S)
    assert quoted, "README lost its plugin loop"
    blocks = [b.strip("\n") for b in re.findall(r"```text\n(.*?)```", quoted.group(1), re.S)]
    loop = (LOOP / "loop.txt").read_text()
    for block in blocks:
        for part in block.split("\n\n"):
            if part.startswith("$ ") and "\n...\n" in part:  # abridged: each line is real
                assert all(line in loop for line in part.splitlines() if line != "...")
            elif part.startswith("$ "):
                assert part in loop, part.splitlines()[0]
    assert "new failures: api-rate-limit, extra-seat, refund-annual." in quoted.group(1)
    assert "gatecal check: PASS (exit 0)" in quoted.group(1)


@pytest.mark.parametrize(
    "block", [b for b in _loop_blocks() if b.startswith(("$ gatecal check", "$ gatecal recommend"))]
)
def test_plugin_loop_gatecal_outputs_regenerate(block, monkeypatch, capsys):
    command, *lines = block.splitlines()
    code = int(lines[-1].removeprefix("[exit ").removesuffix("]"))
    args = command.removeprefix("$ gatecal ").split()
    if "--out" in args:  # the JSON went to a file: compare the file
        out = args[args.index("--out") + 1]
        args[args.index("--out") + 1] = str(LOOP / f".regen-{out}")
    monkeypatch.chdir(LOOP)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    try:
        assert main(args) == code
        printed = capsys.readouterr().out
        if "--out" in args:
            assert_same((LOOP / f".regen-{out}").read_text(), (LOOP / out).read_text(), out)
        else:
            assert printed.rstrip("\n") == "\n".join(lines[:-1])
    finally:
        for leftover in LOOP.glob(".regen-*"):
            leftover.unlink()


def test_readme_runs_example_is_real_output():
    import os

    quoted = re.search(
        r"<!-- runs-artefacts:start -->\n```text\n(.*?)```\n<!-- runs-artefacts:end -->",
        README,
        re.S,
    )
    cwd = os.getcwd()
    os.chdir(ROOT / "tests" / "fixtures" / "junit")
    try:
        actual = _cli(["runs", "artefacts"])
    finally:
        os.chdir(cwd)
    assert quoted.group(1) == actual


def _command_blocks():
    """README blocks marked <!-- cmd-NAME:start -->: '$ gatecal ARGS' and what it printed."""
    return re.findall(
        r"<!-- (cmd-[\w-]+):start -->\n```text\n\$ gatecal (.*?)\n(.*?)```\n<!-- \1:end -->",
        README,
        re.S,
    )


@pytest.mark.parametrize("name, command, printed", _command_blocks(), ids=lambda x: str(x)[:40])
def test_readme_command_blocks_are_real_output(name, command, printed, monkeypatch, capsys):
    import shlex

    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    main(shlex.split(command))
    assert_same(capsys.readouterr().out, printed, name)


def test_readme_has_command_blocks():
    assert len(_command_blocks()) >= 3
