"""The ``gatecal`` command line: parse, call the library, print. No maths here."""

from __future__ import annotations

import errno
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

import gatecal
from gatecal._common.validate import ParameterError, check_probability

__all__ = ["app", "main"]

app = typer.Typer(
    name="gatecal",
    help="Calibrate the CI gates of LLM-judge test suites.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

#: The largest suite the command line builds: exact maths is quadratic in the cases, so a
#: typo like --cases 100000000 is refused at once instead of exhausting memory.
MAX_CASES = 50_000
MAX_CHECKS = 1_000
MAX_RUNS = 10**10

#: Library parameter -> the option that sets it, so errors name what the user typed.
_OPTION = {
    "cases": "--cases",
    "judge_checks": "--judge-checks",
    "code_checks": "--code-checks",
    "failing": "--failing",
    "flip": "--flip",
    "gate": "--gates",
    "gates": "--gates",
    "n_runs": "--runs",
    "seed": "--seed",
    "workers": "--workers",
    "icc": "--icc",
    "fpr": "--fpr",
    "fnr": "--flip",
    "unparseable": "--unparseable",
    "regression": "--regression",
    "false_alarm": "--false-alarm",
    "detection": "--detection",
    "max_cases": "--max-cases",
}


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gatecal {gatecal.__version__}\n")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Calibrate the CI gates of LLM-judge test suites.

    Every gate rule reduces to "at least k_min of n cases pass"; gatecal tells how
    often it fails a healthy build (false alarm) and how often it fails a regressed
    one (detection), exactly and by seeded simulation, side by side.
    """


class CliError(typer.TyperException):
    """A bad value or file: one line on stderr, exit code 2."""

    exit_code = 2


def _from_library(exc: ParameterError) -> CliError:
    option = _OPTION.get(exc.name, exc.name)
    # a rule that names another library parameter names its option too
    rule = re.sub(r"`(\w+)`", lambda m: _OPTION.get(m.group(1), m.group(0)), exc.rule)
    return CliError(f"{option} {rule} (got {exc.value!r})")


def _load_spec(path: Path) -> gatecal.SuiteSpec:
    try:
        return gatecal.load_spec(path)
    except gatecal.SpecError as exc:
        raise CliError(f"--suite {exc}") from None


def _probability(option: str, text: str | None, default: float = 0.0) -> float:
    """Parse a probability option; None gives `default`."""
    if text is None:
        return default
    try:
        return check_probability(option, text.strip())
    except ParameterError:
        raise CliError(f"{option} must be a number in [0, 1] (got {text!r})") from None


def _suite_and_rates(
    suite_file: Path | None,
    cases: str | None,
    judge_checks: str | None,
    code_checks: str | None,
    failing: str | None,
) -> tuple[gatecal.Suite, dict[str, tuple[float, float]], dict[str, tuple[float, float]]]:
    """The suite from --suite, or from the shape options; with the spec's own rates."""
    shape = {
        "--cases": cases,
        "--judge-checks": judge_checks,
        "--code-checks": code_checks,
        "--failing": failing,
    }
    if suite_file is not None:
        given = next((opt for opt, value in shape.items() if value is not None), None)
        if given:
            raise CliError(f"{given} can't be combined with --suite (got {shape[given]!r})")
        spec = _load_spec(suite_file)
        return spec.suite, spec.per_check, spec.per_case
    n_cases = 12 if cases is None else _whole("--cases", cases)
    if n_cases > MAX_CASES:
        raise CliError(f"--cases must be at most {MAX_CASES:,} on the command line (got {cases!r})")
    suite = gatecal.Suite.uniform(
        cases=n_cases,
        judge_checks=2 if judge_checks is None else _checks("--judge-checks", judge_checks),
        code_checks=1 if code_checks is None else _checks("--code-checks", code_checks),
        failing=None if failing is None else _whole("--failing", failing),
    )
    return suite, {}, {}


def _noise(
    fnr: float, fpr: str | None, unparseable: str | None, icc: str | None, rates: Any
) -> gatecal.JudgeNoise:
    """The noise template from the options (the flip rate is set per block)."""
    per_check, per_case = rates
    return gatecal.JudgeNoise(
        fnr=fnr,
        fpr=_probability("--fpr", fpr, fnr),
        unparseable=_probability("--unparseable", unparseable),
        icc=_open_unit("--icc", icc, low_open=False, high_open=True) if icc is not None else 0.0,
        per_check=per_check,
        per_case=per_case,
    )


def _whole(option: str, text: str) -> int:
    """Parse a whole number of ASCII digits (int() also takes '٣' and '1_0'); the library
    checks its range."""
    raw = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", raw):
        raise CliError(f"{option} must be a whole number (got {text!r})")
    return int(raw)


def _bounded(option: str, text: str, limit: int, why: str) -> int:
    """A whole number with a command-line limit, so a typo cannot run for hours."""
    value = _whole(option, text)
    if value > limit:
        raise CliError(f"{option} must be at most {limit:,} ({why}) (got {text!r})")
    return value


def _checks(option: str, text: str) -> int:
    return _bounded(option, text, MAX_CHECKS, "checks per case on the command line")


def _runs(text: str) -> int:
    return _bounded("--runs", text, MAX_RUNS, "10^10 runs take about ten minutes")


def _seed(text: str) -> int:
    seed = _whole("--seed", text)
    if seed < 0:
        raise CliError(f"--seed must be a whole number >= 0 (got {text!r})")
    return seed


def _open_unit(option: str, text: str | None, *, low_open: bool, high_open: bool) -> float:
    """A number in [0, 1] with either end excluded, e.g. a confidence level in (0, 1)."""
    interval = ("(" if low_open else "[") + "0, 1" + (")" if high_open else "]")
    try:
        value = _probability(option, text)
    except CliError:
        raise CliError(f"{option} must be a number in {interval} (got {text!r})") from None
    if (low_open and value == 0.0) or (high_open and value == 1.0):
        raise CliError(f"{option} must be a number in {interval} (got {text!r})")
    return value


def _parse_flips(text: str) -> list[float]:
    flips = []
    for part in text.split(","):
        try:
            flips.append(check_probability("flip", part.strip()))
        except ParameterError:
            rule = "must be a comma-separated list of numbers in [0, 1]"
            raise CliError(f"--flip {rule} (got {part.strip()!r})") from None
    return flips


def _check_out(out: Path | None, option: str = "--out") -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    _Outputs((option, out))


def _write_atomically(out: Path, text: str, option: str = "--out") -> None:
    """Write `text` to `out` by gatecal's output rules (see gatecal/_common/output.py)."""
    outputs = _Outputs((option, out))
    outputs.put(option, text)
    outputs.commit()


def _emit(text: str, out: Path | None) -> None:
    """Print `text`, or write it to `out` by gatecal's output rules."""
    outputs = _Outputs(("--out", out))
    outputs.put("--out", text)
    outputs.commit()


class _Outputs:
    """A command's outputs: all checked before any work, all written together or none.

    ``--out`` not given means standard output, printed only after every file is written.
    """

    def __init__(self, *pairs: tuple[str, Path | None], inputs: Sequence[str | Path] = ()) -> None:
        from gatecal._common.output import OutputError, check_outputs

        for option, path in pairs:
            if (
                option == "--chart"
                and path is not None
                and path.suffix.lower() not in (".png", ".svg")
            ):
                raise CliError(f"--chart must end in .png or .svg (got {str(path)!r})")
        try:
            planned = check_outputs(pairs, inputs)
        except OutputError as exc:
            raise CliError(str(exc)) from None
        self.planned = {p.option: p for p in planned}
        self.items: list[tuple[Any, bytes]] = []
        self.stdout: str | None = None

    def wants(self, option: str) -> bool:
        return option in self.planned

    def refuse_inputs(self, inputs: Sequence[str | Path]) -> None:
        """Check again once the inputs are known file by file (folders and globs read)."""
        from gatecal._common.output import OutputError, check_outputs

        pairs = [(p.option, p.path) for p in self.planned.values()]
        try:
            check_outputs(pairs, inputs)
        except OutputError as exc:
            raise CliError(str(exc)) from None

    def put(self, option: str, data: str | bytes) -> None:
        if option in self.planned:
            raw = data.encode("utf-8") if isinstance(data, str) else data
            self.items.append((self.planned[option], raw))
        elif option == "--out":
            self.stdout = data if isinstance(data, str) else data.decode("utf-8")

    def chart(self, draw: Any, option: str = "--chart") -> None:
        """Draw with `draw(charts)`, if the chart was asked for."""
        if option in self.planned:
            from gatecal import charts

            self.put(option, charts.chart_bytes(draw(charts), self.planned[option].path.suffix))

    def commit(self) -> None:
        from gatecal._common.output import OutputError, write_outputs

        try:
            write_outputs(self.items)
        except OutputError as exc:
            raise CliError(str(exc)) from None
        if self.stdout is not None:
            if sys.stdout.isatty():
                from gatecal._render.simulate import safe_terminal

                sys.stdout.write(safe_terminal(self.stdout))
            else:
                sys.stdout.write(self.stdout)


class _ProgressBar:
    """A rich progress bar on stderr, shown only on a terminal and after one second."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.done = 0
        self.start = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, runs: int) -> None:
        self.done += runs
        if not self.enabled:
            return
        if self.bar is None and time.monotonic() - self.start > 1.0:
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("simulating runs", total=self.total)
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _int_option(help_text: str, **kwargs: Any) -> Any:
    """A whole-number option read as text, so a bad value is reported with the value."""
    return typer.Option(metavar="N", help=help_text, **kwargs)


# Options shared by several commands, declared once.
CasesOpt = Annotated[str | None, _int_option("Cases in the golden dataset.  [default: 12]")]
JudgeChecksOpt = Annotated[
    str | None, _int_option("LLM-judge checks per case; each can flip.  [default: 2]")
]
CodeChecksOpt = Annotated[
    str | None, _int_option("Plain-code checks per case; never wrong.  [default: 1]")
]
FailingOpt = Annotated[
    str | None,
    _int_option(
        "Cases that fail a code check in the regressed build (a judge check if there "
        "are no code checks). Default: a quarter of --cases, at least 1."
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
FprOpt = Annotated[
    str | None,
    typer.Option(
        metavar="P",
        help="Rate of false 'yes' on a truly failing check, if it differs from the "
        "flip rate (then --flip is the rate of false 'no').",
    ),
]
UnparseableOpt = Annotated[
    str | None,
    typer.Option(
        metavar="U", help="Share of judge replies that are not a clean yes/no; they fail."
    ),
]
IccOpt = Annotated[
    str | None,
    typer.Option(
        metavar="RHO",
        help="Run-level correlation: each CI run draws its flip rate from a Beta with "
        "the flip rate as mean and this intra-run correlation.",
    ),
]
GatesHelp = (
    "Gate rules, comma-separated: 'all' (every case passes), a pass rate t in [0, 1] "
    "such as 0.90 (rate >= t), or 'fails<=F'."
)
FormatOpt = Annotated[
    str, typer.Option("--format", metavar="FORMAT", help="table, markdown, csv or json.")
]
OutOpt = Annotated[
    Path | None,
    typer.Option(metavar="FILE", help="Write the output to FILE (atomically) instead of stdout."),
]

# How measured runs are read: every command that reads runs takes these.
InputFormatOpt = Annotated[
    str | None,
    typer.Option(
        metavar="FORMAT",
        help="Read every input as this format instead of detecting it from the content: "
        "junit, csv, jsonl, promptfoo, inspect or deepeval.",
    ),
]
AttemptsOpt = Annotated[
    str,
    typer.Option(
        metavar="WHICH",
        help="Reruns of a failed test (pytest-rerunfailures, Surefire flakyFailure): "
        "'first' counts the first attempt (a failure hidden by a rerun stays a failure), "
        "'last' the final outcome.",
    ),
]
JunitRepeatsOpt = Annotated[
    str,
    typer.Option(
        metavar="MODE",
        help="JUnit repeats: 'auto' reads pytest-repeat / deepeval -r suffixes [..-i-N] as "
        "runs when every testcase of a file has one; 'flakefinder' reads "
        "pytest-flakefinder copies as runs; 'none' keeps names as they are.",
    ),
]
TargetOpt = Annotated[
    str | None,
    typer.Option(
        metavar="TARGET",
        help="promptfoo results with several prompts x providers: the one to read "
        "(a provider id, a prompt label, or 'PROVIDER PROMPT'; the error lists them).",
    ),
]
ThresholdOpt = Annotated[
    list[str] | None,
    typer.Option(
        metavar="CHECK=T",
        help="A numeric score of CHECK (an inspect_ai scorer, a DeepEval metric) passes "
        "when >= T (repeatable).",
    ),
]
PartialOpt = Annotated[
    str,
    typer.Option(
        metavar="AS",
        help="inspect_ai 'P' (partially correct) counts as: fail, pass or unscored.",
    ),
]


def _thresholds(items: Sequence[str] | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for item in items or ():
        check, sep, value = item.rpartition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not sep or not check.strip() or number != number or abs(number) == float("inf"):
            raise CliError(f"--threshold must be CHECK=T with a finite number T (got {item!r})")
        out[check.strip()] = number
    return out


def _read_runs(
    option: str,
    paths: Sequence[str],
    regressed: Sequence[str] = (),
    *,
    input_format: str | None = None,
    attempts: str = "first",
    junit_repeats: str = "auto",
    target: str | None = None,
    threshold: Sequence[str] | None = None,
    partial: str = "fail",
) -> gatecal.RunsData:
    """Read runs, turning every reading error into one line that names `option`."""
    choices = {"--input-format": (input_format, (None, *gatecal.INPUT_FORMATS)),
               "--attempts": (attempts, ("first", "last")),
               "--junit-repeats": (junit_repeats, ("auto", "flakefinder", "none")),
               "--partial": (partial, ("fail", "pass", "unscored"))}  # fmt: skip
    for name, (value, allowed) in choices.items():
        if value not in allowed:
            words = ", ".join(a for a in allowed if a)
            raise CliError(f"{name} must be one of {words} (got {value!r})")
    try:
        return gatecal.read_runs(
            paths, regressed, input_format=input_format, attempts=attempts,
            junit_repeats=junit_repeats, target=target, thresholds=_thresholds(threshold),
            partial=partial,
        )  # fmt: skip
    except gatecal.RunsError as exc:
        raise CliError(f"{option} {' '.join(str(exc).split())}") from None
    except OSError as exc:
        raise CliError(f"{option} could not be read ({exc.strerror}: {exc.filename})") from None


def _check_format(fmt: str, allowed: Sequence[str] = ("table", "markdown", "csv", "json")) -> None:
    if fmt not in allowed:
        choices = " or ".join(allowed) if len(allowed) == 2 else f"one of {', '.join(allowed)}"
        raise CliError(f"--format must be {choices} (got {fmt!r})")


@app.command()
def simulate(
    cases: CasesOpt = None,
    flip: Annotated[
        str,
        typer.Option(
            metavar="P[,P...]", help="Judge flip rates: comma-separated numbers in [0, 1]."
        ),
    ] = "0.03,0.08",
    runs: Annotated[str, _int_option("Simulated CI runs per build and flip rate.")] = str(
        gatecal.DEFAULT_RUNS
    ),
    seed: Annotated[str, _int_option("Root seed, >= 0; same seed, same output.")] = str(
        gatecal.DEFAULT_SEED
    ),
    judge_checks: JudgeChecksOpt = None,
    code_checks: CodeChecksOpt = None,
    failing: FailingOpt = None,
    suite_file: SuiteOpt = None,
    fpr: FprOpt = None,
    unparseable: UnparseableOpt = None,
    icc: IccOpt = None,
    gates: Annotated[str, typer.Option(metavar="RULE[,RULE...]", help=GatesHelp)] = (
        gatecal.DEFAULT_GATES
    ),
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    workers: Annotated[
        str,
        _int_option(
            "Worker processes for large simulations (auto: the cores available); "
            "the output does not change."
        ),
    ] = "auto",
    chart: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="Also save the first flip rate's gate chart (.png/.svg)."
        ),
    ] = None,
) -> None:
    """How often each gate fails a healthy build and catches a regressed one.

    For every flip rate, prints the seed article's table (gate | healthy build fails it |
    regressed build fails it) with the simulated count of failing runs next to the exact
    probability, the mean pass rates, which rules are the same gate, and whether each
    simulated count lies inside the 99% binomial interval of its exact probability.

    Example: gatecal simulate --cases 12 --flip 0.03,0.08
    """
    _check_format(fmt)
    outputs = _Outputs(
        ("--out", out), ("--chart", chart), inputs=[suite_file] if suite_file else []
    )
    flips = _parse_flips(flip)
    n_runs = _runs(runs)
    try:
        suite, per_check, per_case = _suite_and_rates(
            suite_file, cases, judge_checks, code_checks, failing
        )
        noise = _noise(flips[0], fpr, unparseable, icc, (per_check, per_case))
        rules = gatecal.parse_gates(gates)
        bar = _ProgressBar(total=2 * len(flips) * max(n_runs, 0))
        try:
            report = gatecal.simulate_gates(
                suite,
                flips=flips,
                noise=noise,
                fixed_fpr=fpr is not None,
                gates=rules,
                n_runs=n_runs,
                seed=_seed(seed),
                workers=None if workers == "auto" else _whole("--workers", workers),
                progress=bar,
            )
        finally:
            bar.close()
    except ParameterError as exc:
        raise _from_library(exc) from None
    outputs.put("--out", gatecal.render(report, fmt))
    outputs.chart(lambda charts: charts.plot_gate_chart(report))
    outputs.commit()


@app.command()
def golden(
    build: Annotated[
        str, typer.Option(metavar="BUILD", help="healthy, regressed or both.")
    ] = "both",
    threshold: Annotated[
        str, typer.Option(metavar="T", help="The gate: pass rate at least T, in [0, 1].")
    ] = "0.90",
    dataset: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="A golden dataset (JSON); default: the packaged one."),
    ] = None,
    judge: Annotated[
        str,
        typer.Option(
            metavar="JUDGE",
            help="rule-based (word overlap, free) or openai (a real model; needs "
            "OPENAI_API_KEY and pip install 'gatecal[live]').",
        ),
    ] = "rule-based",
    model: Annotated[
        str, typer.Option(metavar="NAME", help="Model for --judge openai.")
    ] = "gpt-4o-mini",
    base_url: Annotated[
        str | None,
        typer.Option(metavar="URL", help="Any OpenAI-compatible endpoint for --judge openai."),
    ] = None,
    timeout: Annotated[
        str,
        typer.Option(
            metavar="SECONDS",
            help="--judge openai: give up on a judge call after this long (one retry).",
        ),
    ] = "20",
    fmt: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="table or json.")
    ] = "table",
    export_suite: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Also write both runs' truth matrix as a suite spec for "
            "'gatecal simulate --suite FILE'.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Write the output to FILE instead of stdout."),
    ] = None,
) -> None:
    """Run the golden suite on the scripted healthy and regressed builds and apply the gate.

    Each of the dataset's cases is answered by the (scripted) support assistant and checked
    three ways: relevancy and fact checking by the judge, contains-facts by plain code.

    Example: gatecal golden --export-suite golden-suite.json
    """
    from gatecal import evaluators as ev

    builds = {"both": gatecal.BUILDS, "healthy": ("healthy",), "regressed": ("regressed",)}
    if build not in builds:
        raise CliError(f"--build must be healthy, regressed or both (got {build!r})")
    _check_format(fmt, ("table", "json"))
    if judge not in ("rule-based", "openai"):
        raise CliError(f"--judge must be rule-based or openai (got {judge!r})")
    try:
        rate = check_probability("threshold", threshold.strip())
    except ParameterError:
        raise CliError(f"--threshold must be a number in [0, 1] (got {threshold!r})") from None
    outputs = _Outputs(("--out", out), ("--export-suite", export_suite),
                       inputs=[dataset] if dataset else [])  # fmt: skip
    try:
        seconds = float(timeout)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= 3600:
        raise CliError(f"--timeout must be a number of seconds in (0, 3600] (got {timeout!r})")
    try:
        cases = ev.load_golden(dataset)
    except ev.GoldenDataError as exc:
        raise CliError(f"--dataset {exc}") from None
    the_judge: ev.Judge
    if judge == "openai":
        if not os.environ.get("OPENAI_API_KEY") and base_url is None:
            raise CliError("--judge openai needs OPENAI_API_KEY in the environment (got none)")
        try:
            the_judge = ev.VerdictNormalizingJudge(
                ev.OpenAIJudge(model, base_url=base_url, timeout=seconds, max_retries=1)
            )
        except ImportError as exc:
            raise CliError(f"--judge openai: {exc}") from None
    else:
        the_judge = ev.RuleBasedJudge()
    wanted = builds[build] if export_suite is None else gatecal.BUILDS
    try:
        reports = {b: ev.run_golden(b, the_judge, cases) for b in wanted}
    except (ev.GoldenRunError, ValueError) as exc:
        raise CliError(f"golden run failed: {' '.join(str(exc).split())}") from None
    text = ev.render_golden({b: reports[b] for b in builds[build]}, rate, fmt)
    if export_suite is not None:
        spec = ev.suite_spec(reports["healthy"], reports["regressed"])
        outputs.put("--export-suite", json.dumps(spec, indent=2) + "\n")
    outputs.put("--out", text)
    outputs.commit()


_REGRESSION_OPTION = typer.Option(
    metavar="R",
    help="The regression to catch: "
    "a share of the cases written with a decimal point or a percent sign (0.10, 10%), "
    "rounded half up to whole cases; or a whole number of cases (3). Ambiguous forms "
    "such as 3.0 are refused.",
)


def _regression(text: str) -> gatecal.Regression:
    try:
        return gatecal.parse_regression(text)
    except ParameterError as exc:
        raise _from_library(exc) from None


def _policies(text: str, tie: str, call_icc: str | None) -> list[gatecal.Policy]:
    if tie not in ("fail", "pass"):
        raise CliError(f"--tie must be fail or pass (got {tie!r})")
    level = _open_unit("--call-icc", call_icc, low_open=False, high_open=True) if call_icc else 0.0
    out = []
    for part in text.split(","):
        try:
            out.append(gatecal.parse_policy(part, tie=tie, call_icc=level))
        except ParameterError as exc:
            raise CliError(f"--policies {exc.rule} (got {part.strip()!r})") from None
    return out


_POLICIES_OPTION = typer.Option(
    metavar="P[,P...]",
    help="Policies: single, majority-M (M judge calls per check, majority wins), "
    "repeat-K-of-N (each case passes K of N runs), rerun-failing-R, rerun-R (rerun the "
    "suite while the gate fails), or several joined by '+'.",
)


@app.command()
def plan(
    flip: Annotated[
        str, typer.Option(metavar="P", help="Judge flip rate (false 'no') in [0, 1].")
    ] = "0.08",
    regression: Annotated[str, _REGRESSION_OPTION] = "0.10",
    false_alarm: Annotated[
        str, typer.Option(metavar="A", help="Most false alarms you accept, e.g. 0.05.")
    ] = "0.05",
    detection: Annotated[
        str, typer.Option(metavar="D", help="Least detection you need, e.g. 0.95.")
    ] = "0.95",
    judge_checks: Annotated[str, _int_option("LLM-judge checks per case.")] = "2",
    code_checks: Annotated[str, _int_option("Plain-code checks per case.")] = "1",
    fpr: FprOpt = None,
    unparseable: UnparseableOpt = None,
    icc: IccOpt = None,
    policies: Annotated[str, _POLICIES_OPTION] = "single,majority-3,rerun-1",
    tie: Annotated[str, typer.Option(help="Even majorities: a tie fails or passes.")] = "fail",
    call_icc: Annotated[
        str | None,
        typer.Option(metavar="RHO", help="Correlation between repeated calls on one check."),
    ] = None,
    max_cases: Annotated[
        str | None,
        _int_option("Largest suite to try, at most 2000000.  [default: no cap; 5000 with --icc]"),
    ] = None,
    fmt: FormatOpt = "table",
    out: OutOpt = None,
) -> None:
    """How many cases you need: the smallest suite and gate that meet both targets.

    Cases have the article's shape (judge checks and code checks); the regression makes a
    share or a number of cases fail a code check. Every suite size is tried in turn (exact
    binomial maths, no simulation), for the plain policy and the alternatives, with their
    expected judge calls per CI run, so you can trade a bigger suite against repeated calls.

    Example: gatecal plan --flip 0.08 --regression 0.10 --false-alarm 0.05 --detection 0.95
    """
    _check_format(fmt)
    _check_out(out)
    p = _probability("--flip", flip)
    reg = _regression(regression)
    try:
        noise = _noise(p, fpr, unparseable, icc, ({}, {}))
        result = gatecal.plan_suite(
            noise=noise,
            regression=reg,
            false_alarm=_probability("--false-alarm", false_alarm),
            detection=_probability("--detection", detection),
            judge_checks=_checks("--judge-checks", judge_checks),
            code_checks=_checks("--code-checks", code_checks),
            policies=_policies(policies, tie, call_icc),
            max_cases=None if max_cases is None else _whole("--max-cases", max_cases),
        )
    except ParameterError as exc:
        raise _from_library(exc) from None
    _emit(gatecal.render_plans(result, fmt), out)


@app.command()
def policies(
    flip: Annotated[
        str, typer.Option(metavar="P", help="Judge flip rate (false 'no') in [0, 1].")
    ] = "0.08",
    cases: CasesOpt = None,
    judge_checks: JudgeChecksOpt = None,
    code_checks: CodeChecksOpt = None,
    failing: FailingOpt = None,
    suite_file: SuiteOpt = None,
    fpr: FprOpt = None,
    unparseable: UnparseableOpt = None,
    icc: IccOpt = None,
    gates: Annotated[str, typer.Option(metavar="RULE[,RULE...]", help=GatesHelp)] = "all,0.80",
    policies: Annotated[str, _POLICIES_OPTION] = (
        "single,majority-3,majority-5,rerun-failing-1,rerun-1"
    ),
    tie: Annotated[str, typer.Option(help="Even majorities: a tie fails or passes.")] = "fail",
    call_icc: Annotated[
        str | None,
        typer.Option(metavar="RHO", help="Correlation between repeated calls on one check."),
    ] = None,
    runs: Annotated[str, _int_option("CI runs to simulate call by call, as a check.")] = "20000",
    seed: Annotated[str, _int_option("Root seed.")] = str(gatecal.DEFAULT_SEED),
    fmt: FormatOpt = "table",
    out: OutOpt = None,
) -> None:
    """What quieting the judge costs: false alarm, detection and judge calls per policy.

    For each policy (majority votes, repeated cases, reruns of failing cases or of the
    whole suite) and gate: the exact false-alarm and detection rates and the expected
    judge calls per CI run, each beside a call-by-call simulation that checks it.

    Example: gatecal policies --flip 0.08 --gates 0.80
    """
    _check_format(fmt)
    _Outputs(("--out", out), inputs=[suite_file] if suite_file else [])
    p = _probability("--flip", flip)
    try:
        suite, per_check, per_case = _suite_and_rates(
            suite_file, cases, judge_checks, code_checks, failing
        )
        noise = _noise(p, fpr, unparseable, icc, (per_check, per_case))
        report = gatecal.compare_policies(
            suite,
            noise,
            gatecal.parse_gates(gates),
            _policies(policies, tie, call_icc),
            n_runs=_runs(runs),
            seed=_seed(seed),
        )
    except ParameterError as exc:
        raise _from_library(exc) from None
    _emit(gatecal.render_policies(report, fmt), out)


@app.command()
def recommend(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="RUNS...",
            help="Known-good runs: JUnit XML, promptfoo results, inspect_ai logs, DeepEval "
            "test runs or a long CSV/JSONL table; files, folders (searched recursively) or "
            "glob patterns. 'gatecal runs' shows how they are read.",
            show_default=False,
        ),
    ],
    regressed: Annotated[
        list[str] | None,
        typer.Option(metavar="RUNS", help="Runs of a known-bad build (repeatable)."),
    ] = None,
    regression: Annotated[str | None, _REGRESSION_OPTION] = None,
    false_alarm: Annotated[
        str, typer.Option(metavar="A", help="Most false alarms you accept.")
    ] = "0.05",
    detection: Annotated[str, typer.Option(metavar="D", help="Least detection you need.")] = "0.95",
    confidence: Annotated[
        str, typer.Option(metavar="LEVEL", help="Confidence level of the intervals.")
    ] = "0.95",
    interval: Annotated[
        str, typer.Option(metavar="METHOD", help="wilson, clopper-pearson or jeffreys.")
    ] = "wilson",
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    chart: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Also save the operating curves (.png/.svg)."),
    ] = None,
    export_suite: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Also write the measured suite (each case's failure rate) as a suite spec "
            "for 'gatecal simulate --suite', 'policies --suite' or 'report --suite'.",
        ),
    ] = None,
    input_format: InputFormatOpt = None,
    attempts: AttemptsOpt = "first",
    junit_repeats: JunitRepeatsOpt = "auto",
    target: TargetOpt = None,
    threshold: ThresholdOpt = None,
    partial: PartialOpt = "fail",
) -> None:
    """Measure the judge's noise from repeated runs and recommend the gate.

    Run your suite repeatedly against a known-good build; gatecal estimates how often
    each case fails with confidence intervals, tests whether whole runs vary together,
    and picks the strictest gate whose false-alarm rate stays within budget while it
    still catches the target regression: measured known-bad runs (--regressed), or
    --regression cases failing (default: a quarter of the cases).

    Example: gatecal recommend nightly/*.xml --false-alarm 0.05 --detection 0.95
    """
    _check_format(fmt)
    if interval not in gatecal.CI_METHODS:
        methods = ", ".join(gatecal.CI_METHODS)
        raise CliError(f"--interval must be one of {methods} (got {interval!r})")
    outputs = _Outputs(("--out", out), ("--chart", chart), ("--export-suite", export_suite),
                       inputs=[*paths, *(regressed or ())])  # fmt: skip
    if regressed and regression is not None:
        raise CliError(f"--regression can't be combined with --regressed (got {regression!r})")
    reg = None if regression is None else _regression(regression)
    budget = _probability("--false-alarm", false_alarm)
    power = _probability("--detection", detection)
    level = _open_unit("--confidence", confidence, low_open=True, high_open=True)
    data = _read_runs("RUNS", paths, regressed or (), input_format=input_format,
                      attempts=attempts, junit_repeats=junit_repeats, target=target,
                      threshold=threshold, partial=partial)  # fmt: skip
    outputs.refuse_inputs(data.sources)
    try:
        rec = gatecal.recommend_gate(
            data,
            false_alarm=budget,
            detection=power,
            regression=reg,
            confidence_level=level,
            method=interval,
        )
    except ParameterError as exc:
        raise _from_library(exc) from None
    outputs.put("--out", gatecal.render_recommendation(rec, fmt))
    if export_suite is not None:
        outputs.put("--export-suite", json.dumps(rec.suite_spec(), indent=2) + "\n")
    outputs.chart(
        lambda charts: charts.plot_operating_curves(
            rec.table,
            recommended=rec.recommended,
            budget=rec.false_alarm_target,
            detection_target=rec.detection_target,
        ),
    )
    outputs.commit()


@app.command()
def report(
    out: Annotated[Path, typer.Option(metavar="DIR", help="The report folder (new or empty).")],
    cases: CasesOpt = None,
    judge_checks: JudgeChecksOpt = None,
    code_checks: CodeChecksOpt = None,
    failing: FailingOpt = None,
    suite_file: SuiteOpt = None,
    flip: Annotated[
        str, typer.Option(metavar="P[,P...]", help="Judge flip rates in [0, 1].")
    ] = "0.03,0.08",
    fpr: FprOpt = None,
    unparseable: UnparseableOpt = None,
    icc: IccOpt = None,
    gates: Annotated[str, typer.Option(metavar="RULE[,RULE...]", help=GatesHelp)] = (
        gatecal.DEFAULT_GATES
    ),
    runs: Annotated[str, _int_option("Simulated runs per build and flip rate.")] = "200",
    seed: Annotated[str, _int_option("Root seed.")] = str(gatecal.DEFAULT_SEED),
    runs_file: Annotated[
        list[str] | None,
        typer.Option(metavar="RUNS", help="Measured known-good runs, as for recommend."),
    ] = None,
    regressed: Annotated[
        list[str] | None, typer.Option(metavar="RUNS", help="Measured regressed runs.")
    ] = None,
    regression: Annotated[str | None, _REGRESSION_OPTION] = None,
    false_alarm: Annotated[str, typer.Option(metavar="A", help="The false-alarm budget.")] = "0.05",
    detection: Annotated[str, typer.Option(metavar="D", help="The detection target.")] = "0.95",
    input_format: InputFormatOpt = None,
    attempts: AttemptsOpt = "first",
    junit_repeats: JunitRepeatsOpt = "auto",
    target: TargetOpt = None,
    threshold: ThresholdOpt = None,
    partial: PartialOpt = "fail",
    labels: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Human labels of the judge, as for calibrate."),
    ] = None,
    observed: Annotated[
        str | None,
        typer.Option(metavar="K/N", help="With --labels: a judged pass rate to correct."),
    ] = None,
) -> None:
    """Write a report folder a reviewer can read: charts, tables, index.md and index.html.

    The gate chart for each flip rate, the operating curves, the pass-count distributions,
    a heat map of false alarms over noise and threshold, how many cases are needed and,
    with --runs-file, the measured runs and the recommendation. index.html embeds every
    image and opens offline. The folder is written elsewhere and moved into place.

    Example: gatecal report --cases 12 --flip 0.03,0.08 --out gate-report
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise CliError(f"--out must be a new or empty folder (got {str(out)!r})")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise CliError(f"--out must be in an existing, writable folder (got {str(out)!r})")
    flips = _parse_flips(flip)
    budget = _probability("--false-alarm", false_alarm)
    power = _probability("--detection", detection)
    # every option is checked before any work, also those only --runs-file uses
    reg = None if regression is None else _regression(regression)
    if regressed and not runs_file:
        raise CliError(f"--regressed needs --runs-file (got {regressed[0]!r})")
    if regressed and regression is not None:
        raise CliError(f"--regression can't be combined with --regressed (got {regression!r})")
    if observed is not None and labels is None:
        raise CliError(f"--observed needs --labels (got {observed!r})")
    try:
        suite, per_check, per_case = _suite_and_rates(
            suite_file, cases, judge_checks, code_checks, failing
        )
        noise = _noise(flips[0], fpr, unparseable, icc, (per_check, per_case))
        simulation = gatecal.simulate_gates(
            suite,
            flips=flips,
            noise=noise,
            fixed_fpr=fpr is not None,
            gates=gatecal.parse_gates(gates),
            n_runs=_runs(runs),
            seed=_seed(seed),
        )
        recommendation = None
        if runs_file:
            data = _read_runs("--runs-file", runs_file, regressed or (),
                              input_format=input_format, attempts=attempts,
                              junit_repeats=junit_repeats, target=target,
                              threshold=threshold, partial=partial)  # fmt: skip
            recommendation = gatecal.recommend_gate(
                data, false_alarm=budget, detection=power, regression=reg
            )
    except ParameterError as exc:
        raise _from_library(exc) from None
    calibration = _report_calibration(labels, observed)
    from gatecal.report import write_report

    try:
        written = write_report(
            out,
            simulation,
            recommendation=recommendation,
            false_alarm=budget,
            detection=power,
            calibration=calibration,
        )
    except OSError as exc:
        raise CliError(f"--out could not be written (got {str(out)!r}: {exc})") from None
    sys.stdout.write(f"wrote {len(written.files)} files to {written.folder}/ (open index.html)\n")


@app.command()
def runs(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="RUNS...",
            help="Files, folders (searched recursively) or glob patterns, as for recommend.",
            show_default=False,
        ),
    ],
    regressed: Annotated[
        list[str] | None,
        typer.Option(metavar="RUNS", help="Runs of a known-bad build (repeatable)."),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="table or markdown (what was read), json (counts and the per-file "
            "mapping), csv or jsonl (the normalised long table: gatecal converts).",
        ),
    ] = "table",
    out: OutOpt = None,
    input_format: InputFormatOpt = None,
    attempts: AttemptsOpt = "first",
    junit_repeats: JunitRepeatsOpt = "auto",
    target: TargetOpt = None,
    threshold: ThresholdOpt = None,
    partial: PartialOpt = "fail",
) -> None:
    """Show how measured runs are read, before anyone trusts a number.

    The format detected per file and how runs were identified, runs x cases x checks,
    builds and sessions, skipped / error / unscored counts, rerun attempts, cache
    warnings, and for small inputs the case-by-run grid. --format csv or jsonl writes
    the normalised long table, which every command reads back.

    Example: gatecal runs artefacts/ --format csv --out runs.csv
    """
    from gatecal.readers._summary import RUNS_FORMATS, render_runs

    _check_format(fmt, RUNS_FORMATS)
    outputs = _Outputs(("--out", out), inputs=[*paths, *(regressed or ())])
    data = _read_runs("RUNS", paths, regressed or (), input_format=input_format,
                      attempts=attempts, junit_repeats=junit_repeats, target=target,
                      threshold=threshold, partial=partial)  # fmt: skip
    outputs.refuse_inputs(data.sources)
    outputs.put("--out", render_runs(data, fmt))
    outputs.commit()


# -- gatecal calibrate -------------------------------------------------------------------


def _observed_pair(text: str) -> tuple[int, int]:
    """Parse --observed K/N."""
    rule = "must be K/N: the judge passed K of N items, whole numbers with 0 <= K <= N, N > 0"
    parts = text.split("/")
    try:
        k, n = (int(part.strip()) for part in parts)
    except ValueError:
        raise CliError(f"--observed {rule} (got {text!r})") from None
    if not 0 <= k <= n or n <= 0:
        raise CliError(f"--observed {rule} (got {text!r})")
    return k, n


def _report_calibration(labels: Path | None, observed: str | None) -> Any:
    """`gatecal report --labels`: the calibration for the report, or None."""
    if labels is None:
        if observed is not None:
            raise CliError(f"--observed needs --labels (got {observed!r})")
        return None
    try:
        return gatecal.calibrate_judge(
            gatecal.read_labels(labels),
            observed=None if observed is None else _observed_pair(observed),
            source=str(labels),
        )
    except gatecal.LabelsError as exc:
        raise CliError(f"--labels {' '.join(str(exc).split())}") from None


_CALIBRATE_OPTION = {
    "confidence_level": "--confidence",
    "width": "--width",
    "check": "--check",
    "observed": "--observed",
    "runs": "--runs",
}


@app.command()
def calibrate(
    labels: Annotated[
        Path,
        typer.Argument(
            metavar="LABELS",
            help="A label table (.csv or .jsonl): item, human, judge, and optionally check "
            "and repeat. Verdicts: pass/fail, yes/no, true/false or 1/0; the judge may also "
            "be unparseable (never counted as a pass).",
            show_default=False,
        ),
    ],
    observed: Annotated[
        str | None,
        typer.Option(metavar="K/N", help="A judged pass rate to correct: K passes of N items."),
    ] = None,
    runs: Annotated[
        list[str] | None,
        typer.Option(
            metavar="RUNS",
            help="Or take the judged pass rate from measured runs (as for recommend; "
            "repeatable): each case's share of passing judge verdicts, pooled.",
        ),
    ] = None,
    check: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Correct with this check's rates (default: pooled)."),
    ] = None,
    confidence: Annotated[
        str, typer.Option(metavar="LEVEL", help="Confidence level of every interval.")
    ] = "0.95",
    width: Annotated[
        str, typer.Option(metavar="W", help="Target interval width for the label plan.")
    ] = "0.10",
    export_suite: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Also write a suite spec whose judge checks carry the measured fnr and fpr, "
            "for simulate, policies, report and check --suite.",
        ),
    ] = None,
    conservative: Annotated[
        bool,
        typer.Option("--conservative", help="Export the upper confidence bounds of fnr and fpr."),
    ] = False,
    suite_file: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            metavar="FILE",
            help="With --export-suite: give these judge checks the measured rates "
            "(default: the article's shape, 12 cases).",
        ),
    ] = None,
    fmt: FormatOpt = "table",
    out: OutOpt = None,
    chart: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Also save the confusion matrix and corrected rate chart (.png/.svg).",
        ),
    ] = None,
) -> None:
    """Measure the judge against human labels; correct a judged pass rate for its errors.

    Prints the confusion matrix; sensitivity and specificity, i.e. the judge's false "no"
    (fnr) and false "yes" (fpr) rates, with exact intervals; Cohen's kappa with its
    interval, Gwet's AC1, accuracy, the unparseable share; how often repeated judgements
    of one item disagree; with --observed or --runs, the true pass rate behind the judged
    one (Rogan-Gladen, with an interval carrying both sampling errors); and how many
    labels of each class a narrower interval needs.

    Example: gatecal calibrate labels.csv --observed 452/500 --export-suite judge.json
    """
    _check_format(fmt)
    inputs = [labels, *(runs or ()), *([suite_file] if suite_file else [])]
    outputs = _Outputs(("--out", out), ("--chart", chart), ("--export-suite", export_suite),
                       inputs=inputs)  # fmt: skip
    if observed is not None and runs:
        raise CliError(f"--observed can't be combined with --runs (got {observed!r})")
    if (conservative or suite_file is not None) and export_suite is None:
        given = "--conservative" if conservative else "--suite"
        raise CliError(f"{given} needs --export-suite (got {given})")
    base = None if suite_file is None else _load_spec(suite_file)
    try:
        table = gatecal.read_labels(labels)
    except gatecal.LabelsError as exc:
        raise CliError(f"LABELS {' '.join(str(exc).split())}") from None
    pair: tuple[float, float] | None = None
    source = ""
    if observed is not None:
        pair = _observed_pair(observed)
    elif runs:
        data = _read_runs("--runs", runs)
        outputs.refuse_inputs(data.sources)
        try:
            pair = gatecal.observed_from_runs(data, check)
        except ParameterError as exc:
            raise CliError(f"{_CALIBRATE_OPTION.get(exc.name, exc.name)} {exc.rule} "
                           f"(got {exc.value!r})") from None  # fmt: skip
        source = f"{len(data.sources)} run files, each case's share of passing verdicts"
    try:
        result = gatecal.calibrate_judge(
            table,
            confidence_level=_open_unit("--confidence", confidence, low_open=True, high_open=True),
            observed=pair,
            observed_source=source,
            check=check,
            width=_open_unit("--width", width, low_open=True, high_open=False),
            source=str(labels),
        )
    except gatecal.LabelsError as exc:
        raise CliError(f"LABELS {' '.join(str(exc).split())}") from None
    except ParameterError as exc:
        raise CliError(f"{_CALIBRATE_OPTION.get(exc.name, exc.name)} {exc.rule} "
                       f"(got {exc.value!r})") from None  # fmt: skip
    spec_text = None
    if export_suite is not None:
        try:
            spec = result.suite_spec(conservative=conservative, base=base)
        except gatecal.SpecError as exc:
            raise CliError(str(exc)) from None
        spec_text = json.dumps(spec, indent=2) + "\n"
    outputs.put("--out", gatecal.render_calibration(result, fmt))
    if spec_text is not None:
        outputs.put("--export-suite", spec_text)
    outputs.chart(lambda charts: charts.plot_calibration(result))
    outputs.commit()


# -- gatecal check -----------------------------------------------------------------------

_CHECK_OPTION = {"gate": "--gate", "gate_from": "--gate-from", "policy": "--policy",
                 "max_errors": "--max-errors", "flaky_rate": "--flaky-rate",
                 "false_alarm": "--false-alarm", "current": "CURRENT",
                 "confidence_level": "--confidence", "method": "--interval"}  # fmt: skip


@app.command()
def check(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="CURRENT...",
            help="The CI run to decide, in any format recommend reads (several files are "
            "one run unless they are reruns: then name the --policy).",
            show_default=False,
        ),
    ],
    baseline: Annotated[
        list[str],
        typer.Option(
            metavar="RUNS",
            help="Known-good runs, as for recommend (repeatable; folders and globs work).",
            show_default=False,
        ),
    ],
    gate: Annotated[
        str | None,
        typer.Option(
            metavar="RULE",
            help="The gate: 'all', a pass rate such as 0.90, or "
            "'fails<=F'. Default: the strictest gate whose false alarm stays within "
            "--false-alarm at the baseline's noise (what recommend calls it).",
        ),
    ] = None,
    gate_from: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Use the gate a 'gatecal recommend --format json' output recommends.",
        ),
    ] = None,
    false_alarm: Annotated[
        str, typer.Option(metavar="A", help="False-alarm budget of the default gate.")
    ] = "0.05",
    policy: Annotated[
        str | None,
        typer.Option(
            metavar="POLICY",
            help="How several current runs combine, in the order "
            "given: rerun-failing-R, rerun-R or repeat-K-of-N; the false alarm and "
            "p-value are that policy's.",
        ),
    ] = None,
    max_errors: Annotated[
        str,
        typer.Option(
            metavar="N",
            help="Error or unscored verdicts tolerated (each "
            "counts as a failure); more makes the evidence incomplete.",
        ),
    ] = "0",
    flaky_rate: Annotated[
        str,
        typer.Option(
            metavar="R",
            help="A failing case that failed in at most this share "
            "of known-good runs is a new failure; above it, known flaky.",
        ),
    ] = "0.02",
    confidence: Annotated[
        str, typer.Option(metavar="LEVEL", help="Confidence level of the intervals.")
    ] = "0.95",
    interval: Annotated[
        str, typer.Option(metavar="METHOD", help="wilson, clopper-pearson or jeffreys.")
    ] = "wilson",
    fmt: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="table, markdown or json.")
    ] = "table",
    out: OutOpt = None,
    summary: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Also write a markdown summary to FILE. When "
            "GITHUB_STEP_SUMMARY is set, the summary is appended there too.",
        ),
    ] = None,
    input_format: InputFormatOpt = None,
    attempts: AttemptsOpt = "first",
    junit_repeats: JunitRepeatsOpt = "auto",
    target: TargetOpt = None,
    threshold: ThresholdOpt = None,
    partial: PartialOpt = "fail",
) -> None:
    """Decide a CI run with a calibrated gate, and say why: exit 0 pass, 1 fail or incomplete.

    Reads the current run and known-good baseline runs, applies the gate, and gives the
    evidence: passing cases against k_min, the gate's false alarm under the baseline's
    noise, the p-value of today's result, and each failing case split into new failures
    (never or almost never failed in the baseline) and known flaky ones, with their
    baseline rates. A baseline case missing from the current run, more errors than
    --max-errors, or an empty run is incomplete evidence: exit 1, naming what is missing.

    Example: gatecal check ci-run.xml --baseline nightly/ --gate-from recommended.json
    """
    from gatecal._render.check import CHECK_FORMATS, render_check

    _check_format(fmt, CHECK_FORMATS)
    if gate is not None and gate_from is not None:
        raise CliError(f"--gate can't be combined with --gate-from (got {gate!r})")
    if interval not in gatecal.CI_METHODS:
        methods = ", ".join(gatecal.CI_METHODS)
        raise CliError(f"--interval must be one of {methods} (got {interval!r})")
    outputs = _Outputs(("--out", out), ("--summary", summary),
                       inputs=[*paths, *baseline, *([gate_from] if gate_from else [])])  # fmt: skip
    budget = _probability("--false-alarm", false_alarm)
    errors_allowed = _whole("--max-errors", max_errors)
    flaky = _probability("--flaky-rate", flaky_rate)
    level = _open_unit("--confidence", confidence, low_open=True, high_open=True)
    try:
        chosen: str | gatecal.RecommendedGate | None = gate
        if gate is not None:
            gatecal.parse_gate(gate)
        if gate_from is not None:
            chosen = gatecal.load_recommended_gate(gate_from)
        if policy is not None:
            gatecal.parse_check_policy(policy)
    except ParameterError as exc:
        option = _CHECK_OPTION.get(exc.name, exc.name)
        raise CliError(f"{option} {exc.rule} (got {exc.value!r})") from None
    base, current = (
        _read_runs(
            option,
            files,
            input_format=input_format,
            attempts=attempts,
            junit_repeats=junit_repeats,
            target=target,
            threshold=threshold,
            partial=partial,
        )
        for option, files in (("--baseline", baseline), ("CURRENT", paths))
    )
    outputs.refuse_inputs([*base.sources, *current.sources])
    try:
        result = gatecal.check_gate(
            current, base, gate=chosen, policy=policy, false_alarm=budget,
            max_errors=errors_allowed, flaky_rate=flaky, confidence_level=level, method=interval,
        )  # fmt: skip
    except ParameterError as exc:
        option = _CHECK_OPTION.get(exc.name, exc.name)
        raise CliError(f"{option} {exc.rule} (got {exc.value!r})") from None
    markdown = render_check(result, "markdown")
    outputs.put("--out", render_check(result, fmt))
    outputs.put("--summary", markdown)
    outputs.commit()
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        try:
            with open(step_summary, "a", encoding="utf-8") as handle:
                handle.write(markdown + "\n")
        except OSError as exc:
            sys.stderr.write(f"gatecal: warning: GITHUB_STEP_SUMMARY could not be appended "
                             f"to ({step_summary!r}: {exc.strerror})\n")  # fmt: skip
    if result.exit_code:
        raise typer.Exit(result.exit_code)


#: Commands that :func:`main` calls directly when every argument is a plain ``--option
#: value`` pair (the headline ``gatecal simulate --cases 12 --flip 0.03,0.08``): option ->
#: parameter. Every one is a text or path option with no callback, flag, envvar or
#: prompt, so typer would pass the same values (tests/test_cli.py checks this table
#: against the command typer builds, and the outputs of both ways).
_DIRECT: dict[str, dict[str, str]] = {
    "simulate": {
        "--cases": "cases",
        "--flip": "flip",
        "--runs": "runs",
        "--seed": "seed",
        "--judge-checks": "judge_checks",
        "--code-checks": "code_checks",
        "--failing": "failing",
        "--suite": "suite_file",
        "--fpr": "fpr",
        "--unparseable": "unparseable",
        "--icc": "icc",
        "--gates": "gates",
        "--format": "fmt",
        "--out": "out",
        "--workers": "workers",
        "--chart": "chart",
    }
}
_PATH_PARAMETERS = frozenset({"suite_file", "out", "chart"})


def _direct_call(args: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would pass to the command `args` name, when it can
    be called without building the command line (typer builds every command and a
    pydantic validator per option first: a third of a second, more than the command);
    None when typer must parse: help, an unknown, repeated or ``--opt=value`` option, a
    value that starts with '-', text that is not valid Unicode, shell completion."""
    if not args or args[0] not in _DIRECT or len(args) % 2 == 0:
        return None
    if "_GATECAL_COMPLETE" in os.environ:
        return None
    options = _DIRECT[args[0]]
    kwargs: dict[str, Any] = {}
    for option, value in zip(args[1::2], args[2::2], strict=True):
        name = options.get(option)
        if name is None or name in kwargs or value.startswith("-"):
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # surrogates from undecodable bytes: typer's rules
            return None
        kwargs[name] = Path(value) if name in _PATH_PARAMETERS else value
    return kwargs


def _call(name: str, kwargs: dict[str, Any]) -> Any:
    """Call command `name` as typer's main loop would, without a click context."""
    command = {"simulate": simulate}[name]
    try:
        return command(**kwargs)
    except EOFError as exc:  # as click: a new line on stderr, then "aborted"
        sys.stderr.write("\n")
        raise typer.Abort() from exc
    except KeyboardInterrupt as exc:
        raise typer.Exit(130) from exc
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # as click: exit 1 on a closed pipe, and no second error while flushing at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        raise SystemExit(1) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code. Errors are one line on stderr."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        direct = _direct_call(args)
        if direct is not None:
            result = _call(args[0], direct)
        else:
            result = typer.main.get_command(app).main(
                args=args, prog_name="gatecal", standalone_mode=False
            )
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        sys.stderr.write("gatecal: aborted\n")
        return 1
    except typer.TyperException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # plain `gatecal`: the help, not an error
            sys.stdout.write(exc.format_message().rstrip() + "\n")
            return 0
        from gatecal._render.simulate import safe_terminal

        message = safe_terminal(" ".join(exc.format_message().split()))
        sys.stderr.write(f"gatecal: error: {message}\n")
        return getattr(exc, "exit_code", 2)
    except BrokenPipeError:
        return 0
    return result if isinstance(result, int) else 0
