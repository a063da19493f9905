"""A fuzz test of the one evidence rule: builds with dropped, errored and skipped verdicts
and reordered runs never pass where the evidence is missing.

compare: whatever cells of either build are tampered with (a case's rows dropped in a run,
one of its two checks dropped, an error, a skip), the decision is never "no evidence"
(exit 0) unless max_errors or partial say otherwise. The sequential checks: a tampered
current run is never a pass; and runs given in one order never pass where another order
of the same runs would not.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from hypothesis import HealthCheck, Phase, example, given, settings, strategies as st

import gatecal

CASES = [f"case-{j}" for j in range(8)]
CHECKS = ("relevancy", "facts")
TAMPER = ("drop-case", "drop-check", "error", "skip")
FEW = settings(
    max_examples=12,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
    suppress_health_check=list(HealthCheck),
)


def _rows(build: str, runs: int, failing: dict[int, set[str]], tampered: dict) -> list[dict]:
    rows = []
    for r in range(runs):
        for case in CASES:
            how = tampered.get((r, case))
            if how == "drop-case":
                continue
            for check in CHECKS:
                row = {"build": build, "run": f"{build[0]}{r}", "case": case, "check": check,
                       "passed": case not in failing.get(r, set())}  # fmt: skip
                if how == "drop-check" and check == "facts":
                    continue
                if how == "error" and check == "facts":
                    row.update(status="error", passed=None)
                if how == "skip" and check == "facts":
                    row.update(status="skipped", passed=None)
                rows.append(row)
    return rows


def _write(folder: Path, rows: list[dict]) -> Path:
    path = folder / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


cells = st.tuples(st.integers(0, 5), st.sampled_from(CASES), st.sampled_from(TAMPER))


@FEW
@given(
    runs=st.integers(3, 6),
    base_cells=st.lists(cells, max_size=3),
    cand_cells=st.lists(cells, min_size=0, max_size=6),
    broken=st.sets(st.sampled_from(CASES), max_size=4),
)
def test_compare_never_passes_on_missing_evidence(tmp_path_factory, runs, base_cells,
                                                  cand_cells, broken):  # fmt: skip
    base_t = {(r % runs, c): how for r, c, how in base_cells}
    cand_t = {(r % runs, c): how for r, c, how in cand_cells}
    failing = {r: set(broken) for r in range(runs)}
    rows = _rows("healthy", runs, {}, base_t) + _rows("regressed", runs, failing, cand_t)
    path = _write(tmp_path_factory.mktemp("c"), rows)
    result = gatecal.compare_builds(gatecal.read_runs([path]), oc_samples=0)
    # a cell of a broken case keeps its failing check unless the whole case is dropped:
    # a failure is evidence enough for that cell (as in check), so only the others lack it
    lacking = {**{("b", *k): h for k, h in base_t.items()},
               **{("c", *k): h for k, h in cand_t.items()
                  if h == "drop-case" or k[1] not in broken}}  # fmt: skip
    if lacking:  # some evidence is missing: never a pass, never a decision at all
        assert result.decision == "incomplete", (result.decision, result.reasons)
        assert result.exit_code == 1
    errors = sum(h == "error" for h in lacking.values())
    # within max_errors each error counts as a failure, and only errors were tampered
    if errors and all(h == "error" for h in lacking.values()):
        counted = gatecal.compare_builds(gatecal.read_runs([path]), oc_samples=0,
                                         max_errors=errors)  # fmt: skip
        assert counted.decision != "incomplete" or any(
            "can reach alpha" in r for r in counted.reasons
        )
        assert len(counted.compared.errors) == errors


def _current(folder: Path, runs: list[dict[str, str]]) -> Path:
    rows = []
    for t, outcome in enumerate(runs):
        for case, what in outcome.items():
            if what == "drop":
                continue
            row = {"run": f"ci-{t}", "case": case, "passed": what == "pass", "status": "ok"}
            if what in ("error", "skipped"):
                row.update(passed=None, status=what)
            rows.append(row)
    return _write(folder, rows)


def _baseline(folder: Path) -> gatecal.RunsData:
    rows = [{"run": f"n{r}", "case": c, "passed": not (c == "case-0" and r % 4 == 0)}
            for r in range(30) for c in CASES]  # fmt: skip
    return gatecal.read_runs([_write(folder, rows)])


outcomes = st.fixed_dictionaries({c: st.sampled_from(["pass"] * 6 + ["fail"]) for c in CASES})


@FEW
@given(
    policy=st.sampled_from(["sprt-3", "pocock-3", "obf-3"]),
    runs=st.lists(outcomes, min_size=1, max_size=3),
    tamper=st.tuples(
        st.integers(0, 2), st.sampled_from(CASES), st.sampled_from(["drop", "error", "skipped"])
    ),
)
@example(  # a passing run, then one in which every case fails: passed before (order)
    policy="pocock-3",
    runs=[dict.fromkeys(CASES, "pass"), dict.fromkeys(CASES, "fail")],
    tamper=(0, "case-1", "drop"),
)
def test_a_sequential_check_never_passes_on_missing_evidence_or_by_order(
    tmp_path_factory, policy, runs, tamper
):
    folder = tmp_path_factory.mktemp("s")
    base_folder = tmp_path_factory.mktemp("b")
    base = _baseline(base_folder)
    # every order of the runs: a pass in one means a pass in all
    decisions = set()
    for order in itertools.permutations(range(len(runs))):
        cur = gatecal.read_runs([_current(folder, [runs[t] for t in order])])
        decisions.add(gatecal.check_sequential(cur, base, policy=policy).decision)
    assert "pass" not in decisions or decisions == {"pass"}, decisions
    # one cell tampered in one of the runs: never a pass
    t, case, how = tamper
    tampered = [dict(r) for r in runs]
    tampered[t % len(runs)][case] = how
    cur = gatecal.read_runs([_current(folder, tampered)])
    result = gatecal.check_sequential(cur, base, policy=policy)
    assert result.decision != "pass", result.reasons
