"""Charts that settle the choice of a gate. matplotlib is imported here only.

Every function takes gatecal's result objects and an optional ``ax`` and returns the
``Axes`` it drew on; :func:`save_chart` writes PNG or SVG (SVG byte-for-byte
reproducible). No pyplot: figures are plain ``matplotlib.figure.Figure`` objects, so
nothing global changes and any backend works.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib as mpl
import numpy as np
import numpy.typing as npt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from gatecal._analyses.calibrate.judge import Calibration
from gatecal._analyses.compare.result import Comparison
from gatecal._analyses.history.record import History
from gatecal._analyses.plan._search import SuitePlan
from gatecal._analyses.recommend.gate import Recommendation
from gatecal._analyses.simulate import SimulationReport
from gatecal._engines.exact import PassCountDistribution, beta_binomial_pmf

__all__ = [
    "COLORS",
    "chart_bytes",
    "plot_calibration",
    "plot_cases_needed",
    "plot_compare",
    "plot_false_alarm_heatmap",
    "plot_flakiness",
    "plot_gate_chart",
    "plot_history",
    "plot_operating_curves",
    "plot_pass_counts",
    "plot_run_distribution",
    "save_chart",
]

#: Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
COLORS = {
    "healthy": "#0072B2",  # blue
    "regressed": "#D55E00",  # vermillion
    "simulated": "#000000",
    "accent": "#009E73",  # bluish green
    "budget": "#777777",
    "fit": "#E69F00",  # orange
    "fit2": "#CC79A7",  # reddish purple
}
_STYLE: Any = {  # rc settings (typed Any: matplotlib's stubs list every key)
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "legend.frameon": False,
    "svg.hashsalt": "gatecal",
    "svg.fonttype": "path",
}


def _axes(ax: Axes | None, size: tuple[float, float] = (7.5, 4.4)) -> Axes:
    if ax is not None:
        return ax
    with mpl.rc_context(_STYLE):
        figure = Figure(figsize=size, layout="constrained")
        return figure.add_subplot()


def _pct(p: float) -> str:
    return f"{100 * p:.3g}%"


def plot_gate_chart(
    report: SimulationReport, flip: float | None = None, *, ax: Axes | None = None
) -> Axes:
    """The article's chart: per gate, how often it fails the healthy and the regressed build.

    Bars are exact probabilities; black dots the simulated share of failing runs; the
    thin range around each bar top is where a simulated count lands 99% of the time.
    """
    p = report.flips[0] if flip is None else flip
    rows = [r for r in report.rows if r.flip == p]
    if not rows:
        raise ValueError(
            f"`flip` must be one of the report's flip rates {report.flips} (got {p!r})"
        )
    with mpl.rc_context(_STYLE):
        ax = _axes(ax)
        gates = [r for r in rows if r.build == "healthy"]
        x = np.arange(len(gates))
        width = 0.38
        for offset, build in ((-width / 2, "healthy"), (width / 2, "regressed")):
            build_rows = [
                next(r for r in rows if r.build == build and r.gate == g.gate) for g in gates
            ]
            heights = [r.exact_failure_probability for r in build_rows]
            bars = ax.bar(
                x + offset,
                heights,
                width,
                color=COLORS[build],
                alpha=0.85,
                label=f"{build} build fails it (exact)",
            )
            ax.bar_label(bars, labels=[_pct(h) for h in heights], padding=2, fontsize=8)
            low = [r.interval.low / r.runs for r in build_rows]
            high = [r.interval.high / r.runs for r in build_rows]
            ax.vlines(x + offset, low, high, color=COLORS["simulated"], linewidth=1, alpha=0.6)
            ax.plot(
                x + offset,
                [r.simulated_failure_rate for r in build_rows],
                "o",
                color=COLORS["simulated"],
                markersize=4,
                label="simulated share of runs" if build == "healthy" else None,
            )
        level = f"{100 * report.confidence_level:g}%"
        ax.plot(
            [],
            [],
            color=COLORS["simulated"],
            linewidth=1,
            alpha=0.6,
            label=f"where {level} of simulated shares land",
        )
        ax.set_xticks(x, labels=["\n".join(textwrap.wrap(g.rule, 16)) for g in gates])
        ax.set_ylim(0, 1.1)
        ax.set_ylabel("share of CI runs in which the gate fails")
        ax.set_title(
            f"How often each gate fails the build when {_pct(p)} of judge verdicts flip\n"
            f"({report.suite.n_cases} cases, {report.n_runs} simulated runs per build)"
        )
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, ncols=2)
    return ax


def plot_operating_curves(
    table: Sequence[tuple[float, float]],
    *,
    recommended: int | None = None,
    false_alarm_target: float | None = 0.05,
    detection_target: float | None = None,
    ax: Axes | None = None,
) -> Axes:
    """False alarm and detection against the pass-rate threshold, as the steps they are.

    ``table[k] = (false_alarm, detection)`` of the gate "at least k of n pass" (see
    :func:`gatecal.operating_table` or :class:`gatecal.Recommendation`). Every
    threshold in ``((k-1)/n, k/n]`` is the same gate, so each value is a flat step.
    """
    n = len(table) - 1
    with mpl.rc_context(_STYLE):
        ax = _axes(ax)
        edges = np.arange(n + 1) / n
        fa = [table[k][0] for k in range(1, n + 1)]
        det = [table[k][1] for k in range(1, n + 1)]
        curves: tuple[tuple[list[float], str, str, dict[str, Any]], ...] = (
            (fa, "healthy", "false alarm: gate fails the healthy build", {}),
            (det, "regressed", "detection: gate fails the regressed build", {"linestyle": "--"}),
        )
        for values, color, label, style in curves:
            ax.stairs(
                values, edges, baseline=None, color=COLORS[color], linewidth=2, label=label, **style
            )
        targets = (
            (false_alarm_target, "budget", "false-alarm budget"),
            (detection_target, "accent", "detection target"),
        )
        for target, color, words in targets:
            if target is not None:
                label = f"{words} {_pct(target)}"
                ax.axhline(target, color=COLORS[color], linestyle=":", linewidth=1.2, label=label)
        if recommended is not None:
            ax.axvspan(
                (recommended - 1) / n,
                recommended / n,
                color=COLORS["accent"],
                alpha=0.2,
                label=f"recommended: at least {recommended} of {n} pass",
            )
        ax.set_xlim(0, 1)
        ax.set_ylim(-0.02, 1.05)
        ax.set_xlabel("pass-rate threshold t (the gate passes a build if its pass rate >= t)")
        ax.set_ylabel("probability the gate fails the build")
        ax.set_title(f"Operating curves: each step is one gate ({n} cases, steps of 1/{n})")
        ax.legend(loc="center left", fontsize=8)
    return ax


def plot_pass_counts(
    healthy: PassCountDistribution,
    regressed: PassCountDistribution,
    *,
    k_min: int | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Exact distributions of the number of passing cases, both builds, with the gate's cut-off."""
    n = healthy.n_cases
    with mpl.rc_context(_STYLE):
        ax = _axes(ax)
        k = np.arange(n + 1)
        ax.bar(k - 0.2, healthy.pmf, 0.4, color=COLORS["healthy"], label="healthy build")
        ax.bar(k + 0.2, regressed.pmf, 0.4, color=COLORS["regressed"], label="regressed build")
        if k_min is not None:
            ax.axvline(
                k_min - 0.5,
                color=COLORS["simulated"],
                linestyle="--",
                linewidth=1.2,
                label=f"gate: at least {k_min} pass (fails to the left)",
            )
        ax.set_xlim(-0.7, n + 0.7)
        ax.set_xlabel("cases that pass in one CI run")
        ax.set_ylabel("probability (exact)")
        ax.set_title("How many cases pass in one CI run: the overlap causes the false alarms")
        ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_false_alarm_heatmap(
    grid: npt.ArrayLike,
    flips: Sequence[float],
    thresholds: Sequence[float],
    *,
    false_alarm_target: float = 0.05,
    ax: Axes | None = None,
) -> Axes:
    """False-alarm rate over flip rate x threshold (:func:`gatecal.false_alarm_grid`)."""
    values = np.asarray(grid, dtype=np.float64)
    with mpl.rc_context(_STYLE):
        ax = _axes(ax)
        x, y = np.asarray(thresholds), 100 * np.asarray(flips)
        mesh = ax.pcolormesh(x, y, values, cmap="cividis", vmin=0, vmax=1, shading="nearest")
        ax.figure.colorbar(mesh, ax=ax, label="false-alarm rate (healthy build fails)")
        level = false_alarm_target
        contour = ax.contour(x, y, values, levels=[level], colors="white", linewidths=1.5)
        ax.clabel(contour, fmt={level: f"{_pct(level)} budget"}, fontsize=8)
        ax.set_xlabel("pass-rate threshold t")
        ax.set_ylabel("judge flip rate (%)")
        ax.set_title("False alarms by judge noise and threshold (over budget above the line)")
        ax.grid(False)
    return ax


def plot_run_distribution(rec: Recommendation, *, ax: Axes | None = None) -> Axes:
    """Observed passing-case counts per known-good run, with the fitted binomial and
    beta-binomial (what run-to-run correlation looks like)."""
    n, runs = rec.cases, rec.runs
    passes = n - np.asarray(rec.failures_per_run)
    k = np.arange(n + 1)
    with mpl.rc_context(_STYLE):
        ax = _axes(ax)
        observed = np.bincount(passes, minlength=n + 1)
        ax.bar(k, observed, 0.7, color=COLORS["healthy"], alpha=0.7, label=f"observed, {runs} runs")
        # passes = n - failures: each pmf of failures reversed
        rate = rec.measured.noise.estimate
        binomial = runs * beta_binomial_pmf(n, rate, 0.0)[::-1]
        fits = [(binomial, "o-", "fit", f"binomial fit (case failure {_pct(rate)})")]
        od = rec.measured.overdispersion
        if od.icc > 1e-3 and 0 < od.mean < 1:
            bb = runs * beta_binomial_pmf(n, od.mean, od.icc)[::-1]
            fits.append((bb, "s--", "fit2", f"beta-binomial fit (icc {od.icc:.2f})"))
        for values, style, color, label in fits:
            ax.plot(k, values, style, color=COLORS[color], markersize=3, label=label)
        ax.set_xlabel("cases that passed in a run")
        ax.set_ylabel("runs")
        ax.set_title("Passing cases per known-good run, and what independent noise predicts")
        ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_flakiness(rec: Recommendation, *, top: int = 20, ax: Axes | None = None) -> Axes:
    """Per-case failure rate across known-good runs, with its interval, flakiest first."""
    cases = rec.per_case[:top]
    with mpl.rc_context(_STYLE):
        ax = _axes(ax, size=(7.5, max(2.5, 0.28 * len(cases) + 1.2)))
        y = np.arange(len(cases))[::-1]
        rates = np.array([c.rate.estimate for c in cases])
        low = np.maximum(rates - np.array([c.rate.low for c in cases]), 0.0)  # rounding
        high = np.maximum(np.array([c.rate.high for c in cases]) - rates, 0.0)
        ax.barh(y, rates, color=COLORS["healthy"], alpha=0.8, label="failure rate")
        ax.errorbar(
            rates,
            y,
            xerr=[low, high],
            fmt="none",
            ecolor=COLORS["simulated"],
            capsize=2,
            linewidth=1,
            label=f"{100 * rec.confidence_level:g}% {rec.method} interval",
        )
        ax.set_yticks(y, labels=[c.case for c in cases])
        ax.set_xlim(0, min(1.0, max(0.05, float((rates + high).max()) * 1.1)))
        ax.set_xlabel(f"share of the {rec.runs} known-good runs in which the case failed")
        ax.set_title("How often each case failed a known-good run (flakiest first)")
        ax.legend(loc="lower right", fontsize=8)
    return ax


def plot_compare(result: Comparison, *, top: int = 30, ax: Axes | None = None) -> Axes:
    """Each compared case's pass share in the baseline and the candidate (most changed
    first), the cases the per-case control flags marked."""
    cases, runs = result.changes.cases[:top], result.compared
    with mpl.rc_context(_STYLE):
        ax = _axes(ax, size=(7.5, max(2.5, 0.28 * len(cases) + 1.4)))
        y = np.arange(len(cases))[::-1]
        base = [c.baseline_share for c in cases]
        cand = [c.candidate_share for c in cases]
        ax.hlines(y, np.minimum(base, cand), np.maximum(base, cand), color=COLORS["budget"],
                  linewidth=1)  # fmt: skip
        ax.scatter(base, y, color=COLORS["healthy"], label=f"baseline ({runs.baseline_runs} "
                   "runs)", zorder=3)  # fmt: skip
        ax.scatter(cand, y, color=COLORS["regressed"], marker="D",
                   label=f"candidate ({runs.candidate_runs} runs)", zorder=3)  # fmt: skip
        labels = [("* " if c.flagged else "") + c.case for c in cases]
        ax.set_yticks(y, labels=labels)
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel("share of the build's runs in which the case passed")
        control = {"holm": "Holm", "bh": "Benjamini-Hochberg", "tarone": "Tarone"}.get(
            result.changes.multiplicity, result.changes.multiplicity
        )
        ax.set_title(f"Pass share per case (* changed: {control} at {result.paired.alpha:g}); "
                     f"{result.decision}, p = {result.paired.p_value:.3g}")  # fmt: skip
        ax.legend(loc="lower left", fontsize=8)
    return ax


def plot_history(result: History, *, top: int = 40, ax: Axes | None = None) -> Axes:
    """Each case's record over time: one column per run (oldest left), a failure dark, no
    verdict light; a line where the judge's name changes; the changed cases first, marked
    with *, then the cases that ever failed."""
    changed = set(result.changed)
    order = sorted(
        range(len(result.cases)),
        key=lambda j: (result.cases[j] not in changed, "x" not in result.grid[j], j),
    )[:top]
    value = {".": 0.0, "x": 1.0, "-": 0.35}
    grid = np.array([[value[ch] for ch in result.grid[j]] for j in order])
    runs = result.runs
    with mpl.rc_context({**_STYLE, "axes.grid": False}):
        ax = _axes(ax, size=(7.5, max(2.5, 0.24 * len(order) + 1.6)))
        ax.imshow(grid, aspect="auto", cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
        ax.grid(False)
        for i in range(1, len(runs)):
            if runs[i].judge != runs[i - 1].judge:
                ax.axvline(i - 0.5, color=COLORS["regressed"], linewidth=1.5)
                ax.annotate(f" {runs[i].judge}", (i - 0.5, len(order) - 0.5), fontsize=8,
                            color=COLORS["regressed"], va="bottom")  # fmt: skip
        labels = [("* " if result.cases[j] in changed else "") + result.short[j] for j in order]
        ax.set_yticks(range(len(order)), labels=labels, fontsize=8)
        ax.set_xlabel(
            f"runs, oldest first ({runs[0].recorded_at[:10]} to {runs[-1].recorded_at[:10]})"
        )
        verdict = "still describe" if result.describes_today else "no longer describe"
        ax.set_title(
            f"Each case's record (dark: failed; * changed); the latest runs {verdict} "
            f"judge {runs[-1].judge}",
            fontsize=9,
        )
    return ax


def plot_cases_needed(
    flips: Sequence[float],
    plans: Mapping[str, Sequence[SuitePlan | None]],
    *,
    ax: Axes | None = None,
) -> Axes:
    """Smallest suite meeting the targets against flip rate, one line per regression size
    (:func:`gatecal.cases_needed`); missing points had no plan within the search."""
    with mpl.rc_context(_STYLE):
        ax = _axes(ax)
        x = 100 * np.asarray(flips)
        colors = [COLORS["healthy"], COLORS["regressed"], COLORS["accent"], COLORS["fit"]]
        for (label, row), color in zip(plans.items(), colors * 3, strict=False):
            y = np.array([np.nan if p is None else p.cases for p in row], dtype=float)
            ax.plot(x, y, "o-", color=color, markersize=4, label=label)
        ax.set_yscale("log")
        ax.set_xlabel("judge flip rate (%)")
        ax.set_ylabel("cases needed (log scale)")
        ax.set_title("How many golden cases you need, by judge noise and regression size")
        ax.legend(title="regression", loc="upper left", fontsize=8)
    return ax


def plot_calibration(cal: Calibration, *, axes: Sequence[Axes] | None = None) -> Axes:
    """The judge against the labels: its confusion matrix (share of each true class) and,
    when an observed rate was given, the observed and corrected pass rates with intervals.

    Draws on two axes (a new figure unless `axes` is given) and returns the first.
    """
    c = next((x for x in cal.checks if x.check == cal.corrected_check), cal.pooled)
    m = c.matrix
    counts = np.array(
        [
            [m.pass_pass, m.pass_fail + m.pass_unparseable],
            [m.fail_pass, m.fail_fail + m.fail_unparseable],
        ],
        dtype=float,
    )
    shares = counts / counts.sum(axis=1, keepdims=True)
    left: Axes
    right: Axes
    with mpl.rc_context(_STYLE):
        if axes is None:
            figure = Figure(figsize=(9.0, 3.8), layout="constrained")
            left, right = figure.subplots(1, 2, width_ratios=[1, 1.3])
        else:
            left, right = axes
        left.imshow(shares, cmap="Blues", vmin=0, vmax=1)
        for i in range(2):
            for j in range(2):
                color = "white" if shares[i, j] > 0.6 else "black"
                left.text(
                    j,
                    i,
                    f"{100 * shares[i, j]:.1f}%\n({counts[i, j]:g})",
                    ha="center",
                    va="center",
                    color=color,
                    fontsize=9,
                )
        left.set_xticks([0, 1], labels=["judge: pass", "judge: fail\n(or unparseable)"])
        left.set_yticks([0, 1], labels=["truly pass", "truly fail"])
        left.set_title(f"Judge vs human labels ({c.items} items, {c.judgements} judgements)")
        left.grid(False)
        level = f"{100 * cal.confidence_level:g}%"
        bars: list[tuple[str, float, float, float, str]] = [
            (
                "sensitivity",
                c.sensitivity.estimate,
                c.sensitivity.low,
                c.sensitivity.high,
                COLORS["accent"],
            ),
            (
                "specificity",
                c.specificity.estimate,
                c.specificity.low,
                c.specificity.high,
                COLORS["accent"],
            ),
        ]
        r = cal.corrected
        if r is not None and cal.observed is not None:
            from gatecal._common.intervals import clopper_pearson

            k, n = cal.observed
            low, high = clopper_pearson(k, n, cal.confidence_level)
            bars.append(("observed pass rate", k / n, low, high, COLORS["fit"]))
            if r.estimate is not None:
                bars.append(("corrected pass rate", r.estimate, r.low, r.high, COLORS["healthy"]))
        y = np.arange(len(bars))[::-1]
        for yi, (_label, est, lo, hi, color) in zip(y, bars, strict=True):
            right.errorbar(
                [est],
                [yi],
                xerr=[[max(est - lo, 0.0)], [max(hi - est, 0.0)]],
                fmt="o",
                color=color,
                capsize=4,
                linewidth=1.5,
            )
            right.annotate(
                f"{est:.3f} [{lo:.3f}, {hi:.3f}]",
                (est, yi),
                xytext=(0, 7),
                textcoords="offset points",
                ha="center",
                fontsize=8,
            )
        right.set_yticks(y, labels=[b[0] for b in bars])
        right.set_ylim(-0.7, len(bars) - 0.3)
        right.set_xlim(0, 1.02)
        right.set_xlabel(f"estimate with {level} interval")
        title = "Judge rates, and the pass rate corrected for them"
        if r is not None and r.too_weak:
            title = "Judge too weak to correct the pass rate"
        right.set_title(title)
    return left


def chart_bytes(ax: Axes, suffix: str, **kwargs: Any) -> bytes:
    """The figure of `ax` as PNG or SVG bytes (`suffix` ``.png`` or ``.svg``)."""
    import io

    suffix = suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"`suffix` must be .png or .svg (got {suffix!r})")
    figure = ax.get_figure()
    assert isinstance(figure, Figure)
    metadata = {"Date": None, "Creator": "gatecal"} if suffix == ".svg" else {"Software": "gatecal"}
    buffer = io.BytesIO()
    with mpl.rc_context(_STYLE):
        figure.savefig(
            buffer, format=suffix[1:], dpi=kwargs.pop("dpi", 150), metadata=metadata, **kwargs
        )
    return buffer.getvalue()


def save_chart(ax: Axes, path: str | Path, **kwargs: Any) -> Path:
    """Save the figure of `ax` as PNG or SVG (by suffix); SVG is byte-for-byte reproducible."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"`path` must end in .png or .svg (got {str(path)!r})")
    target.write_bytes(chart_bytes(ax, suffix, **kwargs))
    return target
