"""Reading runs back from a store: a selection of runs as the readers' RunsData."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from gatecal._common.contracts import FieldsJSON
from gatecal.store._connect import StoreError, open_store

if TYPE_CHECKING:
    from gatecal.readers._columns import VerdictBuilder
    from gatecal.readers._data import RunsData

__all__ = [
    "DEFAULT_LATEST",
    "RunRecord",
    "Selection",
    "StoredRuns",
    "latest_run",
    "parse_time",
    "stored_runs",
]

#: Known-good runs a baseline takes by default: the latest 30 ("failed 0 of 30
#: known-good runs" is the record check reports).
DEFAULT_LATEST = 30

_RELATIVE = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_time(text: str, *, now: datetime | None = None) -> str:
    """A time as the store writes it, from ISO 8601 (``2026-11-30``, ``2026-11-30T08:00Z``;
    UTC when no zone is given) or an age (``7d``, ``12h``, ``2w``: that long before now)."""
    from gatecal.store._record import timestamp

    relative = _RELATIVE.match(text)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        base = now or datetime.now(UTC)
        return timestamp(base - timedelta(**{_UNITS[unit]: amount}))
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise StoreError(
            f"must be an ISO 8601 time (2026-11-30, 2026-11-30T08:00Z) or an age such as 7d "
            f"(got {text!r})"
        ) from None
    return timestamp(moment)


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """Which runs to take from a store.

    Attributes
    ----------
    judge : str, optional
        Only this judge's runs (default: every judge's).
    branch : str, optional
        Only this branch's runs.
    latest : int, optional
        The latest N runs (by recording time) of those selected; None for all.
    since, until : str, optional
        Store times (see :func:`parse_time`): runs recorded at or after `since`, before
        `until`.
    known_good : bool, default True
        Only runs recorded as known-good (a baseline); False takes every run.
    """

    judge: str | None = None
    branch: str | None = None
    latest: int | None = DEFAULT_LATEST
    since: str | None = None
    until: str | None = None
    known_good: bool = True

    def describe(self, *, latest: bool = True) -> str:
        """The selection in words (for messages); without the latest N if not `latest`."""
        parts = ["known-good runs" if self.known_good else "runs"]
        if self.judge is not None:
            parts.append(f"of judge {self.judge!r}")
        if self.branch is not None:
            parts.append(f"on branch {self.branch!r}")
        if self.since is not None:
            parts.append(f"since {self.since}")
        if self.until is not None:
            parts.append(f"before {self.until}")
        if latest and self.latest is not None:
            parts.insert(0, f"the latest {self.latest}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord(FieldsJSON):
    """One stored run: its name in the RunsData, and what the store knows of it."""

    run: str
    build: str
    branch: str
    judge: str
    known_good: bool
    recorded_at: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredRuns:
    """Runs read from a store: `data` as the readers give it, `runs` in time order.

    Attributes
    ----------
    data : RunsData
        The selected runs, healthy, as ``gatecal.read_runs`` reads the same files.
    runs : tuple of RunRecord
        Each run's build, branch, judge and time, oldest first (the order of
        ``data.runs('healthy')``).
    store : str
        Where they were read (password masked).
    selection : Selection
    """

    data: RunsData
    runs: tuple[RunRecord, ...]
    store: str
    selection: Selection = field(default_factory=Selection)

    def judges(self) -> list[str]:
        """The judges of the runs, in order of first appearance (oldest first)."""
        return list(dict.fromkeys(r.judge for r in self.runs))


def _where(selection: Selection) -> tuple[str, list[Any]]:
    clauses, params = [], []
    if selection.known_good:
        clauses.append("rec.known_good = 1")
    for column, value in (("judge", selection.judge), ("branch", selection.branch)):
        if value is not None:
            clauses.append(f"rec.{column} = ?")
            params.append(value)
    if selection.since is not None:
        clauses.append("rec.recorded_at >= ?")
        params.append(selection.since)
    if selection.until is not None:
        clauses.append("rec.recorded_at < ?")
        params.append(selection.until)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def stored_runs(
    store: str, selection: Selection | None = None, *, wait: float = 60.0
) -> StoredRuns:
    """The runs `selection` picks from `store`, as the readers' RunsData.

    The same runs read from their files give the same RunsData verdict for verdict (run
    names qualified by their build, ``build/run``, only where two builds share one), so
    check and recommend decide the same from either.

    Parameters
    ----------
    store : str
        A SQLite file or a ``postgresql://`` URL.
    selection : Selection, optional
        Which runs (default: the latest 30 known-good runs of every judge).
    wait : float, default 60
        Seconds to wait for the server.

    Returns
    -------
    StoredRuns

    Raises
    ------
    StoreError
        The store cannot be read, or the selection holds no run (naming the selection).
    """
    selection = selection or Selection()
    if selection.latest is not None and selection.latest < 1:
        raise StoreError(f"--latest must be at least 1 (got {selection.latest})")
    conn = open_store(store, wait=wait)
    with conn, conn.errors("read the store"):
        where, params = _where(selection)
        limit = "" if selection.latest is None else f" LIMIT {int(selection.latest)}"
        picked = conn.execute(
            "SELECT runs.id, runs.build, runs.run, rec.branch, rec.judge, rec.known_good, "
            "rec.recorded_at FROM runs JOIN recordings rec ON runs.recording_id = rec.id"
            f"{where} ORDER BY rec.recorded_at DESC, runs.id DESC{limit}",
            params,
        )
        if not picked:
            raise StoreError(
                f"{conn.where}: no {selection.describe(latest=False)} in the store "
                "(record some with gatecal record --known-good)"
            )
        picked.reverse()  # oldest first
        ids = [row[0] for row in picked]
        rows: list[tuple[Any, ...]] = []
        step = 500
        for start in range(0, len(ids), step):
            chunk = ids[start : start + step]
            marks = ", ".join("?" * len(chunk))
            rows += conn.execute(
                "SELECT v.run_id, v.case_id, v.check_name, v.kind, v.passed, v.status, "
                "v.score, v.session, v.attempts, v.cached, v.cost, v.tokens, s.path "
                "FROM verdicts v JOIN sources s ON v.source_id = s.id "
                f"WHERE v.run_id IN ({marks})",
                chunk,
            )
        files = conn.execute(
            "SELECT s.id, s.path, s.format, s.detail FROM sources s WHERE s.recording_id IN "
            f"(SELECT DISTINCT recording_id FROM runs WHERE id IN ({', '.join('?' * len(ids))}))"
            " ORDER BY s.id",
            ids,
        )
    names = _run_names(picked)
    records = tuple(
        RunRecord(
            run=names[row[0]],
            build=row[1],
            branch=row[3],
            judge=row[4],
            known_good=bool(row[5]),
            recorded_at=row[6],
        )
        for row in picked
    )
    # a stored path names the file as it was when recorded, not a file here: shown as
    # "STORE::path", it is never taken for today's file of the same name
    rows = [(*row[:-1], f"{conn.where}::{row[-1]}") for row in rows]
    files = [(i, f"{conn.where}::{path}", fmt, detail) for i, path, fmt, detail in files]
    data = _runs_data(rows, ids, names, files)
    return StoredRuns(data=data, runs=records, store=conn.where, selection=selection)


def _run_names(picked: list[tuple[Any, ...]]) -> dict[int, str]:
    """Each run's name: as recorded, or ``build/run`` where two builds share the name."""
    count: dict[str, int] = {}
    for row in picked:
        count[row[2]] = count.get(row[2], 0) + 1
    return {row[0]: row[2] if count[row[2]] == 1 else f"{row[1]}/{row[2]}" for row in picked}


def _plain(rows: list[tuple[Any, ...]], names: dict[int, str], counts: Any) -> VerdictBuilder:
    """The verdicts of `rows` (status ok, error or unscored) as one block of columns, and
    each file's runs, verdicts and errors counted into `counts(path)`."""
    import numpy as np

    from gatecal.readers._columns import VerdictBuilder

    builder = VerdictBuilder()
    if not rows:
        return builder
    cols = list(zip(*rows, strict=True))
    runs = [names[i] for i in cols[0]]
    n = len(rows)
    block: dict[str, Any] = {"build": np.full(n, builder.code("build", "healthy"), dtype=np.int32)}
    texts = {"run": runs, "case": cols[1], "check": cols[2], "kind": cols[3],
             "status": cols[5], "session": cols[7], "source": cols[12]}  # fmt: skip
    for name, values in texts.items():
        block[name] = np.asarray(builder.column_codes(name, list(values)), dtype=np.int32)

    def maybe(column: tuple[Any, ...], dtype: Any) -> tuple[Any, Any]:
        present = np.array([x is not None for x in column], dtype=np.int8)
        return np.array([0 if x is None else x for x in column], dtype=dtype), present

    block["passed"] = np.array([-1 if x is None else x for x in cols[4]], dtype=np.int8)
    block["score"], block["has_score"] = maybe(cols[6], np.float64)
    block["attempts"] = np.asarray(cols[8], dtype=np.int64)
    block["cached"] = np.asarray(cols[9], dtype=np.int8)
    block["cost"], block["has_cost"] = maybe(cols[10], np.float64)
    block["tokens"], block["has_tokens"] = maybe(cols[11], np.int64)
    builder.add_block(block)
    for path, run in dict.fromkeys(zip(cols[12], runs, strict=True)):
        counts(path)["runs"][run] = None
    for path, status in zip(cols[12], cols[5], strict=True):
        found = counts(path)
        found["verdicts"] += 1
        found["errors"] += status == "error"
    return builder


def _runs_data(
    rows: list[tuple[Any, ...]],
    ids: list[int],
    names: dict[int, str],
    files: list[tuple[Any, ...]],
) -> RunsData:
    """The RunsData of the stored rows, runs in `ids` order, each in the order recorded."""
    from gatecal.readers._data import FileRead, RunsData, Skip
    from gatecal.readers._duplicates import first_duplicate
    from gatecal.readers._verdict import Verdict

    order = {run_id: i for i, run_id in enumerate(ids)}
    rows.sort(key=lambda r: order[r[0]])  # stable: each run's rows keep their seq order
    skips: list[Skip] = []
    components: list[Verdict] = []
    per_file: dict[str, dict[str, Any]] = {}

    def counts(path: str) -> dict[str, Any]:
        return per_file.setdefault(path, {"runs": {}, "verdicts": 0, "skipped": 0, "errors": 0})

    plain = [r for r in rows if r[5] not in ("skipped", "component")]
    for run_id, case, check, kind, passed, status, score, session, attempts, cached, cost, \
            tokens, path in (r for r in rows if r[5] in ("skipped", "component")):  # fmt: skip
        run = names[run_id]
        counts(path)["runs"][run] = None
        if status == "skipped":
            skips.append(Skip(build="healthy", run=run, case=case, source=path, session=session))
            counts(path)["skipped"] += 1
        else:
            components.append(
                Verdict(build="healthy", run=run, case=case, check=check, kind=kind,
                        passed=None if passed is None else bool(passed), status=status,
                        score=score, session=session, attempts=attempts, cached=bool(cached),
                        source=path, cost=cost, tokens=tokens)
            )  # fmt: skip
    builder = _plain(plain, names, counts)
    table = builder.build()
    duplicate = first_duplicate(table)
    if duplicate is not None:
        v = table[duplicate]
        raise StoreError(f"the store holds case {v.case!r} twice in run {v.run!r} ({v.source})")
    reads = tuple(
        FileRead(
            path=path,
            format=fmt,
            detail=detail,
            build="healthy",
            runs=tuple(per_file[path]["runs"]),
            verdicts=per_file[path]["verdicts"],
            skipped=per_file[path]["skipped"],
            errors=per_file[path]["errors"],
            notes=("read from the store",),
        )
        for _, path, fmt, detail in files
        if path in per_file
    )
    return RunsData(verdicts=table, skips=tuple(skips), components=tuple(components), files=reads)


def latest_run(store: str, *, branch: str | None = None, wait: float = 60.0) -> RunRecord | None:
    """The store's newest known-good run (on `branch`, if given); None if it has none."""
    conn = open_store(store, wait=wait)
    with conn, conn.errors("read the store"):
        where, params = _where(Selection(branch=branch))
        rows = conn.execute(
            "SELECT runs.build, runs.run, rec.branch, rec.judge, rec.known_good, "
            "rec.recorded_at FROM runs JOIN recordings rec ON runs.recording_id = rec.id"
            f"{where} ORDER BY rec.recorded_at DESC, runs.id DESC LIMIT 1",
            params,
        )
    if not rows:
        return None
    build, run, branch_, judge, known_good, at = rows[0]
    return RunRecord(
        run=run, build=build, branch=branch_, judge=judge, known_good=bool(known_good),
        recorded_at=at,
    )  # fmt: skip
