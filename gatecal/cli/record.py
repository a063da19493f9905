"""``gatecal record``: append measured runs to the run history (a store)."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Annotated

import typer

from gatecal.cli._errors import CliError
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import ReadingOpt, read_runs
from gatecal.cli._options import (
    arguments,
    choice,
    valued,
)
from gatecal.cli._store import WaitOpt, store_call


@grouped
def record(
    *,
    paths: Annotated[
        list[str],
        arguments(
            "RUNS...",
            "Runs in any format gatecal reads: files, folders (searched recursively) "
            "or glob patterns, as for recommend.",
        ),
    ],
    store: Annotated[
        str,
        valued(
            "--store",
            "STORE",
            "The run history: a SQLite file (made if absent) or a postgresql:// URL "
            "(its password is never shown).",
        ),
    ],
    build: Annotated[
        str,
        valued("--build", "ID", "The CI build these runs are of (e.g. the workflow run id)."),
    ],
    judge: Annotated[
        str,
        valued(
            "--judge",
            "NAME",
            "The judge, as your team names it: model and version (e.g. "
            "gpt-4o-2024-08-06). A baseline is taken from one judge's runs.",
        ),
    ],
    branch: Annotated[
        str,
        typer.Option("--branch", metavar="NAME", help="The branch the build is of."),
    ] = "",
    known_good: Annotated[
        bool,
        typer.Option(
            "--known-good",
            help="These runs are of a known-good build: check and recommend --store take "
            "their baseline from such runs.",
        ),
    ] = False,
    at: Annotated[
        str | None,
        valued(
            "--at",
            "TIME",
            "The time to record (ISO 8601, UTC by default; default: now), e.g. to "
            "record runs made earlier.",
        ),
    ] = None,
    fmt: Annotated[
        str,
        choice("--format", "FORMAT", "table (one line) or json.", ("table", "json")),
    ] = "table",
    reading: ReadingOpt,
    wait: WaitOpt = 60.0,
) -> None:
    """Append measured runs to the run history: every verdict, with its build, branch,
    judge, time and source.

    One call is one transaction: all its verdicts land, or none do. A file recorded
    before (the same content read as the same runs) adds nothing, so a retried CI job
    is safe; parallel jobs may record into one store at once. 'check --store' and
    'recommend --store' take their baseline from the --known-good runs, 'gatecal
    history' shows each case's record over time.

    Example: gatecal record nightly/*.xml --store history.db --build 1234 --judge gpt-4o-2024-08-06 --known-good
    """  # noqa: E501
    from gatecal.store import StoreError, parse_time, record_runs

    moment = None
    if at is not None:
        try:
            moment = datetime.fromisoformat(parse_time(at).replace("Z", "+00:00"))
        except StoreError as exc:
            raise CliError(f"--at {exc}") from None
    for option, value in (("--build", build), ("--judge", judge)):
        if not value.strip() or any(ord(c) < 32 for c in value):
            raise CliError(f"{option} must be a non-empty name on one line (got {value!r})")
    if "://" not in store and store in paths:
        raise CliError(f"--store must not be one of the runs (got {store!r})")
    data = read_runs("RUNS", paths, reading=reading)
    done = store_call(
        record_runs, data, store, build=build, judge=judge, branch=branch,
        known_good=known_good, recorded_at=moment, wait=wait,
    )  # fmt: skip
    if fmt == "json":
        sys.stdout.write(json.dumps(done.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(done.summary() + "\n")
