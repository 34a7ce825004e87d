"""Decimals: how many a number's synthetic values are written with.

A number drawn inside its bin is a real number: a loan's balance came out as
``19442.174343`` where every real balance is in cents, an interest rate as
``12.291728`` where rates have two decimals. Such a row gives itself away at
a glance. How many decimals a column is written with is public knowledge
(cents for money, the precision a form asks for), declared like its bounds
(``decimals=`` in :class:`~sklearn_privsyn.QueryWorkload`, ``"decimals"`` in
a domain file); ``sample(n)`` rounds the column's values to it, and a derived
column computed from rounded sources (a total of amounts in cents) is rounded
to its own.

It only writes the values: the bins and the fit are those of the column
without it (unlike a ``step``, which also sets the grid that the numbers'
measurement counts values on), and rounding costs no budget: post-processing.
Its last decimal is, like a step, the finest grid of the column's round
numbers, whose levels the numbers' measurement counts
(:func:`~sklearn_privsyn.numbers.round_levels`).

Examples
--------
>>> import pandas as pd
>>> from sklearn_privsyn.decimals import parse_decimals, round_columns
>>> X = pd.DataFrame({"rate": [9.93, 12.61], "term": [36, 60]})
>>> decimals = parse_decimals({"rate": 2}, X)
>>> round_columns(pd.DataFrame({"rate": [12.291728, -0.001]}), decimals)["rate"].tolist()
[12.29, 0.0]
"""

from numbers import Integral

import numpy as np
import pandas as pd

__all__ = ["MAX_DECIMALS", "count_decimals", "draft_decimals", "is_decimal_count",
           "parse_decimals", "round_columns", "with_sum_decimals"]

#: The most decimals a declaration may give (beyond it a float holds no more).
MAX_DECIMALS = 15


def is_decimal_count(count):
    """Whether ``count`` is a whole number of decimals in ``[0, MAX_DECIMALS]``."""
    return (not isinstance(count, bool) and isinstance(count, Integral)
            and 0 <= count <= MAX_DECIMALS)


def parse_decimals(spec, X):
    """``{column: decimals}`` from a declaration, checked against the table ``X``.

    Raises ``ValueError`` naming the column when it is not in ``X``, is not a
    column of numbers, or its count is not a whole number in ``[0, MAX_DECIMALS]``.
    """
    if spec is None:
        return {}
    out = {}
    for col, count in spec.items():
        if col not in X.columns:
            raise ValueError(f"decimals names a column not in X: {col!r}. X has columns "
                             f"{list(X.columns)}.")
        dtype = X[col].dtype
        if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            raise ValueError(f"decimals[{col!r}]: column {col!r} does not hold numbers "
                             f"(dtype {dtype}); only numbers are rounded.")
        if not is_decimal_count(count):
            raise ValueError(f"decimals[{col!r}] must be a whole number from 0 to "
                             f"{MAX_DECIMALS}; got {count!r}.")
        out[col] = int(count)
    return out


def with_sum_decimals(decimals, derived, X):
    """``decimals`` with each undeclared derived sum of whole weights rounded as its sources.

    A sum of amounts in cents is in cents, but its floats are not exactly
    (``859.36 + 1027.04`` is ``1886.3999999999999``): such a sum, whose every
    source has declared decimals or holds integers (dtype in ``X``), is rounded
    to its sources' most decimals.
    """
    out = dict(decimals)
    for name, column in derived.items():
        if name in out or column.kind != "sum" or column.clock is not None:
            continue
        if not all(float(w).is_integer() for w in column.argument):
            continue
        counts = [out.get(s, 0 if X[s].dtype.kind in "iu" else None) for s in column.source]
        if counts and None not in counts:
            out[name] = max(counts)
    return out


def round_columns(frame, decimals, columns=None, bounds=None):
    """``frame`` with each column of ``decimals`` (those in ``columns``, default all) rounded.

    Float columns only: an integer column already is; missing values stay missing.
    A column with ``bounds`` (``{column: (lo, hi)}``) stays within them: at
    the nearest values of ``count`` decimals inside them (where there are any).
    """
    bounds = {} if bounds is None else bounds
    for col, count in decimals.items():
        if col in frame and (columns is None or col in columns) \
                and frame[col].dtype.kind == "f":
            values = frame[col].round(count)
            if col in bounds:
                scale = 10.0**count
                lo, hi = (np.ceil(bounds[col][0] * scale - 1e-9) / scale,
                          np.floor(bounds[col][1] * scale + 1e-9) / scale)
                if lo <= hi:
                    values = values.clip(lo, hi)
            frame[col] = values + 0.0  # no -0.0 ("-0.0" in a CSV)
    return frame


def count_decimals(values, max_decimals):
    """The fewest decimals that write all ``values`` (floats); None if more than ``max_decimals``.

    Examples
    --------
    >>> from sklearn_privsyn.decimals import count_decimals
    >>> count_decimals([1.5, 2.25, 1e6], 4), count_decimals([3.0, 4.0], 4)
    (2, 0)
    >>> count_decimals([1 / 3], 4) is None
    True
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return None
    tolerance = 1e-9 * max(1.0, float(np.abs(x).max()))
    for count in range(max_decimals + 1):
        if np.all(np.abs(x - np.round(x, count)) <= tolerance):
            return count
    return None


def draft_decimals(X, domain, max_decimals):
    """``"decimals"`` for the drafted binned and derived numbers of floats written with at
    most ``max_decimals`` decimals (``privsyn domain``; read from the data)."""
    for col, entry in domain.items():
        if X[col].dtype.kind != "f" or "step" in entry or entry.get("clock"):
            continue
        if "bounds" in entry or "derived" in entry:
            count = count_decimals(X[col].to_numpy(), max_decimals)
            if count:  # None (more decimals) or 0 (whole numbers: a step, or exact sums)
                entry["decimals"] = count
