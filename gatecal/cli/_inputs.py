"""What several commands read the same way: the suite, the judge noise, measured runs, labels.

The suite, the noise and the reading options are option groups (see ``_groups``): each
declared once, by its builder below, and handed to a command as one object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import gatecal
from gatecal._common.defaults import DEFAULT_FLIPS
from gatecal._common.validate import ParameterError
from gatecal._model.sequential import spellings
from gatecal.cli._errors import CliError, library_errors
from gatecal.cli._groups import Group, grouped
from gatecal.cli._options import (
    AttemptsOpt,
    CasesOpt,
    CaseSpreadOpt,
    CodeChecksOpt,
    FailingOpt,
    FlipOpt,
    FlipsOpt,
    FprOpt,
    IccOpt,
    InputFormatOpt,
    JudgeChecksOpt,
    JunitRepeatsOpt,
    PartialOpt,
    ScoreThresholdOpt,
    SuiteOpt,
    SystematicOpt,
    TargetOpt,
    UnparseableOpt,
)
from gatecal.cli._outputs import reading as reading_files
from gatecal.cli._values import thresholds

if TYPE_CHECKING:
    from gatecal._analyses.calibrate.judge import Calibration
    from gatecal._analyses.policies.rules import Policy
    from gatecal._model.spec import SuiteSpec
    from gatecal._model.suite import JudgeNoise, Suite
    from gatecal.readers._base import ReadOptions
    from gatecal.readers._data import RunsData

__all__ = [
    "NoiseOpt",
    "NoiseSweep",
    "NoiseSweepOpt",
    "Reading",
    "ReadingOpt",
    "SuiteOptions",
    "SuiteOptionsOpt",
    "load_spec",
    "parse_policies",
    "read_runs",
    "report_calibration",
]

Rates = dict[str, tuple[float, float]]


def load_spec(path: Path) -> SuiteSpec:
    try:
        return gatecal.load_spec(path)
    except gatecal.SpecError as exc:
        raise CliError(f"--suite {exc}") from None


# -- the suite: a --suite file or the shape options, one group --


@dataclass(frozen=True, slots=True)
class SuiteOptions:
    """The suite as given: the shape options, or a --suite file (checked when read): an
    option group (its fields are the options)."""

    cases: CasesOpt = None
    judge_checks: JudgeChecksOpt = None
    code_checks: CodeChecksOpt = None
    failing: FailingOpt = None
    suite_file: SuiteOpt = None

    def inputs(self) -> list[Path]:
        """The files read, which no output may replace."""
        return [] if self.suite_file is None else [self.suite_file]

    def read(self) -> tuple[Suite, Rates, Rates]:
        """The suite from --suite, or from the shape options; with the spec's own rates."""
        shape = {
            "--cases": self.cases,
            "--judge-checks": self.judge_checks,
            "--code-checks": self.code_checks,
            "--failing": self.failing,
        }
        if self.suite_file is not None:
            given = next((opt for opt, value in shape.items() if value is not None), None)
            if given:
                raise CliError(
                    f"{given} can't be combined with --suite (got {str(shape[given])!r})"
                )
            spec = load_spec(self.suite_file)
            return spec.suite, spec.per_check, spec.per_case
        suite = gatecal.Suite.uniform(
            cases=12 if self.cases is None else self.cases,
            judge_checks=2 if self.judge_checks is None else self.judge_checks,
            code_checks=1 if self.code_checks is None else self.code_checks,
            failing=self.failing,
        )
        return suite, {}, {}

    def model(self, noise: JudgeNoise) -> tuple[Suite, JudgeNoise]:
        """The suite, and `noise` with the --suite file's own rates."""
        with library_errors():
            suite, per_check, per_case = self.read()
            if per_check or per_case:  # checked again: a case spread refuses them
                noise = dataclasses.replace(noise, per_check=per_check, per_case=per_case)
        return suite, noise


#: The suite: --cases, --judge-checks, --code-checks, --failing, or --suite FILE.
SuiteOptionsOpt = Annotated[SuiteOptions, Group(SuiteOptions)]


# -- the judge's noise: one group, handed to each command that models it as one object --


def noise_terms(
    fpr: FprOpt = None,
    unparseable: UnparseableOpt = None,
    icc: IccOpt = None,
    case_spread: CaseSpreadOpt = None,
    systematic: SystematicOpt = None,
) -> dict[str, float]:
    """The noise options beside the flip rate, named as `JudgeNoise` names them: those
    given. A new noise option is one more parameter here (and its field in JudgeNoise)."""
    return {name: value for name, value in locals().items() if value is not None}


def noise_at(flip: float, terms: Mapping[str, float]) -> JudgeNoise:
    """The judge noise at flip rate `flip`, checked: a bad combination is one line."""
    with library_errors():
        return gatecal.JudgeNoise.flip(flip, **terms)


NoiseTermsOpt = Annotated[dict[str, float], Group(noise_terms)]


@grouped
def judge_noise(flip: FlipOpt = 0.08, *, terms: NoiseTermsOpt) -> JudgeNoise:
    """The noise options as one JudgeNoise (policies, plan)."""
    return noise_at(flip, terms)


@dataclass(frozen=True, slots=True)
class NoiseSweep:
    """The noise at each of several flip rates (simulate, report): `judge` at the first;
    the false "yes" rate follows each rate unless --fpr fixed it (`fixed_fpr`)."""

    judge: JudgeNoise
    flips: tuple[float, ...]
    fixed_fpr: bool

    def arguments(self, judge: JudgeNoise | None = None) -> dict[str, Any]:
        """`flips`, `noise` (`judge` if given) and `fixed_fpr`, as simulate_gates takes them."""
        noise = self.judge if judge is None else judge
        return {"flips": self.flips, "noise": noise, "fixed_fpr": self.fixed_fpr}


@grouped
def noise_sweep(
    flip: FlipsOpt = DEFAULT_FLIPS,  # type: ignore[assignment]  # parsed by Flips
    *,
    terms: NoiseTermsOpt,
) -> NoiseSweep:
    """The noise options, with several flip rates (simulate, report)."""
    return NoiseSweep(noise_at(flip[0], terms), tuple(flip), fixed_fpr="fpr" in terms)


#: The judge's noise: --flip, --fpr, --unparseable, --icc, --case-spread, --systematic.
NoiseOpt = Annotated["JudgeNoise", Group(judge_noise)]
#: The same with several flip rates (--flip P[,P...]).
NoiseSweepOpt = Annotated[NoiseSweep, Group(noise_sweep)]


def parse_policies(
    text: str,
    tie: str,
    call_icc: float | None,
    *,
    retry_rate: str = "shared",
    false_alarm: float = 0.05,
    detection: float = 0.8,
    runs_share: bool | None = None,
) -> list[Policy]:
    """``--policies``: comma-separated, each read with the --tie, --call-icc and
    --retry-rate given; a sequential gate's boundaries are searched for `false_alarm` and
    `detection`, its runs share their rate or not as --runs-share-rate or
    --runs-independent says (`runs_share`; refused without a sequential gate)."""
    out = []
    for part in text.split(","):
        try:
            out.append(
                gatecal.parse_policy(
                    part,
                    tie=tie,
                    call_icc=call_icc or 0.0,
                    retry_rate=retry_rate,
                    false_alarm=false_alarm,
                    detection=detection,
                )
            )
        except ParameterError as exc:
            raise CliError(f"--policies {exc.rule} (got {part.strip()!r})") from None
    if runs_share is None:
        return out
    if not any(isinstance(p, gatecal.SequentialPolicy) for p in out):
        flag = "--runs-share-rate" if runs_share else "--runs-independent"
        raise CliError(f"{flag} needs a sequential policy in --policies ({spellings()})")
    model = "shared" if runs_share else "independent"
    return [
        dataclasses.replace(p, runs=model) if isinstance(p, gatecal.SequentialPolicy) else p
        for p in out
    ]


# -- how measured runs are read: one group, handed to every command that reads runs --


@dataclass(frozen=True, slots=True)
class Reading:
    """How measured runs are read: every file as `input_format` (None: detected from its
    content) and the readers' `options`."""

    input_format: str | None
    options: ReadOptions


def read_options(
    input_format: InputFormatOpt = None,
    attempts: AttemptsOpt = "first",
    junit_repeats: JunitRepeatsOpt = "auto",
    target: TargetOpt = None,
    threshold: ScoreThresholdOpt = None,
    partial: PartialOpt = "fail",
) -> Reading:
    """The reading options as one object (each value was checked by its option)."""
    from gatecal.readers._base import ReadOptions

    options = ReadOptions(
        attempts=attempts,
        junit_repeats=junit_repeats,
        target=target,
        thresholds=thresholds(threshold),
        partial=partial,
    )
    return Reading(input_format, options)


#: How measured runs are read: --input-format, --attempts, --junit-repeats, --target,
#: --score-threshold, --partial.
ReadingOpt = Annotated[Reading, Group(read_options)]


def read_runs(
    option: str,
    paths: Sequence[str],
    regressed: Sequence[str] = (),
    reading: Reading | None = None,
) -> RunsData:
    """Read runs as `reading` says (default: as read_runs does), turning every reading
    error into one line that names `option`."""
    how = read_options() if reading is None else reading
    try:
        with reading_files("reading runs"):
            data = gatecal.read_runs(
                paths,
                regressed,
                input_format=how.input_format,
                **dataclasses.asdict(how.options),
            )
    except gatecal.RunsError as exc:
        raise CliError(f"{option} {' '.join(str(exc).split())}") from None
    except OSError as exc:
        raise CliError(f"{option} could not be read ({exc.strerror}: {exc.filename})") from None
    _note_surrogates(data)
    return data


def _note_surrogates(data: RunsData) -> None:
    """Say once, on standard error, that names hold lone surrogates (written as U+FFFD)."""
    import sys

    from gatecal._common.unicode import surrogate_note

    table = data.verdicts
    names = [v for c in ("run", "case", "check", "session", "build") for v in table.values(c)]
    names += [s.case for s in data.skips] + [v.case for v in data.components]
    note = surrogate_note(names)
    if note:
        sys.stderr.write(f"gatecal: note: {note}\n")


def read_labels(labels: Path, option: str = "LABELS") -> Any:
    try:
        with reading_files("reading labels"):
            return gatecal.read_labels(labels)
    except gatecal.LabelsError as exc:
        raise CliError(f"{option} {' '.join(str(exc).split())}") from None


def report_calibration(labels: Path | None, observed: tuple[int, int] | None) -> Calibration | None:
    """`gatecal report --labels`: the calibration for the report, or None."""
    if labels is None:
        return None
    try:
        with reading_files("reading labels"):
            table = gatecal.read_labels(labels)
        return gatecal.calibrate_judge(table, observed=observed, source=str(labels))
    except gatecal.LabelsError as exc:
        raise CliError(f"--labels {' '.join(str(exc).split())}") from None
