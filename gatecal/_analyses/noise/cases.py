"""Each case's own record in the known-good runs: how much cases differ, how much runs do.

A real judge errs case by case: at temperature 0 some cases fail in every known-good run
and the rest never do. One pooled failure rate hides that. Here each case ``i`` has its own
healthy failure rate ``p_i``, spread across the suite's cases by a Beta distribution
(mean ``m``, spread ``phi = 1 / (a + b + 1)``, the share of a verdict's variance that lies
between cases: 0 when every case fails at one rate, near 1 when each case either always or
never fails). ``(m, phi)`` is fitted by maximum likelihood of the beta-binomial of the
cases' failure counts, and each case's healthy rate is its predictive (posterior mean)
rate under that fit::

    p_i = (f_i + a) / (r_i + a + b)

so a case that failed 0 of 30 runs gets a small rate, not zero, and one that failed 30 of
30 a rate near one (shrinkage toward the suite).

Whole runs may still vary together (a judge off on a whole run). Given each case's rate,
that is a run effect ``v_t ~ N(0, 1)`` shared by every case of run ``t``: case ``i``
fails in that run with probability ``Phi((Phi^-1(p_i) + sqrt(rho) v_t) / sqrt(1 - rho))``
(a probit random effect: every case keeps its own marginal rate ``p_i``, and ``rho`` is
the latent correlation of two verdicts of one run). ``rho`` is fitted by maximum
likelihood over the runs-by-cases outcomes (Gauss-Hermite quadrature over ``v``), with
its one-sided profile-likelihood bound.

A case is **systematic** when its healthy rate is more likely above 0.9 than below given
its record: ``P(p_i > 0.9 | its record) >= 1/2`` under the fitted Beta (its posterior
median above 0.9: at temperature 0's fit, 29 or 30 failures of 30 runs; at temperature
0.8's, 26 of 30 is not). Such a case is a judge error
or a broken test to fix, not a flaky one, and carries no evidence about a regression:
it fails whether or not the build regressed. **Stable**: never failed. **Flaky**: the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from gatecal._common.contracts import FieldsJSON
from gatecal._common.quantiles import chi2_ppf, chi2_sf
from gatecal._common.validate import ParameterError, check_probability
from gatecal._model.arrays import Floats, Ints

__all__ = [
    "SYSTEMATIC_CERTAINTY",
    "SYSTEMATIC_RATE",
    "CaseRecord",
    "CaseSpread",
    "case_spread",
]

Kind = Literal["stable", "flaky", "systematic"]

#: A case is systematic when P(its healthy rate > SYSTEMATIC_RATE | its record) is at
#: least SYSTEMATIC_CERTAINTY: its posterior median is above that rate.
SYSTEMATIC_RATE, SYSTEMATIC_CERTAINTY = 0.9, 0.5
#: The one-sided level of the bounds the case gate uses (as recommend's count gate).
CASE_GATE_LEVEL = 0.995
#: The one-sided level of the run correlation's bound.
RUN_LEVEL = 0.995
#: Spreads phi where the likelihood is profiled: 0 (cases alike) and a geometric grid.
_PHI_GRID = np.concatenate(([0.0], np.geomspace(1e-4, 0.995, 32)))
#: Latent run correlations where rho's likelihood is profiled.
_RHO_GRID = np.concatenate(([0.0], np.geomspace(1e-3, 0.95, 24)))
#: Gauss-Hermite nodes over the run effect (probabilists' weights, normalised).
GH_NODES = 24
#: Above this many case-runs, the run effect is fitted on the first runs only (its cost is
#: runs x cases x nodes per grid point).
_RUN_FIT_MAX = 400_000


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseRecord(FieldsJSON):
    """One case's record in the known-good runs and its healthy failure rate.

    Attributes
    ----------
    case : str
        The case (short name).
    failures, runs : int
        It failed in `failures` of the `runs` known-good runs it was observed in.
    rate : float
        Its predictive healthy failure rate ``(f + a) / (r + a + b)`` under the fitted
        spread across cases (shrunk toward the suite: never exactly 0 or 1).
    kind : {'stable', 'flaky', 'systematic'}
        Never failed; failed sometimes; failed (nearly) every time: a judge error or a
        broken test, no evidence about a regression.
    """

    case: str
    failures: int
    runs: int
    rate: float
    kind: Kind

    @property
    def record(self) -> str:
        """``failed 0 of 30 known-good runs``."""
        return f"failed {self.failures} of {self.runs} known-good runs"


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CaseSpread:
    """How much a suite's cases differ, and how much whole runs differ given that.

    Attributes
    ----------
    records : tuple of CaseRecord
        Every case, in the order given.
    mean, spread : float
        The fitted Beta across cases: mean healthy failure rate `m` and spread
        ``phi = 1 / (a + b + 1)`` (0: every case fails at one rate).
    spread_p_value : float
        Likelihood-ratio test of ``phi = 0`` (cases alike; boundary: half chi2(1)).
    run_icc, run_icc_top : float
        The latent correlation of two verdicts of one run given each case's rate (probit
        run effect): maximum likelihood and its one-sided `level` profile bound.
    run_p_value : float
        Likelihood-ratio test of ``rho = 0``.
    region : tuple of (phi, m_low, m_high)
        The (spread, mean) set of the cases that are not systematic, fitted apart
        (`fit_mean`, `fit_spread`; a Beta across all cases bends toward the systematic
        ones and shrinks the stable ones' rates too far), whose log-likelihood is within
        ``chi2_1(2 level - 1) / 2`` of its maximum, traced at spreads ``phi``: each
        gate's bound is its largest value over it (see
        :mod:`gatecal._analyses.noise.casegate`). Their rates are their predictive rates
        under that fit; a systematic case's, under the fit across all cases.
    runs : int
        Known-good runs.
    level : float
        One-sided level of `region` and `run_icc_top`.
    """

    records: tuple[CaseRecord, ...]
    mean: float
    spread: float
    spread_p_value: float
    run_icc: float
    run_icc_top: float
    run_p_value: float
    region: tuple[tuple[float, float, float], ...]
    runs: int
    level: float
    fit_mean: float = 0.0
    fit_spread: float = 0.0
    floor: float = 0.0

    def __repr__(self) -> str:
        """One line, whatever the number of cases."""
        return (
            f"<gatecal.CaseSpread: {len(self.records)} cases over {self.runs} runs, mean "
            f"failure rate {self.mean:.4g}, spread {self.spread:.4g}, run icc {self.run_icc:.4g}>"
        )

    @property
    def cases(self) -> int:
        return len(self.records)

    @property
    def heterogeneous(self) -> bool:
        """Cases differ: the test of one rate for every case rejects at 0.05, or a case is
        systematic."""
        return self.spread_p_value < 0.05 or bool(self.systematic)

    @property
    def systematic(self) -> tuple[str, ...]:
        return tuple(r.case for r in self.records if r.kind == "systematic")

    @property
    def flaky(self) -> tuple[str, ...]:
        return tuple(r.case for r in self.records if r.kind == "flaky")

    @property
    def stable(self) -> tuple[str, ...]:
        return tuple(r.case for r in self.records if r.kind == "stable")

    @property
    def systematic_share(self) -> float:
        """The share of the known-good runs' failures that systematic cases account for."""
        total = sum(r.failures for r in self.records)
        ours = sum(r.failures for r in self.records if r.kind == "systematic")
        return ours / total if total else 0.0

    @property
    def mostly_systematic(self) -> bool:
        """At least half of the failures come from systematic cases: majority votes and
        reruns cannot help with those (the judge repeats the same verdict)."""
        return self.systematic_share >= 0.5

    def rates(self) -> Floats:
        """Every case's healthy rate (its predictive rate), in order."""
        return np.array([r.rate for r in self.records], dtype=np.float64)

    def rates_at(self, phi: float, mean: float, upper: bool = True) -> Floats:
        """Every case's rate at spread `phi` and mean `mean` of the cases that are not
        systematic (their predictive rates); a systematic case at 1 (`upper`: failing in
        every healthy run, the end that raises a false alarm) or at its own rate."""
        f = np.array([r.failures for r in self.records], dtype=np.float64)
        n = np.array([r.runs for r in self.records], dtype=np.float64)
        out = np.maximum(_predictive(f, n, phi, mean), self.floor)
        if upper:  # shrinkage raises a rate in the bound, never lowers it below the record's
            out = np.maximum(out, f / n)
        systematic = np.array([r.kind == "systematic" for r in self.records])
        out[systematic] = 1.0 if upper else self.rates()[systematic]
        return out

    def posterior_draws(self, rng: np.random.Generator, count: int) -> Floats:
        """`count` draws (rows) of every case's healthy rate from its posterior given its
        record under the spread fitted across the cases that are not systematic
        (``Beta(a + f, b + r - f)``, independent across cases); a systematic case at 1."""
        f = np.array([r.failures for r in self.records], dtype=np.float64)
        n = np.array([r.runs for r in self.records], dtype=np.float64)
        systematic = np.array([r.kind == "systematic" for r in self.records])
        if self.fit_spread <= 0.0:
            out = np.full((count, f.size), max(self.fit_mean, self.floor))
        else:
            s = 1.0 / self.fit_spread - 1.0
            a, b = self.fit_mean * s + f, (1.0 - self.fit_mean) * s + n - f
            out = rng.beta(np.maximum(a, 1e-12), np.maximum(b, 1e-12), size=(count, f.size))
        out[:, systematic] = 1.0
        return np.asarray(out, dtype=np.float64)

    def cases_differ(self) -> str:
        """How much cases differ, in words."""
        n = self.cases
        parts = [
            f"{len(self.stable)} of {n} never failed",
            f"{len(self.flaky)} failed sometimes",
            f"{len(self.systematic)} failed (nearly) every time",
        ]
        if self.spread_p_value < 0.05:
            verdict = (
                f"cases differ (spread {self.spread:.3f} of a verdict's variance lies between "
                f"cases; test of one rate for all p = {_p(self.spread_p_value)})"
            )
        else:
            verdict = (
                f"no evidence that cases differ (spread {self.spread:.3f}; test of one rate "
                f"for all p = {_p(self.spread_p_value)})"
            )
        return f"{', '.join(parts)}: {verdict}"

    def runs_differ(self) -> str:
        """How much whole runs differ given each case's own rate, in words."""
        level = f"{100 * self.level:g}%"
        if self.run_p_value < 0.05:
            return (
                f"whole runs differ beyond each case's own rate (run correlation "
                f"{self.run_icc:.3f}, up to {self.run_icc_top:.3f} at one-sided {level}; "
                f"permutation test of none p = {_p(self.run_p_value)}); the case-aware gate "
                "holds its false alarm all the same (it ranks whole runs)"
            )
        return (
            f"no evidence that whole runs differ beyond each case's own rate (permutation "
            f"test p = {_p(self.run_p_value)}); the case-aware gate does not need to know how "
            "much they do (it ranks whole runs)"
        )

    def advice(self) -> str | None:
        """What majority votes and reruns can do, when the noise is mostly systematic."""
        if not self.mostly_systematic:
            return None
        share = self.systematic_share
        return (
            f"{100 * share:.0f}% of the known-good failures come from "
            f"{len(self.systematic)} systematic case(s) ({_few(self.systematic)}): the judge "
            "(or the test) gets them wrong every time, so majority votes and reruns cannot "
            "help; fix the test or the judge's prompt for them"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean": self.mean,
            "spread": self.spread,
            "spread_p_value": self.spread_p_value,
            "heterogeneous": self.heterogeneous,
            "run_icc": self.run_icc,
            "run_icc_top": self.run_icc_top,
            "run_p_value": self.run_p_value,
            "level": self.level,
            "systematic": list(self.systematic),
            "systematic_share": self.systematic_share,
            "cases_differ": self.cases_differ(),
            "runs_differ": self.runs_differ(),
            "records": [r.to_dict() for r in self.records],
        }


def _p(x: float) -> str:
    return f"{x:.3g}"


def _few(names: tuple[str, ...], most: int = 4) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _predictive(f: Floats, n: Floats, phi: float, mean: float) -> Floats:
    if phi <= 0.0:
        return np.full(f.shape, mean)
    s = 1.0 / phi - 1.0
    return np.asarray((f + mean * s) / (n + s), dtype=np.float64)


class _CaseLikelihood:
    """The beta-binomial log-likelihood of the cases' failure counts in (m, phi), over the
    distinct (failures, runs) pairs (a big suite has few)."""

    def __init__(self, failures: Ints, runs: Ints) -> None:
        key = np.stack((failures, runs), axis=1)
        pairs, count = np.unique(key, axis=0, return_counts=True)
        self.f = pairs[:, 0].astype(np.float64)
        self.r = pairs[:, 1].astype(np.float64)
        self.w = count.astype(np.float64)
        self.memo: dict[float, tuple[float, float]] = {}

    def __call__(self, m: npt.ArrayLike, phi: float) -> Floats:
        from scipy.special import betaln, xlogy

        mm = np.atleast_1d(np.asarray(m, dtype=np.float64))[:, None]
        f, r, w = self.f[None, :], self.r[None, :], self.w[None, :]
        if phi <= 0.0:
            ll = xlogy(f, mm) + xlogy(r - f, 1.0 - mm)
        else:
            s = 1.0 / phi - 1.0
            a, b = mm * s, (1.0 - mm) * s
            ll = betaln(a + f, b + r - f) - betaln(a, b)
        return np.asarray((ll * w).sum(axis=1), dtype=np.float64)

    def profile(self, phi: float) -> tuple[float, float]:
        """(m, log-likelihood) maximising over m at spread phi (remembered)."""
        if phi not in self.memo:
            self.memo[phi] = self._profile(phi)
        return self.memo[phi]

    def _profile(self, phi: float) -> tuple[float, float]:
        from scipy import optimize

        if phi <= 0.0:
            m = float((self.f * self.w).sum() / (self.r * self.w).sum())
            m = min(max(m, 1e-12), 1 - 1e-12)
            return m, float(self(m, 0.0)[0])
        grid = _M_GRID
        values = self(grid, phi)
        i = int(np.argmax(values))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        found = optimize.minimize_scalar(
            lambda x: -float(self(_expit(x), phi)[0]),
            bounds=(_logit(lo), _logit(hi)),
            method="bounded",
            options={"xatol": 1e-9},
        )
        m = _expit(float(found.x))
        best = -float(found.fun)
        if values[i] > best:
            return float(grid[i]), float(values[i])
        return m, best


def _expit(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


_M_GRID = 1.0 / (1.0 + np.exp(-np.linspace(-14.0, 14.0, 281)))


def case_spread(
    cases: list[str],
    outcome: npt.ArrayLike,
    *,
    level: float = CASE_GATE_LEVEL,
) -> CaseSpread:
    """Measure each case's record and the spread across cases from known-good runs.

    Parameters
    ----------
    cases : list of str
        The cases, in the order of `outcome`'s columns.
    outcome : array of int, runs x cases
        1 pass, 0 fail, -1 not observed.
    level : float
        One-sided level of the (spread, mean) region and of the run correlation's bound.
    """
    from scipy.special import betainc

    y = np.asarray(outcome, dtype=np.int8)
    if y.ndim != 2 or y.shape[1] != len(cases) or not len(cases):
        raise ParameterError("outcome", "must be runs x cases, one column per case", y.shape)
    one = check_probability("level", level)
    if one <= 0.5:
        raise ParameterError("level", "must be above 0.5 (a one-sided level)", level)
    failed = (y == 0).sum(axis=0).astype(np.int64)
    seen = (y >= 0).sum(axis=0).astype(np.int64)
    if (seen == 0).any():
        raise ParameterError("outcome", "must observe every case at least once", int(seen.min()))
    phi_hat, m_hat, ll_hat, ll_zero, lik = _fit(failed, seen)
    statistic = max(0.0, 2.0 * (ll_hat - ll_zero))
    spread_p = 1.0 if statistic <= 0 else 0.5 * chi2_sf(statistic, 1)
    cutoff = chi2_ppf(2 * one - 1, 1)
    f64, n64 = failed.astype(np.float64), seen.astype(np.float64)
    rates = _predictive(f64, n64, phi_hat, m_hat)
    # P(p_i > 0.9 | record) under the fitted Beta: its posterior Beta(a + f, b + r - f)
    if phi_hat <= 0.0:
        above = np.full(rates.shape, 1.0 if m_hat > SYSTEMATIC_RATE else 0.0)
    else:
        s = 1.0 / phi_hat - 1.0
        a_post, b_post = m_hat * s + f64, (1.0 - m_hat) * s + n64 - f64
        above = 1.0 - betainc(a_post, b_post, SYSTEMATIC_RATE)
    systematic = above >= SYSTEMATIC_CERTAINTY
    kinds: list[Kind] = [
        "systematic" if sys_ else ("stable" if f == 0 else "flaky")
        for sys_, f in zip(systematic.tolist(), failed.tolist(), strict=True)
    ]
    # the other cases' rates from their own spread: a Beta fitted across all cases bends
    # toward the systematic ones (U-shaped) and shrinks the stable cases' rates too far
    rest = ~systematic
    fit_phi, fit_m, fit_ll, fit_lik = phi_hat, m_hat, ll_hat, lik
    if rest.any() and systematic.any():
        fit_phi, fit_m, fit_ll, _, fit_lik = _fit(failed[rest], seen[rest])
        rates[rest] = _predictive(f64[rest], n64[rest], fit_phi, fit_m)
    # never exactly 0: a suite that never failed still gets half a failure's rate (Jeffreys)
    floor = 0.5 / (float(n64[rest].sum()) + 1.0) if rest.any() else 0.0
    rates[rest] = np.maximum(rates[rest], floor)
    region = _region(fit_lik, fit_ll - cutoff / 2, fit_phi, fit_m)
    records = tuple(
        CaseRecord(case=c, failures=int(f), runs=int(r), rate=float(p), kind=k)
        for c, f, r, p, k in zip(
            cases, failed.tolist(), seen.tolist(), rates.tolist(), kinds, strict=True
        )
    )
    rho, rho_top, _ = _run_effect(y, rates, chi2_ppf(2 * RUN_LEVEL - 1, 1))
    rho_p = run_permutation_p(y)
    return CaseSpread(
        records=records,
        mean=m_hat,
        spread=phi_hat,
        spread_p_value=float(spread_p),
        run_icc=rho,
        run_icc_top=rho_top,
        run_p_value=rho_p,
        region=region,
        runs=int(y.shape[0]),
        level=one,
        fit_mean=fit_m,
        fit_spread=fit_phi,
        floor=floor,
    )


def _fit(failed: Ints, seen: Ints) -> tuple[float, float, float, float, _CaseLikelihood]:
    """(phi, m, log-likelihood) at the maximum, the log-likelihood at phi = 0, and the
    likelihood: the beta-binomial across these cases."""
    from scipy import optimize

    lik = _CaseLikelihood(failed, seen)
    profiles = [lik.profile(float(phi)) for phi in _PHI_GRID]
    values = np.array([v for _, v in profiles])
    best_i = int(np.argmax(values))
    # refine the maximum over phi between its grid neighbours
    lo = float(_PHI_GRID[max(best_i - 1, 0)])
    hi = float(_PHI_GRID[min(best_i + 1, _PHI_GRID.size - 1)])
    found = optimize.minimize_scalar(
        lambda x: -lik.profile(x)[1], bounds=(lo, hi), method="bounded", options={"xatol": 1e-7}
    )
    phi_hat, (m_hat, ll_hat) = float(_PHI_GRID[best_i]), profiles[best_i]
    if -float(found.fun) > ll_hat:
        phi_hat = float(found.x)
        m_hat, ll_hat = lik.profile(phi_hat)
    return phi_hat, m_hat, ll_hat, profiles[0][1], lik


def _region(
    lik: _CaseLikelihood, floor: float, phi_hat: float, m_hat: float
) -> tuple[tuple[float, float, float], ...]:
    """The (phi, m_low, m_high) of the set where the log-likelihood is at least `floor`,
    at the grid's spreads inside it and the fitted one."""
    from scipy import optimize

    out = []
    for phi in sorted({*_PHI_GRID.tolist(), phi_hat}):
        m, value = lik.profile(phi)
        if value < floor:
            continue

        def gap(x: float, phi: float = phi) -> float:
            return float(lik(_expit(x), phi)[0]) - floor

        ends = []
        for end in (-30.0, 30.0):
            if gap(end) >= 0:
                ends.append(_expit(end))
            else:
                ends.append(_expit(optimize.brentq(gap, end, _logit(m), xtol=1e-10)))
        out.append((phi, ends[0], ends[1]))
    if not out:
        out.append((phi_hat, m_hat, m_hat))
    return tuple(out)


def gh_rule(nodes: int = GH_NODES) -> tuple[Floats, Floats]:
    """Nodes and weights (summing to 1) of Gauss-Hermite quadrature against N(0, 1)."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    return x, w / w.sum()


def run_rates(rates: Floats, rho: float, v: Floats) -> Floats:
    """Each case's failure probability (columns) in a run whose effect is each of `v` (rows):
    ``Phi((Phi^-1(p) + sqrt(rho) v) / sqrt(1 - rho))``."""
    from scipy.special import ndtr, ndtri

    if rho <= 0.0:
        return np.broadcast_to(rates, (np.size(v), rates.size)).copy()
    t = ndtri(np.clip(rates, 1e-15, 1 - 1e-15))
    return np.asarray(
        ndtr((t[None, :] + math.sqrt(rho) * np.asarray(v)[:, None]) / math.sqrt(1.0 - rho)),
        dtype=np.float64,
    )


#: Permutations of the test that whole runs differ, and their seed (the same runs give the
#: same p-value).
RUN_PERMUTATIONS, RUN_SEED = 499, 20261206


def run_permutation_p(outcome: npt.ArrayLike, permutations: int = RUN_PERMUTATIONS) -> float:
    """The p-value of "whole runs do not differ beyond each case's own rate", by permuting
    each case's verdicts across runs (each case its own permutation).

    Given each case's verdicts, when runs do not differ every order of them across runs is
    equally likely, whatever the cases' rates: the test holds its level at any number of
    runs (the likelihood-ratio test it replaces called independent runs correlated in 15 of
    31 baselines of 10 runs). The statistic is the spread of the runs' failure counts
    around what their cases' rates predict, ``sum_j (F_j - E_j)^2``; the p-value
    ``(1 + #{T_b >= T}) / (1 + B)`` over `permutations` seeded draws.
    """
    y = np.asarray(outcome, dtype=np.int8)
    seen = y >= 0
    fail = y == 0
    f, m = fail.sum(axis=0), seen.sum(axis=0)
    varies = ((f > 0) & (f < m)) | ((m > 0) & (m < y.shape[0]) & (f > 0))
    if varies.sum() < 2 or y.shape[0] < 3:
        return 1.0  # one case alone (or none) cannot show whole runs moving together
    failed: Floats = fail[:, varies].astype(np.float64)
    observed_: Floats = seen[:, varies].astype(np.float64)
    rate = failed.sum(axis=0) / np.maximum(observed_.sum(axis=0), 1.0)

    def statistic(fl: Floats, sn: Floats) -> Floats:
        return np.asarray((((fl - sn * rate).sum(axis=-1)) ** 2).sum(axis=-1), dtype=np.float64)

    observed = float(statistic(failed, observed_))
    rng = np.random.default_rng(RUN_SEED)
    r, c = failed.shape
    # one code per verdict (2: failed, 1: passed, 0: no verdict), shuffled within each case
    codes = np.ascontiguousarray((failed + observed_).T.astype(np.int8))  # cases x runs
    chunk = max(1, min(permutations, 4_000_000 // max(r * c, 1)))
    above, done = 0, 0
    while done < permutations:
        b = min(chunk, permutations - done)
        shuffled = rng.permuted(np.broadcast_to(codes, (b, c, r)), axis=2)
        fl = (shuffled == 2).astype(np.float64).transpose(0, 2, 1)
        sn = (shuffled >= 1).astype(np.float64).transpose(0, 2, 1)
        above += int((statistic(fl, sn) >= observed * (1 - 1e-12)).sum())
        done += b
    return (1 + above) / (1 + permutations)


def _run_effect(
    y: npt.NDArray[np.int8], rates: Floats, cutoff: float
) -> tuple[float, float, float]:
    """(rho, its upper bound at `cutoff`, the LR test's p) of the probit run effect given
    each case's rate, by profile likelihood over :data:`_RHO_GRID` (refined at the top)."""
    from scipy import optimize

    if y.size > _RUN_FIT_MAX:
        y = y[: max(2, _RUN_FIT_MAX // y.shape[1])]
    fail = (y == 0).astype(np.float64)
    pas = (y == 1).astype(np.float64)
    x, w = gh_rule()
    logw = np.log(w)

    def ll(rho: float) -> float:
        q = np.clip(run_rates(rates, rho, x), 1e-300, 1.0)
        q1 = np.clip(1.0 - q, 1e-300, 1.0)
        per = fail @ np.log(q).T + pas @ np.log(q1).T  # runs x nodes
        top = per.max(axis=1, keepdims=True)
        return float((np.log(np.exp(per - top) @ w) + top[:, 0]).sum())

    values = np.array([ll(float(r)) for r in _RHO_GRID])
    i = int(np.argmax(values))
    rho, best = float(_RHO_GRID[i]), float(values[i])
    if 0 < i < _RHO_GRID.size - 1:
        found = optimize.minimize_scalar(
            lambda r: -ll(r),
            bounds=(float(_RHO_GRID[i - 1]), float(_RHO_GRID[i + 1])),
            method="bounded",
            options={"xatol": 1e-6},
        )
        if -float(found.fun) > best:
            rho, best = float(found.x), -float(found.fun)
    del logw
    statistic = max(0.0, 2.0 * (best - values[0]))
    p = 1.0 if statistic <= 0 else 0.5 * chi2_sf(statistic, 1)
    floor = best - cutoff / 2
    above = [j for j in range(i, _RHO_GRID.size) if values[j] < floor]
    if not above:
        top = float(_RHO_GRID[-1])
    else:
        j = above[0]
        a = max(rho, float(_RHO_GRID[j - 1])) if j > 0 else 0.0
        top = float(optimize.brentq(lambda r: ll(r) - floor, a, float(_RHO_GRID[j]), xtol=1e-6))
    return rho, top, float(p)
