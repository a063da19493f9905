"""inspect_ai evaluation logs: ``.json`` and ``.eval`` (a zip of JSON members).

Case
    The sample id. Run: the epoch, ``<log>#<epoch>``; the log is the session (one
    ``inspect eval`` invocation; its ``eval_id`` is checked so one eval is not read
    twice).
Check
    Each scorer, from the per-epoch ``samples[].scores`` (never the reductions, which
    average epochs away). ``model_graded_*`` scorers are judge checks; other built-in
    scorers (``includes``, ``match``, ``exact``, ``pattern``, ``f1``, ``choice``,
    ``answer``) code checks; custom scorers of unknown kind.
Values
    ``C`` passes; ``I`` and ``N`` fail; ``P`` per ``partial`` (default fail); true/false;
    a number only with a threshold for that scorer (``score >= T``), otherwise
    unscored; ``NaN`` is unscored. A sample with an ``error`` is an error for every
    scorer (the scores it kept came from a crashed sample). A log whose every sample
    errored holds no verdict at all: it is refused, saying so ("15 samples, all errored").
``.eval``
    Current releases compress the members with Zstandard (zip method 93), which
    Python's zipfile cannot read: the optional ``zstandard`` package does
    (``pip install zstandard``, gatecal's extra ``frameworks``); inspect_ai itself is not needed.
"""

from __future__ import annotations

import math
import struct
import zipfile
from io import BytesIO
from pathlib import Path
from typing import Any

from gatecal.readers._base import Batch, Head, ReaderBase, ReadOptions, as_float, load_json
from gatecal.readers._verdict import RunsError, Verdict

__all__ = ["Inspect", "read_inspect"]

_CODE_SCORERS = ("includes", "match", "exact", "pattern", "f1", "choice", "answer")
_ZSTD = 93


def _kind(scorer: str) -> str:
    name = scorer.rsplit("/", 1)[-1]
    if name.startswith("model_graded"):
        return "judge"
    return "code" if name in _CODE_SCORERS else ""


#: The most bytes one .eval log may inflate to, over all its members (a 1.2 MB zip bomb
#: inflated to 1.27 GB); GATECAL_EVAL_MAX_BYTES overrides it.
EVAL_MAX_BYTES = 512 * 2**20


def _budget() -> int:
    import os

    text = os.environ.get("GATECAL_EVAL_MAX_BYTES", "")
    return int(text) if text.isascii() and text.isdecimal() else EVAL_MAX_BYTES


class _Inflated:
    """Bytes inflated so far from one .eval log, against the budget."""

    def __init__(self, path: Path) -> None:
        self.path, self.left = path, _budget()

    def take(self, data: bytes) -> bytes:
        self.left -= len(data)
        if self.left < 0:
            raise RunsError(
                f"{self.path}: inflates to more than {_budget():,} bytes (a zip bomb?); "
                "set GATECAL_EVAL_MAX_BYTES to read a log this large"
            )
        return data


def _member(
    archive: zipfile.ZipFile, raw: bytes, info: zipfile.ZipInfo, path: Path, inflated: _Inflated
) -> bytes:
    """One member's bytes, Zstandard or not, read no further than the budget allows."""
    if info.compress_type != _ZSTD:
        with archive.open(info) as handle:
            return inflated.take(handle.read(inflated.left + 1))
    try:
        import zstandard
    except ImportError:
        raise RunsError(
            f"{path}: this inspect_ai .eval log is Zstandard-compressed; install the optional "
            "reader: pip install zstandard (gatecal's extra 'frameworks')"
        ) from None
    # local file header: signature, 22 bytes of fields, name and extra lengths at 26
    offset = info.header_offset
    if raw[offset : offset + 4] != b"PK\x03\x04":
        raise RunsError(f"{path}: a damaged .eval archive (member {info.filename})")
    name_len, extra_len = struct.unpack("<HH", raw[offset + 26 : offset + 30])
    start = offset + 30 + name_len + extra_len
    data = raw[start : start + info.compress_size]
    try:
        with zstandard.ZstdDecompressor().stream_reader(BytesIO(data)) as reader:
            out = reader.read(inflated.left + 1)  # streamed: never more than the budget
    except zstandard.ZstdError as exc:
        raise RunsError(f"{path}: a damaged .eval archive ({info.filename}: {exc})") from None
    return inflated.take(bytes(out))


def _load(path: Path, raw: bytes) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, samples) of a .json or .eval log."""
    if not raw.startswith(b"PK\x03\x04"):
        document = load_json(raw, path)
        if not isinstance(document, dict) or not isinstance(document.get("eval"), dict):
            raise RunsError(f"{path}: not an inspect_ai log (no `eval` object)")
        samples = document.get("samples") or []
        if not isinstance(samples, list):
            raise RunsError(f"{path}: `samples` must be a list")
        return document, samples
    try:
        archive = zipfile.ZipFile(BytesIO(raw))
    except zipfile.BadZipFile as exc:
        raise RunsError(f"{path}: not a readable .eval archive ({exc})") from None
    inflated = _Inflated(path)
    with archive:
        infos = {i.filename: i for i in archive.infolist()}
        if "header.json" not in infos and "_journal/start.json" not in infos:
            raise RunsError(f"{path}: a zip that is not an inspect_ai .eval log (no header.json)")
        key = "header.json" if "header.json" in infos else "_journal/start.json"
        header = load_json(_member(archive, raw, infos[key], path, inflated), f"{path}:{key}")
        if key == "_journal/start.json" and isinstance(header, dict):
            header = {**header, "status": "started"}
        samples = [
            load_json(_member(archive, raw, info, path, inflated), f"{path}:{name}")
            for name, info in infos.items()
            if name.startswith("samples/") and name.endswith(".json")
        ]
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise RunsError(f"{path}: not an inspect_ai log (no `eval` object)")
    return header, samples


def _verdict(entry: Any, scorer: str, options: ReadOptions) -> dict[str, Any]:
    """The check's part of a :class:`Verdict` (check, kind, passed, status, score) from
    scorer `scorer`'s entry in a sample's scores (None or no object: an error), as the
    other readers' ``_verdict`` gives it."""
    if not isinstance(entry, dict):
        status, passed, score = "error", None, None
    else:
        status, passed, score = _value(entry.get("value"), scorer, options)
    return {
        "check": scorer,
        "kind": _kind(scorer),
        "passed": passed,
        "status": status,
        "score": score,
    }


def _value(value: Any, scorer: str, options: ReadOptions) -> tuple[str, bool | None, float | None]:
    """(status, passed, score) of one score value."""
    if isinstance(value, bool):
        return "ok", value, None
    if isinstance(value, str):
        letter = value.strip().upper()
        if letter == "C":
            return "ok", True, None
        if letter in ("I", "N"):
            return "ok", False, None
        if letter == "P":
            if options.partial == "unscored":
                return "unscored", None, None
            return "ok", options.partial == "pass", None
        return "unscored", None, None
    number = as_float(value)
    if number is None or math.isnan(number):
        return "unscored", None, None
    if scorer in options.thresholds:
        return "ok", number >= options.thresholds[scorer], number
    return "unscored", None, number


def read_inspect(
    path: Path, raw: bytes, build: str, options: ReadOptions, label: str = ""
) -> Batch:
    """Read one inspect_ai log (``.json`` or ``.eval``)."""
    header, samples = _load(path, raw)
    session = label or path.stem
    scorers: dict[str, None] = {}
    for sample in samples:
        if not isinstance(sample, dict):
            raise RunsError(f"{path}: a sample that is not a JSON object")
        scores = sample.get("scores") or {}
        if not isinstance(scores, dict):
            raise RunsError(
                f"{path}: sample {sample.get('id')!r} has `scores` that is not an object"
            )
        scorers.update(dict.fromkeys(scores))
    failed = [s for s in samples if s.get("error") is not None]
    if samples and len(failed) == len(samples):
        error = failed[0]["error"]
        message = error.get("message") if isinstance(error, dict) else error
        first = " ".join(str(message).split())[:120]
        raise RunsError(
            f"{path}: {len(samples)} samples, all errored (first: {first}): no verdict to "
            "read; fix what failed and run the eval again"
        )
    batch = Batch()
    runs: dict[str, None] = {}
    errors = 0
    numeric_unthresholded: dict[str, None] = {}
    for sample in samples:
        sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
        if sample_id is None or isinstance(sample_id, bool) or isinstance(epoch, bool):
            raise RunsError(f"{path}: a sample without an id")
        if not isinstance(epoch, int) or epoch < 1:
            raise RunsError(f"{path}: sample {sample_id!r} has epoch {epoch!r}")
        run, case = f"{session}#{epoch}", str(sample_id)
        runs[run] = None
        scores = sample.get("scores") or {}
        errored = sample.get("error") is not None
        for scorer in scorers:
            verdict = _verdict(None if errored else scores.get(scorer), scorer, options)
            if verdict["status"] == "unscored" and verdict["score"] is not None:
                numeric_unthresholded[scorer] = None
            errors += verdict["status"] == "error"
            batch.verdicts.append(
                Verdict(
                    build=build, run=run, case=case, session=session, source=str(path), **verdict
                )
            )
    notes = [f"epochs are runs of one session (eval {header['eval'].get('eval_id', '?')})"]
    ended = header.get("status")
    if ended not in (None, "success"):
        batch.warnings.append(
            f"{path}: the eval ended with status {ended!r}: samples it never ran are not "
            "reported (incomplete evidence)"
        )
    for scorer in numeric_unthresholded:
        batch.warnings.append(
            f"{path}: scorer {scorer!r} gives numbers, left unscored; count them as verdicts "
            f"with --score-threshold {scorer}=T"
        )
    detail = f"log v{header.get('version', '?')}, {'eval' if raw[:2] == b'PK' else 'json'}"
    batch.add_file(path, "inspect", detail, build, runs, errors=errors, notes=notes)
    batch.sessions[str(header["eval"].get("eval_id") or session)] = str(path)
    return batch


class Inspect(ReaderBase):
    """inspect_ai logs: ``.eval`` (a zip archive) or ``.json`` (an object with ``eval``
    and ``status``)."""

    FORMAT = "inspect"
    MAGIC = b"PK\x03\x04"
    SUFFIXES = (".json", ".eval")

    @staticmethod
    def sniff(head: Head) -> bool:
        if not head.text.startswith(("{", "[")):
            return False
        document = head.document
        return isinstance(document, dict) and (
            isinstance(document.get("eval"), dict) and "status" in document
        )

    read_file = staticmethod(read_inspect)
