"""One evidence rule for every decision: check, the sequential checks, compare and the plugin.

A decision rests only on complete evidence. Whatever the command, these are incomplete
evidence (exit 1), or counted where a count is defined, and never a pass:

- a baseline case, or a check the baseline ran on it, with no verdict in a run of a build
  (a dropped row is missing evidence, exactly like a missing case);
- an error or unscored verdict beyond ``max_errors`` (within it, each counts as a
  failure: an error is never a pass);
- a skipped verdict where the other build (or the baseline) has one: a skip is missing
  evidence, never a neutral row;
- a later run that would change the decision: a sequential gate stops at its first
  boundary, so a pass stands only if the runs given decide it in every order (the
  worst order is the runs sorted by passing cases, fewest first: its running sums are
  the smallest at every look, so if it passes every order passes).

Each run's per-case states come from :func:`_states` (passed, failed, error, missing);
:func:`evidence_reasons` turns what is lacking into the reasons every command prints;
:func:`paired_states` applies the rule to two builds (``compare``);
:func:`order_reason` is the later-run rule of the sequential gates (check and plugin).
This module imports only the standard library at import time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gatecal._common.tables import few

if TYPE_CHECKING:
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
    data: RunsData,
    cases: Sequence[str],
    expected: _Expected,
    extra: Sequence[str] = (),
    build: str = "healthy",
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


def _expected_checks(baseline: RunsData, builds: Sequence[str] = ("healthy",)) -> _Expected:
    """The checks the baseline ran on each case (in any known-good run; with `builds`,
    in any run of those builds: compare expects of each build every check either ran)."""
    import numpy as np

    table = baseline.verdicts
    where = np.zeros(len(table), dtype=bool)
    for build in builds:
        where |= table.mask("build", build)
    n_check = max(len(table.values("check")), 1)
    n_case = max(len(table.values("case")), 1)
    pairs = _distinct(
        table.codes("case")[where].astype(np.int64) * n_check + table.codes("check")[where],
        n_case * n_check,
    )
    return _Expected(table.values("case"), table.values("check"), pairs // n_check, pairs % n_check)


# -- the rule's reasons ----------------------------------------------------------------------


def evidence_reasons(
    *,
    missing: Sequence[str],
    cases: int,
    gaps: Sequence[str],
    errors: Sequence[str],
    max_errors: int,
    skipped: Sequence[str] = (),
    where: str = "",
) -> list[str]:
    """Why the evidence is incomplete (empty: it is complete): baseline cases without a
    complete verdict (when some have one: a run with none is reported by the caller as
    empty), checks missing inside cases, skipped verdicts where the other side has one,
    more error or unscored verdicts than `max_errors`. `where` prefixes each reason
    (``"candidate: "``)."""
    reasons = []
    if missing and len(missing) < cases:
        reasons.append(
            f"{where}{len(missing)} of {cases} baseline cases have no complete verdict: "
            f"{few(list(missing))}"
        )
    if gaps:
        reasons.append(
            f"{where}{len(gaps)} case run(s) lack a check the baseline ran (a missing check "
            f"is missing evidence): {few(list(gaps))}"
        )
    if skipped:
        reasons.append(
            f"{where}{len(skipped)} case run(s) skipped where the other build has a "
            f"verdict (a skip is missing evidence): {few(list(skipped))}"
        )
    if len(errors) > max_errors:
        reasons.append(
            f"{where}{len(errors)} error or unscored verdicts (at most {max_errors} "
            f"allowed; an error is never a pass): {few(list(errors))}"
        )
    return reasons


# -- a later run that would change a sequential decision ---------------------------------------


Decide = Callable[[Sequence[int]], tuple[str, int]]


def order_reason(decide: Decide, passing: Sequence[int], runs: Sequence[str] = ()) -> str | None:
    """None when the runs given decide the same in every order; else why a later run would
    change the decision (a reason of incomplete evidence).

    `decide` is a sequential design's decision on passing cases per run, in order:
    ``(decision, look)``. Only a pass can be undone by order: the runs sorted fewest
    passing first have the smallest running sum at every look (the sum of the j smallest
    is the smallest of any j), so they never pass later nor fail earlier than another
    order; if they pass, every order passes. A fail or a continue is never turned into a
    pass by this rule.
    """
    decision, look = decide(list(passing))
    if decision != "pass" or len(passing) < 2:
        return None
    worst = sorted(range(len(passing)), key=lambda t: (passing[t], t))
    other, at = decide([passing[t] for t in worst])
    if other == "pass":
        return None
    name = (lambda t: runs[t]) if len(runs) == len(passing) else (lambda t: f"run {t + 1}")
    later = [name(t) for t in range(look, len(passing)) if passing[t] < max(passing[:look])]
    which = few(later) if later else few([name(t) for t in worst[:at]])
    return (
        f"the gate passed at run {look}, but the {len(passing)} runs given decide "
        f"'{other}' in another order (the run(s) that would change the decision: {which}); "
        "a later run that would change the decision is evidence, never ignored"
    )


# -- two builds (compare) ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedEvidence:
    """Two builds' runs on the cases either reports, under the evidence rule.

    ``baseline``, ``candidate``: outcome matrices (runs x `cases`; 1 pass, 0 fail or
    counted error, -1 missing). ``baseline_only``/``candidate_only``: cases with a verdict
    in one build only; ``incomplete``: compared cases lacking a verdict in some run of a
    build (``case in run: why``), ``left_out`` those of them left out under `partial`
    (``notes`` says so); ``errors``: error or unscored verdicts on the cases
    (``case in run``); ``reasons``: the rule's reasons, with `partial` and `max_errors`
    applied.
    """

    baseline: Any
    candidate: Any
    cases: tuple[str, ...]
    baseline_only: tuple[str, ...]
    candidate_only: tuple[str, ...]
    incomplete: tuple[str, ...]
    left_out: tuple[str, ...]
    errors: tuple[str, ...]
    max_errors: int
    partial: bool
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return not self.reasons


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
        expected = _expected_checks(first, [b for _, b in sides])
    else:
        expected = _union_expected([_expected_checks(d, (b,)) for d, b in sides])
    states = [_states(d, cases, expected, build=b) for d, b in sides]
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
            _codes_in(d.verdicts.values("case"), cases),
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
    reasons, notes = _paired_reasons(
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


def _union_expected(parts: Sequence[_Expected]) -> _Expected:
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
    return _Expected(
        cases,
        checks,
        np.asarray([at_case[c] for c, _ in pairs], dtype=np.int64),
        np.asarray([at_check[k] for _, k in pairs], dtype=np.int64),
    )


def _paired_reasons(
    baseline_only: Sequence[str],
    candidate_only: Sequence[str],
    incomplete: Sequence[str],
    left_out: Sequence[str],
    errors: Sequence[str],
    max_errors: int,
    partial: bool,
) -> tuple[list[str], list[str]]:
    """(reasons the evidence is incomplete, notes of what `partial` left out)."""
    reasons: list[str] = []
    notes: list[str] = []
    one_build = [*baseline_only, *candidate_only]
    what = "1 case" if len(one_build) == 1 else f"{len(one_build)} cases"
    if partial:
        if one_build:
            notes.append(
                f"{what} seen in one build only left out (--allow-missing): {few(one_build)}"
            )
        if left_out:
            notes.append(
                f"{len(left_out)} case(s) lacking a verdict in some run left out "
                "(--allow-missing): "
                f"{few(list(incomplete))}"
            )
    else:
        if one_build:
            reasons.append(
                f"{what} seen in one build only: incomplete evidence (--allow-missing "
                "compares the rest): "
                f"{few(one_build)}"
            )
        if incomplete:
            reasons.append(
                f"{len(incomplete)} case run(s) of compared cases lack a verdict (a dropped "
                f"row, a missing check or a skip is missing evidence; --allow-missing leaves "
                "those cases out): "
                f"{few(list(incomplete))}"
            )
    if len(errors) > max_errors:
        reasons.append(
            f"{len(errors)} error or unscored verdicts (at most {max_errors} allowed; an "
            f"error is never a pass): {few(list(errors))}"
        )
    return reasons, notes


def matrix_evidence(
    baseline: Any, candidate: Any, names: Sequence[str], *, partial: bool = False
) -> PairedEvidence:
    """The evidence rule on two outcome matrices (runs x cases; 1 pass, 0 fail, -1
    missing), the same columns in both: a run with no verdict is no run; a case with a
    verdict in one build only, or missing in some run of a build, is incomplete evidence
    (with `partial`: left out and named)."""
    import numpy as np

    base = baseline[(baseline >= 0).any(axis=1)]
    cand = candidate[(candidate >= 0).any(axis=1)]
    seen_b = (base >= 0).any(axis=0) if len(base) else np.zeros(len(names), bool)
    seen_c = (cand >= 0).any(axis=0) if len(cand) else np.zeros(len(names), bool)
    pairs = list(zip(names, seen_b.tolist(), seen_c.tolist(), strict=True))
    baseline_only = tuple(n for n, b, c in pairs if b and not c)
    candidate_only = tuple(n for n, b, c in pairs if c and not b)
    both = seen_b & seen_c
    holes: dict[int, list[str]] = {}
    for side, m in (("baseline", base), ("candidate", cand)):
        for t, j in zip(*np.nonzero((m < 0) & both), strict=True):
            holes.setdefault(int(j), []).append(f"{names[int(j)]} in {side} run {int(t) + 1}")
    incomplete = [h for j in sorted(holes) for h in holes[j]]
    left_out = [names[j] for j in sorted(holes)] if partial else []
    if partial:
        both[sorted(holes)] = False
    reasons, notes = _paired_reasons(
        baseline_only, candidate_only, incomplete, left_out, (), 0, partial
    )
    return PairedEvidence(
        baseline=base[:, both],
        candidate=cand[:, both],
        cases=tuple(n for n, k in zip(names, both.tolist(), strict=True) if k),
        baseline_only=baseline_only,
        candidate_only=candidate_only,
        incomplete=tuple(incomplete),
        left_out=tuple(left_out),
        errors=(),
        max_errors=0,
        partial=partial,
        reasons=tuple(reasons),
        notes=tuple(notes),
    )
