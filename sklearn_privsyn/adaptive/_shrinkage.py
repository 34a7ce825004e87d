"""Noisy 1-way answers mixed with uniform by Stein's unbiased risk estimate.

Where the whole budget measures only the 1-way marginals (``n_rounds_ == 0``,
the thinnest budgets), a cell's noise can be as large as the whole column's
mass (noise sd 0.29 of the rows on a 1,470-row table of 31 columns at
``epsilon = 0.1``). The projection of such answers onto the simplex keeps the
few cells the noise happened to raise, and the rows then concentrate on
values chosen by the noise: on such tables rows drawn uniformly, reading no
data, had lower TVD than the fit (``benchmarks/notes/selection.md``).

Each column's estimate is instead the mixture ``(1 - lam) u + lam P(y)`` of the
uniform distribution ``u`` and the projection ``P(y)`` of its noisy answers
``y``, with the weight ``lam`` that minimises Stein's unbiased estimate of the
squared error (SURE; Stein 1981). For ``g(y)`` with Gaussian noise of sd
``sigma`` on each of the ``k`` cells, ``SURE = ||g(y) - y||**2 - k sigma**2 +
2 sigma**2 div g(y)``; the projection is affine on the face of its support
``S``, so ``div P(y) = |S| - 1`` and ``div g = lam (|S| - 1)``. With
``a = P(y) - u`` and ``b = y - u`` the estimate is quadratic in ``lam`` and its
minimum is at ``lam = (a . b - sigma**2 (|S| - 1)) / ||a||**2``, clipped to
``[0, 1]``: the agreement of the answers with their projection's departure from
uniform, less what the noise gives the ``|S| - 1`` free cells of the
projection. Columns whose answers stand clear of the noise keep ``lam = 1``
(the projection, as without this step); the weight falls as the noise grows.

Post-processing: it reads the noisy answers and ``sigma``, which is derived
from public quantities (``rho``, ``n``, the number of columns).
"""

import numpy as np

from ..simplex import project_to_simplex

__all__ = ["shrink_one_way", "shrink_toward_uniform"]


def shrink_toward_uniform(noisy, sigma):
    """One column's noisy answers as a distribution: ``(1 - lam) u + lam P(noisy)``.

    Parameters
    ----------
    noisy : array-like of shape (k,)
        Noisy answers of one column's cells (shares of the rows).
    sigma : float
        Standard deviation of the noise on each cell.

    Returns
    -------
    estimate : ndarray of shape (k,)
        On the probability simplex.
    lam : float
        The weight on the projection, in ``[0, 1]`` (see the module).

    Examples
    --------
    >>> estimate, lam = shrink_toward_uniform([0.9, 0.05, 0.05], 0.01)
    >>> round(lam, 4), estimate.round(2).tolist()
    (0.9996, [0.9, 0.05, 0.05])
    >>> estimate, lam = shrink_toward_uniform([0.6, 0.1, 0.3, 0.0], 0.3)
    >>> lam, estimate.round(3).tolist()
    (0.0, [0.25, 0.25, 0.25, 0.25])
    """
    y = np.asarray(noisy, dtype=float)
    k = y.size
    uniform = np.full(k, 1.0 / k)
    projected = project_to_simplex(y)
    a = projected - uniform
    energy = float(a @ a)
    if energy == 0.0:  # the projection is uniform itself
        return projected, 1.0
    free = np.count_nonzero(projected) - 1
    lam = (float(a @ (y - uniform)) - sigma**2 * free) / energy
    lam = float(min(max(lam, 0.0), 1.0))
    return uniform + lam * a, lam


def shrink_one_way(noisy, sizes, sigma):
    """:func:`shrink_toward_uniform` on every column's block of concatenated 1-way answers.

    Parameters
    ----------
    noisy : array-like of shape (sum(sizes),)
        Noisy 1-way answers of every column, in column order.
    sizes : sequence of int
        Cells of each column.
    sigma : float
        Noise sd on each cell.

    Returns
    -------
    estimates : ndarray of shape (sum(sizes),)
        Each block a distribution.
    factors : ndarray of shape (len(sizes),)
        Each column's ``lam``.

    Examples
    --------
    >>> estimates, factors = shrink_one_way([0.9, 0.1, 0.5, 0.2, 0.3], [2, 3], 0.001)
    >>> factors.round(3).tolist()
    [1.0, 1.0]
    """
    noisy = np.asarray(noisy, dtype=float)
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    estimates = np.empty_like(noisy)
    factors = np.empty(len(sizes))
    for j in range(len(sizes)):
        block = slice(bounds[j], bounds[j + 1])
        estimates[block], factors[j] = shrink_toward_uniform(noisy[block], sigma)
    return estimates, factors
