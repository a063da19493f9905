"""Chunk streams: ChunkSeeder makes exactly numpy's spawned streams, only faster."""

import numpy as np
import pytest

from gatecal._common import seeds
from gatecal._common.seeds import ChunkSeeder, chunk_generator, root_seed

ROOTS = [
    pytest.param(lambda: root_seed(1), id="int"),
    pytest.param(lambda: root_seed(20261130), id="default-seed"),
    pytest.param(lambda: root_seed(None), id="fresh-entropy"),
    pytest.param(lambda: root_seed(np.random.default_rng(5)), id="from-a-generator"),
    pytest.param(lambda: np.random.SeedSequence([1, 2, 3, 4, 5, 6]), id="word-list"),
    pytest.param(lambda: np.random.SeedSequence(2**200 + 7, spawn_key=(3, 9)), id="spawned"),
    pytest.param(lambda: np.random.SeedSequence(0), id="zero"),
    pytest.param(lambda: np.random.SeedSequence(5, pool_size=8), id="pool-8"),
]
CHUNKS = [0, 1, 2, 3, 255, 4096, 2**31, 2**32 - 1, 2**32, 2**40 + 3]


@pytest.mark.parametrize("make_root", ROOTS)
def test_chunk_streams_are_numpys_spawned_streams(make_root):
    root = make_root()
    seeder = ChunkSeeder(root)
    assert seeder._tail is not None  # every root here takes the fast path
    for i in CHUNKS:
        expected = chunk_generator(root, i)
        got = seeder(i)
        assert got.bit_generator.state == expected.bit_generator.state, i
        assert np.array_equal(got.standard_exponential(5), expected.standard_exponential(5))


def test_a_state_numpy_would_not_make_falls_back_to_numpy(monkeypatch):
    monkeypatch.setattr(seeds, "_PCG_MULT", seeds._PCG_MULT + 2)  # as if numpy changed
    root = root_seed(7)
    seeder = ChunkSeeder(root)
    assert seeder._tail is None
    for i in (0, 5):
        assert seeder(i).bit_generator.state == chunk_generator(root, i).bit_generator.state
