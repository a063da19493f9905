"""check --gate-from: a case-aware gate file is used only with the baseline it was made
from, judged by its content (each case's record, the weights and the tail)."""

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli

CASES = [f"case-{c:02d}" for c in range(20)]
#: case-00 and case-01 fail in every third known-good run; the others never
FLAKY = {"case-00", "case-01"}


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
                "passed": c not in FLAKY or r % 3 != 0,
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


def test_weights_moved_by_hand_between_cases_are_refused(made):
    folder, old, _, gate = made
    document = json.loads(gate.read_text())
    rows = {row["case"]: row for row in document["case_gate"]["cases"]}
    for light, heavy in (("case-05", "case-07"), ("case-06", "case-08")):
        rows[heavy]["units"] += rows[light]["units"]  # records, tail, threshold untouched
        rows[light]["units"] = 0
    moved = folder / "moved.json"
    moved.write_text(json.dumps(document))
    ci = _ci(folder / "ci-moved.jsonl", {"case-05", "case-06"})
    code, out, err = run_cli("check", ci, "--baseline", old, "--gate-from", moved)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "does not check out against its baseline: case 'case-05' weighs 0.00" in err


def test_a_weight_one_unit_off_is_refused(made):
    """The stated tolerance is half a unit (the rounding to whole units)."""
    from gatecal._analyses.check.gatefile import WEIGHT_TOLERANCE

    folder, old, _, gate = made
    document = json.loads(gate.read_text())
    unit = document["case_gate"]["unit"]
    assert unit / 2 > WEIGHT_TOLERANCE  # the rounding, not the float slack, is the tolerance
    row = document["case_gate"]["cases"][5]
    row["units"] += 1
    document["case_gate"]["tail"].insert(-1, document["case_gate"]["tail"][-2])
    edited = folder / "plus-one.json"
    edited.write_text(json.dumps(document))
    ci = _ci(folder / "ci-none.jsonl", set())
    code, _, err = run_cli("check", ci, "--baseline", old, "--gate-from", edited)
    assert code == 2 and f"case '{row['case']}' weighs" in err


def test_a_tail_edited_by_hand_is_refused(made):
    folder, old, _, gate = made
    document = json.loads(gate.read_text())
    body = document["case_gate"]
    threshold = body["threshold"]
    # below the threshold the tail stays over the budget, so the file checks out by itself
    body["tail"][threshold + 1 :] = [t / 2 for t in body["tail"][threshold + 1 :]]
    edited = folder / "tail.json"
    edited.write_text(json.dumps(document))
    ci = _ci(folder / "ci-tail.jsonl", set())
    code, _, err = run_cli("check", ci, "--baseline", old, "--gate-from", edited)
    assert code == 2 and "its tail" in err and err.count("\n") == 1
