"""``gatecal simulate``: every gate's false alarm and detection, exact and simulated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import gatecal
from gatecal._common.defaults import DEFAULT_GATES, DEFAULT_RUNS, DEFAULT_SEED
from gatecal.cli._errors import library_errors
from gatecal.cli._groups import grouped
from gatecal.cli._inputs import NoiseSweep, NoiseSweepOpt, SuiteOptions, SuiteOptionsOpt
from gatecal.cli._options import FormatOpt, GatesOpt, OutOpt, file_option, runs, seed
from gatecal.cli._outputs import Outputs, ProgressBar
from gatecal.cli._values import Workers

if TYPE_CHECKING:
    from gatecal._model.gates import Gate


@grouped(first=["cases"], after={"flip": "cases"})
def simulate(
    *,
    n_runs: Annotated[int, runs("Simulated CI runs per build and flip rate.")] = DEFAULT_RUNS,
    root_seed: Annotated[int, seed("Root seed, >= 0; same seed, same output.")] = DEFAULT_SEED,
    shape: SuiteOptionsOpt,
    noise: NoiseSweepOpt,
    gates: GatesOpt = DEFAULT_GATES,  # type: ignore[assignment]  # parsed by GateList
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            metavar="N",
            help="Workers for large simulations (auto: the cores available; on Linux forked "
            "copies of this process, elsewhere a thread and processes); the output does not "
            "change.",
            parser=Workers(),
        ),
    ] = "auto",  # type: ignore[assignment]  # parsed by Workers
    chart: Annotated[
        Path | None,
        file_option("--chart", "Also save the first flip rate's gate chart (.png/.svg)."),
    ] = None,
) -> None:
    """How often each gate fails a healthy build and catches a regressed one.

    For every flip rate, prints the seed article's table (gate | healthy build fails it |
    regressed build fails it) with the simulated count of failing runs next to the exact
    probability, the mean pass rates, which rules are the same gate, and whether each
    simulated count lies inside the 99% binomial interval of its exact probability.

    Example: gatecal simulate --cases 12 --flip 0.03,0.08
    """
    outputs = Outputs(("--out", out), ("--chart", chart), inputs=shape.inputs())
    report = _simulate(shape, noise, gates, n_runs, root_seed, workers)
    outputs.put("--out", gatecal.render(report, fmt))
    outputs.chart(lambda charts: charts.plot_gate_chart(report))
    outputs.commit()


def _simulate(
    shape: SuiteOptions,
    noise: NoiseSweep,
    gates: tuple[Gate, ...],
    n_runs: int,
    root_seed: int,
    workers: int | None,
) -> gatecal.SimulationReport:
    suite, judge = shape.model(noise.judge)
    with library_errors(), ProgressBar(total=2 * len(noise.flips) * max(n_runs, 0)) as bar:
        return gatecal.simulate_gates(
            suite,
            **noise.arguments(judge),
            gates=gates,
            n_runs=n_runs,
            rng=root_seed,
            workers=workers,
            progress=bar,
        )
