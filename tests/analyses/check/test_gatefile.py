"""check --gate-from: a case-aware gate file is used only with the baseline it was made
from, judged by its content (each case's record, the weights and the tail)."""

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

CASES = [f"case-{c:02d}" for c in range(20)]
#: (m, k): the case fails in the known-good runs r with r % m == k (case-00 and case-01
#: together, every third run; case-02 every fifth); the others never
FLAKY = {"case-00": (3, 0), "case-01": (3, 0), "case-02": (5, 1)}


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _nights(path: Path, labels: dict[str, str] | None = None) -> Path:
    """30 known-good runs; `labels` renames cases (the same runs under other ids)."""
    labels = labels or {}
    return _write(
        path,
        [
            {
                "run": f"night-{r:02d}",
                "case": labels.get(c, c),
                "passed": c not in FLAKY or r % FLAKY[c][0] != FLAKY[c][1],
            }
            for r in range(30)
            for c in CASES
        ],
    )


def _ci(path: Path, failing: set[str]) -> Path:
    return _write(path, [{"run": "ci", "case": c, "passed": c not in failing} for c in CASES])


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gatefile")
    old = _nights(folder / "old.jsonl")
    swapped = {"case-00": "case-10", "case-10": "case-00", "case-01": "case-11"}
    new = _nights(folder / "new.jsonl", {**swapped, "case-11": "case-01"})
    gate = folder / "gate.json"
    code, _, err = run_cli("recommend", old, "--format", "json", "--out", gate)
    assert code == 0, err
    assert json.loads(gate.read_text())["gate"]["kind"] == "cases"
    return folder, old, new, gate


def test_a_gate_file_from_another_baseline_with_the_same_names_and_counts_is_refused(made):
    """Swapping two pairs of cases' labels keeps every name and every run's failing count;
    failing the two cases that never failed in the new baseline passed with the old file."""
    folder, old, new, gate = made
    ci = _ci(folder / "ci.jsonl", {"case-00", "case-01"})
    code, out, err = run_cli("check", ci, "--baseline", new, "--gate-from", gate)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "--gate-from was made from another baseline: case 'case-00' failed 10 of 30" in err
    assert "0 of 30 in the baseline given" in err
    code, out, _ = run_cli("check", ci, "--baseline", new)  # the baseline's own gate fails it
    assert code == 1 and "new (never failed before)" in out
    code, _, err = run_cli("check", ci, "--baseline", old, "--gate-from", gate)  # its own: used
    assert code == 0, err


def test_failures_moved_by_hand_between_known_good_runs_are_refused(made):
    """Every case's record and every run's failing count kept, but two failures swapped
    between runs: the file checks out against itself, not against its baseline."""
    folder, old, _, gate = made
    document = json.loads(gate.read_text())
    body = document["case_gate"]
    index = {row["case"]: i for i, row in enumerate(body["cases"])}
    a, b = index["case-00"], index["case-02"]
    runs = body["known_good_runs"]
    with_a = next(r for r in runs if a in r["failing"] and b not in r["failing"])
    with_b = next(r for r in runs if b in r["failing"] and a not in r["failing"])
    with_a["failing"][with_a["failing"].index(a)] = b
    with_b["failing"][with_b["failing"].index(b)] = a
    moved = folder / "moved.json"
    moved.write_text(json.dumps(document))
    ci = _ci(folder / "ci-moved.jsonl", set())
    code, out, err = run_cli("check", ci, "--baseline", old, "--gate-from", moved)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "--gate-from was made from other known-good runs" in err
    assert "case 'case-0" in err


def test_a_rate_edited_by_hand_is_refused_and_its_last_bits_are_not(made):
    """The stated tolerance: a relative RATE_TOLERANCE."""
    from gatecal._analyses.check.gatefile import RATE_TOLERANCE

    folder, old, _, gate = made
    ci = _ci(folder / "ci-none.jsonl", set())
    document = json.loads(gate.read_text())
    row = document["case_gate"]["cases"][3]
    for factor, refused in ((1 + RATE_TOLERANCE / 100, False), (1 + 100 * RATE_TOLERANCE, True)):
        edited = json.loads(json.dumps(document))
        edited["case_gate"]["cases"][3]["rate"] = row["rate"] * factor
        path = folder / "rate.json"
        path.write_text(json.dumps(edited))
        code, _, err = run_cli("check", ci, "--baseline", old, "--gate-from", path)
        if refused:
            assert code == 2 and f"case {row['case']!r} has the healthy rate" in err
        else:
            assert code == 0, err
