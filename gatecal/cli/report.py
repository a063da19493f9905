"""``gatecal report``: a folder of charts and tables a reviewer can read, index.html included."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import gatecal
from gatecal._common.defaults import DEFAULT_GATES, DEFAULT_SEED
from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import (
    NoiseSweepOpt,
    Reading,
    ReadingOpt,
    SuiteOptionsOpt,
    read_runs,
    report_calibration,
)
from gatecal.cli._options import (
    DetectionOpt,
    FalseAlarmOpt,
    GatesOpt,
    RegressedOpt,
    RegressionOpt,
    file_option,
    observed_option,
    runs,
    seed,
)
from gatecal.cli._values import Passes

if TYPE_CHECKING:
    from gatecal._model.regression import Regression


@grouped
def report(
    *,
    out: Annotated[
        Path, typer.Option("--out", metavar="DIR", help="The report folder (new or empty).")
    ],
    shape: SuiteOptionsOpt,
    noise: NoiseSweepOpt,
    gates: GatesOpt = DEFAULT_GATES,  # type: ignore[assignment]  # parsed by GateList
    n_runs: Annotated[int, runs("Simulated runs per build and flip rate.")] = 200,
    root_seed: Annotated[int, seed()] = DEFAULT_SEED,
    runs_file: Annotated[
        list[str] | None,
        typer.Option(
            "--runs-file", metavar="RUNS", help="Measured known-good runs, as for recommend."
        ),
    ] = None,
    regressed: RegressedOpt = None,
    regression: RegressionOpt = None,
    false_alarm: FalseAlarmOpt = 0.05,
    detection: DetectionOpt = 0.95,
    reading: ReadingOpt,
    labels: Annotated[
        Path | None,
        file_option("--labels", "Human labels of the judge, as for calibrate."),
    ] = None,
    observed: Annotated[
        Passes | None,
        observed_option("With --labels: a judged pass rate to correct."),
    ] = None,
) -> None:
    """Write a report folder a reviewer can read: charts, tables, index.md and index.html.

    The gate chart for each flip rate, the operating curves, the pass-count distributions,
    a heat map of false alarms over noise and threshold, how many cases are needed and,
    with --runs-file, the measured runs and the recommendation. index.html embeds every
    image and opens offline. The folder is written elsewhere and moved into place.

    Example: gatecal report --cases 12 --flip 0.03,0.08 --out gate-report
    """
    _check_folder(out)
    # every option is checked before any work, also those only --runs-file uses
    if regressed and not runs_file:
        raise CliError(f"--regressed needs --runs-file (got {regressed[0]!r})")
    if regressed and regression is not None:
        raise CliError(f"--regression can't be combined with --regressed (got {regression.text!r})")
    if observed is not None and labels is None:
        raise CliError(f"--observed needs --labels (got '{observed[0]}/{observed[1]}')")
    with library_errors():
        # measured first: the model then describes the user's own suite and regression
        recommendation = _recommendation(
            runs_file, regressed, regression, false_alarm, detection, reading
        )
        if recommendation is not None and shape.suite_file is None:
            if shape.cases is None:
                shape = dataclasses.replace(shape, cases=recommendation.cases)
            elif shape.cases != recommendation.cases:
                raise CliError(
                    f"--cases must be the {recommendation.cases} cases the --runs-file runs "
                    f"hold, or left out (got {shape.cases})"
                )
        suite, judge = shape.model(noise.judge)
        failing, from_file = shape.failing, shape.suite_file is not None
        if regression is not None:
            suite = _with_regression(suite, regression, failing, from_file)
        elif recommendation is not None and not regressed and failing is None and not from_file:
            # recommend's default regression (a quarter of the cases, rounded half up)
            suite = _with_regression(suite, gatecal.as_regression("0.25"), None, False)
        simulation = gatecal.simulate_gates(
            suite,
            **noise.arguments(judge),
            gates=gates,
            n_runs=n_runs,
            rng=root_seed,
        )
    calibration = report_calibration(labels, observed)
    from gatecal.report import write_report

    try:
        written = write_report(
            out,
            simulation,
            recommendation=recommendation,
            false_alarm=false_alarm,
            detection=detection,
            calibration=calibration,
            **({} if regression is None else {"regressions": (regression.text,)}),
        )
    except OSError as exc:
        raise CliError(f"--out could not be written (got {str(out)!r}: {exc})") from None
    sys.stdout.write(f"wrote {len(written.files)} files to {written.folder}/ (open index.html)\n")


def _with_regression(
    suite: gatecal.Suite, regression: Regression, failing: int | None, from_file: bool
) -> gatecal.Suite:
    """The modelled suite whose regressed build has --regression's failing cases."""
    n = suite.n_cases
    want = regression.failing(n)
    if not 1 <= want <= n:
        raise CliError(
            f"--regression must make between 1 and {n} cases fail (got {regression.text!r})"
        )
    have = suite.failing("regressed")
    if want == have:
        return suite
    if from_file:
        raise CliError(
            f"--regression makes {want} of {n} cases fail but the --suite file's regressed "
            f"build has {have}: leave one out (got {regression.text!r})"
        )
    if failing is not None:
        raise CliError(
            f"--regression makes {want} of {n} cases fail, --failing says {failing}: "
            f"leave one out (got {regression.text!r})"
        )
    return gatecal.Suite.uniform(
        cases=n, judge_checks=suite.judge_checks, code_checks=suite.code_checks, failing=want
    )


def _check_folder(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CliError(f"--out must be a new or empty folder (got {str(out)!r})")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise CliError(f"--out must be in an existing, writable folder (got {str(out)!r})")


def _recommendation(
    runs_file: list[str] | None,
    regressed: list[str] | None,
    regression: Regression | None,
    false_alarm: float,
    detection: float,
    reading: Reading,
) -> gatecal.Recommendation | None:
    if not runs_file:
        return None
    data = read_runs("--runs-file", runs_file, regressed or (), reading)
    return gatecal.recommend_gate(
        data, false_alarm=false_alarm, detection=detection, regression=regression
    )
