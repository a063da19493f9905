"""Sequential gates on a suite and as a policy: exact rates, simulation, the policies rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from gatecal._analyses.policies.rules import Policy, PolicyComparisonRow
from gatecal._common.docstrings import shared_docs
from gatecal._common.validate import ParameterError, check_count, check_probability
from gatecal._model.sequential import design_names
from gatecal._model.targets import Targets, with_flat_targets

if TYPE_CHECKING:
    from gatecal._common.seeds import SeedLike
    from gatecal._model.suite import JudgeNoise, Suite

from gatecal._analyses.sequential.designs import (
    RUN_MODELS,
    RatePmfs,
    RunModel,
    SequentialBoundary,
    SequentialDesign,
    SequentialGate,
    SharedBinomial,
)

#: Every sequential rule a policy may name: the searched designs and the e-process.
POLICY_DESIGNS = design_names()

__all__ = [
    "SequentialComparisonRow",
    "SequentialPolicy",
    "SequentialSample",
    "check_run_model",
    "parse_sequential",
    "run_pmfs",
    "sequential_gate",
    "sequential_rows",
    "shared_rate_model",
    "simulate_sequential",
]


# -- on a suite -------------------------------------------------------------------------------


def check_run_model(runs: str) -> RunModel:
    """`runs` if it names a model of the runs of one build (``shared``, ``independent``)."""
    for model in RUN_MODELS:
        if runs == model:
            return model
    raise ParameterError("runs", f"must be one of {', '.join(RUN_MODELS)}", runs)


def run_pmfs(
    suite: Suite, noise: JudgeNoise, looks: int, runs: str = "shared"
) -> tuple[RatePmfs | SharedBinomial, RatePmfs | SharedBinomial]:
    """One run's pass-count pmfs of the healthy and the regressed build, for `looks` runs
    of one build under the run model `runs`: ``shared`` (one flip rate for all the runs:
    the pmf at every node of the exact rule for `looks` runs) or ``independent`` (each
    run draws its own rate: one run's Beta mixture)."""
    from gatecal._engines.exact import exact_pass_counts

    if check_run_model(runs) == "independent" or not noise.run_correlated:
        return tuple(  # type: ignore[return-value]
            RatePmfs.independent(np.asarray(exact_pass_counts(suite, b, noise).pmf))
            for b in ("healthy", "regressed")
        )
    return tuple(  # type: ignore[return-value]
        shared_rate_model(suite, b, noise, looks) for b in ("healthy", "regressed")
    )


def shared_rate_model(
    suite: Suite, build: str, noise: JudgeNoise, looks: int
) -> RatePmfs | SharedBinomial:
    """`build`'s runs sharing one flip rate, exact for `looks` runs: a
    :class:`SharedBinomial` when every case that can pass has the same pass probability
    at every node (a uniform suite), one pmf per node (:class:`RatePmfs`) otherwise."""
    from gatecal._engines.exact import pass_count_pmfs, shared_rate_nodes

    qs, ws = shared_rate_nodes(suite, build, noise, looks)
    live = qs.any(axis=0)
    first = qs[:, int(np.argmax(live))]
    if live.any() and bool(np.all(qs[:, live] == first[:, None])):
        return SharedBinomial(cases=suite.n_cases, trials=int(live.sum()), q=first, weights=ws)
    pmfs = np.clip(pass_count_pmfs(qs), 0.0, None)
    return RatePmfs(pmfs / pmfs.sum(axis=1, keepdims=True), ws)


@shared_docs
def sequential_gate(
    suite: Suite,
    noise: JudgeNoise,
    design: str,
    looks: int,
    *,
    false_alarm: float = 0.05,
    detection: float = 0.8,
    runs: str = "shared",
) -> SequentialGate:
    """:func:`design_sequential` (``evalue``: :func:`gatecal.evalue_gate`) on one run's
    exact pass-count pmfs of the suite's healthy and regressed builds under `noise`. With
    ``noise.icc`` the runs of one build share one flip rate (``runs="shared"``, the
    default and the conservative model: reruns back to back) or each draws its own
    (``runs="independent"``); the design is searched and its rates quoted under that
    model (:func:`run_pmfs`).

    Parameters
    ----------
    %(suite_noise)s
    design : {"sprt", "pocock", "obf", "evalue"}
        The sequential design.
    looks : int
        The most runs (looks) the gate may take, at least 1.
    false_alarm : float, default 0.05
        The budget: P(fail a healthy build) at most this.
    detection : float, default 0.8
        The target: P(fail a regressed build) at least this.
    runs : {"shared", "independent"}, default "shared"
        Whether the runs of one build share one judge flip rate (under ``icc``).

    Returns
    -------
    SequentialGate
        The design's boundaries, its outcome on each build, whether it meets both
        targets, and the judge calls of one run.

    Raises
    ------
    ParameterError
        If `design` is unknown, or `runs` or a target is out of range.
    """
    from gatecal._analyses.sequential import designer

    ph, pr = run_pmfs(suite, noise, looks, runs)
    gate = designer(design)(looks, ph, pr, false_alarm=false_alarm, detection=detection)
    calls = int(suite.judge_mask().sum()) * suite.n_cases
    return SequentialGate(
        design=gate.design,
        healthy=gate.healthy,
        regressed=gate.regressed,
        meets_targets=gate.meets_targets,
        judge_calls_per_run=calls,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialSample:
    """Simulated sequences of CI runs under a sequential gate, verdict by verdict.

    Attributes
    ----------
    n_sequences : int
    failures : int
        Sequences that ended with the gate failing the build.
    stops : tuple of int
        ``stops[j - 1]``: sequences that stopped after run j.
    runs : int
        Runs made over all sequences.
    """

    n_sequences: int
    failures: int
    stops: tuple[int, ...]
    runs: int


@shared_docs
def simulate_sequential(
    suite: Suite,
    build: str,
    noise: JudgeNoise,
    design: SequentialDesign,
    *,
    n_sequences: int,
    rng: SeedLike = None,
    runs: str = "shared",
) -> SequentialSample:
    """Simulate `n_sequences` sequences of runs under `design`, every judge verdict drawn;
    with ``noise.icc`` the runs of a sequence share one flip rate (``runs="shared"``) or
    each draws its own (``"independent"``). Chunks of sequences get their own spawned
    streams (SPEC 7), so the result does not depend on the chunk size's hardware.

    Parameters
    ----------
    %(suite_build_noise)s
    design : SequentialDesign
        The boundaries, designed for the suite's number of cases.
    n_sequences : int
        Sequences to simulate, at least 1.
    rng : SeedLike, optional
        The root seed; None draws a fresh one.
    runs : {"shared", "independent"}, default "shared"
        Whether the runs of one sequence share one judge flip rate (under ``icc``).

    Returns
    -------
    SequentialSample
        The sequences that failed the build, when each stopped, and the runs made.

    Raises
    ------
    ParameterError
        If `design` is for another number of cases, `n_sequences` is below 1, or `runs`
        is unknown.
    """
    from gatecal._common.seeds import chunk_generator, root_seed

    shared = check_run_model(runs) == "shared"
    total = check_count("n_sequences", n_sequences, low=1)
    root = root_seed(rng)
    if design.cases != suite.n_cases:
        raise ParameterError("design", f"must be for {suite.n_cases} cases", design.cases)
    truth = suite.truth_matrix(build)
    judge = suite.judge_mask()
    code_ok = np.asarray(truth[:, ~judge].all(axis=1), dtype=bool)
    n, j = suite.n_cases, max(int(judge.sum()), 1)
    looks = design.looks
    pass_at = np.array([b.pass_at_least for b in design.boundaries])
    fail_at = np.array([b.fail_at_most for b in design.boundaries])
    chunk = max(1, (1 << 21) // (looks * n * j))
    failures, made = 0, 0
    stops = np.zeros(looks, dtype=np.int64)
    for index, start in enumerate(range(0, total, chunk)):
        gen = chunk_generator(root, index)
        size = min(chunk, total - start)
        if noise.run_correlated:
            x = gen.beta(*noise.beta_parameters(), size=(size, 1 if shared else looks))
            x = np.broadcast_to(x, (size, looks))
            keep = 1.0 - noise.unparseable
            truth_j = truth[:, judge]
            s = np.where(truth_j, keep * (1.0 - x[..., None, None]), keep * x[..., None, None])
        else:
            s = np.broadcast_to(noise.report_pass(suite, build), (size, looks, n, int(judge.sum())))
        verdict = gen.random((size, looks, n, int(judge.sum()))) < s
        k = (verdict.all(axis=-1) & code_ok).sum(axis=-1)  # (size, looks)
        total_s = np.cumsum(k, axis=1)
        stop_pass = total_s >= pass_at
        stop_fail = total_s <= fail_at
        stopped = stop_pass | stop_fail
        first = stopped.argmax(axis=1)  # the last look always stops
        failures += int(stop_fail[np.arange(size), first].sum())
        stops += np.bincount(first, minlength=looks)
        made += int((first + 1).sum())
    return SequentialSample(
        n_sequences=total, failures=failures, stops=tuple(int(v) for v in stops), runs=made
    )


# -- as a policy ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialPolicy(Policy):
    """A sequential gate as a policy (``sprt-5``, ``pocock-4``, ``obf-3``, ``evalue-10``):
    runs of the same build one after another until the gate on the cumulative passing
    count decides. ``evalue-MAX`` is the anytime-valid e-process of
    :mod:`gatecal._analyses.sequential.evalue` (`false_alarm` its nominal level, no search).

    Attributes
    ----------
    design : {'sprt', 'pocock', 'obf', 'evalue'}
    looks : int
        Runs at most.
    false_alarm, detection : float
        The targets its boundaries are searched for, against the suite's regressed build.
    runs : {'shared', 'independent'}
        With run-to-run correlation: the runs of one build share one flip rate (the
        default, the conservative model) or each draws its own.
    """

    sequential: ClassVar[bool] = True
    design: str = "sprt"
    looks: int = 5
    false_alarm: float = 0.05
    detection: float = 0.8
    runs: str = "shared"

    def __post_init__(self) -> None:
        Policy.__post_init__(self)
        if self.design not in POLICY_DESIGNS:
            raise ParameterError(
                "design", f"must be one of {', '.join(POLICY_DESIGNS)}", self.design
            )
        check_count("looks", self.looks, low=1, high=MAX_LOOKS)
        check_probability("false_alarm", self.false_alarm)
        check_probability("detection", self.detection)
        check_run_model(self.runs)
        if (self.majority, self.repeat, self.rerun_failing, self.rerun, self.confirm) != (
            1,
            1,
            0,
            0,
            0,
        ):
            raise ParameterError(
                "policy", "a sequential gate combines with no other policy", self.describe()
            )

    @property
    def text(self) -> str:
        return f"{self.design}-{self.looks}"

    def describe(self) -> str:
        names = {"sprt": "SPRT", "pocock": "Pocock", "obf": "O'Brien-Fleming"}
        if self.design == "evalue":
            return (
                f"e-process after each of up to {self.looks} runs (fails at e-value >= "
                f"1/{self.false_alarm:g}; nominal false alarm {self.false_alarm:g})"
            )
        return (
            f"{names.get(self.design, self.design)} over up to {self.looks} runs "
            f"(false alarm <= {self.false_alarm:g}, detection >= {self.detection:g})"
        )


#: The most runs (looks) a sequential gate may take: its boundary search is an exact DP over
#: every look, about 6 s at 100 looks of 12 cases (sprt-300 took 18 s, sprt-10000 minutes).
MAX_LOOKS = 100


def parse_sequential(
    text: str, *, false_alarm: float = 0.05, detection: float = 0.8, runs: str = "shared"
) -> SequentialPolicy | None:
    """``sprt-MAX``, ``pocock-LOOKS``, ``obf-LOOKS`` or ``evalue-MAX`` as a
    :class:`SequentialPolicy`; None when `text` names no sequential design.

    Parameters
    ----------
    text : str
        The spelling: a design name and a whole number of runs in [1, 100] (case is
        ignored).
    false_alarm : float, default 0.05
        The false-alarm budget the boundaries are searched for, in [0, 1].
    detection : float, default 0.8
        The detection target the boundaries are searched for, in [0, 1].
    runs : {"shared", "independent"}, default "shared"
        Whether the runs of one build share one judge flip rate (under ``icc``).

    Returns
    -------
    SequentialPolicy or None
        The policy, or None when `text` is not a ``design-N`` spelling of a design.

    Raises
    ------
    ParameterError
        Named ``policy``: a design's number of runs is not a whole number in [1, 100].
    """
    pieces = str(text).strip().lower().split("-")
    if len(pieces) != 2 or pieces[0] not in POLICY_DESIGNS:
        return None
    raw = pieces[1]
    if not (raw.isascii() and raw.isdecimal()) or not 1 <= int(raw) <= MAX_LOOKS:
        rule = f"{pieces[0]}-N needs a whole number of runs N in [1, {MAX_LOOKS}]"
        raise ParameterError("policy", rule, text)
    return SequentialPolicy(
        design=pieces[0], looks=int(raw), false_alarm=false_alarm, detection=detection, runs=runs
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialComparisonRow(PolicyComparisonRow):
    """A sequential policy on one build in ``compare_policies``: the columns of every policy
    (``gate`` is the policy's spelling, ``k_min`` the last look's ``pass_at_least``,
    ``judge_calls`` the expected calls until it stops), then its own.

    Attributes
    ----------
    boundaries : tuple of SequentialBoundary
    expected_runs : float
        E[runs until it stops] (ASN) of this build.
    stop_distribution : tuple of float
        P(it stops after run j), j = 1..looks.
    simulated_expected_runs : float
        Runs per simulated sequence.
    targets : Targets
        The policy's false-alarm budget and detection target (its row writes them flat:
        ``false_alarm_target``, ``detection_target``, the CSV's columns).
    meets_targets : bool
    run_model : {'shared', 'independent'}
        The model of the runs of one build (``SequentialPolicy.runs``).
    """

    boundaries: tuple[SequentialBoundary, ...]
    expected_runs: float
    stop_distribution: tuple[float, ...]
    simulated_expected_runs: float
    targets: Targets
    meets_targets: bool
    run_model: str = "shared"

    def to_dict(self) -> dict[str, Any]:
        """The row's columns, the targets flat in their place."""
        return with_flat_targets(PolicyComparisonRow.to_dict(self), self.targets)


@shared_docs
def sequential_rows(
    suite: Suite,
    noise: JudgeNoise,
    policy: SequentialPolicy,
    *,
    n_runs: int,
    seed: int,
    level: float,
) -> list[SequentialComparisonRow]:
    """The rows of `policy` in :func:`gatecal.compare_policies`: exact, and `n_runs`
    simulated sequences per build (seed `seed`) checked against the exact false alarm and
    detection with the binomial interval at `level`.

    Parameters
    ----------
    %(suite_noise)s
    policy : SequentialPolicy
        The sequential gate, with its targets and run model.
    n_runs : int
        Simulated sequences per build, at least 1.
    seed : int
        The root seed of the simulation.
    level : float
        The level of the binomial interval, strictly between 0 and 1.

    Returns
    -------
    list of SequentialComparisonRow
        One row per build: healthy, then regressed.
    """
    from gatecal._analyses.simulate import binomial_interval

    gate = sequential_gate(
        suite,
        noise,
        policy.design,
        policy.looks,
        false_alarm=policy.false_alarm,
        detection=policy.detection,
        runs=policy.runs,
    )
    calls = gate.judge_calls_per_run
    rows = []
    for build, out in (("healthy", gate.healthy), ("regressed", gate.regressed)):
        sample = simulate_sequential(
            suite, build, noise, gate.design, n_sequences=n_runs, rng=seed, runs=policy.runs
        )
        interval = binomial_interval(sample.n_sequences, out.failure_probability, level)
        rows.append(
            SequentialComparisonRow(
                policy=policy.describe(),
                build=build,
                gate=policy.text,
                rule=f"cumulative passing cases, {policy.looks} looks",
                k_min=gate.design.boundaries[-1].pass_at_least,
                failure_probability=out.failure_probability,
                judge_calls=out.expected_runs * calls,
                runs=sample.n_sequences,
                simulated_failures=sample.failures,
                simulated_judge_calls=sample.runs * calls / sample.n_sequences,
                interval_low=interval.low,
                interval_high=interval.high,
                consistent=sample.failures in interval,
                boundaries=gate.design.boundaries,
                expected_runs=out.expected_runs,
                stop_distribution=out.stop_distribution,
                simulated_expected_runs=sample.runs / sample.n_sequences,
                targets=Targets(false_alarm=policy.false_alarm, detection=policy.detection),
                meets_targets=gate.meets_targets,
                run_model=policy.runs,
            )
        )
    return rows
