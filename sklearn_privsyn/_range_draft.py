"""Drafting a number nearly fixed by a listed column: a loan's interest rate by its sub-grade.

:func:`~sklearn_privsyn.domain_draft.draft_domain` calls :func:`draft_ranges`
after the exact functions: a binned number whose values, beside each value of
a listed column, lie within a range of at most ``MAX_RANGE_SHARE`` of the
number's whole span, but for ``EXCEPTION_SHARE`` of them (coding errors), as in
a rate table (sub-grade C1 is 12.61% or 12.62%, the rates span 5.31% to
30.94%), becomes ``{"derived": {"of": column, "ranges":
[[value, lo, hi], ...]}}``. Modelled, the number is drawn inside a bin and its
pairing with the listed value is left to the noise (a C1 loan at 11.72%:
impossible to anyone who knows the rate table); derived, every synthetic row
keeps its value's range. A range mostly at one of its values (a delinquent amount 0 on
99.5% of the loans, the rest up to 42,428) is no range to draw from uniformly: such a
number stays modelled, with its point. Read from the data, like the rest of a draft.
"""

import numpy as np
import pandas as pd

from ._number_spec import float_values
from ._sum_draft import last_decimal

__all__ = ["EXCEPTION_SHARE", "MAX_RANGE_SHARE", "MIN_ROWS_PER_VALUE", "draft_ranges"]

#: The widest range, as a share of the number's span, that makes it nearly fixed: a fifth
#: of one of the default 10 equal-width bins, which a modelled value is drawn within.
MAX_RANGE_SHARE = 0.02
#: A value's range may leave out this share of its rows, half at each end (coding errors).
EXCEPTION_SHARE = 0.01
#: Rows a listed value needs on average, so that narrow ranges are not found by chance.
MIN_ROWS_PER_VALUE = 10
#: A range of more than two values (of the number's last decimal), drawn uniformly, may
#: hold at most this share of its rows at one value (a sub-grade's two rates of two years
#: hold 55-65% and 35-45% of its loans; a delinquent amount, 0 on 99.7% of the loans).
MAX_MODE_SHARE = 0.9


def draft_ranges(X, domain, mark):
    """Replace the entries of numbers nearly fixed by a listed column by ``"ranges"``.

    ``domain`` is the draft (changed in place); only binned numbers not derived and
    not a derived column's source, and listed columns not derived, are looked at; the
    number must be missing exactly where the listed column is.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"grade": ["A", "B"] * 20,
    ...                   "rate": [5.31, 9.43, 5.32, 9.44] * 10})
    >>> domain = {"grade": {"values": ["A", "B"]}, "rate": {"bounds": [5.31, 9.44]}}
    >>> draft_ranges(X, domain, "read_from_data")
    >>> domain["rate"]
    {'derived': {'of': 'grade', 'ranges': [['A', 5.31, 5.32], ['B', 9.43, 9.44]]}, \
'read_from_data': True}
    """
    sources = {s for e in domain.values() if "derived" in e
               for s in np.atleast_1d(np.asarray(e["derived"]["of"], dtype=object))}
    listed = [c for c, e in domain.items() if "values" in e]
    for b, entry in domain.items():
        if "bounds" not in entry or b in sources:
            continue
        x = float_values(X[b])
        span = float(np.nanmax(x) - np.nanmin(x)) if np.isfinite(x).any() else 0.0
        if span <= 0:
            continue
        for a in listed:
            ranges = _ranges(X[a], x, domain[a]["values"], span)
            if ranges is not None:
                domain[b] = {"derived": {"of": a, "ranges": ranges}, mark: True}
                sources.add(a)
                break


def _ranges(left, x, values, span):
    """``[[v, lo, hi], ...]`` over the listed ``values`` of ``left``, or None."""
    present = ~np.isnan(x)
    if not np.array_equal(present, left.notna().to_numpy()):
        return None
    if present.sum() < MIN_ROWS_PER_VALUE * len(values):
        return None
    step = last_decimal(x[present]) or None  # None: no grid, every range a continuum
    keys = left[present].astype(str).to_numpy()
    by_value = {k: np.sort(g.to_numpy()) for k, g in pd.Series(x[present]).groupby(keys)}
    out = []
    for v in values:
        beside = by_value.get(str(v))
        if beside is None:
            return None  # a listed value never seen: no range to draw from
        tail = int(EXCEPTION_SHARE / 2 * beside.size)  # rows left out at each end
        lo, hi = float(beside[tail]), float(beside[beside.size - 1 - tail])
        if hi - lo > MAX_RANGE_SHARE * span:
            return None
        if (step is None or hi - lo > 1.5 * step) and _mode_share(beside) > MAX_MODE_SHARE:
            return None
        out.append([v, _plain(lo), _plain(hi)])
    return out


def _mode_share(values):
    return float(np.unique(values, return_counts=True)[1].max() / values.size)


def _plain(v):
    return int(v) if float(v).is_integer() else float(v)
