"""What ``gatecal compare`` found: :class:`Comparison`, and the small results it nests, each
a group of its JSON (spread flat there, in this order): the :class:`PairedTest`, what was
compared (:class:`ComparedRuns`), the :class:`CaseChanges` (with each :class:`CaseChange`)
and the comparison's own error rates (:class:`ComparisonRates`).
:func:`~gatecal._analyses.compare.builds.compare_builds` decides it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from gatecal._analyses.compare.oc import CompareOC
from gatecal._common.contracts import FieldsJSON, json_header
from gatecal._common.display import Displayed

__all__ = [
    "CaseChange",
    "CaseChanges",
    "ComparedRuns",
    "Comparison",
    "ComparisonRates",
    "Discordant",
    "PairedTest",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseChange(FieldsJSON):
    """One compared case: its passes in each build, its exact p-value, adjusted."""

    case: str
    baseline_passes: int
    baseline_runs: int
    candidate_passes: int
    candidate_runs: int
    p_value: float
    adjusted: float
    direction: str  # "worse", "better" or "same" (by the pass shares)
    flagged: bool

    @property
    def baseline_share(self) -> float:
        return self.baseline_passes / self.baseline_runs

    @property
    def candidate_share(self) -> float:
        return self.candidate_passes / self.candidate_runs


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedTest(FieldsJSON):
    """The global test of the two builds: which test, at what level, and what it found.

    Attributes
    ----------
    test : {'mcnemar', 'runs', 'cases'}
        The test run (``auto`` resolved).
    mode : {'both', 'test', 'cases', 'none'}
        What decided: the test and the per-case tests at half the level each, the test
        alone, the per-case tests alone, or neither (neither can reach `alpha`).
    alternative : {'worse', 'two-sided'}
    alpha : float
        The level of the test and of the per-case control.
    p_value : float
        The decision's p-value (as `mode` combines `p_test` and `p_cases`).
    p_test, p_cases : float
        The test's own p-value, and the per-case tests' (the smallest adjusted one).
    exact : bool
        Whether `p_test` was counted exactly (else a seeded Monte Carlo over labellings).
    p_value_se : float
        The Monte Carlo p-value's standard error (0 when exact).
    smallest_p : float
        The smallest p-value the test can reach with these runs and cases.
    statistic : float
        Descriptive, baseline minus candidate: the mean pass share of the runs (``runs``),
        the summed per-case pass-share differences (``cases``), or the discordant cases
        worse minus better (``mcnemar``).

    The defaults are what a comparison with no case in both builds reports: no test run.
    """

    test: str
    mode: str = "none"
    alternative: str
    alpha: float
    p_value: float = 1.0
    p_test: float = 1.0
    p_cases: float = 1.0
    exact: bool = True
    p_value_se: float = 0.0
    smallest_p: float = 1.0
    statistic: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparedRuns(FieldsJSON):
    """What was compared, under the evidence rule of _model/evidence.py.

    Attributes
    ----------
    cases_compared : int
        The cases with a verdict in both builds (after `partial` left any out).
    baseline_runs, candidate_runs : int
        The runs of each build compared.
    baseline_only, candidate_only : tuple of str
        The cases with a verdict in one build only.
    partial : bool
        Whether the cases lacking a verdict somewhere were left out (and named) instead of
        making the evidence incomplete.
    incomplete_runs : tuple of str
        Compared cases lacking a verdict in some run of a build (``case in run: why``).
    left_out : tuple of str
        Those of them left out under `partial`.
    errors : tuple of str
        Error or unscored verdicts on the cases (``case in run``).
    max_errors : int
        How many of them count as failures; more is incomplete evidence.
    assume_independent_runs : bool
        Whether the user asserted that one run per build are independent.
    """

    cases_compared: int
    baseline_runs: int
    candidate_runs: int
    baseline_only: tuple[str, ...]
    candidate_only: tuple[str, ...]
    partial: bool
    incomplete_runs: tuple[str, ...]
    left_out: tuple[str, ...]
    errors: tuple[str, ...]
    max_errors: int
    assume_independent_runs: bool


@dataclass(frozen=True, slots=True)
class Discordant(FieldsJSON):
    """McNemar's discordant cases (one run per build): passed in the baseline and failed
    in the candidate (`worse`), or the reverse (`better`)."""

    worse: int
    better: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseChanges(FieldsJSON):
    """Each compared case's change, and the ones the per-case control names.

    Attributes
    ----------
    discordant : Discordant or None
        The discordant cases, with one run per build (else None).
    multiplicity : {'holm', 'bh', 'tarone'}
        The per-case control.
    worse, better : tuple of str
        The flagged cases that got worse, and better (two-sided only).
    cases : tuple of CaseChange
        Every compared case, most significant first.
    """

    discordant: Discordant | None = None
    multiplicity: str
    worse: tuple[str, ...] = ()
    better: tuple[str, ...] = ()
    cases: tuple[CaseChange, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparisonRates(FieldsJSON):
    """The comparison's own false alarm and detection, simulated from the baseline's noise.

    Attributes
    ----------
    regression : str
        The regression whose detection is estimated, as described.
    regression_failing : int
        How many of the compared cases it fails.
    false_alarm, detection : float or None
        The largest false alarm and the smallest detection over the noise points in
        `operating` (None when not estimated).
    operating : tuple of CompareOC
        Each noise point's false alarm and detection.
    oc_samples : int
        Simulated comparisons per noise point and hypothesis (0: not estimated).
    """

    regression: str
    regression_failing: int = 0
    false_alarm: float | None = None
    detection: float | None = None
    operating: tuple[CompareOC, ...] = ()
    oc_samples: int


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Comparison(Displayed):
    """What ``gatecal compare`` found; see :func:`compare_builds`.

    Attributes
    ----------
    decision : {'regression', 'better', 'no evidence', 'incomplete'}
        ``regression``: the candidate is worse (p <= alpha); ``better`` (two-sided only):
        different, in the candidate's favour; ``incomplete``: cases seen in one build only
        without `partial`, nothing to compare, or a test that cannot reach `alpha` with
        these runs and cases.
    reasons : tuple of str
        Why the evidence is incomplete, one sentence each.
    paired : PairedTest
        The global test, its level and its p-values.
    compared : ComparedRuns
        The cases and runs compared, and what the evidence rule left out or counted.
    changes : CaseChanges
        Each compared case's change, and the ones the per-case control names.
    rates : ComparisonRates
        The comparison's own false alarm and detection (the largest and the smallest over
        its noise points; None when not estimated).
    sources, warnings : tuple of str
        The files read, and the reading's warnings.
    """

    decision: str
    reasons: tuple[str, ...]
    paired: PairedTest
    compared: ComparedRuns
    changes: CaseChanges
    rates: ComparisonRates
    sources: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    version: str = field(default="")

    _renderer: ClassVar[str] = "gatecal._render.compare"

    @property
    def exit_code(self) -> int:
        """0: no evidence of a regression; 1: a regression or incomplete evidence."""
        return 1 if self.decision in ("regression", "incomplete") else 0

    def summary(self) -> str:
        """The decision, its p-value and test, and the runs compared."""
        p, c = self.paired, self.compared
        return (
            f"{self.decision.upper()}: p = {p.p_value:.3g} ({p.test}) over "
            f"{c.cases_compared} cases, {c.baseline_runs} baseline and "
            f"{c.candidate_runs} candidate runs"
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON contract ``gatecal.compare``, its header first (``gatecal_version``
        the package's that wrote it), then each nested group's keys, flat."""
        return {
            **json_header("compare"),
            "decision": self.decision,
            "exit_code": self.exit_code,
            "reasons": list(self.reasons),
            **self.paired.to_dict(),
            **self.compared.to_dict(),
            **self.changes.to_dict(),
            **self.rates.to_dict(),
            "sources": list(self.sources),
            "warnings": list(self.warnings),
        }

    def to_frame(self) -> Any:
        """The compared cases as a pandas DataFrame, one row per case."""
        import pandas as pd  # deferred: `import gatecal` stays light

        columns = [
            "case",
            "baseline_passes",
            "baseline_runs",
            "candidate_passes",
            "candidate_runs",
            "p_value",
            "adjusted",
            "direction",
            "flagged",
        ]
        frame = pd.DataFrame([c.to_dict() for c in self.changes.cases], columns=columns)
        frame["baseline_share"] = frame["baseline_passes"] / frame["baseline_runs"]
        frame["candidate_share"] = frame["candidate_passes"] / frame["candidate_runs"]
        return frame
