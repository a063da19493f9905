"""The model: a suite of cases and checks, the builds' true verdicts, and judge noise."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from gatecal._validate import ParameterError, check_count, check_probability

__all__ = ["BUILDS", "Check", "JudgeNoise", "Suite", "case_pass_probabilities"]

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


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeNoise:
    """How often a judge verdict is wrong.

    Attributes
    ----------
    fnr : float
        P(judge says "no" | the check truly passes): a false alarm on a check.
    fpr : float
        P(judge says "yes" | the check truly fails): a missed failure.

    The article's noise model is symmetric, ``fnr == fpr == p``: see :meth:`flip`.
    """

    fnr: float
    fpr: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "fnr", check_probability("fnr", self.fnr))
        object.__setattr__(self, "fpr", check_probability("fpr", self.fpr))

    @classmethod
    def flip(cls, p: float) -> JudgeNoise:
        """Symmetric noise: every judge verdict flips with probability `p`."""
        p = check_probability("flip", p)
        return cls(fnr=p, fpr=p)


@dataclass(frozen=True, slots=True, kw_only=True)
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

    def __post_init__(self) -> None:
        cases = tuple(self.cases)
        checks = tuple(self.checks)
        if not cases:
            raise ParameterError("cases", "must name at least one case", self.cases)
        if len(set(cases)) != len(cases):
            dup = next(c for c in cases if cases.count(c) > 1)
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


def case_pass_probabilities(suite: Suite, build: str, noise: JudgeNoise) -> npt.NDArray[np.float64]:
    r"""P(case i reports pass) for every case of `build` under `noise`.

    .. math:: q_i = \prod_j P(\text{check } j \text{ of case } i \text{ reports pass})

    where the factor is :math:`1 - \mathrm{fnr}` for a truly passing judge check,
    :math:`\mathrm{fpr}` for a truly failing one, 1 for a passing code check and 0 for
    a failing one. Verdicts are independent.
    """
    truth = suite.truth_matrix(build)
    judge = suite.judge_mask()
    factor = np.where(judge, np.where(truth, 1.0 - noise.fnr, noise.fpr), np.where(truth, 1.0, 0.0))
    return np.asarray(np.prod(factor, axis=1), dtype=np.float64)
