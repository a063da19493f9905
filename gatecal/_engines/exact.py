"""Exact engine: the Poisson-binomial distribution of the number of passing cases."""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gatecal._common.quadrature import beta_nodes
from gatecal._common.validate import ParameterError, check_count, check_instance
from gatecal._model.suite import JudgeNoise, Suite, case_fail_probabilities, case_pass_probabilities

Floats = npt.NDArray[np.float64]

__all__ = [
    "PassCountDistribution",
    "beta_binomial_pmf",
    "beta_binomial_window",
    "beta_nodes",
    "exact_pass_counts",
    "false_alarm_grid",
    "group_binomial_mixture",
    "log_prefix",
    "operating_table",
    "pass_count_pmf",
    "pass_count_pmfs",
    "shared_rate_nodes",
]


def pass_count_pmf(q: npt.ArrayLike, fail: npt.ArrayLike | None = None) -> npt.NDArray[np.float64]:
    r"""PMF of :math:`K = \sum_i X_i`, :math:`X_i \sim \mathrm{Bernoulli}(q_i)` independent.

    The O(n²) recursion of Biscarri, Zhao & Brunner (2018), eq. 2: adding case i
    maps ``pmf[k] <- (1 - q_i) pmf[k] + q_i pmf[k - 1]``. Every step is a convex
    combination of non-negative numbers, so each entry keeps its *relative*
    accuracy (a few ulps per case), however far into the tail it lies. A
    characteristic-function (DFT) method has only absolute accuracy ~1e-16 and
    can return negative values there.

    Parameters
    ----------
    q : array_like, shape (n,)
        Per-case pass probabilities in [0, 1].
    fail : array_like, shape (n,), optional
        The same cases' failure probabilities, when they are known more accurately
        than ``1 - q`` (which is 0 for q within 1e-16 of 1): see
        :func:`gatecal.case_fail_probabilities`.

    Returns
    -------
    ndarray, shape (n + 1,)
        ``pmf[k] = P(K = k)``.

    References
    ----------
    .. [1] W. Biscarri, S. D. Zhao, R. J. Brunner, "A simple and fast method for
       computing the Poisson binomial distribution function", Computational
       Statistics & Data Analysis 122 (2018) 92-100.
    """
    probs = np.asarray(q, dtype=np.float64)
    if probs.ndim != 1:
        raise ParameterError("q", "must be one-dimensional", probs.shape)
    if not np.all((probs >= 0) & (probs <= 1)):  # NaN fails this too
        bad = probs[~((probs >= 0) & (probs <= 1))][0]
        raise ParameterError("q", "must hold probabilities in [0, 1]", float(bad))
    fails = 1.0 - probs if fail is None else np.asarray(fail, dtype=np.float64)
    if fails.shape != probs.shape or not np.all((fails >= 0) & (fails <= 1)):
        raise ParameterError("fail", "must hold one probability in [0, 1] per case", fail)
    if probs.size > DIVIDE_ABOVE:
        return _product_pmf(probs, fails)
    pmf = np.zeros(probs.size + 1)
    pmf[0] = 1.0
    for i, (qi, fi) in enumerate(zip(probs, fails, strict=True)):
        head = pmf[: i + 1] * qi  # mass that moves up by one passing case
        pmf[: i + 1] *= fi
        pmf[1 : i + 2] += head
    return pmf


#: Above this many cases :func:`pass_count_pmf` multiplies polynomials divide and
#: conquer (:func:`_product_pmf`); up to it, the recursion (whose results earlier
#: releases printed, to the last bit) is as fast.
DIVIDE_ABOVE = 1000
_LEAF = 64


def _trimmed(poly: npt.NDArray[np.float64], offset: int) -> tuple[npt.NDArray[np.float64], int]:
    """`poly` without its exactly-zero ends, and the power of its first kept coefficient."""
    nonzero = np.flatnonzero(poly)
    if nonzero.size == 0:
        return poly[:1], offset
    return poly[nonzero[0] : nonzero[-1] + 1], offset + int(nonzero[0])


def _product_pmf(
    probs: npt.NDArray[np.float64], fails: npt.NDArray[np.float64] | None = None
) -> npt.NDArray[np.float64]:
    r"""The Poisson-binomial pmf as the product :math:`\prod_i ((1 - q_i) + q_i z)`, divide
    and conquer.

    Blocks of :data:`_LEAF` cases get their pmfs from the recursion (all blocks at
    once), then pairs of neighbouring polynomials are multiplied by direct
    convolution (``numpy.convolve``, not an FFT) until one is left. Every product is
    a sum of products of non-negative numbers, so, as in the recursion, each
    coefficient keeps its *relative* accuracy however small it is (an FFT's error is
    absolute, ~1e-16 of the largest coefficient). Coefficients that underflowed to
    exactly 0 (below ~1e-308) are trimmed from the ends before each product: they
    contribute exactly 0, and a pmf that is 0 over most of its support (thousands
    of cases at pass rates near 1) costs only its non-zero part. Work:
    O(n * width of the non-zero support), at most the recursion's O(n^2), all in
    compiled loops.
    """
    n = probs.size
    blocks = -(-n // _LEAF)
    padded = np.zeros(blocks * _LEAF)  # a case with q = 0 multiplies by 1: padding is exact
    padded[:n] = probs
    padded_fail = np.ones(blocks * _LEAF)
    padded_fail[:n] = 1.0 - probs if fails is None else fails
    leaves = pass_count_pmfs(padded.reshape(blocks, _LEAF), padded_fail.reshape(blocks, _LEAF))
    polys = [_trimmed(leaf, 0) for leaf in leaves]
    while len(polys) > 1:
        paired = [
            _trimmed(np.convolve(a, b), a_off + b_off)
            for (a, a_off), (b, b_off) in zip(polys[0::2], polys[1::2], strict=False)
        ]
        polys = paired + polys[len(paired) * 2 :]
    poly, offset = polys[0]
    pmf = np.zeros(n + 1)
    pmf[offset : offset + poly.size] = poly[: n + 1 - offset]
    return pmf


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class PassCountDistribution:
    """Exact distribution of the passing-case count K of one build in one CI run.

    Attributes
    ----------
    case_pass_probabilities : tuple of float
        :math:`q_i`, P(case i reports pass).
    pmf : tuple of float
        ``pmf[k] = P(K = k)`` for ``k = 0..n``.
    """

    case_pass_probabilities: tuple[float, ...]
    pmf: tuple[float, ...]

    def __repr__(self) -> str:
        """One line, whatever the number of cases."""
        return (
            f"<gatecal.PassCountDistribution: exact, {self.n_cases} cases, "
            f"mean pass rate {self.mean_pass_rate:.4g}>"
        )

    @property
    def n_cases(self) -> int:
        """Number of cases, n."""
        return len(self.case_pass_probabilities)

    @property
    def mean_pass_rate(self) -> float:
        """E[K] / n, the expected share of cases that pass."""
        return math.fsum(self.case_pass_probabilities) / self.n_cases

    def failure_probability(self, k_min: int) -> float:
        """P(K < k_min): the gate "at least `k_min` cases pass" fails the build.

        Both tails are summed from the pmf and the result is ``lower / (lower +
        upper)``: a tiny tail keeps its relative accuracy, and a gate that cannot
        pass (upper tail exactly 0) fails with probability exactly 1.
        """
        lower, upper = self._tails(k_min)
        return lower / (lower + upper)

    def pass_probability(self, k_min: int) -> float:
        """P(K >= k_min), summed from the upper tail (not ``1 - failure``)."""
        lower, upper = self._tails(k_min)
        return upper / (lower + upper)

    def _tails(self, k_min: int) -> tuple[float, float]:
        k = check_count("k_min", k_min, low=0, high=self.n_cases)
        return math.fsum(self.pmf[:k]), math.fsum(self.pmf[k:])


def pass_count_pmfs(
    q: npt.NDArray[np.float64], fail: npt.NDArray[np.float64] | None = None
) -> npt.NDArray[np.float64]:
    """:func:`pass_count_pmf` of every row of `q` (shape (m, n)) at once: shape (m, n + 1).

    Parameters
    ----------
    q : ndarray of float, shape (m, n)
        Each row: one scenario's probability that each of n cases passes.
    fail : ndarray of float, shape (m, n), optional
        ``1 - q`` computed more accurately (as :func:`case_fail_probabilities` does);
        default ``1 - q``.

    Returns
    -------
    ndarray of float, shape (m, n + 1)
        Row i: P(exactly k cases pass) for k = 0..n, under row i of `q`.
    """
    fails = 1.0 - q if fail is None else fail
    pmf = np.zeros((q.shape[0], q.shape[1] + 1))
    pmf[:, 0] = 1.0
    for i in range(q.shape[1]):
        qi = q[:, i : i + 1]
        head = pmf[:, : i + 1] * qi
        pmf[:, : i + 1] *= fails[:, i : i + 1]
        pmf[:, 1 : i + 2] += head
    return pmf


#: Above this many cases the run-correlated (icc > 0) engine groups alike cases
#: (:func:`_mixture_by_groups`); up to it, the per-node recursion (whose results earlier
#: releases printed, to the last bit) is cheap.
GROUP_ABOVE = 200
_NODE_BATCH_ENTRIES = 1 << 22  # pmf entries held at once: bounded memory at any size


def _mixture_by_groups(
    suite: Suite,
    build: str,
    noise: JudgeNoise,
    xs: npt.NDArray[np.float64],
    ws: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The Beta mixture of pass-count pmfs without cubic cost: cases with the same true
    verdicts share one pass probability at every node (icc admits no per-case or
    per-check rates), so given the run's rate the count is a sum of a few binomials.

    Per node that is a product of binomial pmfs (scipy's, accurate to a few ulps
    relative in the tails) by direct convolution of their non-zero parts; the node
    weights are positive, so the mixture has no cancellation either. Work: nodes x n
    for one group (a healthy build), plus nodes x n x (smaller group) for two,
    instead of nodes x n^2; nodes are taken in batches to bound memory.
    """

    truth = suite.truth_matrix(build)
    rows, group_of_case, sizes = np.unique(truth, axis=0, return_inverse=True, return_counts=True)
    judge = suite.judge_mask()
    code_ok = np.asarray(rows[:, ~judge].all(axis=1), dtype=np.float64)
    right = rows[:, judge].sum(axis=1)  # judge checks that truly pass: report pass w.p. keep(1-x)
    wrong = (~rows[:, judge]).sum(axis=1)  # truly failing ones: report pass w.p. keep x
    keep = 1.0 - noise.unparseable
    q_groups = (
        code_ok[None, :]
        * (keep * (1.0 - xs[:, None])) ** right[None, :]
        * (keep * xs[:, None]) ** wrong[None, :]
    )  # (nodes, groups)
    pmf = group_binomial_mixture(sizes, q_groups, ws, suite.n_cases)
    q_case = (ws @ q_groups)[group_of_case.ravel()]
    return pmf, q_case


def group_binomial_mixture(
    sizes: npt.NDArray[np.int64],
    q: npt.NDArray[np.float64],
    ws: npt.NDArray[np.float64],
    n: int,
) -> npt.NDArray[np.float64]:
    """``sum_i ws[i] * pmf of sum_g Bin(sizes[g], q[i, g])`` on 0..n: per node the product
    of the groups' binomial pmfs by direct convolution of their non-zero parts, nodes in
    batches of bounded memory."""
    from scipy import stats  # deferred: `import gatecal` stays light

    pmf = np.zeros(n + 1)
    batch = max(1, _NODE_BATCH_ENTRIES // (n + 1))
    for start in range(0, ws.size, batch):
        part = slice(start, start + batch)
        per_group = [
            np.asarray(stats.binom.pmf(np.arange(size + 1)[None, :], size, q[part, g, None]))
            for g, size in enumerate(sizes.tolist())
        ]
        for i in range(per_group[0].shape[0]):
            poly, offset = _trimmed(per_group[0][i], 0)
            for g in range(1, len(per_group)):
                other, other_offset = _trimmed(per_group[g][i], 0)
                poly, offset = _trimmed(np.convolve(poly, other), offset + other_offset)
            pmf[offset : offset + poly.size] += ws[start + i] * poly
    return np.clip(pmf, 0.0, None)


def grouped_pass_count_pmf(
    q: npt.NDArray[np.float64], max_groups: int = 16
) -> npt.NDArray[np.float64]:
    """:func:`pass_count_pmf` for many cases that share a few pass probabilities.

    Cases with equal q_i form binomials (scipy's pmf: a few ulps relative, tails
    included), multiplied by direct convolution of their non-zero parts: O(n) per
    group instead of the recursion's O(n^2). With more than `max_groups` distinct values
    it is :func:`pass_count_pmf` (divide and conquer above :data:`DIVIDE_ABOVE` cases).
    """
    values, counts = np.unique(q, return_counts=True)
    if values.size > max_groups:
        return pass_count_pmf(q)
    from scipy import stats  # deferred: `import gatecal` stays light

    poly, offset = np.ones(1), 0
    for value, count in zip(values.tolist(), counts.tolist(), strict=True):
        part, part_offset = _trimmed(stats.binom.pmf(np.arange(count + 1), count, value), 0)
        poly, offset = _trimmed(np.convolve(poly, part), offset + part_offset)
    pmf = np.zeros(q.size + 1)
    pmf[offset : offset + poly.size] = poly
    return pmf


def exact_pass_counts(suite: Suite, build: str, noise: JudgeNoise) -> PassCountDistribution:
    """Exact distribution of the passing-case count of `build` under `noise`.

    With run-level correlation (``noise.icc > 0``) the run's flip rate x is
    Beta-distributed and P(K = k | x) is a polynomial in x of degree at most the
    number of judge verdicts per run, so Gauss-Jacobi quadrature with enough nodes
    gives the mixture exactly: no simulation.

    Parameters
    ----------
    suite : Suite
        The cases, their checks and their true verdicts.
    build : {"healthy", "regressed"}
        Which of the suite's truth matrices to use.
    noise : JudgeNoise
        The judge's error rates (with an unparseable share and run-level icc, if any).

    Returns
    -------
    PassCountDistribution
        ``pmf[k]``: P(exactly k cases pass in one run), for k = 0..cases; and each case's
        pass probability (averaged over the run's rate when ``icc > 0``).

    Raises
    ------
    ParameterError
        If `suite` or `noise` is of the wrong type, or `build` is not a build of the suite.

    Examples
    --------
    >>> import gatecal
    >>> suite = gatecal.Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=3)
    >>> noise = gatecal.JudgeNoise(fnr=0.03, fpr=0.03)
    >>> counts = gatecal.exact_pass_counts(suite, "healthy", noise)
    >>> f"{counts.pmf[12]:.4f}"  # every case passes: 0.97 ** 24
    '0.4814'
    """
    check_instance("suite", suite, Suite, "a gatecal.Suite")
    check_instance("noise", noise, JudgeNoise, "a gatecal.JudgeNoise")
    if not noise.run_correlated:
        q = case_pass_probabilities(suite, build, noise)
        pmf = pass_count_pmf(q, case_fail_probabilities(suite, build, noise))
    else:
        a, b = noise.beta_parameters()
        xs, ws = beta_nodes(a, b, degree=int(suite.judge_mask().sum()) * suite.n_cases)
        if suite.n_cases > GROUP_ABOVE:
            pmf, q = _mixture_by_groups(suite, build, noise, xs, ws)
        else:
            qs = np.stack([case_pass_probabilities(suite, build, noise.at(float(x))) for x in xs])
            pmf = np.clip(ws @ pass_count_pmfs(qs), 0.0, None)
            q = ws @ qs
    return PassCountDistribution(
        case_pass_probabilities=tuple(float(v) for v in q),
        pmf=tuple(float(v) for v in pmf),
    )


def shared_rate_nodes(
    suite: Suite, build: str, noise: JudgeNoise, runs: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Every case's pass probability at each node of the run-level Beta flip rate, and
    the nodes' weights: ``(q (nodes, n), weights (nodes,))``, for `runs` runs of one
    build that share their rate.

    Given the rate x the runs are independent, and any event of `runs` runs has a
    probability that is a polynomial in x of degree at most `runs` times the judge
    verdicts of one run: the Gauss-Jacobi rule of that degree mixes every such event
    exactly (to rounding). Without correlation: one node of weight 1.
    """
    check_instance("suite", suite, Suite, "a gatecal.Suite")
    check_instance("noise", noise, JudgeNoise, "a gatecal.JudgeNoise")
    runs = check_count("runs", runs, low=1)
    if not noise.run_correlated:
        return case_pass_probabilities(suite, build, noise)[None, :], np.ones(1)
    a, b = noise.beta_parameters()
    degree = runs * int(suite.judge_mask().sum()) * suite.n_cases
    xs, ws = beta_nodes(a, b, degree=max(degree, 1))
    qs = np.stack([case_pass_probabilities(suite, build, noise.at(float(x))) for x in xs])
    return qs, ws


def operating_table(
    healthy: PassCountDistribution, regressed: PassCountDistribution
) -> tuple[tuple[float, float], ...]:
    """``(false_alarm, detection)`` of the gate "at least k of n pass", for k = 0..n.

    Parameters
    ----------
    healthy, regressed : PassCountDistribution
        The passing-count distributions of the healthy and the regressed build
        (:func:`exact_pass_counts`), over the same number of cases.

    Returns
    -------
    tuple of (float, float)
        Entry k: the gate's false alarm (P(it fails the healthy build)) and its detection
        (P(it fails the regressed build)).

    Raises
    ------
    ParameterError
        If the two distributions have different numbers of cases.

    Examples
    --------
    >>> import gatecal
    >>> suite = gatecal.Suite.uniform(cases=12, judge_checks=2, code_checks=1, failing=3)
    >>> noise = gatecal.JudgeNoise(fnr=0.03, fpr=0.03)
    >>> table = gatecal.operating_table(
    ...     gatecal.exact_pass_counts(suite, "healthy", noise),
    ...     gatecal.exact_pass_counts(suite, "regressed", noise),
    ... )
    >>> false_alarm, detection = table[10]  # "at least 10 of 12 pass"
    >>> f"{false_alarm:.4f}", f"{detection:.4f}"
    ('0.0304', '1.0000')
    """
    if healthy.n_cases != regressed.n_cases:
        raise ParameterError("regressed", f"must have {healthy.n_cases} cases", regressed.n_cases)
    return tuple(
        (healthy.failure_probability(k), regressed.failure_probability(k))
        for k in range(healthy.n_cases + 1)
    )


def false_alarm_grid(
    suite: Suite,
    flips: npt.ArrayLike,
    thresholds: npt.ArrayLike,
    *,
    noise: JudgeNoise | None = None,
    build: str = "healthy",
) -> npt.NDArray[np.float64]:
    """P(the gate "pass rate >= t" fails `build`) for every flip rate (rows) and t (columns).

    `noise` is a template (unparseable share, icc, per-check rates) whose symmetric
    rate is set to each flip rate. Thresholds become k_min = ceil(n t) exactly, from
    the shortest decimal of each float.

    Parameters
    ----------
    suite : Suite
        The cases, their checks and their true verdicts.
    flips : array_like of float
        The symmetric flip rates (fnr = fpr), each in [0, 1]; one row each.
    thresholds : array_like of float
        The pass-rate thresholds, each in [0, 1]; one column each.
    noise : JudgeNoise, optional
        The template for the other noise settings; default no noise besides the flip rate.
    build : {"healthy", "regressed"}, default "healthy"
        Which of the suite's truth matrices to use.

    Returns
    -------
    ndarray of float, shape (len(flips), len(thresholds))
        P(the gate fails the build) at each flip rate and threshold.
    """
    from fractions import Fraction

    template = JudgeNoise(fnr=0.0, fpr=0.0) if noise is None else noise
    ps = np.asarray(flips, dtype=np.float64).ravel()
    ts = np.asarray(thresholds, dtype=np.float64).ravel()
    n = suite.n_cases
    k_mins = [math.ceil(n * Fraction(repr(float(t)))) for t in ts]
    grid = np.empty((ps.size, ts.size))
    for i, p in enumerate(ps):
        block = dataclasses.replace(template, fnr=float(p), fpr=float(p))
        dist = exact_pass_counts(suite, build, block)
        grid[i] = [dist.failure_probability(k) for k in k_mins]
    return grid


def log_prefix(terms: Floats) -> Floats:
    """``out[i] = terms[0] + ... + terms[i - 1]`` (``out[0] = 0``)."""
    return np.concatenate(([0.0], np.cumsum(terms)))


def beta_binomial_pmf(n: int, mean: float, icc: float) -> Floats:
    """PMF of failing cases out of n: binomial, or beta-binomial with correlation.

    Computed as the products in the overdispersion fit's likelihood (log-sums of ``log1p``
    terms), so it is accurate at every icc, including tiny ones where ``betaln`` differences
    (scipy's betabinom) cancel; at icc 0 it is the binomial. Above :data:`WINDOW_FROM`
    cases it is :func:`beta_binomial_window` placed among zeros.
    """
    start, window = beta_binomial_window(n, mean, icc)
    if window.size == n + 1:
        return window
    out = np.zeros(n + 1)
    out[start : start + window.size] = window
    return out


#: Suites of more cases than this compute the beta-binomial pmf only where double
#: precision can hold it (see :func:`beta_binomial_window`); smaller ones in full.
WINDOW_FROM = 4096
#: The window holds the pmf where it is at least the smallest normal double (2.2e-308)
#: times its largest value: _WINDOW_DEPTH (708.4) below it in logs. Below that, products
#: of ratios turn subnormal and stop at 5e-324 instead of falling to 0.
_TINY = float(np.finfo(np.float64).tiny)
_WINDOW_DEPTH = -math.log(_TINY)


def beta_binomial_window(
    n: int, mean: float, icc: float, *, normalised: bool = True, scratch: bool = False
) -> tuple[int, Floats]:
    """``(start, values)``: the failing-count pmf (:func:`beta_binomial_pmf`) is `values`
    from `start` on and 0.0 elsewhere (with ``normalised=False``, proportional to it:
    above :data:`WINDOW_FROM` cases, 1 at its mode, for callers that take ratios of its
    sums). With ``scratch=True`` (above WINDOW_FROM cases), `values` is a view of this
    thread's scratch array, valid until its next such call: a fresh array of 10^5 values
    costs the first touch of its pages each time, more than the products themselves.

    Up to :data:`WINDOW_FROM` cases, the whole pmf from 0 (:func:`_full_pmf`). Above,
    only where the pmf is at least 2.2e-308 (the smallest normal double) times its
    largest value, normalised to sum to 1 (the mass outside is below ``n 2.2e-308``),
    from the ratios ``pmf(f + 1) / pmf(f)``, each a closed form. Where the pmf is
    unimodal (icc at most 1/3: the beta mixing density's parameters sum to at least 2,
    so ``pmf(f + 1) / pmf(f) - 1`` changes sign once, from + to -; log-concave when both
    are at least 1, J-shaped when one is below), the products of those ratios outward
    from the mode (each below 1), over a stretch holding the window: its ends found
    first from the log pmf in closed form (:func:`_guess_window`), widened until both
    ends are outside it (or at 0 and n), so the cost follows the window (about 38
    standard deviations each side), not n. Otherwise (icc above 1/3, where it can be
    U-shaped) the cumulative sums of their logs from f = 0 over all n. Against mpmath's
    40 digits at 10^5 and 10^6 cases: 3e-14 to 8e-13 relative for narrow pmfs, up to
    6e-12 for ones spanning most of 10^5 cases and 6e-11 of 10^6 (the log1p products over
    n terms drift to 1e-8).
    """
    if mean <= 0 or mean >= 1:
        return 0, np.asarray(np.arange(n + 1) == (n if mean >= 1 else 0), dtype=np.float64)
    theta = icc / (1.0 - icc)
    if n <= WINDOW_FROM:
        return 0, _full_pmf(n, mean, theta)

    steps, other = _steps(n), 1.0 - mean

    if theta > 0.5:  # icc above 1/3, perhaps U-shaped: logs over all n
        counts = _log_count_ratio(n)
        logs = _scratch(n + 1, 1) if scratch else np.empty(n + 1)
        logs[0] = 0.0
        ratios = np.multiply(steps, theta, out=_scratch(n, 2) if scratch else None)
        ratios += mean
        # over 1 - mean + (n - f - 1) theta, from the counts n - f - 1 themselves
        # (``rest - f theta`` would cancel as f nears n)
        below = np.multiply(_counts_left(n), theta, out=_scratch(n, 0) if scratch else None)
        below += other
        ratios /= below
        np.log(ratios, out=ratios)
        ratios += counts
        np.cumsum(ratios, out=logs[1:])
        logs -= logs.max()
        inside = logs >= -_WINDOW_DEPTH
        first = int(inside.argmax())
        logs = logs[first : logs.size - int(inside[::-1].argmax())]
        np.exp(logs, out=logs)
        if normalised:
            logs /= logs.sum()
        return first, logs

    up, down = _count_ratio(n)
    left = _counts_left(n)
    # with theta > 0, (mean + f theta) / (1 - mean + (n - f - 1) theta) is
    # (f + mean / theta) / (n - f - 1 + (1 - mean) / theta): two passes fewer
    lead, lag = (mean / theta, other / theta) if theta > 0 else (0.0, 0.0)

    def fill(out: Floats, a: int, b: int, upward: bool) -> None:
        """`out` := ``pmf(f + 1) / pmf(f)`` for f = a..b-1 (`upward`; each below 1 from
        the mode on), or ``pmf(f) / pmf(f + 1)``: ``(n - f) / (f + 1) * (mean + f theta)
        / (1 - mean + (n - f - 1) theta)`` or its reciprocal, from the counts n - f - 1
        themselves (``rest - f`` would cancel as f nears n); written in place, one
        scratch array for the other factor (fresh arrays of 10^5 values cost their
        pages' first touch each time)."""
        if theta == 0:
            out[:] = mean / other if upward else other / mean
        else:
            part = _scratch(b - a, 0)
            np.add(steps[a:b], lead, out=out if upward else part)
            np.add(left[a:b], lag, out=part if upward else out)
            out /= part
        out *= (up if upward else down)[a:b]

    low, high, mode = _guess_window(n, mean, theta)
    while True:
        # products of the ratios outward from the mode (each below 1, so no overflow;
        # each step rounds once more, where sums of logs grew with their partial sums)
        at = mode - low
        values = _scratch(high - low + 1, 1) if scratch else np.empty(high - low + 1)
        values[at] = 1.0
        ups, downs = values[at + 1 :], values[:at]
        fill(ups, mode, high, True)
        np.cumprod(ups, out=ups)
        fill(downs, low, mode, False)
        np.cumprod(downs[::-1], out=downs[::-1])
        short_low = low > 0 and values[0] >= _TINY
        short_high = high < n and values[-1] >= _TINY
        if not (short_low or short_high):
            break
        width = high - low  # the guess fell short: twice as wide that side
        low, high = max(low - width * short_low, 0), min(high + width * short_high, n)
    held = values >= _TINY
    first = int(held.argmax())
    values = values[first : values.size - int(held[::-1].argmax())]
    if normalised:
        values /= values.sum()
    return low + first, values


def _guess_window(n: int, mean: float, theta: float) -> tuple[int, int, int]:
    """``(low, high, mode)``: where a unimodal failing-count pmf of n cases is more than
    ``_WINDOW_DEPTH + 8`` below its largest value (or 0 and n), at or beyond the last such
    f below its mode and the first above, by Newton's method on the log pmf in closed form
    (log-gamma differences, math.lgamma; the binomial's below theta 1e-9, where the
    log-gamma differences lose digits), and the mode. The log pmf's rounding is far
    below the 8 to spare; where it is not concave (a J-shaped pmf's steep end) a step
    can fall short, and :func:`beta_binomial_window` checks the ends and widens anyway."""
    lg = math.lgamma
    if theta < 1e-9:
        lp, lq = math.log(mean), math.log1p(-mean)

        def log_pmf(f: int) -> float:
            return lg(n + 1) - lg(f + 1) - lg(n - f + 1) + f * lp + (n - f) * lq

    else:
        a, b = mean / theta, (1.0 - mean) / theta

        def log_pmf(f: int) -> float:
            return -lg(f + 1) - lg(n - f + 1) + lg(f + a) - lg(a) + lg(n - f + b) - lg(b)

    # the mode: where (n - f)(mean + f theta) = (f + 1)(1 - mean + (n - f - 1) theta)
    root = (n * mean + mean - 1.0 - theta * (n - 1)) / max(1.0 - 2.0 * theta, 1e-300)
    mode = min(max(math.ceil(min(root, n)), 0), n)
    for step in (-1, 1):  # step to the larger neighbour while there is one
        while 0 <= mode + step <= n and log_pmf(mode + step) > log_pmf(mode):
            mode += step
    floor = log_pmf(mode) - _WINDOW_DEPTH - 8.0
    rho = theta / (1.0 + theta)
    sd = math.sqrt(n * mean * (1.0 - mean) * (1.0 + (n - 1) * rho))
    ends = []
    for way, bound in ((-1, 0), (1, n)):
        if log_pmf(bound) >= floor:
            ends.append(bound)
            continue
        # Newton's method along the log pmf from 38 standard deviations out (where a
        # normal's is 722 below its mode): where it is concave, a step from inside lands
        # outside, each from outside stays there, nearer
        f = min(max(mode + way * math.ceil(38.0 * sd), 0), n)
        for _ in range(4):
            if f == bound:
                break
            here = log_pmf(f)
            slope = log_pmf(f + way) - here  # per step away from the mode
            if slope >= 0:
                break
            f = min(max(f + way * math.ceil((here - floor) / -slope), 0), n)
        while f != bound and log_pmf(f) >= floor:  # (rounding): out to where it is below
            f = min(max(f + way * max(1, abs(f - mode) // 16), 0), n)
        ends.append(f)
    return ends[0], ends[1], mode


@functools.lru_cache(maxsize=4)
def _steps(n: int) -> Floats:
    """``0.0, 1.0, ..., n - 1`` (read-only)."""
    out = np.arange(n, dtype=np.float64)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=4)
def _counts_left(n: int) -> Floats:
    """``n - 1, n - 2, ..., 0`` (read-only): n - f - 1 for f = 0..n-1."""
    out = np.arange(n - 1, -1, -1, dtype=np.float64)
    out.setflags(write=False)
    return out


_SCRATCH = threading.local()


def _scratch(size: int, slot: int) -> Floats:
    """Scratch array `slot` (0, 1 or 2) of `size` floats, this thread's own, kept for the
    next call (grown as needed)."""
    bufs: list[Floats] | None = getattr(_SCRATCH, "bufs", None)
    if bufs is None:
        bufs = _SCRATCH.bufs = [np.empty(0), np.empty(0), np.empty(0)]
    if bufs[slot].size < size:
        bufs[slot] = np.empty(max(size, 1024))
    return bufs[slot][:size]


@functools.lru_cache(maxsize=4)
def _count_ratio(n: int) -> tuple[Floats, Floats]:
    """``(n - f) / (f + 1)`` and ``(f + 1) / (n - f)``, f = 0..n-1 (read-only: the binomial
    coefficients' part of every window's ratios for n cases)."""
    f = _steps(n)
    up, down = (n - f) / (f + 1), (f + 1) / (n - f)
    up.setflags(write=False)
    down.setflags(write=False)
    return up, down


@functools.lru_cache(maxsize=4)
def _log_count_ratio(n: int) -> Floats:
    """``log((n - f) / (f + 1))``, f = 0..n-1 (read-only: the binomial coefficients' part of
    every window's log ratio for n cases)."""
    f = _steps(n)
    out = np.log((n - f) / (f + 1))
    out.setflags(write=False)
    return out


def _full_pmf(n: int, mean: float, theta: float) -> Floats:
    """The pmf at f = 0..n by the log1p products (see :func:`beta_binomial_pmf`)."""
    j = np.arange(n, dtype=np.float64)
    fail = log_prefix(math.log(mean) + np.log1p(j * (theta / mean)))  # at f = 0..n
    ok = log_prefix(math.log1p(-mean) + np.log1p(j * (theta / (1.0 - mean))))  # at n - f
    norm = float(np.log1p(j * theta).sum())
    out = _log_choose(n) + fail
    out += ok[::-1]
    out -= norm
    return np.exp(out, out=out)


@functools.lru_cache(maxsize=4)
def _log_choose(n: int) -> Floats:
    """``log C(n, f)``, f = 0..n (read-only: shared by every pmf of n cases)."""
    from scipy.special import gammaln

    f = np.arange(n + 1)
    out = np.asarray(gammaln(n + 1) - gammaln(f + 1) - gammaln(n - f + 1))
    out.setflags(write=False)
    return out
