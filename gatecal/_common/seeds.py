"""Seed streams (SPEC 7): one root seed, one spawned stream per chunk of runs."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np

from gatecal._common.validate import ParameterError

__all__ = ["SeedLike", "chunk_generator", "renamed_seed", "root_seed"]

SeedLike: TypeAlias = int | np.random.SeedSequence | np.random.Generator | None


def root_seed(rng: SeedLike) -> np.random.SeedSequence:
    if isinstance(rng, np.random.Generator):
        # Draw a fresh child, so that a Generator passed twice gives two samples.
        seq = rng.spawn(1)[0].bit_generator.seed_seq
        assert isinstance(seq, np.random.SeedSequence)
        return seq
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if rng is None or (isinstance(rng, int) and not isinstance(rng, bool) and rng >= 0):
        return np.random.SeedSequence(rng)
    raise ParameterError(
        "rng", "must be None, a non-negative int, a SeedSequence or a Generator", rng
    )


def chunk_generator(root: np.random.SeedSequence, i: int) -> np.random.Generator:
    """Stream of chunk i: the i-th spawned child of `root`, made without spawning the rest."""
    child = np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, i), pool_size=root.pool_size
    )
    return np.random.Generator(np.random.PCG64(child))


def renamed_seed(rng: int, seed: int | None, where: str) -> int:
    """`rng`, or the `seed` a caller passed by the old name (with a DeprecationWarning).

    The library names every root seed ``rng`` (SPEC 7); ``seed=`` was the older name of
    :func:`gatecal.simulate_gates` and :func:`gatecal.compare_policies`.
    """
    if seed is None:
        return rng
    import warnings

    warnings.warn(f"{where}(seed=...) is now {where}(rng=...)", DeprecationWarning, stacklevel=3)
    return seed
