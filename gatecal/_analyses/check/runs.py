"""The current runs of a check, case by case, and how a policy combines them.

Each current run gives each baseline case a state: passed, failed, error or missing (a case
that lacks one of the checks the baseline ran on it is missing: missing evidence). A policy
(rerun-failing-R, rerun-R, repeat-K-of-N) combines several runs into one final state per case,
with the reasons the runs do not fit it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gatecal._analyses.policies.parse import CHECK_POLICIES

if TYPE_CHECKING:
    from gatecal._analyses.policies.rules import Policy
    from gatecal.readers._data import RunsData


_PASS, _FAIL, _ERROR, _MISSING = "passed", "failed", "error", "missing"
#: A state's code in :class:`_RunStates` ``codes`` is its place here.
_NAMES = (_FAIL, _ERROR, _PASS, _MISSING)
FAIL, ERROR, PASS, MISSING = range(4)


@dataclass(frozen=True, slots=True)
class _RunStates:
    """The current runs (`runs`, in order) and each case's state in each: ``codes[t, j]``
    the code (:data:`_NAMES`) of ``cases[j]`` in run t, the first `n` of `cases` the
    baseline's, the rest other cases of the current runs; `gaps` says which checks the
    baseline ran were missing where."""

    runs: list[str]
    cases: Sequence[str]
    n: int
    codes: Any  # int8, runs x cases
    gaps: list[str]


def _states(
    data: RunsData, cases: Sequence[str], expected: _Expected, extra: Sequence[str] = ()
) -> _RunStates:
    """The current runs, and per run each case's state (of `cases`, the baseline's, then
    of `extra`): passed, failed, error or missing.

    A case that did not fail but lacks a check the baseline ran on it is missing: a
    missing check is missing evidence, exactly like a missing case. Taken from the
    verdict columns: one pass over a few arrays, the states stored into an array of
    runs x cases (a dict per run of 10^5 cases was most of a check's own work).
    """
    import numpy as np

    from gatecal.readers._columns import first_codes

    table = data.verdicts
    runs = data.runs("healthy")
    where = table.mask("build", "healthy")
    case_values, check_values, run_values = (table.values(c) for c in ("case", "check", "run"))
    n_case, n_check = max(len(case_values), 1), max(len(check_values), 1)
    run_c = table.codes("run")[where].astype(np.int64)
    case_c = table.codes("case")[where].astype(np.int64)
    check_c = table.codes("check")[where].astype(np.int64)
    ok = table.mask("status", "ok")[where]
    pair, first = first_codes(run_c * n_case + case_c)  # pairs in order of first appearance
    n_pairs = len(first)
    failed = np.bincount(pair, weights=ok & (table.array("passed")[where] == 0), minlength=n_pairs)
    errored = np.bincount(pair, weights=~ok, minlength=n_pairs)
    pair_case = case_c[first]
    # the baseline's checks of each case, against those each pair shows: the baseline's
    # (case, check) pairs in this table's codes (-1: a case or check it does not have)
    to_case = _codes_in(case_values, expected.cases)
    to_check = _codes_in(check_values, expected.checks)
    want_case = to_case[expected.pair_case] if to_case.size else expected.pair_case
    want_check = to_check[expected.pair_check] if to_check.size else expected.pair_check
    ours = want_case >= 0
    wanted = np.bincount(want_case[ours], minlength=n_case)
    known = ours & (want_check >= 0)
    wanted_keys = want_case[known] * n_check + want_check[known]
    hit = np.isin(case_c * n_check + check_c, wanted_keys)
    shown = _distinct(pair[hit].astype(np.int64) * n_check + check_c[hit], n_pairs * n_check)
    shown //= n_check
    hits = np.bincount(shown, minlength=n_pairs)
    lacking = (failed == 0) & (errored == 0) & (hits < wanted[pair_case])
    state = np.where(lacking, MISSING, PASS)
    state[errored > 0] = ERROR
    state[failed > 0] = FAIL
    # each run's row and each case's column (-1: a run or case not asked about)
    row = {r: i for i, r in enumerate(runs)}
    row_of = np.asarray([row.get(r, -1) for r in run_values], dtype=np.int64)
    columns = (*cases, *extra)
    at = _codes_in(case_values, columns)  # each column's code in this table
    column_of = np.full(len(case_values), -1, dtype=np.int64)
    column_of[at[at >= 0]] = np.flatnonzero(at >= 0)
    pair_run = run_c[first]
    rows, cols = row_of[pair_run], column_of[pair_case]
    asked = (rows >= 0) & (cols >= 0)
    out = np.full((len(runs), len(columns)), MISSING, dtype=np.int8)
    out[rows[asked], cols[asked]] = state[asked]
    gaps = []
    if lacking.any():
        order = np.argsort(pair, kind="stable")
        bounds = np.searchsorted(pair[order], np.arange(n_pairs + 1))
        by_run: dict[str, list[str]] = {r: [] for r in runs}
        for p in np.flatnonzero(lacking).tolist():
            rows_p = order[bounds[p] : bounds[p + 1]]
            seen = {check_values[k] for k in check_c[rows_p].tolist()}
            case, run = case_values[pair_case[p]], run_values[pair_run[p]]
            missing = sorted(expected.of(case) - seen)
            by_run[run].append(
                f"{case} lacks {', '.join(missing)}" + (f" in {run}" if len(runs) > 1 else "")
            )
        gaps = [g for r in runs for g in by_run[r]]
    return _RunStates(runs, columns, len(cases), out, gaps)


def _codes_in(values: tuple[str, ...], wanted: Sequence[str]) -> Any:
    """The place in `values` of each of `wanted` (-1 where it is not there): 0, 1, ... at
    once where they are the same (a current run of the baseline's suite, in its order),
    else by a dict of `values`."""
    import numpy as np

    if len(wanted) == len(values) and tuple(wanted) == values:
        return np.arange(len(values), dtype=np.int64)
    place = {v: i for i, v in enumerate(values)}
    return np.asarray([place.get(w, -1) for w in wanted], dtype=np.int64)


def _distinct(keys: Any, size: int) -> Any:
    """``np.unique(keys)`` of keys in ``range(size)``: by counting where `size` is not much
    more than the keys (no sort), else by np.unique."""
    import numpy as np

    if size <= 4 * len(keys) + 1024:
        return np.flatnonzero(np.bincount(keys, minlength=size))
    return np.unique(keys)


@dataclass(frozen=True, slots=True)
class _Expected:
    """The checks the baseline ran on each case: its (case, check) pairs as codes into
    `cases` and `checks`."""

    cases: Sequence[str]
    checks: Sequence[str]
    pair_case: Any
    pair_check: Any
    _of: dict[str, set[str]] = field(default_factory=dict)

    def of(self, case: str) -> set[str]:
        """The checks the baseline ran on `case` (none if it never saw it)."""
        if not self._of:  # built the first time a case lacks one: then for every case
            for c, k in zip(self.pair_case.tolist(), self.pair_check.tolist(), strict=True):
                self._of.setdefault(self.cases[c], set()).add(self.checks[k])
        return self._of.get(case, set())


def _expected_checks(baseline: RunsData) -> _Expected:
    """The checks the baseline ran on each case (in any known-good run)."""
    import numpy as np

    table = baseline.verdicts
    where = table.mask("build", "healthy")
    n_check = max(len(table.values("check")), 1)
    n_case = max(len(table.values("case")), 1)
    pairs = _distinct(
        table.codes("case")[where].astype(np.int64) * n_check + table.codes("check")[where],
        n_case * n_check,
    )
    return _Expected(table.values("case"), table.values("check"), pairs // n_check, pairs % n_check)


@dataclass(frozen=True, slots=True)
class _Combined:
    final: Any  # int8 per baseline case: its final state's code (passed, failed, error, missing)
    errors: Any  # bool per baseline case: an error in an attempt that counted
    reasons: list[str]  # incomplete evidence
    attempt: int  # the attempt the decision rests on (rerun-R)


def _combine(policy: Policy, states: _RunStates, k_min: int) -> _Combined:
    """Apply the policy to the current runs, in order; see :func:`check_gate`."""
    import numpy as np

    runs, cases, codes = states.runs, states.cases, states.codes[:, : states.n]
    reasons: list[str] = []
    if policy.repeat > 1:
        if len(runs) != policy.repeat:
            reasons.append(
                f"repeat-{policy.need}-of-{policy.repeat} needs {policy.repeat} "
                f"current runs ({len(runs)} given)"
            )
        passes = (codes == PASS).sum(axis=0)
        final = np.where(
            (codes == MISSING).any(axis=0), MISSING, np.where(passes >= policy.need, PASS, FAIL)
        )
        return _Combined(final.astype(np.int8), (codes == ERROR).any(axis=0), reasons, 0)
    if policy.rerun_failing:
        limit = policy.rerun_failing + 1
        name = f"rerun-failing-{policy.rerun_failing}"
        if len(runs) > limit:
            reasons.append(f"{name} allows {limit} attempts ({len(runs)} current runs given)")
        # each case's attempts in turn, while it did not pass and the next attempt has it
        state, tries = codes[0].copy(), np.ones(codes.shape[1], dtype=np.int64)
        errors = state == ERROR
        going = np.ones(codes.shape[1], dtype=bool)
        for attempt in codes[1:]:
            going &= (state <= ERROR) & (attempt != MISSING)  # failed or error, and rerun
            state[going] = attempt[going]
            tries[going] += 1
            errors |= going & (state == ERROR)
        short = min(limit, len(codes))
        for j in np.flatnonzero((state <= ERROR) & (tries < limit)).tolist():
            t = int(tries[j])
            if t < short:
                reasons.append(
                    f"{cases[j]} did not pass attempt {t} and is missing from "
                    f"attempt {t + 1} ({name} reruns what did not pass)"
                )
            else:
                reasons.append(
                    f"{cases[j]} did not pass in {t} attempt(s) and {name} allows "
                    f"{limit}: the rerun is missing"
                )
        return _Combined(state, errors, reasons, 0)
    if policy.rerun:
        limit = policy.rerun + 1
        if len(runs) > limit:
            reasons.append(
                f"rerun-{policy.rerun} allows {limit} attempts ({len(runs)} current runs given)"
            )
        best, best_k = 0, -1
        for t, attempt in enumerate(codes):
            k = int((attempt == PASS).sum())
            if k > best_k:
                best, best_k = t, k
            if k >= k_min and not (attempt == MISSING).any():
                best = t
                break
        else:
            if len(codes) < limit:
                reasons.append(
                    f"every attempt given failed the gate, and rerun-{policy.rerun} "
                    f"allows {limit} attempts ({len(codes)} given)"
                )
        used = codes[: best + 1] if best_k < k_min else codes[best : best + 1]
        return _Combined(codes[best].copy(), (used == ERROR).any(axis=0), reasons, best)
    if len(runs) > 1:
        reasons.append(
            f"{len(runs)} current runs with no policy: name how they combine ({CHECK_POLICIES})"
        )
    return _Combined(codes[0].copy(), codes[0] == ERROR, reasons, 0)
