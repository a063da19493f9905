"""Seed streams (SPEC 7): one root seed, one spawned stream per chunk of runs."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np

from gatecal._common.validate import ParameterError

__all__ = ["ChunkSeeder", "SeedLike", "chunk_generator", "renamed_seed", "root_seed"]

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


# SeedSequence's and PCG64's constants (numpy/random/bit_generator.pyx, pcg64.h): the
# hash of O'Neill's seed_seq_fe, and the 128-bit LCG multiplier.
_MASK32 = 0xFFFFFFFF
_MASK128 = (1 << 128) - 1
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_PCG_MULT = (2549297995355413924 << 64) | 4865540595714422341


def _words(value: object) -> list[int] | None:
    """SeedSequence's uint32 words of an entropy or spawn key (None: a form not handled)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 0:
        n = int(value)
        out = [n & _MASK32] if n == 0 else []
        while n:
            out.append(n & _MASK32)
            n >>= 32
        return out
    if isinstance(value, (list, tuple)):
        out = []
        for item in value:
            words = _words(item)
            if words is None:
                return None
            out += words
        return out
    return None


def _mix(x: int, y: int) -> int:
    result = (_MIX_L * x - _MIX_R * y) & _MASK32
    return result ^ (result >> 16)


class ChunkSeeder:
    """:func:`chunk_generator` for chunk after chunk of one root, about ten times faster.

    Making the i-th child SeedSequence and a PCG64 from it costs about 40 us, as much as
    a tenth of a chunk's work at a low flip rate. The child's entropy is the root's words
    and then i's, and SeedSequence mixes them in order, so the root's part is mixed once
    here; each chunk mixes its own word, draws the four 64-bit words PCG64 is seeded
    with, seeds the 128-bit LCG as PCG64 does, and sets the state of one reused
    Generator. The first chunk's state is checked against numpy's own construction; on
    any difference (another numpy, a root this does not handle) every chunk is made by
    :func:`chunk_generator`, so the streams are always numpy's.

    The Generator it returns is the same object every time: use it before the next call.
    """

    def __init__(self, root: np.random.SeedSequence) -> None:
        self.root = root
        self._gen: np.random.Generator | None = None
        self._tail: tuple[list[int], list[tuple[int, int]]] | None = None
        run, spawn = _words(root.entropy), _words(list(root.spawn_key))
        size = root.pool_size
        if run is None or spawn is None or size < 1:
            return
        fixed = run + [0] * (size - len(run)) + spawn  # spawn_key is never empty below
        hash_const = _INIT_A

        def hashmix(value: int) -> int:
            nonlocal hash_const
            value ^= hash_const
            hash_const = (hash_const * _MULT_A) & _MASK32
            value = (value * hash_const) & _MASK32
            return value ^ (value >> 16)

        pool = [hashmix(fixed[i]) for i in range(size)]
        for src in range(size):
            for dst in range(size):
                if src != dst:
                    pool[dst] = _mix(pool[dst], hashmix(pool[src]))
        for word in fixed[size:]:
            for dst in range(size):
                pool[dst] = _mix(pool[dst], hashmix(word))
        steps = []  # the hash constants the chunk's word meets: (xor, multiply) per pool word
        for _ in range(size):
            before = hash_const
            hash_const = (hash_const * _MULT_A) & _MASK32
            steps.append((before, hash_const))
        self._tail = (pool, steps)
        try:
            if self._state(0) != np.random.PCG64(self._child(0)).state:
                self._tail = None
        except (TypeError, ValueError, OverflowError):  # an entropy numpy itself refuses
            self._tail = None

    def _child(self, i: int) -> np.random.SeedSequence:
        root = self.root
        return np.random.SeedSequence(
            root.entropy, spawn_key=(*root.spawn_key, i), pool_size=root.pool_size
        )

    def _state(self, i: int) -> dict[str, object]:
        assert self._tail is not None
        base, steps = self._tail
        pool = list(base)
        for word in [i & _MASK32] if i <= _MASK32 else (_words(i) or []):
            for dst, (xor, mult) in enumerate(steps):
                value = ((word ^ xor) * mult) & _MASK32
                pool[dst] = _mix(pool[dst], value ^ (value >> 16))
            if i > _MASK32:  # a second word meets the constants after these: not handled
                raise OverflowError(i)
        hash_const, words = _INIT_B, []
        for k in range(8):  # generate_state(4, np.uint64): eight uint32 words, little-endian
            value = pool[k % len(pool)] ^ hash_const
            hash_const = (hash_const * _MULT_B) & _MASK32
            value = (value * hash_const) & _MASK32
            words.append(value ^ (value >> 16))
        seed = [words[2 * j] | (words[2 * j + 1] << 32) for j in range(4)]
        initstate, initseq = (seed[0] << 64) | seed[1], (seed[2] << 64) | seed[3]
        inc = ((initseq << 1) | 1) & _MASK128  # pcg_setseq_128_srandom_r
        state = ((inc + initstate) * _PCG_MULT + inc) & _MASK128
        return {
            "bit_generator": "PCG64",
            "state": {"state": state, "inc": inc},
            "has_uint32": 0,
            "uinteger": 0,
        }

    def __call__(self, i: int) -> np.random.Generator:
        """The generator of chunk i: the same stream as ``chunk_generator(root, i)``."""
        if self._tail is None or i > _MASK32:
            return chunk_generator(self.root, i)
        if self._gen is None:
            self._gen = np.random.Generator(np.random.PCG64())
        self._gen.bit_generator.state = self._state(i)
        return self._gen
