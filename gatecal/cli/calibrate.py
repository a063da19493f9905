"""``gatecal calibrate``: the judge against human labels, and a judged pass rate corrected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

import gatecal
from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._inputs import load_spec, read_labels, read_runs
from gatecal.cli._options import (
    ConfidenceOpt,
    FormatOpt,
    OutOpt,
    arguments,
    file_option,
    observed_option,
    probability,
)
from gatecal.cli._outputs import Outputs, busy
from gatecal.cli._values import Passes

#: calibrate's own spelling of the library's parameters, for its errors
_NAMES = {"width": "--width", "check": "--check", "observed": "--observed", "runs": "--runs"}


def calibrate(
    labels: Annotated[
        Path,
        arguments(
            "LABELS",
            "A label table (.csv or .jsonl): item, human, judge, and optionally check "
            "and repeat. Verdicts: pass/fail, yes/no, true/false or 1/0; the judge may also "
            "be unparseable (never counted as a pass).",
        ),
    ],
    observed: Annotated[
        Passes | None,
        observed_option("A judged pass rate to correct: K passes of N items."),
    ] = None,
    runs: Annotated[
        list[str] | None,
        typer.Option(
            "--runs",
            metavar="RUNS",
            help="Or take the judged pass rate from measured runs (as for recommend; "
            "repeatable): each case's share of passing judge verdicts, pooled.",
        ),
    ] = None,
    check: Annotated[
        str | None,
        typer.Option(
            "--check", metavar="NAME", help="Correct with this check's rates (default: pooled)."
        ),
    ] = None,
    confidence: ConfidenceOpt = 0.95,
    width: Annotated[
        float,
        probability("--width", "W", "Target interval width for the label plan.", low_open=True),
    ] = 0.10,
    export_suite: Annotated[
        Path | None,
        file_option(
            "--export-suite",
            "Also write a suite spec whose judge checks carry the measured fnr and fpr, "
            "for simulate, policies, report and check --suite.",
        ),
    ] = None,
    conservative: Annotated[
        bool,
        typer.Option("--conservative", help="Export the upper confidence bounds of fnr and fpr."),
    ] = False,
    suite_file: Annotated[
        Path | None,
        file_option(
            "--suite",
            "With --export-suite: give these judge checks the measured rates "
            "(default: the article's shape, 12 cases).",
        ),
    ] = None,
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    chart: Annotated[
        Path | None,
        file_option(
            "--chart", "Also save the confusion matrix and corrected rate chart (.png/.svg)."
        ),
    ] = None,
) -> None:
    """Measure the judge against human labels; correct a judged pass rate for its errors.

    Prints the confusion matrix; sensitivity and specificity, i.e. the judge's false "no"
    (fnr) and false "yes" (fpr) rates, with exact intervals; Cohen's kappa with its
    interval, Gwet's AC1, accuracy, the unparseable share; how often repeated judgements
    of one item disagree; with --observed or --runs, the true pass rate behind the judged
    one (Rogan-Gladen, with an interval carrying both sampling errors); and how many
    labels of each class a narrower interval needs.

    Example: gatecal calibrate labels.csv --observed 452/500 --export-suite judge.json
    """
    inputs = [labels, *(runs or ()), *([suite_file] if suite_file else [])]
    outputs = Outputs(
        ("--out", out), ("--chart", chart), ("--export-suite", export_suite), inputs=inputs
    )
    if observed is not None and runs:
        raise CliError(
            f"--observed can't be combined with --runs (got '{observed[0]}/{observed[1]}')"
        )
    if (conservative or suite_file is not None) and export_suite is None:
        given = "--conservative" if conservative else "--suite"
        raise CliError(f"{given} needs --export-suite (got {given})")
    base = None if suite_file is None else load_spec(suite_file)
    table = read_labels(labels)
    pair: tuple[float, float] | None = observed
    source = ""
    if runs:
        data = read_runs("--runs", runs)
        outputs.refuse_inputs(data.sources)
        with library_errors(_NAMES, in_rule=False):
            pair = gatecal.observed_from_runs(data, check)
        source = f"{len(data.sources)} run files, each case's share of passing verdicts"
    try:
        with library_errors(_NAMES, in_rule=False), busy("calibrating the judge"):
            result = gatecal.calibrate_judge(
                table,
                confidence_level=confidence,
                observed=pair,
                observed_source=source,
                check=check,
                width=width,
                source=str(labels),
            )
    except gatecal.LabelsError as exc:
        raise CliError(f"LABELS {' '.join(str(exc).split())}") from None
    outputs.put("--out", gatecal.render_calibration(result, fmt))
    if export_suite is not None:
        try:
            spec = result.suite_spec(conservative=conservative, base=base)
        except gatecal.SpecError as exc:
            raise CliError(str(exc)) from None
        outputs.put("--export-suite", json.dumps(spec, indent=2) + "\n")
    outputs.chart(lambda charts: charts.plot_calibration(result))
    outputs.commit()
