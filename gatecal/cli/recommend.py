"""``gatecal recommend``: the judge's noise from known-good runs, and the gate to use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

import gatecal
from gatecal._common.validate import ParameterError
from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import ReadingOpt, read_runs
from gatecal.cli._options import (
    ConfidenceOpt,
    DetectionOpt,
    FalseAlarmOpt,
    FormatOpt,
    IntervalOpt,
    OutOpt,
    RegressedOpt,
    RegressionOpt,
    arguments,
    file_option,
)
from gatecal.cli._outputs import Outputs, busy
from gatecal.cli._store import StoreChoiceOpt, baseline_runs

RunsArgument = Annotated[
    list[str] | None,
    arguments(
        "RUNS...",
        "Known-good runs: JUnit XML, promptfoo results, inspect_ai logs, DeepEval "
        "test runs or a long CSV/JSONL table; files, folders (searched recursively) or "
        "glob patterns. 'gatecal runs' shows how they are read. Or --store instead.",
    ),
]


@grouped
def recommend(
    *,
    paths: RunsArgument = None,
    regressed: RegressedOpt = None,
    regression: RegressionOpt = None,
    false_alarm: FalseAlarmOpt = 0.05,
    detection: DetectionOpt = 0.95,
    confidence: ConfidenceOpt = 0.95,
    interval: IntervalOpt = "wilson",
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    chart: Annotated[
        Path | None,
        file_option("--chart", "Also save the operating curves (.png/.svg)."),
    ] = None,
    export_suite: Annotated[
        Path | None,
        file_option(
            "--export-suite",
            "Also write the measured suite (each case's failure rate) as a suite spec "
            "for 'gatecal simulate --suite', 'policies --suite' or 'report --suite'.",
        ),
    ] = None,
    reading: ReadingOpt,
    policy_list: Annotated[
        str | None,
        typer.Option(
            "--policies",
            metavar="P[,P...]",
            help="Also choose the per-case rule: for each (single, rerun-failing-R, "
            "repeat-K-of-N, pass^K, pass@K, rerun-R, majority-M, confirm-M or several joined "
            "by '+'; e.g. single,rerun-failing-1,rerun-failing-2,repeat-2-of-3,pass^2) the "
            "strictest gate within the false-alarm budget, its detection and expected judge "
            "calls, and the cheapest rule meeting both targets (written to the gate file).",
        ),
    ] = None,
    # -- the run history (gatecal/cli/_store.py): the known-good runs from a store --
    choice: StoreChoiceOpt,
) -> None:
    """Measure the judge's noise from repeated runs and recommend the gate.

    Run your suite repeatedly against a known-good build; gatecal estimates how often
    each case fails with confidence intervals, tests whether whole runs vary together,
    and picks the strictest gate whose false-alarm rate stays within budget while it
    still catches the target regression: measured known-bad runs (--regressed), or
    --regression cases failing (default: a quarter of the cases).

    With --store instead of RUNS, the known-good runs are the latest recorded there
    ('gatecal record'), selected by --judge, --branch, --latest, --since and --until.

    Example: gatecal recommend nightly/*.xml --false-alarm 0.05 --detection 0.95
    """
    rules = _rules(policy_list)
    outputs = Outputs(
        ("--out", out),
        ("--chart", chart),
        ("--export-suite", export_suite),
        inputs=[*(paths or ()), *(regressed or ()), *choice.files()],
    )
    if regressed and regression is not None:
        raise CliError(f"--regression can't be combined with --regressed (got {regression.text!r})")
    if choice.store is not None and regressed:
        raise CliError(f"--regressed can't be combined with --store (got {regressed[0]!r})")
    choice.check_source("RUNS", paths)  # files or a store, checked before reading
    if choice.store is None and paths:  # files, as always (with any --regressed runs)
        data = read_runs("RUNS", paths, regressed or (), reading)
    else:
        data, _ = baseline_runs("RUNS", paths, choice, reading)
    outputs.refuse_inputs(data.sources)
    targets: dict[str, Any] = {  # what both searches aim at
        "false_alarm": false_alarm,
        "detection": detection,
        "regression": regression,
        "confidence_level": confidence,
    }
    with library_errors():
        with busy("measuring the noise"):
            rec = gatecal.recommend_gate(data, method=interval, **targets)
        by_rule = None
        if rules is not None:
            with busy("bounding each rule's gates"):
                by_rule = gatecal.recommend_policy(data, policies=rules, **targets)
    if by_rule is None:
        outputs.put("--out", gatecal.render_recommendation(rec, fmt))
    else:
        outputs.put("--out", gatecal.render_policy_recommendation(rec, by_rule, fmt))
    if export_suite is not None:
        outputs.put("--export-suite", json.dumps(rec.suite_spec(), indent=2) + "\n")
    outputs.chart(
        lambda charts: charts.plot_operating_curves(
            rec.table,
            recommended=rec.recommended,
            false_alarm_target=rec.targets.false_alarm,
            detection_target=rec.targets.detection,
        ),
    )
    outputs.commit()


def _rules(text: str | None) -> list[str] | None:
    """``--policies``: comma-separated per-case rules, each checked before any run is read."""
    if text is None:
        return None
    from gatecal._analyses.recommend.policy import parse_rules

    parts = [part.strip() for part in text.split(",")]
    try:
        parse_rules(parts)
    except ParameterError as exc:
        raise CliError(f"--policies {exc.rule} (got {str(exc.value)!r})") from None
    return parts
