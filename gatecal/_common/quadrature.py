"""Gauss rules for expectations over a Beta distribution.

A probability that is a polynomial in a flip rate x, averaged over x ~ Beta(a, b), is a
finite sum over a few nodes: the run's rate under run-level correlation (``icc``) and each
case's own rate when cases spread (``case_spread``) both use these rules.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["beta_nodes", "beta_rule"]


def beta_nodes(
    a: float, b: float, degree: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    r"""Gauss-Jacobi nodes and weights for :math:`E[f(X)]`, :math:`X \sim \mathrm{Beta}(a, b)`.

    Exact for every polynomial f of degree at most `degree` (up to rounding): the
    rule with ``degree // 2 + 1`` nodes integrates such a polynomial against the
    Beta density exactly. Nodes lie in (0, 1); weights are positive and sum to 1.

    Parameters
    ----------
    a, b : float
        The Beta shape parameters, above 0.
    degree : int
        The highest polynomial degree to integrate exactly, at least 0; the rule has
        ``degree // 2 + 1`` nodes.

    Returns
    -------
    (nodes, weights) : tuple of ndarray of float
        The nodes in (0, 1) and their positive weights, which sum to 1.
    """
    import warnings

    from scipy.special import roots_jacobi  # deferred: `import gatecal` stays light

    count = degree // 2 + 1
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            nodes, weights = roots_jacobi(count, b - 1.0, a - 1.0)  # (1-t)^(b-1)(1+t)^(a-1)
            total = weights.sum()
            usable = bool(
                np.all(np.isfinite(nodes))
                and np.isfinite(total)
                and total > 0
                and np.all(weights >= 0)
            )
    except ValueError:  # a - 1 rounds to -1 for a below 1e-16
        return beta_rule(a, b, count)
    if usable:
        return (nodes + 1.0) / 2.0, weights / total
    # scipy's rule fails (NaN) for a + b near 1000 and up, i.e. a small icc, and for a
    # or b near 0: the Jacobi matrix is stable there
    return beta_rule(a, b, count)


def beta_rule(
    a: float, b: float, nodes: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Gauss rule for ``E f(X)``, X ~ Beta(a, b): exact for polynomials of degree below
    ``2 * nodes``. Built from the Jacobi matrix (Golub & Welsch 1969), which stays
    accurate for the large a + b of a small icc, where scipy's roots_jacobi returns NaN.

    The recurrence of the Jacobi polynomials with alpha = b - 1, beta = a - 1 is written
    in a and b themselves (``1 + beta`` is ``a``, not ``(a - 1) + 1``, which is 0 for a
    below 1e-16) and its off-diagonal as a product of bounded ratios, so nothing cancels
    or overflows for any a, b > 0 up to about 1e150.
    """
    from scipy.linalg import eigh_tridiagonal

    k = np.arange(1, nodes, dtype=np.float64)
    total = a + b
    diag = np.empty(nodes)
    diag[0] = (a - b) / total
    two_k = 2 * k + total  # 2k + alpha + beta + 2
    diag[1:] = (a - b) / two_k * ((total - 2) / (two_k - 2))
    off = np.empty(max(nodes - 1, 0))
    if nodes > 1:
        off[0] = 4 * (a / total) * (b / total) / (total + 1)
        kk = k[1:]
        base = 2 * kk + total - 2  # 2k + alpha + beta
        off[1:] = (
            4
            * kk
            * ((kk + b - 1) / base)
            * ((kk + a - 1) / base)
            * ((kk + total - 2) / ((base + 1) * (base - 1)))
        )
    t, vectors = eigh_tridiagonal(diag, np.sqrt(np.maximum(off, 0.0)))
    w = vectors[0] ** 2
    return np.clip((1 + t) / 2, 0.0, 1.0), w / w.sum()
