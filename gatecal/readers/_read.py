"""Reading measured runs: each file's format detected, its reader called, the whole checked."""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from gatecal.readers import _progress
from gatecal.readers._base import (
    ATTEMPTS,
    JUNIT_REPEATS,
    PARTIAL,
    Batch,
    ReadOptions,
    decode,
    load_json,
)
from gatecal.readers._columns import VerdictColumns
from gatecal.readers._data import RunsData, duplicate_runs
from gatecal.readers._verdict import RunsError

__all__ = ["INPUT_FORMATS", "detect_format", "read_runs"]

INPUT_FORMATS = ("junit", "csv", "jsonl", "parquet", "promptfoo", "inspect", "deepeval")
_SUFFIXES = {".xml", ".csv", ".tsv", ".jsonl", ".json", ".eval", ".parquet"}
_PARQUET = b"PAR1"
_ZIP = b"PK\x03\x04"


def _json_format(document: object) -> str | None:
    if not isinstance(document, dict):
        return None
    results = document.get("results")
    if isinstance(results, dict) and "results" in results and "evalId" in document:
        return "promptfoo"
    if isinstance(results, dict) and isinstance(results.get("results"), list):
        return "promptfoo"
    if isinstance(document.get("eval"), dict) and "status" in document:
        return "inspect"
    inner = document.get("testRunData")
    if isinstance((inner if isinstance(inner, dict) else document).get("testCases"), list):
        return "deepeval"
    return None


def _promptfoo_line(line: str) -> bool:
    try:
        item = json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(item, dict) and "gradingResult" in item and "provider" in item


def detect_format(path: Path | str, raw: bytes) -> str:
    """The format of a file, by its content (the name only breaks a tie)."""
    from gatecal.readers.table.rows import sniff_jsonl

    if raw.startswith(_ZIP):
        return "inspect"
    if raw.startswith(_PARQUET):
        return "parquet"
    head = decode(raw, path).lstrip()  # whole: a slice could cut a UTF-8 character in two
    if head.startswith("<"):
        return "junit"  # its reader parses safely and names what is wrong
    if head.startswith(("{", "[")):
        if sniff_jsonl(head):
            return "jsonl"
        if _promptfoo_line(head.split("\n", 1)[0]):
            return "promptfoo"  # promptfoo eval -o results.jsonl: one result per line
        found = _json_format(load_json(raw, path))
        if found is None:
            raise RunsError(
                f"{path}: JSON that is not a promptfoo results file, an inspect_ai log, "
                "a DeepEval test run or gatecal JSONL"
            )
        return found
    if not head:
        raise RunsError(f"{path}: the file is empty")
    return "csv"


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
                        and candidate.suffix.lower() in _SUFFIXES
                        and candidate.is_file()
                    ):
                        found.append(candidate)
            if not found:
                kinds = ", ".join(sorted(_SUFFIXES))
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
        key = f.resolve()
        if key in seen:
            raise RunsError(f"{f}: named twice in the {role} runs")
        seen[key] = None
    return files


Reader = Callable[[Path, bytes, str, ReadOptions, str], Batch]


def _reader(fmt: str) -> Reader:
    if fmt == "parquet":
        from gatecal.readers.table.parquet import read_parquet

        return lambda path, raw, build, options, label: read_parquet(path, build)
    if fmt in ("csv", "jsonl"):
        from gatecal.readers.table.rows import read_table

        return lambda path, raw, build, options, label: read_table(path, raw, build, fmt, options)
    if fmt == "promptfoo":
        from gatecal.readers.promptfoo import read_promptfoo

        return read_promptfoo
    if fmt == "inspect":
        from gatecal.readers.inspect import read_inspect

        return read_inspect
    if fmt == "deepeval":
        from gatecal.readers.deepeval import read_deepeval

        return read_deepeval
    raise RunsError(f"no reader for {fmt!r}")


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
    JUnit XML, gatecal's long CSV/JSONL table, promptfoo results, inspect_ai logs or a
    DeepEval test run; see the reader modules for how each maps to runs, cases and
    checks. Files in `regressed` are runs of the regressed build. Skipped tests are
    missing data (counted in ``skips``); errors and unscored verdicts are neither
    passes nor failures (``status``); rerun attempts count per `attempts`.

    Raises
    ------
    RunsError
        Naming the file, line or element: a missing column, an unknown `passed`
        value, a duplicate verdict, unreadable text, input that is not what its name
        claims, or no verdict at all.
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
        ("healthy", paths, "known-good"),
        ("regressed", regressed, "regressed"),
    ):
        junit: list[Path] = []
        batch = Batch()
        files = _expand(group, role)
        _progress.expect(files)
        labels = _labels(files)
        for path in files:
            if input_format in (None, "parquet") and _starts_with(path, _PARQUET):
                from gatecal.readers.table.parquet import read_parquet

                batch.extend(read_parquet(path, build))  # in batches: never read whole
                _progress.done(path)
                continue
            streamed = _stream_format(path, input_format)
            if streamed == "junit":
                junit.append(path)  # parsed as a stream (junit._parse)
                continue
            if streamed in ("csv", "jsonl"):
                from gatecal.readers.table.blocks import SlowPath, read_table_blocks

                try:
                    batch.extend(read_table_blocks(path, build, streamed))
                    _progress.done(path)
                    continue
                except SlowPath:
                    pass  # read row by row below, as a small file is
            raw = path.read_bytes()
            fmt = input_format or detect_format(path, raw)
            if fmt == "junit":
                junit.append(path)
                continue
            batch.extend(_reader(fmt)(path, raw, build, options, labels[path]))
            _progress.done(path)
        if junit:
            from gatecal.readers.junit.reader import read_junit

            batch.extend(read_junit(junit, build, options))
        total.extend(batch)
    return _assemble(total, options)


def _first_duplicate(table: VerdictColumns) -> int | None:
    """The first verdict (in order) whose (build, run, case, check) an earlier one has."""
    from gatecal.readers._duplicates import first_duplicate

    return first_duplicate(table)


def _starts_with(path: Path, magic: bytes) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(magic)) == magic


def _stream_format(path: Path, input_format: str | None) -> str | None:
    """The format of a big file read without loading it whole (csv, jsonl, junit), from its
    first 64 KiB; None for a small file or any other (read whole, as always)."""
    from gatecal.readers.table.blocks import STREAM_MIN_BYTES

    if path.stat().st_size < STREAM_MIN_BYTES:
        return None
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\0" in head:
        return None
    if head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"<"):
        return "junit" if input_format in (None, "junit") else None  # XML, one line or many
    if b"\n" not in head:
        return None
    try:
        fmt = input_format or detect_format(path, head[: head.rfind(b"\n") + 1])
    except RunsError:
        return None
    return fmt if fmt in ("csv", "jsonl", "junit") else None


def _assemble(batch: Batch, options: ReadOptions) -> RunsData:
    if not batch.verdicts and not batch.skips:
        names = ", ".join(f.path for f in batch.files) or "input"
        raise RunsError(f"{names}: no verdicts to read")
    table = batch.verdicts.build()
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
    return RunsData(
        verdicts=table,
        skips=tuple(batch.skips),
        components=tuple(batch.components),
        files=tuple(batch.files),
        reruns=batch.reruns,
        attempts_policy=options.attempts,
        warnings=tuple(warnings),
    )
