"""Drafting a number's scale: a log scale where equal-width cells hide its values.

``privsyn domain`` drafts ``"scale": "log"`` (:mod:`sklearn_privsyn._number_spec`)
for a binned number whose values, drawn uniformly inside ``2**CELL_LEVELS``
equal-width cells of its bounds, would stray from the real ones far more than
inside as many cells equal on the log scale: the Kolmogorov-Smirnov distance
between the values and their cells' uniform spread (:func:`spread_error`) is at
least ``MIN_ERROR`` with equal widths and at most ``1 / MIN_GAIN`` of that on
the log scale. Otherwise it drafts ``"scale": "log-bins"`` (the drafted bins on
the log scale, the fine cells equal-width) where the same holds of the column's
drafted bins, each drawn from as a fit without a fine measurement draws from
it (:func:`tilted_error`): what the bins show matters only where no fine grid
is measured, and there the cells' scale plays no part. Like the bounds, it is
read from the data and marked so.
"""

import numpy as np

from ._number_spec import cut_edges, float_values
from .bin_tilts import bin_tilts, tilted_cdf

__all__ = ["CELL_LEVELS", "MIN_ERROR", "MIN_GAIN", "draft_log_scale", "spread_error",
           "tilted_error"]

#: The cells compared: ``2**CELL_LEVELS``, about the depth of the numbers' fine grid at eps 1.
CELL_LEVELS = 6
#: Smallest error of equal-width cells worth a log scale (a KS distance).
MIN_ERROR = 0.03
#: How many times smaller the log scale's error must be.
MIN_GAIN = 2.0


def _cell_errors(values, edges, tilted):
    x = np.sort(np.asarray(values, float))
    n = len(x)
    mass = np.histogram(x, bins=edges)[0] / n
    cell = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(mass) - 1)
    width = np.diff(edges)[cell]
    t = np.divide(x - edges[cell], width, out=np.zeros(n), where=width > 0)
    a = bin_tilts(mass, edges)[cell] if tilted else 0.0
    model = np.concatenate([[0.0], np.cumsum(mass)])[cell] + mass[cell] * tilted_cdf(a, t)
    above = np.arange(1, n + 1) / n  # the values' CDF at each value, and just below it
    below = np.searchsorted(x, x, side="left") / n
    return float(max(np.max(np.abs(above - model)), np.max(np.abs(below - model))))


def spread_error(values, edges):
    """KS distance between ``values`` and the same mass per cell spread uniformly in each cell.

    Examples
    --------
    >>> import numpy as np
    >>> round(spread_error(np.array([0.0, 0.1, 0.2, 10.0]), np.array([0.0, 5.0, 10.0])), 3)
    0.72
    """
    return _cell_errors(values, edges, tilted=False)


def tilted_error(values, edges):
    """KS distance between ``values`` and the same mass per cell drawn with the cells' tilts.

    The tilts (:func:`~sklearn_privsyn.bin_tilts.bin_tilts`) are those of the
    cells' own shares: how a fit that measures no number finely draws inside
    its bins.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.5, 1.0, 1.5, 2.0, 5.0, 6.0, 9.0])
    >>> edges = np.array([0.0, 5.0, 10.0])
    >>> round(spread_error(x, edges), 3), round(tilted_error(x, edges), 3)
    (0.343, 0.326)
    """
    return _cell_errors(values, edges, tilted=True)


def _gains(linear, log):
    return linear >= MIN_ERROR and log * MIN_GAIN <= linear


def draft_log_scale(X, domain, mark):
    """Add ``"scale": "log"`` or ``"log-bins"`` to the drafted binned numbers that need it.

    A column's values besides its points are compared; too few (under
    ``2**CELL_LEVELS``) and a constant column keep the linear scale.
    """
    for col, entry in domain.items():
        if "bounds" not in entry or entry.get("clock") or entry.get("scale"):
            continue
        lo, hi = (float(b) for b in entry["bounds"])
        x = float_values(X[col])
        x = x[np.isfinite(x) & ~np.isin(x, entry.get("points", []))]
        if hi <= lo or len(x) < 2**CELL_LEVELS:
            continue
        x = np.clip(x, lo, hi)
        cells = 2**CELL_LEVELS
        # the offset of the column's own scale: at least its step (1 for whole numbers)
        step = entry.get("step", 1.0 if np.all(x == np.round(x)) else None)
        if _gains(spread_error(x, np.linspace(lo, hi, cells + 1)),
                  spread_error(x, cut_edges(lo, hi, cells, [], step, log=True))):
            entry["scale"] = "log"
            entry[mark] = True
            continue
        bins, cuts = entry.get("bins"), entry.get("cuts", [])
        if not isinstance(bins, int) or bins < 2:
            continue
        if _gains(tilted_error(x, cut_edges(lo, hi, bins, cuts, step)),
                  tilted_error(x, cut_edges(lo, hi, bins, cuts, step, log="bins"))):
            entry["scale"] = "log-bins"
            entry[mark] = True
