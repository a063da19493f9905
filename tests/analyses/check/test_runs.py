"""check's current runs as arrays of states, against the rules applied row by row.

`run_states` stores each (run, case)'s state into a runs x cases array and `_combine` applies a
policy to whole columns at once; here both are compared with the documented rules written
the plain way, a dict and a loop per case, on random tables and random runs.
"""

import json
from collections import defaultdict

import numpy as np
from hypothesis import assume, given, settings, strategies as st

import gatecal
from gatecal._analyses.check.runs import _combine
from gatecal._analyses.policies.parse import parse_check_policy
from gatecal._model.evidence import MISSING, STATE_NAMES
from gatecal.readers.run_states import RunStates, expected_checks, run_states

PASS, FAIL, ERROR = "passed", "failed", "error"
CASES = [f"case-{i}" for i in range(6)]
CHECKS = ["", "facts", "tone"]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def table(draw, runs, cases, least=0):
    """Rows of a long table: for each (run, case) pair at least `least` checks, each ok
    (pass or fail) or an error; each (run, case, check) once."""
    rows = []
    for run in runs:
        for case in cases:
            drawn = st.lists(st.sampled_from(CHECKS), unique=True, min_size=least, max_size=3)
            for check in draw(drawn):
                kind = draw(st.sampled_from(["pass", "pass", "fail", "error"]))
                row = {"run": run, "case": case, "check": check, "passed": kind == "pass"}
                row["status"] = "ok"
                if kind == "error":
                    row.update(passed="", status="error")
                rows.append(row)
    return rows


def states_row_by_row(current_rows, baseline_rows, runs, columns):
    """Each run's state of each case: failed if an ok verdict failed, else error if a
    verdict is an error, else missing if it lacks a check the baseline ran on the case (or
    has no verdict at all), else passed."""
    ran = defaultdict(set)
    for r in baseline_rows:
        ran[r["case"]].add(r["check"])
    cells = defaultdict(list)
    for r in current_rows:
        cells[r["run"], r["case"]].append(r)
    out = []
    for run in runs:
        states = {}
        for case in columns:
            rows = cells.get((run, case))
            if not rows:
                states[case] = "missing"
            elif any(r["status"] == "ok" and not r["passed"] for r in rows):
                states[case] = FAIL
            elif any(r["status"] != "ok" for r in rows):
                states[case] = ERROR
            elif ran[case] - {r["check"] for r in rows}:
                states[case] = "missing"
            else:
                states[case] = PASS
        out.append(states)
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_states_are_the_rules_row_by_row(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("states")
    base_rows = table(
        data.draw, ["night-1", "night-2"], CASES[:4], least=data.draw(st.integers(0, 1))
    )
    # the baseline's cases in its order (a table of the same cases, placed at once), in
    # another order, or others
    cur_cases = data.draw(
        st.one_of(
            st.just(CASES[:4]),
            st.permutations(CASES[:4]),
            st.lists(st.sampled_from(CASES), unique=True, min_size=1),
        )
    )
    runs = ["try-1", "try-2", "try-3"][: data.draw(st.integers(1, 3))]
    cur_rows = table(data.draw, runs, cur_cases, least=data.draw(st.integers(0, 1)))
    assume(base_rows and cur_rows)
    base = gatecal.read_runs([write(tmp / "b.jsonl", base_rows)])
    cur = gatecal.read_runs([write(tmp / "c.jsonl", cur_rows)])
    order = base.cases()
    extra = [c for c in cur.cases() if c not in set(order)]
    got = run_states(cur, order, expected_checks(base), extra)
    assert got.runs == cur.runs("healthy") and got.n == len(order)
    assert list(got.cases) == order + extra
    want = states_row_by_row(cur_rows, base_rows, got.runs, order + extra)
    assert [[STATE_NAMES[c] for c in row] for row in got.codes.tolist()] == [
        [w[c] for c in order + extra] for w in want
    ]
    # which checks were missing where: one entry per (run, case) lacking one
    lacking = sum(
        1
        for w, run in zip(want, got.runs, strict=True)
        for c in order
        if w[c] == "missing" and any(r["run"] == run and r["case"] == c for r in cur_rows)
    )
    assert len(got.gaps) == lacking


def combine_case_by_case(policy, runs, states, cases, k_min):
    """The policies' rules, a dict per run and a loop per case: (final, errors, reasons,
    attempt)."""
    reasons = []
    if policy.repeat > 1:
        if len(runs) != policy.repeat:
            reasons.append(f"needs {policy.repeat} current runs ({len(runs)} given)")
        final, errors = {}, set()
        for c in cases:
            seen = [s[c] for s in states]
            if ERROR in seen:
                errors.add(c)
            if "missing" in seen:
                final[c] = "missing"
            else:
                final[c] = PASS if seen.count(PASS) >= policy.need else FAIL
        return final, errors, reasons, 0
    if policy.rerun_failing:
        limit = policy.rerun_failing + 1
        if len(runs) > limit:
            reasons.append(f"allows {limit} attempts ({len(runs)} current runs given)")
        final, errors = {}, set()
        for c in cases:
            state, tries = states[0][c], 1
            if state == ERROR:
                errors.add(c)
            for s in states[1:]:
                if state not in (FAIL, ERROR) or s[c] == "missing":
                    break
                state, tries = s[c], tries + 1
                if state == ERROR:
                    errors.add(c)
            if state in (FAIL, ERROR) and tries < min(limit, len(states)):
                reasons.append(f"{c} did not pass attempt {tries} and is missing from")
            elif state in (FAIL, ERROR) and tries < limit:
                reasons.append(f"{c} did not pass in {tries} attempt(s)")
            final[c] = state
        return final, errors, reasons, 0
    if policy.rerun:
        limit = policy.rerun + 1
        if len(runs) > limit:
            reasons.append(f"allows {limit} attempts ({len(runs)} current runs given)")
        best, best_k = 0, -1
        for t, s in enumerate(states):
            k = sum(s[c] == PASS for c in cases)
            if k > best_k:
                best, best_k = t, k
            if k >= k_min and all(s[c] != "missing" for c in cases):
                best = t
                break
        else:
            if len(states) < limit:
                reasons.append("every attempt given failed the gate")
        used = states[: best + 1] if best_k < k_min else [states[best]]
        errors = {c for s in used for c in cases if s[c] == ERROR}
        return dict(states[best]), errors, reasons, best
    if len(runs) > 1:
        reasons.append("no policy")
    return dict(states[0]), {c for c in cases if states[0][c] == ERROR}, reasons, 0


POLICIES = ["single", "rerun-failing-1", "rerun-failing-2", "rerun-1", "rerun-2",
            "repeat-2-of-3", "repeat-1-of-2"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    policy=st.sampled_from(POLICIES),
    codes=st.integers(1, 4).flatmap(
        lambda runs: st.lists(
            st.lists(st.integers(0, 3), min_size=runs, max_size=runs), min_size=1, max_size=7
        )
    ),
    k_min=st.integers(0, 7),
)
def test_combine_is_the_rules_case_by_case(policy, codes, k_min):
    array = np.asarray(codes, dtype=np.int8).T.copy()  # runs x cases
    runs = [f"try-{t}" for t in range(array.shape[0])]
    cases = [f"case-{j}" for j in range(array.shape[1])]
    extra = np.full((len(runs), 2), MISSING, dtype=np.int8)  # others: never combined
    states = RunStates(runs, (*cases, "x", "y"), len(cases), np.hstack((array, extra)), [])
    chosen = parse_check_policy(policy)
    got = _combine(chosen, states, k_min)
    dicts = [{c: STATE_NAMES[v] for c, v in zip(cases, row, strict=True)} for row in array.tolist()]
    final, errors, reasons, attempt = combine_case_by_case(chosen, runs, dicts, cases, k_min)
    assert [STATE_NAMES[v] for v in got.final.tolist()] == [final[c] for c in cases]
    assert {c for c, e in zip(cases, got.errors.tolist(), strict=True) if e} == errors
    assert got.attempt == attempt and len(got.reasons) == len(reasons)
    for ours, theirs in zip(got.reasons, reasons, strict=True):
        assert theirs in ours
