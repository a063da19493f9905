"""Compare two builds on the same cases: did the candidate get worse than the baseline?

The cases are the pairing units: only cases observed in both builds are compared. The
global test depends on how many runs each build has:

- ``mcnemar`` (one run per build): the exact McNemar test, an exact binomial test with
  p = 1/2 on the discordant cases (passed in the baseline and failed in the candidate,
  or the reverse).
- ``runs`` (the default with more runs): an exact permutation test of the build labels
  over whole runs (:func:`~gatecal._analyses.compare.paired.case_permutation_p`). Each
  case's surprise under a labelling is how seldom at least that many of its failures
  (over both builds' runs) would fall on the candidate's runs by chance; a labelling is
  more extreme when its most surprising case is more surprising, the summed surprise
  breaking ties. One case that fails in every candidate run and no baseline run is then
  the most extreme labelling there is, so 3 runs a build catch one broken case where a
  run's pass share drowned it in the other cases' noise (experiments/compare_size.py).
  A run keeps all its verdicts together, so repeats of a case are never counted as
  independent pairs, and whatever makes the verdicts of one run move together (one
  judge draw per run: the run-to-run correlation ``recommend`` measures) is carried
  whole by the permutation. A case's failures over all the runs do not depend on the
  labels, so under "the two builds' runs are exchangeable" the test is exact at any
  failure rate, any run-to-run correlation and any mix of flaky and stable cases. Every
  labelling is counted while there are at most 200,000 (10 + 10 runs); beyond, a seeded
  Monte Carlo over labellings, whose p-value ``(1 + hits) / (1 + draws)`` is still a
  valid p-value (its standard error is reported). The statistic shown is descriptive:
  the mean pass share of the baseline's runs minus the candidate's.
- ``cases``: the exact sign-flip test over cases on each case's pass-share difference
  (an exact count of the 2^n sign vectors). Valid when the runs are independent; a
  run-to-run correlation makes the cases' differences move together and the test too
  liberal (experiments/compare_size.py measures by how much). Offered for comparison.

Changed cases: each compared case's pass counts in the two builds, its one-sided (or
two-sided) exact p-value by Fisher's exact test on its 2 x 2 table (a case's outcomes in
different runs are independent under a run-level judge draw, so this is exact per case),
and, by default, Tarone's discrete Bonferroni (family-wise error, any dependence): a
case whose margins (its passes over both builds' runs) cannot give a p-value below the
level at all is left out of the count, so the cases that can be named share the level
(experiments/compare_size.py measures Holm and Tarone on the same builds: the largest
false alarm over its 18 designs 0.040 and 0.0505, standard error 0.005, at alpha 0.05).
Holm's step-down or Benjamini-Hochberg (false-discovery rate, under positive dependence)
on request.

With one run per build the test is exact McNemar over the cases, which holds only if
the two runs are independent; one run per build cannot measure their correlation, so
the decision is incomplete unless `assume_independent_runs` asserts it.

Evidence: the one rule of _model/evidence.py. A case or check with no verdict in a run
of either build, a skipped verdict where the other build has one, and errors beyond
`max_errors` are incomplete evidence (or, with `partial`, the cases lacking a verdict
are left out and named); errors within `max_errors` count as failures.

The comparison's own operating characteristic (false alarm on two healthy builds,
detection of a k-case regression) is estimated by a seeded simulation of the same test
on runs drawn from the baseline's measured noise, with each run's failure rate drawn from
a Beta with the measured mean and icc (the model of ``recommend``), at points of the
joint (rate, icc) confidence region of :func:`gatecal._analyses.noise.bounds.noise_bounds`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gatecal._analyses.compare.oc import CompareOC, _choose_test, _operating
from gatecal._analyses.compare.paired import (
    Matrix,
    _decide,
    _Decision,
)
from gatecal._analyses.compare.result import (
    CaseChange,
    CaseChanges,
    ComparedRuns,
    Comparison,
    ComparisonRates,
    Discordant,
    PairedTest,
)
from gatecal._common.docstrings import shared_docs
from gatecal._common.seeds import SeedLike
from gatecal._common.validate import (
    ParameterError,
    check_count,
    check_level,
)
from gatecal._model.evidence import PairedEvidence
from gatecal._model.regression import Regression, RegressionLike, as_regression
from gatecal.readers._data import RunsData

ALTERNATIVES = ("worse", "two-sided")
COMPARE_TESTS = ("auto", "mcnemar", "runs", "cases")
MULTIPLICITY = ("holm", "bh", "tarone")

__all__ = [
    "ALTERNATIVES",
    "COMPARE_TESTS",
    "MULTIPLICITY",
    "compare_builds",
    "compare_matrices",
]


# -- the comparison -------------------------------------------------------------------------


def _check_matrix(name: str, value: Any, cases: int | None) -> Matrix:
    arr = np.asarray(value)
    if arr.ndim != 2 or (cases is not None and arr.shape[1] != cases):
        want = "a 2-d array (runs x cases)" + (f" with {cases} columns" if cases else "")
        raise ParameterError(name, f"must be {want}", arr.shape)
    if arr.size and not np.isin(arr, (-1, 0, 1)).all():
        raise ParameterError(name, "must hold only 1 (pass), 0 (fail) or -1 (missing)", "other")
    return arr.astype(np.int8)


def compare_matrices(
    baseline: npt.ArrayLike,
    candidate: npt.ArrayLike,
    cases: list[str] | tuple[str, ...] | None = None,
    *,
    alternative: str = "worse",
    alpha: float = 0.05,
    multiplicity: str = "tarone",
    partial: bool = False,
    test: str = "auto",
    regression: RegressionLike | None = None,
    oc_samples: int = 1000,
    rng: SeedLike = 0,
    confidence_level: float = 0.95,
    assume_independent_runs: bool = False,
    sources: tuple[str, ...] = (),
    warnings: tuple[str, ...] = (),
) -> Comparison:
    """Compare two builds given as outcome matrices (runs x cases; 1 pass, 0 fail,
    -1 missing), the same columns in both. See :func:`compare_builds`; a -1 inside a
    compared case is missing evidence (with `partial`: the case is left out).

    Parameters
    ----------
    baseline, candidate : array_like of int, shape (runs, cases)
        Each build's outcomes: 1 pass, 0 fail, -1 missing; the same case columns in both.
    cases : list of str, optional
        The columns' case names; default their indices as text.
    alternative : {"worse", "two-sided"}, default "worse"
        One-sided: is the candidate worse? Or: are they different?
    alpha : float, default 0.05
        The level of the global test and of the per-case control, in (0, 1).
    multiplicity : {"holm", "bh", "tarone"}, default "tarone"
        The per-case control, as in :func:`compare_builds`.
    partial : bool, default False
        Leave out (and name) the cases with a missing verdict, instead of calling the
        evidence incomplete.
    test : {"auto", "mcnemar", "runs", "cases"}, default "auto"
        ``auto``: exact McNemar with one run per build, else the run permutation test.
    regression : Regression, str, int or float, optional
        The regression whose detection is estimated; default a quarter of the cases.
    oc_samples : int, default 1000
        Simulated comparisons per noise point and hypothesis, at least 0 (0: not
        estimated).
    rng : SeedLike, default 0
        Root seed of the simulation (and of the Monte Carlo p-value, when used).
    confidence_level : float, default 0.95
        The level of the baseline's (rate, icc) region whose points the false alarm and
        detection are simulated at, in (0, 1).
    assume_independent_runs : bool, default False
        With one run per build, assert that the two runs are independent (see
        :func:`compare_builds`); otherwise that decision is incomplete.
    sources : tuple of str, default ()
        The files the matrices came from, recorded in the result.
    warnings : tuple of str, default ()
        Warnings of the reading, carried into the result.

    Returns
    -------
    Comparison
        The decision (``regression``, ``better``, ``no evidence`` or ``incomplete``) with
        its reasons, the p-values, each case's change, and the comparison's own false
        alarm and detection.

    Raises
    ------
    ParameterError
        If a matrix is not 2-D or holds other values, the columns differ, `cases` does not
        name them, an option is unknown, or a level or count is out of range.
    """
    from gatecal._model.evidence import matrix_evidence

    base = _check_matrix("baseline", baseline, None)
    cand = _check_matrix("candidate", candidate, base.shape[1])
    names = list(cases) if cases is not None else [str(j) for j in range(base.shape[1])]
    if len(names) != base.shape[1]:
        raise ParameterError("cases", f"must name the {base.shape[1]} columns", len(names))
    evidence = matrix_evidence(base, cand, names, partial=partial)
    return _compare(
        evidence,
        alternative=alternative,
        alpha=alpha,
        multiplicity=multiplicity,
        test=test,
        regression=regression,
        oc_samples=oc_samples,
        rng=rng,
        confidence_level=confidence_level,
        assume_independent_runs=assume_independent_runs,
        sources=sources,
        warnings=warnings,
    )


#: Why one run per build is not evidence unless the user asserts independence.
ONE_RUN = (
    "one run per build cannot tell a regression from a bad run: exact McNemar over the "
    "cases is valid only if the two runs are independent, and one run per build cannot "
    "measure the run-to-run correlation (at icc 0.05 and 200 cases its true false alarm "
    "at alpha 0.05 is about 0.28: reports/compare-size.md); give each build more runs, or "
    "assert independence (--assume-independent-runs; assume_independent_runs=True)"
)


def _compare(
    evidence: PairedEvidence,
    *,
    alternative: str,
    alpha: float,
    multiplicity: str,
    test: str,
    regression: RegressionLike | None,
    oc_samples: int,
    rng: SeedLike,
    confidence_level: float,
    assume_independent_runs: bool,
    sources: tuple[str, ...],
    warnings: tuple[str, ...],
) -> Comparison:
    """The comparison of two builds' outcomes, decided under the evidence rule."""
    from gatecal._version import __version__

    if alternative not in ALTERNATIVES:
        raise ParameterError(
            "alternative", f"must be one of {', '.join(ALTERNATIVES)}", alternative
        )
    if multiplicity not in MULTIPLICITY:
        raise ParameterError("multiplicity", "must be holm, bh or tarone", multiplicity)
    if test not in COMPARE_TESTS:
        raise ParameterError("test", f"must be one of {', '.join(COMPARE_TESTS)}", test)
    alpha = check_level("alpha", alpha)
    level = check_level("confidence_level", confidence_level)
    samples = check_count("oc_samples", oc_samples)
    base, cand = evidence.baseline, evidence.candidate
    base = base[(base >= 0).any(axis=1)]  # a run with no verdict on a compared case
    cand = cand[(cand >= 0).any(axis=1)]
    reasons: list[str] = list(evidence.reasons)
    reg = as_regression("0.25" if regression is None else regression)
    paired = PairedTest(test=test, alternative=alternative, alpha=alpha)
    changes = CaseChanges(multiplicity=multiplicity)
    rates = ComparisonRates(regression=reg.describe(), oc_samples=samples)
    found: _Decision | None = None
    if not evidence.cases or not len(base) or not len(cand):
        reasons.append("no case observed in both builds")
        base, cand = evidence.baseline, evidence.candidate  # the runs given, none compared
    else:
        chosen = _choose_test(test, len(base), len(cand))
        found = _decide(base, cand, chosen, alternative, alpha, multiplicity, rng=rng)
        result = found.test
        paired = PairedTest(
            test=chosen,
            mode=found.mode,
            alternative=alternative,
            alpha=alpha,
            p_value=found.p_value,
            p_test=result.p_value,
            p_cases=found.p_cases,
            exact=result.exact,
            p_value_se=result.standard_error,
            smallest_p=result.smallest_p,
            statistic=found.statistic,
        )
        changes = _case_changes(list(evidence.cases), found, multiplicity)
        rates = _own_rates(base, len(cand), paired, multiplicity, reg, samples, rng, level)
        if found.mode == "none":
            reasons.append(
                f"neither the {chosen} test nor the per-case tests can reach alpha "
                f"{alpha:g} with {len(base)} + {len(cand)} runs of {len(evidence.cases)} "
                f"cases (the test's smallest p-value is {result.smallest_p:.3g})"
            )
        if chosen == "mcnemar" and not assume_independent_runs:
            reasons.append(ONE_RUN)
    if reasons:
        decision = "incomplete"
        reasons.insert(0, "incomplete evidence never passes")
    elif found is not None and found.reject:
        decision = "regression" if found.worse else "better"
    else:
        decision = "no evidence"
    return Comparison(
        decision=decision,
        reasons=tuple(reasons),
        paired=paired,
        compared=_compared(evidence, len(base), len(cand), assume_independent_runs),
        changes=changes,
        rates=rates,
        sources=sources,
        warnings=(*warnings, *evidence.notes),
        version=__version__,
    )


def _own_rates(
    base: Matrix,
    candidate_runs: int,
    paired: PairedTest,
    multiplicity: str,
    reg: Regression,
    samples: int,
    rng: SeedLike,
    level: float,
) -> ComparisonRates:
    """The comparison's own operating characteristic, simulated from the baseline's noise
    (``samples`` 0: not estimated)."""
    n = base.shape[1]
    failing = reg.failing(n)
    if samples and not 1 <= failing <= n:
        raise ParameterError(
            "regression",
            f"must fail between 1 and the {n} compared cases (its detection is estimated)",
            reg.describe(),
        )
    operating: tuple[CompareOC, ...] = ()
    if samples:
        operating = _operating(
            base,
            n,
            len(base),
            candidate_runs,
            paired.test,
            paired.alternative,
            paired.alpha,
            multiplicity,
            failing,
            samples,
            rng,
            level,
        )
    return ComparisonRates(
        regression=reg.describe(),
        regression_failing=failing,
        false_alarm=max((o.false_alarm for o in operating), default=None),
        detection=min((o.detection for o in operating), default=None),
        operating=operating,
        oc_samples=samples,
    )


def _compared(
    evidence: PairedEvidence, baseline_runs: int, candidate_runs: int, assume_independent: bool
) -> ComparedRuns:
    """What the comparison compared: the evidence's cases over these runs of each build."""
    return ComparedRuns(
        cases_compared=len(evidence.cases),
        baseline_runs=baseline_runs,
        candidate_runs=candidate_runs,
        baseline_only=evidence.baseline_only,
        candidate_only=evidence.candidate_only,
        partial=evidence.partial,
        incomplete_runs=evidence.incomplete,
        left_out=evidence.left_out,
        errors=evidence.errors,
        max_errors=evidence.max_errors,
        assume_independent_runs=assume_independent,
    )


@shared_docs
def compare_builds(
    data: RunsData | str | Path | Sequence[str | Path],
    candidate: RunsData | str | Path | Sequence[str | Path] | None = None,
    *,
    regressed: RunsData | str | Path | Sequence[str | Path] | None = None,
    alternative: str = "worse",
    alpha: float = 0.05,
    multiplicity: str = "tarone",
    partial: bool = False,
    test: str = "auto",
    regression: RegressionLike | None = None,
    oc_samples: int = 1000,
    rng: SeedLike = 0,
    confidence_level: float = 0.95,
    max_errors: int = 0,
    assume_independent_runs: bool = False,
) -> Comparison:
    """Compare the candidate build against the baseline on the cases both report.

    Parameters
    ----------
    data : RunsData or paths
        The baseline's runs: a :class:`RunsData` from :func:`gatecal.read_runs`, or the
        paths to read. Without `candidate`, one RunsData holding both builds (the
        candidate's runs read as `regressed`, or a table with a ``build`` column).
    candidate : RunsData or paths, optional
        The candidate build's runs (a RunsData of one build, or the paths to read).
    regressed : deprecated
        The old name of `candidate` (a DeprecationWarning).
    alternative : {"worse", "two-sided"}
        One-sided: is the candidate worse? Or: are they different?
    alpha : float
        The level of the global test and of the per-case control.
    multiplicity : {"holm", "bh", "tarone"}
        Holm (family-wise error), Benjamini-Hochberg (false-discovery rate) or Tarone's
        discrete Bonferroni (family-wise error; only the cases whose margins let them
        reach the level share it: experiments/compare_size.py measures both).
    partial : bool
        Leave out (and name) the cases that lack a verdict somewhere: in one build only,
        or in some run of a build. Otherwise that is incomplete evidence (the evidence
        rule of _model/evidence.py: a dropped row, a check missing inside a case and a
        skipped verdict where the other build has one are missing evidence).
    test : {"auto", "mcnemar", "runs", "cases"}
        ``auto``: exact McNemar with one run per build, else the run permutation test.
    regression : Regression or str
        The regression whose detection is estimated (default: a quarter of the cases).
    oc_samples : int
        Simulated comparisons per noise point and hypothesis (0: not estimated).
    rng : SeedLike
        Root seed of the simulation (and of the Monte Carlo p-value, when used).
    confidence_level : float
        The level of the baseline's (rate, icc) confidence region, at whose largest icc
        and largest rate (besides the fit) the false alarm and detection are simulated.
    max_errors : int
        Error or unscored verdicts tolerated in both builds together; each counts as a
        failure of its case in its run. More is incomplete evidence.
    assume_independent_runs : bool
        With one run per build (exact McNemar over the cases), assert that the two runs
        are independent: no run-to-run correlation (one judge draw per run shared by its
        cases). One run per build cannot measure it, and without this assertion the
        decision is incomplete: the test's false alarm is only its nominal level under
        independence (at icc 0.05 and 200 cases it is about 0.28 at alpha 0.05:
        reports/compare-size.md).

    Examples
    --------
    %(nightly_runs_example)s
    >>> candidate = [
    ...     {"run": f"cand-{r:02}", "case": f"case-{c:02}",
    ...      "passed": c != 7 and rng.random() > (0.3 if c < 3 else 0.002)}
    ...     for r in range(10) for c in range(20)
    ... ]  # case-07 broke
    >>> path = folder / "candidate.jsonl"
    >>> _ = path.write_text("".join(json.dumps(x) + "\\n" for x in candidate))
    >>> comparison = gatecal.compare_builds(folder / "nightly.jsonl", candidate=path)
    >>> comparison.decision, comparison.changes.worse
    ('regression', ('case-07',))
    """
    from gatecal.readers.run_states import paired_states

    max_errors = check_count("max_errors", max_errors, low=0)
    if regressed is not None:
        if candidate is not None:
            raise ParameterError("regressed", "is the old name of `candidate`: give one", "both")
        import warnings as _warnings

        _warnings.warn(
            "compare_builds(regressed=...) is deprecated: pass candidate=...",
            DeprecationWarning,
            stacklevel=2,
        )
        candidate = regressed
    base_data = _as_runs("data", data)
    if candidate is None:
        builds = base_data.builds()
        for build, role in (("healthy", "baseline"), ("regressed", "candidate")):
            if build not in builds:
                raise ParameterError("runs", f"must include {role} runs", builds)
        sides = [(base_data, "healthy"), (base_data, "regressed")]
        sources, notes = base_data.sources, base_data.warnings
    else:
        cand_data = _as_runs("candidate", candidate)
        sides = [
            (base_data, _only_build("data", base_data)),
            (cand_data, _only_build("candidate", cand_data)),
        ]
        sources = (*base_data.sources, *cand_data.sources)
        notes = (*base_data.warnings, *cand_data.warnings)
    evidence = paired_states(sides, max_errors=max_errors, partial=partial)
    return _compare(
        evidence,
        alternative=alternative,
        alpha=alpha,
        multiplicity=multiplicity,
        test=test,
        regression=regression,
        oc_samples=oc_samples,
        rng=rng,
        confidence_level=confidence_level,
        assume_independent_runs=assume_independent_runs,
        sources=sources,
        warnings=notes,
    )


def _as_runs(name: str, value: object) -> RunsData:
    """A RunsData as given, or read from a path or a sequence of paths."""
    if isinstance(value, RunsData):
        return value
    paths: list[str | Path]
    if isinstance(value, str | Path):
        paths = [value]
    elif (
        isinstance(value, list | tuple) and value and all(isinstance(p, str | Path) for p in value)
    ):
        paths = list(value)
    else:
        what = "a gatecal.RunsData (from gatecal.read_runs) or the paths of its runs"
        raise ParameterError(name, f"must be {what}", type(value).__name__)
    from gatecal.readers._read import read_runs

    return read_runs(paths)


def _only_build(name: str, data: RunsData) -> str:
    builds = data.builds()
    if len(builds) != 1:
        rule = "must hold the runs of one build when the builds are given apart"
        raise ParameterError(name, rule, builds)
    return builds[0]


def _case_changes(compared: list[str], found: _Decision, multiplicity: str) -> CaseChanges:
    """Each compared case with its counts and p-values, most significant first; the
    flagged ones that got worse, and better."""
    case_rows = tuple(
        CaseChange(
            case=name,
            baseline_passes=bp,
            baseline_runs=bn,
            candidate_passes=cp,
            candidate_runs=cn,
            p_value=p,
            adjusted=a,
            direction=d,
            flagged=f,
        )
        for name, (bp, bn, cp, cn), p, a, d, f in zip(
            compared,
            found.counts,
            found.raw,
            found.adjusted,
            found.directions,
            found.flagged,
            strict=True,
        )
    )
    case_rows = tuple(sorted(case_rows, key=lambda c: (c.p_value, c.case)))
    return CaseChanges(
        discordant=Discordant(*found.discordant) if found.discordant is not None else None,
        multiplicity=multiplicity,
        worse=tuple(c.case for c in case_rows if c.flagged and c.direction == "worse"),
        better=tuple(c.case for c in case_rows if c.flagged and c.direction == "better"),
        cases=case_rows,
    )
