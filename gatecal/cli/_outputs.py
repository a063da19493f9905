"""A command's outputs, checked before any work and written together or not at all; progress."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from gatecal.cli._errors import CliError

__all__ = ["BUSY_AFTER", "Outputs", "ProgressBar", "busy", "emit", "reading"]

#: Seconds a step runs before its spinner shows.
BUSY_AFTER = 2.0


class Outputs:
    """A command's outputs: all checked before any work, all written together or none.

    ``--out`` not given means standard output, printed only after every file is written.
    The rules for each path are gatecal/_common/output.py's.
    """

    def __init__(self, *pairs: tuple[str, Path | None], inputs: Sequence[str | Path] = ()) -> None:
        from gatecal._common.output import OutputError, check_outputs

        for option, path in pairs:
            if (
                option == "--chart"
                and path is not None
                and path.suffix.lower() not in (".png", ".svg")
            ):
                raise CliError(f"--chart must end in .png or .svg (got {str(path)!r})")
        try:
            planned = check_outputs(pairs, inputs)
        except OutputError as exc:
            raise CliError(str(exc)) from None
        self.planned = {p.option: p for p in planned}
        self.items: list[tuple[Any, bytes]] = []
        self.stdout: str | None = None

    def wants(self, option: str) -> bool:
        return option in self.planned

    def refuse_inputs(self, inputs: Sequence[str | Path]) -> None:
        """Check again once the inputs are known file by file (folders and globs read)."""
        from gatecal._common.output import OutputError, check_outputs

        pairs = [(p.option, p.path) for p in self.planned.values()]
        try:
            check_outputs(pairs, inputs)
        except OutputError as exc:
            raise CliError(str(exc)) from None

    def put(self, option: str, data: str | bytes) -> None:
        from gatecal._common.unicode import scrub

        if option in self.planned:  # a lone surrogate is written as U+FFFD, never a crash
            raw = scrub(data).encode("utf-8") if isinstance(data, str) else data
            self.items.append((self.planned[option], raw))
        elif option == "--out":
            self.stdout = scrub(data) if isinstance(data, str) else data.decode("utf-8")

    def chart(self, draw: Callable[[Any], Any], option: str = "--chart") -> None:
        """Draw with `draw(charts)`, if the chart was asked for."""
        if option in self.planned:
            from gatecal import charts

            self.put(option, charts.chart_bytes(draw(charts), self.planned[option].path.suffix))

    def commit(self) -> None:
        from gatecal._common.output import OutputError, write_outputs

        try:
            write_outputs(self.items)
        except OutputError as exc:
            raise CliError(str(exc)) from None
        if self.stdout is not None:
            if sys.stdout.isatty():
                from gatecal._common.tables import safe_terminal

                sys.stdout.write(safe_terminal(self.stdout))
            else:
                sys.stdout.write(self.stdout)


def emit(text: str, out: Path | None) -> None:
    """Print `text`, or write it to `out` by gatecal's output rules."""
    outputs = Outputs(("--out", out))
    outputs.put("--out", text)
    outputs.commit()


class ProgressBar:
    """A rich progress bar on stderr, shown only on a terminal and after one second
    (GATECAL_PROGRESS_AFTER overrides, as for :func:`busy`)."""

    def __init__(self, total: int, what: str = "simulating runs") -> None:
        self.total = total
        self.what = what
        self.done = 0
        self.start = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.after = _after(1.0)
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, runs: int) -> None:
        self.done += runs
        if not self.enabled:
            return
        if self.bar is None and time.monotonic() - self.start >= self.after:
            from rich.console import Console
            from rich.progress import Progress

            # refreshed here, not by rich's refresh thread: a process running a second
            # thread is never forked, so the simulation's helpers would be a thread
            self.bar = Progress(console=Console(stderr=True), transient=True, auto_refresh=False)
            self.bar.start()
            self.task = self.bar.add_task(self.what, total=self.total)
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, refresh=True)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@contextlib.contextmanager
def busy(what: str) -> Iterator[None]:
    """A spinner with the elapsed time on stderr while the block runs, shown only on a
    terminal and only once the block has run for BUSY_AFTER seconds (GATECAL_PROGRESS_AFTER
    overrides): reading 10^6 verdicts or searching a big plan takes long enough to wonder."""
    if not sys.stderr.isatty():
        yield
        return
    after = _after(BUSY_AFTER)
    done = threading.Event()

    def show() -> None:
        if done.wait(after):
            return
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        columns = (SpinnerColumn(), TextColumn(what), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
            progress.add_task(what, total=None)
            done.wait()

    thread = threading.Thread(target=show, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


class _BytesRead:
    """What the readers report (see gatecal/readers/_progress.py): the input files' sizes
    and how far each is read. Only the reading thread writes; the bar's thread reads."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}
        self.read: dict[str, int] = {}
        self.total = 0
        self.done = 0

    def expect(self, path: str, size: int) -> None:
        if path not in self.sizes:
            self.sizes[path] = size
            self.total += size

    def advance(self, path: str, done: int) -> None:
        if path not in self.sizes:
            self.expect(path, done)
        done = min(done, self.sizes[path])
        before = self.read.get(path, 0)
        if done > before:
            self.read[path] = done
            self.done += done - before


@contextlib.contextmanager
def reading(what: str) -> Iterator[None]:
    """A progress bar of the bytes read of the input files' size, on stderr while the
    block reads them: shown only on a terminal and only once the block has run for
    BUSY_AFTER seconds (GATECAL_PROGRESS_AFTER overrides), as :func:`busy`'s spinner."""
    if not sys.stderr.isatty():
        yield
        return
    from gatecal.readers._progress import listening

    after = _after(BUSY_AFTER)
    state = _BytesRead()
    done = threading.Event()

    def show() -> None:
        if done.wait(after):
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        columns = (TextColumn(what), BarColumn(), DownloadColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task(what, total=state.total or None)
            while True:
                progress.update(task, total=state.total or None, completed=state.done)
                if done.wait(0.1):
                    return

    thread = threading.Thread(target=show, daemon=True)
    thread.start()
    try:
        with listening(state):
            yield
    finally:
        done.set()
        thread.join()


def _after(default: float) -> float:
    """Seconds before progress shows: GATECAL_PROGRESS_AFTER if it is a number, else `default`."""
    text = os.environ.get("GATECAL_PROGRESS_AFTER", "")
    return float(text) if text.replace(".", "", 1).isdigit() else default
