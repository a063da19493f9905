"""``gatecal history``: each case's record over time, and whether the judge changed."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import typer

from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._options import OutOpt, choice, file_option, formats, probability, valued
from gatecal.cli._outputs import Outputs, busy
from gatecal.cli._store import (
    BranchOpt,
    JudgeOpt,
    SinceOpt,
    StoreChoice,
    UntilOpt,
    WaitOpt,
    store_call,
)


def history(
    store: Annotated[
        str,
        valued("--store", "STORE", "The run history: a SQLite file or a postgresql:// URL."),
    ],
    judge: JudgeOpt = None,
    branch: BranchOpt = None,
    latest: Annotated[
        int | None,
        valued("--latest", "N", "Only the latest N runs selected (default: all)."),
    ] = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    all_runs: Annotated[
        bool,
        typer.Option(
            "--all-runs",
            help="Every recorded run, not only the known-good ones (e.g. check --record's).",
        ),
    ] = False,
    split: Annotated[
        str | None,
        valued(
            "--split",
            "TIME",
            "Compare the latest judge's runs before TIME with those after (default: "
            "every split is tried, and the search paid for).",
        ),
    ] = None,
    alpha: Annotated[
        float,
        probability("--alpha", "A", "Level of the per-case tests, after the multiplicity control."),
    ] = 0.05,
    multiplicity: Annotated[
        str,
        choice(
            "--multiplicity",
            "WHICH",
            "holm (no unchanged case named, with probability 1 - alpha) or bh (the "
            "share of unchanged cases among those named, on average, at most alpha).",
            ("holm", "bh"),
        ),
    ] = "holm",
    fmt: Annotated[str, formats("table, markdown, csv (the tested cases) or json.")] = "table",
    out: OutOpt = None,
    export: Annotated[
        Path | None,
        valued(
            "--export",
            "FILE.parquet",
            "Also write the selected runs as Parquet (the long table plus ci_build, "
            "branch, judge, known_good and recorded_at), for DuckDB or a warehouse.",
        ),
    ] = None,
    chart: Annotated[
        Path | None,
        file_option(
            "--chart",
            "Also draw each case's record over time, the judge changes marked (.png/.svg).",
        ),
    ] = None,
    wait: WaitOpt = 60.0,
) -> None:
    """Show each case's record over time, and name the cases whose failure rate changed.

    Between judges (where the recorded judge's name changes) and within the latest
    judge's runs (a provider's update under an unchanged name: every split tried), each
    case is tested exactly (Fisher's exact test) with a multiplicity control, and the
    answer comes first: do the latest judge's runs still describe it, or from when to
    take the baseline (check --store --since TIME).

    Example: gatecal history --store history.db --judge gpt-4o-2024-08-06
    """
    from gatecal._analyses.history.record import case_history
    from gatecal._render.history import render_history
    from gatecal.store import StoreError, parse_time, stored_runs

    if export is not None and export.suffix.lower() != ".parquet":
        raise CliError(f"--export must end in .parquet (got {str(export)!r})")
    if latest is not None and latest < 1:
        raise CliError(f"--latest must be at least 1 (got {latest})")
    outputs = Outputs(
        ("--out", out),
        ("--export", export),
        ("--chart", chart),
        inputs=[store] if "://" not in store else [],
    )
    picked = StoreChoice(store, judge, branch, None, since, until, wait).selection()
    picked = dataclasses.replace(picked, latest=latest, known_good=not all_runs)
    at = None
    if split is not None:
        try:
            at = parse_time(split)
        except StoreError as exc:
            raise CliError(f"--split {exc}") from None
    stored = store_call(stored_runs, store, picked, wait=wait)
    with library_errors({"split": "--split"}), busy("testing each case's record"):
        result = case_history(stored, alpha=alpha, multiplicity=multiplicity, split=at)
    outputs.put("--out", render_history(result, fmt))
    outputs.chart(lambda charts: charts.plot_history(result))
    if export is not None:
        from gatecal.readers._verdict import RunsError
        from gatecal.store._export import export_parquet

        try:
            outputs.put("--export", export_parquet(stored))
        except RunsError as exc:  # no pyarrow: the line says which extra brings it
            raise CliError(f"--export {exc}") from None
    outputs.commit()
