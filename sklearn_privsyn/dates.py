"""Days of the month: a day column that must exist in its month (no February 30).

Tables often hold a date as columns: a year, a month (1 to 12) and a day of
the month (1 to 31). Modelled as columns of their own, the day and the month
meet only through the marginals that hold both, and a thin budget cannot tell
a cell of a few tenths of a percent (February 30) from an empty one: drawn in
a bin such as ``[28, 31]``, a synthetic day does not know its month
(nycflights13 at ``epsilon = 0.1``: 1.2% of the synthetic rows were February
29 to 31 or the 31st of a 30-day month). That no month has more days than
the calendar gives it is public knowledge: declared (``days_of_month=`` in
:class:`~sklearn_privsyn.QueryWorkload`, ``"day_of"`` in a domain file), it
is kept by :meth:`~sklearn_privsyn.QueryWorkload.decode`, which redraws a
day past its month's end uniformly among the days of that month. This is
post-processing of the synthetic rows with a public rule: it reads nothing
and costs no budget.

A declaration is ``{day: month}``, or ``{day: [year, month]}`` when a year
column says whether February has its 29th (a Gregorian leap year); without a
year, February has 29 days.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from sklearn_privsyn.dates import DayOfMonth
>>> rows = pd.DataFrame({"month": [1, 2, 2, 4], "day": [31, 28, 30, 31]})
>>> DayOfMonth("day", "month").month_lengths(rows).tolist()
[31.0, 29.0, 29.0, 30.0]
>>> kept = DayOfMonth("day", "month").keep_in_month(rows, np.random.default_rng(0))
>>> bool(kept[2] <= 29 and kept[3] <= 30), kept[:2].tolist()
(True, [31, 28])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._number_spec import float_values
from ._random import uniform

__all__ = ["MONTH_LENGTHS", "DayOfMonth", "is_leap_year", "parse_days_of_month"]

#: Days of each month in a common year (February 28).
MONTH_LENGTHS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_leap_year(year):
    """Whether each (whole) year is a Gregorian leap year."""
    year = np.asarray(year, dtype=float)
    return (np.mod(year, 4) == 0) & ((np.mod(year, 100) != 0) | (np.mod(year, 400) == 0))


@dataclass(frozen=True)
class DayOfMonth:
    """A day column ``day`` that must exist in the month of column ``month`` (and of
    column ``year``, if given, for February 29)."""

    day: object
    month: object
    year: object = None

    @property
    def columns(self):
        """The columns it reads: the day, the month, and the year if any."""
        return (self.day, self.month) + (() if self.year is None else (self.year,))

    def month_lengths(self, frame):
        """Days in each row's month (NaN where the month is missing or no month 1-12)."""
        month = float_values(frame[self.month])
        known = np.isin(month, np.arange(1, 13))
        lengths = np.where(known, np.asarray(MONTH_LENGTHS, float)[
            np.where(known, month, 1).astype(int) - 1], np.nan)
        if self.year is None:
            leap = np.ones(len(month), dtype=bool)
        else:
            year = float_values(frame[self.year])
            leap = np.isnan(year) | is_leap_year(np.nan_to_num(year))
        return np.where((month == 2) & leap, 29.0, lengths)

    def keep_in_month(self, frame, rng):
        """The day column of ``frame`` with each day past its month's end redrawn uniformly
        among the days of that month (whole days, in the column's dtype)."""
        day = float_values(frame[self.day])
        lengths = self.month_lengths(frame)
        past = np.flatnonzero(day > lengths)  # False where either is missing
        if past.size == 0:
            return frame[self.day]
        u = uniform(rng, past.size)
        day[past] = np.minimum(np.floor(u * lengths[past]) + 1, lengths[past])
        out = frame[self.day].copy()
        out.iloc[past] = day[past].astype(out.dtype) if out.dtype.kind in "iuf" else day[past]
        return out


def parse_days_of_month(spec, columns):
    """``spec`` (``{day: month}`` or ``{day: [year, month]}``) checked against ``columns``.

    Returns a tuple of :class:`DayOfMonth`; raises ``ValueError`` naming the column.
    """
    if spec is None:
        return ()
    if not isinstance(spec, Mapping):
        raise ValueError(f"days_of_month must be a dict {{day: month}}; got {type(spec).__name__}.")
    columns = list(columns)
    parsed = []
    for day, of in spec.items():
        where = f"days_of_month[{day!r}]"
        if isinstance(of, (list, tuple)):
            if len(of) != 2:
                raise ValueError(f"{where} must be a month column or [year, month]; got {of!r}.")
            year, month = of
        else:
            year, month = None, of
        named = [day, month] + ([] if year is None else [year])
        unknown = [c for c in named if c not in columns]
        if unknown:
            raise ValueError(f"{where} names columns not in X: {unknown}.")
        if len(set(map(str, named))) != len(named):
            raise ValueError(f"{where}: the day, month and year must be three different columns.")
        parsed.append(DayOfMonth(day, month, year))
    return tuple(parsed)
