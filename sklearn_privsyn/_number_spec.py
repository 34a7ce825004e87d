"""The public specification of a binned number: bounds, step, points, cuts and bins.

Checks of what a user declares for a binned column (each error names the
column and never a value of the data) and the equal-width bins it implies.

*Cuts* are values where a bin must begin. A number often has a column
derived from it: an age and its age group, years of education and an
education level, a departure time and its hour. When a bin straddles a
boundary of the derived column (ages 55 to 62 in one bin, beside the groups
"50-59" and "60+"), a value drawn inside the bin cannot know the group, and
rows such as "60+" aged 58 appear. Declaring the boundaries as cuts
(``cuts={"age": [30, 40, 50, 60]}``, or ``"cuts"`` in a domain file) keeps
every bin inside one interval between cuts: the domain's equal-width bins
and the bins the numbers' measurement re-cuts at private quantiles. Cuts are
public knowledge like bounds and points; ``privsyn domain`` drafts them,
marked as read from the data, where a category column is an interval
function of a number.

A *log scale* (``log_scale=["volume"]``, or ``"scale": "log"`` in a domain
file) spaces a number's bins, and the cells of its fine measurement, evenly in
``log(x - lo + c)`` rather than in ``x`` (:func:`to_log_scale`): for sales
volumes, incomes or amounts owed, where most values are small and a few are
thousands of times larger, equal-width cells put nearly every row in the
first one, and a value drawn inside it is then uniform over a range the
values barely use. ``c`` is the bounds' span over ``LOG_SPAN`` (at least the
step): the cells cover about ``log10(LOG_SPAN)`` decades above ``lo``. Above a
positive ``lo``, ``c`` is at least ``lo`` itself, and the scale is then
``log(x)``: prices from 326 or incomes from 1,009 are spread evenly over their
ratios, where an offset of 1 crowded half the cells into the lowest 1% of the
range. ``log_scale={"income": "bins"}`` (``"scale": "log-bins"``) puts the bins
alone on the log scale and keeps the fine cells equal-width (:func:`log_scales`).
Its ``b`` bins span ``2**b`` (``c`` the span over ``2**b``): each bin about an
octave wide, where ``LOG_SPAN`` would give ten bins sixteen octaves, the lowest
four ending below 3,000 of a span of 2.3 million (incomes: all but empty bins,
each of which the noise of a thin budget fills).

It also holds :func:`float_values`, how every module reads a column as numbers.
"""

from numbers import Real

import numpy as np
import pandas as pd

__all__ = ["LOG_SPAN", "allocate_bins", "check_bounds", "check_cuts", "check_points",
           "check_step", "cut_edges", "float_values", "from_log_scale", "integer_ranges",
           "interval_capacity", "log_offset", "log_scales", "step_units", "to_log_scale"]

#: A log scale's span over its offset: its cells cover about log10(LOG_SPAN) decades.
LOG_SPAN = 2.0**16


def float_values(series):
    """A column's values as floats: NaN where missing or not a number.

    Examples
    --------
    >>> float_values(pd.Series([1, None, "x"], dtype=object)).tolist()
    [1.0, nan, nan]
    """
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def step_units(values, step):
    """``values / step``, a multiple of ``step`` as its exact whole number of steps.

    A value written in decimal and a multiple computed in binary differ in their last
    bit (6 knots in miles an hour: ``6.904679999999999`` in a table, ``6 * 1.15078 =
    6.90468`` on the grid); compared in steps they are one value, on the same side of
    every edge. Without a step (``None``), the values as they are, as floats.

    Examples
    --------
    >>> step_units(np.array([6.904679999999999, 6.90468, 7.0]), 1.15078).tolist()[:2]
    [6.0, 6.0]
    >>> step_units([0.5, 2.0], None).tolist()
    [0.5, 2.0]
    """
    if step is None:
        return np.asarray(values, dtype=float)
    units = np.asarray(values, dtype=float) / step
    whole = np.round(units)
    return np.where(np.abs(units - whole) <= 1e-9 * np.maximum(1.0, np.abs(whole)), whole, units)


def draw_between(first, last, u, skipped=()):
    """A uniform whole number in ``first .. last`` from uniforms ``u``, the ``skipped`` left out.

    A bin's code stands for its values other than the column's points (a row equal to a
    point has the point's code), so a value drawn for it is not a point; where every
    number in the range is skipped, the draw keeps them all.

    Examples
    --------
    >>> draw_between(np.zeros(4), np.full(4, 3.0), np.array([0.0, 0.4, 0.6, 0.9]),
    ...              skipped=[1.0]).tolist()
    [0.0, 2.0, 2.0, 3.0]
    """
    first, last = np.asarray(first, float), np.asarray(last, float)
    skipped = np.unique(np.asarray(skipped, float))
    inside = [(first <= p) & (p <= last) for p in skipped]
    total = last - first + 1
    free = total - sum(inside, np.zeros(first.shape))
    keep_all = free <= 0
    free = np.where(keep_all, total, free)
    k = np.minimum(first + np.floor(u * free), first + free - 1)
    for p, within in zip(skipped, inside):  # ascending: the k-th number not skipped
        k = k + (within & ~keep_all & (p <= k))
    return k


def integer_ranges(edges):
    """Integers in bin i are lows[i] .. highs[i] (last bin closed)."""
    lows = np.ceil(edges[:-1])
    highs = np.ceil(edges[1:]) - 1
    highs[-1] = np.floor(edges[-1])
    return lows, highs


def check_bounds(name, bound):
    """Declared bounds: a pair ``lo < hi`` of finite numbers."""
    try:
        lo, hi = (float(b) for b in bound)
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds[{name!r}] must be a pair (lo, hi) of numbers; got {bound!r}."
        ) from None
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds[{name!r}] = {bound!r} must satisfy lo < hi (both finite).")
    return lo, hi


def _check_value_list(param, name, given, lo, hi, step, strict):
    """A list of distinct finite numbers within the bounds (strictly: ``strict``), on the step."""
    try:
        values = np.asarray(list(given), dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{param}[{name!r}] must be a list of numbers; got {given!r}.") from None
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise ValueError(f"{param}[{name!r}] must be a list of finite numbers; got {given!r}.")
    if len(np.unique(values)) != len(values):
        raise ValueError(f"{param}[{name!r}] has duplicates: {given!r}.")
    outside = (values <= lo) | (values >= hi) if strict else (values < lo) | (values > hi)
    if np.any(outside):
        where = f"strictly inside the column's bounds ({lo:g}, {hi:g})" if strict else (
            f"within the column's bounds [{lo:g}, {hi:g}]")
        raise ValueError(f"{param}[{name!r}] = {given!r} must lie {where}.")
    if step is not None and np.any(np.abs(values / step - np.round(values / step)) > 1e-9):
        raise ValueError(
            f"{param}[{name!r}] = {given!r} must be multiples of its step {step:g}.")
    return np.sort(values)


def check_points(name, points, lo, hi, step):
    """Declared point masses: distinct finite numbers inside the bounds, on the step grid."""
    return _check_value_list("points", name, points, lo, hi, step, strict=False)


def check_step(name, step, integer):
    """Declared step: a positive number (whole for an integer column); 1 by default for integers."""
    if step is None:
        return 1.0 if integer else None
    if isinstance(step, (bool, np.bool_)) or not isinstance(step, Real) or not (
        np.isfinite(step) and step > 0
    ):
        raise ValueError(f"steps[{name!r}] must be a positive number; got {step!r}.")
    if integer and float(step) != round(float(step)):
        raise ValueError(
            f"steps[{name!r}] = {step!r} must be a whole number: column {name!r} holds integers."
        )
    return float(step)


def check_cuts(name, cuts, lo, hi, step):
    """Declared cuts: distinct finite numbers strictly inside the bounds, on the step grid."""
    return _check_value_list("cuts", name, cuts, lo, hi, step, strict=True)


def interval_capacity(bounds, step):
    """Most bins each interval ``[bounds[i], bounds[i + 1])`` (the last closed) can hold.

    With a step, a bin must hold a multiple of it: at most one bin a value.
    """
    if step is None:
        return np.full(len(bounds) - 1, np.inf)
    scaled = np.asarray(bounds, float) / step
    lows = np.ceil(scaled[:-1] - 1e-9)
    highs = np.ceil(scaled[1:] - 1e-9) - 1
    highs[-1] = np.floor(scaled[-1] + 1e-9)
    return np.maximum(highs - lows + 1, 1)


def allocate_bins(n_bins, weights, capacity):
    """Bins for each interval: at least one each, the rest in proportion to ``weights``.

    Highest averages (the next bin goes to the interval of the largest
    ``weight / bins``), within each interval's capacity; ``max(n_bins,
    len(weights))`` bins in all, fewer only when the capacities are full.

    Examples
    --------
    >>> allocate_bins(10, [1.0, 3.0], [100, 100]).tolist()
    [3, 7]
    >>> allocate_bins(3, [1.0, 1.0, 1.0, 1.0], [5, 5, 5, 5]).tolist()
    [1, 1, 1, 1]
    """
    weights = np.maximum(np.asarray(weights, float), 0.0)
    capacity = np.asarray(capacity, float)
    k = np.ones(len(weights), dtype=int)
    for _ in range(int(n_bins) - len(weights)):
        room = k < capacity
        if not room.any():
            break
        score = np.where(room, weights / k, -np.inf)
        if not np.any(score > 0):  # no weight left: the widest room
            score = np.where(room, capacity - k, -np.inf)
        k[int(np.argmax(score))] += 1
    return k


def log_offset(lo, hi, step=None, span=LOG_SPAN):
    """The offset ``c`` of a log scale on ``[lo, hi]``: ``(hi - lo) / span``, at least
    the step and at least a positive ``lo`` (whose scale is then ``log(x)``).

    Examples
    --------
    >>> log_offset(0.0, 65536.0), log_offset(0.0, 100.0, 1.0), log_offset(326.0, 18823.0, 1.0)
    (1.0, 1.0, 326.0)
    >>> log_offset(0.0, 65536.0, span=2.0**10)
    64.0
    """
    return max((hi - lo) / span, step or 0.0, lo)


def to_log_scale(x, lo, hi, step=None, span=LOG_SPAN):
    """Values of ``[lo, hi]`` on the log scale: ``log(x - lo + c)`` (:func:`log_offset`)."""
    return np.log(np.asarray(x, float) - lo + log_offset(lo, hi, step, span))


def from_log_scale(u, lo, hi, step=None, span=LOG_SPAN):
    """The inverse of :func:`to_log_scale`, kept within ``[lo, hi]``.

    Examples
    --------
    >>> u = to_log_scale([0.0, 9.0, 99.0], 0.0, 99.0, 1.0)
    >>> from_log_scale(u, 0.0, 99.0, 1.0).round(9).tolist()
    [0.0, 9.0, 99.0]
    """
    x = np.exp(np.asarray(u, float)) + lo - log_offset(lo, hi, step, span)
    return np.clip(x, lo, hi)


def cut_edges(lo, hi, n_bins, cuts, step=None, log=False):
    """Edges of ``n_bins`` bins (more if the cuts need them): equal-width between cuts.

    Each interval between consecutive cuts gets bins in proportion to its
    width (at least one); with no cut these are ``n_bins`` equal-width bins.
    With ``log``, widths and bins are equal on the log scale
    (:func:`to_log_scale`) and the edges are then moved up to the next
    multiple of the step, if any (fewer bins when two meet); ``log="bins"``
    (the bins alone on the log scale) spans ``2**n_bins`` rather than
    ``LOG_SPAN``, each bin about an octave.

    Examples
    --------
    >>> cut_edges(0.0, 100.0, 4, []).tolist()
    [0.0, 25.0, 50.0, 75.0, 100.0]
    >>> cut_edges(0.0, 100.0, 4, [60.0]).tolist()
    [0.0, 30.0, 60.0, 80.0, 100.0]
    >>> cut_edges(0.0, 65535.0, 4, [], step=1.0, log=True).tolist()
    [0.0, 15.0, 255.0, 4095.0, 65535.0]
    >>> cut_edges(0.0, 1500.0, 4, [], step=1.0, log="bins").tolist()
    [0.0, 97.0, 293.0, 692.0, 1500.0]
    """
    if log and hi > lo:
        span = 2.0 ** int(n_bins) if log == "bins" else LOG_SPAN
        scaled = cut_edges(*to_log_scale([lo, hi], lo, hi, step, span), n_bins,
                           to_log_scale(cuts, lo, hi, step, span))
        edges = from_log_scale(scaled, lo, hi, step, span)
        edges[0], edges[-1] = lo, hi
        for cut in np.asarray(cuts, float):  # exactly, not through exp(log)
            edges[np.argmin(np.abs(edges - cut))] = cut
        if step is not None:
            inner = np.minimum(np.ceil(edges[1:-1] / step - 1e-9) * step, hi)
            edges = np.concatenate([[lo], inner, [hi]])
        return np.unique(edges)
    if len(cuts) == 0:
        return np.linspace(lo, hi, int(n_bins) + 1)
    bounds = np.concatenate([[lo], np.asarray(cuts, float), [hi]])
    counts = allocate_bins(n_bins, np.diff(bounds), interval_capacity(bounds, step))
    edges = [np.array([lo])]
    for a, b, k in zip(bounds[:-1], bounds[1:], counts):
        edges.append(np.linspace(a, b, k + 1)[1:])
    return np.concatenate(edges)


def log_scales(log_scale):
    """``{column: True or "bins"}`` from a workload's ``log_scale``.

    A list (or tuple) of columns puts their bins and fine cells on the log
    scale (``True``); a dict maps columns to ``"all"`` (the same) or
    ``"bins"`` (the bins alone).

    Examples
    --------
    >>> log_scales(["sales"])
    {'sales': True}
    >>> log_scales({"sales": "all", "income": "bins"})
    {'sales': True, 'income': 'bins'}
    """
    if log_scale is None:
        return {}
    if not isinstance(log_scale, dict):
        return {col: True for col in log_scale}
    for col, kind in log_scale.items():
        if kind not in ("all", "bins"):
            raise ValueError(f'log_scale[{col!r}] must be "all" or "bins"; got {kind!r}.')
    return {col: True if kind == "all" else "bins" for col, kind in log_scale.items()}
