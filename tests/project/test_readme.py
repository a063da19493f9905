"""README.md, .ci/run and reports/ must stay true to what the code does.

Every command block of the README and of the docs pages is checked in
tests/project/test_docs.py;
here, what only the README promises: its two set-up commands are the ones CI runs, its
headline output is the article's report, and its Python example runs.
"""

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
LOOP = ROOT / "reports" / "plugin-loop"


def test_readme_quotes_the_headline_output():
    quoted = re.search(
        r"<!-- cmd-simulate:start -->\n```text\n\$ gatecal (.*?)\n(.*?)```\n<!-- cmd-simulate:end -->",
        README,
        re.S,
    )
    assert quoted, "README lost its headline output"
    assert quoted.group(1) == "simulate --cases 12 --flip 0.03,0.08"
    assert quoted.group(2) == (ROOT / "reports" / "simulate-article.txt").read_text()


def test_readme_commands_are_what_ci_runs():
    blocks = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    run_cmd, test_cmd = blocks[0], blocks[1]
    assert run_cmd.endswith("pip install -e . && gatecal simulate --cases 12 --flip 0.03,0.08")
    assert test_cmd.endswith("&& pytest -n auto")  # pytest-xdist: every core
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_cmd in ci.splitlines()


def test_readme_stays_short():
    assert len(README.encode()) <= 20_000, "README.md is the front door: move details into docs/"


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


def _loop_blocks():
    text = (LOOP / "loop.txt").read_text()
    return ["$ " + b.removeprefix("$ ") for b in text.strip("\n").split("\n\n$ ")]


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
