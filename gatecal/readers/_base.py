"""What every reader shares: the Reader protocol, its input, options and output, and decoding text
safely."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from gatecal._common.files import WHOLE_MAX_BYTES, InputFileError, read_limited
from gatecal.readers._columns import VerdictBuilder
from gatecal.readers._data import FileRead, Skip
from gatecal.readers._verdict import RunsError, Verdict

__all__ = [
    "ATTEMPTS",
    "JUNIT_REPEATS",
    "PARTIAL",
    "Batch",
    "Head",
    "ReadOptions",
    "Reader",
    "ReaderBase",
    "Source",
    "decode",
    "each_source",
    "is_open_test_reporting",
    "load_json",
    "outcome_verdict",
    "split_repeats",
]

ATTEMPTS = ("first", "last")
JUNIT_REPEATS = ("auto", "flakefinder", "none")
PARTIAL = ("fail", "pass", "unscored")


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadOptions:
    """How to read what the sources leave open.

    Attributes
    ----------
    attempts : str
        ``first``: a test that failed and passed on a rerun counts as the failure it
        first was (the default: reruns hide the judge's noise); ``last``: its final
        outcome.
    junit_repeats : str
        ``auto``: pytest-repeat / ``deepeval -r`` suffixes ``[...-i-N]`` become runs
        when every testcase of a file carries them, and a JUnit 5 ``@RepeatedTest``'s
        repetitions are repeats of one case (``gatecal.readers.junit.invocations``);
        ``flakefinder``: pytest-flakefinder copies become runs; ``none``: names are
        taken as they are.
    target : str or None
        For a promptfoo file with several prompts x providers: the one to read.
    thresholds : mapping of str to float
        Numeric scores that count as verdicts: ``score >= threshold`` passes
        (inspect_ai scorers, DeepEval metrics without a success flag).
    partial : str
        What an inspect_ai ``P`` (partially correct) is: ``fail`` (default), ``pass``
        or ``unscored``.
    """

    attempts: str = "first"
    junit_repeats: str = "auto"
    target: str | None = None
    thresholds: Mapping[str, float] = field(default_factory=dict)
    partial: str = "fail"


@dataclass(slots=True)
class Batch:
    """What a reader returns: verdicts, skips, how each file was read, reruns, warnings."""

    #: the verdicts, appended as Verdict objects or field by field (see VerdictBuilder)
    verdicts: VerdictBuilder = field(default_factory=VerdictBuilder)
    skips: list[Skip] = field(default_factory=list)
    #: checks underneath a case-level verdict (status ``component``): never verdicts
    components: list[Verdict] = field(default_factory=list)
    files: list[FileRead] = field(default_factory=list)
    reruns: int = 0
    warnings: list[str] = field(default_factory=list)
    #: identities of invocations (an eval id, a promptfoo evalId) -> the file that had it
    sessions: dict[str, str] = field(default_factory=dict)

    def extend(self, other: Batch) -> None:
        for key, path in other.sessions.items():
            if key in self.sessions:
                raise RunsError(
                    f"{path}: the same invocation ({key}) as {self.sessions[key]}: read it once"
                )
            self.sessions[key] = path
        self.verdicts += other.verdicts
        self.skips += other.skips
        self.components += other.components
        self.files += other.files
        self.reruns += other.reruns
        self.warnings += other.warnings

    def add_file(
        self,
        path: Path | str,
        fmt: str,
        detail: str,
        build: str,
        runs: Iterable[str],
        *,
        errors: int = 0,
        notes: Iterable[str] = (),
        verdicts: int | None = None,
        skipped: int = 0,
    ) -> None:
        """Say how one file was read: its format, what the reader recognised, its runs and
        counts (a :class:`FileRead`); `verdicts` defaults to those the batch holds (a batch
        of one file)."""
        self.files.append(
            FileRead(
                path=str(path),
                format=fmt,
                detail=detail,
                build=build,
                runs=tuple(runs),
                verdicts=len(self.verdicts) if verdicts is None else verdicts,
                skipped=skipped,
                errors=errors,
                notes=tuple(notes),
            )
        )


class Head:
    """What format detection looks at: a text file's path and bytes, its text (decoded at
    once: undecodable bytes are one error naming the file) and, when a reader asks, its
    JSON document (parsed once however many readers ask)."""

    def __init__(self, path: Path | str, raw: bytes) -> None:
        self.path = path
        self.raw = raw
        #: the text without leading whitespace
        self.text = decode(raw, path).lstrip()  # whole: a slice could cut a character in two

    @cached_property
    def first_line(self) -> str:
        return self.text.split("\n", 1)[0]

    @cached_property
    def document(self) -> Any:
        """The file as one JSON document; RunsError naming the file when it is not one."""
        return load_json(self.raw, self.path)


@dataclass(frozen=True, slots=True)
class Source:
    """One file given to a reader: its path, a short label unique among the build's files
    (a session name) and its bytes when detection read them already."""

    path: Path
    label: str = ""
    raw: bytes | None = None

    def read_bytes(self) -> bytes:
        return self.raw if self.raw is not None else whole_bytes(self.path)


def whole_bytes(path: Path) -> bytes:
    """A runs file read whole: a regular file of at most WHOLE_MAX_BYTES, else RunsError."""
    try:
        return read_limited(path, WHOLE_MAX_BYTES)
    except InputFileError as exc:
        raise RunsError(str(exc)) from None


class Reader(Protocol):
    """One input format. The tuple of formats in ``_registry`` lists every reader; format
    detection, ``--input-format`` and its help are made from it.

    Attributes
    ----------
    FORMAT : str
        The format's name (``--input-format``, ``FileRead.format``).
    MAGIC : bytes
        What every file of a binary format starts with (``b""`` for a text format): a
        file that starts with it is this format's, decided before any text is decoded.
    GROUPED : bool
        Whether :meth:`read` takes all of a build's files of this format at once, after
        the build's other files (JUnit: a folder of per-class files is one run); else it
        is given one file at a time, in the order given.
    STREAMS : bool
        Whether :meth:`read` reads a big file without its bytes (raw ``None``): detection
        then looks at the file's first 64 KiB only.
    SUFFIXES : tuple of str
        The file name endings of the format, lower case: a folder given as input is
        searched for files of every format's endings.
    """

    FORMAT: str
    MAGIC: bytes
    GROUPED: bool
    STREAMS: bool
    SUFFIXES: tuple[str, ...]

    def sniff(self, head: Head) -> bool:
        """Whether a text file is of this format (the first reader in the tuple that
        says so reads it)."""
        ...

    def read(self, sources: Sequence[Source], build: str, options: ReadOptions) -> Batch:
        """Read files of this format, all of `build`."""
        ...


class ReaderBase:
    """What a reader is unless it says otherwise (see :class:`Reader`): a text format (no
    MAGIC) whose files are given one at a time (not GROUPED) and read whole (not STREAMS),
    each by its ``read_file(path, raw, build, options, label)``. A reader subclasses it and
    states only what differs."""

    MAGIC = b""
    GROUPED = False
    STREAMS = False

    @staticmethod
    def read_file(path: Path, raw: bytes, build: str, options: ReadOptions, label: str) -> Batch:
        """Read one file of the format, its bytes `raw`; `label` names its session."""
        raise NotImplementedError

    @classmethod
    def read(cls, sources: Sequence[Source], build: str, options: ReadOptions) -> Batch:
        return each_source(
            sources, lambda s: cls.read_file(s.path, s.read_bytes(), build, options, s.label)
        )


def outcome_verdict(outcome: str, **where: Any) -> Verdict:
    """The verdict of a test that ``passed``, ``failed`` or ended in an ``error`` (neither a
    pass nor a failure); `where` gives the rest of the :class:`Verdict` (build, run, case,
    ...)."""
    error = outcome == "error"
    return Verdict(
        passed=None if error else outcome == "passed", status="error" if error else "ok", **where
    )


def each_source(sources: Sequence[Source], read_one: Callable[[Source], Batch]) -> Batch:
    """What `read_one` reads of each source in turn, as one batch."""
    batch = Batch()
    for source in sources:
        batch.extend(read_one(source))
    return batch


def decode(raw: bytes, path: Path | str) -> str:
    """Text of a file: UTF-8 (a BOM allowed) or UTF-16 with its BOM; else one clear error."""
    from gatecal._common.text import TextError, decode_text

    try:
        return decode_text(raw, path)
    except TextError as exc:
        raise RunsError(str(exc)) from None


def load_json(raw: bytes, path: Path | str) -> Any:
    """Parse a JSON document (NaN and Infinity allowed, as Python writes them)."""
    try:
        return json.loads(decode(raw, path))
    except json.JSONDecodeError as exc:
        raise RunsError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise RunsError(f"{path}: not readable JSON (nested too deeply)") from None


def as_float(value: Any) -> float | None:
    """A finite or NaN float from a JSON number; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


_REPEAT = re.compile(r"^(?P<base>.*)\[(?:(?P<param>.*)-)?(?P<i>\d+)-(?P<n>\d+)\]$")
_FLAKEFINDER = re.compile(r"^(?P<base>.*)\[(?P<i>\d+)(?:-(?P<param>.*))?\]$")


def split_repeats(names: Sequence[str], mode: str = "auto") -> list[tuple[str, int]] | None:
    """(name without the repeat suffix, repeat i counted from 1) for every name, or None.

    ``auto``: pytest-repeat / ``deepeval test run -r N`` write ``test_x[param-i-N]``
    (``test_x[i-N]`` without parameters); the split holds only when every name carries
    such a suffix with one N and 1 <= i <= N, so ordinary ids like ``test_add[2-3]``
    alone are not mistaken for repeats. ``flakefinder``: pytest-flakefinder 1.1's
    ``test_x[i-param]`` / ``test_x[i]`` copies (i from 0); only on request, since a
    leading number is common in ordinary ids. ``none``: never.
    """
    if mode == "none" or not names:
        return None
    pattern = _REPEAT if mode == "auto" else _FLAKEFINDER
    out: list[tuple[str, int]] = []
    totals: set[int] = set()
    for name in names:
        match = pattern.match(name)
        if match is None:
            return None
        param = match.group("param")
        base = match.group("base") + (f"[{param}]" if param else "")
        i = int(match.group("i"))
        if mode == "auto":
            n = int(match.group("n"))
            if not 1 <= i <= n:
                return None
            totals.add(n)
        else:
            i += 1
        out.append((base, i))
    if mode == "auto" and len(totals) != 1:
        return None
    return out


_OTR_ROOT = re.compile(r"<(?:[\w.-]+:)?(?:events|execution)[\s>]")


def is_open_test_reporting(text: str) -> bool:
    """Whether XML text opens with an Open Test Reporting root element (``<e:events>``,
    ``<h:execution>`` in its namespaces): the JUnit reader leaves such files to that reader."""
    head = text[:4096]
    if not text.startswith("<") or "https://schemas.opentest4j.org/reporting/" not in head:
        return False
    return _OTR_ROOT.search(head) is not None
