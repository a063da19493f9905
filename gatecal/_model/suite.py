"""The model: a suite of cases and checks, the builds' true verdicts, and judge noise."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from gatecal._common.docstrings import shared_docs
from gatecal._common.validate import ParameterError, check_count, check_probability

__all__ = [
    "BUILDS",
    "ICC_NEGLIGIBLE",
    "Check",
    "JudgeNoise",
    "Suite",
    "beta_shape",
    "case_fail_probabilities",
    "case_pass_probabilities",
]

CheckKind = Literal["judge", "code"]
BUILDS = ("healthy", "regressed")


@dataclass(frozen=True, slots=True)
class Check:
    """One check that every case of a suite runs.

    Attributes
    ----------
    name : str
        E.g. ``"relevancy"`` or ``"contains-facts"``.
    kind : {'judge', 'code'}
        A judge check's verdict comes from an LLM and can be wrong; a code check's
        verdict is plain code and never wrong.
    """

    name: str
    kind: CheckKind

    def __post_init__(self) -> None:
        if self.kind not in ("judge", "code"):
            raise ParameterError("kind", "must be 'judge' or 'code'", self.kind)


RatePair = tuple[float, float]


#: An intra-run correlation below this is no correlation to double precision (see
#: :attr:`JudgeNoise.run_correlated`); the Beta parameters ``(1 - icc) / icc`` would also
#: overflow the quadrature's recurrences near 1e-154.
ICC_NEGLIGIBLE = 1e-100


def beta_shape(mean: Any, icc: Any) -> tuple[Any, Any]:
    """Beta (a, b) with the given mean and intra-class correlation ``icc = 1 / (a + b + 1)``.

    Works elementwise on arrays; `icc` must be in (0, 1).

    Parameters
    ----------
    mean : float or array_like
        The Beta mean, in (0, 1).
    icc : float or array_like
        The intra-class correlation, in (0, 1) (not checked here).

    Returns
    -------
    (a, b) : tuple of float or ndarray
        The two Beta shape parameters, with ``a + b = (1 - icc) / icc``.
    """
    scale = (1.0 - icc) / icc  # a + b
    return mean * scale, (1.0 - mean) * scale


def systematic_count(cases: int, systematic: float) -> int:
    """The cases a judge gets wrong every time: `systematic` x `cases`, rounded half up,
    in exact decimal arithmetic (0.3 of 5 cases is 2)."""
    from fractions import Fraction

    share = Fraction(repr(float(systematic)))
    return min(cases, int(share * cases + Fraction(1, 2)))


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeNoise:
    """How often a judge verdict is wrong.

    Attributes
    ----------
    fnr : float
        P(judge says "no" | the check truly passes): a false alarm on a check.
    fpr : float
        P(judge says "yes" | the check truly fails): a missed failure.
    unparseable : float
        Share of judge replies that are not a clean yes/no. The built-in evaluators
        count such a reply as a fail, and so does gatecal, whatever the truth.
    icc : float
        Run-level correlation (intra-run correlation of verdict errors). With
        ``icc > 0`` each CI run draws its own flip rate x from a Beta distribution with
        mean ``fnr`` and ``1 / (a + b + 1) = icc``, and every verdict of that run is
        wrong with probability x (a provider update shifting a whole night's run).
        Needs one symmetric rate: ``fnr == fpr`` and no per-check or per-case rates.
    per_check : mapping of str to (fnr, fpr)
        Rates of named checks, overriding `fnr`, `fpr`.
    per_case : mapping of str to (fnr, fpr)
        Rates of named cases, overriding both (a hard case).
    case_spread : float
        How much cases differ, in [0, 1): a suite is a draw from the spread, each case
        drawing its own flip rate from a Beta with mean `fnr` and
        ``1 / (a + b + 1) = case_spread`` (what recommend measures as "how much cases
        differ"), independently. Exact figures are averages over such suites
        (:meth:`over_cases`); simulations draw each case's rate (:meth:`drawn_report_pass`).
        Each case keeps its rate in every run and every judge call, so a majority vote
        or a rerun helps only the cases whose rate is neither near 0 nor near 1. A
        case's false "yes" equals its false "no" when ``fnr == fpr``, else stays `fpr`.
    systematic : float
        Share of cases the judge gets wrong every time (a false "no" on every call, a
        truly failing check still "no"), in [0, 1]: the last
        ``round(systematic x cases)`` cases of the suite.

    The article's noise model is symmetric, ``fnr == fpr == p``: see :meth:`flip`.
    """

    fnr: float
    fpr: float
    unparseable: float = 0.0
    icc: float = 0.0
    per_check: Mapping[str, RatePair] = field(default_factory=dict)
    per_case: Mapping[str, RatePair] = field(default_factory=dict)
    case_spread: float = 0.0
    systematic: float = 0.0

    def __post_init__(self) -> None:
        for name in ("fnr", "fpr", "unparseable", "icc", "case_spread", "systematic"):
            object.__setattr__(self, name, check_probability(name, getattr(self, name)))
        for name in ("per_check", "per_case"):
            rates = {}
            for key, pair in dict(getattr(self, name)).items():
                if not isinstance(pair, tuple | list) or len(pair) != 2:
                    raise ParameterError(f"{name}[{key!r}]", "must be a pair (fnr, fpr)", pair)
                rates[str(key)] = (
                    check_probability(f"{name}[{key!r}].fnr", pair[0]),
                    check_probability(f"{name}[{key!r}].fpr", pair[1]),
                )
            object.__setattr__(self, name, rates)
        if self.case_spread >= 1:
            raise ParameterError("case_spread", "must be in [0, 1)", self.case_spread)
        if self.cases_differ and (self.per_check or self.per_case):
            rule = "must not be combined with per-check or per-case rates (they set each rate)"
            name = "case_spread" if self.case_spread else "systematic"
            raise ParameterError(name, rule, getattr(self, name))
        if self.icc > 0:
            if self.icc >= 1:
                raise ParameterError("icc", "must be in [0, 1)", self.icc)
            if self.cases_differ:
                rule = (
                    "combines only with one flip rate for every case "
                    "(no `case_spread`, no `systematic`)"
                )
                raise ParameterError("icc", rule, self.icc)
            if self.fnr != self.fpr or self.per_check or self.per_case:
                rule = "needs one symmetric flip rate (fnr == fpr, no per-check or per-case rates)"
                raise ParameterError("icc", rule, self.icc)

    @classmethod
    def flip(cls, p: float, *, fpr: float | None = None, **kwargs: Any) -> JudgeNoise:
        """Every judge verdict flips with probability `p` (false "yes" at `fpr` if given)."""
        p = check_probability("flip", p)
        return cls(fnr=p, fpr=p if fpr is None else fpr, **kwargs)

    @property
    def cases_differ(self) -> bool:
        """Do cases have rates of their own from `case_spread` or `systematic`?"""
        return self.case_spread > 0 or self.systematic > 0

    @property
    def run_correlated(self) -> bool:
        """Do runs draw their own flip rate? Not when ``icc`` is 0, nor when the rate is 0
        or 1 (a Beta with mean 0 or 1 is a point mass: every run has that rate), nor when
        ``icc`` is below :data:`ICC_NEGLIGIBLE`: the mixture then moves a probability of
        k of d verdicts failing by a relative ``(k^2 (1-p)/p + (d-k)^2 p/(1-p)) icc / 2``
        at most (to second order), below double precision for any suite gatecal builds
        unless the flip rate itself is below about 1e-80."""
        return self.icc > ICC_NEGLIGIBLE and 0.0 < self.fnr < 1.0

    def beta_parameters(self) -> tuple[float, float]:
        """``(a, b)`` of the run-level Beta distribution of the flip rate (``icc > 0``)."""
        if self.icc <= 0:
            raise ParameterError("icc", "must be > 0 for a run-level Beta distribution", self.icc)
        a, b = beta_shape(self.fnr, self.icc)
        return float(a), float(b)

    def case_rate_nodes(
        self, degree: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Nodes and weights of a Gauss rule over one case's own flip rate.

        When cases spread (``case_spread > 0``) each case of a suite drawn from the spread
        has its own rate X ~ Beta with mean `fnr` and ``1 / (a + b + 1) = case_spread``,
        drawn independently of the other cases. A case's probability of passing one run
        (or one try of a policy: votes, reruns of the case and repeats all ask at the same
        rate) is a polynomial in X of degree at most `degree`, so its average over suites
        is ``sum(w * f(x))`` over these nodes, exactly. Without a spread (or with a mean of
        0 or 1, where the Beta is a point) the rule is one node at `fnr`.
        """
        if self.case_spread <= 0 or not 0.0 < self.fnr < 1.0:
            return np.array([self.fnr]), np.array([1.0])
        from gatecal._common.quadrature import beta_nodes

        a, b = beta_shape(self.fnr, self.case_spread)
        return beta_nodes(float(a), float(b), degree)

    def case_rate_quantile(self, share: float) -> float:
        """The flip rate below which `share` of the (not systematic) cases of suites drawn
        from the spread fall: the Beta's quantile (`fnr` itself without a spread)."""
        if self.case_spread <= 0 or not 0.0 < self.fnr < 1.0:
            return self.fnr
        from scipy import special  # deferred: `import gatecal` stays light

        a, b = beta_shape(self.fnr, self.case_spread)
        return float(special.betaincinv(a, b, share))

    def at_case_rate(self, suite: Suite, x: float) -> JudgeNoise:
        """The noise of a suite whose cases (the systematic ones apart) all have flip rate
        `x`: a false "yes" at `x` too when ``fnr == fpr``, else at `fpr`; the systematic
        cases (the last ``round(systematic x cases)``) a false "no" every time."""
        stuck = systematic_count(suite.n_cases, self.systematic)
        pinned = {case: (1.0, 0.0) for case in suite.cases[suite.n_cases - stuck :]}
        return JudgeNoise(
            fnr=x,
            fpr=x if self.fnr == self.fpr else self.fpr,
            unparseable=self.unparseable,
            per_case=pinned,
        )

    def over_cases(self, suite: Suite, degree: int) -> list[tuple[float, JudgeNoise]]:
        """``(weight, noise)`` pairs whose weighted sum of any per-case probability of
        degree at most `degree` in the case's rate is its average over suites drawn from
        the spread (:meth:`case_rate_nodes`, :meth:`at_case_rate`); one pair, this noise,
        when cases do not spread."""
        if self.case_spread <= 0:
            return [(1.0, self)]
        xs, ws = self.case_rate_nodes(degree)
        return [(float(w), self.at_case_rate(suite, float(x))) for x, w in zip(xs, ws, strict=True)]

    def drawn_report_pass(
        self, gen: np.random.Generator, suite: Suite, build: str, runs: int
    ) -> npt.NDArray[np.float64]:
        """P(a judge call reports pass), shape (runs, cases, judge checks), for `runs` suites
        drawn from the spread: each case (the systematic ones apart: "no" every time) draws
        its own rate X ~ Beta (:meth:`case_rate_nodes`), and every call of the case errs at X."""
        truth = suite.truth_matrix(build)[:, suite.judge_mask()]
        n = suite.n_cases
        stuck = systematic_count(n, self.systematic)
        x = np.full((runs, n, 1), self.fnr)
        if self.case_spread > 0 and 0.0 < self.fnr < 1.0:
            a, b = beta_shape(self.fnr, self.case_spread)
            x[:, : n - stuck, 0] = gen.beta(a, b, size=(runs, n - stuck))
        false_yes = x if self.fnr == self.fpr else np.full_like(x, self.fpr)
        s = (1.0 - self.unparseable) * np.where(truth, 1.0 - x, false_yes)
        s[:, n - stuck :, :] = 0.0
        return np.asarray(s)

    def rates(self, suite: Suite) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The (fnr, fpr) of every judge verdict: two (cases, judge checks) arrays.

        A suite drawn from a spread (``case_spread > 0``) has no fixed rates: averages over
        such suites go through :meth:`over_cases`, simulations draw each case's rate.
        """
        if self.case_spread > 0:
            rule = "has no fixed rate per case: average over :meth:`over_cases` or draw each rate"
            raise ParameterError("case_spread", rule, self.case_spread)
        names = [c.name for c in suite.checks if c.kind == "judge"]
        unknown = sorted(set(self.per_check) - {c.name for c in suite.checks})
        if unknown:
            raise ParameterError("per_check", "must name checks of the suite", unknown[0])
        unknown = sorted(set(self.per_case) - set(suite.cases))
        if unknown:
            raise ParameterError("per_case", "must name cases of the suite", unknown[0])
        fnr = np.full((suite.n_cases, len(names)), self.fnr)
        fpr = np.full((suite.n_cases, len(names)), self.fpr)
        if self.cases_differ:
            stuck = systematic_count(suite.n_cases, self.systematic)  # (no spread here)
            own = np.where(np.arange(suite.n_cases) < suite.n_cases - stuck, self.fnr, 1.0)
            fnr[:] = own[:, None]
            if self.fnr == self.fpr:
                fpr[:] = own[:, None]
            fpr[suite.n_cases - stuck :, :] = 0.0  # a systematic case: "no" whatever the truth
        for j, name in enumerate(names):
            if name in self.per_check:
                fnr[:, j], fpr[:, j] = self.per_check[name]
        for i, case in enumerate(suite.cases):
            if case in self.per_case:
                fnr[i, :], fpr[i, :] = self.per_case[case]
        return fnr, fpr

    def report_pass(self, suite: Suite, build: str) -> npt.NDArray[np.float64]:
        """P(a judge verdict reports pass), per (case, judge check), given the truth.

        ``(1 - unparseable) * (1 - fnr)`` on a truly passing check and
        ``(1 - unparseable) * fpr`` on a truly failing one.
        """
        fnr, fpr = self.rates(suite)
        truth = suite.truth_matrix(build)[:, suite.judge_mask()]
        return np.asarray((1.0 - self.unparseable) * np.where(truth, 1.0 - fnr, fpr))

    def at(self, x: float) -> JudgeNoise:
        """The noise of a run whose flip rate came out as `x` (no correlation left)."""
        return JudgeNoise(fnr=x, fpr=x, unparseable=self.unparseable)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class Suite:
    """A golden-dataset suite: cases, the checks each case runs, and each build's truth.

    Attributes
    ----------
    cases : tuple of str
        Case ids, unique.
    checks : tuple of Check
        The checks every case runs, in order.
    truth : Mapping[str, tuple of tuple of bool]
        For each build (``"healthy"``, ``"regressed"``), the true verdict of every
        check of every case: ``truth[build][case][check]``.

    A case passes a CI run only if every one of its checks reports pass.
    """

    cases: tuple[str, ...]
    checks: tuple[Check, ...]
    truth: Mapping[str, tuple[tuple[bool, ...], ...]] = field(compare=True)

    def __repr__(self) -> str:
        """One line, whatever the number of cases."""
        kinds = f"{self.judge_checks} judge and {self.code_checks} code check(s) each"
        builds = ", ".join(f"{b}: {self.failing(b)} failing" for b in self.truth)
        return f"<gatecal.Suite: {self.n_cases} cases, {kinds}; {builds}>"

    def __post_init__(self) -> None:
        cases = tuple(self.cases)
        checks = tuple(self.checks)
        if not cases:
            raise ParameterError("cases", "must name at least one case", self.cases)
        if len(set(cases)) != len(cases):
            from collections import Counter  # linear, where list.count per case was quadratic

            dup = next(c for c, n in Counter(cases).items() if n > 1)
            raise ParameterError("cases", "must be unique", dup)
        if not checks:
            raise ParameterError("checks", "must hold at least one check", self.checks)
        if len({c.name for c in checks}) != len(checks):
            raise ParameterError("checks", "must have unique names", [c.name for c in checks])
        truth: dict[str, tuple[tuple[bool, ...], ...]] = {}
        for build in BUILDS:
            if build not in self.truth:
                raise ParameterError("truth", f"must give the {build!r} build", sorted(self.truth))
        for build, rows in self.truth.items():
            rows = tuple(tuple(bool(v) for v in row) for row in rows)
            if len(rows) != len(cases) or any(len(r) != len(checks) for r in rows):
                rule = f"[{build!r}] must be {len(cases)} rows of {len(checks)} verdicts"
                raise ParameterError("truth", rule, [len(r) for r in rows])
            truth[build] = rows
        object.__setattr__(self, "cases", cases)
        object.__setattr__(self, "checks", checks)
        object.__setattr__(self, "truth", truth)

    @classmethod
    def uniform(
        cls,
        *,
        cases: int = 12,
        judge_checks: int = 2,
        code_checks: int = 1,
        failing: int | None = None,
    ) -> Suite:
        """The article's suite shape: every case runs the same judge and code checks.

        The healthy build passes every check. In the regressed build, the first
        `failing` cases fail their first code check, so no judge flip can save them
        (the seed article's regressed build). With no code checks they fail their
        first judge check instead, which a false "yes" can hide.

        Parameters
        ----------
        cases : int
            Number of cases, at least 1.
        judge_checks, code_checks : int
            Checks per case of each kind; at least one check in all.
        failing : int, optional
            Cases that fail in the regressed build; default a quarter of the
            cases, rounded down, but at least 1.
        """
        n = check_count("cases", cases, low=1)
        j = check_count("judge_checks", judge_checks, low=0)
        c = check_count("code_checks", code_checks, low=0)
        if j + c == 0:
            raise ParameterError("judge_checks", "and `code_checks` can't both be 0", 0)
        f = max(1, n // 4) if failing is None else check_count("failing", failing, low=0, high=n)
        checks = tuple(Check(f"judge-{i + 1}", "judge") for i in range(j)) + tuple(
            Check(f"code-{i + 1}", "code") for i in range(c)
        )
        broken = j if c else 0  # column of the first code check, else of the first judge check
        healthy = tuple((True,) * (j + c) for _ in range(n))
        regressed = tuple(
            tuple(not (i < f and col == broken) for col in range(j + c)) for i in range(n)
        )
        width = len(str(n))
        return cls(
            cases=tuple(f"case-{i + 1:0{width}d}" for i in range(n)),
            checks=checks,
            truth={"healthy": healthy, "regressed": regressed},
        )

    @property
    def n_cases(self) -> int:
        """Number of cases."""
        return len(self.cases)

    @property
    def judge_checks(self) -> int:
        """Judge checks per case."""
        return sum(c.kind == "judge" for c in self.checks)

    @property
    def code_checks(self) -> int:
        """Code checks per case."""
        return sum(c.kind == "code" for c in self.checks)

    def failing(self, build: str = "regressed") -> int:
        """Cases with at least one truly failing check in `build`."""
        return sum(not all(row) for row in self._rows(build))

    def failing_by_kind(self, build: str = "regressed") -> tuple[int, int]:
        """Cases of `build` that fail a code check, and those that fail only judge checks."""
        judge = [c.kind == "judge" for c in self.checks]
        code_fail = judge_only = 0
        for row in self._rows(build):
            if any(not ok and not j for ok, j in zip(row, judge, strict=True)):
                code_fail += 1
            elif not all(row):
                judge_only += 1
        return code_fail, judge_only

    def truth_matrix(self, build: str) -> npt.NDArray[np.bool_]:
        """The true verdicts of `build` as a (cases, checks) boolean array."""
        return np.array(self._rows(build), dtype=bool).reshape(self.n_cases, len(self.checks))

    def judge_mask(self) -> npt.NDArray[np.bool_]:
        """Which check columns are judge checks."""
        return np.array([c.kind == "judge" for c in self.checks], dtype=bool)

    def _rows(self, build: str) -> tuple[tuple[bool, ...], ...]:
        if build not in self.truth:
            raise ParameterError("build", f"must be one of {sorted(self.truth)}", build)
        return self.truth[build]


def _truth_parts(
    suite: Suite, build: str
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """`build`'s truth matrix, which checks are the judge's, and which cases pass every
    code check."""
    truth = suite.truth_matrix(build)
    judge = suite.judge_mask()
    return truth, judge, np.asarray(truth[:, ~judge].all(axis=1), dtype=np.bool_)


def _over_spread(
    per_case: Callable[[Suite, str, JudgeNoise], npt.NDArray[np.float64]],
    suite: Suite,
    build: str,
    noise: JudgeNoise,
) -> npt.NDArray[np.float64]:
    """`per_case` averaged over the suites `noise`'s case spread draws (its Gauss rule of
    the degree of the judge checks a case has: exact for these polynomials)."""
    nodes = noise.over_cases(suite, int(suite.judge_mask().sum()))
    return np.asarray(sum(w * per_case(suite, build, nz) for w, nz in nodes), dtype=np.float64)


@shared_docs
def case_pass_probabilities(suite: Suite, build: str, noise: JudgeNoise) -> npt.NDArray[np.float64]:
    r"""P(case i reports pass) for every case of `build` under `noise` (one run's rates).

    .. math:: q_i = \prod_j P(\text{check } j \text{ of case } i \text{ reports pass})

    where the factor is :math:`(1 - u)(1 - \mathrm{fnr})` for a truly passing judge
    check, :math:`(1 - u)\,\mathrm{fpr}` for a truly failing one (u: the unparseable
    share), 1 for a passing code check and 0 for a failing one. Verdicts are
    independent given the run; with ``noise.icc > 0`` this is the probability at the
    mean flip rate, and the exact engine integrates over the run's rate.

    Parameters
    ----------
    %(suite_build_noise)s

    Returns
    -------
    ndarray of float, shape (cases,)
        Each case's probability of reporting pass in one run.

    Raises
    ------
    ParameterError
        If `build` is not a build of the suite.
    """
    if noise.case_spread > 0:  # averaged over suites drawn from the spread
        return _over_spread(case_pass_probabilities, suite, build, noise)
    code_ok = _truth_parts(suite, build)[2]
    judge_pass = noise.report_pass(suite, build)
    return np.asarray(np.prod(judge_pass, axis=1) * code_ok, dtype=np.float64)


@shared_docs
def case_fail_probabilities(suite: Suite, build: str, noise: JudgeNoise) -> npt.NDArray[np.float64]:
    r""":math:`1 - q_i` computed without cancellation: ``-expm1(sum log P(pass))``.

    With a flip rate of 1e-17, :math:`q_i = (1 - 10^{-17})^2` rounds to 1 and ``1 - q_i``
    to 0, although a case fails with probability 2e-17; summed ``log1p`` terms keep it.

    Parameters
    ----------
    %(suite_build_noise)s

    Returns
    -------
    ndarray of float, shape (cases,)
        Each case's probability of reporting fail in one run (1 when a code check fails).

    Raises
    ------
    ParameterError
        If `build` is not a build of the suite.
    """
    if noise.case_spread > 0:  # averaged over suites drawn from the spread
        return _over_spread(case_fail_probabilities, suite, build, noise)
    truth, judge, code_ok = _truth_parts(suite, build)
    fnr, fpr = noise.rates(suite)
    passing = truth[:, judge]
    with np.errstate(divide="ignore"):  # log(0) = -inf: a verdict that never passes
        logs = np.log1p(-noise.unparseable) + np.where(passing, np.log1p(-fnr), np.log(fpr))
    fail = -np.expm1(logs.sum(axis=1))
    return np.asarray(np.where(code_ok, fail, 1.0), dtype=np.float64)
