"""``gatecal compare``: is the candidate build worse than the baseline on the same cases?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
import typer.core

from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import ReadingOpt, read_runs
from gatecal.cli._options import (
    FormatOpt,
    OutOpt,
    RegressionOpt,
    arguments,
    choice,
    file_option,
    probability,
    seed,
    whole,
)
from gatecal.cli._outputs import Outputs, busy

__all__ = ["PATH_LISTS", "compare"]

#: Options that take one or more paths each: ``--baseline a b c --candidate d e``.
PATH_LISTS = ("--baseline", "--candidate")


PathsOpt = list[str] | None

RunsArgument = Annotated[
    list[str] | None,
    arguments(
        "RUNS",
        "Runs of both builds in tables with a `build` column (healthy = baseline, "
        "regressed = candidate), instead of or besides --baseline and --candidate.",
    ),
]


#: --partial means allow-missing here (its old spelling): inspect_ai's 'P' is --inspect-partial
InspectPartialOpt = Annotated[
    str,
    choice(
        "--inspect-partial",
        "AS",
        "inspect_ai 'P' (partially correct) counts as: fail, pass or unscored.",
        ("fail", "pass", "unscored"),
    ),
]


@grouped(spelled={"partial": InspectPartialOpt})
def compare(
    *,
    paths: RunsArgument = None,
    baseline: Annotated[
        PathsOpt,
        typer.Option(
            "--baseline",
            metavar="RUNS...",
            help="Runs of the baseline build: one or more files, folders or globs (JUnit XML, "
            "promptfoo, inspect_ai, DeepEval, a long CSV/JSONL table).",
        ),
    ] = None,
    candidate: Annotated[
        PathsOpt,
        typer.Option("--candidate", metavar="RUNS...", help="Runs of the candidate build."),
    ] = None,
    alternative: Annotated[
        str,
        choice(
            "--alternative",
            "ALT",
            "worse (one-sided, the default) or two-sided.",
            ("worse", "two-sided"),
        ),
    ] = "worse",
    alpha: Annotated[
        float,
        probability(
            "--alpha",
            "A",
            "Level of the test and of the per-case control.",
            low_open=True,
            high_open=True,
        ),
    ] = 0.05,
    multiplicity: Annotated[
        str,
        choice(
            "--multiplicity",
            "METHOD",
            "Changed cases: tarone (family-wise error: Bonferroni over only the cases "
            "whose runs can reach the level, so a broken case is caught with fewer runs), "
            "holm (family-wise error) or bh (Benjamini-Hochberg, false-discovery rate).",
            ("holm", "bh", "tarone"),
        ),
    ] = "tarone",
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing",
            help="Compare the cases both builds report even when some "
            "are in one build only (otherwise: incomplete evidence, exit 1).",
        ),
    ] = False,
    # compare's old spelling of --allow-missing: --partial means inspect_ai's 'P' score in
    # recommend and check (here --inspect-partial), so it is hidden here but still works
    partial_old: Annotated[bool, typer.Option("--partial", hidden=True)] = False,
    test: Annotated[
        str,
        choice(
            "--test",
            "TEST",
            "auto (McNemar with one run per build, else the run "
            "permutation test), mcnemar, runs or cases (sign-flip over cases; valid "
            "for independent runs only).",
            ("auto", "mcnemar", "runs", "cases"),
        ),
    ] = "auto",
    regression: RegressionOpt = None,
    max_errors: Annotated[
        int,
        whole(
            "--max-errors",
            "Error or unscored verdicts tolerated in both builds together, each counted as "
            "a failure of its case in its run; more is incomplete evidence (exit 1).",
            low=0,
        ),
    ] = 0,
    independent: Annotated[
        bool,
        typer.Option(
            "--assume-independent-runs",
            help="With one run per build, assert the two runs are independent (no "
            "run-to-run correlation: no judge draw, seed or outage shared by a run's "
            "cases). One run per build cannot measure it; without this the decision is "
            "incomplete (exit 1). Under correlation McNemar's false alarm is far above "
            "alpha (about 0.28 at icc 0.05 with 200 cases: reports/compare-size.md).",
        ),
    ] = False,
    oc_samples: Annotated[
        int,
        whole(
            "--oc-samples",
            "Simulated pairs of builds per noise point for the comparison's "
            "own false alarm and detection (0: skip; at most 10,000, a minute or so).",
            low=0,
            high=10_000,
        ),
    ] = 1000,
    seed_value: Annotated[int, seed("Root seed of the simulation.")] = 0,
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    chart: Annotated[
        Path | None,
        file_option("--chart", "Also save each case's pass share in both builds (.png/.svg)."),
    ] = None,
    reading: ReadingOpt,
) -> None:
    """Compare a candidate build with a baseline on the same cases: did it get worse?

    Pairs the two builds by case, tests with an exact test that keeps each run whole
    (so repeats and run-to-run correlation are not mistaken for evidence), names the
    cases that got worse with Tarone's discrete Bonferroni (or Holm's, or
    Benjamini-Hochberg's) error control, and says
    how often this comparison itself raises a false alarm and catches a regression,
    given the baseline's measured noise. Exit 0: no evidence of a regression; 1: a
    regression, or incomplete evidence.

    Example: gatecal compare --baseline main/*.xml --candidate pr/*.xml
    """
    base_paths, cand_paths = list(baseline or ()), list(candidate or ())
    outputs = Outputs(
        ("--out", out), ("--chart", chart), inputs=[*(paths or ()), *base_paths, *cand_paths]
    )
    if not (paths or base_paths):
        raise CliError("--baseline must name the baseline's runs (got nothing)")
    if not (paths or cand_paths):
        raise CliError("--candidate must name the candidate's runs (got nothing)")
    data = read_runs("--baseline/--candidate", [*(paths or ()), *base_paths], cand_paths, reading)
    outputs.refuse_inputs(data.sources)
    roles: dict[Path, str] = {}
    for read in data.files:
        key = Path(read.path).resolve()
        if roles.setdefault(key, read.build) != read.build:
            raise CliError(f"--candidate must not repeat a baseline file (got {read.path!r})")
    builds = data.builds()
    if "healthy" not in builds:
        raise CliError("--baseline must hold baseline runs (got only candidate verdicts)")
    if "regressed" not in builds:
        raise CliError("--candidate must hold candidate runs (got only baseline verdicts)")
    import gatecal

    names = {"test": "--test", "alpha": "--alpha", "regression": "--regression"}
    with library_errors(names), busy("comparing the builds"):
        result = gatecal.compare_builds(
            data,
            alternative=alternative,
            alpha=alpha,
            multiplicity=multiplicity,
            partial=allow_missing or partial_old,
            test=test,
            regression=regression,
            oc_samples=oc_samples,
            rng=seed_value,
            max_errors=max_errors,
            assume_independent_runs=independent,
        )
    outputs.put("--out", gatecal.render_comparison(result, fmt))
    outputs.chart(lambda charts: charts.plot_compare(result))
    outputs.commit()
    if result.exit_code:
        raise typer.Exit(result.exit_code)
