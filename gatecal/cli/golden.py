"""``gatecal golden``: the golden suite on the scripted builds, through the evaluators."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import gatecal
from gatecal.cli._errors import CliError
from gatecal.cli._options import choice, file_option, formats
from gatecal.cli._outputs import Outputs
from gatecal.cli._values import Number, Probability

if TYPE_CHECKING:
    from gatecal.evaluators import Judge

_BUILDS = {"both": ("healthy", "regressed"), "healthy": ("healthy",), "regressed": ("regressed",)}


def golden(
    build: Annotated[
        str,
        choice(
            "--build",
            "BUILD",
            "healthy, regressed or both.",
            tuple(_BUILDS),
            words="healthy, regressed or both",
        ),
    ] = "both",
    pass_rate: Annotated[
        float,
        typer.Option(
            "--pass-rate",
            "--threshold",
            metavar="T",
            help="The gate: pass rate at least T, in [0, 1] (--threshold is the old spelling).",
            parser=Probability("--pass-rate"),
        ),
    ] = 0.90,
    dataset: Annotated[
        Path | None,
        file_option("--dataset", "A golden dataset (JSON); default: the packaged one."),
    ] = None,
    judge: Annotated[
        str,
        choice(
            "--judge",
            "JUDGE",
            "rule-based (word overlap, free) or openai (a real model; needs "
            "OPENAI_API_KEY and pip install openai, gatecal's extra 'live').",
            ("rule-based", "openai"),
        ),
    ] = "rule-based",
    model: Annotated[
        str, typer.Option("--model", metavar="NAME", help="Model for --judge openai.")
    ] = "gpt-4o-mini",
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", metavar="URL", help="Any OpenAI-compatible endpoint for --judge openai."
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            metavar="SECONDS",
            help="--judge openai: give up on a judge call after this long (one retry).",
            parser=Number("--timeout", 0.0, 3600.0, "must be a number of seconds in (0, 3600]"),
        ),
    ] = 20.0,
    fmt: Annotated[str, formats("table or json.", ("table", "json"))] = "table",
    export_suite: Annotated[
        Path | None,
        file_option(
            "--export-suite",
            "Also write both runs' truth matrix as a suite spec for "
            "'gatecal simulate --suite FILE'.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        file_option("--out", "Write the output to FILE instead of stdout."),
    ] = None,
) -> None:
    """Run the golden suite on the scripted healthy and regressed builds and apply the gate.

    Each of the dataset's cases is answered by the (scripted) support assistant and checked
    three ways: relevancy and fact checking by the judge, contains-facts by plain code.

    Example: gatecal golden --export-suite golden-suite.json
    """
    outputs = Outputs(
        ("--out", out), ("--export-suite", export_suite), inputs=[dataset] if dataset else []
    )
    the_judge = _judge(judge, model, base_url, timeout)
    from gatecal import evaluators as ev

    try:
        cases = ev.load_golden(dataset)
    except ev.GoldenDataError as exc:
        raise CliError(f"--dataset {exc}") from None
    wanted = _BUILDS[build] if export_suite is None else gatecal.BUILDS
    try:
        reports = {b: ev.run_golden(b, the_judge, cases) for b in wanted}
    except (ev.GoldenRunError, ValueError) as exc:
        raise CliError(f"golden run failed: {' '.join(str(exc).split())}") from None
    text = ev.render_golden({b: reports[b] for b in _BUILDS[build]}, pass_rate, fmt)
    if export_suite is not None:
        spec = ev.suite_spec(reports["healthy"], reports["regressed"])
        outputs.put("--export-suite", json.dumps(spec, indent=2) + "\n")
    outputs.put("--out", text)
    outputs.commit()


def _judge(judge: str, model: str, base_url: str | None, timeout: float) -> Judge:
    from gatecal import evaluators as ev

    if judge == "rule-based":
        return ev.RuleBasedJudge()
    if not os.environ.get("OPENAI_API_KEY") and base_url is None:
        raise CliError("--judge openai needs OPENAI_API_KEY in the environment (got none)")
    try:
        return ev.VerdictNormalizingJudge(
            ev.OpenAIJudge(model, base_url=base_url, timeout=timeout, max_retries=1)
        )
    except ImportError as exc:
        raise CliError(f"--judge openai: {exc}") from None
