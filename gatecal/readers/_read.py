"""Reading measured runs: each file's format detected, its reader called, the whole checked."""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from gatecal._common.files import INPUT_MAX_BYTES, InputFileError, check_regular
from gatecal.readers import _progress
from gatecal.readers._base import (
    ATTEMPTS,
    JUNIT_REPEATS,
    PARTIAL,
    Batch,
    Head,
    Reader,
    ReadOptions,
    Source,
    whole_bytes,
)
from gatecal.readers._columns import VerdictColumns, nfc_cases
from gatecal.readers._data import RunsData, duplicate_runs
from gatecal.readers._registry import INPUT_FORMATS, listed, reader, readers
from gatecal.readers._verdict import RunsError

__all__ = ["detect_format", "read_runs"]


def detect_format(path: Path | str, raw: bytes) -> str:
    """The format of a file, by its content (the name only breaks a tie): the first
    reader of the registry whose signature (a binary format's) starts the file, else the
    first whose ``sniff`` recognises its text.

    Parameters
    ----------
    path : Path or str
        The file's name: it only breaks a tie between readers that both recognise the
        content.
    raw : bytes
        The file's first bytes (or all of them).

    Returns
    -------
    str
        The format's name, one of ``gatecal.INPUT_FORMATS``."""
    every = readers()
    for found in every:
        if found.MAGIC and raw.startswith(found.MAGIC):
            return found.FORMAT
    head = Head(path, raw)
    for found in every:
        if found.sniff(head):
            return found.FORMAT
    if head.text.startswith(("{", "[")):
        raise RunsError(
            f"{path}: JSON that is not a promptfoo results file, an inspect_ai log, "
            "a DeepEval test run or gatecal JSONL"
        )
    if not head.text:
        raise RunsError(f"{path}: the file is empty")
    raise RunsError(f"{path}: not a format gatecal reads ({listed()})")


def _glob(pattern: str) -> list[str]:
    """`glob.glob(pattern, recursive=True)`, except that ``**`` enters every directory once:
    a directory symlink that loops (or two links to one folder) is not followed again, so a
    pattern always ends and finds each file once. Hidden names match only a pattern that
    names them, as in glob."""
    if "**" not in pattern:
        return glob.glob(pattern)  # no recursion: symlinks cannot loop
    parts = Path(pattern).parts
    first = next(i for i, part in enumerate(parts) if glob.has_magic(part))
    base = Path(*parts[:first]) if first else Path(".")
    found: list[str] = []
    entered: set[str] = set()

    def children(folder: Path) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(folder) as it:
                return sorted(it, key=lambda e: e.name)
        except OSError:
            return []

    def match(folder: Path, rest: tuple[str, ...]) -> None:
        head, tail = rest[0], rest[1:]
        if head == "**":
            if tail:
                match(folder, tail)  # zero folders
            for entry in children(folder):
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                real = os.path.realpath(entry.path)
                if real in entered:
                    continue  # reached already (a loop, or another link to it)
                entered.add(real)
                match(Path(entry.path), rest)
            if not tail:
                match(folder, ("*",))
            return
        for entry in children(folder):
            hidden = entry.name.startswith(".") and not head.startswith(".")
            if hidden or not fnmatch.fnmatchcase(entry.name, head):
                continue
            if tail and entry.is_dir():
                match(Path(entry.path), tail)
            elif not tail:
                found.append(
                    entry.path if first or pattern.startswith("./") else os.path.relpath(entry.path)
                )

    entered.add(os.path.realpath(base))
    match(base, parts[first:])
    return found


def _expand(paths: Sequence[str | Path], role: str) -> list[Path]:
    suffixes = {suffix for found in readers() for suffix in found.SUFFIXES}
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = []
            for folder, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    candidate = Path(folder, name)
                    if (
                        not name.startswith(".")
                        and candidate.suffix.lower() in suffixes
                        and candidate.is_file()
                    ):
                        found.append(candidate)
            if not found:
                kinds = ", ".join(sorted(suffixes))
                raise RunsError(f"{path}: no run files ({kinds}) in this directory")
            files += found
        elif path.exists():
            if not stat.S_ISREG(path.stat().st_mode):
                raise RunsError(f"{path}: not a regular file or directory")
            files.append(path)
        else:
            matches = sorted(_glob(str(raw)))
            regular = [Path(m) for m in matches if Path(m).is_file()]
            if not regular:
                raise RunsError(f"{raw}: no such file, directory or match")
            files += regular
    seen: dict[Path, None] = {}
    for f in files:
        try:  # a glob's or a folder's match too: no device, no FIFO, and within the limit
            check_regular(f, INPUT_MAX_BYTES)
        except InputFileError as exc:
            raise RunsError(str(exc)) from None
        key = f.resolve()
        if key in seen:
            # the paths' own role ("known-good" was wrong for check's current run)
            raise RunsError(f"{f}: named twice in the same list of {role}")
        seen[key] = None
    return files


def _labels(files: Sequence[Path]) -> dict[Path, str]:
    """A short, unique session label per file: its stem, its name, or its path."""
    for label in (lambda p: p.stem, lambda p: p.name, lambda p: str(p)):
        labels = {f: label(f) for f in files}
        if len(set(labels.values())) == len(labels):
            return labels
    return {f: str(f.resolve()) for f in files}


def _check_options(options: ReadOptions, input_format: str | None) -> None:
    if input_format is not None and input_format not in INPUT_FORMATS:
        raise RunsError(
            f"input format must be one of {', '.join(INPUT_FORMATS)} (got {input_format!r})"
        )
    if options.attempts not in ATTEMPTS:
        raise RunsError(f"attempts must be first or last (got {options.attempts!r})")
    if options.junit_repeats not in JUNIT_REPEATS:
        raise RunsError(
            f"junit repeats must be one of {', '.join(JUNIT_REPEATS)} "
            f"(got {options.junit_repeats!r})"
        )
    if options.partial not in PARTIAL:
        raise RunsError(f"partial must be one of {', '.join(PARTIAL)} (got {options.partial!r})")


def read_runs(
    paths: Sequence[str | Path],
    regressed: Sequence[str | Path] = (),
    *,
    input_format: str | None = None,
    attempts: str = "first",
    junit_repeats: str = "auto",
    target: str | None = None,
    thresholds: Mapping[str, float] | None = None,
    partial: str = "fail",
) -> RunsData:
    """Read measured runs from files, directories (searched recursively) or glob patterns.

    Each file's format is detected from its content (`input_format` overrides it):
    JUnit XML, gatecal's long CSV/JSONL table, promptfoo results, inspect_ai logs, a
    DeepEval test run or JUnit's Open Test Reporting XML; see the reader modules for how
    each maps to runs, cases and checks. Files in `regressed` are runs of the regressed
    build. Skipped tests are missing data (counted in ``skips``); errors and unscored
    verdicts are neither passes nor failures (``status``); rerun attempts count per
    `attempts`.

    Parameters
    ----------
    paths : sequence of str or Path
        The known-good (healthy) runs: files, directories (searched recursively) or glob
        patterns.
    regressed : sequence of str or Path, default ()
        Runs of the regressed build, named the same way.
    input_format : str, optional
        One of the readers' formats (``gatecal.INPUT_FORMATS``) for every file; by default
        each file's format is detected from its content.
    attempts : {'first', 'last'}, default 'first'
        A test that failed and then passed on a rerun counts as its first attempt (a
        failure: reruns hide the judge's noise) or its last.
    junit_repeats : {'auto', 'flakefinder', 'none'}, default 'auto'
        How repeats inside one JUnit file become runs: pytest-repeat / ``deepeval -r``
        suffixes when every testcase carries them (and a JUnit 5 ``@RepeatedTest``'s
        repetitions), pytest-flakefinder copies, or none.
    target : str, optional
        For a promptfoo file with several prompts x providers: the one to read.
    thresholds : mapping of str to float, optional
        Numeric scores that count as verdicts, by check: ``score >= threshold`` passes
        (inspect_ai scorers, DeepEval metrics without a success flag).
    partial : {'fail', 'pass', 'unscored'}, default 'fail'
        What an inspect_ai ``P`` (partially correct) score is.

    Returns
    -------
    RunsData
        Every verdict read (run, case, check, kind, build, passed, status, ...), the
        skipped tests, the files and how each was read, and the readers' warnings.

    Raises
    ------
    RunsError
        Naming the file, line or element: a missing column, an unknown `passed`
        value, a duplicate verdict, unreadable text, input that is not what its name
        claims, or no verdict at all.

    Examples
    --------
    >>> import json, pathlib, tempfile
    >>> import gatecal
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> rows = [{"run": f"night-{r}", "case": f"case-{c}", "passed": (r, c) != (1, 2)}
    ...         for r in range(3) for c in range(4)]
    >>> _ = (folder / "nightly.jsonl").write_text("".join(json.dumps(x) + "\\n" for x in rows))
    >>> runs = gatecal.read_runs([folder])  # a folder is searched, each file's format detected
    >>> runs.files[0].format, runs.files[0].runs
    ('jsonl', ('night-0', 'night-1', 'night-2'))
    >>> frame = runs.to_frame()
    >>> int((~frame["passed"].astype(bool)).sum())  # one failing verdict: case-2 in night-1
    1
    """
    for name, group in (("paths", paths), ("regressed", regressed)):
        if isinstance(group, str | bytes | Path) or not isinstance(group, Sequence):
            rule = "must be a list of files, folders or glob patterns"
            raise RunsError(f"`{name}` {rule} (got {type(group).__name__})")
    options = ReadOptions(
        attempts=attempts,
        junit_repeats=junit_repeats,
        target=target,
        thresholds=dict(thresholds or {}),
        partial=partial,
    )
    _check_options(options, input_format)
    total = Batch()
    for build, group, role in (
        ("healthy", paths, "runs"),
        ("regressed", regressed, "regressed runs"),
    ):
        batch = Batch()
        files = _expand(group, role)
        _progress.expect(files)
        labels = _labels(files)
        grouped: dict[str, tuple[Reader, list[Source]]] = {}
        for path in files:
            found = _by_signature(path, input_format) or _streamed(path, input_format)
            raw = None
            if found is None:
                raw = whole_bytes(path)
                found = reader(input_format or detect_format(path, raw))
            if found.GROUPED:  # read with the build's other files of its format, below
                grouped.setdefault(found.FORMAT, (found, []))[1].append(Source(path, labels[path]))
                continue
            batch.extend(found.read([Source(path, labels[path], raw)], build, options))
            _progress.done(path)
        for found, sources in grouped.values():
            batch.extend(found.read(sources, build, options))
        total.extend(batch)
    return _assemble(total, options)


def _first_duplicate(table: VerdictColumns) -> int | None:
    """The first verdict (in order) whose (build, run, case, check) an earlier one has."""
    from gatecal.readers._duplicates import first_duplicate

    return first_duplicate(table)


def _by_signature(path: Path, input_format: str | None) -> Reader | None:
    """The reader of the binary format whose signature starts the file, found without
    reading further (a Parquet file is then read in batches, never whole)."""
    with open(path, "rb") as handle:
        start = handle.read(16)
    for found in readers():
        if found.MAGIC and start.startswith(found.MAGIC) and input_format in (None, found.FORMAT):
            return found
    return None


def _streamed(path: Path, input_format: str | None) -> Reader | None:
    """The reader of a big file that reads it without loading it whole (a reader that
    STREAMS), detected from the file's first 64 KiB; None for a small file or any other
    (read whole, as always)."""
    from gatecal.readers.table.blocks import STREAM_MIN_BYTES

    if path.stat().st_size < STREAM_MIN_BYTES:
        return None
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\0" in head:
        return None
    if head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"<"):
        # markup, one line or many: told by its first character; its parser decodes it
        # (an XML declaration may name another encoding)
        head = b"<"
        if input_format not in (None, detect_format(path, head)):
            return None
    elif b"\n" in head:
        head = head[: head.rfind(b"\n") + 1]
    else:
        return None
    try:
        found = reader(input_format or detect_format(path, head))
    except RunsError:
        return None
    return found if found.STREAMS else None


#: A case id in Unicode NFC: the one spelling every reader's ids are compared in.
nfc = partial(unicodedata.normalize, "NFC")


def _assemble(batch: Batch, options: ReadOptions) -> RunsData:
    if not batch.verdicts and not batch.skips:
        names = ", ".join(f.path for f in batch.files) or "input"
        raise RunsError(f"{names}: no verdicts to read")
    table, spelled = nfc_cases(batch.verdicts.build())  # one spelling of an id is one case
    duplicate = _first_duplicate(table)
    if duplicate is not None:
        v = table[duplicate]
        what = f"check {v.check!r} of " if v.check else ""
        raise RunsError(
            f"{v.source}: duplicate verdict: {what}case {v.case!r} in run {v.run!r} "
            f"({v.build}); a rerun belongs in one row with `attempts`"
        )
    warnings = list(batch.warnings)
    cached = int(table.array("cached").sum())
    if cached:
        warnings.append(
            f"{cached} of {len(table)} verdicts were replayed from a cache: a cached "
            "re-run measures nothing (run with the cache off)"
        )
    for first, copies, n, chance in duplicate_runs(table):
        which = ", ".join(repr(c) for c in copies[:5]) + (" ..." if len(copies) > 5 else "")
        warnings.append(
            f"run(s) {which} repeat run {first!r} verdict for verdict ({n} verdicts; "
            f"chance alone explains that {chance:.1g} times): a cached or copied run "
            "measures nothing"
        )
    skips = [replace(s, case=nfc(s.case)) if not s.case.isascii() else s for s in batch.skips]
    parts = [replace(v, case=nfc(v.case)) if not v.case.isascii() else v for v in batch.components]
    for read in [s.case for s in batch.skips] + [v.case for v in batch.components]:
        if not read.isascii() and nfc(read) != read:
            spelled.setdefault(nfc(read), read)
    return RunsData(
        verdicts=table,
        skips=tuple(skips),
        components=tuple(parts),
        spellings=tuple(spelled.items()),
        files=tuple(batch.files),
        reruns=batch.reruns,
        attempts_policy=options.attempts,
        warnings=tuple(warnings),
    )
