"""Charts drawn under Agg and inspected artist by artist; the report folder; a real browser."""

import contextlib
import io
import os
import shutil
import subprocess
import tempfile

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.collections import QuadMesh
from matplotlib.patches import StepPatch

import gatecal
from gatecal import charts
from gatecal.cli import main
from tests.paths import ROOT
from tests.regen import assert_same

ARTICLE = gatecal.Suite.uniform()


@pytest.fixture(scope="module")
def report():
    return gatecal.simulate_gates(ARTICLE)


@pytest.fixture(scope="module")
def recommendation():
    return gatecal.recommend_gate(
        gatecal.read_runs([ROOT / "reports" / "nightly-junit"]), regression="3"
    )


def test_gate_chart_bars_are_the_exact_probabilities(report):
    ax = charts.plot_gate_chart(report, 0.03)
    rows = [r for r in report.rows if r.flip == 0.03]
    heights = [p.get_height() for p in ax.patches]
    expected = [r.exact_failure_probability for r in rows if r.build == "healthy"] + [
        r.exact_failure_probability for r in rows if r.build == "regressed"
    ]
    np.testing.assert_allclose(heights, expected, rtol=1e-12)
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    simulated = np.concatenate([d.get_ydata() for d in dots])
    np.testing.assert_allclose(sorted(simulated), sorted(r.simulated_failure_rate for r in rows))
    assert "3% of judge verdicts flip" in ax.get_title()
    assert ax.get_ylabel() and ax.get_legend() is not None
    with pytest.raises(ValueError, match="`flip` must be one of"):
        charts.plot_gate_chart(report, 0.5)


def test_operating_curves_step_at_multiples_of_one_over_n():
    noise = gatecal.JudgeNoise.flip(0.03)
    table = gatecal.operating_table(
        gatecal.exact_pass_counts(ARTICLE, "healthy", noise),
        gatecal.exact_pass_counts(ARTICLE, "regressed", noise),
    )
    ax = charts.plot_operating_curves(table, recommended=10, false_alarm_target=0.05)
    steps = [p for p in ax.patches if isinstance(p, StepPatch)]
    assert len(steps) == 2
    values, edges, _ = steps[0].get_data()
    np.testing.assert_allclose(edges, np.arange(13) / 12)
    np.testing.assert_allclose(values, [table[k][0] for k in range(1, 13)])
    budget = [line for line in ax.lines if "budget" in str(line.get_label())]
    assert budget and budget[0].get_ydata()[0] == 0.05
    spans = [p for p in ax.patches if not isinstance(p, StepPatch)]
    x0, x1 = spans[0].get_x(), spans[0].get_x() + spans[0].get_width()
    assert (round(x0 * 12), round(x1 * 12)) == (9, 10)


def test_pass_counts_cut_off_sits_at_k_min():
    noise = gatecal.JudgeNoise.flip(0.08)
    healthy = gatecal.exact_pass_counts(ARTICLE, "healthy", noise)
    regressed = gatecal.exact_pass_counts(ARTICLE, "regressed", noise)
    ax = charts.plot_pass_counts(healthy, regressed, k_min=10)
    heights = [p.get_height() for p in ax.patches]
    np.testing.assert_allclose(heights, list(healthy.pmf) + list(regressed.pmf))
    cut = [line for line in ax.lines if "gate" in str(line.get_label())]
    assert cut[0].get_xdata()[0] == 9.5


def test_heat_map_holds_the_grid():
    flips, thresholds = [0.01, 0.03, 0.08], [0.75, 0.8, 0.9, 1.0]
    grid = gatecal.false_alarm_grid(ARTICLE, flips, thresholds)
    # reference/statistics.md §1.1: 0.80 -> k_min 10 at 3% is 0.030358; 0.90 -> 11 at 8% is 0.570444
    assert abs(grid[1, 1] - 0.030357832863056648) < 1e-12
    assert abs(grid[2, 2] - 0.5704438930823995) < 1e-12
    ax = charts.plot_false_alarm_heatmap(grid, flips, thresholds)
    mesh = next(c for c in ax.collections if isinstance(c, QuadMesh))
    np.testing.assert_allclose(np.asarray(mesh.get_array()).reshape(grid.shape), grid)


def test_measured_run_charts(recommendation):
    ax = charts.plot_run_distribution(recommendation)
    bars = [p.get_height() for p in ax.patches]
    passes = recommendation.cases - np.asarray(recommendation.failures_per_run)
    np.testing.assert_array_equal(bars, np.bincount(passes, minlength=recommendation.cases + 1))
    ax = charts.plot_flakiness(recommendation)
    widths = sorted(p.get_width() for p in ax.patches)
    np.testing.assert_allclose(widths, sorted(c.rate.estimate for c in recommendation.per_case))


def test_cases_needed_chart():
    flips = [0.03, 0.08]
    plans = {"10% of the cases fail": gatecal.cases_needed(flips, "0.10")}
    ax = charts.plot_cases_needed(flips, plans)
    assert list(ax.lines[0].get_ydata()) == [56, 189]  # reference/statistics.md §2.9


def test_svg_is_deterministic(report, tmp_path):
    outputs = []
    for i in range(2):
        path = tmp_path / f"gate-{i}.svg"
        charts.save_chart(charts.plot_gate_chart(report), path)
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1]
    assert b"<dc:date>" not in outputs[0]
    with pytest.raises(ValueError, match=r"must end in \.png or \.svg"):
        charts.save_chart(charts.plot_gate_chart(report), tmp_path / "x.pdf")


def test_report_folder_and_its_atomicity(report, recommendation, tmp_path, monkeypatch):
    from gatecal.report import write_report

    written = write_report(tmp_path / "rep", report, recommendation=recommendation)
    names = set(os.listdir(tmp_path / "rep"))
    assert {
        "index.html",
        "index.md",
        "simulate.csv",
        "recommend.json",
        "operating-curves.svg",
    } <= names
    assert names == set(written.files)
    index = (tmp_path / "rep" / "index.md").read_text()
    assert "at least 10 of 12 cases pass" in index
    with pytest.raises(FileExistsError):
        write_report(tmp_path / "rep", report)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(charts, "save_chart", broken)
    with pytest.raises(OSError, match="disk full"):
        write_report(tmp_path / "half", report)
    assert sorted(os.listdir(tmp_path)) == ["rep"]  # no half report, no temporary folder


def test_report_command_errors(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    for args, message in [
        (["report", "--out", str(tmp_path / "full")], "--out must be a new or empty folder"),
        (
            ["report", "--out", str(tmp_path / "r"), "--runs-file", str(tmp_path / "none.csv")],
            "--runs-file",
        ),
        (["simulate", "--chart", str(tmp_path / "c.pdf")], "--chart must end in .png or .svg"),
    ]:
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(args)
        assert code == 2 and message in err.getvalue() and err.getvalue().count("\n") == 1
    assert not (tmp_path / "r").exists()


def test_chart_options_write_files(tmp_path):
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["simulate", "--runs", "50", "--chart", str(tmp_path / "g.svg")]) == 0
        assert (
            main(
                [
                    "recommend",
                    str(ROOT / "reports" / "nightly-junit"),
                    "--regression",
                    "3",
                    "--chart",
                    str(tmp_path / "oc.png"),
                ]
            )
            == 0
        )
    assert (tmp_path / "g.svg").read_text().startswith("<?xml")
    assert (tmp_path / "oc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="needs Debian's chromium (installed by .ci/run)")
def test_index_html_opens_offline_in_a_real_browser(report, recommendation, tmp_path):
    from gatecal.report import write_report

    write_report(tmp_path / "rep", report, recommendation=recommendation)
    profile = tempfile.mkdtemp()
    try:
        dom = subprocess.run(
            [
                _chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--virtual-time-budget=5000",
                "--dump-dom",
                (tmp_path / "rep" / "index.html").as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    import re

    body = re.search(r'<body data-images-total="(\d+)" data-images-loaded="(\d+)"', dom)
    assert body, dom[:500]
    total, loaded = int(body.group(1)), int(body.group(2))
    assert total == len(list((tmp_path / "rep").glob("*.png"))) == 8
    assert loaded == total
    # every section's markdown rendered: tables and headings, no raw markdown left
    assert dom.count("<table>") >= 3 and "<h3>" in dom
    assert "|---|" not in dom and "### " not in dom and "**" not in dom
    # one story: with measured runs the top says what the runs say, as a real table; the
    # model follows, labelled as a what-if on the same suite
    top = dom.split("<h2>Your gate, from your measured runs</h2>", 1)[1].split("<h2>", 1)[0]
    assert "From your 30 known-good runs:" in top and "<table>" in top
    model = dom.split("<h2>What if the judge's noise changes</h2>", 1)[1].split("<h2>", 1)[0]
    assert "If the judge flipped 3% of its verdicts" in model
    assert dom.index("Your gate, from") < dom.index("What if the judge")


def test_committed_report_regenerates(tmp_path, monkeypatch):
    """index.md, the tables and every SVG of reports/report/ come back byte for byte."""
    from experiments import report_charts

    monkeypatch.chdir(ROOT)
    out = tmp_path / "report"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(report_charts.arguments(out)) == 0
    committed = ROOT / "reports" / "report"
    names = sorted(p.name for p in committed.iterdir())
    assert names == sorted(p.name for p in out.iterdir())
    for name in names:
        if name.endswith((".md", ".csv", ".json", ".svg")):
            assert_same((out / name).read_text(), (committed / name).read_text(), name)


def test_history_chart_draws_each_record_and_the_judge_change(tmp_path):
    """The image is each shown case's record (1 failed, 0 passed), the changed cases
    first and marked, a line where the judge's name changes."""
    from tests.analyses.history.test_changes import MOVED, _fill

    store = str(tmp_path / "h.db")
    with contextlib.redirect_stdout(io.StringIO()):
        _fill(tmp_path, store, ("judge-a", "judge-b"), before=6, after=6)
    result = gatecal.case_history(gatecal.stored_runs(store, gatecal.Selection(latest=None)))
    ax = charts.plot_history(result)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    short = dict(zip(result.cases, result.short, strict=True))
    assert sorted(labels[:3]) == sorted(f"* {short[m]}" for m in MOVED)
    image = np.asarray(ax.images[0].get_array())
    for row, label in enumerate(labels):
        case = next(c for c, s in short.items() if label.removeprefix("* ") == s)
        record = result.grid[result.cases.index(case)]
        np.testing.assert_array_equal(image[row], [ch == "x" for ch in record])
    assert [line.get_xdata()[0] for line in ax.lines] == [5.5]
