"""``gatecal policies``: what quieting the judge costs, policy by policy."""

from __future__ import annotations

from typing import Annotated

import gatecal
from gatecal._common.defaults import DEFAULT_SEED
from gatecal._model.sequential import spellings
from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import NoiseOpt, SuiteOptionsOpt, parse_policies
from gatecal.cli._options import (
    CallIccOpt,
    FormatOpt,
    GatesOpt,
    OutOpt,
    PolicyListOpt,
    RetryRateOpt,
    RunsShareOpt,
    TieOpt,
    probability,
    seed,
    sequential_named,
    whole,
)
from gatecal.cli._outputs import Outputs, ProgressBar, emit

#: policies simulates every judge call (above 100 cases by counts of alike cases, so its
#: cost does not grow with the cases): its own limits keep a command to seconds.
POLICIES_MAX_CASES = 50_000
POLICIES_MAX_RUNS = 1_000_000
#: With --icc the exact rates integrate over the run's rate with a rule whose nodes grow
#: with cases x judge calls per case (2,000 cases at majority-5: 10,001 nodes, ~5 s); a
#: sequential gate (sprt-MAX, ...) is still simulated verdict by verdict (2,000 cases at
#: sprt-5: ~20 s). Both keep the earlier limit.
POLICIES_MAX_ICC_CASES = 2_000


#: The policies compared by default; with --case-spread without the rerun of the whole
#: suite (it asks the same drawn cases again: its rates depend on the suite drawn).
POLICIES_DEFAULT = "single,majority-3,majority-5,rerun-failing-1,rerun-1"
POLICIES_DEFAULT_SPREAD = "single,majority-3,majority-5,rerun-failing-1"


#: policies' own --cases: simulating every judge call keeps its own limits
CasesOpt = Annotated[
    int | None,
    whole(
        "--cases",
        "Cases in the golden dataset, at most 50,000 (2,000 with --icc or a sequential "
        "gate).  [default: 12]",
        high=POLICIES_MAX_CASES,
        above=f"must be at most {POLICIES_MAX_CASES:,} for policies",
    ),
]


@sequential_named
@grouped(first=["flip"], spelled={"cases": CasesOpt})
def policies(
    *,
    shape: SuiteOptionsOpt,
    noise: NoiseOpt,
    gates: GatesOpt = "all,0.80",  # type: ignore[assignment]  # parsed by GateList
    policy_list: PolicyListOpt = POLICIES_DEFAULT,
    tie: TieOpt = "fail",
    call_icc: CallIccOpt = None,
    retry_rate: RetryRateOpt = "shared",
    n_runs: Annotated[
        int,
        whole(
            "--runs",
            "CI runs to simulate call by call, as a check; at most 1,000,000.",
            high=POLICIES_MAX_RUNS,
            above=f"must be at most {POLICIES_MAX_RUNS:,} for policies",
        ),
    ] = 20000,
    root_seed: Annotated[int, seed()] = DEFAULT_SEED,
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    false_alarm: Annotated[
        float | None,
        probability(
            "--false-alarm",
            "A",
            "False-alarm budget a sequential policy's boundaries are searched for (0.05).",
        ),
    ] = None,
    detection: Annotated[
        float | None,
        probability(
            "--detection",
            "D",
            "Detection target of a sequential policy, against the suite's regressed build "
            "(--failing or the suite file's failing cases) (0.8).",
        ),
    ] = None,
    runs_share: RunsShareOpt = None,
) -> None:
    """What quieting the judge costs: false alarm, detection and judge calls per policy.

    For each policy (majority votes, repeated cases, reruns of failing cases or of the
    whole suite) and gate: the exact false-alarm and detection rates and the expected
    judge calls per CI run, each beside a call-by-call simulation that checks it.
    A sequential policy (SEQUENTIAL_GATES) has its boundaries searched
    for --false-alarm and --detection against the suite's regressed build; evalue-MAX,
    the anytime-valid e-process, fails at e-value 1/--false-alarm (its nominal level) and
    shows its exact false alarm beside it.

    Example: gatecal policies --flip 0.08 --gates 0.80
    """
    Outputs(("--out", out), inputs=shape.inputs())
    if noise.case_spread and policy_list == POLICIES_DEFAULT:  # a suite rerun asks the same cases
        policy_list = POLICIES_DEFAULT_SPREAD
    chosen = parse_policies(
        policy_list,
        tie,
        call_icc,
        retry_rate=retry_rate,
        false_alarm=0.05 if false_alarm is None else false_alarm,
        detection=0.8 if detection is None else detection,
        runs_share=runs_share,
    )
    if not any(isinstance(p, gatecal.SequentialPolicy) for p in chosen):
        for option, value in (("--false-alarm", false_alarm), ("--detection", detection)):
            if value is not None:
                raise CliError(
                    f"{option} needs a sequential policy in --policies ({spellings()}) "
                    f"(got {value:g})"
                )
    with library_errors():
        suite, judge = shape.model(noise)
        if judge.run_correlated and suite.n_cases > POLICIES_MAX_ICC_CASES:
            rule = f"at most {POLICIES_MAX_ICC_CASES:,} cases for policies with --icc"
            if shape.suite_file is None:
                raise CliError(f"--cases must be {rule} (got {suite.n_cases})")
            file = str(shape.suite_file)
            raise CliError(f"--suite must hold {rule} (got {suite.n_cases} in {file!r})")
        simulated = sum(not isinstance(p, gatecal.SequentialPolicy) for p in chosen)
        if simulated < len(chosen) and suite.n_cases > POLICIES_MAX_ICC_CASES:
            rule = f"at most {POLICIES_MAX_ICC_CASES:,} cases with a sequential gate"
            if shape.suite_file is None:
                raise CliError(f"--cases must be {rule} in --policies (got {suite.n_cases})")
            raise CliError(f"--suite must hold {rule} in --policies (got {suite.n_cases})")
        with ProgressBar(total=2 * n_runs * simulated, what="computing and simulating") as bar:
            report = gatecal.compare_policies(
                suite, judge, gates, chosen, n_runs=n_runs, rng=root_seed, progress=bar
            )
    emit(gatecal.render_policies(report, fmt), out)
