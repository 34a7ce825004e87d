"""Euclidean projection onto the probability simplex, shared by every estimate that needs it."""

import numpy as np

__all__ = ["project_to_simplex"]


def project_to_simplex(values):
    """Euclidean projection of a vector onto the probability simplex.

    Returns ``argmin_p ||p - values||_2`` subject to ``p >= 0`` and
    ``sum(p) = 1``: ``p = max(values - tau, 0)`` with the threshold ``tau``
    found from the sorted values (Held, Wolfe and Crowder 1974).

    Examples
    --------
    >>> project_to_simplex(np.array([0.5, 0.5])).tolist()
    [0.5, 0.5]
    >>> project_to_simplex(np.array([1.0, 0.5, -0.2])).tolist()
    [0.75, 0.25, 0.0]
    """
    values = np.asarray(values, dtype=float)
    ordered = np.sort(values)[::-1]
    cumulative = np.cumsum(ordered) - 1.0
    index = np.arange(1, len(values) + 1)
    positive = ordered - cumulative / index > 0
    last = int(np.flatnonzero(positive)[-1])
    tau = cumulative[last] / (last + 1)
    return np.maximum(values - tau, 0.0)
