"""``gatecal check``: decide a CI run with a calibrated gate, and say why."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import gatecal
from gatecal._common.text import joined
from gatecal._model.policy_names import policy_spellings
from gatecal._model.sequential import spellings
from gatecal._render import CHECK_FORMATS
from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import ReadingOpt, read_runs
from gatecal.cli._options import (
    ConfidenceOpt,
    IntervalOpt,
    OutOpt,
    RegressionOpt,
    RunsShareOpt,
    arguments,
    file_option,
    formats,
    probability,
    sequential_named,
    valued,
    whole,
)
from gatecal.cli._outputs import Outputs, busy
from gatecal.cli._store import StoreChoiceOpt, baseline_runs, record_current, record_target

#: Options that take every path up to the next option (an unquoted glob works).
PATH_LISTS = ("--baseline", "--current")

if TYPE_CHECKING:
    from gatecal._analyses.check.sequential import SequentialCheck
    from gatecal._analyses.policies.sequential import SequentialPolicy
    from gatecal._model.gatefile import RecommendedGate
    from gatecal.readers._data import RunsData

#: check's own spelling of the library's parameters, for its errors
_NAMES = {
    "gate": "--gate",
    "gate_from": "--gate-from",
    "policy": "--policy",
    "max_errors": "--max-errors",
    "flaky_rate": "--flaky-rate",
    "current": "CURRENT",
}


@sequential_named
@grouped(after={"wait": "build"})
def check(
    *,
    paths: Annotated[
        list[str] | None,
        arguments(
            "CURRENT...",
            "The CI run to decide, in any format recommend reads (several files are "
            "one run unless they are reruns: then name the --policy).",
        ),
    ] = None,
    baseline: Annotated[
        list[str] | None,
        valued(
            "--baseline",
            "RUNS...",
            "Known-good runs, as for recommend: every path up to the next option "
            "(so an unquoted glob works), folders and quoted globs too.",
        ),
    ] = None,
    current_option: Annotated[
        list[str] | None,
        valued(
            "--current",
            "RUNS...",
            "The CI run to decide, instead of CURRENT (every path up to the next option).",
        ),
    ] = None,
    gate: Annotated[
        str | None,
        typer.Option(
            "--gate",
            metavar="RULE",
            help="The gate: 'cases' (the case-aware gate: each failing case weighs by how "
            "surprising its failure is given its own record), 'count' (the strictest "
            "'at least k of n pass' within --false-alarm), 'all', a pass rate such as "
            "0.90, or 'fails<=F'. Default: 'cases' when the baseline's cases differ "
            "(some never fail, some always do), else 'count' (what recommend writes).",
        ),
    ] = None,
    gate_from: Annotated[
        Path | None,
        file_option(
            "--gate-from", "Use the gate a 'gatecal recommend --format json' output recommends."
        ),
    ] = None,
    false_alarm: Annotated[
        float, probability("--false-alarm", "A", "False-alarm budget of the default gate.")
    ] = 0.05,
    policy: Annotated[
        str | None,
        typer.Option(
            "--policy",
            metavar="POLICY",
            help="How several current runs combine, in the order "
            f"given: {policy_spellings(runs=True, conjunction='or')}; the false alarm and "
            "p-value are that policy's. Or a sequential gate over the runs of one build so "
            f"far, {spellings()} (evalue-MAX is an anytime-valid e-process, failing at "
            "e-value 1/--false-alarm; the others' boundaries are searched for --false-alarm, "
            "--detection and --regression): exit 0 pass, 1 fail, 3 continue (run the build "
            "again and check all its runs).",
        ),
    ] = None,
    max_errors: Annotated[
        int,
        whole(
            "--max-errors",
            "Error or unscored verdicts tolerated (each "
            "counts as a failure); more makes the evidence incomplete.",
        ),
    ] = 0,
    flaky_rate: Annotated[
        float | None,
        probability(
            "--flaky-rate",
            "R",
            "Deprecated, ignored: each failing case is now labelled new, flaky or "
            "systematic from its own record in the known-good runs.",
        ),
    ] = None,
    require_targets: Annotated[
        bool,
        typer.Option(
            "--require-targets",
            help="Fail the run (exit 1) when the --gate-from gate falls short of its "
            "detection target (by default it decides and states the shortfall).",
        ),
    ] = False,
    confidence: ConfidenceOpt = 0.95,
    interval: IntervalOpt = "wilson",
    fmt: Annotated[
        str,
        formats(
            f"{joined(CHECK_FORMATS)} (JUnit XML for CI test reporters).",
            CHECK_FORMATS,
        ),
    ] = "table",
    out: OutOpt = None,
    summary: Annotated[
        Path | None,
        file_option(
            "--summary",
            "Also write a markdown summary to FILE. When "
            "GITHUB_STEP_SUMMARY is set, the summary is appended there too.",
        ),
    ] = None,
    reading: ReadingOpt,
    detection: Annotated[
        float | None,
        probability("--detection", "D", "Detection target of a sequential --policy (0.8)."),
    ] = None,
    regression: RegressionOpt = None,
    runs_share: RunsShareOpt = None,
    # -- the run history (gatecal/cli/_store.py): the baseline from a store --
    choice: StoreChoiceOpt,
    record: Annotated[
        bool,
        typer.Option(
            "--record",
            help="After deciding, append the current run to --store (not as known-good), "
            "under --build and --judge.",
        ),
    ] = False,
    build: Annotated[
        str | None,
        valued("--build", "ID", "With --record: the CI build id (default: GITHUB_RUN_ID)."),
    ] = None,
) -> None:
    """Decide a CI run with a calibrated gate, and say why: exit 0 pass, 1 fail or incomplete.

    Reads the current run and known-good baseline runs, applies the gate, and gives the
    evidence: the gate's false alarm under the baseline's noise, the p-value of today's
    result, and each failing case with its record ("failed 0 of 30 known-good runs"), how
    surprising its failure is, and whether it is new, flaky or systematic (a judge error
    or a broken test, no evidence). A --gate-from gate that falls short of its detection
    target still decides and states the shortfall (--require-targets makes it fail). A
    baseline case missing from the current run (or one of its checks), more errors than
    --max-errors, an empty run or a gate that cannot fail is incomplete evidence: exit 1,
    naming what is missing. Several current runs need --policy; bad or ambiguous input is
    exit 2.

    With --store instead of --baseline, the baseline is the latest known-good runs
    recorded there ('gatecal record'), selected by --judge, --branch, --latest, --since
    and --until: the same decision as --baseline on the same files, and a warning when
    the baseline spans a judge change.

    Example: gatecal check ci-run.xml --baseline nightly/ --gate-from recommended.json

    With a sequential --policy (SEQUENTIAL_GATES) the current files are
    the runs of one build so far, and exit 3 means continue: run it again. --detection
    (default 0.8) and --regression (default 1 case) are that gate's target and need
    such a policy.
    """
    from gatecal._render.check import render_check

    paths = [*(paths or ()), *(current_option or ())]
    if not paths:
        raise CliError("CURRENT is missing: give the CI run to decide (or --current RUNS...)")
    choice.check_source("--baseline", baseline)  # files or a store, checked before reading
    if record:
        record_target(choice, build)
    if gate is not None and gate_from is not None:
        raise CliError(f"--gate can't be combined with --gate-from (got {gate!r})")
    inputs: list[str | Path] = [*paths, *(baseline or ()), *([gate_from] if gate_from else [])]
    inputs += choice.files()  # an output never replaces the store
    outputs = Outputs(("--out", out), ("--summary", summary), inputs=inputs)
    step = os.environ.get("GITHUB_STEP_SUMMARY")
    # appended to, never replaced, but never one of the inputs either
    appended = Outputs(("GITHUB_STEP_SUMMARY", Path(step)), inputs=inputs) if step else None
    sequential = _sequential(policy, gate, gate_from)
    if sequential is not None and fmt == "junit":
        raise CliError(
            "--format junit is for a single decision; a sequential --policy "
            "gives table, markdown or json (got 'junit')"
        )
    # the --policy itself first: a bad one is a --policy error, whatever else is given
    chosen = None if sequential else _chosen_gate(gate, gate_from, policy)
    if sequential is None and (
        detection is not None or regression is not None or runs_share is not None
    ):
        given = (
            "--detection"
            if detection is not None
            else "--regression"
            if regression is not None
            else ("--runs-share-rate" if runs_share else "--runs-independent")
        )
        raise CliError(f"{given} needs a sequential --policy ({spellings()})")
    if record and sequential is not None:
        raise CliError(f"--record is for a single decision, not a sequential --policy ({policy})")
    base, _ = baseline_runs("--baseline", baseline, choice, reading)
    current = read_runs("CURRENT", paths, reading=reading)
    outputs.refuse_inputs([*base.sources, *current.sources])
    if appended is not None:
        appended.refuse_inputs([*base.sources, *current.sources])
    if sequential is not None:
        decide = functools.partial(
            gatecal.check_sequential,
            policy=sequential,
            false_alarm=false_alarm,
            detection=0.8 if detection is None else detection,
            regression=1 if regression is None else regression,
            max_errors=max_errors,
            confidence_level=confidence,
            method=interval,
            runs="independent" if runs_share is False else "shared",
        )
        _decide_sequential(decide, current, base, outputs, fmt)
        return
    with library_errors(_NAMES), busy("weighing the evidence"):
        result = gatecal.check_gate(
            current,
            base,
            gate=chosen,
            policy=policy,
            false_alarm=false_alarm,
            max_errors=max_errors,
            flaky_rate=flaky_rate,
            confidence_level=confidence,
            method=interval,
            require_targets=require_targets,
        )
    if record:  # after deciding; a failure to record is exit 2, with nothing written
        record_current(current, choice, build)
    _deliver(outputs, lambda f: render_check(result, f), fmt, result.exit_code)


def _chosen_gate(
    gate: str | None, gate_from: Path | None, policy: str | None
) -> str | RecommendedGate | None:
    """The gate as given, read and checked before any run is read."""
    with library_errors(_NAMES):
        chosen: str | RecommendedGate | None = gate
        if gate is not None and gate.strip().lower() not in ("cases", "count"):
            gatecal.parse_gate(gate)
        if gate_from is not None:
            chosen = gatecal.load_recommended_gate(gate_from)
        if policy is not None:
            gatecal.parse_check_policy(policy)
    return chosen


def _sequential(
    policy: str | None, gate: str | None, gate_from: Path | None
) -> SequentialPolicy | None:
    """The sequential --policy, or None for the others (checked before any run is read)."""
    if policy is None:
        return None
    with library_errors(_NAMES):
        found = gatecal.parse_sequential(policy)
    if found is not None and (gate is not None or gate_from is not None):
        given = "--gate" if gate is not None else "--gate-from"
        raise CliError(f"{given} can't be combined with a sequential --policy (got {policy!r})")
    return found


def _decide_sequential(
    decide: Callable[[RunsData, RunsData], SequentialCheck],
    current: RunsData,
    base: RunsData,
    outputs: Outputs,
    fmt: str,
) -> None:
    """``check --policy sprt-MAX``: pass (0), fail or incomplete (1), continue (3), as
    `decide` (``check_sequential`` with the command's settings) finds."""
    from gatecal._render.sequential import render_sequential_check

    names = {**_NAMES, "regression": "--regression", "detection": "--detection"}
    with library_errors(names):
        result = decide(current, base)
    _deliver(outputs, lambda f: render_sequential_check(result, f), fmt, result.exit_code)


def _deliver(outputs: Outputs, render: Callable[[str], str], fmt: str, exit_code: int) -> None:
    """The decision in `fmt`, the markdown summary where asked, then check's exit status."""
    markdown = render("markdown")
    outputs.put("--out", render(fmt))
    outputs.put("--summary", markdown)
    outputs.commit()
    _append_step_summary(markdown)
    if exit_code:
        raise typer.Exit(exit_code)


def _append_step_summary(markdown: str) -> None:
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        try:
            with open(step_summary, "a", encoding="utf-8") as handle:
                handle.write(markdown + "\n")
        except OSError as exc:
            sys.stderr.write(
                f"gatecal: warning: GITHUB_STEP_SUMMARY could not be appended "
                f"to ({step_summary!r}: {exc.strerror})\n"
            )
