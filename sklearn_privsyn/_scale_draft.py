"""Drafting a number's scale: a log scale where equal-width cells hide its values.

``privsyn domain`` drafts ``"scale": "log"`` (:mod:`sklearn_privsyn._number_spec`)
for a binned number whose values, drawn uniformly inside ``2**CELL_LEVELS``
equal-width cells of its bounds, would stray from the real ones far more than
inside as many cells equal on the log scale: the Kolmogorov-Smirnov distance
between the values and their cells' uniform spread (:func:`spread_error`) is at
least ``MIN_ERROR`` with equal widths and at most ``1 / MIN_GAIN`` of that on
the log scale. Like the bounds, it is read from the data and marked so.
"""

import numpy as np

from ._number_spec import cut_edges, float_values

__all__ = ["CELL_LEVELS", "MIN_ERROR", "MIN_GAIN", "draft_log_scale", "spread_error"]

#: The cells compared: ``2**CELL_LEVELS``, about the depth of the numbers' fine grid at eps 1.
CELL_LEVELS = 6
#: Smallest error of equal-width cells worth a log scale (a KS distance).
MIN_ERROR = 0.03
#: How many times smaller the log scale's error must be.
MIN_GAIN = 2.0


def spread_error(values, edges):
    """KS distance between ``values`` and the same mass per cell spread uniformly in each cell.

    Examples
    --------
    >>> import numpy as np
    >>> round(spread_error(np.array([0.0, 0.1, 0.2, 10.0]), np.array([0.0, 5.0, 10.0])), 3)
    0.72
    """
    x = np.sort(np.asarray(values, float))
    n = len(x)
    mass = np.histogram(x, bins=edges)[0] / n
    smooth = np.interp(x, edges, np.concatenate([[0.0], np.cumsum(mass)]))
    above = np.arange(1, n + 1) / n  # the values' CDF at each value, and just below it
    below = np.searchsorted(x, x, side="left") / n
    return float(max(np.max(np.abs(above - smooth)), np.max(np.abs(below - smooth))))


def draft_log_scale(X, domain, mark):
    """Add ``"scale": "log"`` to the drafted binned numbers that need it (read from the data).

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
        linear = spread_error(x, np.linspace(lo, hi, cells + 1))
        log = spread_error(x, cut_edges(lo, hi, cells, [], step, log=True))
        if linear >= MIN_ERROR and log * MIN_GAIN <= linear:
            entry["scale"] = "log"
            entry[mark] = True
