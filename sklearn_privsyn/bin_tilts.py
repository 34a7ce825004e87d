"""The shape inside a bin that nothing measured: a tilt from the neighbouring bins.

Where a fit measures a binned number finely (:mod:`sklearn_privsyn.numbers`), a
value is drawn inside its bin from that estimate. Where it does not (a thin
budget, a small table, ``number_share=0``), the model's 1-way shares of the
bins are all there is, and a uniform draw inside each bin makes a falling
density (incomes, counts, waiting times) a staircase: most of a skewed
column's mass sits in its first bin, spread evenly where the real values
crowd at its lower end.

A *tilt* draws instead from a linear density inside each bin. Its mean is the
bin's share over its width, so the bins' shares stay exactly the model's; its
slope is the change of density across the neighbouring bins (the centred
difference of the densities at the bins' midpoints), limited as a
monotonised-central slope limiter does in finite-volume schemes: zero in a bin
at a peak or a trough of the densities, never more than twice either one-sided
difference, never so steep that the density turns negative inside the bin. A
bin at either end has one neighbour and takes its one-sided difference: the
first bin of a skewed column falls as the next bins do. The tilt ``a`` of a
bin is its density's slope relative to its mean: the density at position
``t`` in ``[0, 1]`` across the bin is ``1 + a (2 t - 1)``, with ``a`` in
``[-1, 1]``.

Computed from the fitted model only (its 1-way shares, a DP output): post-
processing, no privacy cost. Chosen against uniform draws on the dev tables
with each bin's real share (``benchmarks/notes/numbers.md``, "A tilt inside
the bins nothing measured").
"""

import numpy as np

__all__ = ["bin_tilts", "tilted_cdf", "tilted_uniform"]


def bin_tilts(shares, edges):
    """Each bin's tilt (in ``[-1, 1]``) from the bins' shares and edges.

    Parameters
    ----------
    shares : array-like of shape (n_bins,)
        The bins' shares (any non-negative scale: only their ratios matter).
    edges : array-like of shape (n_bins + 1,)
        Increasing bin edges.

    Returns
    -------
    tilts : ndarray of shape (n_bins,)
        0 for an empty bin, a bin of width 0, a peak or a trough, and for a
        column of one bin.

    Examples
    --------
    >>> bin_tilts([0.6, 0.3, 0.1], [0.0, 1.0, 2.0, 3.0]).round(3).tolist()
    [-0.25, -0.417, -1.0]
    >>> bin_tilts([0.2, 0.6, 0.2], [0.0, 1.0, 2.0, 3.0]).round(3).tolist()  # a peak
    [1.0, 0.0, -1.0]
    """
    shares = np.asarray(shares, dtype=float)
    edges = np.asarray(edges, dtype=float)
    width = np.diff(edges)
    n = len(shares)
    tilts = np.zeros(n)
    if n < 2:
        return tilts
    density = np.divide(shares, width, out=np.zeros(n), where=width > 0)
    gaps = np.diff((edges[:-1] + edges[1:]) / 2)  # between the midpoints of bins i and i + 1
    step = np.divide(np.diff(density), gaps, out=np.zeros(n - 1), where=gaps > 0)
    left = np.concatenate([[np.nan], step])
    right = np.concatenate([step, [np.nan]])
    # one neighbour at either end: its one-sided difference
    left = np.where(np.isnan(left), right, left)
    right = np.where(np.isnan(right), left, right)
    central = (left + right) / 2
    same_sign = left * right > 0
    slope = np.where(same_sign, np.sign(central)
                     * np.minimum(np.abs(central), 2 * np.minimum(np.abs(left), np.abs(right))),
                     0.0)
    has_mass = (density > 0) & (width > 0)
    tilts[has_mass] = slope[has_mass] * width[has_mass] / (2 * density[has_mass])
    return np.clip(tilts, -1.0, 1.0)


def tilted_cdf(tilts, t):
    """The distribution function ``a t**2 + (1 - a) t`` of the density ``1 + a (2 t - 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> tilted_cdf(np.array([0.0, 1.0, -1.0]), np.array([0.25, 0.5, 0.5])).tolist()
    [0.25, 0.25, 0.75]
    """
    tilts = np.asarray(tilts, dtype=float)
    t = np.asarray(t, dtype=float)
    return tilts * t**2 + (1.0 - tilts) * t


def tilted_uniform(tilts, u):
    """Positions in ``[0, 1]`` with density ``1 + a (2 t - 1)`` from uniforms ``u``.

    The inverse of :func:`tilted_cdf` (``a t**2 + (1 - a) t``), written so
    that a tilt of 0 returns ``u`` itself and no tilt in ``[-1, 1]`` divides by 0.

    Examples
    --------
    >>> import numpy as np
    >>> tilted_uniform(np.array([0.0, 1.0, -1.0]), np.array([0.25, 0.25, 0.75])).tolist()
    [0.25, 0.5, 0.5]
    """
    tilts = np.asarray(tilts, dtype=float)
    u = np.asarray(u, dtype=float)
    root = np.sqrt(np.maximum((1.0 - tilts) ** 2 + 4.0 * tilts * u, 0.0))
    denominator = (1.0 - tilts) + root
    # 0 only where the tilt is 1 and u is 0: the position is then 0
    positions = np.divide(2.0 * u, denominator, out=np.zeros(np.broadcast(tilts, u).shape),
                          where=denominator > 0)
    return np.clip(positions, 0.0, 1.0)
