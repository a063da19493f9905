"""Gate files: the gate a ``gatecal recommend --format json`` output recommends, verified.

A gate file decides CI builds, so only what gatecal wrote, and what checks out against
itself, is accepted: the format and version it declares, an operating table that is a
false-alarm table (from 0, never decreasing, probabilities), and a recommended gate that
is the table's own answer to its own targets. Anything else is refused in one line that
says what does not match. Standard library only: the pytest plugin reads gate files
before it has decided anything.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from gatecal._common.contracts import CONTRACTS
from gatecal._common.validate import ParameterError, check_count, check_probability
from gatecal._model.gates import strictest_within

__all__ = [
    "RECOMMEND_FORMAT",
    "RECOMMEND_VERSION",
    "RecommendedGate",
    "load_recommended_gate",
    "recommended_gate_from",
]

#: What ``recommend --format json`` writes first, so that a gate file can be told apart.
RECOMMEND_FORMAT = "gatecal.recommend"
RECOMMEND_VERSION = CONTRACTS["recommend"]
#: What recommend wrote before its header took the common form (same fields).
_EARLIER = {("gatecal recommend", 1), (RECOMMEND_FORMAT, 2)}


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RecommendedGate:
    """The gate a ``gatecal recommend --format json`` output recommends.

    Attributes
    ----------
    k_min, cases : int
        At least `k_min` of `cases` cases must pass.
    false_alarm : float
        The false alarm ``recommend`` computed for it (at the upper noise bound).
    false_alarms : tuple of float
        ``false_alarms[k]``: the false alarm of "at least k pass", for k in 0..cases,
        so a p-value can be read without recomputing anything.
    case_names : tuple of str
        The baseline's cases the gate was computed for (as recommend names them).
    failures_per_run : tuple of int
        Failing cases in each known-good run it was computed from.
    source : str
        Where it was read from.
    policy : str
        The per-case rule the gate is for: ``single`` (one run), or the rule
        ``recommend --policies`` chose (``rerun-failing-1``...), which ``check`` then applies;
        `k_min` and `false_alarms` are then that rule's.
    """

    k_min: int
    cases: int
    false_alarm: float
    false_alarms: tuple[float, ...]
    case_names: tuple[str, ...] = ()
    failures_per_run: tuple[int, ...] = ()
    source: str
    policy: str = "single"
    kind: str = "count"
    shortfall: str | None = None
    failing: tuple[tuple[int, ...], ...] = ()
    missing: tuple[tuple[int, ...], ...] = ()
    false_alarm_target: float = 0.0
    allowed: int = 0
    rates: tuple[float, ...] = ()
    kinds: tuple[str, ...] = ()
    records: tuple[tuple[int, int], ...] = ()

    def __repr__(self) -> str:
        """One line, whatever the number of cases."""
        short = "" if self.shortfall is None else "; falls short of its targets"
        return (
            f"<gatecal.RecommendedGate: {self.text} for {self.cases} cases, false alarm "
            f"{self.false_alarm:.4g}, policy {self.policy}, from {self.source}{short}>"
        )

    @property
    def text(self) -> str:
        """The gate as a rule the gate vocabulary reads: ``fails<=F``, or ``cases`` for the
        case-aware gate."""
        if self.kind == "cases":
            return "cases"
        return f"fails<={self.cases - self.k_min}"

    @property
    def meets_targets(self) -> bool:
        return self.shortfall is None

    def p_value(self, passed: int) -> float:
        """P(a healthy build passes `passed` cases or fewer), as ``recommend`` modelled it."""
        return 1.0 if passed >= self.cases else self.false_alarms[passed + 1]

    def mismatch(self, case_names: Sequence[str], failures_per_run: Sequence[int]) -> str | None:
        """What differs between the baseline this gate was computed from and the one given
        (None if nothing): its cases, or its runs."""
        if sorted(self.case_names) != sorted(case_names):
            ours, theirs = set(self.case_names), set(case_names)
            only = sorted(ours - theirs)[:3] or sorted(theirs - ours)[:3]
            return (
                f"was computed for {self.cases} other cases than the baseline's "
                f"{len(case_names)} (e.g. {', '.join(only)}): rerun recommend on this baseline"
            )
        if sorted(self.failures_per_run) != sorted(failures_per_run):
            return (
                f"was computed from {len(self.failures_per_run)} known-good runs with "
                f"{sum(self.failures_per_run)} failing cases; the baseline given has "
                f"{len(failures_per_run)} runs with {sum(failures_per_run)}: rerun recommend "
                "on this baseline"
            )
        return None


_WHAT = "must be a 'gatecal recommend --format json' output"


def recommended_gate_from(document: object, source: str = "recommendation") -> RecommendedGate:
    """Read the recommended gate out of a parsed ``gatecal recommend --format json`` output,
    verified against itself (see the module docstring).

    Parameters
    ----------
    document : object
        The parsed JSON of a ``gatecal recommend --format json`` output.
    source : str, default "recommendation"
        The name that error messages give the document (e.g. its file).

    Returns
    -------
    RecommendedGate
        The gate, its suite's cases and the figures it was chosen by.

    Raises
    ------
    ParameterError
        Named ``gate_from``: not a recommend output (or another version of one), one that
        does not check out, or one that recommends no gate.
    """

    def bad(rule: str) -> ParameterError:
        return ParameterError("gate_from", rule, source)

    found = document.get("format") if isinstance(document, Mapping) else None
    if not isinstance(document, Mapping) or found not in (RECOMMEND_FORMAT, "gatecal recommend"):
        raise bad(f'{_WHAT} (its first key is "format": "{RECOMMEND_FORMAT}")')
    version = document.get("version")
    if (found, version) not in {(RECOMMEND_FORMAT, RECOMMEND_VERSION), *_EARLIER}:
        raise bad(
            f"is a recommend output of version {version!r}; this gatecal reads version "
            f"{RECOMMEND_VERSION} (and versions 2 and the earlier 'gatecal recommend' 1 for "
            "count gates): rerun recommend"
        )
    rec = document.get("recommended")
    rules = document.get("policies")
    if rules is not None:  # recommend --policies: the chosen rule's gate
        return _rule_gate(document, rules, source)
    chosen = document.get("gate")
    if isinstance(chosen, Mapping) and chosen.get("kind") in ("cases", "count"):
        if rec is not None:  # the count gate it recommends checks out too
            _recommended(document, rec, source)
        return _chosen_gate(document, chosen, source)
    if rec is None:
        within = document.get("within_budget")
        hint = ""
        if isinstance(within, Mapping) and isinstance(within.get("max_failures"), int):
            hint = (
                f"; its strictest gate within the false-alarm budget is the rule "
                f"'fails<={within['max_failures']}'"
            )
        raise bad(
            "recommends no gate (none met both targets there): pass a gate rule instead, "
            f"or rerun recommend with other targets{hint}"
        )
    return _recommended(document, rec, source)


def _recommended(document: Mapping[str, object], rec: object, source: str) -> RecommendedGate:
    """The count gate `rec` (``recommended``), verified against the file."""
    fields = (
        "recommended.k_min, cases, case_order, failures_per_run, targets and the operating table"
    )
    return _count_gate(document, rec, source, fields)


def _count_gate(
    document: Mapping[str, object],
    rec: object,
    source: str,
    fields: str,
    unmet: str | None = None,
) -> RecommendedGate:
    """The count gate whose ``k_min`` `rec` holds, read from the file and verified against
    it; `fields` names what a file that cannot be read lacks, `unmet` (when not None) why
    the gate does not check out even where the file agrees with itself."""
    try:
        gate = _read(document, rec, source)
    except (TypeError, KeyError, ValueError, ParameterError):
        raise ParameterError("gate_from", f"{_WHAT} ({fields})", source) from None
    problem = _inconsistency(document, gate) or unmet
    if problem:
        raise ParameterError(
            "gate_from", f"does not check out: {problem} (edited by hand?): rerun recommend", source
        )
    return gate


def _chosen_gate(
    document: Mapping[str, object], chosen: Mapping[str, object], source: str
) -> RecommendedGate:
    """The gate recommend wrote (``gate``): the case-aware gate or the count gate, whether
    or not it meets the detection target (its `shortfall` says so), verified."""

    def bad(rule: str) -> ParameterError:
        return ParameterError("gate_from", rule, source)

    shortfall = chosen.get("shortfall")
    if chosen.get("meets_targets") is not True and not isinstance(shortfall, str):
        raise bad(f"{_WHAT} (gate.meets_targets or gate.shortfall)")
    gap = None if chosen.get("meets_targets") is True else str(shortfall)
    if chosen["kind"] == "count":
        fields = "gate.k_min, cases, case_order, failures_per_run, table"
        gate = _count_gate(document, {"k_min": chosen.get("k_min")}, source, fields)
        return replace(gate, shortfall=gap)
    body = document.get("case_gate")
    if isinstance(body, Mapping) and "tail" in body and "known_good_runs" not in body:
        raise bad(
            "holds the case-aware gate of an earlier gatecal (weights and a tail, before the "
            "gate ranked the CI run among the known-good runs): rerun gatecal recommend"
        )
    try:
        gate = _read_case_gate(document, source, gap)
    except (TypeError, KeyError, ValueError, ParameterError):
        raise bad(
            f"{_WHAT} (case_gate: cases, known_good_runs, allowed and false_alarm_target; "
            "case_order, "
            "failures_per_run, targets)"
        ) from None
    problem = _case_inconsistency(document, gate)
    if problem:
        raise bad(f"does not check out: {problem} (edited by hand?): rerun recommend")
    return gate


def _read_case_gate(
    document: Mapping[str, object], source: str, shortfall: str | None
) -> RecommendedGate:
    body = document["case_gate"]
    names, fails = document["case_order"], document["failures_per_run"]
    if not isinstance(body, Mapping) or not isinstance(names, list):
        raise TypeError
    if not isinstance(fails, list):
        raise TypeError
    rows, known = body["cases"], body["known_good_runs"]
    if not isinstance(rows, list) or not isinstance(known, list) or body.get("method") != "rank":
        raise TypeError
    n = len(rows)
    if n < 1 or len(names) != n:
        raise TypeError
    by_name = {}
    for row in rows:
        if not isinstance(row, Mapping) or not isinstance(row["case"], str):
            raise TypeError
        by_name[row["case"]] = row
    if sorted(by_name) != sorted(names):
        raise ValueError
    position = {str(r["case"]): i for i, r in enumerate(rows)}
    ordered = [by_name[c] for c in names]
    rates = tuple(check_probability("rate", r["rate"]) for r in ordered)
    kinds = tuple(str(r["kind"]) for r in ordered)
    records = tuple(
        (check_count("failures", r["failures"], low=0), check_count("runs", r["runs"], low=1))
        for r in ordered
    )
    # the known-good runs' cases are indices into case_gate.cases: renumber to case_order
    to_order = {position[c]: i for i, c in enumerate(names)}

    def cases_of(value: object) -> tuple[int, ...]:
        if not isinstance(value, list):
            raise TypeError
        got = [to_order[check_count("known_good_runs", i, low=0, high=n - 1)] for i in value]
        if len(set(got)) != len(got):
            raise ValueError
        return tuple(sorted(got))

    failing, missing = [], []
    for run in known:
        if not isinstance(run, Mapping):
            raise TypeError
        failing.append(cases_of(run["failing"]))
        missing.append(cases_of(run["missing"]))
    target = check_probability("false_alarm_target", body["false_alarm_target"])
    allowed = check_count("allowed", body["allowed"], low=0)
    per_run = tuple(check_count("failures_per_run", f, low=0, high=n) for f in fails)
    return RecommendedGate(
        k_min=0,
        cases=n,
        false_alarm=check_probability("false_alarm", body["false_alarm"]),
        false_alarms=(),
        case_names=tuple(str(c) for c in names),
        failures_per_run=per_run,
        source=source,
        kind="cases",
        shortfall=shortfall,
        failing=tuple(failing),
        missing=tuple(missing),
        false_alarm_target=target,
        allowed=allowed,
        rates=rates,
        kinds=kinds,
        records=records,
    )


def _case_inconsistency(document: Mapping[str, object], gate: RecommendedGate) -> str | None:
    """Why the case-aware gate disagrees with itself, or None: its cases' records must be
    its known-good runs' counts, its runs the failures per run, its rank rule its budget's."""
    from gatecal._model.rankgate import allowed_rank

    r = len(gate.failing)
    fails = [0] * gate.cases
    seen = [r] * gate.cases
    for run in gate.failing:
        for c in run:
            fails[c] += 1
    for run in gate.missing:
        for c in run:
            seen[c] -= 1
    for i, (f, m) in enumerate(gate.records):
        if (f, m) != (fails[i], seen[i]):
            return (
                f"case {gate.case_names[i]!r} records {f} failures in {m} runs, but its "
                f"known-good runs hold {fails[i]} in {seen[i]}"
            )
    if sorted(len(run) for run in gate.failing) != sorted(gate.failures_per_run):
        return "its failures per run are not its known-good runs'"
    targets = document.get("targets")
    budget = targets.get("false_alarm") if isinstance(targets, Mapping) else None
    if budget != gate.false_alarm_target:
        return "its false-alarm target is not the recommendation's"
    allowed = allowed_rank(gate.false_alarm_target, r)
    if gate.allowed != allowed or abs(gate.false_alarm - allowed / (r + 1)) > 1e-12:
        return (
            f"it allows rank {gate.allowed} (false alarm {gate.false_alarm:g}), but "
            f"{r} known-good runs at the budget {gate.false_alarm_target:g} allow {allowed}"
        )
    return None


def _rule_gate(document: Mapping[str, object], rules: object, source: str) -> RecommendedGate:
    """The gate of the per-case rule ``recommend --policies`` chose, verified the same way."""

    def bad(rule: str) -> ParameterError:
        return ParameterError("gate_from", rule, source)

    if not isinstance(rules, Mapping) or not isinstance(rules.get("candidates"), list):
        raise bad(f"{_WHAT} (policies.chosen and policies.candidates)")
    chosen = rules.get("chosen")
    if chosen is None:
        raise bad(
            "chose no per-case rule (none met both targets there): pass a gate rule "
            "instead, or rerun recommend with other targets or rules"
        )
    found = [c for c in rules["candidates"] if isinstance(c, Mapping) and c.get("rule") == chosen]
    if len(found) != 1 or not isinstance(chosen, str):
        raise bad(f"{_WHAT} (policies.chosen names one of policies.candidates)")
    row = found[0]
    if row.get("checkable") is not True:
        raise bad(
            f"chose the rule {chosen!r}, which check cannot apply (it re-asks the judge "
            "inside one verdict): rerun recommend without it in --policies"
        )
    fields = "policies.candidates' k_min and table, cases, case_order, failures_per_run and targets"
    unmet = None if row.get("meets") is True else "its chosen rule does not meet its targets"
    gate = _count_gate({**document, "table": row.get("table")}, row, source, fields, unmet)
    return replace(gate, policy=chosen)


def _read(document: Mapping[str, object], rec: object, source: str) -> RecommendedGate:
    cases, table = document["cases"], document["table"]
    if not isinstance(rec, Mapping) or not isinstance(table, list):
        raise TypeError
    k, names, fails = rec["k_min"], document["case_order"], document["failures_per_run"]
    if isinstance(k, bool) or isinstance(cases, bool):
        raise TypeError
    if not isinstance(names, list) or not isinstance(fails, list):
        raise TypeError
    n = check_count("cases", cases, low=1)
    k = check_count("k_min", k, low=0, high=n)
    rates = [check_probability("false_alarm", row["false_alarm"]) for row in table]
    if len(rates) != n + 1 or [row["k_min"] for row in table] != list(range(n + 1)):
        raise TypeError
    if len(names) != n or not all(isinstance(c, str) for c in names):
        raise TypeError
    per_run = tuple(check_count("failures_per_run", f, low=0, high=n) for f in fails)
    return RecommendedGate(
        k_min=k,
        cases=n,
        false_alarm=rates[k],
        false_alarms=tuple(rates),
        case_names=tuple(names),
        failures_per_run=per_run,
        source=source,
    )


def _inconsistency(document: Mapping[str, object], gate: RecommendedGate) -> str | None:
    """Why the file disagrees with itself, or None."""
    fas = gate.false_alarms
    if fas[0] != 0.0 or any(b < a for a, b in itertools.pairwise(fas)):
        return "its false alarms do not start at 0 and grow with k_min"
    targets = document.get("targets")
    budget = targets.get("false_alarm") if isinstance(targets, Mapping) else None
    if isinstance(budget, bool) or not isinstance(budget, int | float) or not 0 <= budget <= 1:
        return "it has no false-alarm target"
    if gate.k_min != strictest_within(fas, budget):
        return (
            f"it recommends at least {gate.k_min} of {gate.cases}, but the strictest gate "
            f"within its own budget {budget:g} is at least {strictest_within(fas, budget)}"
        )
    return None


def load_recommended_gate(path: str | Path) -> RecommendedGate:
    """:func:`recommended_gate_from` on a file; unreadable or non-JSON files are refused.

    Parameters
    ----------
    path : str or Path
        A file holding a ``gatecal recommend --format json`` output.

    Returns
    -------
    RecommendedGate
        The gate, its suite's cases and the figures it was chosen by.

    Raises
    ------
    ParameterError
        Named ``gate_from``: the file cannot be read, is not JSON, or is refused by
        :func:`recommended_gate_from`.
    """
    from gatecal._common.files import GATE_FILE_MAX_BYTES, InputFileError, read_limited

    try:
        document = json.loads(read_limited(path, GATE_FILE_MAX_BYTES).decode("utf-8-sig"))
    except InputFileError as exc:
        raise ParameterError("gate_from", exc.rule, str(path)) from None
    except OSError as exc:
        raise ParameterError(
            "gate_from", f"could not be read ({exc.strerror})", str(path)
        ) from None
    except (UnicodeDecodeError, ValueError, RecursionError):  # JSONDecodeError, deep nesting
        raise ParameterError("gate_from", _WHAT, str(path)) from None
    return recommended_gate_from(document, str(path))
