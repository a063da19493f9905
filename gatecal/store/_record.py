"""Appending runs to a store: one transaction per call, idempotent by content."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gatecal.readers._verdict import LONG_COLUMNS, OPTIONAL_COLUMNS
from gatecal.store._connect import StoreError, open_store

if TYPE_CHECKING:
    from gatecal.readers._data import RunsData

__all__ = ["VERDICT_COLUMNS", "Recorded", "content_key", "record_runs", "timestamp"]

#: The long table's columns a run, its file and its build stand for: the store keeps them as
#: rows of their own tables (runs, sources, recordings), a verdict as their ids.
_IDENTITY = ("build", "run", "case", "check", "source")
#: The verdicts table's columns, in order: the run's and the file's ids and the file's order
#: (seq), the case and the check (named case_id and check_name), then every other column of
#: the long table under its own name.
VERDICT_COLUMNS = (
    "run_id",
    "source_id",
    "seq",
    "case_id",
    "check_name",
    *(c for c in (*LONG_COLUMNS, *OPTIONAL_COLUMNS) if c not in _IDENTITY),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Recorded:
    """What one ``gatecal record`` added.

    Attributes
    ----------
    store : str
        The store (password masked).
    build, branch, judge : str
    known_good : bool
    recorded_at : str
        ISO 8601 UTC time of the recording.
    runs : tuple of str
        The runs added (none when every file was recorded before).
    verdicts : int
        Rows added (verdicts, skipped tests and components).
    sources : tuple of str
        The files whose content was new.
    already : tuple of str
        The files recorded before (their content is in the store: nothing added).
    """

    store: str
    build: str
    branch: str
    judge: str
    known_good: bool
    recorded_at: str
    runs: tuple[str, ...]
    verdicts: int
    sources: tuple[str, ...]
    already: tuple[str, ...]

    def summary(self) -> str:
        """One line: what was added, or that nothing was."""
        if not self.runs:
            return (
                f"nothing new: the {len(self.already)} file(s) given were recorded before "
                f"({self.store})"
            )
        kind = "known-good " if self.known_good else ""
        again = f"; {len(self.already)} file(s) recorded before" if self.already else ""
        return (
            f"recorded {len(self.runs)} {kind}run(s), {self.verdicts} verdicts, of build "
            f"{self.build!r} judged by {self.judge!r} into {self.store}{again}"
        )

    def to_dict(self) -> dict[str, Any]:
        from gatecal._common.contracts import fields_dict, json_header

        return {**json_header("record"), **fields_dict(self)}


def _column_rows(table: Any, where: Any) -> list[tuple[Any, ...]]:
    """The rows `where` selects of a VerdictColumns table, as the store's verdict columns
    after run_id and source_id (run first): made from the columns, not from objects."""
    import numpy as np

    def text(name: str) -> list[str]:
        values = table.values(name)
        return [values[c] for c in table.codes(name)[where].tolist()]

    def maybe(name: str, has: str, kind: type) -> list[Any]:
        present = (table.array(has)[where] == 1).tolist()
        numbers = table.array(name)[where].tolist()
        return [kind(x) if p else None for x, p in zip(numbers, present, strict=True)]

    passed = [None if x < 0 else x for x in table.array("passed")[where].tolist()]
    attempts = np.asarray(table.array("attempts")[where], dtype=np.int64).tolist()
    cached = np.asarray(table.array("cached")[where], dtype=np.int64).tolist()
    return list(
        zip(
            text("run"), text("case"), text("check"), text("kind"), passed, text("status"),
            maybe("score", "has_score", float), text("session"), attempts, cached,
            maybe("cost", "has_cost", float), maybe("tokens", "has_tokens", int), strict=True,
        )
    )  # fmt: skip


def _rows(data: RunsData, sources: set[str]) -> dict[str, list[tuple[Any, ...]]]:
    """The rows to append from each of `sources` (verdicts, components, skips), in order."""
    from gatecal.readers._columns import VerdictColumns

    out: dict[str, list[tuple[Any, ...]]] = {path: [] for path in sources}
    for table in (data.verdicts, VerdictColumns.of(data.components)):
        if not len(table):
            continue
        paths = table.values("source")
        codes = table.codes("source")
        for code, path in enumerate(paths):
            if path in sources:
                out[path] += _column_rows(table, codes == code)
    for s in data.skips:
        if s.source in sources:
            row = (s.run, s.case, "", "", None, "skipped", None, s.session, 1, 0, None, None)
            out[s.source].append(row)
    return out


def timestamp(moment: datetime | None = None) -> str:
    """`moment` (default now) as the store writes times: ISO 8601 in UTC, microseconds,
    a trailing Z (text that sorts as time does)."""
    moment = datetime.now(UTC) if moment is None else moment
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def content_key(path: str | Path, runs: Sequence[str]) -> str:
    """The SHA-256 of a file's bytes and the runs read from it: the same file read the
    same way twice has one key; the same bytes read as another run (a JUnit file's run
    comes from its name) have another."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    for run in runs:
        digest.update(b"\0" + run.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _check_text(name: str, value: str) -> str:
    text = value.strip()
    if not text or any(ord(c) < 32 for c in text):
        raise StoreError(f"{name} must be a non-empty name on one line (got {value!r})")
    return text


def record_runs(
    data: RunsData,
    store: str,
    *,
    build: str,
    judge: str,
    branch: str = "",
    known_good: bool = False,
    recorded_at: datetime | None = None,
    wait: float = 60.0,
) -> Recorded:
    """Append every verdict of `data` (its healthy runs) to `store`, in one transaction.

    Parameters
    ----------
    data : RunsData
        Runs as :func:`gatecal.read_runs` reads them.
    store : str
        A SQLite file (made if absent) or a ``postgresql://`` URL.
    build, judge : str
        The CI build id (its runs are named ``build``/``run`` where names repeat) and the
        judge, as the team names it (model and version).
    branch : str, default ""
    known_good : bool, default False
        Whether these runs are of a known-good build (a baseline's candidates).
    recorded_at : datetime, optional
        The time to record (default now).
    wait : float, default 60
        Seconds to wait for another writer's lock.

    Returns
    -------
    Recorded
        What was added. A file whose content (and runs) the store holds adds nothing.

    Raises
    ------
    StoreError
        The store cannot be opened or written (nothing is written then), a run of this
        build is in the store from another file, or a name is empty.
    """
    build = _check_text("--build", build)
    judge = _check_text("--judge", judge)
    branch = branch.strip()
    if data.builds() not in ([], ["healthy"]):
        raise StoreError("record takes runs of one build (no --regressed runs)")
    when = timestamp(recorded_at)
    from gatecal._version import __version__

    # the keys first: a file recorded before costs its hash, never its rows
    keys = {}
    for f in data.files:
        try:
            keys[f.path] = content_key(f.path, f.runs)
        except OSError as exc:
            raise StoreError(f"{f.path}: could not be read again ({exc.strerror})") from None
    conn = open_store(store, create=True, wait=wait)
    with conn, conn.transaction():
        recording = conn.execute(
            "INSERT INTO recordings (build, branch, judge, known_good, recorded_at, "
            "gatecal_version) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            (build, branch, judge, int(known_good), when, __version__),
        )[0][0]
        new_sources: dict[str, int] = {}
        already: list[str] = []
        for f in data.files:
            got = conn.execute(
                "INSERT INTO sources (recording_id, content_key, path, format, detail) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (content_key) DO NOTHING RETURNING id",
                (recording, keys[f.path], f.path, f.format, f.detail),
            )
            if got:
                new_sources[f.path] = got[0][0]
            else:
                already.append(f.path)
        run_ids: dict[str, int] = {}
        out: list[tuple[Any, ...]] = []
        seq = 0
        rows_by_source = _rows(data, set(new_sources))
        for path, source_id in new_sources.items():
            for row in rows_by_source.get(path, []):
                run = row[0]
                if run not in run_ids:
                    got = conn.execute(
                        "INSERT INTO runs (recording_id, build, run) VALUES (?, ?, ?) "
                        "ON CONFLICT (build, run) DO NOTHING RETURNING id",
                        (recording, build, run),
                    )
                    if not got:
                        raise StoreError(
                            f"{path}: run {run!r} of build {build!r} is in the store "
                            "already, from another file: give this build its own --build"
                        )
                    run_ids[run] = got[0][0]
                out.append((run_ids[run], source_id, seq, *row[1:]))
                seq += 1
        if not new_sources:
            conn.execute("DELETE FROM recordings WHERE id = ?", (recording,))
        else:
            conn.copy_rows("verdicts", VERDICT_COLUMNS, out)
    return Recorded(
        store=conn.where,
        build=build,
        branch=branch,
        judge=judge,
        known_good=known_good,
        recorded_at=when,
        runs=tuple(run_ids),
        verdicts=len(out),
        sources=tuple(new_sources),
        already=tuple(already),
    )
