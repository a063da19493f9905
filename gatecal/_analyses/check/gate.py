"""Decide one CI run against measured known-good runs: the gate, and the evidence.

:func:`check_gate` is what ``gatecal check`` calls. The baseline (known-good runs) is
measured exactly as :func:`gatecal.recommend_gate` measures it, so the default gate
here is the one ``recommend`` calls the strictest within the false-alarm budget, and
the false alarm quoted is the one ``recommend`` quotes for it.

This module imports nothing heavy at import time: :func:`load_recommended_gate` and
:class:`RecommendedGate` are what the pytest plugin uses, before it has decided
anything, and they need only the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gatecal._analyses.check.gatefile import refuse_other_baseline
from gatecal._analyses.check.result import (
    CHECK_FORMAT,
    CHECK_VERSION,
    DECISIONS,
    Decision,
    FailingCase,
    GateCheck,
)
from gatecal._analyses.check.runs import _combine, _Combined
from gatecal._analyses.policies.parse import CHECK_POLICIES, parse_check_policy
from gatecal._common.docstrings import shared_docs
from gatecal._common.tables import few
from gatecal._common.validate import (
    ParameterError,
    check_count,
    check_instance,
    check_probability,
)
from gatecal._model.evidence import ERROR, FAIL, MISSING, PASS, STATE_NAMES
from gatecal._model.gatefile import RecommendedGate
from gatecal._model.gates import Gate, GateLike, parse_gate, strictest_within
from gatecal._model.rankgate import UNITS as _UNITS, RankTest
from gatecal.readers.run_states import expected_checks, run_states

if TYPE_CHECKING:
    from gatecal._analyses.policies.rules import Policy
    from gatecal._analyses.recommend.gate import (
        CaseRates,
        Recommendation,
    )
    from gatecal.readers._data import RunsData

__all__ = [
    "CHECK_FORMAT",
    "CHECK_VERSION",
    "DECISIONS",
    "FailingCase",
    "GateCheck",
    "check_gate",
]

# -- the decision ----------------------------------------------------------------------------


def _baseline_counts(baseline: RunsData, rec: Recommendation) -> tuple[list[int], list[int]]:
    """Failures and observed cases per known-good run, as recommend counts them."""
    short = baseline.short_names()
    keep = set(rec.case_order)
    _, cases, outcome = baseline.outcome_array("healthy")
    kept = outcome[:, [j for j, c in enumerate(cases) if short[c] in keep]]
    kept = kept[(kept >= 0).any(axis=1)]
    return (kept == 0).sum(axis=1).tolist(), (kept >= 0).sum(axis=1).tolist()


def _false_alarms(rec: Recommendation, policy: Policy, baseline: RunsData) -> list[float]:
    """False alarm of "at least k pass" for k = 0..n under `policy`: recommend's model.

    For one run this is recommend's own table. Under a policy it is each gate's bound the
    same way (:meth:`gatecal._analyses.noise.bounds.NoiseBounds.largest`): the largest
    :func:`gatecal.policy_rates` over the baseline's (rate, icc) set, every case failing
    at the set's rate, with its run-level correlation.
    """
    n = rec.cases
    if policy == _single():
        return [fa for fa, _ in rec.table]  # exactly what recommend says
    from gatecal._analyses.noise.bounds import noise_bounds
    from gatecal._analyses.policies.exact import policy_rates
    from gatecal._model.suite import JudgeNoise, Suite

    failures, observed = _baseline_counts(baseline, rec)
    bounds = noise_bounds(failures, observed, confidence_level=rec.confidence_level)
    suite = Suite.uniform(cases=n, judge_checks=1, code_checks=0, failing=1)
    gates = [Gate(text=f"fails<={n - k}", kind="fails", max_failures=n - k) for k in range(n + 1)]

    def rates(high: float, icc: float) -> list[float]:
        rho = min(icc, 0.999) if 0 < high < 1 else 0.0
        rows = policy_rates(suite, JudgeNoise(fnr=high, fpr=high, icc=rho), gates, policy).rows
        by_gate = {r.gate: r.failure_probability for r in rows if r.build == "healthy"}
        return [by_gate[g.text] for g in gates]

    return [float(v) for v in bounds.largest(rates)[0]]


def _single() -> Policy:
    from gatecal._analyses.policies.rules import Policy

    return Policy()


def _gate_file_policy(gate: object, policy: Policy | str | None) -> Policy | str | None:
    """The policy to apply: the per-case rule a gate file chose (``recommend --policies``)
    unless `policy` is given, which must then be that rule."""
    if not isinstance(gate, RecommendedGate) or gate.policy == "single":
        return policy
    try:
        rule = parse_check_policy(gate.policy)
    except ParameterError:
        raise ParameterError(
            "gate_from", f"chose the rule {gate.policy!r}, which check cannot apply", gate.source
        ) from None
    if policy is None:
        return gate.policy
    if parse_check_policy(policy) != rule:
        given = policy if isinstance(policy, str) else policy.describe()
        rule_text = f"must be the rule the gate file chose, {gate.policy} ({gate.source})"
        raise ParameterError("policy", rule_text, given)
    return policy


def _policy_text(policy: Policy) -> str:
    if policy.repeat > 1:
        return f"repeat-{policy.need}-of-{policy.repeat}"
    if policy.rerun_failing:
        return f"rerun-failing-{policy.rerun_failing}"
    if policy.rerun:
        return f"rerun-{policy.rerun}"
    return "single"


@dataclass(frozen=True, slots=True)
class _CaseRule:
    """The case-aware gate as check applies it: each known-good run's failing and missing
    cases (indices in recommend's order), the budget, and the rank rule
    (:mod:`gatecal._model.rankgate`)."""

    failing: tuple[tuple[int, ...], ...]
    missing: tuple[tuple[int, ...], ...]
    cases: int
    target: float
    text: str
    source: str
    shortfall: str | None = None

    @property
    def allowed(self) -> int:
        from gatecal._model.rankgate import allowed_rank

        return allowed_rank(self.target, len(self.failing))

    @property
    def false_alarm(self) -> float:
        return self.allowed / (len(self.failing) + 1)

    @property
    def can_fail(self) -> bool:
        return self.allowed >= 1

    def test(self, failed: Any, missing: Any) -> RankTest:
        import numpy as np

        from gatecal._model.rankgate import rank_test

        return rank_test(
            self.failing,
            self.missing,
            np.flatnonzero(np.asarray(failed, dtype=bool)).tolist(),
            np.flatnonzero(np.asarray(missing, dtype=bool)).tolist(),
            cases=self.cases,
            false_alarm=self.target,
        )

    def weight(self, failures: int, runs: int) -> float:
        """A failure's weight for a case with this record in the known-good runs."""
        from gatecal._model.rankgate import UNITS, weight_units

        return weight_units(failures, runs, self.cases) / UNITS


def _check_fits(gate: RecommendedGate, rec: Recommendation) -> None:
    """Refuse a gate file computed for other cases or other known-good runs than the
    baseline's."""
    if gate.cases != rec.cases:
        raise ParameterError(
            "gate_from",
            f"recommends a gate for {gate.cases} cases; the baseline has {rec.cases}",
            gate.source,
        )
    mismatch = gate.mismatch(rec.case_order, rec.failures_per_run)
    if mismatch:
        raise ParameterError("gate_from", mismatch, gate.source)


def _case_rule(
    gate: object, rec: Recommendation, chosen: Policy, target: float
) -> _CaseRule | None:
    """The case-aware gate to apply, or None for a count gate: a gate file's, the one asked
    for by ``cases``, or by default the one recommend chooses (one run only)."""
    single = chosen == _single()
    if isinstance(gate, RecommendedGate):
        if gate.kind != "cases":
            return None
        _check_fits(gate, rec)
        if not single:
            raise ParameterError(
                "policy", "must be single with a case-aware gate file", _policy_text(chosen)
            )
        at = {c: i for i, c in enumerate(rec.case_order)}
        return _CaseRule(
            failing=tuple(
                tuple(sorted(at[gate.case_names[c]] for c in run)) for run in gate.failing
            ),
            missing=tuple(
                tuple(sorted(at[gate.case_names[c]] for c in run)) for run in gate.missing
            ),
            cases=rec.cases,
            target=gate.false_alarm_target,
            text="cases",
            source=f"recommended in {gate.source}",
            shortfall=gate.shortfall,
        )
    case_gate = rec.case_gate
    asked = isinstance(gate, str) and gate.strip().lower() == "cases"
    if asked:
        if case_gate is None:
            from gatecal._analyses.noise.casegate import CASE_GATE_MAX_CASES

            raise ParameterError(
                "gate",
                f"needs a baseline of at most {CASE_GATE_MAX_CASES} cases (the case-aware "
                f"gate; this one has {rec.cases})",
                gate,
            )
        if not single:
            raise ParameterError(
                "policy", "must be single with the case-aware gate", _policy_text(chosen)
            )
    elif (
        gate is not None
        or case_gate is None
        or not single
        or rec.chosen is None
        or rec.chosen.kind != "cases"
    ):
        return None
    assert case_gate is not None
    source = (
        f"the case-aware gate, within {target:g} by the known-good runs' own ranks"
        if asked
        else "default: the case-aware gate (each case weighed by its own record), within "
        f"{target:g}"
    )
    return _CaseRule(
        failing=case_gate.failing,
        missing=case_gate.missing,
        cases=rec.cases,
        target=target,
        text="cases",
        source=source,
    )


@shared_docs
def check_gate(
    current: RunsData,
    baseline: RunsData,
    *,
    gate: GateLike | RecommendedGate | None = None,
    false_alarm: float = 0.05,
    policy: Policy | str | None = None,
    max_errors: int = 0,
    flaky_rate: float | None = None,
    confidence_level: float = 0.95,
    method: str = "wilson",
    require_targets: bool = False,
) -> GateCheck:
    """Apply a gate to the current run(s) and weigh the result against the baseline.

    Parameters
    ----------
    current : RunsData
        The CI run to decide (its healthy build: as read without ``regressed``).
        Several runs are attempts of the same build and need `policy`.
    baseline : RunsData
        Known-good runs, measured as :func:`gatecal.recommend_gate` measures them.
    gate : str, Gate, RecommendedGate or None
        A gate rule (``all``, ``0.90``, ``fails<=2``; ``count``: the strictest count
        gate within `false_alarm`; ``cases``: the case-aware gate), the gate a
        ``recommend`` output wrote (:func:`load_recommended_gate`; its cases must be the
        baseline's; it decides even when it falls short of its detection target, saying
        so), or None: the case-aware gate when the baseline's cases differ (and one run is
        decided), else the strictest count gate whose false alarm under `policy` stays
        within `false_alarm` (for a single run, exactly ``recommend``'s choice).
    false_alarm : float
        The false-alarm budget of the default gate.
    policy : Policy or str, optional
        How several current runs combine, in the order read: ``rerun-failing-R``,
        ``rerun-R``, ``repeat-K-of-N`` (count gates only). The false alarm and p-value
        are that policy's (:func:`gatecal.policy_rates` on the baseline's noise).
    max_errors : int
        Error or unscored case verdicts tolerated; each counts as a failure. More is
        incomplete evidence.
    flaky_rate : float, optional
        Deprecated and ignored where the baseline is measured case by case (each failing
        case is labelled new, flaky or systematic from its own record); a warning says so.
    confidence_level, method : float, str
        The intervals, as in ``recommend``.
    require_targets : bool
        A gate file's gate that falls short of its detection target fails the run.

    Notes
    -----
    The decision is ``incomplete`` (never ``pass``) when a baseline case has no
    verdict, errors exceed `max_errors`, the run is empty, or the runs do not fit the
    policy; else ``fail`` when the gate fails (fewer than ``k_min`` baseline cases pass;
    or, for the case-aware gate, fewer than ``floor(false_alarm (R + 1))`` of the R
    known-good runs weigh as much as the run's failing cases, each run weighed against the
    others: :mod:`gatecal._model.rankgate`), a case
    the baseline never saw fails, or `require_targets` and the gate falls short; else
    ``pass``.

    Examples
    --------
    %(nightly_runs_example)s
    >>> ci = [{"run": "ci-1", "case": f"case-{c:02}", "passed": c not in (0, 10, 11)}
    ...       for c in range(20)]  # a flaky case and two stable ones fail
    >>> _ = (folder / "ci.jsonl").write_text("".join(json.dumps(x) + "\\n" for x in ci))
    >>> result = gatecal.check_gate(gatecal.read_runs([folder / "ci.jsonl"]), nightly)
    >>> result
    <gatecal.GateCheck: FAIL: 17 of 20 cases passed; the failing cases weigh 3.89, 0 of 30 ...>
    >>> result.exit_code
    1
    """
    import numpy as np

    from gatecal.readers._data import RunsData

    what = "a gatecal.RunsData (from gatecal.read_runs)"
    check_instance("current", current, RunsData, what)
    check_instance("baseline", baseline, RunsData, what)
    max_errors = check_count("max_errors", max_errors, low=0)
    flaky = None if flaky_rate is None else check_probability("flaky_rate", flaky_rate)
    target = check_probability("false_alarm", false_alarm)
    policy = _gate_file_policy(gate, policy)
    chosen = parse_check_policy(policy)
    _refuse_ambiguous(current, baseline, policy)
    rec, short, order, rates = _measured(baseline, target, confidence_level, method)
    n = rec.cases
    rule = _case_rule(gate, rec, chosen, target)
    if rule is not None and isinstance(gate, RecommendedGate):  # a gate file, by content
        refuse_other_baseline(gate, rec)
    count_gate = None if isinstance(gate, str) and gate.strip().lower() == "count" else gate
    if rule is None:
        fas = _false_alarms(rec, chosen, baseline)
        k_min, gate_text, source = _the_gate(count_gate, rec, fas, target)
        words = f"at least {k_min} of {n} cases pass"
        shortfall = count_gate.shortfall if isinstance(count_gate, RecommendedGate) else None
    else:
        fas = []
        k_min, gate_text, source = 0, rule.text, rule.source
        r = len(rule.failing)
        words = (
            f"fail when the failing cases are more surprising than in {r - rule.allowed + 1} "
            f"of the {r} known-good runs"
            if rule.can_fail
            else f"rank the run among {r} known-good runs (too few to fail it)"
        )
        shortfall = rule.shortfall

    known = set(order)
    extra = [c for c in current.cases() if c not in known]
    states = run_states(current, order, expected_checks(baseline), extra)
    runs = states.runs
    reasons: list[str] = []
    warnings = _warnings(current, baseline)
    if flaky is not None and rec.case_spread is not None:
        warnings.append(
            "--flaky-rate is deprecated and ignored: each failing case is labelled new, "
            "flaky or systematic from its own record in the known-good runs"
        )
    if "regressed" in current.builds():
        raise ParameterError(
            "current", "must not hold rows of the regressed build", "build=regressed"
        )
    if not runs or (states.codes[:, :n] == MISSING).all():
        reasons.append("the current run is empty: no verdict on any baseline case")
        combined = _Combined(np.full(n, MISSING, np.int8), np.zeros(n, bool), [], 0)
    else:
        combined = _combine(chosen, states, k_min)
        reasons += combined.reasons
    final = combined.final
    # the other cases' states in the attempt the decision rests on
    attempt = states.codes[combined.attempt, n:] if runs else np.full(len(extra), MISSING)
    missing = [short[order[i]] for i in np.flatnonzero(final == MISSING).tolist()]
    errors = [short[order[i]] for i in np.flatnonzero(combined.errors).tolist()]
    errors += [extra[j] for j in np.flatnonzero(attempt == ERROR).tolist()]  # wherever they are
    said_empty = not runs or len(missing) == n  # the empty run is named above
    reasons += _gaps([] if said_empty else missing, n, states.gaps, errors, max_errors)
    vacuous = _vacuous(rec, k_min, target) if rule is None else _vacuous_case(rule, rec, target)
    if vacuous:
        reasons.append(vacuous)
    loose = _loose(rec, k_min) if rule is None else None
    if loose:
        warnings.append(loose)
    passed = int((final == PASS).sum())
    failing = _failing(rates, final, order, short, flaky, rec, rule)
    extra_failed = [extra[j] for j in np.flatnonzero(attempt == FAIL).tolist()]
    complete = not reasons
    ranked = rule.test(final <= ERROR, final == MISSING) if rule is not None else None
    if not complete:
        decision: Decision = "incomplete"
        reasons.insert(0, "incomplete evidence never passes")
    else:
        if rule is None:
            reasons.append(f"{passed} of {n} cases passed; the gate needs {k_min}")
            gate_failed = passed < k_min
        else:
            assert ranked is not None
            reasons.append(_rank_reason(ranked, passed, n))
            gate_failed = ranked.fails
        if extra_failed:
            reasons.append(
                f"{len(extra_failed)} failing case(s) are not in the baseline, so "
                f"nothing says they are noise: {few(extra_failed)}"
            )
        short_fail = bool(require_targets and shortfall)
        if short_fail:
            reasons.append(f"the gate falls short of its targets (--require-targets): {shortfall}")
        decision = "pass" if not gate_failed and not extra_failed and not short_fail else "fail"
    if not complete:
        p_value = None
    elif ranked is not None:
        p_value = ranked.p_value
    else:
        p_value = 1.0 if passed >= n else fas[passed + 1]
    quiet = [c for c in extra if c not in extra_failed and c not in errors]
    if quiet:
        warnings.append(
            f"{len(quiet)} case(s) of the current run are not in the baseline "
            f"and are not gated: {few(quiet)}"
        )
    spread = rec.case_spread
    return GateCheck(
        decision=decision,
        reasons=tuple(reasons),
        gate=gate_text,
        gate_rule=words,
        gate_source=source,
        k_min=k_min,
        cases=n,
        case_names=tuple(short[c] for c in order),
        passed=passed,
        false_alarm=fas[k_min] if rule is None else rule.false_alarm,
        false_alarm_target=target,
        p_value=p_value,
        failing=tuple(failing),
        error_cases=tuple(errors),
        baseline_errors=baseline.errors + baseline.unscored,
        max_errors=max_errors,
        missing=tuple(missing),
        missing_checks=tuple(states.gaps),
        uncalibrated=tuple(extra),
        uncalibrated_failures=tuple(extra_failed),
        policy=_policy_text(chosen),
        current_runs=tuple(runs),
        baseline=rec.measured.evidence(rec.runs),
        flaky_rate=FLAKY_RATE if flaky is None else flaky,
        confidence_level=rec.confidence_level,
        warnings=tuple(warnings),
        gate_kind="count" if rule is None else "cases",
        score=None if ranked is None else ranked.score / _UNITS,
        threshold=None if ranked is None or ranked.threshold is None else ranked.threshold / _UNITS,
        shortfall=shortfall,
        cases_differ=spread.cases_differ() if spread else None,
        runs_differ=spread.runs_differ() if spread else None,
        heavier_runs=None if ranked is None else ranked.at_least,
        allowed=None if ranked is None else ranked.allowed,
    )


#: The split of failing cases when the baseline is not measured case by case (above
#: CASE_GATE_MAX_CASES cases): a failing case whose baseline rate is at most this is a new failure.
FLAKY_RATE = 0.02


def _vacuous_case(rule: _CaseRule, rec: Recommendation, target: float) -> str | None:
    if rule.can_fail:
        return None
    from gatecal._model.rankgate import runs_needed

    return (
        f"the case-aware gate cannot fail a build: it ranks the run among {len(rule.failing)} "
        f"known-good runs, and {runs_needed(target)} are needed to fail any within the "
        f"false-alarm budget {target:g}; add known-good runs"
    )


def _rank_reason(ranked: RankTest, passed: int, n: int) -> str:
    """The rank rule's verdict in words."""
    r = ranked.runs
    weigh = f"the failing cases weigh {ranked.score / _UNITS:.2f}"
    if ranked.score == 0:
        return f"{weigh}: no case failed ({passed} of {n} cases passed)"
    return (
        f"{weigh}; {ranked.at_least} of {r} known-good runs weigh as much or more "
        f"(each against the others), the gate fails the build when fewer than "
        f"{ranked.allowed} do ({passed} of {n} cases passed)"
    )


def _measured(
    baseline: RunsData, target: float, confidence_level: float, method: str
) -> tuple[Recommendation, dict[str, str], list[str], CaseRates]:
    """The baseline as recommend measures it (without its sorted per-case records), its
    short case names, its cases (full ids) in recommend's order, and their intervals in
    that order: what every kind of check decides against."""
    from gatecal._analyses.recommend.gate import SIGNIFICANCE, recommend_with_rates

    # detection=0: check never needs recommend's fallback plans (which can be slow), and
    # its table's false-alarm column does not depend on the detection target
    rec, rates = recommend_with_rates(
        baseline,
        false_alarm=target,
        detection=0.0,
        regression=None,
        confidence_level=confidence_level,
        method=method,
        significance=SIGNIFICANCE,
        estimate_detection=False,  # check decides; it does not estimate what the gate can see
    )
    short = baseline.short_names()
    cases = baseline.cases()
    names = tuple(map(short.__getitem__, cases))
    if names == rec.case_order:  # every case seen in a good run: recommend's order is theirs
        return rec, short, cases, rates
    full_of = dict(zip(names, cases, strict=True))
    return rec, short, [full_of[name] for name in rec.case_order], rates


def _warnings(current: RunsData, baseline: RunsData) -> list[str]:
    """The readers' warnings of both sides (a cached baseline is one), and the baseline's
    errors, which it leaves out as missing data."""
    warnings = [*current.warnings, *(f"baseline: {w}" for w in baseline.warnings)]
    if baseline.errors or baseline.unscored:
        warnings.append(
            f"baseline: {baseline.errors + baseline.unscored} error or unscored verdicts, "
            "left out as missing data (an error is never a pass)"
        )
    return warnings


def _gaps(
    missing: list[str], n: int, gaps: list[str], errors: list[str], max_errors: int
) -> list[str]:
    """Why the evidence is incomplete: the one evidence rule (_model/evidence.py)."""
    from gatecal._model.evidence import evidence_reasons

    return evidence_reasons(
        missing=missing, cases=n, gaps=gaps, errors=errors, max_errors=max_errors
    )


def _failing(
    rates: CaseRates,
    final: Any,
    order: list[str],
    short: Mapping[str, str],
    flaky: float | None,
    rec: Recommendation,
    rule: _CaseRule | None,
) -> list[FailingCase]:
    """The baseline cases that did not pass (`final`, each case's state's code), new
    failures first, each with its record, its healthy rate and its weight."""
    import numpy as np

    at = np.flatnonzero(final <= ERROR)  # failed or error
    records = rec.case_spread.records if rec.case_spread is not None else None
    word = {"stable": "new", "flaky": "flaky", "systematic": "systematic"}
    failing = []
    for i, code in zip(at.tolist(), final[at].tolist(), strict=True):
        if records is not None:
            kind = word[records[i].kind]
            healthy: float | None = records[i].rate
        else:
            split = FLAKY_RATE if flaky is None else flaky
            kind = "new" if rates.rate(i).estimate <= split else "flaky"
            healthy = None
        failing.append(
            FailingCase(
                case=short[order[i]],
                case_id=order[i],
                status=STATE_NAMES[code],
                baseline=rates.rate(i),
                new=kind == "new",
                kind=kind,
                healthy_rate=healthy,
                weight=None
                if rule is None or records is None
                else rule.weight(records[i].failures, records[i].runs),
            )
        )
    rank = {"new": 0, "flaky": 1, "systematic": 2}
    # stable: ties keep the baseline's order, as built
    failing.sort(key=lambda f: (rank[f.kind], f.baseline.estimate))
    return failing


def _refuse_ambiguous(current: RunsData, baseline: RunsData, policy: object) -> None:
    """Refuse what cannot be decided as given: a current file that is also in the
    baseline, or several current runs with no policy saying how they combine."""
    import os

    known = {os.path.realpath(s) for s in baseline.sources}
    both = [s for s in current.sources if os.path.realpath(s) in known]
    if both:
        raise ParameterError(
            "current",
            "must not be one of the baseline's files (the run would be judged against itself)",
            both[0],
        )
    runs = current.runs("healthy")
    if policy is None and len(runs) > 1:
        raise ParameterError(
            "current",
            f"holds {len(runs)} runs ({few(runs, 3)}): name the --policy that combines "
            f"them ({CHECK_POLICIES}), or give one run",
            f"{len(current.sources)} files",
        )


def _the_gate(
    gate: GateLike | RecommendedGate | None,
    rec: Recommendation,
    fas: Sequence[float],
    target: float,
) -> tuple[int, str, str]:
    """``(k_min, rule, where it came from)`` of the gate given, or of the default one."""
    n = rec.cases
    if isinstance(gate, RecommendedGate):
        _check_fits(gate, rec)
        return gate.k_min, gate.text, f"recommended in {gate.source}"
    if gate is None:
        k_min = strictest_within(fas, target)
        source = (
            f"default: the strictest gate whose false alarm is within {target:g} "
            f"at the baseline's noise"
        )
        return k_min, f"fails<={n - k_min}", source
    rule = gate if isinstance(gate, Gate) else parse_gate(gate)
    return rule.k_min(n), rule.text, "given"


#: Below this detection of recommend's default regression (a quarter of the cases failing
#: a code check) the decision carries a warning: the gate lets such a build through.
LOOSE_BELOW = 0.01


def _vacuous(rec: Recommendation, k_min: int, target: float) -> str | None:
    """Why the gate cannot fail a build ("at least 0 pass"), with the known-good runs that
    would support a real one; None for a gate that can fail."""
    from gatecal._analyses.recommend.runs import runs_for_gate

    n = rec.cases
    if k_min >= 1:
        return None
    more = runs_for_gate(rec.failures_per_run, [n] * rec.runs, cases=n, false_alarm=target, k_min=1)
    if more is None:
        hint = (
            "no number of known-good runs at this noise would support a gate within the "
            "budget: quiet the judge (majority votes) or add cases"
        )
    else:
        extra = more - rec.runs
        hint = (
            f"about {extra} more known-good run{'s' if extra != 1 else ''} at this noise "
            f"({more} in all) would support 'at least 1 of {n}'"
        )
    return (
        f"the gate 'at least 0 of {n} cases pass' cannot fail a build ({rec.runs} known-good "
        f"runs allow no stricter gate within the false-alarm budget {target:g}); {hint}"
    )


def _loose(rec: Recommendation, k_min: int) -> str | None:
    """A warning when the gate almost never catches recommend's default regression."""
    detection = rec.table[k_min][1]
    if k_min == 0 or detection >= LOOSE_BELOW:
        return None
    return (
        f"the gate 'at least {k_min} of {rec.cases} cases pass' lets almost every regressed "
        f"build through: when {rec.regression}, it fails the build {detection:.2g} of the time"
    )
