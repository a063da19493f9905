"""Monte Carlo engine: flip individual judge verdicts, seeded per SPEC 7, in fixed chunks."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from gatecal._common.seeds import SeedLike, root_seed
from gatecal._common.validate import ParameterError, check_count, check_instance
from gatecal._engines.pool import _chunk_block, _in_blocks, default_workers
from gatecal._engines.skipping import _plan
from gatecal._model.suite import JudgeNoise, Suite

__all__ = ["CHUNK_VERDICTS", "SKIP_BELOW", "PassCountSample", "SeedLike", "simulate_pass_counts"]

Method = Literal["auto", "skip", "dense"]

#: Above this mean flip rate per verdict, ``method="auto"`` draws one uniform per
#: verdict: skipping then visits so many verdicts that it no longer saves work.
SKIP_BELOW = 0.2
IntArray: TypeAlias = npt.NDArray[np.int64]

#: Judge verdicts per random stream. The runs of a simulation are cut into chunks of
#: ``max(1, CHUNK_VERDICTS // verdicts_per_run)`` runs, chunk i drawing from its own
#: stream spawned from the root seed; so the result depends on the seed and the run
#: count only, never on how chunks are spread over workers, and memory stays bounded.
CHUNK_VERDICTS = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PassCountSample:
    """Simulated passing-case counts of one build over many CI runs.

    Attributes
    ----------
    n_runs : int
        Simulated CI runs.
    counts : tuple of int
        ``counts[k]`` = runs in which exactly k cases passed, ``k = 0..n``.
    """

    n_runs: int
    counts: tuple[int, ...]

    def __repr__(self) -> str:
        """One line, whatever the number of runs."""
        return (
            f"<gatecal.PassCountSample: {self.n_runs} simulated runs of {self.n_cases} cases, "
            f"mean pass rate {self.mean_pass_rate:.4g}>"
        )

    @property
    def n_cases(self) -> int:
        """Number of cases, n."""
        return len(self.counts) - 1

    @property
    def mean_pass_rate(self) -> float:
        """Share of (run, case) pairs that passed."""
        total = sum(k * c for k, c in enumerate(self.counts))
        return total / (self.n_runs * self.n_cases)

    def failures(self, k_min: int) -> int:
        """Runs in which the gate "at least `k_min` cases pass" failed the build."""
        k = check_count("k_min", k_min, low=0, high=self.n_cases)
        return sum(self.counts[:k])


def simulate_pass_counts(
    suite: Suite,
    build: str,
    noise: JudgeNoise,
    *,
    n_runs: int,
    rng: SeedLike = None,
    method: Method = "auto",
    workers: int | None = 1,
    progress: Callable[[int], object] | None = None,
) -> PassCountSample:
    """Simulate `n_runs` CI runs of `build`, flipping each judge verdict at random.

    Each run asks every judge check of every case once; a verdict on a truly
    passing check flips to "no" with probability ``noise.fnr`` and one on a truly
    failing check flips to "yes" with probability ``noise.fpr``, independently.
    A case passes if all its checks report pass (code checks report the truth).

    Parameters
    ----------
    suite, build, noise
        The model; see :class:`Suite` and :class:`JudgeNoise`.
    n_runs : int
        CI runs to simulate, at least 1. Memory does not grow with it.
    rng : int, SeedSequence, Generator or None
        The root seed (SPEC 7). Run chunk i draws from the i-th child of this seed,
        so the same seed gives the same sample whatever `workers` is.
    method : {'auto', 'skip', 'dense'}
        ``'skip'`` draws one exponential per *flipped* verdict and jumps between
        flips (geometric skipping); ``'dense'`` draws one uniform per verdict.
        Both flip every verdict independently with its exact probability.
        ``'auto'`` skips unless the mean flip rate exceeds :data:`SKIP_BELOW` or the
        runs are correlated (``noise.icc > 0``: each run draws its own rate). When cases
        spread (``noise.case_spread > 0``) every run is a suite drawn afresh, each case
        drawing its own rate, densely: the sample estimates the average over suites that
        :func:`exact_pass_counts` computes.
    workers : int or None
        Cores for the simulation, this process included: it computes blocks of chunks,
        and so do ``workers - 1`` helpers. On Linux, when this process runs a single
        thread, the helpers are forked copies of it (from :data:`FORK_MIN_CHUNKS` chunks
        on); otherwise one is a helper thread (from :data:`THREAD_MIN_CHUNKS` chunks on)
        and the rest are worker processes started for large simulations (at least
        :data:`PROCESS_MIN_CHUNKS` chunks). None: the cores available
        (:func:`default_workers`). The result does not depend on it. Worker processes
        that are not forked start by forkserver (spawn where there is none), so a script
        that asks for more than two on such a system needs the ``if __name__ ==
        "__main__":`` guard, as multiprocessing does.
    progress : callable, optional
        Called with the number of runs just finished, after each chunk or block of
        chunks, from the calling thread.

    Returns
    -------
    PassCountSample
        The histogram of passing-case counts over the runs.
    """
    check_instance("suite", suite, Suite, "a gatecal.Suite")
    check_instance("noise", noise, JudgeNoise, "a gatecal.JudgeNoise")
    runs_total = check_count("n_runs", n_runs, low=1)
    n_workers = default_workers() if workers is None else check_count("workers", workers, low=1)
    if method not in ("auto", "skip", "dense"):
        raise ParameterError("method", "must be 'auto', 'skip' or 'dense'", method)
    root = root_seed(rng)
    if noise.case_spread > 0:  # each run draws its suite: one uniform per verdict
        if method == "skip":
            rule = "'skip' needs fixed rates per case; use 'dense' or 'auto' with a case spread"
            raise ParameterError("method", rule, method)
        shape = _plan(suite, build, noise.at_case_rate(suite, noise.fnr))  # (its rates unused)
        plan = dataclasses.replace(shape, noise=noise)
        method = "dense"
    else:
        plan = _plan(suite, build, noise)
    if method == "auto":
        mean_rate = float(plan.rates.mean()) if plan.rates.size else 0.0
        method = "skip" if mean_rate <= SKIP_BELOW and not noise.run_correlated else "dense"
    if method == "skip" and noise.run_correlated:
        raise ParameterError("method", "'skip' needs icc == 0; use 'dense' or 'auto'", method)
    per_chunk = max(1, CHUNK_VERDICTS // max(1, plan.verdicts_per_run))
    n_chunks = -(-runs_total // per_chunk)

    task = functools.partial(_chunk_block, plan, root, method, per_chunk, runs_total)
    hist = np.zeros(plan.n_cases + 1, dtype=np.int64)
    for runs, block_hist in _in_blocks(task, n_chunks, n_workers, plan.n_cases):
        hist += block_hist
        if progress is not None:
            progress(runs)
    return PassCountSample(n_runs=runs_total, counts=tuple(int(c) for c in hist))
