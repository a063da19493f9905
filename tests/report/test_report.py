"""`gatecal report` tells one story: measured first, then the model of the user's own suite
and regression; tables as tables; a folder with normal permissions."""

import contextlib
import io
import json
import os
import re

import numpy as np
import pytest

from gatecal.cli import main
from tests.conftest import run_cli
from tests.paths import REPORTS
from tests.regen import assert_same

CASES = 20


@pytest.fixture(scope="module")
def nightly(tmp_path_factory):
    """30 JUnit runs of a 20-case pytest suite, its judge wrong 5% of the time."""
    folder = tmp_path_factory.mktemp("nightly")
    rng = np.random.default_rng(7)
    for r in range(30):
        cells = []
        for c in range(CASES):
            inner = '<failure message="judge said no">assert False</failure>' * (
                rng.random() < 0.05
            )
            cells.append(f'<testcase classname="tests.test_golden" name="test_golden[case-{c:02d}]" '
                         f'time="0.01">{inner}</testcase>')  # fmt: skip
        (folder / f"run-{r:02d}.xml").write_text(
            f'<testsuites><testsuite name="pytest" tests="{CASES}">{"".join(cells)}</testsuite></testsuites>'
        )
    return folder


def _report(out, *args):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["report", "--out", str(out), "--runs", "20", *args])
    return code, stdout.getvalue() + stderr.getvalue()


@pytest.fixture(scope="module")
def twenty(nightly, tmp_path_factory):
    out = tmp_path_factory.mktemp("rep") / "report"
    old = os.umask(0o022)
    try:
        code, text = _report(out, "--cases", "20", "--regression", "3", "--runs-file", str(nightly))
    finally:
        os.umask(old)
    assert code == 0, text
    return out


def test_the_folder_has_normal_permissions(twenty):
    assert oct(twenty.stat().st_mode & 0o777) == "0o755"  # mkdtemp's 0700 before


def test_the_model_is_the_users_suite_and_regression(twenty):
    sim = json.loads((twenty / "simulate.json").read_text())
    assert sim["cases"] == CASES
    assert sim["failing"] == 3  # the article's default share (5 of 20) before
    index = (twenty / "index.md").read_text()
    assert "of 12" not in index
    setting = index.split("\n\n")[1]
    assert setting.startswith("Your suite: 20 cases") and "3 cases fail" in setting
    engines = index.split("## Both engines, side by side")[1]
    assert "regressed build: 3 cases fail a code check" in engines  # 5 (a quarter) before


def test_measured_first_then_the_model(twenty):
    index = (twenty / "index.md").read_text()
    titles = re.findall(r"^## (.*)$", index, re.M)
    assert titles[0] == "Your gate, from your measured runs"
    first_model = next(i for i, t in enumerate(titles) if "noise" in t or t.startswith("Modelled"))
    measured = [i for i, t in enumerate(titles) if "known-good runs" in t or t == "Flakiest cases"]
    assert max(measured) < first_model
    top = index.split("## ")[1]
    assert "From your 30 known-good runs:" in top
    assert re.search(r"^\| at least \d+ of 20 pass \| \d+ \|", top, re.M)  # a real table


def test_the_recommend_output_keeps_its_columns(twenty):
    page = (twenty / "index.html").read_text()
    section = page.split("<h2>gatecal recommend, in full</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<pre><code" in section  # monospace: its aligned columns hold
    flaky = page.split("<h2>Flakiest cases</h2>", 1)[1].split("<h2>", 1)[0]
    assert "<table>" in flaky and "<td>case-" in flaky


def test_without_cases_the_model_takes_the_measured_suite(nightly, tmp_path):
    code, text = _report(tmp_path / "r", "--runs-file", str(nightly))
    assert code == 0, text
    sim = json.loads((tmp_path / "r" / "simulate.json").read_text())
    assert sim["cases"] == CASES and sim["failing"] == 5  # the article's 12 and 3 before
    engines = (tmp_path / "r" / "index.md").read_text().split("## Both engines")[1]
    assert "regressed build: 5 cases fail a code check" in engines  # recommend's quarter


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--cases", "12"],
            "--cases must be the 20 cases the --runs-file runs hold, or left out (got 12)",
        ),
        (
            ["--regression", "3", "--failing", "4"],
            "--regression makes 3 of 20 cases fail, --failing says 4",
        ),
    ],
)
def test_a_model_that_contradicts_the_runs_is_refused(nightly, tmp_path, args, message):
    code, text = _report(tmp_path / "r", "--runs-file", str(nightly), *args)
    assert code == 2
    assert message in text
    assert not (tmp_path / "r").exists()


def test_the_model_takes_the_case_spread_and_the_systematic_cases_as_simulate_does(tmp_path):
    """report takes the whole noise group: its simulation is simulate's, number for number."""
    differ = ["--case-spread", "0.5", "--systematic", "0.1"]
    code, text = _report(tmp_path / "r", *differ)
    assert code == 0, text
    written = (tmp_path / "r" / "simulate.json").read_text(encoding="utf-8")
    code, out, err = run_cli("simulate", "--runs", "20", "--format", "json", *differ)
    assert code == 0, err
    assert_same(written, out, "report's simulate.json")
    data = json.loads(written)
    assert (data["case_spread"], data["systematic"]) == (0.5, 0.1)
    every = [r for r in data["rows"] if r["build"] == "healthy" and r["gate"] == "all"]
    assert [r["simulated_failures"] for r in every] == [20, 20]  # one case always fails
    index = (tmp_path / "r" / "index.md").read_text(encoding="utf-8")
    assert "case spread 0.5" in index and "1 of 12 cases misjudged every time" in index
    # the one chart that plans with one rate for every case says so
    assert "this chart does not model how your cases differ" in index
    code, _ = _report(tmp_path / "plain")
    plain = (tmp_path / "plain" / "index.md").read_text(encoding="utf-8")
    assert code == 0 and "does not model how your cases differ" not in plain


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--case-spread", "0.3", "--icc", "0.1"],
            "--icc combines only with one flip rate for every case (no --case-spread, no "
            "--systematic) (got 0.1)",
        ),
        (
            [
                "--case-spread",
                "0.3",
                "--suite",
                str(REPORTS / "calibrate-example/judge-suite.json"),
            ],
            "--case-spread must not be combined with per-check or per-case rates (they set "
            "each rate) (got 0.3)",
        ),
    ],
)
def test_a_noise_report_cannot_model_is_one_line_and_no_folder(tmp_path, args, message):
    code, text = _report(tmp_path / "r", *args)
    assert code == 2 and text == f"gatecal: error: {message}\n"
    assert not (tmp_path / "r").exists()
