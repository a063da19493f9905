"""Writing outputs without destroying what a user has.

Rules, for every output of every command:

- a new path, or a regular file, is replaced atomically (a temporary file beside it, then
  ``os.replace``), keeping the existing file's mode;
- a symlink is followed: its target is what gets replaced, the link stays;
- a character device (``/dev/null``, ``/dev/stdout``) or a FIFO is written through, never
  replaced; anything else (a directory, a socket, a block device) is refused;
- every output path is checked before any work; an output that is also an input, or that two
  options share, is refused;
- all outputs of a command land together or none do: every file is written to its temporary
  first, and only when all are complete are they moved into place (with the replaced files
  kept until the last move succeeds, and put back if one fails);
- a write error (a full disk, ``/dev/full``) is one :class:`OutputError` naming the option;
- an interruption (SIGINT, or SIGTERM under :func:`terminate_cleanly`) at any point removes
  every temporary and puts back whatever was already replaced, then goes on: the process
  ends by the signal as it would have, leaving nothing hidden beside the targets.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "OutputError",
    "PlannedOutput",
    "Terminated",
    "check_outputs",
    "held_signals",
    "terminate_cleanly",
    "write_outputs",
]

#: The signals that end a command and must leave nothing half-written behind.
_ENDING = (signal.SIGINT, signal.SIGTERM)


class Terminated(BaseException):
    """SIGTERM arrived: raised in the main thread so that every ``finally`` and every
    cleanup of temporaries runs, as for Ctrl-C; :func:`terminate_cleanly` then ends the
    process by the same signal."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"terminated by signal {signum}")


@contextlib.contextmanager
def terminate_cleanly() -> Iterator[None]:
    """While inside, SIGTERM unwinds like Ctrl-C (:class:`Terminated`), so temporaries are
    removed; leaving with it restores the default action and sends the signal again, so
    the exit status is the signal's. Only in the main thread, and only where SIGTERM has
    its default action (a host that handles it keeps its handler)."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return

    def raise_terminated(signum: int, frame: object) -> None:
        raise Terminated(signum)

    signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    except Terminated as exc:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.kill(os.getpid(), exc.signum)
        raise  # not reached when the default action ends the process
    finally:
        if signal.getsignal(signal.SIGTERM) is raise_terminated:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """SIGINT and SIGTERM held (delivered on leaving) while a temporary is created and
    recorded for cleanup: no instant in which it exists and nobody would remove it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _ENDING)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class OutputError(Exception):
    """An output that cannot be, or could not be, written; the message names the option."""

    def __init__(self, option: str, path: Path | str, reason: str) -> None:
        self.option = option
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{option} {reason} (got {str(path)!r})")


@dataclass(frozen=True, slots=True)
class PlannedOutput:
    """Where one output goes: `target` is the resolved path; `stream` means write through."""

    option: str
    path: Path
    target: Path
    stream: bool


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _plan(option: str, path: Path) -> PlannedOutput:
    text = str(path)
    if not text or "\0" in text:
        raise OutputError(option, path, "must be a file path")
    try:
        target = Path(os.path.realpath(path))  # follows every symlink, also dangling ones
        info = os.stat(target) if os.path.lexists(target) else None
    except OSError as exc:
        raise OutputError(option, path, f"cannot be used ({_reason(exc)})") from None
    if info is not None:
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            raise OutputError(option, path, "must be a file path, not a directory")
        if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
            if not os.access(target, os.W_OK):
                raise OutputError(option, path, "must be a writable path")
            return PlannedOutput(option, path, target, stream=True)
        if not stat.S_ISREG(mode):
            raise OutputError(option, path, "must be a regular file, a device or a FIFO")
        if not os.access(target, os.W_OK):
            raise OutputError(option, path, "must be a writable path")
    parent = target.parent
    if not parent.is_dir():
        raise OutputError(option, path, "must be in an existing directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(option, path, "must be in a writable directory")
    try:
        limit = os.pathconf(parent, "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    if len(os.fsencode(target.name)) > limit:
        raise OutputError(option, path, f"must have a file name of at most {limit} bytes")
    return PlannedOutput(option, path, target, stream=False)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a == b or os.path.samefile(a, b)
    except OSError:
        return False


def check_outputs(
    outputs: Sequence[tuple[str, Path | None]], inputs: Sequence[str | Path] = ()
) -> list[PlannedOutput]:
    """Check every output before any work: writable, not an input, not shared by two options.

    `outputs` are ``(option, path or None)``; `inputs` the paths the command reads (files or
    folders: an output inside an input folder is fine, the folder itself is not a file).
    """
    planned = [_plan(option, path) for option, path in outputs if path is not None]
    resolved_inputs = []
    for item in inputs:
        try:
            resolved_inputs.append(Path(os.path.realpath(item)))
        except (OSError, ValueError):
            continue
    for out in planned:
        if out.stream:
            continue
        for source in resolved_inputs:
            if _same_file(out.target, source):
                raise OutputError(out.option, out.path, "must not be one of the inputs")
    for i, a in enumerate(planned):
        for b in planned[i + 1 :]:
            if not (a.stream and b.stream) and _same_file(a.target, b.target):
                raise OutputError(b.option, b.path, f"must differ from {a.option}")
    return planned


def _temp_beside(target: Path) -> tuple[int, Path]:
    for _ in range(100):
        temp = target.parent / f".gatecal-{os.urandom(6).hex()}.tmp"
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), temp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target.parent))


def _mode(target: Path) -> int:
    try:
        return os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_outputs(items: Sequence[tuple[PlannedOutput, bytes]]) -> None:
    """Write every planned output, all or nothing (see the module's rules)."""
    temps: list[tuple[PlannedOutput, Path]] = []
    try:
        _write_temps(items, temps)
    except BaseException:  # an interruption too: nothing hidden is left beside a target
        for _, temp in temps:
            temp.unlink(missing_ok=True)
        raise
    try:
        _land(items, temps)
    except BaseException:
        for _, temp in temps:
            temp.unlink(missing_ok=True)
        raise


def _write_temps(
    items: Sequence[tuple[PlannedOutput, bytes]], temps: list[tuple[PlannedOutput, Path]]
) -> None:
    """Each file output written whole to a temporary beside it (recorded in `temps`)."""
    try:
        for out, data in items:
            if out.stream:
                continue
            with held_signals():
                fd, temp = _temp_beside(out.target)
                temps.append((out, temp))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(temp, _mode(out.target))
    except OSError as exc:
        for _, temp in temps:
            temp.unlink(missing_ok=True)
        failed = temps[-1][0] if temps else items[0][0]
        raise OutputError(
            failed.option, failed.path, f"could not be written ({_reason(exc)})"
        ) from None


def _land(
    items: Sequence[tuple[PlannedOutput, bytes]], temps: list[tuple[PlannedOutput, Path]]
) -> None:
    """The streams written, then every temporary moved into place, all or none."""
    # every file is complete; streams next (a full device fails here, before anything
    # is replaced), then the files move into place, keeping what they replace until the end
    for out, data in items:
        if out.stream:
            try:
                with open(out.target, "wb") as handle:
                    handle.write(data)
            except OSError as exc:
                for _, temp in temps:
                    temp.unlink(missing_ok=True)
                raise OutputError(
                    out.option, out.path, f"could not be written ({_reason(exc)})"
                ) from None
    moved: list[tuple[PlannedOutput, Path | None]] = []
    with held_signals():  # renames only: quick, and never half of them
        try:
            _move(temps, moved)
        except OSError as exc:  # a failed move: put back what was there
            for out, kept in reversed(moved):
                if kept is not None:
                    os.replace(kept, out.target)
                else:
                    out.target.unlink(missing_ok=True)
            for _, temp in temps:
                temp.unlink(missing_ok=True)
            failed = temps[len(moved)][0]
            raise OutputError(
                failed.option, failed.path, f"could not be written ({_reason(exc)})"
            ) from None
        for _, kept in moved:
            if kept is not None:
                kept.unlink(missing_ok=True)


def _move(
    temps: list[tuple[PlannedOutput, Path]], moved: list[tuple[PlannedOutput, Path | None]]
) -> None:
    """Each temporary moved onto its target, what it replaces kept as a hard link (in
    `moved`) until every move is done."""
    for out, temp in temps:
        backup = None
        if os.path.lexists(out.target):
            backup = out.target.parent / f".gatecal-{os.urandom(6).hex()}.bak"
            try:
                os.link(out.target, backup)
            except OSError:  # no hard links here: the move is still atomic, not undoable
                backup = None
        try:
            os.replace(temp, out.target)
        except OSError:
            if backup is not None:
                backup.unlink(missing_ok=True)
            raise
        moved.append((out, backup))
