"""history names the cases a judge change moved; check warns when its baseline spans one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from gatecal._analyses.history.changes import shift_between, window_shift
from gatecal.cli import main
from tests.store.nightly import CASES, current_runs, nightly

MOVED = [CASES[0], CASES[5], CASES[9]]


def _fill(tmp_path: Path, store: str, judges: tuple[str, str], *, before: int = 15,
          after: int = 15) -> None:  # fmt: skip
    """`before` nightly runs judged as usual, then `after` runs in which the MOVED cases
    fail every time, recorded a day apart under the two judges' names."""
    old = nightly(tmp_path / "old", count=before)
    new = nightly(tmp_path / "new", count=after, start=before, seed=7, moved=MOVED)
    for day, (path, judge) in enumerate(
        [(p, judges[0]) for p in old] + [(p, judges[1]) for p in new]
    ):
        at = f"2026-11-{1 + day // 2:02d}T{2 + 12 * (day % 2):02d}:00Z"
        args = ["record", str(path), "--store", store, "--build", f"n{day}", "--judge"]
        assert main([*args, judge, "--known-good", "--at", at]) == 0


def _history(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    capsys.readouterr()
    assert main(["history", *args, "--format", "json"]) == 0
    document: dict[str, object] = json.loads(capsys.readouterr().out)
    assert document["format"] == "gatecal.history"
    return document


def _warnings(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main(["check", *args]) in (0, 1)
    return capsys.readouterr().err


def test_a_judge_change_names_the_three_cases_it_moved(tmp_path, capsys):
    store = str(tmp_path / "h.db")
    _fill(tmp_path, store, ("judge-a", "judge-b"))
    doc = _history(capsys, "--store", store)
    (change,) = doc["judge_changes"]  # type: ignore[misc]
    assert (change["before"], change["after"]) == ("judge-a", "judge-b")
    assert sorted(change["changed"]) == sorted(MOVED)
    assert sorted(doc["changed"]) == sorted(MOVED)  # type: ignore[arg-type]
    table = (capsys.readouterr(), main(["history", "--store", store]), capsys.readouterr().out)[2]
    assert "3 cases changed" in table and all(m.split("[")[1][:-1] in table for m in MOVED)

    current = str(current_runs(tmp_path / "ci")["clean"])
    spans = _warnings(capsys, current, "--store", store)  # every judge's latest runs
    assert "spans a judge change (judge-a -> judge-b" in spans
    assert all(m in spans for m in MOVED)
    old_judge = _warnings(capsys, current, "--store", store, "--judge", "judge-a")
    assert "latest known-good run is judge judge-b's" in old_judge
    # the new judge's own runs: no change within them, but fewer than asked, and why
    new_judge = _warnings(capsys, current, "--store", store, "--judge", "judge-b")
    assert "spans" not in new_judge and "latest known-good run" not in new_judge
    assert "the judge changed recently (judge-a -> judge-b" in new_judge
    assert "only 15 runs of judge-b" in new_judge and all(m in new_judge for m in MOVED)
    full = _warnings(capsys, current, "--store", store, "--judge", "judge-b", "--latest", "15")
    assert "warning" not in full


def test_a_change_under_one_name_is_found_in_time(tmp_path, capsys):
    """A provider's update: the judge keeps its name, three cases move; the split is
    searched, and check points to the runs since it."""
    store = str(tmp_path / "h.db")
    _fill(tmp_path, store, ("judge-a", "judge-a"), before=20, after=10)
    doc = _history(capsys, "--store", store)
    assert doc["judge_changes"] == []
    assert sorted(doc["window"]["changed"]) == sorted(MOVED)  # type: ignore[index]
    assert doc["describes_today"] is False
    assert doc["window"]["at"] == "2026-11-11T02:00:00.000000Z"  # type: ignore[index]
    current = str(current_runs(tmp_path / "ci")["clean"])
    warned = _warnings(capsys, current, "--store", store, "--judge", "judge-a")
    assert "--since 2026-11-11T02:00:00.000000Z" in warned
    # the runs since then describe the judge: no warning
    since = _warnings(capsys, current, "--store", store, "--since", "2026-11-11T02:00Z")
    assert "warning" not in since


def test_no_change_names_no_case(tmp_path, capsys):
    store = str(tmp_path / "h.db")
    _fill(tmp_path, store, ("judge-a", "judge-a"), before=30, after=0)
    doc = _history(capsys, "--store", store)
    assert doc["changed"] == [] and doc["describes_today"] is True


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ([0] * 12 + [1] * 3, [0] * 6 + [1] * 2),
        ([1] * 10, [0] * 4 + [1] * 3),
        ([0, 1] * 5, [0] * 7),
    ],
)
def test_each_case_is_fishers_exact_test(before, after):
    """One case, one split: the p-value is Fisher's exact test, two-sided as twice the
    smaller one-sided tail (scipy's one-sided tests: an independent implementation),
    adjusted by nothing when it is the only case tested."""
    outcome = np.array([[v] for v in before + after], dtype=np.int8)
    times = [f"t{i:02d}" for i in range(len(outcome))]
    shift = shift_between(outcome, ["c"], times, len(before))
    fails = [[before.count(0), before.count(1)], [after.count(0), after.count(1)]]
    tails = [stats.fisher_exact(fails, alternative=a).pvalue for a in ("less", "greater")]
    reference = min(1.0, 2 * min(tails))
    (case,) = shift.cases
    assert case.p_value == pytest.approx(reference, rel=1e-9)
    assert case.adjusted == pytest.approx(reference, rel=1e-9)


def test_a_searched_split_pays_for_its_search():
    """Every split tried multiplies each case's smallest p-value by their number."""
    before, after = [1] * 6 + [0] * 2, [0] * 6
    outcome = np.array([[v] for v in before + after], dtype=np.int8)
    times = [f"t{i:02d}" for i in range(len(outcome))]
    searched = window_shift(outcome, ["c"], times, min_runs=3)
    assert searched is not None and searched.splits == len(outcome) - 5

    def fisher(split: int) -> float:
        rows = outcome[:split, 0].tolist(), outcome[split:, 0].tolist()
        table = [[r.count(0), r.count(1)] for r in rows]
        tails = [stats.fisher_exact(table, alternative=a).pvalue for a in ("less", "greater")]
        return min(1.0, 2 * min(tails))

    best = min(fisher(s) for s in range(3, len(outcome) - 2))
    assert searched.cases[0].p_value == pytest.approx(min(1.0, best * searched.splits))
