"""Workers for large simulations: blocks of chunks, the caller computing too.

The result is the same for any number of workers: chunk i always draws from stream i.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from gatecal._common.validate import ParameterError
from gatecal._engines.skipping import IntArray, _Buffers, _dense_chunk, _Plan, _skip_chunk

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

#: Fewest chunks (of CHUNK_VERDICTS verdicts) worth worker processes: starting one
#: costs about 0.1-0.3 s, so smaller simulations run in this process whatever
#: `workers` says (the result is the same either way).
PROCESS_MIN_CHUNKS = 256

#: Fewest chunks worth a helper thread (see :data:`_HELPER_THREADS`): it starts in
#: microseconds, so a few chunks are enough.
THREAD_MIN_CHUNKS = 4


def default_workers() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


_PROCESS_BUFFERS: _Buffers | None = None


def _chunk_block(
    plan: _Plan,
    root: np.random.SeedSequence,
    method: str,
    per_chunk: int,
    runs_total: int,
    first: int,
    stop: int,
    buffers: _Buffers | None = None,
) -> tuple[int, IntArray]:
    """Runs and summed histogram of chunks ``first..stop-1`` (one worker's task)."""
    global _PROCESS_BUFFERS
    if buffers is None:  # in a worker process (one thread): keep its buffers between tasks
        if _PROCESS_BUFFERS is None:
            _PROCESS_BUFFERS = _Buffers()
        buffers = _PROCESS_BUFFERS
    chunk: Callable[[np.random.Generator, _Plan, int, _Buffers], IntArray] = _skip_chunk
    if method != "dense" and plan.banded:
        from gatecal._engines.banded import _banded_chunk as chunk  # per-case rates only
    hist = np.zeros(plan.n_cases + 1, dtype=np.int64)
    done = 0
    for i in range(first, stop):
        runs = min(per_chunk, runs_total - i * per_chunk)
        gen = buffers.generator(root, i)
        if method == "dense":
            hist += _dense_chunk(gen, plan, runs)
        else:
            hist += chunk(gen, plan, runs, buffers)
        done += runs
    return done, hist


_PROCESS_TASK: Callable[..., tuple[int, IntArray]] | None = None


def _install_task(task: Callable[..., tuple[int, IntArray]]) -> None:
    """Worker process initializer: the simulation's task, sent once instead of per block."""
    global _PROCESS_TASK
    _PROCESS_TASK = task


def _installed_task(first: int, stop: int) -> tuple[int, IntArray]:
    assert _PROCESS_TASK is not None
    return _PROCESS_TASK(first, stop)


def _process_pool(
    workers: int, task: Callable[..., tuple[int, IntArray]] | None = None
) -> ProcessPoolExecutor:
    """Worker processes that start clean: forkserver where the OS has it (forked from a
    small server that has imported this module, so a worker starts in a fraction of a
    second and inherits no threads or locks of the caller), spawn elsewhere. With
    `task`, each worker receives it once, for :func:`_installed_task`."""
    import multiprocessing  # deferred, as everything about processes: only large runs use them
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["gatecal._engines.montecarlo"])
    if task is None:
        return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=_install_task, initargs=(task,)
    )


#: Whether this process computes blocks too while its worker processes run (tests turn
#: it off to make the workers do every block).
_CALLER_WORKS = True

_DONE = object()  # the feeder thread's last item


class _Blocks:
    """Block starts handed out to whoever asks first, this process or the pool's feeder."""

    def __init__(self, n_chunks: int, block: int) -> None:
        import threading

        self._starts = iter(range(0, n_chunks, block))
        self._lock = threading.Lock()
        self.block = block
        self.n_chunks = n_chunks
        self.stopped = False

    def take(self) -> tuple[int, int] | None:
        with self._lock:
            first = None if self.stopped else next(self._starts, None)
        return None if first is None else (first, min(self.n_chunks, first + self.block))

    def stop(self) -> None:
        with self._lock:
            self.stopped = True


def _feed_pool(
    task: Callable[..., tuple[int, IntArray]], processes: int, blocks: _Blocks, results: Any
) -> None:
    """Feeder thread: start `processes` workers, keep two blocks each in flight, put each
    block's result (or the exception that ended the pool) on `results`, then _DONE."""
    try:
        pool = _process_pool(processes, task)
        try:
            window: deque[Future[tuple[int, IntArray]]] = deque()
            while True:
                while len(window) < 2 * processes and (span := blocks.take()) is not None:
                    window.append(pool.submit(_installed_task, *span))
                if not window:
                    break
                results.put(window.popleft().result())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    except BaseException as exc:  # handed to the caller's thread, raised there
        results.put(exc)
    finally:
        results.put(_DONE)


#: Helpers that are threads of this process rather than processes: at most this many of
#: the ``workers - 1``. A thread starts at once and computes from the first millisecond
#: (numpy releases the GIL in each array operation), where a first process waits for the
#: forkserver to import numpy: 0.15 to 0.4 s, as long as a 10^8-run simulation now takes
#: on one core at 3% (0.5 s). Measured at 10^8 runs on 2 shared cores: a thread 1.1-1.4x
#: one worker at load 1 and 0.94x at load 2, a worker process 1.0-1.3x and 0.75x; a
#: thread is held back by the GIL's hand-offs (about forty numpy calls a chunk), so more
#: threads than one would queue for it, and further helpers are processes.
_HELPER_THREADS = 1


def _compute_blocks(
    task: Callable[..., tuple[int, IntArray]], blocks: _Blocks, results: Any
) -> None:
    """Helper thread: compute blocks with buffers of its own, put each block's result (or
    the exception that stopped it) on `results`, then _DONE."""
    try:
        buffers = _Buffers()
        while (span := blocks.take()) is not None:
            results.put(task(*span, buffers))
    except BaseException as exc:  # handed to the caller's thread, raised there
        results.put(exc)
    finally:
        results.put(_DONE)


def _in_blocks(
    task: Callable[..., tuple[int, IntArray]], n_chunks: int, workers: int
) -> Iterator[tuple[int, IntArray]]:
    """Chunk histograms, summed per block of chunks: in this process, or by `workers` that
    take blocks in turn: this process, up to :data:`_HELPER_THREADS` helper threads of it,
    and the rest processes started for the simulation, at most two blocks in flight per
    process (memory stays flat for any run count). This process computes blocks from the
    start, while a first pool of processes waits about 0.3 s for the forkserver to import
    numpy. Integer histograms add up to the same total in any
    grouping and order, so the result never depends on `workers` or on who computed what."""
    threads = min(workers - 1, _HELPER_THREADS)
    processes = workers - 1 - threads if n_chunks >= PROCESS_MIN_CHUNKS else 0
    if threads + processes == 0 or n_chunks < THREAD_MIN_CHUNKS:
        buffers = _Buffers()
        for i in range(n_chunks):
            yield task(i, i + 1, buffers)
        return
    import queue
    import threading
    from concurrent.futures.process import BrokenProcessPool

    # Small blocks keep the last ones short (no process waits long for another at the
    # end); 16 or more chunks a block keep the pool's per-block messages a few percent.
    blocks = _Blocks(n_chunks, max(1, min(32, n_chunks // (32 * workers))))
    results: queue.SimpleQueue[Any] = queue.SimpleQueue()
    helpers = [
        threading.Thread(target=_compute_blocks, args=(task, blocks, results), daemon=True)
        for _ in range(threads)
    ]
    if processes:
        helpers.append(
            threading.Thread(
                target=_feed_pool, args=(task, processes, blocks, results), daemon=True
            )
        )
    for helper in helpers:
        helper.start()

    def from_pool(item: Any) -> tuple[int, IntArray]:
        if isinstance(item, BrokenProcessPool):
            rule = (
                "needs worker processes that start; the calling script needs an "
                "`if __name__ == '__main__':` guard, or use workers=1"
            )
            raise ParameterError("workers", rule, workers) from None
        if isinstance(item, BaseException):
            raise item
        result: tuple[int, IntArray] = item
        return result

    running = len(helpers)
    try:
        buffers = _Buffers()
        while _CALLER_WORKS and (span := blocks.take()) is not None:
            yield task(*span, buffers)
            while running and not results.empty():
                item = results.get()
                if item is _DONE:
                    running -= 1
                    continue
                yield from_pool(item)
        while running:
            item = results.get()
            if item is _DONE:
                running -= 1
                continue
            yield from_pool(item)
    finally:
        blocks.stop()  # on an early exit: the helpers take nothing more, then stop
        for helper in helpers:
            helper.join()
