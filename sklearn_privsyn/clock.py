"""Clock times written as HHMM numbers, modelled as minutes since midnight.

Tables often hold times of day as numbers: a departure at 5:17 is ``517``,
midnight ``0`` or ``2400``. Binned as numbers they go wrong twice: a bin such
as ``[480, 720)`` holds 8:00 to 11:59 *and* the numbers 460-499 that are no
time at all, and a value drawn inside it is ``565`` (5:65) in 40% of draws.
A column declared a *clock* (``clocks=`` in :class:`~sklearn_privsyn.QueryWorkload`,
``"clock": true`` in a domain file) is modelled in minutes since midnight,
``60 * hour + minute``: its bins are spans of time, its fine measurement runs
over real minutes, and every decoded value is a time of day again. Its
bounds, points, cuts and bin edges are declared as HHMM numbers, as the
column holds them; its ``step`` is in minutes.

The map is a bijection between the HHMM numbers ``0 .. 2400`` whose last two
digits are below 60 and the minutes ``0 .. 1440`` (``2400`` is ``1440``, the
end of the day, apart from ``0``).

Examples
--------
>>> import numpy as np
>>> from sklearn_privsyn.clock import hhmm_to_minutes, minutes_to_hhmm
>>> hhmm_to_minutes(np.array([0.0, 517.0, 2359.0, 2400.0])).tolist()
[0.0, 317.0, 1439.0, 1440.0]
>>> minutes_to_hhmm(np.array([317.0, 1440.0])).tolist()
[517.0, 2400.0]
>>> minutes_to_hhmm(np.array([0.0, 1500.0]), wrap=2400).tolist()  # midnight as 2400
[2400.0, 100.0]
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd

from ._number_spec import check_bounds, float_values

__all__ = ["MIDNIGHTS", "MINUTES_A_DAY", "check_clock_values", "clock_spec_in_minutes",
           "hhmm_to_minutes", "is_hhmm", "minutes_to_hhmm"]

#: Minutes in a day: a clock's values run over ``0 .. MINUTES_A_DAY``.
MINUTES_A_DAY = 1440
#: How a wrapped clock writes midnight: ``0`` (00:00) or ``2400`` (24:00).
MIDNIGHTS = (0, 2400)


def is_hhmm(values):
    """Whether each value is a time of day written HHMM (whole, 0 to 2400, minutes below 60)."""
    values = np.asarray(values, dtype=float)
    with np.errstate(invalid="ignore"):
        return ((values == np.round(values)) & (values >= 0) & (values <= 2400)
                & (np.mod(values, 100) < 60))


def hhmm_to_minutes(values):
    """Minutes since midnight of HHMM numbers (``517`` -> ``317``); NaN stays NaN."""
    values = np.asarray(values, dtype=float)
    hours = np.floor(values / 100)
    return hours * 60 + (values - 100 * hours)


def minutes_to_hhmm(minutes, wrap=None):
    """HHMM numbers of minutes since midnight (``317`` -> ``517``); NaN stays NaN.

    Minutes are whole numbers in ``0 .. 1440`` (``1440`` is ``2400``). With
    ``wrap`` (one of :data:`MIDNIGHTS`) any whole number of minutes is first
    taken modulo a day (a departure 30 minutes after 23:50 is at 0:20), and
    midnight is written ``wrap``.
    """
    minutes = np.asarray(minutes, dtype=float)
    if wrap is not None:
        minutes = np.mod(minutes, MINUTES_A_DAY)
        if wrap == 2400:
            minutes = np.where(minutes == 0, MINUTES_A_DAY, minutes)
    hours = np.floor(minutes / 60)
    return hours * 100 + (minutes - 60 * hours) + 0.0


def check_clock_values(name, values, what="values"):
    """``values`` (HHMM numbers, no NaN) in minutes; ``ValueError`` naming the column if
    one is no time of day. The message names no value: it may come from the data."""
    values = np.asarray(values, dtype=float)
    if not np.all(is_hhmm(values)):
        raise ValueError(
            f"Column {name!r} is declared a clock (a time of day written HHMM), but its "
            f"{what} hold numbers that are no time of day: a clock's values are whole "
            "numbers from 0 to 2400 whose last two digits are below 60."
        )
    return hhmm_to_minutes(values)


def clock_spec_in_minutes(name, series, bound, bin_spec, points, cuts):
    """A clock column's series, bounds, edges, points and cuts in minutes (HHMM given)."""
    def minutes(values, what):
        try:
            values = np.asarray(list(values), dtype=float)
        except (TypeError, ValueError):
            return values  # not numbers: the usual checks say so
        return check_clock_values(name, values, what)

    if bound is not None:
        bound = tuple(minutes(check_bounds(name, bound), "bounds"))
    if not isinstance(bin_spec, (Integral, bool, np.bool_)) and np.ndim(bin_spec) == 1:
        bin_spec = minutes(bin_spec, "bin edges")
    points = None if points is None else minutes(points, "points")
    cuts = None if cuts is None else minutes(cuts, "cuts")
    values = float_values(series).copy()  # written into below
    known = np.isfinite(values)
    values[known] = check_clock_values(name, values[known])
    return pd.Series(values, index=series.index), bound, bin_spec, points, cuts
