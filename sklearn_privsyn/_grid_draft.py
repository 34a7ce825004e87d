"""Drafting the values a binned number takes: its bounds, spikes and step.

``privsyn domain`` drafts a binned number's bounds as its smallest and largest
values, but for an isolated extreme (:func:`kept_range`: one faulty reading of
a 1,048 mph wind beside speeds up to 43 would set the width of every bin), its
spikes as ``"points"`` (:func:`spikes`), and ``"step"``
(:mod:`sklearn_privsyn._number_spec`) for one whose values are
multiples of a spacing: whole numbers with a common divisor above 1 (wind
directions in tens of degrees), and numbers that a few decimals do not write,
on a spacing they fill (a wind speed measured in knots and written in miles an
hour, multiples of 1.15078; a month written as a fraction of its year,
multiples of 1/12). Synthetic values are then multiples of it, and the fine
measurement counts each one. Like the bounds, these are read from the data
and marked so.
"""

import math

import numpy as np

__all__ = ["MAX_DIVISOR", "MAX_MEDIAN_GAP", "MAX_OUTLIER_ROWS", "MAX_OUTLIER_SHARE",
           "MIN_STEP_VALUES", "SPIKE_RATIO", "TOLERANCE", "float_step", "kept_range", "spikes",
           "whole_step"]

#: An extreme value held by at most this many rows, and at most ``MAX_OUTLIER_SHARE`` of
#: them, may be left outside the bounds.
MAX_OUTLIER_ROWS = 3
MAX_OUTLIER_SHARE = 0.001

#: A number gets a step above 1 (or a step at all, if not whole) with this many distinct values.
MIN_STEP_VALUES = 20
#: Largest median gap, in steps, between consecutive distinct values: the values fill the grid.
MAX_MEDIAN_GAP = 2
#: Largest distance of a value from its multiple of the step, relative to the largest value:
#: about two units of its last bit, so that the multiples are the values as written.
TOLERANCE = 4e-16
#: The step tried is the smallest spacing of the values divided by at most this.
MAX_DIVISOR = 4
#: A point must hold this many times the share of each neighbouring value.
SPIKE_RATIO = 2.0


def spikes(distinct, counts, point_share):
    """Of sorted ``distinct`` values held by ``counts`` rows, those held by at least
    ``point_share`` of the rows and ``SPIKE_RATIO`` times the share of each neighbouring
    value (the next smaller and larger ones, and the values one below and above for whole
    numbers), most common first."""
    share = counts / np.sum(counts)
    whole = bool(np.all(distinct == np.round(distinct)))
    lookup = dict(zip(distinct.tolist(), share.tolist()))
    found = []
    for i in np.argsort(-share, kind="stable"):
        if share[i] < point_share:
            break
        neighbours = [share[j] for j in (i - 1, i + 1) if 0 <= j < len(share)]
        if whole:
            neighbours += [lookup.get(distinct[i] - 1, 0.0), lookup.get(distinct[i] + 1, 0.0)]
        if all(share[i] >= SPIKE_RATIO * other for other in neighbours):
            found.append(distinct[i])
    return found


def kept_range(distinct, counts):
    """``(lo, hi)``: the bounds of sorted ``distinct`` values held by ``counts`` rows.

    The smallest and largest values, except an extreme held by at most
    ``MAX_OUTLIER_ROWS`` rows (and ``MAX_OUTLIER_SHARE`` of them) that lies
    farther from the next value than that value from the other end: a bound
    one row sets is a bound every other row's bins are cut by (and that row's
    value, read from the data). The rows beyond are clipped into the first or
    last bin.

    Examples
    --------
    >>> import numpy as np
    >>> speeds = np.array([0.0, 3.5, 4.6, 5.8, 40.3, 42.6, 1048.4])
    >>> kept_range(speeds, np.array([2500, 1200, 1600, 2000, 20, 20, 1]))
    (0.0, 42.6)
    >>> kept_range(np.array([0.0, 41310.0, 99999.0]), np.array([900, 1, 244]))  # top-coded
    (0.0, 99999.0)
    """
    lo, hi = 0, len(distinct) - 1
    few = min(MAX_OUTLIER_ROWS, MAX_OUTLIER_SHARE * np.sum(counts))
    if hi >= 2 and counts[hi] <= few \
            and distinct[hi] - distinct[hi - 1] > distinct[hi - 1] - distinct[lo]:
        hi -= 1
    if hi >= 2 and counts[lo] <= few \
            and distinct[lo + 1] - distinct[lo] > distinct[hi] - distinct[lo + 1]:
        lo += 1
    return float(distinct[lo]), float(distinct[hi])


def whole_step(distinct):
    """The step of whole numbers: their common divisor (1 with fewer than ``MIN_STEP_VALUES``).

    ``distinct`` are the sorted distinct values, all whole.

    Examples
    --------
    >>> import numpy as np
    >>> whole_step(np.arange(0.0, 360.0, 10.0)), whole_step(np.array([0.0, 10.0]))
    (10, 1)
    """
    step = int(np.gcd.reduce(np.abs(distinct).astype(np.int64)))
    return step if distinct.size >= MIN_STEP_VALUES else min(step, 1)  # (2 values: any)


def float_step(distinct):
    """The spacing that numbers, not all whole, are multiples of and fill; else ``None``.

    ``distinct`` are the sorted distinct finite values. The step is the shortest
    decimal whose multiples are the values (to ``TOLERANCE``), found from the
    smallest spacing of the values (or a fraction of it, down to ``1 /
    MAX_DIVISOR``); it is drafted when there are at least ``MIN_STEP_VALUES``
    values, their median gap is at most ``MAX_MEDIAN_GAP`` steps, and it is not
    a power of ten (the column's decimals say that).

    Examples
    --------
    >>> import numpy as np
    >>> knots = np.array([0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,
    ...                   21, 22, 24, 26, 911])
    >>> float_step(knots * 1.15078)
    1.15078
    >>> float_step(np.arange(24) / 100) is None   # cents: two decimals
    True
    """
    distinct = np.asarray(distinct, float)
    if distinct.size < MIN_STEP_VALUES:
        return None
    spacings = np.concatenate([np.diff(distinct), np.abs(distinct[distinct != 0])])
    smallest = float(spacings.min())
    for divisor in range(1, MAX_DIVISOR + 1):
        step = _written_step(distinct, smallest / divisor)
        if step is not None:
            break
    else:
        return None
    multiples = np.round(distinct / step)
    if np.median(np.diff(multiples)) > MAX_MEDIAN_GAP:
        return None  # a fine grid the values are spread over (ages in days as years)
    power = round(math.log10(step))
    if abs(step / 10.0 ** power - 1) < 1e-9:
        return None
    return step


def _written_step(values, guess):
    """The shortest decimal near ``guess`` whose multiples are ``values``, or ``None``."""
    k = np.round(values / guess)
    if np.max(np.abs(values / guess - k)) > 0.01:
        return None
    largest = int(np.argmax(np.abs(k)))
    fitted = float(values[largest] / k[largest])  # the largest multiple pins it to its last bit
    allowed = TOLERANCE * float(np.max(np.abs(values)))
    for digits in range(1, 18):
        step = float(f"{fitted:.{digits}g}")
        if step > 0 and np.max(np.abs(np.round(values / step) * step - values)) <= allowed:
            return step
    return None
