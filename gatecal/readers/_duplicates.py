"""Duplicate verdicts and duplicate runs, found in memory bounded by counts.

Both questions are about cells: a verdict's (build, run, case, check) and a run's (case,
check) cells. When the cells are few enough to be counted in a table (a flag or a small
integer per cell, about as many cells as verdicts or fewer), the verdicts are folded in a
slice of rows at a time, so that no array of one integer per verdict is ever made; when
they are not, a sort of one key per verdict gives the same answer.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gatecal.readers._columns import VerdictColumns

__all__ = ["TABLE_BYTES", "TABLE_PER_VERDICT", "duplicate_runs", "first_duplicate"]

#: the most bytes a table of cells may take rather than a sort answering: TABLE_BYTES,
#: or TABLE_PER_VERDICT bytes a verdict when that is more
TABLE_BYTES = 1 << 24
TABLE_PER_VERDICT = 2
#: rows folded in at a time (a few arrays of this length are the temporaries)
_SLICE = 1 << 20


def _table_fits(cells: int, rows: int, width: int = 1) -> bool:
    """Whether a table of `cells` of `width` bytes is small enough for `rows` verdicts."""
    return cells * width <= max(TABLE_BYTES, TABLE_PER_VERDICT * rows)


def _first_repeat(key: Any) -> int | None:
    """The first row of `key` (a slice's keys) whose key an earlier row of it has."""
    import numpy as np

    order = np.argsort(key, kind="stable")
    same = key[order[1:]] == key[order[:-1]]
    if not same.any():
        return None
    # within a run of equal keys the sort is stable: later rows are the duplicates
    return int(order[1:][same].min())


def first_duplicate(table: VerdictColumns) -> int | None:
    """The first verdict (in order) whose (build, run, case, check) an earlier one has."""
    import numpy as np

    n = len(table)
    if not n:
        return None
    names = ("build", "run", "case", "check")
    sizes = [max(len(table.values(c)), 1) for c in names]
    cells = math.prod(sizes)
    if _table_fits(cells, n):  # a flag per cell, the rows folded in a slice at a time
        seen = np.zeros(cells, dtype=bool)
        marked = 0
        for start in range(0, n, _SLICE):
            stop = min(start + _SLICE, n)
            key = np.zeros(stop - start, dtype=np.int64)
            for name, size in zip(names, sizes, strict=True):
                key *= size
                key += table.codes(name)[start:stop]
            earlier = seen[key]  # a cell an earlier slice has
            found = int(np.argmax(earlier)) if earlier.any() else None
            seen[key] = True
            now = int(np.count_nonzero(seen))
            if found is not None or now - marked < len(key):
                within = _first_repeat(key)  # a cell an earlier row of this slice has
                first = min(i for i in (found, within) if i is not None)
                return start + first
            marked = now
        return None
    if cells < 1 << 62:  # one integer per key: 8 bytes a verdict
        key = np.zeros(n, dtype=np.int64)
        for name, size in zip(names, sizes, strict=True):
            key *= size
            key += table.codes(name)
        ordered = np.sort(key)
        if not (ordered[1:] == ordered[:-1]).any():
            return None  # the usual answer, without the sort's order
        del ordered
        return _first_repeat(key)
    keys = np.stack([table.codes(c) for c in reversed(names)])
    order = np.lexsort(keys)
    columns = keys[:, order]
    same = (columns[:, 1:] == columns[:, :-1]).all(axis=0)
    if not same.any():
        return None
    return int(order[1:][same].min())


def _smallest(top: int) -> Any:
    """The smallest signed integer dtype holding 0..top."""
    import numpy as np

    for dtype in (np.int8, np.int16, np.int32):
        if top <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _value_codes(table: VerdictColumns) -> tuple[Any, int]:
    """(value, n_values): per verdict a code of its (status, passed, score), codes given in
    the order of those values sorted (as np.unique's), in the smallest dtype that holds
    them; and how many there are."""
    import numpy as np

    n = len(table)
    status, passed = table.codes("status"), table.array("passed")
    has_score = table.array("has_score") == 1
    scored = None
    width = 1
    if has_score.any():
        _, score_code = np.unique(table.array("score")[has_score], return_inverse=True)
        scored = np.zeros(n, dtype=np.int64)
        scored[has_score] = score_code.reshape(-1) + 1
        width = int(scored.max()) + 1
    del has_score

    def raw(start: int, stop: int) -> Any:
        key = status[start:stop].astype(np.int64) * 3 + passed[start:stop] + 1
        return key if scored is None else key * width + scored[start:stop]

    span = max(len(table.values("status")), 1) * 3 * width
    if not _table_fits(span, n, 8):  # (the remap is made by a cumsum of int64)
        _, inverse = np.unique(raw(0, n), return_inverse=True)
        inverse = inverse.reshape(-1)
        top = int(inverse.max()) + 1 if n else 1
        return inverse.astype(_smallest(top)), top
    present = np.zeros(span, dtype=bool)
    for start in range(0, n, _SLICE):
        present[raw(start, min(start + _SLICE, n))] = True
    top = int(np.count_nonzero(present))
    dtype = _smallest(max(top, 1))
    remap = (np.cumsum(present) - 1).astype(dtype)  # np.unique's inverse: sorted order
    value = np.empty(n, dtype=dtype)
    for start in range(0, n, _SLICE):
        stop = min(start + _SLICE, n)
        value[start:stop] = remap[raw(start, stop)]
    return value, max(top, 1)


Group = tuple[str, list[str], int, float]


def duplicate_runs(table: VerdictColumns) -> list[Group]:
    """:func:`gatecal.readers._data.duplicate_runs` of verdicts held as columns."""
    if len(table.values("run")) < 3:
        return []  # no build has three runs
    value, n_values = _value_codes(table)
    out: list[Group] = []
    for build in table.ordered("build"):
        found = _build_by_table(table, build, value, n_values)
        out += _build_by_sort(table, build, value, n_values) if found is None else found
    return out


def _build_rows(table: VerdictColumns, build: str) -> Any:
    """The rows of `build` in a slice [start, stop): a mask, or None for every row."""
    if len(table.values("build")) == 1:
        return lambda start, stop: None
    code = table.code("build", build)
    column = table.codes("build")
    return lambda start, stop: column[start:stop] == code


def _flag(pairs: float, chance: float) -> bool:
    return pairs * chance < 0.01


def _build_by_table(
    table: VerdictColumns, build: str, value: Any, n_values: int
) -> list[Group] | None:
    """The groups of identical runs of `build`, each run's verdicts held as one row of a
    (run, cell) table of values; None when that table is too big or a run has two verdicts
    in one cell (the sort then answers)."""
    import numpy as np

    n = len(table)
    n_runs = max(len(table.values("run")), 1)
    n_checks = max(len(table.values("check")), 1)
    n_cells = max(len(table.values("case")), 1) * n_checks
    cell_kind = _smallest(n_values)
    width = np.dtype(cell_kind).itemsize
    if not (_table_fits(n_runs * n_cells, n, width) and _table_fits(n_cells * n_values, n, 8)):
        return None
    rows_of = _build_rows(table, build)
    run_col, case_col, check_col = table.codes("run"), table.codes("case"), table.codes("check")
    first = np.full(n_runs, n, dtype=np.int64)  # each run's first row in this build
    per_run = np.zeros(n_runs, dtype=np.int64)
    pair_counts = np.zeros(n_cells * n_values, dtype=np.int64)
    grid = np.zeros((n_runs, n_cells), dtype=cell_kind)  # value + 1; 0 absent
    for start in range(0, n, _SLICE):
        stop = min(start + _SLICE, n)
        where = rows_of(start, stop)
        runs = run_col[start:stop]
        cell = case_col[start:stop].astype(np.int64) * n_checks + check_col[start:stop]
        val = value[start:stop]
        if where is not None:
            runs, cell, val = runs[where], cell[where], val[where]
            at = np.flatnonzero(where)
        else:
            at = None
        if not len(runs):
            continue
        # a run's first row starts a stretch of equal runs: only those rows are looked at
        starts = np.flatnonzero(np.concatenate(([True], runs[1:] != runs[:-1])))
        codes, index = np.unique(runs[starts], return_index=True)
        rows = starts[index] if at is None else at[starts[index]]
        first[codes] = np.minimum(first[codes], start + rows)
        per_run += np.bincount(runs, minlength=n_runs)
        pair_counts += np.bincount(cell * n_values + val, minlength=len(pair_counts))
        grid[runs, cell] = val + 1
    present = np.flatnonzero(per_run)
    runs_in_order = present[np.argsort(first[present], kind="stable")]
    if len(runs_in_order) < 3:
        return []
    if (np.count_nonzero(grid[present], axis=1) != per_run[present]).any():
        return None  # two verdicts of a run in one cell: the sort keeps both
    pair = np.flatnonzero(pair_counts)
    counts = pair_counts[pair]
    shares = _collision(pair // n_values, counts)
    names = table.values("run")
    groups: dict[bytes, list[int]] = {}
    for code in runs_in_order.tolist():
        groups.setdefault(grid[code].tobytes(), []).append(code)
    pairs = len(runs_in_order) * (len(runs_in_order) - 1) / 2
    out: list[Group] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        chance = 1.0
        for c in np.flatnonzero(grid[members[0]]).tolist():
            chance *= shares[c]
        if _flag(pairs, chance):
            copies = [names[m] for m in members[1:]]
            out.append((names[members[0]], copies, int(per_run[members[0]]), pairs * chance))
    return out


def _collision(pair_cell: Any, counts: Any) -> dict[int, float]:
    """Per cell, the collision probability of its values' empirical distribution, from the
    counts of its (cell, value) pairs (sorted by cell)."""
    import numpy as np

    cells, start = np.unique(pair_cell, return_index=True)
    totals = np.add.reduceat(counts, start)
    squares = np.add.reduceat(counts.astype(np.float64) ** 2, start)
    shares = (squares / totals.astype(np.float64) ** 2).tolist()
    return dict(zip(cells.tolist(), shares, strict=True))


def _build_by_sort(table: VerdictColumns, build: str, value: Any, n_values: int) -> list[Group]:
    """The groups of identical runs of `build`, by sorting its verdicts by (run, cell)."""
    import numpy as np

    n_checks = max(len(table.values("check")), 1)
    where = table.mask("build", build)
    run_codes = table.codes("run")[where]
    runs_seen, first = np.unique(run_codes, return_index=True)
    runs = runs_seen[np.argsort(first, kind="stable")]
    if len(runs) < 3:
        return []
    cell = table.codes("case")[where].astype(np.int64) * n_checks + table.codes("check")[where]
    val = value[where].astype(np.int64)
    pair, counts = np.unique(cell * n_values + val, return_counts=True)
    collision = _collision(pair // n_values, counts)
    order = np.lexsort((cell, run_codes))
    sorted_runs = run_codes[order]
    bounds = np.searchsorted(sorted_runs, runs_seen)
    ends = np.append(bounds[1:], len(order))
    spans = zip(runs_seen.tolist(), bounds.tolist(), ends.tolist(), strict=True)
    by_code = {c: (b, e) for c, b, e in spans}
    names = table.values("run")
    groups: dict[bytes, list[int]] = {}
    for code in runs.tolist():
        b, e = by_code[code]
        rows = order[b:e]
        signature = np.stack([cell[rows], val[rows]]).tobytes()
        groups.setdefault(signature, []).append(code)
    pairs = len(runs) * (len(runs) - 1) / 2
    out: list[Group] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        b, e = by_code[members[0]]
        chance = 1.0
        for c in cell[order[b:e]].tolist():
            chance *= collision[c]
        if _flag(pairs, chance):
            out.append((names[members[0]], [names[m] for m in members[1:]], e - b, pairs * chance))
    return out
