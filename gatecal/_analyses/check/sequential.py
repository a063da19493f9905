"""A sequential gate deciding the runs given so far: pass, fail or run again (exit 3)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np

from gatecal._common.contracts import json_header
from gatecal._common.display import Displayed
from gatecal._common.validate import ParameterError, check_count, check_probability
from gatecal._model.targets import Targets

if TYPE_CHECKING:
    from gatecal._analyses.noise.bounds import NoiseBounds
    from gatecal._model.regression import RegressionLike
    from gatecal.readers._data import RunsData

from gatecal._analyses.policies.sequential import (
    POLICY_DESIGNS,
    SequentialPolicy,
    check_run_model,
    parse_sequential,
)
from gatecal._analyses.sequential.designs import (
    SEQUENTIAL_EXIT_CONTINUE,
    TARGET_SLACK,
    RatePmfs,
    SequentialGate,
    SharedBinomial,
    sequential_outcome,
)
from gatecal._analyses.sequential.outcome import RunPmfs

__all__ = [
    "SequentialCheck",
    "check_sequential",
    "region_design",
]


# -- deciding the runs given so far -----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class SequentialCheck(Displayed):
    """The decision of a sequential gate on the current runs so far; see
    :func:`check_sequential`.

    Attributes
    ----------
    decision : {'pass', 'fail', 'continue', 'incomplete'}
        ``continue``: no boundary crossed yet; run the build again and check all its runs.
    look : int
        The look the decision rests on (the runs it counted).
    passed_per_run, cumulative : tuple of int
        Baseline cases that passed each current run, and their running sum ``S_j``.
    gate : SequentialGate
        The design searched at the baseline's noise and its exact rates there.
    false_alarm : float
        Its false alarm, the largest over the baseline's (rate, icc) confidence region
        (never above the target: the design is tightened until it is within).
    detection : float
        Its detection, the smallest over the region (as ``recommend`` quotes it).
    runs : {'shared', 'independent'}
        The model of the runs of one build the gate was designed and quoted under.
    targets : Targets
        The false-alarm budget and the detection target (the JSON writes them flat, each
        after its figure: ``false_alarm_target``, ``detection_target``).
    """

    decision: Literal["pass", "fail", "continue", "incomplete"]
    reasons: tuple[str, ...]
    policy: str
    look: int
    cases: int
    current_runs: tuple[str, ...]
    passed_per_run: tuple[int, ...]
    cumulative: tuple[int, ...]
    gate: SequentialGate
    false_alarm: float
    detection: float
    runs: str
    targets: Targets
    regressed_cases: int
    baseline_runs: int
    noise_rate: float
    noise_icc: float
    warnings: tuple[str, ...]

    _renderer: ClassVar[str] = "gatecal._render.sequential"

    @property
    def exit_code(self) -> int:
        """0 pass; 1 fail or incomplete evidence; 3 continue (run the build again)."""
        return {"pass": 0, "continue": SEQUENTIAL_EXIT_CONTINUE}.get(self.decision, 1)

    def summary(self) -> str:
        """The decision and the look it rests on."""
        return (
            f"{self.decision.upper()} after look {self.look} of {self.gate.design.looks} "
            f"({self.policy}, {self.cases} cases)"
        )

    def to_frame(self) -> Any:
        """One row per look taken: the run, its passing cases, the running sum, the bounds."""
        import pandas as pd  # deferred: `import gatecal` stays light

        bounds = self.gate.design.boundaries
        rows = [
            {
                "look": j + 1,
                "run": run,
                "passed": passed,
                "cumulative": cum,
                "fail_at_most": bounds[j].fail_at_most,
                "pass_at_least": bounds[j].pass_at_least,
            }
            for j, (run, passed, cum) in enumerate(
                zip(self.current_runs, self.passed_per_run, self.cumulative, strict=False)
            )
        ]
        columns = ["look", "run", "passed", "cumulative", "fail_at_most", "pass_at_least"]
        return pd.DataFrame(rows, columns=columns)

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``gatecal.check.sequential``, its header first."""
        return {
            **json_header("check.sequential"),
            "decision": self.decision,
            "exit_code": self.exit_code,
            "exit_codes": {
                "0": "pass",
                "1": "fail or incomplete evidence",
                str(SEQUENTIAL_EXIT_CONTINUE): "continue: run the build again "
                "and check all its runs",
            },
            "policy": self.policy,
            "look": self.look,
            "looks": self.gate.design.looks,
            "cases": self.cases,
            "current_runs": list(self.current_runs),
            "passed_per_run": list(self.passed_per_run),
            "cumulative": list(self.cumulative),
            "boundaries": [b.to_dict() for b in self.gate.design.boundaries],
            "false_alarm": self.false_alarm,
            "false_alarm_target": self.targets.false_alarm,
            "detection": self.detection,
            "detection_target": self.targets.detection,
            "runs": self.runs,
            "regressed_cases": self.regressed_cases,
            "meets_targets": self.gate.meets_targets,
            "expected_runs": {
                "healthy": self.gate.healthy.expected_runs,
                "regressed": self.gate.regressed.expected_runs,
            },
            "stop_distribution": {
                "healthy": list(self.gate.healthy.stop_distribution),
                "regressed": list(self.gate.regressed.stop_distribution),
            },
            "reasons": list(self.reasons),
            "baseline": {
                "runs": self.baseline_runs,
                "rate_for_gate": self.noise_rate,
                "icc_for_gate": self.noise_icc,
            },
            "warnings": list(self.warnings),
        }


def _noise_pmfs(
    n: int, rate: float, icc: float, failing: int, looks: int = 1, runs: str = "independent"
) -> tuple[RunPmfs, RunPmfs]:
    """One run's passing-count model, healthy and regressed: every case fails at `rate`
    with run-to-run correlation `icc`; the regressed build fails `failing` more cases
    always. ``runs="independent"``: each run draws its own rate (one run's beta-binomial
    pmf); ``"shared"``: the runs of one build share one rate (exact for `looks` runs:
    :class:`gatecal._analyses.sequential.designs.SharedBinomial`)."""
    from gatecal._engines.exact import beta_binomial_pmf, beta_nodes
    from gatecal._model.suite import beta_shape

    if runs == "shared":
        if icc > 0 and 0 < rate < 1:
            a, b = beta_shape(rate, icc)
            xs, ws = beta_nodes(float(a), float(b), degree=looks * n)
        else:
            xs, ws = np.array([rate]), np.ones(1)
        q = np.clip(1.0 - xs, 0.0, 1.0)
        return (
            SharedBinomial(cases=n, trials=n, q=q, weights=ws),
            SharedBinomial(cases=n, trials=n - failing, q=q, weights=ws),
        )
    healthy = beta_binomial_pmf(n, rate, icc)[::-1].copy()
    regressed = np.zeros(n + 1)
    regressed[: n - failing + 1] = beta_binomial_pmf(n - failing, rate, icc)[::-1]
    return RatePmfs.independent(healthy), RatePmfs.independent(regressed)


#: Rounds of tightening the design's budget until its false alarm over the whole region is
#: within the target; after them the design that never fails early is used.
_ROUNDS = 40


def _within_region(
    policy: SequentialPolicy,
    healthy: RunPmfs,
    regressed: RunPmfs,
    region: Sequence[RunPmfs],
    regressed_region: Sequence[RunPmfs],
    false_alarm: float,
    detection: float,
) -> tuple[SequentialGate, float, float]:
    """The design searched at one point, its budget tightened until the false alarm at
    every point of the region is at most `false_alarm` (never above it, not even by the
    search's slack); with the largest false alarm over the region and the smallest
    detection over `regressed_region`. An e-value gate is tightened the same way through
    its nominal level (an e-process at a smaller level is still one)."""
    from gatecal._analyses.sequential import designer
    from gatecal._analyses.sequential.evalue import EVALUE

    def worst_of(g: SequentialGate) -> float:
        return max(sequential_outcome(g.design.boundaries, p).failure_probability for p in region)

    def at(level: float) -> tuple[SequentialGate, float]:
        g = designer(policy.design)(
            policy.looks, healthy, regressed, false_alarm=level, detection=detection
        )
        return g, worst_of(g)

    gate, worst = at(false_alarm)
    good: tuple[float, SequentialGate, float] | None = (
        (false_alarm, gate, worst) if worst <= false_alarm else None
    )
    bad, budget = false_alarm, false_alarm
    for step in range(_ROUNDS):  # shrink until the whole region is within the target
        if good is not None or budget <= 0:
            break
        # proportional, then faster: the boundaries are whole numbers, a small cut may not move them
        budget = (
            budget * min(false_alarm / worst, 1.0) * (1 - 1e-6) * 0.9**step if worst > 0 else 0.0
        )
        if budget <= 0 and policy.design == EVALUE:
            break
        gate, worst = at(budget)
        if worst <= false_alarm:
            good = (budget, gate, worst)
        else:
            bad = budget
    if good is not None and good[0] < false_alarm:  # then the largest such budget, roughly
        for _ in range(8):
            middle = math.sqrt(good[0] * bad)
            gate, worst = at(middle)
            if worst <= false_alarm:
                good = (middle, gate, worst)
            else:
                bad = middle
    if good is not None:
        _, gate, worst = good
    else:  # the design that can only fail at its last look
        gate = designer(policy.design if policy.design != EVALUE else "sprt")(
            policy.looks, healthy, regressed, false_alarm=0.0, detection=detection
        )
        worst = worst_of(gate)
    lowest = min(
        [gate.detection]
        + [sequential_outcome(gate.design.boundaries, p).failure_probability
           for p in regressed_region]
    )  # fmt: skip
    meets = worst <= false_alarm and lowest >= detection * (1 - TARGET_SLACK)
    return (
        SequentialGate(
            design=dataclasses.replace(
                gate.design,
                targets=dataclasses.replace(gate.design.targets, false_alarm=false_alarm),
            ),
            healthy=gate.healthy,
            regressed=gate.regressed,
            meets_targets=meets,
        ),
        worst,
        lowest,
    )


def region_design(
    policy: SequentialPolicy,
    bounds: NoiseBounds,
    cases: int,
    failing: int,
    false_alarm: float,
    detection: float,
) -> tuple[SequentialGate, float, float, tuple[float, float]]:
    """`policy`'s design for a baseline whose (rate, icc) region is `bounds`: searched at
    the region's highest rate, tightened until its false alarm at every point of the
    region is within `false_alarm`; with that largest false alarm, the smallest detection
    of `failing` more failing cases over the region, and the (rate, icc) searched at."""
    points = [
        (high, min(icc, 0.999) if 0 < high < 1 else 0.0)
        for icc, high in zip(bounds.iccs, bounds.highs, strict=True)
    ]
    lows = [
        (low, min(icc, 0.999) if 0 < low < 1 else 0.0)
        for icc, low in zip(bounds.iccs, bounds.lows, strict=True)
    ]
    rate, icc = max(points, key=lambda p: (p[0], p[1]))
    looks, model = policy.looks, policy.runs
    ph, pr = _noise_pmfs(cases, rate, icc, failing, looks, model)
    healthy = [_noise_pmfs(cases, r, i, failing, looks, model)[0] for r, i in points]
    regressed = [_noise_pmfs(cases, r, i, failing, looks, model)[1] for r, i in (*points, *lows)]
    gate, worst, lowest = _within_region(policy, ph, pr, healthy, regressed, false_alarm, detection)
    return gate, worst, lowest, (rate, icc)


def check_sequential(
    current: RunsData,
    baseline: RunsData,
    *,
    policy: SequentialPolicy | str,
    false_alarm: float = 0.05,
    detection: float = 0.8,
    regression: RegressionLike = 1,
    max_errors: int = 0,
    confidence_level: float = 0.95,
    method: str = "wilson",
    runs: str | None = None,
) -> SequentialCheck:
    """Decide the current runs of one build (in the order read) with a sequential gate.

    The baseline is measured as :func:`gatecal.check_gate` measures it (recommend's
    model). The design is searched at the worst point of the baseline's (rate, icc)
    confidence region (the highest case failure rate) for `false_alarm`, and `detection`
    of a build that fails `regression` more cases; its false alarm is then computed
    exactly at every point of the region and the largest quoted (the design's budget is
    tightened until it is at most `false_alarm`), and its detection at every point and the
    smallest quoted. With run-to-run correlation the runs of the build share one flip rate
    (``runs="shared"``, the default and the policy's own default: reruns back to back) or
    each draws its own (``"independent"``); the design is searched and quoted under that
    model. `regression` is a number
    of cases or a :class:`gatecal.Regression` (``"10%"``: a share of the cases). The gate
    looks at the runs one by one and decides at the first boundary crossed; before one is
    crossed the decision is ``continue`` (exit code 3); runs after the look that decided
    are not used (a warning says so) unless they would change the decision: a pass stands
    only if the runs given pass in every order (the evidence rule, _model/evidence.py),
    else the evidence is incomplete. A run missing a baseline case, or with more errors
    than `max_errors`, is incomplete evidence (never a pass).

    Parameters
    ----------
    current : RunsData
        The runs of the build to decide, in the order they were made; no regressed rows.
    baseline : RunsData
        Known-good runs of the same cases.
    policy : SequentialPolicy or str
        The sequential gate: ``sprt-N``, ``pocock-N``, ``obf-N`` or ``evalue-N``.
    false_alarm : float, default 0.05
        The largest share of healthy builds the gate may fail, in [0, 1].
    detection : float, default 0.8
        The target share of regressed builds the gate fails, in [0, 1].
    regression : int, Regression or str, default 1
        The regression the detection is for: a number of cases, or a share.
    max_errors : int, default 0
        Error or unscored verdicts a run may have, at least 0; each counts as a failure.
    confidence_level : float, default 0.95
        The level of the baseline's (rate, icc) confidence region.
    method : {"wilson", "clopper-pearson", "jeffreys"}, default "wilson"
        The interval method of the printed rates.
    runs : {"shared", "independent"}, optional
        The run model; default the policy's own (``shared``).

    Returns
    -------
    SequentialCheck
        The decision (``pass``, ``fail``, ``continue`` or ``incomplete``), the look that
        made it, the design and its worst-case false alarm and detection.

    Raises
    ------
    ParameterError
        If `policy` is not a sequential gate, `current` holds regressed rows, a
        probability or count is out of range, or `regression` does not fit the cases.
    """
    from gatecal._analyses.check.gate import _baseline_counts, _measured, _refuse_ambiguous
    from gatecal._analyses.noise.bounds import noise_bounds
    from gatecal._analyses.sequential.evalue import EvalueDesign
    from gatecal._model.evidence import ERROR, MISSING, PASS, order_reason
    from gatecal._model.regression import as_regression
    from gatecal.readers.run_states import expected_checks, run_states

    chosen = parse_sequential(policy) if isinstance(policy, str) else policy
    if not isinstance(chosen, SequentialPolicy):
        raise ParameterError(
            "policy", f"must be one of {', '.join(POLICY_DESIGNS)} with -N", policy
        )
    if runs is not None:
        chosen = dataclasses.replace(chosen, runs=check_run_model(runs))
    target = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    max_errors = check_count("max_errors", max_errors, low=0)
    _refuse_ambiguous(current, baseline, chosen)  # a policy is given: only the file overlap
    if "regressed" in current.builds():
        raise ParameterError(
            "current", "must not hold rows of the regressed build", "build=regressed"
        )
    rec, short, order, _ = _measured(baseline, target, confidence_level, method)
    n = rec.cases
    if isinstance(regression, bool) or not isinstance(regression, int):
        regression = as_regression(regression)
    count = regression if isinstance(regression, int) else regression.failing(n)
    failing = check_count("regression", count, low=1, high=n)
    failures, observed = _baseline_counts(baseline, rec)
    bounds = noise_bounds(failures, observed, confidence_level=rec.confidence_level)
    model = chosen.runs
    gate, worst, lowest, (rate, icc) = region_design(chosen, bounds, n, failing, target, power)
    states = run_states(current, order, expected_checks(baseline))
    given, gaps = states.runs, states.gaps
    reasons: list[str] = []
    if gaps:
        reasons.append(
            f"{len(gaps)} case run(s) lack a check the baseline ran (a missing check is "
            f"missing evidence): {', '.join(gaps[:10])}"
        )
    warnings = [*current.warnings, *(f"baseline: {w}" for w in baseline.warnings)]
    passed = []
    for run, st in zip(given, states.codes, strict=True):
        missing = [short[order[i]] for i in np.flatnonzero(st == MISSING).tolist()]
        errors = [short[order[i]] for i in np.flatnonzero(st == ERROR).tolist()]
        if missing:
            reasons.append(
                f"run {run}: {len(missing)} of {n} baseline cases have no verdict: "
                + ", ".join(missing[:10])
            )
        if len(errors) > max_errors:
            reasons.append(
                f"run {run}: {len(errors)} error or unscored verdicts (at most "
                f"{max_errors} allowed): {', '.join(errors[:10])}"
            )
        passed.append(int((st == PASS).sum()))
    if not given:
        reasons.append("no current run: no verdict on any baseline case")
    decision, look = gate.design.decide(passed)  # the last look always decides
    later = order_reason(gate.design.decide, passed, given) if not reasons else None
    if later:  # the evidence rule: a later run that would change the decision counts
        reasons.append(later)
    elif decision != "continue" and look < len(given):
        warnings.append(
            f"the gate decided at run {look}; the {len(given) - look} later run(s) were not "
            "used (they would not change the decision)"
        )
    cumulative = tuple(int(v) for v in np.cumsum(passed)) if passed else ()
    final: Literal["pass", "fail", "continue", "incomplete"] = decision
    if reasons:
        final = "incomplete"
        reasons.insert(0, "incomplete evidence never passes")
    elif decision == "continue":
        b = gate.design.boundaries[look - 1]
        reasons.append(
            f"after {look} run(s) {cumulative[-1]} cases passed in all: between fail_at_most "
            f"{b.fail_at_most} and pass_at_least {b.pass_at_least}; run the build again"
        )
    else:
        b = gate.design.boundaries[look - 1]
        side = f"at least {b.pass_at_least}" if decision == "pass" else f"at most {b.fail_at_most}"
        verb = "passes" if decision == "pass" else "fails"
        reasons.append(
            f"after {look} run(s) {cumulative[look - 1]} cases passed in all: {side}, "
            f"so the gate {verb}"
        )
    if final != "incomplete" and isinstance(gate.design, EvalueDesign):
        e = gate.design.e_value(look, cumulative[look - 1])
        alpha = gate.design.nominal_false_alarm
        reasons.append(
            f"e-value after {look} run(s): {e:.4g} (the gate fails once it reaches "
            f"1/{alpha:g} = {1 / alpha:g}; nominal false alarm {alpha:g}, exact "
            f"{worst:.4g} over the baseline's region)"
        )
    return SequentialCheck(
        decision=final,
        reasons=tuple(reasons),
        policy=chosen.text,
        look=look,
        cases=n,
        current_runs=tuple(given),
        passed_per_run=tuple(passed),
        cumulative=cumulative,
        gate=gate,
        false_alarm=worst,
        detection=lowest,
        runs=model,
        targets=Targets(false_alarm=target, detection=power),
        regressed_cases=failing,
        baseline_runs=rec.runs,
        noise_rate=rate,
        noise_icc=icc,
        warnings=tuple(warnings),
    )
