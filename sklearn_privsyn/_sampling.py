"""Turning a weighted set of records into rows: how many copies of each, a column's shares
among them, and re-weighting them to given shares (iterative proportional fitting)."""

import numpy as np

__all__ = ["allocate_counts", "column_shares", "rake"]

#: Iterative proportional fitting (:func:`rake`) stops when every column's shares are
#: within this (total variation; far below the sampling error of any sample), when a
#: sweep changes them by less than a tenth of that (targets the rows cannot meet together:
#: a plateau), or after RAKE_ITER sweeps.
RAKE_TOL = 1e-3
RAKE_ITER = 100


def column_shares(records, weights, a, size):
    """Column ``a``'s shares of the weighted records (``size`` codes), summing to 1.

    Examples
    --------
    >>> import numpy as np
    >>> column_shares(np.array([[0, 1], [2, 1]]), np.array([1.0, 3.0]), 0, 3).tolist()
    [0.25, 0.0, 0.75]
    """
    return np.bincount(records[:, a], weights=weights, minlength=size) / weights.sum()


def allocate_counts(weights, n_samples, rng):
    """Split ``n_samples`` rows among records in proportion to ``weights``.

    Each record gets ``floor(n * w)`` rows and the remainder is spread by
    systematic sampling, so every count is ``n * w`` rounded up or down and the
    expected count is exactly ``n * w``. This has far less variance than
    drawing rows independently, so a sample keeps the fitted answers closely.

    Examples
    --------
    >>> import numpy as np
    >>> allocate_counts([0.5, 0.25, 0.25], 8, np.random.default_rng(0)).tolist()
    [4, 2, 2]
    """
    expected = n_samples * np.asarray(weights, dtype=float)
    counts = np.floor(expected).astype(np.int64)
    remainder = expected - counts
    missing = n_samples - int(counts.sum())
    if missing > 0:
        cumulative = np.cumsum(remainder)
        points = rng.uniform() + np.arange(missing)
        picked = np.searchsorted(cumulative, points, side="right")
        picked = np.minimum(picked, len(counts) - 1)
        np.add.at(counts, picked, 1)
    return counts


def rake(codes, sizes, targets, *, initial=None, tol=RAKE_TOL, max_iter=RAKE_ITER,
         return_factors=False):
    """Weights of ``codes``' rows whose per-column shares match ``targets`` (IPF).

    Starting from ``initial`` (equal weights by default), each sweep scales
    the weights so that one column at a time has its target shares; the
    fixed point is the re-weighting closest to ``initial`` in
    Kullback-Leibler divergence with those shares. A target cell no row holds
    cannot be met: the other cells are matched, renormalised. Targets the rows cannot meet together (rules that
    tie two columns' values, with shares of the model that do not agree) stall
    the sweeps short of ``tol``: they stop when a sweep gains less than a tenth
    of it.

    Parameters
    ----------
    codes : ndarray of shape (n_rows, n_columns)
    sizes : sequence of int
        Number of codes of each column.
    targets : list of ndarray or None
        Shares of each column's codes (each sums to 1); None leaves a column
        as it is.
    initial : ndarray of shape (n_rows,), default=None
        Non-negative starting weights (a row of weight 0 keeps it).
    return_factors : bool, default=False
        Whether to return each column's factors too.

    Returns
    -------
    weights : ndarray of shape (n_rows,), summing to 1.
    factors : list of ndarray
        Only with ``return_factors``: each column's factor of each code (1 for
        a code no row holds, and for a column left as it is); the weights are
        ``initial`` times the product of the factors of a row's codes,
        normalised.

    Examples
    --------
    >>> import numpy as np
    >>> w = rake(np.array([[0], [0], [1]]), [2], [np.array([0.5, 0.5])])
    >>> w.round(3).tolist()
    [0.25, 0.25, 0.5]
    """
    if initial is None:
        weights = np.full(len(codes), 1.0 / len(codes))
    else:
        weights = np.asarray(initial, dtype=float) / np.sum(initial)
    columns = [np.ascontiguousarray(codes[:, a]) for a in range(len(sizes))]
    factors = [np.ones(size) for size in sizes]
    before = np.inf
    for _ in range(max_iter):
        worst = 0.0
        for a, size in enumerate(sizes):
            if targets[a] is None:
                continue
            current = np.bincount(columns[a], weights=weights, minlength=size)
            held = current > 0
            target = np.where(held, targets[a], 0.0)
            target = target / target.sum()
            worst = max(worst, 0.5 * float(np.abs(current - target).sum()))
            factor = np.divide(target, current, out=np.ones(size), where=held)
            weights = weights * factor[columns[a]]
            total = weights.sum()
            weights /= total
            factors[a] *= factor / total
        if worst <= tol or abs(before - worst) < tol / 10:
            break
        before = worst
    return (weights, factors) if return_factors else weights
