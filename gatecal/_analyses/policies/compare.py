"""Each policy's exact rates beside its simulated runs, in one report."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gatecal._analyses.policies.exact import policy_rates
from gatecal._analyses.policies.rules import Policy, PolicyComparisonRow, PolicyReport
from gatecal._analyses.policies.sequential import SequentialPolicy, sequential_rows
from gatecal._analyses.policies.simulate import simulate_policy
from gatecal._analyses.policies.spread import one_suite_ranges
from gatecal._common.defaults import DEFAULT_SEED
from gatecal._common.docstrings import shared_docs
from gatecal._common.intervals import binomial_interval
from gatecal._common.seeds import renamed_seed
from gatecal._common.validate import ParameterError, check_probability
from gatecal._model.gates import GateLike
from gatecal._model.suite import BUILDS, JudgeNoise, Suite

__all__ = ["compare_policies"]


@shared_docs
def compare_policies(
    suite: Suite,
    noise: JudgeNoise,
    gates: GateLike | Sequence[GateLike],
    policies: Sequence[Policy],
    *,
    n_runs: int = 20_000,
    rng: int = DEFAULT_SEED,
    confidence_level: float = 0.99,
    seed: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> PolicyReport:
    """:func:`policy_rates` for each policy, beside :func:`simulate_policy` with `n_runs` runs
    drawn from the root seed `rng` (`seed` is its deprecated old name).

    A sequential policy (:class:`gatecal.SequentialPolicy`) gets one row per build, not
    per gate (it gates the cumulative passing count with its own boundaries): a
    :class:`gatecal.SequentialComparisonRow`, exact by :func:`gatecal.sequential_gate`,
    beside `n_runs` sequences simulated verdict by verdict.

    `progress` is called with the runs of each simulated chunk (2 x `n_runs` per
    non-sequential policy; 0 when a policy's exact rates are done).

    Parameters
    ----------
    %(suite_noise)s
    gates : str, Gate or sequence of them
        The gates to evaluate under each policy (not used by a sequential policy).
    policies : sequence of Policy
        The policies to compare; at least one.
    n_runs : int, default 20000
        Simulated CI runs (or sequences) per policy and build, at least 1.
    rng : int, default 20261130
        The root seed of the simulations.
    confidence_level : float, default 0.99
        The level of the binomial interval each simulated rate is checked against.
    seed : int, optional
        Deprecated old name of `rng`.
    progress : callable, optional
        Called with the runs of each simulated chunk.

    Returns
    -------
    PolicyReport
        One row per policy, build and gate (one per policy and build for a sequential
        policy): the exact rate beside the simulated one.

    Raises
    ------
    ParameterError
        If `policies` is empty, or a gate, level or run count is out of range.
    """
    rng = renamed_seed(rng, seed, "compare_policies")

    if not policies:
        raise ParameterError("policies", "must hold at least one policy", list(policies))
    level = check_probability("confidence_level", confidence_level)
    rows: list[PolicyComparisonRow] = []
    methods: set[str] = set()
    for policy in policies:
        if isinstance(policy, SequentialPolicy):  # runs until the gate on S_j decides
            rows += sequential_rows(suite, noise, policy, n_runs=n_runs, seed=rng, level=level)
            continue
        exact = policy_rates(suite, noise, gates, policy)
        if progress is not None:
            progress(0)
        samples = {
            b: simulate_policy(
                suite, b, noise, gates, policy, n_runs=n_runs, rng=rng, progress=progress
            )
            for b in BUILDS
        }
        methods.update(sample.method for sample in samples.values())
        k_mins = sorted({r.k_min for r in exact.rows})
        ranges = {
            b: dict(zip(k_mins, one_suite_ranges(suite, b, noise, policy, k_mins), strict=True))
            for b in BUILDS
        }
        for r in exact.rows:
            sample = samples[r.build]
            failures = sample.failures[r.gate]
            interval = binomial_interval(sample.n_runs, r.failure_probability, level)
            rows.append(
                PolicyComparisonRow(
                    policy=policy.describe(),
                    build=r.build,
                    gate=r.gate,
                    rule=r.rule,
                    k_min=r.k_min,
                    failure_probability=r.failure_probability,
                    judge_calls=r.judge_calls,
                    runs=sample.n_runs,
                    simulated_failures=failures,
                    simulated_judge_calls=sample.judge_calls[r.gate] / sample.n_runs,
                    interval_low=interval.low,
                    interval_high=interval.high,
                    consistent=failures in interval,
                    **_range_fields(ranges[r.build][r.k_min]),
                )
            )
    return PolicyReport(
        suite=suite,
        noise=noise,
        seed=rng,
        n_runs=n_runs,
        confidence_level=level,
        policies=tuple(policies),
        rows=tuple(rows),
        simulation="counts" if "counts" in methods else "calls",
    )


def _range_fields(one: tuple[float, float] | None) -> dict[str, float]:
    return {} if one is None else {"one_suite_low": one[0], "one_suite_high": one[1]}
