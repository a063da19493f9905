"""The normalised long table every reader produces and every consumer reads."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gatecal._common.contracts import FieldsJSON
from gatecal.readers._columns import TEXT_COLUMNS, VerdictColumns
from gatecal.readers._verdict import BUILDS, LONG_COLUMNS, OPTIONAL_COLUMNS, Verdict

__all__ = ["FileRead", "RunsData", "Skip", "duplicate_runs", "short_names"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Skip:
    """A (run, case) the source reports as skipped: missing data, never a verdict."""

    build: str
    run: str
    case: str
    source: str = ""
    session: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileRead(FieldsJSON):
    """How one input file was read.

    Attributes
    ----------
    path : str
    format : str
        ``junit``, ``csv``, ``jsonl``, ``promptfoo``, ``inspect`` or ``deepeval``.
    detail : str
        What the reader recognised, e.g. ``pytest``, ``surefire``, ``results v3``.
    runs : tuple of str
        The runs this file contributed to.
    verdicts, skipped, errors : int
    notes : tuple of str
        How identity was decided (``one run per folder: 2 per-class files``, ...).
    """

    path: str
    format: str
    detail: str
    build: str
    runs: tuple[str, ...]
    verdicts: int
    skipped: int
    errors: int
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class RunsData:
    """Every verdict read, what was skipped, and how each file was read.

    A case *passes* a run when all its verdicts there are ``ok`` and pass; it *fails*
    when any ``ok`` verdict fails; otherwise (skipped, errored, unscored or absent) it
    is *missing* in that run and counts neither way. `components` are the checks
    underneath a case-level verdict (status ``component``): shown, never counted.

    `verdicts` is held as columns (:class:`~gatecal.readers._columns.VerdictColumns`, a
    sequence of :class:`Verdict` made on demand); any sequence of verdicts given is
    turned into columns. The counts below are taken from the columns, so they cost
    about a pass over a few arrays however many verdicts there are.
    """

    verdicts: VerdictColumns
    skips: tuple[Skip, ...] = ()
    components: tuple[Verdict, ...] = ()
    files: tuple[FileRead, ...] = ()
    reruns: int = 0
    attempts_policy: str = "first"
    warnings: tuple[str, ...] = ()
    #: (case id, the spelling read) of each case id read in another Unicode form than the
    #: NFC every id is compared and named in (macOS writes file names in NFD)
    spellings: tuple[tuple[str, str], ...] = ()
    _index: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def __repr__(self) -> str:
        """One line (the dataclass's own repr ran to thousands of characters)."""
        runs = ", ".join(f"{len(self.runs(b))} {b}" for b in self.builds())
        extra = f", {len(self.skips)} skipped" if self.skips else ""
        return (
            f"<gatecal.RunsData: {len(self.verdicts)} verdicts of {len(self.cases())} cases; "
            f"runs: {runs or 'none'}{extra}; {len(self.files)} file(s)>"
        )

    def __post_init__(self) -> None:
        object.__setattr__(self, "verdicts", VerdictColumns.of(self.verdicts))

    # -- counts -------------------------------------------------------------------------
    @property
    def skipped(self) -> int:
        """Skipped (run, case) pairs (or rows), excluded from everything."""
        return len(self.skips)

    @property
    def errors(self) -> int:
        """Verdicts with status ``error``."""
        return int(self.verdicts.mask("status", "error").sum())

    @property
    def unscored(self) -> int:
        """Verdicts with status ``unscored``."""
        return int(self.verdicts.mask("status", "unscored").sum())

    @property
    def cached(self) -> int:
        """Verdicts the source marks as replayed from a cache."""
        return int(self.verdicts.array("cached").sum())

    @property
    def cost(self) -> float | None:
        """The summed `cost` of the rows that carry one; None when none does."""
        total: float | None = self._summed("cost")
        return total

    @property
    def tokens(self) -> int | None:
        """The summed `tokens` of the rows that carry them; None when none does."""
        total: int | None = self._summed("tokens")
        return total

    def _summed(self, column: str) -> Any:
        """The sum of an optional column (OPTIONAL_COLUMNS) over the rows, components
        included, that carry it; None when none does."""
        table = self.verdicts
        values = table.array(column)[table.array(f"has_{column}") == 1].tolist()
        values += [x for v in self.components if (x := getattr(v, column)) is not None]
        return sum(values) if values else None

    def columns(self) -> tuple[str, ...]:
        """The long table's columns: LONG_COLUMNS, then each optional column some row has."""
        table = self.verdicts
        extra = [
            c
            for c in OPTIONAL_COLUMNS
            if table.array(f"has_{c}").any()
            or any(getattr(v, c) is not None for v in self.components)
        ]
        return (*LONG_COLUMNS, *extra)

    @property
    def sources(self) -> tuple[str, ...]:
        """The files read."""
        return tuple(f.path for f in self.files)

    def _build_mask(self, build: str) -> Any:
        return self.verdicts.mask("build", build)

    def sessions(self, build: str | None = None) -> list[str]:
        """Sessions (invocations) behind the runs, in order of first appearance."""
        where = None if build is None else self._build_mask(build)
        return self.verdicts.ordered("session", where)

    def builds(self) -> list[str]:
        """Builds present, healthy first."""
        present = set(self.verdicts.values("build")) | {s.build for s in self.skips}
        return [b for b in BUILDS if b in present]

    def runs(self, build: str) -> list[str]:
        """Run ids of `build`, in order of first appearance (skips included)."""
        seen = self.verdicts.ordered("run", self._build_mask(build))
        seen += [s.run for s in self.skips if s.build == build]
        return list(dict.fromkeys(seen))

    def cases(self) -> list[str]:
        """Case ids with at least one verdict, in order of first appearance."""
        return self.verdicts.ordered("case")

    def checks(self) -> list[str]:
        """Named checks, in order of first appearance ("" is not a check)."""
        return [c for c in self.verdicts.ordered("check") if c]

    def short_names(self) -> dict[str, str]:
        """Each case id shortened for display, the same way for every case, unambiguously."""
        cached = self._index.get("short")
        if cached is None:
            cached = short_names(self.cases())
            self._index["short"] = cached
        return dict(cached)

    def outcome_array(self, build: str) -> tuple[list[str], list[str], Any]:
        """(runs, cases, outcome): a numpy int8 array, outcome[run, case] 1 pass, 0 fail,
        -1 missing (as :meth:`case_outcomes`, without the lists)."""
        import numpy as np

        table = self.verdicts
        runs, cases = self.runs(build), self.cases()
        where = self._build_mask(build)
        run_values = table.values("run")
        row_of = np.full(len(run_values), -1, dtype=np.int64)
        position = {r: i for i, r in enumerate(runs)}
        for code, value in enumerate(run_values):
            row_of[code] = position.get(value, -1)
        rows = row_of[table.codes("run")[where]]
        cols = table.codes("case")[where].astype(np.int64)
        flat = rows * len(cases) + cols
        ok = table.mask("status", "ok")[where]
        passed = table.array("passed")[where]
        # a pass, unless the cell also holds an error; a failure, whatever else it holds
        outcome = np.full(len(runs) * len(cases), -1, dtype=np.int8)
        outcome[flat[ok & (passed == 1)]] = 1
        outcome[flat[~ok]] = -1
        outcome[flat[ok & (passed == 0)]] = 0
        return runs, cases, outcome.reshape(len(runs), len(cases))

    def case_outcomes(self, build: str) -> tuple[list[str], list[str], list[list[int]]]:
        """(runs, cases, ``outcome[run][case]``): 1 pass, 0 fail, -1 missing."""
        runs, cases, outcome = self.outcome_array(build)
        matrix: list[list[int]] = outcome.tolist()
        return runs, cases, matrix

    def judge_verdicts(self, build: str) -> tuple[int, int]:
        """(failed, total) ok judge verdicts of `build`, where checks and kinds are given."""
        table = self.verdicts
        judged = self._build_mask(build) & table.mask("kind", "judge") & table.mask("status", "ok")
        return int((table.array("passed")[judged] == 0).sum()), int(judged.sum())

    def to_rows(self) -> list[dict[str, Any]]:
        """The long table: one row per verdict, then per component, then per skip (status
        ``skipped``)."""
        rows = [v.to_row() for v in (*self.verdicts, *self.components)]
        rows += self.skip_rows()
        return rows

    def skip_rows(self) -> list[dict[str, Any]]:
        """The long table's rows of the skips (status ``skipped``)."""
        return [
            {
                **dict.fromkeys(LONG_COLUMNS, ""),
                "build": s.build,
                "run": s.run,
                "case": s.case,
                "status": "skipped",
                "session": s.session,
                "attempts": 1,
                "cached": "false",
                "source": s.source,
            }
            for s in self.skips
        ]

    def to_frame(self) -> Any:
        """The long table of verdicts, then components, as a pandas DataFrame (columns
        :meth:`columns`), built from the columns as they are held: each text column
        (build, run, case, check, kind, status, session, source) categorical, its
        categories in order of first appearance; ``passed`` a nullable boolean (NA where
        there is no verdict), ``score`` and ``cost`` floats (NaN where absent),
        ``tokens`` a nullable integer, ``attempts`` an integer, ``cached`` a boolean."""
        import pandas as pd  # deferred: `import gatecal` stays light

        names = list(self.columns())
        frame = _frame(self.verdicts, names)
        if not self.components:
            return frame
        extra = _frame(VerdictColumns.of(self.components), names)
        joined = {}
        for name in names:
            a, b = frame[name].array, extra[name].array
            if isinstance(a, pd.Categorical):
                joined[name] = pd.api.types.union_categoricals([a, b])
            else:
                joined[name] = pd.concat([frame[name], extra[name]], ignore_index=True).array
        return pd.DataFrame(joined, columns=names)


def _frame(table: VerdictColumns, names: list[str]) -> Any:
    """`table`'s columns `names` as a DataFrame (see RunsData.to_frame)."""
    import numpy as np
    import pandas as pd

    def present(name: str) -> Any:
        return table.array(f"has_{name}") == 1

    data: dict[str, Any] = {}
    for name in names:
        if name in TEXT_COLUMNS:
            categories = pd.Index(table.values(name), dtype=object)
            data[name] = pd.Categorical.from_codes(np.asarray(table.codes(name)), categories)
        elif name == "passed":
            passed = np.asarray(table.array("passed"))
            data[name] = pd.arrays.BooleanArray(passed == 1, passed < 0)
        elif name in ("score", "cost"):
            data[name] = np.where(present(name), table.array(name), np.nan)
        elif name == "tokens":
            values = np.asarray(table.array("tokens"), dtype=np.int64)
            data[name] = pd.arrays.IntegerArray(values, ~present(name))
        elif name == "cached":
            data[name] = np.asarray(table.array("cached")) == 1
        else:  # attempts
            data[name] = np.asarray(table.array(name), dtype=np.int64)
    return pd.DataFrame(data, columns=names)


_PARAM = re.compile(r"\[(.*)\]$")
_SPACE = re.compile(r"\s")
#: What ``\s`` matches of ASCII (str.isspace: the same characters).
_ASCII_SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
#: Each line's bracketed parameter, from its first "[" to a "]" ending it: what `param`
#: of :func:`short_names` takes from an id on one line, for all ids at once.
_LINE_PARAMS = re.compile(r"^[^\[\n]*\[([^\n]*)\]$", re.MULTILINE)


def short_names(cases: Sequence[str]) -> dict[str, str]:
    """Shorten full test ids for display: the first level that keeps every id distinct.

    Levels: the parameter in brackets (``refund-annual`` of ``m.test_x[refund-annual]``),
    the test name (``test_x[refund-annual]``), class and name, then the full id. Ids with
    spaces outside brackets are free text (a promptfoo description) and stay whole.
    """

    def name_of(case: str) -> str:
        head, bracket, tail = case.partition("[")
        return head.rsplit(".", 1)[-1].rsplit("::", 1)[-1] + bracket + tail

    def class_and_name(case: str) -> str:
        head, bracket, tail = case.partition("[")
        parts = re.split(r"\.|::", head)
        return ".".join(parts[-2:]) + bracket + tail

    def param(case: str) -> str:
        if case.endswith("]") and "\n" not in case and (at := case.find("[")) >= 0:
            inner = case[at + 1 : -1]  # what _PARAM finds on one line: from the first [
            return inner or name_of(case)
        match = _PARAM.search(case) if case.endswith(("]", "]\n")) else None
        return match.group(1) if match and match.group(1) else name_of(case)

    # free text (a description, spaces outside brackets) is kept whole, not a test id
    if _has_space("".join(cases)) and _has_space("".join(c.partition("[")[0] for c in cases)):
        return {c: c for c in cases}
    levels: list[Callable[[str], str]] = [param, name_of, class_and_name]
    joined = "\n".join(cases)
    if cases and joined.count("\n") == len(cases) - 1:  # every id on one line
        inner = _LINE_PARAMS.findall(joined)
        if len(inner) == len(cases) and all(inner):  # `param` of each, one pass of re
            if len(set(inner)) == len(inner):
                return dict(zip(cases, inner, strict=True))
            levels = levels[1:]
    for level in levels:
        names = [level(c) for c in cases]
        if len(set(names)) == len(names):
            return dict(zip(cases, names, strict=True))
    return {c: c for c in cases}


def _has_space(text: str) -> bool:
    """Whether `text` holds whitespace (what ``\\s`` matches): an ASCII text by a search
    for each of its ten characters, each a fast scan, not ``\\s`` tried at each place."""
    if text.isascii():
        return any(c in text for c in _ASCII_SPACE)
    return _SPACE.search(text) is not None


def duplicate_runs(
    verdicts: VerdictColumns | Sequence[Verdict],
) -> list[tuple[str, list[str], int, float]]:
    """Runs that repeat another run verdict for verdict, beyond what chance explains.

    Returns (first run, its copies, verdicts, chance) for each group of identical runs
    of one build whose coincidence chance is small: the expected number of identical
    pairs among the build's runs, were they independent, below 0.01. A pair's chance
    of coinciding is the product over (case, check) of the collision probability of
    that verdict's empirical distribution across runs (status, pass/fail and score).
    Identical all-pass runs of a quiet suite are likely and so never flagged; two runs
    alone cannot be told apart from chance this way (a cache flag still can).
    """
    from gatecal.readers._duplicates import duplicate_runs as of_columns

    return of_columns(VerdictColumns.of(verdicts))
