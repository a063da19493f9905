"""Options that several commands share, declared once with their parsers and help."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar

import typer

from gatecal._model.policy_names import POLICY_NAMES

# light (no numpy), and needed at run time: typer and the fast path resolve the annotations
from gatecal._model.regression import Regression
from gatecal._model.sequential import spellings
from gatecal.cli._values import (
    Choice,
    FlipRates,
    Flips,
    GateList,
    GateRules,
    Observed,
    Probability,
    RegressionValue,
    ScoreThreshold,
    Threshold,
    Whole,
)
from gatecal.readers._registry import INPUT_FORMATS, listed  # names only: imports no reader

P = ParamSpec("P")
R = TypeVar("R")

#: The largest suite the command line builds: exact maths is quadratic in the cases, so a
#: typo like --cases 100000000 is refused at once instead of exhausting memory.
MAX_CASES = 50_000
MAX_CHECKS = 1_000
MAX_RUNS = 10**10

TABLE_FORMATS = ("table", "markdown", "csv", "json")


def whole(name: str, help_text: str, **limits: Any) -> Any:
    """A whole-number option ``name N``, with optional `Whole` limits."""
    return typer.Option(name, metavar="N", help=help_text, parser=Whole(name, **limits))


def valued(name: str, metavar: str, help_text: str) -> Any:
    """An option taking a value, with no default shown (its help says what leaving it out
    does): ``name METAVAR``."""
    return typer.Option(name, metavar=metavar, help=help_text, show_default=False)


def arguments(metavar: str, help_text: str) -> Any:
    """The positional arguments, with no default shown: ``METAVAR``."""
    return typer.Argument(metavar=metavar, help=help_text, show_default=False)


def file_option(name: str, help_text: str) -> Any:
    """An option naming a file: ``name FILE``."""
    return typer.Option(name, metavar="FILE", help=help_text)


def checks(name: str, help_text: str) -> Any:
    above = f"must be at most {MAX_CHECKS:,} (checks per case on the command line)"
    return whole(name, help_text, high=MAX_CHECKS, above=above)


def runs(help_text: str) -> Any:
    above = f"must be at most {MAX_RUNS:,} (10^10 runs take about ten minutes)"
    return whole("--runs", help_text, high=MAX_RUNS, above=above)


def seed(help_text: str = "Root seed.") -> Any:
    return whole("--seed", help_text, low=0)


def probability(name: str, metavar: str, help_text: str, **ends: bool) -> Any:
    """A probability option; ``low_open``/``high_open`` exclude an end."""
    return typer.Option(name, metavar=metavar, help=help_text, parser=Probability(name, **ends))


def choice(name: str, metavar: str, help_text: str, allowed: Any, words: str = "") -> Any:
    return typer.Option(name, metavar=metavar, help=help_text, parser=Choice(name, allowed, words))


def formats(help_text: str, allowed: Any = TABLE_FORMATS) -> Any:
    return choice("--format", "FORMAT", help_text, allowed)


def _flips(help_text: str) -> Any:
    return typer.Option("--flip", metavar="P[,P...]", help=help_text, parser=Flips())


CasesOpt = Annotated[
    int | None,
    whole(
        "--cases",
        "Cases in the golden dataset.  [default: 12]",
        high=MAX_CASES,
        above=f"must be at most {MAX_CASES:,} on the command line",
    ),
]
JudgeChecksOpt = Annotated[
    int | None, checks("--judge-checks", "LLM-judge checks per case; each can flip.  [default: 2]")
]
CodeChecksOpt = Annotated[
    int | None, checks("--code-checks", "Plain-code checks per case; never wrong.  [default: 1]")
]
FailingOpt = Annotated[
    int | None,
    whole(
        "--failing",
        "Cases that fail a code check in the regressed build (a judge check if there "
        "are no code checks). Default: a quarter of --cases, at least 1.",
    ),
]
SuiteOpt = Annotated[
    Path | None,
    typer.Option(
        "--suite",
        metavar="FILE",
        help="A suite spec (JSON or TOML: cases, checks, each build's truth, optional "
        "rates), e.g. from 'gatecal golden --export-suite'. Replaces --cases, "
        "--judge-checks, --code-checks and --failing.",
    ),
]
FlipsOpt = Annotated[FlipRates, _flips("Judge flip rates: comma-separated numbers in [0, 1].")]
FlipOpt = Annotated[float, probability("--flip", "P", "Judge flip rate (false 'no') in [0, 1].")]
FprOpt = Annotated[
    float | None,
    probability(
        "--fpr",
        "P",
        "Rate of false 'yes' on a truly failing check, if it differs from the "
        "flip rate (then --flip is the rate of false 'no').",
    ),
]
UnparseableOpt = Annotated[
    float | None,
    probability(
        "--unparseable", "U", "Share of judge replies that are not a clean yes/no; they fail."
    ),
]
IccOpt = Annotated[
    float | None,
    probability(
        "--icc",
        "RHO",
        "Run-level correlation: each CI run draws its flip rate from a Beta with "
        "the flip rate as mean and this intra-run correlation.",
        high_open=True,
    ),
]
CaseSpreadOpt = Annotated[
    float | None,
    probability(
        "--case-spread",
        "PHI",
        "How much cases differ: each case keeps its own flip rate, the rates spread like a "
        "Beta with the flip rate as mean and this intra-case correlation (recommend measures "
        "it; near 1 a case's verdict never changes, as a judge at temperature 0).  "
        "[default: 0, every case at the flip rate]",
        high_open=True,
    ),
]
SystematicOpt = Annotated[
    float | None,
    probability(
        "--systematic",
        "SHARE",
        "Share of cases the judge gets wrong every time (the last cases of the suite, "
        "rounded half up): they fail every healthy run, whatever the policy.  [default: 0]",
    ),
]
GATES_HELP = (
    "Gate rules, comma-separated: 'all' (every case passes), a pass rate t in [0, 1] "
    "such as 0.90 (rate >= t), or 'fails<=F'."
)
GatesOpt = Annotated[
    GateRules,
    typer.Option("--gates", metavar="RULE[,RULE...]", help=GATES_HELP, parser=GateList()),
]
FormatOpt = Annotated[str, formats("table, markdown, csv or json.")]
OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out", metavar="FILE", help="Write the output to FILE (atomically) instead of stdout."
    ),
]
FalseAlarmOpt = Annotated[
    float,
    probability("--false-alarm", "A", "The false-alarm budget: most false alarms you accept."),
]
DetectionOpt = Annotated[
    float, probability("--detection", "D", "The detection target: least detection you need.")
]
ConfidenceOpt = Annotated[
    float,
    probability(
        "--confidence",
        "LEVEL",
        "Confidence level of the intervals.",
        low_open=True,
        high_open=True,
    ),
]
IntervalOpt = Annotated[
    str,
    choice(
        "--interval",
        "METHOD",
        "wilson, clopper-pearson or jeffreys.",
        ("wilson", "clopper-pearson", "jeffreys"),
    ),
]


def regression() -> Any:
    return typer.Option(
        "--regression",
        metavar="R",
        help="The regression to catch: "
        "a share of the cases written with a decimal point or a percent sign (0.10, 10%), "
        "rounded half up to whole cases; or a whole number of cases (3). Ambiguous forms "
        "such as 3.0 are refused.",
        parser=RegressionValue(),
    )


RegressionOpt = Annotated[Regression | None, regression()]
POLICIES_HELP = (
    "Policies: "
    + ", ".join(f"{p.spelling} ({p.summary})" for p in POLICY_NAMES)
    + ", or several joined by '+'; or a "
    f"sequential gate over runs: {spellings()} (evalue-MAX, the anytime-valid e-process, "
    "fails at e-value 1/--false-alarm). At most 1,000 calls, repeats or reruns."
)


PolicyListOpt = Annotated[str, typer.Option("--policies", metavar="P[,P...]", help=POLICIES_HELP)]


def observed_option(help_text: str) -> Any:
    """``--observed K/N``: a judged pass rate, K passes of N."""
    return typer.Option("--observed", metavar="K/N", help=help_text, parser=Observed())


def sequential_named(command: Callable[P, R]) -> Callable[P, R]:
    """Write the sequential designs' spellings (built from their registry) where the
    command's help says SEQUENTIAL_GATES."""
    command.__doc__ = (command.__doc__ or "").replace("SEQUENTIAL_GATES", spellings())
    return command


TieOpt = Annotated[
    str, choice("--tie", "WHICH", "Even majorities: a tie fails or passes.", ("fail", "pass"))
]
RetryRateOpt = Annotated[
    str,
    choice(
        "--retry-rate",
        "WHICH",
        "With --icc, a rerun of failing cases: shares its run's drawn rate (shared, the "
        "conservative model) or draws a fresh one per rerun round (fresh).",
        ("shared", "fresh"),
    ),
]
RunsShareOpt = Annotated[
    bool | None,
    typer.Option(
        "--runs-share-rate/--runs-independent",
        help="With run-to-run correlation, the runs of one build under a sequential gate: "
        "they share one judge flip rate (--runs-share-rate, the default: reruns back to "
        "back, the conservative model) or each draws its own (--runs-independent: runs far "
        "apart). The gate is designed and its rates quoted under that model.",
    ),
]
CallIccOpt = Annotated[
    float | None,
    probability(
        "--call-icc", "RHO", "Correlation between repeated calls on one check.", high_open=True
    ),
]
RegressedOpt = Annotated[
    list[str] | None,
    typer.Option("--regressed", metavar="RUNS", help="Runs of a known-bad build (repeatable)."),
]

# How measured runs are read: every command that reads runs takes these.
InputFormatOpt = Annotated[
    str | None,
    choice(
        "--input-format",
        "FORMAT",
        f"Read every input as this format instead of detecting it from the content: {listed()}.",
        INPUT_FORMATS,
    ),
]
AttemptsOpt = Annotated[
    str,
    choice(
        "--attempts",
        "WHICH",
        "Reruns of a failed test (pytest-rerunfailures, Surefire flakyFailure): "
        "'first' counts the first attempt (a failure hidden by a rerun stays a failure), "
        "'last' the final outcome.",
        ("first", "last"),
        words="one of first, last",
    ),
]
JunitRepeatsOpt = Annotated[
    str,
    choice(
        "--junit-repeats",
        "MODE",
        "JUnit repeats: 'auto' reads pytest-repeat / deepeval -r suffixes [..-i-N] as "
        "runs when every testcase of a file has one, and a JUnit 5 @RepeatedTest's "
        "repetitions as repeats of one case; 'flakefinder' reads pytest-flakefinder "
        "copies as runs; 'none' keeps names as they are.",
        ("auto", "flakefinder", "none"),
    ),
]
TargetOpt = Annotated[
    str | None,
    typer.Option(
        "--target",
        metavar="TARGET",
        help="promptfoo results with several prompts x providers: the one to read "
        "(a provider id, a prompt label, or 'PROVIDER PROMPT'; the error lists them).",
    ),
]
ScoreThresholdOpt = Annotated[
    list[ScoreThreshold] | None,
    typer.Option(
        "--score-threshold",
        "--threshold",
        metavar="CHECK=T",
        help="A numeric score of CHECK (an inspect_ai scorer, a DeepEval metric) passes "
        "when >= T (repeatable; --threshold is the old spelling).",
        parser=Threshold(),
    ),
]
PartialOpt = Annotated[
    str,
    choice(
        "--partial",
        "AS",
        "inspect_ai 'P' (partially correct) counts as: fail, pass or unscored.",
        ("fail", "pass", "unscored"),
    ),
]
