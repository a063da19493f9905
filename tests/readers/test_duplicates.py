"""Duplicate verdicts and duplicate runs: the table of cells and the sort agree.

gatecal/readers/_duplicates.py answers both questions by a table of cells folded in a
slice of rows at a time when the cells are few, by a sort otherwise. Here each path is
forced (the size limit set to 0, or to more than any test needs; slices of a few rows, so
that a duplicate can sit in another slice than its first) and both must give what a plain
Python loop over the rows gives: the first duplicate verdict, and the groups of identical
runs with their verdict counts and chances.
"""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

import gatecal
from gatecal.readers import _duplicates
from gatecal.readers._columns import VerdictBuilder, VerdictColumns
from gatecal.readers._data import duplicate_runs
from gatecal.readers._verdict import RunsError


@pytest.fixture(params=["table", "sort"])
def path(request, monkeypatch):
    """Which way duplicates are found: the table of cells, or the sort."""
    big = request.param == "table"
    monkeypatch.setattr(_duplicates, "TABLE_BYTES", 1 << 30 if big else 0)
    monkeypatch.setattr(_duplicates, "TABLE_PER_VERDICT", 2 if big else 0)
    monkeypatch.setattr(_duplicates, "_SLICE", 7)  # a duplicate often in a later slice
    return request.param


Row = tuple[str, str, str, str, str, bool | None, float | None]  # build run case check ...


def _table(rows: list[Row]) -> VerdictColumns:
    builder = VerdictBuilder()
    for build, run, case, check, status, passed, score in rows:
        builder.add(build, run, case, check, "judge", passed, status, score, "", 1, False, "f")
    return builder.build()


def _random_rows(rng: random.Random, scores: bool) -> list[Row]:
    """Runs of a few cases and checks in two builds, some runs copies of an earlier one
    (every verdict the same), some cells absent."""
    n_runs, n_cases, n_checks = rng.randint(1, 9), rng.randint(1, 30), rng.randint(1, 3)
    rows: list[Row] = []
    kept: dict[int, list[Row]] = {}
    for r in range(n_runs):
        if r and rng.random() < 0.4:
            source = rng.randrange(r)
            kept[r] = [(b, f"r{r}", c, k, s, p, x) for b, _, c, k, s, p, x in kept[source]]
        else:
            kept[r] = []
            for c in range(n_cases):
                for k in range(n_checks):
                    if rng.random() < 0.1:
                        continue  # absent
                    build = "healthy" if rng.random() < 0.8 else "regressed"
                    status = rng.choice(["ok", "ok", "ok", "error"])
                    passed = rng.choice([True, False]) if status == "ok" else None
                    score = rng.choice([None, 0.25, 0.5, 1.0]) if scores else None
                    check = f"k{k}" if n_checks > 1 else ""
                    kept[r].append((build, f"r{r}", f"case-{c}", check, status, passed, score))
        rows += kept[r]
    if rng.random() < 0.3:
        rng.shuffle(rows)  # runs interleaved
    return rows


def _plant_duplicates(rng: random.Random, rows: list[Row]) -> list[Row]:
    """`rows` with a few of them repeated later (another outcome, the same cell)."""
    out = list(rows)
    for _ in range(rng.randint(1, 3)):
        b, r, c, k, _s, p, x = rng.choice(rows)
        out.insert(rng.randint(0, len(out)), (b, r, c, k, "ok", not p, x))
    return out


def _first_duplicate_by_loop(rows: list[Row]) -> int | None:
    seen: set[tuple[str, str, str, str]] = set()
    for i, (build, run, case, check, *_) in enumerate(rows):
        if (build, run, case, check) in seen:
            return i
        seen.add((build, run, case, check))
    return None


def _duplicate_runs_by_loop(rows: list[Row]) -> list[tuple[str, list[str], int, float]]:
    """duplicate_runs' rule, row by row: a group of runs of one build with the same
    verdict in every cell, flagged when pairs x the product over its cells of the
    collision probability sum(count^2) / total^2 of the cell's values is below 0.01."""
    out = []
    for build in dict.fromkeys(b for b, *_ in rows):
        mine = [row for row in rows if row[0] == build]
        runs = list(dict.fromkeys(row[1] for row in mine))
        if len(runs) < 3:
            continue
        values: dict[tuple[str, str], Counter[tuple[object, ...]]] = {}
        signature: dict[str, Counter[tuple[object, ...]]] = {r: Counter() for r in runs}
        for _, run, case, check, status, passed, score in mine:
            values.setdefault((case, check), Counter())[(status, passed, score)] += 1
            signature[run][(case, check, status, passed, score)] += 1
        groups: dict[frozenset[tuple[tuple[object, ...], int]], list[str]] = {}
        for run in runs:
            groups.setdefault(frozenset(signature[run].items()), []).append(run)
        pairs = len(runs) * (len(runs) - 1) / 2
        for members in groups.values():
            if len(members) < 2:
                continue
            chance = 1.0
            for (case, check, *_), times in signature[members[0]].items():
                counts = values[(case, check)].values()
                chance *= (sum(c * c for c in counts) / sum(counts) ** 2) ** times
            n = sum(signature[members[0]].values())
            if pairs * chance < 0.01:
                out.append((members[0], members[1:], n, pairs * chance))
    return out


@pytest.mark.parametrize("seed", range(60))
def test_first_duplicate_is_the_first_row_an_earlier_row_repeats(path, seed):
    rng = random.Random(seed)
    rows = _random_rows(rng, scores=seed % 2 == 1)
    if seed % 3:
        rows = _plant_duplicates(rng, rows)
    table = _table(rows)
    cells = math.prod(max(len(table.values(c)), 1) for c in ("build", "run", "case", "check"))
    assert _duplicates._table_fits(cells, len(table)) == (path == "table")
    assert _duplicates.first_duplicate(table) == _first_duplicate_by_loop(rows)


def test_first_duplicate_in_the_first_slice_and_across_slices(path):
    base = [("healthy", "r1", f"c{i}", "", "ok", True, None) for i in range(20)]
    within = [*base[:3], base[1], *base[3:]]  # row 3 repeats row 1, both in slice 0
    across = [*base, base[0]]  # row 20 (slice 2) repeats row 0
    # slice 1 (rows 7-13) repeating an earlier slice's row and one of its own, either first
    hit_first = [*base[:7], base[0], base[8], base[8], *base[9:]]
    own_first = [*base[:7], base[7], base[7], base[0], *base[8:]]
    cases = ((base, None), (within, 3), (across, 20), (hit_first, 7), (own_first, 8))
    for rows, want in cases:
        assert _first_duplicate_by_loop(rows) == want
        assert _duplicates.first_duplicate(_table(rows)) == want
    assert _duplicates.first_duplicate(_table([])) is None


@pytest.mark.parametrize("seed", range(60))
def test_duplicate_runs_match_the_rule_row_by_row(path, seed):
    rng = random.Random(1000 + seed)
    rows = _random_rows(rng, scores=seed % 2 == 1)
    if seed % 5 == 0:
        rows = _plant_duplicates(rng, rows)  # two verdicts in a cell: the table path yields
    got = duplicate_runs(_table(rows))
    want = _duplicate_runs_by_loop(rows)
    assert [g[:3] for g in got] == [w[:3] for w in want]
    assert [g[3] for g in got] == pytest.approx([w[3] for w in want], rel=1e-12)


def test_duplicate_runs_groups_seen_by_the_random_tables():
    """The random tables above do flag groups (and leave some unflagged): the test of the
    rule is not one of empty lists."""
    flagged = sum(bool(_duplicate_runs_by_loop(_random_rows(random.Random(1000 + s), False)))
                  for s in range(60))  # fmt: skip
    assert 5 <= flagged <= 55


def test_both_paths_give_the_same_groups_to_the_last_bit(monkeypatch):
    """The table multiplies the same shares in the same order as the sort."""
    for seed in range(40):
        table = _table(_random_rows(random.Random(2000 + seed), scores=seed % 2 == 1))
        monkeypatch.setattr(_duplicates, "TABLE_BYTES", 0)
        monkeypatch.setattr(_duplicates, "TABLE_PER_VERDICT", 0)
        by_sort = duplicate_runs(table)
        monkeypatch.setattr(_duplicates, "TABLE_BYTES", 1 << 30)
        assert duplicate_runs(table) == by_sort


def test_read_runs_names_the_first_duplicate(path, tmp_path):
    lines = ["run,case,passed"] + [f"r{r},c{c},true" for r in range(3) for c in range(5)]
    lines.insert(9, "r1,c0,false")  # r1/c0 again, before a later r0/c1 again
    lines.append("r0,c1,false")
    (tmp_path / "runs.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(RunsError, match=r"case 'c0' in run 'r1'"):
        gatecal.read_runs([tmp_path / "runs.csv"])
