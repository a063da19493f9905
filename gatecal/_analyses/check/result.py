"""What ``gatecal check`` decides and shows: :class:`GateCheck` (the decision on one CI
run and the evidence for it) and its :class:`FailingCase` rows; :func:`check_gate` in
``gate.py`` decides it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from gatecal._common.contracts import CONTRACTS, json_header
from gatecal._common.display import Displayed

if TYPE_CHECKING:
    from gatecal._analyses.noise.measured import BaselineEvidence
    from gatecal._common.intervals import RateEstimate

__all__ = ["CHECK_FORMAT", "CHECK_VERSION", "DECISIONS", "FailingCase", "GateCheck"]

DECISIONS = ("pass", "fail", "incomplete")
#: ``check --format json`` says what it is first: the contract's name and version.
CHECK_FORMAT = "gatecal.check"
CHECK_VERSION = CONTRACTS["check"]
Decision = Literal["pass", "fail", "incomplete"]


# -- the result ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FailingCase:
    """A baseline case that did not pass the current run, with its baseline record.

    Attributes
    ----------
    case : str
        The case as the baseline names it (shortened for display the way ``recommend``
        shortens it); `case_id` is the full id.
    status : {'failed', 'error'}
        It failed, or it errored (counted as a failure within ``max_errors``).
    baseline : RateEstimate
        Its failure rate in the known-good runs, with the confidence interval.
    new : bool
        It never failed in the known-good runs (a stable case): a new failure.
    kind : {'new', 'flaky', 'systematic'}
        What its record says: it never failed (new), failed sometimes (flaky), or failed
        (nearly) every time (systematic: a judge error or a broken test, no evidence).
    healthy_rate : float or None
        Its healthy failure rate from its own record (shrunk toward the suite's): how
        surprising today's failure is. None when the suite was not measured case by case.
    weight : float or None
        What its failure adds to the case-aware gate's statistic (None under a count gate).
    """

    case: str
    case_id: str
    status: str
    baseline: RateEstimate
    new: bool
    kind: str = "new"
    healthy_rate: float | None = None
    weight: float | None = None

    @property
    def probability(self) -> float:
        """How often a healthy build fails this case, at most: its upper confidence bound."""
        return self.baseline.high

    def to_dict(self) -> dict[str, Any]:
        b = self.baseline
        return {
            "case": self.case,
            "case_id": self.case_id,
            "status": self.status,
            "new": self.new,
            "kind": self.kind,
            "record": f"failed {int(b.failures)} of {int(b.trials)} known-good runs",
            "healthy_rate": self.healthy_rate,
            "weight": self.weight,
            "baseline_failures": int(b.failures),
            "baseline_runs": int(b.trials),
            "baseline_rate": b.estimate,
            "low": b.low,
            "high": b.high,
            "probability": self.probability,
        }


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GateCheck(Displayed):
    """The decision on one CI run and the evidence for it; see :func:`check_gate`.

    Attributes
    ----------
    decision : {'pass', 'fail', 'incomplete'}
        ``incomplete`` when the evidence is: a baseline case missing, more errors than
        allowed, or an empty run. Incomplete evidence never passes.
    reasons : tuple of str
        Why the decision is what it is, one sentence each.
    gate, gate_rule, gate_source : str
        The gate as a rule (``fails<=2``, ``0.90``), in words, and where it came from.
    k_min, cases : int
        At least `k_min` of the baseline's `cases` must pass.
    case_names : tuple of str
        The baseline's cases, as shortened for display.
    passed : int
        Baseline cases that passed the current run (after the policy).
    false_alarm : float
        P(a healthy build fails this gate) under `policy`, the largest over the
        baseline's (rate, icc) confidence region: the same model as ``recommend``.
    false_alarm_target : float
        The budget the default gate was chosen within.
    p_value : float or None
        P(a healthy build passes `passed` cases or fewer) under the same conservative
        model; None when the evidence is incomplete.
    failing : tuple of FailingCase
        Every baseline case that did not pass, new failures first.
    error_cases : tuple of str
        Cases whose verdict was an error or unscored (never a pass), baseline cases or not.
    baseline_errors : int
        Error or unscored verdicts in the known-good runs (left out there as missing data).
    max_errors : int
    missing : tuple of str
        Baseline cases with no verdict in the current run, or lacking one of their checks.
    missing_checks : tuple of str
        Which checks those cases lacked (``case lacks check``).
    uncalibrated : tuple of str
        Cases of the current run that the baseline never saw; a failing one fails the run.
    uncalibrated_failures : tuple of str
    policy : str
        How several current runs combine (``single`` for one run).
    current_runs : tuple of str
    baseline : BaselineEvidence
        The known-good runs decided against: how many, their rate and icc as the gate's
        model uses them, and their run-to-run correlation.
    flaky_rate : float
    confidence_level : float
    warnings : tuple of str
    """

    decision: Decision
    reasons: tuple[str, ...]
    gate: str
    gate_rule: str
    gate_source: str
    k_min: int
    cases: int
    case_names: tuple[str, ...]
    passed: int
    false_alarm: float
    false_alarm_target: float
    p_value: float | None
    failing: tuple[FailingCase, ...]
    error_cases: tuple[str, ...]
    baseline_errors: int
    max_errors: int
    missing: tuple[str, ...]
    missing_checks: tuple[str, ...]
    uncalibrated: tuple[str, ...]
    uncalibrated_failures: tuple[str, ...]
    policy: str
    current_runs: tuple[str, ...]
    baseline: BaselineEvidence
    flaky_rate: float
    confidence_level: float
    warnings: tuple[str, ...]
    gate_kind: str = "count"
    score: float | None = None
    threshold: float | None = None
    shortfall: str | None = None
    cases_differ: str | None = None
    runs_differ: str | None = None
    heavier_runs: int | None = None
    allowed: int | None = None

    _renderer: ClassVar[str] = "gatecal._render.check"

    def summary(self) -> str:
        """The decision, how many cases passed, and what the gate needed."""
        if self.gate_kind == "cases" and self.score is not None and self.heavier_runs is not None:
            return (
                f"{self.decision.upper()}: {self.passed} of {self.cases} cases passed; the "
                f"failing cases weigh {self.score:.2f}, {self.heavier_runs} of "
                f"{self.baseline.runs} known-good runs as much or more"
            )
        return (
            f"{self.decision.upper()}: {self.passed} of {self.cases} cases passed, the gate "
            f"needs {self.k_min} ({self.gate})"
        )

    def to_frame(self) -> Any:
        """One row per baseline case: whether it failed, its status, whether it is new."""
        import pandas as pd  # deferred: `import gatecal` stays light

        failing = {f.case_id: f for f in self.failing}
        rows = [
            {
                "case": case,
                "failed": case in failing,
                "status": failing[case].status if case in failing else "passed",
                "new": failing[case].new if case in failing else False,
            }
            for case in self.case_names
        ]
        return pd.DataFrame(rows, columns=["case", "failed", "status", "new"])

    @property
    def exit_code(self) -> int:
        """0 when the gate passes, 1 when it fails or the evidence is incomplete."""
        return 0 if self.decision == "pass" else 1

    @property
    def new_failures(self) -> list[str]:
        """Failing cases that never or almost never failed in the baseline."""
        return [f.case for f in self.failing if f.new]

    @property
    def known_flaky(self) -> list[str]:
        """Failing cases the baseline saw fail sometimes (not systematic ones)."""
        return [f.case for f in self.failing if f.kind == "flaky"]

    @property
    def systematic(self) -> list[str]:
        """Failing cases that failed (nearly) every known-good run: judge errors or broken
        tests, no evidence about a regression."""
        return [f.case for f in self.failing if f.kind == "systematic"]

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract: its header, the issue's keys, then the details."""
        return {
            **json_header("check"),
            "decision": self.decision,
            "gate": self.gate,
            "k_min": self.k_min,
            "cases": self.cases,
            "passed": self.passed,
            "false_alarm": self.false_alarm,
            "p_value": self.p_value,
            "new_failures": self.new_failures,
            "known_flaky": self.known_flaky,
            "errors": len(self.error_cases),
            "baseline_errors": self.baseline_errors,
            "exit_code": self.exit_code,
            "reasons": list(self.reasons),
            "gate_rule": self.gate_rule,
            "gate_source": self.gate_source,
            "false_alarm_target": self.false_alarm_target,
            "max_errors": self.max_errors,
            "error_cases": list(self.error_cases),
            "missing": list(self.missing),
            "missing_checks": list(self.missing_checks),
            "uncalibrated": list(self.uncalibrated),
            "uncalibrated_failures": list(self.uncalibrated_failures),
            "failing": [f.to_dict() for f in self.failing],
            "policy": self.policy,
            "current_runs": list(self.current_runs),
            "baseline": self.baseline.to_dict(),
            "flaky_rate": self.flaky_rate,
            "confidence_level": self.confidence_level,
            "warnings": list(self.warnings),
            "systematic": self.systematic,
            "gate_kind": self.gate_kind,
            "score": self.score,
            "threshold": self.threshold,
            "shortfall": self.shortfall,
            "cases_differ": self.cases_differ,
            "runs_differ": self.runs_differ,
            "heavier_runs": self.heavier_runs,
            "allowed": self.allowed,
        }
