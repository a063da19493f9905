"""``gatecal report``: a self-contained report folder (charts, tables, index.md, index.html).

Written into a temporary folder beside the target and moved into place at the end, so a
failure leaves no half report. Imports matplotlib (through :mod:`gatecal.charts`).
"""

from __future__ import annotations

import base64
import html
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gatecal import charts
from gatecal._analyses.calibrate.judge import Calibration
from gatecal._analyses.plan.suite import cases_needed
from gatecal._analyses.recommend.gate import Recommendation
from gatecal._analyses.simulate import SimulationReport
from gatecal._common.tables import format_probability
from gatecal._engines.exact import exact_pass_counts, false_alarm_grid, operating_table
from gatecal._model.gates import strictest_within
from gatecal._model.regression import parse_regression
from gatecal._render.calibrate import render_calibration
from gatecal._render.recommend import render_recommendation
from gatecal._render.simulate import render_simulation

__all__ = ["ReportFiles", "write_report"]


@dataclass(frozen=True, slots=True)
class ReportFiles:
    """What :func:`write_report` wrote: the folder and its files, in order."""

    folder: Path
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Section:
    title: str
    text: str
    image: str | None = None


def _best_gate(table: Sequence[tuple[float, float]], budget: float) -> int:
    return strictest_within([fa for fa, _ in table], budget)


def _pct(p: float) -> str:
    return f"{100 * p:.3g}%"


def _pct_cell(p: float) -> str:
    """A percentage for a table cell: below 0.01% it says so rather than print 3.67e-06%."""
    return "< 0.01%" if 0 < p < 1e-4 else _pct(p)


def write_report(
    out: str | Path,
    simulation: SimulationReport,
    *,
    recommendation: Recommendation | None = None,
    false_alarm: float = 0.05,
    detection: float = 0.95,
    regressions: Sequence[str] = ("0.25", "0.10", "0.05"),
    calibration: Calibration | None = None,
) -> ReportFiles:
    """Write the report folder `out` (which must not exist, or be empty).

    With `calibration` (:func:`gatecal.calibrate_judge`), a section on the judge
    measured against human labels comes first.

    Charts come in PNG and SVG; tables in markdown, CSV and JSON; ``index.md`` reads
    on GitHub, ``index.html`` opens offline with every image embedded.
    """
    target = Path(out)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise FileExistsError(f"{target} exists and is not an empty folder")
    parent = target.parent if str(target.parent) else Path(".")
    from gatecal._common.output import held_signals

    with held_signals():  # the folder exists only once the cleanup below is armed
        temp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    try:
        files, sections = _build(
            temp, simulation, recommendation, false_alarm, detection, regressions
        )
        if calibration is not None:
            sections.insert(0, _calibration_section(temp, calibration, files))
        index_md = _markdown(simulation, sections, recommendation)
        (temp / "index.md").write_text(index_md, encoding="utf-8")
        index_html = _html(temp, simulation, sections, recommendation)
        (temp / "index.html").write_text(index_html, encoding="utf-8")
        files += ["index.md", "index.html"]
        temp.chmod(_folder_mode())  # mkdtemp's 0700 would hide the report from a web server
        if target.exists():
            target.rmdir()
        os.replace(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return ReportFiles(folder=target, files=tuple(files))


def _folder_mode() -> int:
    """A new folder's mode under the process's umask (0755 under the usual 022)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o777 & ~mask


def _save(ax: object, folder: Path, stem: str, files: list[str]) -> str:
    for suffix in (".png", ".svg"):
        charts.save_chart(ax, folder / f"{stem}{suffix}")  # type: ignore[arg-type]
        files.append(f"{stem}{suffix}")
    return f"{stem}.png"


def _build(
    folder: Path,
    sim: SimulationReport,
    rec: Recommendation | None,
    budget: float,
    target: float,
    regressions: Sequence[str],
) -> tuple[list[str], list[_Section]]:
    """The sections in the order a reader needs them: with measured runs, the gate they
    give first (its table, the runs, the flakiest cases, recommend's own output); then the
    model, on the same suite and regression, saying how the choice moves with the noise."""
    files: list[str] = []
    sections: list[_Section] = []
    if rec is not None:
        sections += _measured_sections(folder, rec, files)
    sections += _modelled_sections(folder, sim, rec, budget, target, files)
    plan_flips = [0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.12, 0.15]
    suite = sim.suite
    plans = {
        parse_regression(r).describe(): cases_needed(
            plan_flips,
            r,
            false_alarm=budget,
            detection=target,
            judge_checks=suite.judge_checks,
            code_checks=suite.code_checks,
        )
        for r in regressions
    }
    image = _save(charts.plot_cases_needed(plan_flips, plans), folder, "cases-needed", files)
    checks = f"{suite.judge_checks} judge check{'s' * (suite.judge_checks != 1)} and "
    checks += f"{suite.code_checks} code check{'s' * (suite.code_checks != 1)}"
    text = (
        f"The smallest suite whose gate keeps false alarms within {_pct(budget)} and catches "
        f"the regression {_pct(target)} of the time, for cases with {checks} (as yours), "
        "at each judge noise."
    )
    if sim.noise.case_spread > 0 or sim.noise.systematic > 0:
        text += (
            " Here every case errs at the same rate: this chart does not model how your "
            "cases differ (`gatecal plan --case-spread ... --systematic ...` does)."
        )
    sections.append(_Section("How many cases you need", text, image))
    for fmt, suffix in (("markdown", ".md"), ("csv", ".csv"), ("json", ".json")):
        (folder / f"simulate{suffix}").write_text(render_simulation(sim, fmt), encoding="utf-8")
        files.append(f"simulate{suffix}")
    sections.append(_Section("Both engines, side by side", render_simulation(sim, "markdown")))
    return files, sections


def _measured_sections(folder: Path, rec: Recommendation, files: list[str]) -> list[_Section]:
    sections = [_Section("Your gate, from your measured runs", _measured_advice(rec))]
    sections[0] = _Section(sections[0].title, sections[0].text + "\n\n" + _gate_table(rec))
    image = _save(charts.plot_run_distribution(rec), folder, "measured-runs", files)
    verdict = (
        "They vary more than independent verdicts would"
        if rec.measured.correlated
        else "Nothing suggests that whole runs vary together"
    )
    sections.append(
        _Section(
            f"Your {rec.runs} known-good runs",
            f"{verdict} (run-to-run correlation: icc {rec.measured.overdispersion.icc:.3f}, p = "
            f"{format_probability(rec.measured.overdispersion.p_value)}).",
            image,
        )
    )
    image = _save(charts.plot_flakiness(rec), folder, "flakiness", files)
    what = "Failure rate of each case across the known-good runs, with its interval."
    sections.append(_Section("Flakiest cases", what + "\n\n" + _flaky_table(rec), image))
    text = render_recommendation(rec, "markdown")
    (folder / "recommend.md").write_text(text, encoding="utf-8")
    (folder / "recommend.json").write_text(render_recommendation(rec, "json"), encoding="utf-8")
    files += ["recommend.md", "recommend.json"]
    sections.append(
        _Section(
            "gatecal recommend, in full",
            "What `gatecal recommend` prints for these runs (also in recommend.md and "
            "recommend.json):\n\n" + _fenced(render_recommendation(rec, "table")),
        )
    )
    return sections


def _fenced(text: str) -> str:
    """Text kept as it is, in a monospace block (its columns line up)."""
    from gatecal._common.names import code_fence

    # longer than any run of backticks in it: no line of it can close the block (its names
    # are one line each, so none starts a line either)
    fence = code_fence(text)
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def _gate_table(rec: Recommendation) -> str:
    """The gates around the chosen one as a markdown table: false alarm and detection."""
    n = rec.cases
    chosen = rec.recommended if rec.recommended is not None else rec.within_budget
    centre = n if chosen is None else chosen
    ks = [k for k in range(centre - 3, centre + 3) if 1 <= k <= n]
    lines = [
        "| gate | at most failing | false alarm (bound) | detection (bound) | |",
        "|---|---:|---:|---:|---|",
    ]
    for k in ks:
        fa, det = rec.table[k]
        mark = ""
        if k == rec.recommended:
            mark = "**recommended**"
        elif k == rec.within_budget:
            mark = "strictest within the false-alarm budget"
        cells = f"{n - k} | {_pct_cell(fa)} | {_pct_cell(det)}"
        lines.append(f"| at least {k} of {n} pass | {cells} | {mark} |")
    return "\n".join(lines)


def _flaky_table(rec: Recommendation, top: int = 8) -> str:
    """The flakiest cases as a markdown table."""
    from gatecal._common.tables import md_text

    worst = sorted(rec.per_case, key=lambda c: (-c.rate.estimate, c.case))[:top]
    lines = ["| case | failed | failure rate | interval |", "|---|---:|---:|---|"]
    for c in worst:
        r = c.rate
        lines.append(
            f"| {md_text(c.case)} | {r.failures:g} of {r.trials:g} | {_pct(r.estimate)} | "
            f"{_pct(r.low)} to {_pct(r.high)} |"
        )
    return "\n".join(lines)


def _modelled_sections(
    folder: Path,
    sim: SimulationReport,
    rec: Recommendation | None,
    budget: float,
    target: float,
    files: list[str],
) -> list[_Section]:
    sections: list[_Section] = []
    suite = sim.suite
    n = suite.n_cases
    failing = suite.failing("regressed")
    advice = []
    if rec is not None:
        advice.append(
            f"The measured gate above is the one to use. The model below takes the same "
            f"{n} cases and the same regression ({failing} cases failing) and asks what the "
            "gate would be if the judge's noise were different: read it to see how far the "
            "choice moves, not as a second answer."
        )
    for p in sim.flips:
        noise = sim.noise_at(p)
        healthy = exact_pass_counts(suite, "healthy", noise)
        regressed = exact_pass_counts(suite, "regressed", noise)
        table = operating_table(healthy, regressed)
        k = _best_gate(table, budget)
        fa, det = table[k]
        at = f"At {_pct(p)} judge noise" if rec is None else f"If the judge flipped {_pct(p)}"
        at += " of its verdicts" if rec is not None else ""
        text = (
            f"{at}, the strictest gate within a {_pct(budget)} false-alarm "
            f"budget would be **at least {k} of {n} cases pass** (any pass-rate threshold in "
            f"({(k - 1) / n:.3f}, {k / n:.3f}]): it fails a healthy build {_pct(fa)} of the "
            f"time and catches the regressed build {_pct(det)} of the time."
        )
        if det < target:
            text += (
                f" That misses the {_pct(target)} detection target: no gate on this suite "
                "meets both at this noise; see how many cases you need, below."
            )
        advice.append(text)
    title = "Which gate to pick" if rec is None else "What if the judge's noise changes"
    sections.append(_Section(title, "\n\n".join(advice)))
    for p in sim.flips:
        stem = f"gate-chart-{100 * p:g}pct".replace(".", "_")
        image = _save(charts.plot_gate_chart(sim, p), folder, stem, files)
        sections.append(
            _Section(
                f"Modelled: each gate at {_pct(p)} judge noise",
                "Bars: exact probability that the gate fails the build. Dots: the share of the "
                f"{sim.n_runs} simulated runs in which it did; the thin line is where that share "
                "lands 99% of the time. A gate is good when the blue bar is low and the orange "
                "high.",
                image,
            )
        )
    p = sim.flips[0]
    noise = sim.noise_at(p)
    healthy = exact_pass_counts(suite, "healthy", noise)
    regressed = exact_pass_counts(suite, "regressed", noise)
    table = operating_table(healthy, regressed)
    k = _best_gate(table, budget)
    chart = charts.plot_operating_curves(table, recommended=k, false_alarm_target=budget)
    image = _save(chart, folder, "operating-curves", files)
    sections.append(
        _Section(
            f"Modelled: operating curves at {_pct(p)} noise",
            f"Pass rates move in steps of 1/{n}, so every threshold within one step is the same "
            "gate. The shaded step is the strictest gate under the false-alarm budget.",
            image,
        )
    )
    image = _save(
        charts.plot_pass_counts(healthy, regressed, k_min=k), folder, "pass-counts", files
    )
    sections.append(
        _Section(
            "Modelled: where the two builds overlap",
            "The exact distribution of passing cases in one run. Healthy runs left of the dashed "
            "line are false alarms; regressed runs right of it are missed regressions.",
            image,
        )
    )
    flips = [round(float(x), 4) for x in np.linspace(0.005, 0.15, 30)]
    thresholds = [round(float(x), 4) for x in np.linspace(0.5, 1.0, 51)]
    grid = false_alarm_grid(suite, flips, thresholds, noise=sim.noise)
    chart = charts.plot_false_alarm_heatmap(grid, flips, thresholds, false_alarm_target=budget)
    image = _save(chart, folder, "false-alarm-heatmap", files)
    sections.append(
        _Section(
            "Modelled: false alarms by noise and threshold",
            "Read across at your judge's noise: the white line is the budget; thresholds above "
            "it raise more false alarms than it allows.",
            image,
        )
    )
    return sections


def _measured_advice(rec: Recommendation) -> str:
    """What the measured runs say: the report's answer, stated once; the model's paragraphs
    that follow say what other noise levels would mean."""
    n = rec.cases
    lead = f"**From your {rec.runs} known-good runs:** "
    if rec.recommended is not None:
        k = rec.recommended
        fa, det = rec.table[k]
        return lead + (
            f"use **at least {k} of {n} cases pass**: it fails a healthy build at most "
            f"{_pct(fa)} of the time and catches {rec.regression} {_pct(det)} of the time."
        )
    text = lead + "no gate meets both targets at the noise these runs measured"
    if rec.within_budget is not None:
        w = rec.within_budget
        fa, det = rec.table[w]
        text += (
            f"; the strictest gate within the false-alarm budget is **at least {w} of {n} "
            f"cases pass** (false alarm {_pct(fa)}, detection {_pct(det)})"
        )
    tail = ". gatecal recommend's output, below, says what would work."
    return text + tail


def _calibration_section(folder: Path, cal: Calibration, files: list[str]) -> _Section:
    image = _save(charts.plot_calibration(cal), folder, "judge-calibration", files)
    for fmt, suffix in (("markdown", ".md"), ("json", ".json")):
        (folder / f"calibrate{suffix}").write_text(render_calibration(cal, fmt), encoding="utf-8")
        files.append(f"calibrate{suffix}")
    c = cal.pooled
    text = (
        f"On {c.items} labelled items the judge says a false **no** to "
        f"{_pct(c.fnr.estimate)} of truly passing answers ({_pct(c.fnr.low)} to "
        f"{_pct(c.fnr.high)}) and a false **yes** to {_pct(c.fpr.estimate)} of truly failing "
        f"ones ({_pct(c.fpr.low)} to {_pct(c.fpr.high)}); Cohen's kappa {c.kappa.estimate:.2f}."
    )
    if cal.corrected is not None:
        text += f" Corrected for these errors: {cal.corrected.verdict()}."
    return _Section(
        "The judge against human labels", text + "\n\n" + render_calibration(cal, "markdown"), image
    )


def _markdown(
    sim: SimulationReport, sections: Sequence[_Section], rec: Recommendation | None = None
) -> str:
    lines = ["# gatecal report", "", _setting(sim, rec), ""]
    for s in sections:
        lines += [f"## {s.title}", "", s.text, ""]
        if s.image:
            lines += [f"![{s.title}]({s.image})", ""]
    return "\n".join(lines)


def _setting(sim: SimulationReport, rec: Recommendation | None = None) -> str:
    s = sim.suite
    flips = ", ".join(_pct(p) for p in sim.flips)
    shape = f"{s.n_cases} cases, each with {s.judge_checks} judge and {s.code_checks} code checks"
    model = f"judge noise {flips}; {sim.n_runs} simulated runs per build, seed {sim.seed}"
    if rec is None:
        return f"{shape}; the regressed build has {s.failing('regressed')} failing cases; {model}."
    return (
        f"Your suite: {shape}, measured in {rec.runs} known-good runs; the regression to "
        f"catch: {rec.regression}. First what your runs measured, then the model of the same "
        f"suite and regression ({model})."
    )


def _inline(text: str) -> str:
    """A section's markdown as HTML: headings, tables, lists, emphasis, a line break where
    the text has one. markdown-it-py (CommonMark; rich's own dependency) with raw HTML off,
    so a case name like ``<script>`` is text, as it already is escaped in the markdown."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table")
    return str(md.render(text)).strip()


def _html(
    folder: Path,
    sim: SimulationReport,
    sections: Sequence[_Section],
    rec: Recommendation | None = None,
) -> str:
    body = ["<h1>gatecal report</h1>", f"<p>{html.escape(_setting(sim, rec))}</p>"]
    for s in sections:
        body.append(f"<h2>{html.escape(s.title)}</h2>")
        body.append(_inline(s.text))
        if s.image:
            data = base64.b64encode((folder / s.image).read_bytes()).decode("ascii")
            body.append(f'<img alt="{html.escape(s.title)}" src="data:image/png;base64,{data}">')
    script = (
        "window.addEventListener('load', () => { const imgs = [...document.images];"
        " document.body.dataset.imagesTotal = imgs.length;"
        " document.body.dataset.imagesLoaded ="
        " imgs.filter(i => i.complete && i.naturalWidth > 0).length; });"
    )
    style = (
        "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;"
        "line-height:1.45;color:#222}img{max-width:100%;height:auto;border:1px solid #ddd}"
        "pre{background:#f6f6f6;padding:.75rem;overflow-x:auto;font-size:.8rem}"
        "table{border-collapse:collapse;margin:.5rem 0;font-size:.9rem}"
        "th,td{padding:.2rem .7rem;border-bottom:1px solid #e4e4e4;text-align:left}"
        "th{border-bottom:2px solid #bbb}td:first-child{white-space:nowrap}"
    )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>gatecal report</title><style>{style}</style></head>\n<body>\n"
        + "\n".join(body)
        + f"\n<script>{script}</script>\n</body></html>\n"
    )
