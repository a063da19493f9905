"""Which per-case rule and suite gate meet the targets at the least cost, from measured runs.

:func:`recommend_policy` is ``gatecal recommend --policies``. The known-good runs are
measured exactly as :func:`gatecal.recommend_gate` measures them (the beta-binomial
(rate, icc) model and its profile-likelihood set at :data:`GATE_LEVEL`); for each candidate
per-case rule (:func:`gatecal.parse_policy`) every suite gate "at least k of n cases pass"
gets its false alarm bounded from above over that set, and its detection from below, by
the same search the plain gate uses (:meth:`NoiseBounds.largest`). The rule's gate is the
strictest within the false-alarm budget; the choice is the cheapest rule (expected judge
calls of a healthy build) whose gate also meets the detection target.

**The model of a rule.** In a run whose case failure rate is x (drawn from Beta(rate, icc)
per run, as recommend models it), every evaluation a rule makes of a case (a repeat, a
rerun of a failing case, a judge call of a majority or a re-ask) fails with probability x,
independently given x; a suite rerun (``rerun-R``) is a new run with its own x. The runs
measure whole case outcomes, so this holds as written for the rules that run the case
again (``repeat-K-of-N``, ``pass^K``, ``pass@K``, ``rerun-failing-R``, ``rerun-R``: what
``check --policy`` enforces); ``majority-M`` and ``confirm-M`` re-ask the judge on one
output, which this model treats as a fresh evaluation: right when the judge is the noise,
optimistic when the output itself varies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from gatecal._analyses.noise.bounds import NoiseBounds, noise_bounds
from gatecal._analyses.noise.tails import gate_fail_probabilities
from gatecal._analyses.policies.parse import parse_policy
from gatecal._analyses.policies.rules import Policy
from gatecal._common.contracts import json_header
from gatecal._common.display import Displayed
from gatecal._common.validate import ParameterError, check_instance, check_probability
from gatecal._model.arrays import Floats
from gatecal._model.gates import strictest_within
from gatecal._model.policy_names import policy_spellings
from gatecal._model.regression import RegressionLike, as_regression
from gatecal._model.suite import ICC_NEGLIGIBLE, beta_shape
from gatecal._model.targets import Targets
from gatecal.readers._data import RunsData

if TYPE_CHECKING:
    from gatecal._analyses.recommend.gate import Recommendation

__all__ = [
    "DEFAULT_RULES",
    "PolicyRecommendation",
    "RuleGate",
    "cases_differ",
    "parse_rules",
    "recommend_policy",
    "rule_rates",
]


#: The candidates when none are given: the rules ``check --policy`` can enforce on whole
#: runs, from the cheapest up. ``single`` (one evaluation per case); ``rerun-failing-1`` and
#: ``-2`` (a failing case runs again: it fails only if every try fails, at 1 + x and
#: 1 + x + x^2 evaluations); ``repeat-2-of-3`` (the majority of three runs of each case, 3
#: evaluations); ``pass^2`` (both of two runs must pass: twice the noise, for regressions
#: that fail only some of the time). ``majority-M`` and ``confirm-M`` are left to be asked
#: for: check cannot see inside a verdict, and under this model they equal
#: ``repeat-(M+1)/2-of-M`` and (``confirm-1``) ``rerun-failing-1``.
DEFAULT_RULES = ("single", "rerun-failing-1", "rerun-failing-2", "repeat-2-of-3", "pass^2")

#: The most evaluations of one case a candidate rule may make (its degree in the run's
#: rate): the quadrature grows with it times the cases.
MAX_DEGREE = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleGate:
    """One per-case rule with its strictest suite gate within the false-alarm budget.

    Attributes
    ----------
    rule : str
        The rule as given (``rerun-failing-1``); `policy` is it read.
    k_min : int or None
        The gate "at least k_min of n cases pass": the largest k whose false-alarm bound
        is within the budget, or None when not even k = 1 is.
    false_alarm, detection : float
        That gate's false-alarm bound (from above) and detection bound (from below; the
        measured regressed runs' estimate when there are some). At k = 1 when `k_min` is
        None.
    judge_calls : float
        Expected evaluations of a case (judge calls, one per case evaluation as the runs
        count them) in one CI run of a healthy build under this rule and gate, at the
        fitted (rate, icc).
    meets : bool
        A gate exists and its detection meets the target.
    checkable : bool
        ``gatecal check --policy`` can enforce this rule on whole runs.
    false_alarms, detections : tuple of float
        Both bounds for every gate, k = 0..n.
    """

    rule: str
    policy: Policy
    k_min: int | None
    false_alarm: float
    detection: float
    judge_calls: float
    meets: bool
    checkable: bool
    false_alarms: tuple[float, ...]
    detections: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "describe": self.policy.describe(),
            "k_min": self.k_min,
            "max_failures": None if self.k_min is None else len(self.false_alarms) - 1 - self.k_min,
            "false_alarm": self.false_alarm,
            "detection": self.detection,
            "judge_calls": self.judge_calls,
            "meets": self.meets,
            "checkable": self.checkable,
            "table": [
                {"k_min": k, "false_alarm": fa, "detection": det}
                for k, (fa, det) in enumerate(zip(self.false_alarms, self.detections, strict=True))
            ],
        }


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PolicyRecommendation(Displayed):
    """Every candidate rule's gate, bounds and cost, and the cheapest that meets both targets.

    `chosen` is the rule (as given) of that row, or None when no candidate meets both
    targets; ties in cost go to the higher detection, then to the earlier candidate.
    `cases_differ` is the p-value of Cochran's Q test that every case fails at the same
    rate within a run (:func:`cases_differ`): the model rates every case at the pooled
    rate, so where cases differ a rule that reruns or outvotes a failure is rated too
    kindly for the flaky ones (None: no test possible). `targets` are the false-alarm
    budget and the detection target (:class:`Targets`).
    """

    runs: int
    cases: int
    rate: float
    icc: float
    gate_level: float
    regression: str
    targets: Targets
    rows: tuple[RuleGate, ...]
    chosen: str | None
    cases_differ: float | None = None

    _renderer: ClassVar[str] = "gatecal._render.recommend_policy"

    def summary(self) -> str:
        """The chosen rule and its gate, and how many rules were weighed."""
        choice = self.choice
        head = (
            "no rule meets both targets"
            if choice is None
            else f"rule {choice.rule}, gate at least {choice.k_min} of {self.cases} cases pass"
        )
        return f"{head}; {len(self.rows)} rules from {self.runs} known-good runs"

    def row_dicts(self) -> list[dict[str, Any]]:
        """One dict per rule: its gate, bounds, cost, and whether it was chosen."""
        return [
            {
                "rule": g.rule,
                "k_min": g.k_min,
                "false_alarm": g.false_alarm,
                "detection": g.detection,
                "judge_calls": g.judge_calls,
                "meets": g.meets,
                "checkable": g.checkable,
                "chosen": g.rule == self.chosen,
            }
            for g in self.rows
        ]

    def to_frame(self) -> Any:
        """One row per rule (:meth:`row_dicts`)."""
        import pandas as pd  # deferred: `import gatecal` stays light

        return pd.DataFrame(self.row_dicts())

    def row(self, rule: str) -> RuleGate:
        """The row of a candidate, by its rule as given."""
        for r in self.rows:
            if r.rule == rule:
                return r
        raise ParameterError("rule", "must be one of the candidates", rule)

    @property
    def choice(self) -> RuleGate | None:
        return None if self.chosen is None else self.row(self.chosen)

    def to_dict(self, *, beside: Recommendation | None = None) -> dict[str, Any]:
        """The JSON contract ``gatecal.recommend`` with the rules under ``policies``:
        `beside`'s document (``gatecal recommend --policies``), or the header alone."""
        head = json_header("recommend") if beside is None else beside.to_dict()
        return {**head, "policies": self._policies()}

    def _policies(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "cases": self.cases,
            "rate": self.rate,
            "icc": self.icc,
            "gate_level": self.gate_level,
            "regression": self.regression,
            "targets": self.targets.to_dict(),
            "chosen": self.chosen,
            "cases_differ_p": self.cases_differ,
            "candidates": [r.to_dict() for r in self.rows],
        }


def _degree(policy: Policy) -> int:
    """Evaluations of one case a policy makes at most in one attempt: its degree in x."""
    check = 1 + policy.confirm if policy.confirm else policy.majority
    return check * policy.repeat * (policy.rerun_failing + 1)


def _case_fail(policy: Policy, x: Floats) -> tuple[Floats, Floats]:
    """P(a case fails one attempt) and its expected evaluations, at run rates `x`: every
    evaluation fails with probability x, independently (the failure side computed
    directly, accurate where it is tiny)."""
    from scipy import stats

    if policy.confirm:  # one call; a fail is re-asked and the majority of those decides
        c = policy.confirm
        check_fail: Floats = x * stats.binom.sf(c - c // 2 - 1, c, x)  # re-asks pass <= c/2
        per_try: Floats = np.asarray(policy.repeat * (1.0 + c * x), dtype=np.float64)
    else:
        m = policy.majority
        needed = m // 2 + 1 if m % 2 == 0 and policy.tie == "pass" else m - m // 2
        check_fail = np.asarray(stats.binom.sf(needed - 1, m, x) if m > 1 else x)
        per_try = np.full(x.shape, float(m * policy.repeat))
    r = policy.repeat
    try_fail = stats.binom.sf(r - policy.need, r, check_fail) if r > 1 else check_fail
    try_fail = np.asarray(try_fail, dtype=np.float64)
    tries = sum(try_fail**t for t in range(policy.rerun_failing + 1))
    return np.asarray(try_fail ** (policy.rerun_failing + 1)), np.asarray(per_try * tries)


def _mixture(rate: float, icc: float, degree: int) -> tuple[Floats, Floats]:
    """Nodes and weights of a Gauss rule exact for polynomials of `degree` in the run's rate
    x ~ Beta(rate, icc) (one point at icc 0 or at a rate of 0 or 1)."""
    if icc <= ICC_NEGLIGIBLE or rate <= 0.0 or rate >= 1.0:
        return np.array([min(max(rate, 0.0), 1.0)]), np.ones(1)
    from gatecal._common.quadrature import beta_rule

    a, b = beta_shape(rate, min(icc, 0.999))
    xs, ws = beta_rule(float(a), float(b), degree // 2 + 1)
    return np.clip(xs, 0.0, 1.0), ws / ws.sum()


def rule_rates(
    policy: Policy, n: int, rate: float, icc: float, *, broken: int = 0
) -> tuple[Floats, Floats]:
    """P(a CI run under `policy` fails "at least k of n cases pass") and its expected
    judge calls, k = 0..n, when each run's case failure rate is x ~ Beta(rate, icc).

    `broken` cases always fail (a code check): the detection of that regression. Every
    evaluation of the other cases fails with probability x, independently given x. Exact
    up to rounding: the count of failing cases given x is binomial in the per-case
    failure probability, a polynomial of degree ``n * evaluations`` in x, integrated by a
    Gauss rule exact to that degree; a suite rerun (``rerun-R``) fails only if every
    attempt fails, each a run of its own. Independent of :func:`gatecal.policy_rates`
    (which the tests compare it with).
    """
    from scipy import stats

    healthy = n - broken
    xs, ws = _mixture(rate, icc, max(1, healthy) * _degree(policy))
    fail, calls = _case_fail(policy, xs)
    j = np.arange(healthy + 1)
    # passes among the healthy cases, per node: P(passes = i) = P(failures = healthy - i)
    fail_pmf = np.asarray(stats.binom.pmf(j[None, :], healthy, fail[:, None]))
    pass_pmf = np.clip(ws @ fail_pmf[:, ::-1], 0.0, None)
    single = gate_fail_probabilities(np.concatenate((pass_pmf, np.zeros(broken))))
    # judge calls of one attempt, every case at the healthy rate (the cost is quoted for
    # the healthy build)
    one = float(ws @ calls) * n
    attempts = sum(single**t for t in range(policy.rerun + 1))
    return np.asarray(single ** (policy.rerun + 1)), np.asarray(one * attempts)


_RULE_HELP = f"a per-case rule: {policy_spellings()}, or several joined by '+'"


def parse_rules(policies: Sequence[str | Policy] | None) -> list[tuple[str, Policy]]:
    """The candidates as (text, Policy): rule texts read by :func:`gatecal.parse_policy`
    (:data:`DEFAULT_RULES` when None); sequential gates, correlated calls, a fresh retry
    rate, more than :data:`MAX_DEGREE` evaluations of a case and a rule named twice are
    refused. A :class:`Policy` is named as the rule text that reads back to it."""
    from gatecal._analyses.policies.sequential import SequentialPolicy

    given = list(DEFAULT_RULES if policies is None else policies)
    if not given:
        raise ParameterError("policies", "must name at least one rule", "")
    rules: list[tuple[str, Policy]] = []
    for item in given:
        text = item.strip() if isinstance(item, str) else _rule_text(item)
        try:
            policy = parse_policy(text) if isinstance(item, str) else item
        except ParameterError:
            raise ParameterError("policies", f"must be {_RULE_HELP}", text) from None
        if isinstance(policy, SequentialPolicy):
            rule = "must be per-case rules (a sequential gate decides over runs: see check)"
            raise ParameterError("policies", rule, text)
        if policy.call_icc or policy.retry_rate != "shared":
            rule = "must not set call_icc or a fresh retry rate (the runs measure neither)"
            raise ParameterError("policies", rule, text)
        if _degree(policy) > MAX_DEGREE:
            rule = f"must evaluate a case at most {MAX_DEGREE} times per attempt"
            raise ParameterError("policies", rule, text)
        if any(text == seen or policy == known for seen, known in rules):
            raise ParameterError("policies", "must not name a rule twice", text)
        rules.append((text, policy))
    return rules


def _rule_text(policy: Policy) -> str:
    """The text :func:`parse_policy` reads back to `policy` (its words when none does)."""
    parts = [
        f"majority-{policy.majority}" if policy.majority > 1 else "",
        f"confirm-{policy.confirm}" if policy.confirm else "",
        f"repeat-{policy.need}-of-{policy.repeat}" if policy.repeat > 1 else "",
        f"rerun-failing-{policy.rerun_failing}" if policy.rerun_failing else "",
        f"rerun-{policy.rerun}" if policy.rerun else "",
    ]
    text = "+".join(p for p in parts if p) or "single"
    return text if parse_policy(text) == policy else policy.describe()


def _checkable(policy: Policy) -> bool:
    from gatecal._analyses.policies.parse import parse_check_policy

    try:
        parse_check_policy(policy)
    except ParameterError:
        return False
    return True


def recommend_policy(
    data: RunsData,
    *,
    policies: Sequence[str | Policy] | None = None,
    false_alarm: float = 0.05,
    detection: float = 0.95,
    regression: RegressionLike | None = None,
    confidence_level: float = 0.95,
) -> PolicyRecommendation:
    """For each per-case rule, the strictest suite gate within the false-alarm budget, its
    detection and cost; and the cheapest rule meeting both targets.

    `data`, the targets, `regression` and `confidence_level` are as in
    :func:`gatecal.recommend_gate`, and so is the guarantee: each gate's false alarm is
    its one-sided :data:`GATE_LEVEL` profile-likelihood bound over the runs' (rate, icc)
    set, found on the set's upper edge by a bounded search over the icc (every rule's
    failure probability rises with the rate at any icc, not necessarily with the icc);
    detection is bounded from below the same way at `regression` cases failing a code
    check (a quarter by default), or is the estimate from measured regressed runs (each
    case failing every evaluation at its rate there), as recommend's. `policies`: rule
    texts (``single``, ``pass^2``, ``repeat-2-of-3``, ``rerun-failing-1``, ...) or
    :class:`Policy` objects; :data:`DEFAULT_RULES` when None. See the module docstring for
    the model of a rule.

    Parameters
    ----------
    data : RunsData
        Runs from :func:`gatecal.read_runs`: known-good (healthy) runs, and optionally
        runs of a regressed build.
    policies : sequence of str or Policy, optional
        The per-case rules to weigh (each one ``check`` can apply); default
        :data:`DEFAULT_RULES`.
    false_alarm : float, default 0.05
        The largest share of healthy builds a gate may fail, in [0, 1].
    detection : float, default 0.95
        The smallest share of regressed builds a gate must fail, in [0, 1].
    regression : Regression, str, int or float, optional
        The regression to detect (not with regressed runs); default a quarter of the
        cases.
    confidence_level : float, default 0.95
        The level of the noise region, in [0, 1].

    Returns
    -------
    PolicyRecommendation
        Per rule: the strictest gate within the budget, its detection and cost; and the
        cheapest rule meeting both targets, if one does.

    Raises
    ------
    ParameterError
        If `data` has no healthy runs, a rule is unknown or repeated, a probability is out
        of range, or `regression` is given with regressed runs or is out of range.
    """
    from gatecal._analyses.recommend.choice import regressed_rates
    from gatecal._analyses.recommend.runs import _healthy_outcomes

    check_instance("data", data, RunsData, "a gatecal.RunsData (from gatecal.read_runs)")
    alpha = check_probability("false_alarm", false_alarm)
    power = check_probability("detection", detection)
    level = check_probability("confidence_level", confidence_level)
    rules = parse_rules(policies)
    if "healthy" not in data.builds():
        raise ParameterError("runs", "must include known-good (healthy) runs", data.builds())
    runs, cases, outcome = _healthy_outcomes(data)
    n = len(cases)
    observed = outcome >= 0
    failures_per_run = (outcome == 0).sum(axis=1)
    bounds = noise_bounds(failures_per_run, observed.sum(axis=1), confidence_level=level)
    over = bounds.overdispersion
    measured = "regressed" in data.builds() and len(data.runs("regressed")) > 0
    if measured:
        if regression is not None:
            raise ParameterError("regression", "can't be combined with regressed runs", regression)
        reg_rate = regressed_rates(data, cases, bounds.rate.low)
        text = f"measured: {len(data.runs('regressed'))} regressed runs"
        broken = 0
    else:
        reg = as_regression("0.25" if regression is None else regression)
        broken = reg.failing(n)
        if not 1 <= broken <= n:
            raise ParameterError("regression", f"must make between 1 and {n} cases fail", reg.text)
        text = f"{reg.describe()} ({broken} of {n}, a code check)"
    rows = []
    for rule, policy in rules:
        fas = _bounded(bounds, policy, n)
        if measured:
            dets = _measured_detections(policy, reg_rate)
        else:
            dets = bounds.largest(_detections(policy, n, broken), upper=False)[0]
        best = strictest_within([float(v) for v in fas], alpha)
        k_min = best if best >= 1 else None
        at = best if best >= 1 else 1
        _, calls = rule_rates(policy, n, over.mean, over.icc)
        rows.append(
            RuleGate(
                rule=rule,
                policy=policy,
                k_min=k_min,
                false_alarm=float(fas[at]),
                detection=float(dets[at]),
                judge_calls=float(calls[at]),
                meets=k_min is not None and float(dets[at]) >= power,
                checkable=_checkable(policy),
                false_alarms=tuple(float(v) for v in fas),
                detections=tuple(float(v) for v in dets),
            )
        )
    meeting = [(r.judge_calls, -r.detection, i) for i, r in enumerate(rows) if r.meets]
    chosen = rows[min(meeting)[2]].rule if meeting else None
    return PolicyRecommendation(
        runs=len(runs),
        cases=n,
        rate=over.mean,
        icc=over.icc,
        gate_level=bounds.gate_level,
        regression=text,
        targets=Targets(false_alarm=alpha, detection=power),
        rows=tuple(rows),
        chosen=chosen,
        cases_differ=cases_differ(outcome),
    )


def cases_differ(outcome: npt.ArrayLike) -> float | None:
    """P-value of Cochran's Q test that the cases fail at one rate within each run.

    `outcome` is runs by cases (1 pass, 0 fail, -1 not observed); only the runs that
    observed every case count. Q = (k - 1) (k sum C_j^2 - N^2) / (k N - sum R_i^2) over
    the k cases' failure counts C_j, the runs' R_i and their total N, referred to
    chi-square with k - 1 degrees of freedom (Cochran 1950). It conditions on each run's
    failures, so a rate shared by a run's cases (any icc) is no difference. None with
    fewer than two cases or runs, or when no run has both failing and passing cases.
    """
    from scipy import stats

    table = np.asarray(outcome)
    fails = (table[(table >= 0).all(axis=1)] == 0).astype(np.float64)
    runs, k = fails.shape
    if k < 2 or runs < 2:
        return None
    col, row, total = fails.sum(axis=0), fails.sum(axis=1), float(fails.sum())
    denominator = k * total - float((row**2).sum())
    if denominator <= 0:
        return None
    q = (k - 1) * (k * float((col**2).sum()) - total**2) / denominator
    return float(stats.chi2.sf(q, k - 1))


def _bounded(bounds: NoiseBounds, policy: Policy, n: int) -> Floats:
    """Each gate's false-alarm bound under `policy`, k = 0..n (0 at k = 0, never falling)."""
    fas = bounds.largest(lambda mu, rho: rule_rates(policy, n, mu, rho)[0])[0]
    fas = np.maximum.accumulate(np.clip(fas, 0.0, 1.0))  # a search never loses order
    fas[0] = 0.0
    return np.asarray(fas)


def _detections(policy: Policy, n: int, broken: int) -> Callable[[float, float], Floats]:
    """Each gate's detection of `broken` cases failing a code check, at (rate, icc)."""

    def values(rate: float, icc: float) -> Floats:
        return rule_rates(policy, n, rate, icc, broken=broken)[0]

    return values


def _measured_detections(policy: Policy, reg_rate: Floats) -> Floats:
    """Each gate's detection when case i fails every evaluation at its measured rate in the
    regressed runs, independently of the others."""
    from gatecal._engines.exact import pass_count_pmf

    fail, _ = _case_fail(policy, np.asarray(reg_rate, dtype=np.float64))
    single = gate_fail_probabilities(pass_count_pmf(1.0 - fail, fail))
    return np.asarray(single ** (policy.rerun + 1))
