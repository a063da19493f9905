"""Each run's per-case state, read from the verdicts, and two builds' runs paired.

A case's state in a run (passed, failed, error or missing, the codes of
:mod:`gatecal._model.evidence`) comes from the verdict columns; a case that did not fail
but lacks a check the baseline ran on it is missing: the evidence rule of
:mod:`gatecal._model.evidence`, here applied to runs read from files (``check`` and
``compare``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gatecal._model.evidence import (
    ERROR,
    FAIL,
    MISSING,
    PASS,
    PairedEvidence,
    paired_reasons,
)

if TYPE_CHECKING:
    from gatecal.readers._data import RunsData

__all__ = [
    "ExpectedChecks",
    "RunStates",
    "codes_in",
    "distinct_keys",
    "expected_checks",
    "paired_states",
    "run_states",
    "union_expected",
]


@dataclass(frozen=True, slots=True)
class RunStates:
    """The current runs (`runs`, in order) and each case's state in each: ``codes[t, j]``
    the code (:data:`gatecal._model.evidence.STATE_NAMES`) of ``cases[j]`` in run t, the
    first `n` of `cases` the baseline's, the rest other cases of the current runs; `gaps`
    says which checks the baseline ran were missing where."""

    runs: list[str]
    cases: Sequence[str]
    n: int
    codes: Any  # int8, runs x cases
    gaps: list[str]


def run_states(
    data: RunsData,
    cases: Sequence[str],
    expected: ExpectedChecks,
    extra: Sequence[str] = (),
    build: str = "healthy",
) -> RunStates:
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
    runs = data.runs(build)
    where = table.mask("build", build)
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
    to_case = codes_in(case_values, expected.cases)
    to_check = codes_in(check_values, expected.checks)
    want_case = to_case[expected.pair_case] if to_case.size else expected.pair_case
    want_check = to_check[expected.pair_check] if to_check.size else expected.pair_check
    ours = want_case >= 0
    wanted = np.bincount(want_case[ours], minlength=n_case)
    known = ours & (want_check >= 0)
    wanted_keys = want_case[known] * n_check + want_check[known]
    hit = np.isin(case_c * n_check + check_c, wanted_keys)
    shown = distinct_keys(pair[hit].astype(np.int64) * n_check + check_c[hit], n_pairs * n_check)
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
    at = codes_in(case_values, columns)  # each column's code in this table
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
    return RunStates(runs, columns, len(cases), out, gaps)


def codes_in(values: tuple[str, ...], wanted: Sequence[str]) -> Any:
    """The place in `values` of each of `wanted` (-1 where it is not there): 0, 1, ... at
    once where they are the same (a current run of the baseline's suite, in its order),
    else by a dict of `values`."""
    import numpy as np

    if len(wanted) == len(values) and tuple(wanted) == values:
        return np.arange(len(values), dtype=np.int64)
    place = {v: i for i, v in enumerate(values)}
    return np.asarray([place.get(w, -1) for w in wanted], dtype=np.int64)


def distinct_keys(keys: Any, size: int) -> Any:
    """``np.unique(keys)`` of keys in ``range(size)``: by counting where `size` is not much
    more than the keys (no sort), else by np.unique."""
    import numpy as np

    if size <= 4 * len(keys) + 1024:
        return np.flatnonzero(np.bincount(keys, minlength=size))
    return np.unique(keys)


@dataclass(frozen=True, slots=True)
class ExpectedChecks:
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


def expected_checks(baseline: RunsData, builds: Sequence[str] = ("healthy",)) -> ExpectedChecks:
    """The checks the baseline ran on each case (in any known-good run; with `builds`,
    in any run of those builds: compare expects of each build every check either ran)."""
    import numpy as np

    table = baseline.verdicts
    where = np.zeros(len(table), dtype=bool)
    for build in builds:
        where |= table.mask("build", build)
    n_check = max(len(table.values("check")), 1)
    n_case = max(len(table.values("case")), 1)
    pairs = distinct_keys(
        table.codes("case")[where].astype(np.int64) * n_check + table.codes("check")[where],
        n_case * n_check,
    )
    return ExpectedChecks(
        table.values("case"), table.values("check"), pairs // n_check, pairs % n_check
    )


def paired_states(
    sides: Sequence[tuple[RunsData, str]], *, max_errors: int = 0, partial: bool = False
) -> PairedEvidence:
    """The baseline's and the candidate's runs under the evidence rule: `sides` is
    ``[(data, build), (data, build)]``, the baseline first (one RunsData holding both
    builds, ``healthy`` and ``regressed``, or each build apart). Every run of each build
    must hold a verdict for each compared case and for every check either build ran on
    it; a skipped verdict is missing; errors and unscored verdicts count as failures up to
    `max_errors` (in both builds together), and beyond are incomplete evidence. With
    `partial`, the cases lacking a verdict somewhere (in one build only, or in some runs)
    are left out and named instead."""
    import numpy as np

    from gatecal.readers._data import short_names

    (first, _), (second, _) = sides
    same = first is second
    cases = first.cases() if same else list(dict.fromkeys([*first.cases(), *second.cases()]))
    names = first.short_names() if same else short_names(cases)
    if same:
        expected = expected_checks(first, [b for _, b in sides])
    else:
        expected = union_expected([expected_checks(d, (b,)) for d, b in sides])
    states = [run_states(d, cases, expected, build=b) for d, b in sides]
    skipped = {
        (i, s.run, s.case) for i, (d, b) in enumerate(sides) for s in d.skips if s.build == b
    }
    # a run of neither verdicts nor skips is no run; one of skips only stays: its skips count
    codes = []
    for i, st in enumerate(states):
        keep = [
            t
            for t, run in enumerate(st.runs)
            if (st.codes[t] != MISSING).any() or any(s[:2] == (i, run) for s in skipped)
        ]
        codes.append((st.codes[keep], [st.runs[t] for t in keep]))
    (base, base_runs), (cand, cand_runs) = codes
    # a case with any row in a build (a verdict of any status, or lacking a check) is seen
    # there; its missing cells are then holes, named with why
    seen_b, seen_c = (
        np.isin(
            codes_in(d.verdicts.values("case"), cases),
            d.verdicts.codes("case")[d.verdicts.mask("build", b)],
        )
        for d, b in sides
    )
    baseline_only = tuple(
        names[c] for c, b, k in zip(cases, seen_b, seen_c, strict=True) if b and not k
    )
    candidate_only = tuple(
        names[c] for c, b, k in zip(cases, seen_b, seen_c, strict=True) if k and not b
    )
    both = seen_b & seen_c
    gap_of = {g for st in states for g in st.gaps}
    holes: dict[int, list[str]] = {}
    for i, m, runs in ((0, base, base_runs), (1, cand, cand_runs)):
        side = ("baseline", "candidate")[i]
        for t, j in zip(*np.nonzero((m == MISSING) & both), strict=True):
            case, run = cases[int(j)], runs[int(t)]
            if (i, run, case) in skipped:
                why = "skipped"
            elif any(g.startswith(f"{case} lacks ") for g in gap_of):
                why = "lacks a check either build ran on it"
            else:
                why = "no verdict"
            holes.setdefault(int(j), []).append(f"{names[case]} in {side} run {run}: {why}")
    errors = [
        f"{names[cases[int(j)]]} in {side} run {runs[int(t)]}"
        for side, m, runs in (("baseline", base, base_runs), ("candidate", cand, cand_runs))
        for t, j in zip(*np.nonzero((m == ERROR) & both), strict=True)
    ]
    incomplete = [h for j in sorted(holes) for h in holes[j]]
    left_out = [names[cases[j]] for j in sorted(holes)] if partial else []
    if partial:
        both[sorted(holes)] = False
    reasons, notes = paired_reasons(
        baseline_only, candidate_only, incomplete, left_out, errors, max_errors, partial
    )

    def outcome(m: Any) -> Any:
        out = np.full(m.shape, -1, dtype=np.int8)
        out[(m == PASS)] = 1
        out[(m == FAIL) | (m == ERROR)] = 0  # an error counts as a failure
        return out[:, both]

    return PairedEvidence(
        baseline=outcome(base),
        candidate=outcome(cand),
        cases=tuple(names[c] for c, k in zip(cases, both, strict=True) if k),
        baseline_only=baseline_only,
        candidate_only=candidate_only,
        incomplete=tuple(incomplete),
        left_out=tuple(left_out),
        errors=tuple(errors),
        max_errors=max_errors,
        partial=partial,
        reasons=tuple(reasons),
        notes=tuple(notes),
    )


def union_expected(parts: Sequence[ExpectedChecks]) -> ExpectedChecks:
    """The (case, check) pairs of several builds read apart, by name."""
    import numpy as np

    pairs: dict[tuple[str, str], None] = {}
    for e in parts:
        for c, k in zip(e.pair_case.tolist(), e.pair_check.tolist(), strict=True):
            pairs[(e.cases[c], e.checks[k])] = None
    cases = list(dict.fromkeys(c for c, _ in pairs))
    checks = list(dict.fromkeys(k for _, k in pairs))
    at_case = {c: i for i, c in enumerate(cases)}
    at_check = {k: i for i, k in enumerate(checks)}
    return ExpectedChecks(
        cases,
        checks,
        np.asarray([at_case[c] for c, _ in pairs], dtype=np.int64),
        np.asarray([at_check[k] for _, k in pairs], dtype=np.int64),
    )
