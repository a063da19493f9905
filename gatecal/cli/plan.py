"""``gatecal plan``: the smallest suite and gate that meet both targets, per policy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

import gatecal
from gatecal._common.defaults import RUNS_FOR_GATE_MAX
from gatecal._model.regression import Regression
from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import NoiseOpt, parse_policies
from gatecal.cli._options import (
    CallIccOpt,
    DetectionOpt,
    FalseAlarmOpt,
    FormatOpt,
    OutOpt,
    PolicyListOpt,
    RunsShareOpt,
    TieOpt,
    checks,
    regression,
    seed,
    sequential_named,
    whole,
)
from gatecal.cli._outputs import Outputs, busy, emit

if TYPE_CHECKING:
    from gatecal._model.suite import JudgeNoise

#: plan --baseline-runs also gives the runs that certify the gate in this share of random
#: baseline sets, measured on this many simulated sets (seeded).
BASELINE_SHARE = 0.8
BASELINE_SETS = 50
#: The smallest --false-alarm plan searches for: below it the suite needed, and the
#: search's time, grow without a useful end (no CI budgets one false alarm in 10^12 runs).
PLAN_FALSE_ALARM_FLOOR = 1e-12


#: The policies plan compares by default; with --case-spread a rerun of failing cases takes
#: the suite rerun's place (a rerun of the whole suite asks the same drawn cases again).
PLAN_POLICIES = "single,majority-3,rerun-1"
PLAN_POLICIES_SPREAD = "single,majority-3,rerun-failing-1"


@sequential_named
@grouped(first=["flip"])
def plan(
    *,
    regression: Annotated[Regression, regression()] = "0.10",  # type: ignore[assignment]  # parsed
    false_alarm: FalseAlarmOpt = 0.05,
    detection: DetectionOpt = 0.95,
    judge_checks: Annotated[int, checks("--judge-checks", "LLM-judge checks per case.")] = 2,
    code_checks: Annotated[int, checks("--code-checks", "Plain-code checks per case.")] = 1,
    noise: NoiseOpt,
    policies: PolicyListOpt = PLAN_POLICIES,
    tie: TieOpt = "fail",
    call_icc: CallIccOpt = None,
    max_cases: Annotated[
        int | None,
        whole(
            "--max-cases",
            "Largest suite to try, at most 2000000 (2000 with --case-spread or --systematic).  "
            "[default: no cap; 5000 with --icc; "
            "1000 with --case-spread or --systematic]",
        ),
    ] = None,
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="Plan 'gatecal compare' instead: the runs per build that reach both "
            "targets for --cases cases at run failure rate --flip and --icc (simulated).",
        ),
    ] = False,
    cases: Annotated[
        int | None, whole("--cases", "With --compare: the cases both builds run.", low=1)
    ] = None,
    seed_value: Annotated[int, seed("With --compare: root seed of the simulation.")] = 0,
    baseline_runs: Annotated[
        int | None,
        whole(
            "--baseline-runs",
            "Also say how many known-good runs would let 'gatecal recommend' certify each "
            "planned gate (the typical count, and the count that certifies it in at least "
            "80% of 50 simulated sets of runs, with the share measured), and the smallest "
            "suite N known-good runs typically certify.",
            low=2,
            high=RUNS_FOR_GATE_MAX,
        ),
    ] = None,
    runs_share: RunsShareOpt = None,
) -> None:
    """How many cases you need: the smallest suite and gate that meet both targets.

    Cases have the article's shape (judge checks and code checks); the regression makes a
    share or a number of cases fail a code check. Every suite size is tried in turn (exact
    binomial maths, no simulation), for the plain policy and the alternatives, with their
    expected judge calls per CI run, so you can trade a bigger suite against repeated calls.
    A sequential policy (SEQUENTIAL_GATES) gets the smallest suite at
    which its boundaries, searched for both targets, meet them, with the expected runs
    of a healthy and of the regressed build and the judge calls until it stops (suites
    up to --max-cases, at most 5000; 100 without).

    With --baseline-runs N, also what recommend needs to allow each gate when the noise
    is measured rather than known: how many known-good runs certify the planned gate, and
    the smallest suite whose gate N known-good runs certify.

    --false-alarm is at least 1e-12 here: the search's time grows with the suite a
    budget needs (1e-12 takes a few seconds; 1e-300 took about 100 s).

    Example: gatecal plan --flip 0.08 --regression 0.10 --false-alarm 0.05 --detection 0.95
    """
    Outputs(("--out", out))
    if false_alarm < PLAN_FALSE_ALARM_FLOOR:
        raise CliError(
            f"--false-alarm must be at least {PLAN_FALSE_ALARM_FLOOR:g} in plan (a smaller "
            "budget needs ever larger suites: 1e-100 about 10,000 cases and a minute of "
            f"search, 1e-300 about 100 s) (got {false_alarm:g})"
        )
    differ = {"--case-spread": noise.case_spread, "--systematic": noise.systematic}
    for option, value in differ.items():
        for other, given in (("--compare", compare), ("--baseline-runs", baseline_runs)):
            if value and given:
                raise CliError(
                    f"{option} does not combine with {other} (it plans for one rate for "
                    f"every case) (got {value:g})"
                )
    if compare:
        emit(
            _plan_compare(cases, noise, regression, false_alarm, detection, seed_value, fmt),
            out,
        )
        return
    if cases is not None:
        raise CliError(f"--cases needs --compare (got {str(cases)!r})")
    baseline = None
    if (
        noise.case_spread and policies == PLAN_POLICIES
    ):  # a rerun of the suite reruns the same cases
        policies = PLAN_POLICIES_SPREAD
    chosen = parse_policies(
        policies, tie, call_icc, false_alarm=false_alarm, detection=detection, runs_share=runs_share
    )
    with library_errors():
        with busy("searching suite sizes"):
            result = gatecal.plan_suite(
                noise=noise,
                regression=regression,
                false_alarm=false_alarm,
                detection=detection,
                judge_checks=judge_checks,
                code_checks=code_checks,
                policies=chosen,
                max_cases=max_cases,
            )
        if baseline_runs is not None:
            with busy("measuring the known-good runs each gate needs"):
                baseline = gatecal.baseline_runs(
                    result, runs=baseline_runs, share=BASELINE_SHARE, sets=BASELINE_SETS
                )
    emit(gatecal.render_plans(result, fmt, baseline), out)


def _plan_compare(
    cases: int | None,
    noise: JudgeNoise,
    regression: Regression,
    false_alarm: float,
    detection: float,
    seed_value: int,
    fmt: str,
) -> str:
    if cases is None:
        raise CliError("--cases is needed with --compare (got nothing)")
    with library_errors():
        design = gatecal.plan_compare(
            cases=cases,
            rate=noise.fnr,
            icc=noise.icc,
            regression=regression,
            false_alarm=false_alarm,
            detection=detection,
            rng=seed_value,
        )
    return gatecal.render_compare_design(design, fmt)
