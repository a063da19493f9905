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

if TYPE_CHECKING:
    from gatecal._analyses.policies import Policy
    from gatecal.readers import RunsData

#: The policies whose attempts are runs gatecal check can read (majority votes happen
#: inside one verdict, so no run file shows them).
CHECK_POLICIES = "single, rerun-failing-R, rerun-R or repeat-K-of-N"

_PASS, _FAIL, _ERROR, _MISSING = "passed", "failed", "error", "missing"


def _states(
    data: RunsData, cases: Sequence[str], expected: _Expected
) -> tuple[list[str], list[dict[str, str]], list[str]]:
    """The current runs, and per run each case's state: passed, failed, error or missing.

    A case that did not fail but lacks a check the baseline ran on it is missing: a
    missing check is missing evidence, exactly like a missing case. The third list says
    which checks were missing where. Taken from the verdict columns: one pass over a few
    arrays, then a loop over (run, case) pairs.
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
    codes = {c: i for i, c in enumerate(case_values)}
    to_case = np.asarray([codes.get(c, -1) for c in expected.cases], dtype=np.int64)
    codes = {c: i for i, c in enumerate(check_values)}
    to_check = np.asarray([codes.get(c, -1) for c in expected.checks], dtype=np.int64)
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
    state = np.where(failed > 0, 0, np.where(errored > 0, 1, np.where(lacking, 3, 2)))
    names = (_FAIL, _ERROR, _PASS, _MISSING)
    table_of: dict[str, dict[str, str]] = {r: {} for r in runs}
    pair_run = run_c[first].tolist()
    for r, c, st in zip(pair_run, pair_case.tolist(), state.tolist(), strict=True):
        table_of[run_values[r]][case_values[c]] = names[st]
    gaps = []
    if lacking.any():
        order = np.argsort(pair, kind="stable")
        bounds = np.searchsorted(pair[order], np.arange(n_pairs + 1))
        by_run: dict[str, list[str]] = {r: [] for r in runs}
        for p in np.flatnonzero(lacking).tolist():
            rows = order[bounds[p] : bounds[p + 1]]
            seen = {check_values[k] for k in check_c[rows].tolist()}
            case, run = case_values[pair_case[p]], run_values[pair_run[p]]
            missing = sorted(expected.of(case) - seen)
            by_run[run].append(
                f"{case} lacks {', '.join(missing)}" + (f" in {run}" if len(runs) > 1 else "")
            )
        gaps = [g for r in runs for g in by_run[r]]
    # every case of `cases` (missing unless this run shows it), then this run's others
    states = [{**dict.fromkeys(cases, _MISSING), **table_of[r]} for r in runs]
    return runs, states, gaps


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
    final: dict[str, str]  # case -> passed / failed / error / missing
    errors: set[str]  # cases with an error in an attempt that counted
    reasons: list[str]  # incomplete evidence
    attempt: int  # the attempt the decision rests on (rerun-R)


def _combine(
    policy: Policy,
    runs: Sequence[str],
    states: Sequence[dict[str, str]],
    cases: Sequence[str],
    k_min: int,
) -> _Combined:
    """Apply the policy to the current runs, in order; see :func:`check_gate`."""
    reasons: list[str] = []
    if policy.repeat > 1:
        if len(runs) != policy.repeat:
            reasons.append(
                f"repeat-{policy.need}-of-{policy.repeat} needs {policy.repeat} "
                f"current runs ({len(runs)} given)"
            )
        final, errors = {}, set()
        for c in cases:
            seen = [s[c] for s in states]
            errors |= {c} if _ERROR in seen else set()
            if _MISSING in seen:
                final[c] = _MISSING
            else:
                final[c] = _PASS if seen.count(_PASS) >= policy.need else _FAIL
        return _Combined(final, errors, reasons, 0)
    if policy.rerun_failing:
        limit = policy.rerun_failing + 1
        name = f"rerun-failing-{policy.rerun_failing}"
        if len(runs) > limit:
            reasons.append(f"{name} allows {limit} attempts ({len(runs)} current runs given)")
        final, errors = {}, set()
        for c in cases:
            state, tries = states[0][c], 1
            errors |= {c} if state == _ERROR else set()
            for s in states[1:]:
                if state not in (_FAIL, _ERROR) or s[c] == _MISSING:
                    break
                state, tries = s[c], tries + 1
                errors |= {c} if state == _ERROR else set()
            if state in (_FAIL, _ERROR) and tries < min(limit, len(states)):
                reasons.append(
                    f"{c} did not pass attempt {tries} and is missing from "
                    f"attempt {tries + 1} ({name} reruns what did not pass)"
                )
            elif state in (_FAIL, _ERROR) and tries < limit:
                reasons.append(
                    f"{c} did not pass in {tries} attempt(s) and {name} allows "
                    f"{limit}: the rerun is missing"
                )
            final[c] = state
        return _Combined(final, errors, reasons, 0)
    if policy.rerun:
        limit = policy.rerun + 1
        if len(runs) > limit:
            reasons.append(
                f"rerun-{policy.rerun} allows {limit} attempts ({len(runs)} current runs given)"
            )
        best, best_k = 0, -1
        for t, s in enumerate(states):
            k = sum(s[c] == _PASS for c in cases)
            if k > best_k:
                best, best_k = t, k
            if k >= k_min and all(s[c] != _MISSING for c in cases):
                best = t
                break
        else:
            if len(states) < limit:
                reasons.append(
                    f"every attempt given failed the gate, and rerun-{policy.rerun} "
                    f"allows {limit} attempts ({len(states)} given)"
                )
        s = states[best]
        used = states[: best + 1] if best_k < k_min else [s]
        errors = {c for st in used for c in cases if st[c] == _ERROR}
        return _Combined({c: s[c] for c in cases}, errors, reasons, best)
    if len(runs) > 1:
        reasons.append(
            f"{len(runs)} current runs with no policy: name how they combine ({CHECK_POLICIES})"
        )
    s = states[0]
    return _Combined({c: s[c] for c in cases}, {c for c in cases if s[c] == _ERROR}, reasons, 0)
