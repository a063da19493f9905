"""What several commands read the same way: the suite, the judge noise, measured runs, labels."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gatecal
from gatecal._common.validate import ParameterError
from gatecal.cli._errors import CliError
from gatecal.cli._outputs import reading
from gatecal.cli._values import ScoreThreshold, thresholds

if TYPE_CHECKING:
    from gatecal._analyses.calibrate.judge import Calibration
    from gatecal._analyses.policies.rules import Policy
    from gatecal._model.spec import SuiteSpec
    from gatecal._model.suite import JudgeNoise, Suite
    from gatecal.readers._data import RunsData

__all__ = [
    "load_spec",
    "noise",
    "parse_policies",
    "read_runs",
    "report_calibration",
    "suite_and_rates",
]

Rates = dict[str, tuple[float, float]]


def load_spec(path: Path) -> SuiteSpec:
    try:
        return gatecal.load_spec(path)
    except gatecal.SpecError as exc:
        raise CliError(f"--suite {exc}") from None


def suite_and_rates(
    suite_file: Path | None,
    cases: int | None,
    judge_checks: int | None,
    code_checks: int | None,
    failing: int | None,
) -> tuple[Suite, Rates, Rates]:
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
            raise CliError(f"{given} can't be combined with --suite (got {str(shape[given])!r})")
        spec = load_spec(suite_file)
        return spec.suite, spec.per_check, spec.per_case
    suite = gatecal.Suite.uniform(
        cases=12 if cases is None else cases,
        judge_checks=2 if judge_checks is None else judge_checks,
        code_checks=1 if code_checks is None else code_checks,
        failing=failing,
    )
    return suite, {}, {}


def noise(
    fnr: float,
    fpr: float | None,
    unparseable: float | None,
    icc: float | None,
    rates: tuple[Rates, Rates] = ({}, {}),
    cases: tuple[float | None, float | None] = (None, None),
) -> JudgeNoise:
    """The noise template from the options (the flip rate is set per block); `cases` is
    (--case-spread, --systematic)."""
    per_check, per_case = rates
    spread, systematic = cases
    return gatecal.JudgeNoise(
        fnr=fnr,
        fpr=fnr if fpr is None else fpr,
        unparseable=unparseable or 0.0,
        icc=icc or 0.0,
        per_check=per_check,
        per_case=per_case,
        case_spread=spread or 0.0,
        systematic=systematic or 0.0,
    )


def parse_policies(
    text: str,
    tie: str,
    call_icc: float | None,
    *,
    retry_rate: str = "shared",
    false_alarm: float = 0.05,
    detection: float = 0.8,
) -> list[Policy]:
    """``--policies``: comma-separated, each read with the --tie, --call-icc and
    --retry-rate given; a sequential gate's boundaries are searched for `false_alarm` and
    `detection`."""
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
    return out


def read_runs(
    option: str,
    paths: Sequence[str],
    regressed: Sequence[str] = (),
    *,
    input_format: str | None = None,
    attempts: str = "first",
    junit_repeats: str = "auto",
    target: str | None = None,
    threshold: Sequence[ScoreThreshold] | None = None,
    partial: str = "fail",
) -> RunsData:
    """Read runs, turning every reading error into one line that names `option`."""
    try:
        with reading("reading runs"):
            data = gatecal.read_runs(
                paths,
                regressed,
                input_format=input_format,
                attempts=attempts,
                junit_repeats=junit_repeats,
                target=target,
                thresholds=thresholds(threshold),
                partial=partial,
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
        with reading("reading labels"):
            return gatecal.read_labels(labels)
    except gatecal.LabelsError as exc:
        raise CliError(f"{option} {' '.join(str(exc).split())}") from None


def report_calibration(labels: Path | None, observed: tuple[int, int] | None) -> Calibration | None:
    """`gatecal report --labels`: the calibration for the report, or None."""
    if labels is None:
        return None
    try:
        with reading("reading labels"):
            table = gatecal.read_labels(labels)
        return gatecal.calibrate_judge(table, observed=observed, source=str(labels))
    except gatecal.LabelsError as exc:
        raise CliError(f"--labels {' '.join(str(exc).split())}") from None
