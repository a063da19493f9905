"""compare decides only on complete evidence: each way it was fooled before, refused.

Each test builds a candidate whose regression is hidden in one of the ways an adversarial
pass found (failing check rows dropped, failures turned into errors or skips, every case
renamed) and asserts the decision is never "no evidence" (exit 0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gatecal
from tests.conftest import run_cli

CASES = [f"case-{j}" for j in range(10)]
BROKEN = {"case-1", "case-2", "case-3", "case-4"}


def _rows(build: str, runs: int, hide: str | None = None) -> list[dict[str, object]]:
    """`runs` runs of `build`, two checks per case; with `hide`, the broken cases' failing
    check ("facts") hidden: dropped, errored in all but the last run, or skipped."""
    out: list[dict[str, object]] = []
    for r in range(runs):
        for case in CASES:
            for check in ("relevancy", "facts"):
                row: dict[str, object] = {"build": build, "run": f"{build[0]}{r}",
                                          "case": case, "check": check, "passed": True}  # fmt: skip
                if hide is not None and case in BROKEN and check == "facts":
                    if hide == "drop":
                        continue
                    if hide == "error" and r < runs - 1:
                        row.update(status="error", passed=None)
                    elif hide == "skip":
                        row.update(status="skipped", passed=None)
                    else:
                        row["passed"] = False
                out.append(row)
    return out


def _file(tmp_path: Path, hide: str, runs: int = 20) -> Path:
    path = tmp_path / f"{hide}.jsonl"
    rows = _rows("healthy", runs) + _rows("regressed", runs, hide)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_plain_regression_is_found(tmp_path):
    res = gatecal.compare_builds(gatecal.read_runs([_file(tmp_path, "fail")]), oc_samples=0)
    assert res.decision == "regression" and set(res.changes.worse) == BROKEN


def test_dropped_failing_check_rows_are_missing_evidence(tmp_path, capsys):
    """Before: "no evidence that the candidate is worse", exit 0."""
    path = _file(tmp_path, "drop")
    res = gatecal.compare_builds(gatecal.read_runs([path]), oc_samples=0)
    assert res.decision == "incomplete" and res.exit_code == 1
    assert len(res.compared.incomplete_runs) == 4 * 20
    assert all("lacks a check" in h for h in res.compared.incomplete_runs)
    code, out, _ = run_cli("compare", path, "--oc-samples", "0")
    assert code == 1 and "INCOMPLETE EVIDENCE" in out


def test_errored_verdicts_are_counted_or_incomplete_never_dropped(tmp_path, capsys):
    """19 of 20 runs errored on the broken cases. Before: exit 0 and the 76 errors nowhere;
    compare had no --max-errors."""
    path = _file(tmp_path, "error")
    data = gatecal.read_runs([path])
    res = gatecal.compare_builds(data, oc_samples=0)
    assert res.decision == "incomplete" and len(res.compared.errors) == 76
    assert any("76 error or unscored verdicts" in r for r in res.reasons)
    # within --max-errors each error counts as a failure: the regression is found
    counted = gatecal.compare_builds(data, oc_samples=0, max_errors=76)
    assert counted.decision == "regression" and set(counted.changes.worse) == BROKEN
    code, out, _ = run_cli("compare", path, "--oc-samples", "0", "--format", "json")
    assert code == 1 and json.loads(out)["errors"][0] == "case-1 in candidate run r0"
    code, out, _ = run_cli("compare", path, "--oc-samples", "0", "--max-errors", "76")
    assert code == 1 and "REGRESSION" in out and "76 error or unscored verdicts counted" in out


def test_skipped_failing_verdicts_are_missing_evidence(tmp_path, capsys):
    """Before: exit 0."""
    path = _file(tmp_path, "skip")
    res = gatecal.compare_builds(gatecal.read_runs([path]), oc_samples=0)
    assert res.decision == "incomplete"
    assert all(h.endswith(": skipped") for h in res.compared.incomplete_runs)
    code, _, _ = run_cli("compare", path, "--oc-samples", "0")
    assert code == 1


def test_partial_leaves_out_and_names_what_lacks_evidence(tmp_path):
    res = gatecal.compare_builds(
        gatecal.read_runs([_file(tmp_path, "drop")]), oc_samples=0, partial=True
    )
    assert set(res.compared.left_out) == BROKEN and res.compared.cases_compared == 6
    assert any("left out (--allow-missing)" in w for w in res.warnings)


def test_no_case_in_common_is_incomplete_not_a_traceback(tmp_path, capsys):
    """Every case renamed. Before: KeyError: 'auto' in the table renderer. Exit 1
    (incomplete), not 2: the candidate's run has no verdict on any baseline case, which
    is what a CI run that crashed early looks like, so it is missing evidence under the
    one rule (a baseline case with no verdict in a build), as check's empty run is."""
    rows = _rows("healthy", 3) + [
        {**r, "case": "x" + str(r["case"])} for r in _rows("regressed", 3)
    ]
    path = tmp_path / "renamed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for fmt in ("table", "markdown", "csv", "json"):
        code, out, err = run_cli("compare", path, "--oc-samples", "0", "--format", fmt)
        assert code == 1 and "Traceback" not in err and err == "", err
    code, out, _ = run_cli("compare", path, "--oc-samples", "0")
    assert "INCOMPLETE EVIDENCE" in out and "no case observed in both builds" in out


def test_a_matrix_hole_inside_a_compared_case_is_missing_evidence():
    base = [[1, 1, 1]] * 6
    cand = [[1, 1, 0]] * 5 + [[1, -1, 0]]
    res = gatecal.compare_matrices(base, cand, oc_samples=0)
    assert res.decision == "incomplete" and res.compared.incomplete_runs == (
        "1 in candidate run 6",
    )


@pytest.mark.parametrize("regression", ["99999", "7"])
def test_a_regression_larger_than_the_cases_is_refused(tmp_path, capsys, regression):
    """Before: accepted on 6 cases, and the operating characteristics vanished."""
    cases = [f"c{j}" for j in range(6)]
    rows = [{"build": b, "run": f"{b[0]}{r}", "case": c, "passed": True}
            for b in ("healthy", "regressed") for r in range(4) for c in cases]  # fmt: skip
    path = tmp_path / "six.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run_cli("compare", path, "--regression", regression)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("gatecal: error: --regression must fail between 1 and the 6 compared")


@pytest.mark.parametrize("hide", ["drop", "error", "skip"])
def test_the_rule_holds_for_builds_given_apart(tmp_path, hide):
    """compare_builds(baseline, candidate=...): each build its own files."""
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    base.write_text("".join(json.dumps({**r, "build": ""}) + "\n" for r in _rows("healthy", 20)))
    rows = _rows("regressed", 20, hide)
    cand.write_text("".join(json.dumps({**r, "build": ""}) + "\n" for r in rows))
    res = gatecal.compare_builds(base, candidate=cand, oc_samples=0)
    assert res.decision == "incomplete" and res.exit_code == 1
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({**r, "build": ""}) + "\n"
                             for r in _rows("regressed", 20, "fail")))  # fmt: skip
    found = gatecal.compare_builds(base, candidate=plain, oc_samples=0)
    assert found.decision == "regression" and set(found.changes.worse) == BROKEN
