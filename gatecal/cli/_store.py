"""The run history's options and where a baseline comes from: files or a store.

``check`` and ``recommend`` take their known-good runs either from files (``--baseline``,
``RUNS``) or from a store (``--store`` with a selection); :func:`baseline_runs` returns the
same RunsData either way, so what they decide does not depend on where the runs lived.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gatecal.cli._errors import CliError
from gatecal.cli._groups import Group
from gatecal.cli._options import valued

if TYPE_CHECKING:
    from gatecal.cli._inputs import Reading
    from gatecal.readers._data import RunsData
    from gatecal.store import Selection, StoredRuns

__all__ = [
    "BranchOpt",
    "JudgeOpt",
    "LatestOpt",
    "SinceOpt",
    "StoreChoice",
    "StoreChoiceOpt",
    "StoreOpt",
    "UntilOpt",
    "WaitOpt",
    "baseline_runs",
    "record_current",
    "record_target",
    "store_call",
]

StoreOpt = Annotated[
    str | None,
    valued(
        "--store",
        "STORE",
        "The run history: a SQLite file or a postgresql:// URL (its password is never "
        "shown; the URL may come from an environment variable or secret). 'gatecal record' "
        "fills it.",
    ),
]
JudgeOpt = Annotated[
    str | None,
    valued(
        "--judge",
        "NAME",
        "With --store: only this judge's runs (model and version, as recorded). "
        "Default: every judge's, with a warning when the runs span a judge change.",
    ),
]
BranchOpt = Annotated[
    str | None,
    valued("--branch", "NAME", "With --store: only this branch's runs (default: every branch's)."),
]
LatestOpt = Annotated[
    int | None,
    valued("--latest", "N", "With --store: the latest N known-good runs selected (default 30)."),
]
SinceOpt = Annotated[
    str | None,
    valued(
        "--since",
        "TIME",
        "With --store: runs recorded at or after TIME (ISO 8601, e.g. 2026-11-30 or "
        "2026-11-30T08:00Z, UTC by default; or an age: 14d, 12h, 2w).",
    ),
]
UntilOpt = Annotated[
    str | None,
    valued("--until", "TIME", "With --store: runs recorded before TIME (as --since)."),
]
WaitOpt = Annotated[
    float,
    typer.Option(
        "--wait",
        metavar="SECONDS",
        min=0,
        help="Seconds to wait for another writer's lock on the store (or for the server).",
    ),
]


def _error(exc: Exception) -> CliError:
    return CliError(f"--store {' '.join(str(exc).split())}")


@dataclass(frozen=True, slots=True)
class StoreChoice:
    """--store and its selection, as given (checked by :meth:`selection`): an option group
    (its fields are the options)."""

    store: StoreOpt = None
    judge: JudgeOpt = None
    branch: BranchOpt = None
    latest: LatestOpt = None
    since: SinceOpt = None
    until: UntilOpt = None
    wait: WaitOpt = 60.0

    def files(self) -> list[str]:
        """The store as an input no output may replace (a file; a URL is no path)."""
        return [self.store] if self.store is not None and "://" not in self.store else []

    def given(self) -> str | None:
        """The first selection option given (they need --store)."""
        for option, value in (
            ("--judge", self.judge),
            ("--branch", self.branch),
            ("--latest", self.latest),
            ("--since", self.since),
            ("--until", self.until),
        ):
            if value is not None:
                return option
        return None

    def check_source(self, option: str, files: Sequence[str] | None) -> None:
        """The known-good runs come from `files` (named `option`) or the store: exactly one,
        and the selection's options only with a store."""
        self.selection()
        if self.store is None and not files:
            raise CliError(
                f"{option} is missing: give the known-good runs (files, folders or glob "
                "patterns, or --store STORE)"
            )
        if self.store is not None and files:
            raise CliError(f"{option} can't be combined with --store (got {files[0]!r})")

    def selection(self, *, latest: int | None = None) -> Selection:
        from gatecal.store import DEFAULT_LATEST, Selection, StoreError, parse_time

        if self.store is None:
            given = self.given()
            if given is not None:
                raise CliError(f"{given} needs --store (the run history to select from)")
        if self.latest is not None and self.latest < 1:
            raise CliError(f"--latest must be at least 1 (got {self.latest})")
        times: dict[str, str | None] = {}
        for option, value in (("--since", self.since), ("--until", self.until)):
            try:
                times[option] = None if value is None else parse_time(value)
            except StoreError as exc:
                raise CliError(f"{option} {exc}") from None
        return Selection(
            judge=self.judge,
            branch=self.branch,
            latest=self.latest if self.latest is not None else (latest or DEFAULT_LATEST),
            since=times["--since"],
            until=times["--until"],
        )


#: The run history to take known-good runs from: --store and its selection, and --wait.
StoreChoiceOpt = Annotated[StoreChoice, Group(StoreChoice)]


def store_call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a store function; its StoreError is one --store line (exit 2)."""
    from gatecal.store import StoreError

    try:
        return function(*args, **kwargs)
    except StoreError as exc:
        raise _error(exc) from None


def baseline_runs(
    option: str,
    files: Sequence[str] | None,
    choice: StoreChoice,
    reading: Reading,
) -> tuple[RunsData, StoredRuns | None]:
    """The known-good runs: read from `files` (named `option` in errors), or selected
    from ``choice.store`` (then a note on stderr says which runs, and a warning when they
    may not describe today's judge). Exactly one of the two must be given."""
    from gatecal.cli._inputs import read_runs

    choice.check_source(option, files)
    selection = choice.selection()
    if choice.store is None:
        return read_runs(option, files or [], reading=reading), None
    from gatecal._analyses.history.record import baseline_warnings
    from gatecal.store import latest_run, stored_runs

    stored: StoredRuns = store_call(stored_runs, choice.store, selection, wait=choice.wait)
    latest = store_call(latest_run, choice.store, branch=choice.branch, wait=choice.wait)
    runs = stored.runs
    sys.stderr.write(
        f"gatecal: note: baseline: {len(runs)} known-good runs from {stored.store} "
        f"({', '.join(stored.judges())}; {runs[0].recorded_at} to {runs[-1].recorded_at})\n"
    )
    recent = None
    if choice.judge is not None and selection.latest and len(runs) < selection.latest:
        # fewer runs of this judge than asked: did it take over from another recently?
        wider = dataclasses.replace(selection, judge=None, latest=selection.latest + len(runs))
        recent = store_call(stored_runs, choice.store, wider, wait=choice.wait)
    known = latest if choice.judge is not None else None
    for warning in baseline_warnings(stored, known, recent=recent):
        sys.stderr.write(f"gatecal: warning: {warning}\n")
    return stored.data, stored


def record_target(choice: StoreChoice, build: str | None) -> tuple[str, str]:
    """``check --record``'s build and judge, checked before any run is read."""
    if choice.store is None:
        raise CliError("--record needs --store (the run history to append to)")
    build = build or _ci_build()
    if not build:
        raise CliError("--record needs --build ID (or GITHUB_RUN_ID in the environment)")
    if not choice.judge:
        raise CliError("--record needs --judge NAME (the judge of the current run)")
    return build, choice.judge


def record_current(data: RunsData, choice: StoreChoice, build: str | None) -> None:
    """``check --record``: append the current run (not known-good) after deciding."""
    from gatecal.store import record_runs

    build, judge = record_target(choice, build)
    done = store_call(
        record_runs, data, choice.store, build=build, judge=judge,
        branch=choice.branch or _ci_branch(), wait=choice.wait,
    )  # fmt: skip
    sys.stderr.write(f"gatecal: {done.summary()}\n")


def _ci_build() -> str:
    run = os.environ.get("GITHUB_RUN_ID", "")
    attempt = os.environ.get("GITHUB_RUN_ATTEMPT", "")
    return f"{run}.{attempt}" if run and attempt else run


def _ci_branch() -> str:
    return os.environ.get("GITHUB_HEAD_REF") or os.environ.get("GITHUB_REF_NAME", "")
