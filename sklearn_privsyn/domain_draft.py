"""Draft a domain file from a table, for its owner to review.

A synthesizer's privacy guarantee covers the rows, not the domain: the
values, bounds and bins of every column must be public knowledge. When no
such domain is at hand, :func:`draft_domain` writes one from the data itself,
in the domain-file format that ``privsyn fit --domain`` reads (see
``docs/cli.rst``), and marks every entry it read from the data with
``"read_from_data": true`` so that the owner can review it, replace it with
public knowledge and delete the mark. Until then the drafted entries are not
private: drafting warns with a :class:`~sklearn_privsyn.exceptions.PrivacyLeakWarning`,
and so does fitting on a domain file that still carries marks.

The rules, applied column by column:

* a boolean column gets ``[false, true]`` (public: it follows from the type),
  also when some of its values are missing;
* a text, categorical or object column gets its sorted observed values;
* a numeric column with at most ``max_categories`` distinct values gets
  them as a list of values;
* any other numeric column gets its observed ``[min, max]`` as bounds and
  ``bins`` equal-width bins (fewer for an integer column with fewer than
  ``bins`` integers in its range, so that every bin holds one); its spikes,
  values held by at least ``point_share`` of the rows and by twice the
  share of each neighbouring value (at most half of ``bins``, the most
  common first), become ``"points"``, exact values with codes of their
  own, and take the place of as many bins; a float column whose values are
  all whole numbers gets ``"step": 1``;
* a column with missing values also gets ``"missing": true`` (and the mark:
  that it has any was read from the data);
* a binned column of which a listed column is an *interval function* (an
  age group of an age: each of its values holds the rows of one interval
  of the number, and the intervals do not overlap, on the rows where both
  are present) gets the intervals' boundaries as ``"cuts"``, so that no bin
  straddles one (at most ``MAX_CUTS``; ``bins`` grows to one an interval
  if needed).
"""

from __future__ import annotations

import warnings
from numbers import Integral

from .exceptions import PrivacyLeakWarning

# numpy and pandas are imported where used: the command line imports this
# module for its defaults and must start fast.

__all__ = ["DEFAULT_BINS", "DEFAULT_MAX_CATEGORIES", "DEFAULT_POINT_SHARE", "MARK",
           "draft_domain"]

#: Numbers with at most this many distinct values become a list of values.
DEFAULT_MAX_CATEGORIES = 20
#: Equal-width bins of a numeric column with more distinct values.
DEFAULT_BINS = 10
#: The key that marks an entry read from the data.
MARK = "read_from_data"
#: A binned number's value held by at least this share of the rows is drafted as a point.
DEFAULT_POINT_SHARE = 0.05
#: Most cuts drafted for one column (a derived column of more values is left out).
MAX_CUTS = 31


def _check_count(name, value, low):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {value!r}.")


def draft_domain(X, *, max_categories=DEFAULT_MAX_CATEGORIES, bins=DEFAULT_BINS,
                 point_share=DEFAULT_POINT_SHARE):
    """Draft a domain for ``X``, marking what was read from the data.

    Parameters
    ----------
    X : DataFrame
        The table (as read from the CSV or Parquet file).
    max_categories : int, default=20
        Numeric columns with at most this many distinct values get a list
        of values; others get bounds and bins.
    bins : int, default=10
        Codes of a numeric column with more distinct values: its points and
        equal-width bins.
    point_share : float, default=0.05
        Values of such a column held by at least this share of the rows
        become points (at most ``bins // 2``); 1 drafts none.

    Returns
    -------
    domain : dict
        ``{column: entry}`` in the columns' order, ready for ``json.dump``:
        ``{"values": [...]}`` or ``{"bounds": [lo, hi], "bins": b}``, with
        ``"missing": true`` for a column with missing values and
        ``"read_from_data": true`` unless the entry follows from the dtype.

    Warns
    -----
    PrivacyLeakWarning
        Naming the columns whose entries were read from the data.

    Raises
    ------
    ValueError
        If a column has no non-missing value, or holds both text and numbers
        in a way no rule covers; the message names the column.

    Examples
    --------
    >>> import warnings
    >>> import pandas as pd
    >>> from sklearn_privsyn.domain_draft import draft_domain
    >>> X = pd.DataFrame({"colour": ["red", "blue", None], "income": [0, 0, 1.5e6],
    ...                   "ok": [True, False, True]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     draft = draft_domain(X, max_categories=1, bins=4, point_share=0.5)
    >>> draft["colour"]
    {'values': ['blue', 'red'], 'missing': True, 'read_from_data': True}
    >>> draft["income"]
    {'bounds': [0, 1500000], 'bins': 3, 'points': [0], 'step': 1, 'read_from_data': True}
    >>> draft["ok"]
    {'values': [False, True]}
    """
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"X must be a DataFrame; got {type(X).__name__}.")
    _check_count("max_categories", max_categories, 1)
    _check_count("bins", bins, 1)
    if isinstance(point_share, bool) or not isinstance(point_share, (int, float)) or not (
        0 < point_share <= 1
    ):
        raise ValueError(f"point_share must be a number in (0, 1]; got {point_share!r}.")
    domain, read = {}, []
    for col in X.columns:
        entry = _draft_column(col, X[col], max_categories, bins, point_share)
        if entry.get(MARK):
            read.append(col)
        domain[col] = entry
    _draft_cuts(X, domain)
    if read:
        warnings.warn(
            f"The drafted domain of columns {read} was read from the data: it is not "
            "covered by the privacy guarantee. Review each entry marked "
            f"{MARK!r}, replace it with public knowledge (documentation, standards, round "
            "numbers) and delete the mark.",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    return domain


def _draft_column(col, series, max_categories, bins, point_share):
    entry = _draft_values(col, series, max_categories, bins, point_share)
    if series.isna().any():
        entry = {key: value for key, value in entry.items() if key != MARK}
        entry.update({"missing": True, MARK: True})
    return entry


#: A point must hold this many times the share of each neighbouring value.
SPIKE_RATIO = 2.0


def _spikes(values, point_share):
    """Values held by at least ``point_share`` of the rows and ``SPIKE_RATIO`` times the
    share of each neighbouring value (the next smaller and larger ones, and the values one
    below and above for whole numbers), most common first."""
    import numpy as np

    distinct, counts = np.unique(values, return_counts=True)
    share = counts / len(values)
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


def _draft_values(col, series, max_categories, bins, point_share):
    import numpy as np
    import pandas as pd

    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return {"values": [False, True]}
    observed = series.dropna()
    if observed.empty:
        raise ValueError(
            f"Column {col!r} has no non-missing value to draft its domain from; "
            "write its entry by hand."
        )
    if dtype == object and all(isinstance(v, (bool, np.bool_)) for v in observed):
        return {"values": [False, True]}  # booleans with missing values
    numeric = pd.api.types.is_numeric_dtype(dtype) and not isinstance(
        dtype, pd.CategoricalDtype
    )
    if not numeric:
        values = observed.astype(str).unique().tolist()
        return {"values": sorted(values), MARK: True}
    if pd.api.types.is_complex_dtype(dtype):
        raise ValueError(f"Column {col!r} holds complex numbers, which have no domain rule.")
    values = observed.to_numpy(dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError(
            f"Column {col!r} has an infinite value; drop it or write the column's entry by hand."
        )
    integer = bool(np.all(values == np.round(values)))
    distinct = np.unique(values)
    if distinct.size <= max_categories:
        listed = [int(v) if integer else float(v) for v in distinct]
        return {"values": listed, MARK: True}
    lo, hi = float(distinct[0]), float(distinct[-1])
    points = sorted(int(v) if integer else float(v)
                    for v in _spikes(values, point_share)[: int(bins) // 2])
    n_bins = int(bins) - len(points)
    if integer:
        lo, hi = int(lo), int(hi)
        n_bins = min(n_bins, hi - lo + 1)
    entry = {"bounds": [lo, hi], "bins": n_bins}
    if points:
        entry["points"] = points
    if integer and not pd.api.types.is_integer_dtype(dtype):
        entry["step"] = 1
    entry[MARK] = True
    return entry


def interval_cuts(numbers, labels):
    """Where ``labels`` changes along ``numbers``, if it is an interval function of them.

    On the rows where both are present, each label's numbers must span an
    interval that overlaps no other label's; the cuts are the smallest
    number of every label but the first (in the order of the numbers).
    Returns None when that fails, or with fewer than two labels.

    Examples
    --------
    >>> import pandas as pd
    >>> interval_cuts(pd.Series([18, 25, 31, 44, 61]),
    ...               pd.Series(["18-29", "18-29", "30-59", "30-59", "60+"]))
    [31.0, 61.0]
    >>> interval_cuts(pd.Series([1, 2, 3]), pd.Series(["a", "b", "a"])) is None
    True
    """
    import numpy as np
    import pandas as pd

    both = numbers.notna().to_numpy() & labels.notna().to_numpy()
    if both.sum() < 2:
        return None
    frame = pd.DataFrame({"x": pd.to_numeric(numbers[both]).to_numpy(dtype=float),
                          "c": labels[both].astype(str).to_numpy()})
    spans = frame.groupby("c", sort=False)["x"].agg(["min", "max"]).sort_values("min")
    if len(spans) < 2:
        return None
    lows, highs = spans["min"].to_numpy(), spans["max"].to_numpy()
    if not np.all(highs[:-1] < lows[1:]):
        return None
    return lows[1:].tolist()


def _draft_cuts(X, domain):
    """Add ``"cuts"`` to binned entries of which a listed column is an interval function."""
    binned = [c for c, e in domain.items() if "bounds" in e]
    listed = [c for c, e in domain.items() if "values" in e and len(e["values"]) >= 2]
    for col in binned:
        entry = domain[col]
        lo, hi = entry["bounds"]
        found = set()
        for other in listed:
            cuts = interval_cuts(X[col], X[other])
            if cuts is not None:
                found.update(c for c in cuts if lo < c < hi)
        integer = all(isinstance(v, int) for v in entry["bounds"])
        if integer:  # an interval of points only needs no bin: merge it into the one before
            points = set(entry.get("points", ()))
            bounds = sorted(found) + [hi + 1]
            found = {a for a, b in zip(bounds[:-1], bounds[1:])
                     if not set(range(int(a), int(b))) <= points}
        if found and len(found) <= MAX_CUTS:
            entry["bins"] = max(entry["bins"], len(found) + 1)
            tail = {k: entry.pop(k) for k in ("missing", MARK) if k in entry}  # kept last
            entry["cuts"] = sorted(int(c) if integer else float(c) for c in found)
            entry.update(tail)
