"""Workers for large simulations: blocks of chunks, the caller computing too.

On Linux, when the caller runs one thread, the helpers are forked copies of it
(:func:`_forks_allowed`); elsewhere a helper thread and worker processes started by a
forkserver. The result is the same for any number of workers: chunk i always draws from
stream i.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

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


#: Where helpers cannot be forked: helpers that are threads of this process rather than
#: processes, at most this many of the ``workers - 1``. A thread starts at once and
#: computes from the first millisecond (numpy releases the GIL in each array operation),
#: where a first process waits for the forkserver to import numpy: 0.15 to 0.4 s, as long
#: as a 10^8-run simulation takes on one core at 3% (0.5 s). Measured at 10^8 runs on 2
#: shared cores: a thread 1.1-1.4x one worker at load 1 and 0.94x at load 2, a worker
#: process 1.0-1.3x and 0.75x; a thread is held back by the GIL's hand-offs (about forty
#: numpy calls a chunk), so more threads than one would queue for it, and further helpers
#: are processes.
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


class _Reports:
    """What the helpers put on one queue, read by the caller between its own blocks: a
    result, an exception (raised here), or _DONE when a helper stops."""

    def __init__(self) -> None:
        import queue

        self.queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.running = 0  # helpers that have not put _DONE yet

    def drain(
        self, wait: bool, accept: Callable[[Any], tuple[int, IntArray]]
    ) -> Iterator[tuple[int, IntArray]]:
        """``accept(item)`` of each item queued now, or, with `wait`, of every item until
        the last helper stops; an exception queued (or raised by `accept`) is raised."""
        while self.running and (wait or not self.queue.empty()):
            item = self.queue.get()
            if item is _DONE:
                self.running -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield accept(item)


#: Whether helpers may be forked copies of this process (tests turn it off to exercise
#: the thread and the forkserver). See :func:`_forks_allowed`.
_FORK_HELPERS = True

#: Fewest chunks worth forking helpers: a fork costs a few milliseconds.
FORK_MIN_CHUNKS = 8

#: Most blocks handed out through the fork helpers' pipe: their starts are written to it
#: before any helper reads, so they must fit in its buffer, which Linux may shrink to one
#: page (4096 bytes) when a user holds many pipes.
_PIPE_BLOCKS = 500

_RECORD = np.dtype("<i8")  # a helper's record: first, stop, runs, then the histogram


def _forks_allowed(n_chunks: int) -> bool:
    """Whether this simulation's helpers can be forked copies of this process.

    A forked helper needs no import (it is this process, numpy loaded, the plan built), so
    it computes from its first millisecond, and shares no GIL with the caller: at 10^8
    runs on 2 cores a thread gave 1.3x one worker where two processes gave 1.9x (measured,
    ``experiments/bench_limits.py``). Forking is safe only where no other Python thread
    can hold a lock the copy would inherit, so only when this process runs one thread,
    and only on Linux (macOS's system libraries are not fork-safe).
    """
    import sys

    return (
        _FORK_HELPERS
        and n_chunks >= FORK_MIN_CHUNKS
        and sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and _one_thread()
    )


def _one_thread() -> bool:
    """Whether this process runs a single Python thread."""
    import threading

    return threading.active_count() == 1


def _read_exactly(fd: int, size: int) -> bytes:
    """`size` bytes from `fd`, or fewer at its end."""
    data = b""
    while len(data) < size:
        more = os.read(fd, size - len(data))
        if not more:
            break
        data += more
    return data


def _write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd` (a pipe takes a large write in parts)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _take(tokens: int) -> int | None:
    """The next block start from the `tokens` pipe, or None when it is empty."""
    token = _read_exactly(tokens, _RECORD.itemsize)
    return int(np.frombuffer(token, dtype=_RECORD)[0]) if len(token) == _RECORD.itemsize else None


def _helper_process(
    task: Callable[..., tuple[int, IntArray]], tokens: int, out: int, block: int, n_chunks: int
) -> None:
    """A forked helper's life: take block starts from the `tokens` pipe until it is empty,
    write each block's record to `out`, then leave without running anything of the
    caller's (its atexit handlers, buffered output): ``os._exit``."""
    try:
        buffers = _Buffers()
        while (first := _take(tokens)) is not None:
            stop = min(n_chunks, first + block)
            runs, hist = task(first, stop, buffers)
            record = np.concatenate([np.array([first, stop, runs]), hist]).astype(_RECORD)
            _write_all(out, record.tobytes())
    except BaseException as exc:  # reported to the caller, which raises it
        message = f"{type(exc).__name__}: {exc}".encode()
        with contextlib.suppress(OSError):
            _write_all(out, np.array([-1, len(message)], dtype=_RECORD).tobytes() + message)
    finally:
        os._exit(0)


def _read_records(out: int, n_cases: int, results: Any) -> None:
    """Reader thread of one forked helper: its records onto `results`, then _DONE."""
    size = (n_cases + 4) * _RECORD.itemsize
    try:
        while True:
            head = _read_exactly(out, 2 * _RECORD.itemsize)
            if len(head) < 2 * _RECORD.itemsize:
                break
            first, second = np.frombuffer(head, dtype=_RECORD).tolist()
            if first < 0:  # the helper failed: its message follows
                message = _read_exactly(out, second).decode(errors="replace")
                results.put(RuntimeError(f"a worker process failed: {message}"))
                break
            rest = np.frombuffer(_read_exactly(out, size - len(head)), dtype=_RECORD)
            results.put(((first, second), (int(rest[0]), rest[1:].astype(np.int64))))
    finally:
        os.close(out)
        results.put(_DONE)


def _forked_blocks(
    task: Callable[..., tuple[int, IntArray]], n_chunks: int, workers: int, n_cases: int
) -> Iterator[tuple[int, IntArray]] | None:
    """:func:`_in_blocks` with ``workers - 1`` forked helpers (see :func:`_forks_allowed`),
    or None where the blocks' starts do not fit in a pipe (then threads and processes).

    This process and the helpers take block starts from one pipe (a read of 8 bytes is
    atomic); each helper writes its blocks' histograms to a pipe of its own, read by a
    thread of this process started after the last fork. A block a helper took and never
    reported (it was killed) is computed here at the end, so the histogram is always
    that of one worker. On an early exit the helpers are killed.
    """
    block = max(1, min(32, n_chunks // (32 * workers)), -(-n_chunks // _PIPE_BLOCKS))
    starts = list(range(0, n_chunks, block))
    data = np.array(starts, dtype=_RECORD).tobytes()  # at most 4000 bytes: written whole or not
    tokens, feed = os.pipe()
    try:
        os.set_blocking(feed, False)
        written = os.write(feed, data)
    except BlockingIOError:  # a pipe smaller than its page
        written = 0
    finally:
        os.close(feed)
    if written != len(data):
        os.close(tokens)
        return None
    return _run_forked(task, n_chunks, workers, n_cases, block, starts, tokens)


def _run_forked(
    task: Callable[..., tuple[int, IntArray]],
    n_chunks: int,
    workers: int,
    n_cases: int,
    block: int,
    starts: list[int],
    tokens: int,
) -> Iterator[tuple[int, IntArray]]:
    import threading
    import warnings

    reports = _Reports()
    pids: list[int] = []
    outs: list[int] = []
    done: set[int] = set()
    try:
        for _ in range(workers - 1):
            out, into = os.pipe()
            with warnings.catch_warnings():
                # Python 3.12+ warns of any fork in a process with several OS threads. Here
                # there is one Python thread (checked); the others are native pools (numpy's
                # BLAS), which stop themselves around a fork (pthread_atfork).
                warnings.simplefilter("ignore", DeprecationWarning)
                try:
                    pid = os.fork()
                except OSError:  # no room for another process: fewer helpers, same result
                    os.close(out)
                    os.close(into)
                    break
            if pid == 0:  # the helper: never returns
                os.close(out)
                _helper_process(task, tokens, into, block, n_chunks)
            os.close(into)
            pids.append(pid)
            outs.append(out)
        readers = [
            threading.Thread(target=_read_records, args=(out, n_cases, reports.queue), daemon=True)
            for out in outs
        ]
        outs = []  # the readers close them
        for reader in readers:
            reader.start()
        reports.running = len(readers)
        buffers = _Buffers()

        def reported(item: Any) -> tuple[int, IntArray]:
            (first, _), result = item
            done.add(first)
            return cast(tuple[int, IntArray], result)

        while _CALLER_WORKS and (first := _take(tokens)) is not None:
            result = task(first, min(n_chunks, first + block), buffers)
            done.add(first)
            yield result
            yield from reports.drain(False, reported)
        yield from reports.drain(True, reported)
        for first in starts:  # taken by a helper that died before reporting it
            if first not in done:
                yield task(first, min(n_chunks, first + block), buffers)
    finally:
        import signal

        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)  # (a helper that finished has left already)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        for fd in [tokens, *outs]:
            os.close(fd)


def _in_blocks(
    task: Callable[..., tuple[int, IntArray]], n_chunks: int, workers: int, n_cases: int
) -> Iterator[tuple[int, IntArray]]:
    """Chunk histograms, summed per block of chunks: in this process, or by `workers` that
    take blocks in turn: this process and forked copies of it where that is safe
    (:func:`_forked_blocks`); elsewhere this process, up to :data:`_HELPER_THREADS` helper
    threads of it, and the rest processes started for the simulation, at most two blocks in
    flight per process (memory stays flat for any run count). This process computes blocks
    from the start, while a first pool of processes waits about 0.3 s for the forkserver to
    import numpy. Integer histograms add up to the same total in any grouping and order, so
    the result never depends on `workers` or on who computed what."""
    if workers > 1 and _forks_allowed(n_chunks):
        forked = _forked_blocks(task, n_chunks, workers, n_cases)
        if forked is not None:
            yield from forked
            return
    threads = min(workers - 1, _HELPER_THREADS)
    processes = workers - 1 - threads if n_chunks >= PROCESS_MIN_CHUNKS else 0
    if threads + processes == 0 or n_chunks < THREAD_MIN_CHUNKS:
        buffers = _Buffers()
        for i in range(n_chunks):
            yield task(i, i + 1, buffers)
        return
    import threading
    from concurrent.futures.process import BrokenProcessPool

    # Small blocks keep the last ones short (no process waits long for another at the
    # end); 16 or more chunks a block keep the pool's per-block messages a few percent.
    blocks = _Blocks(n_chunks, max(1, min(32, n_chunks // (32 * workers))))
    reports = _Reports()
    helpers = [
        threading.Thread(target=_compute_blocks, args=(task, blocks, reports.queue), daemon=True)
        for _ in range(threads)
    ]
    if processes:
        helpers.append(
            threading.Thread(
                target=_feed_pool, args=(task, processes, blocks, reports.queue), daemon=True
            )
        )
    for helper in helpers:
        helper.start()

    def as_is(item: Any) -> tuple[int, IntArray]:
        return cast(tuple[int, IntArray], item)

    reports.running = len(helpers)
    try:
        buffers = _Buffers()
        while _CALLER_WORKS and (span := blocks.take()) is not None:
            yield task(*span, buffers)
            yield from reports.drain(False, as_is)
        yield from reports.drain(True, as_is)
    except BrokenProcessPool:
        rule = (
            "needs worker processes that start; the calling script needs an "
            "`if __name__ == '__main__':` guard, or use workers=1"
        )
        raise ParameterError("workers", rule, workers) from None
    finally:
        blocks.stop()  # on an early exit: the helpers take nothing more, then stop
        for helper in helpers:
            helper.join()
