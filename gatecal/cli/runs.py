"""``gatecal runs``: how measured runs are read, before anyone trusts a number."""

from __future__ import annotations

from typing import Annotated

from gatecal.cli._errors import CliError
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import ReadingOpt, read_runs
from gatecal.cli._options import (
    OutOpt,
    RegressedOpt,
    arguments,
    formats,
)
from gatecal.cli._outputs import Outputs


def _runs_formats() -> tuple[str, ...]:
    from gatecal.readers._summary import RUNS_FORMATS

    return RUNS_FORMATS


@grouped
def runs(
    *,
    paths: Annotated[
        list[str],
        arguments(
            "RUNS...", "Files, folders (searched recursively) or glob patterns, as for recommend."
        ),
    ],
    regressed: RegressedOpt = None,
    fmt: Annotated[
        str,
        formats(
            "table or markdown (what was read), json (counts and the per-file "
            "mapping), csv, jsonl or parquet (the normalised long table: gatecal "
            "converts; parquet needs --out and pyarrow).",
            _runs_formats,
        ),
    ] = "table",
    out: OutOpt = None,
    reading: ReadingOpt,
) -> None:
    """Show how measured runs are read, before anyone trusts a number.

    The format detected per file and how runs were identified, runs x cases x checks,
    builds and sessions, skipped / error / unscored counts, rerun attempts, cache
    warnings, and for small inputs the case-by-run grid. --format csv or jsonl writes
    the normalised long table, which every command reads back.

    Example: gatecal runs artefacts/ --format csv --out runs.csv
    """
    from gatecal.readers._summary import render_runs

    if fmt == "parquet" and out is None:
        raise CliError("--format parquet needs --out FILE (Parquet is binary) (got stdout)")
    outputs = Outputs(("--out", out), inputs=[*paths, *(regressed or ())])
    data = read_runs("RUNS", paths, regressed or (), reading)
    outputs.refuse_inputs(data.sources)
    if fmt == "parquet":
        from gatecal.readers._verdict import RunsError
        from gatecal.readers.table.parquet import write_parquet

        try:
            outputs.put("--out", write_parquet(data))
        except RunsError as exc:
            raise CliError(str(exc)) from None
    else:
        outputs.put("--out", render_runs(data, fmt))
    outputs.commit()
