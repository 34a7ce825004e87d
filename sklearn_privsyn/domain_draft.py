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
* any other numeric column gets its observed ``[min, max]`` as bounds (but for an
  isolated extreme of at most 3 rows and 0.1% of them, then clipped into the last
  bin: one faulty reading, :func:`~sklearn_privsyn._grid_draft.kept_range`) and
  ``bins`` equal-width bins (fewer for an integer column with fewer than
  ``bins`` integers in its range, so that every bin holds one); its spikes,
  values held by at least ``point_share`` of the rows and by twice the
  share of each neighbouring value (at most half of ``bins``, the most
  common first), become ``"points"``, exact values with codes of their
  own, and take the place of as many bins; whole numbers get ``"step"``: their common
  divisor above 1 (degrees in tens), else 1 for floats, and numbers that no
  ``MAX_DRAFT_DECIMALS`` decimals write, the spacing their values fill (knots in
  miles an hour: :mod:`sklearn_privsyn._grid_draft`); one of at least ``MIN_CLOCK_VALUES``
  whole numbers up to 2400, past 10:00, none ending in 60 to 99, gets
  ``"clock": true`` (times of day written HHMM, :mod:`sklearn_privsyn.clock`);
* a column with missing values also gets ``"missing": true`` (and the mark:
  that it has any was read from the data);
* a column that is a function of another one on every row (and missing
  exactly where it is) becomes ``{"derived": ...}`` (see
  :mod:`sklearn_privsyn.derived`): the synthetic rows compute it from its
  source instead of modelling it. Found, in this order: a linear relation
  of numbers no sum below covers (:func:`~sklearn_privsyn._sum_draft.draft_linear`:
  a date of its year and month), a ``"map"`` of a listed column (with
  ``MIN_ROWS_PER_VALUE`` rows a value on average, or where a table with the two independent
  would break it on ``MIN_BROKEN_ROWS`` rows: not a function by chance), ``"intervals"`` of a
  binned one, ``"floordiv"`` by one of ``DIVISORS`` (at most ``MAX_CUTS + 1``
  quotients, so that the number gets a cut at each; never ``"mod"``, which would
  follow the number's noisiest, value-by-value part), and
  ``"apply"`` of a function of :data:`~sklearn_privsyn.derived.FUNCTIONS`
  (to relative precision ``1e-6``: a square in single precision); failing all of these, a ``"sum"``
  ``w * a + c`` of two numbers (``w`` one of ``DIVISORS``: a clock time of its
  hour and minute), a total of two or three, or a difference from a number with points
  (to half a last decimal: :mod:`sklearn_privsyn._sum_draft`). Of two functions of each
  other the later one is derived; a source is never derived itself; then a number nearly fixed by a
  listed column, ``"ranges"`` (:mod:`sklearn_privsyn._range_draft`); a loan's installment,
  the annuity of its amount, rate and term (:mod:`sklearn_privsyn._formula_draft`); a clock that
  is another time of day plus a number of minutes (a departure of its schedule
  and delay) becomes a ``"sum"`` with ``"clock"``, missing where a source is
  (present there in at most ``NEAR_MISSING_SHARE`` of the rows);
* a binned column of which a listed or derived column is an *interval function* (an
  age group of an age: each of its values holds the rows of one interval
  of the number, and the intervals do not overlap, on the rows where both
  are present) gets the intervals' boundaries as ``"cuts"``, so that no bin
  straddles one (at most ``MAX_CUTS``; ``bins`` grows to one an interval if needed);
* a binned number that equal-width cells would hide (amounts mostly small, a few thousands
  of times larger) gets ``"scale": "log"`` (:mod:`sklearn_privsyn._scale_draft`);
* a day of the month (whole numbers up to 31) beside a listed month (1 to 12), within the
  month's length on every row, gets ``"day_of"``: its month (with its year, when a listed
  year column decides February 29), so that the synthetic days exist in their months;
* a number never above another (maybe plus or minus a whole number) and often tied with
  it gets ``"at_most"`` (years worked, the age less 18: :mod:`~sklearn_privsyn.order_rule_drafts`);
  a listed value held exactly when another column holds one of a few, ``"exactly_when"``;
  one found only beside a few values of another column, where the two independent would
  break that on many rows, ``"only_when"`` (a job role and its department), exactly within
  a range of a number (no inquiry in 12 months; :mod:`~sklearn_privsyn.value_rules`), then
  only at a number's point (no card, no spending: :mod:`sklearn_privsyn._point_rule_draft`);
  a number equal to another on the rows holding a few values of a listed column,
  ``"equal_when"`` (a principal repaid, when fully paid: :mod:`~sklearn_privsyn.equal_when`);
* a binned or derived number of floats that are not all whole, each written with at most
  ``MAX_DRAFT_DECIMALS`` decimals, gets ``"decimals"``, the fewest that write them all
  (amounts in cents: 2), so that its synthetic values are written the same way
  (:mod:`sklearn_privsyn.decimals`).
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
#: A listed column is a map's source with this many rows a value (or map_breaks_by_chance).
MIN_ROWS_PER_VALUE = 10
#: Divisors tried for a column that is a quotient or a remainder of another (clock parts).
DIVISORS = (10, 100, 1000, 60, 24)
#: Most decimals drafted for a number's values (more: a computed value, left as it is).
MAX_DRAFT_DECIMALS = 4


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

    from ._formula_draft import draft_annuities
    from ._point_rule_draft import draft_at_points
    from ._range_draft import draft_ranges
    from ._scale_draft import draft_log_scale
    from .decimals import draft_decimals
    from .equal_when import draft_equal_when
    from .order_rule_drafts import draft_at_most
    from .value_rule_drafts import draft_exactly_between, draft_exactly_when, draft_only_when

    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"X must be a DataFrame; got {type(X).__name__}.")
    for name, value in (("max_categories", max_categories), ("bins", bins)):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
            raise ValueError(f"{name} must be an int >= 1; got {value!r}.")
    if isinstance(point_share, bool) or not isinstance(point_share, (int, float)) \
            or not 0 < point_share <= 1:
        raise ValueError(f"point_share must be a number in (0, 1]; got {point_share!r}.")
    domain, read = {}, []
    for col in X.columns:
        entry = _draft_column(col, X[col], max_categories, bins, point_share)
        if entry.get(MARK):
            read.append(col)
        domain[col] = entry
    _draft_derived(X, domain)
    draft_ranges(X, domain, MARK)
    draft_annuities(X, domain, MARK)
    _draft_clock_sums(X, domain)
    _draft_cuts(X, domain)
    draft_log_scale(X, domain, MARK)
    _draft_calendar(X, domain)
    draft_at_most(X, domain, MARK)
    draft_exactly_when(X, domain, MARK)
    draft_only_when(X, domain, MARK)
    draft_exactly_between(X, domain, MARK)
    draft_at_points(X, domain, MARK)
    draft_equal_when(X, domain, MARK)
    draft_decimals(X, domain, MAX_DRAFT_DECIMALS)
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


def _draft_values(col, series, max_categories, bins, point_share):
    import numpy as np
    import pandas as pd

    from ._grid_draft import float_step, kept_range, spikes, whole_step
    from .decimals import count_decimals

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
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.size <= max_categories:
        listed = [int(v) if integer else float(v) for v in distinct]
        return {"values": listed, MARK: True}
    lo, hi = kept_range(distinct, counts)
    points = sorted(int(v) if integer else float(v)
                    for v in spikes(distinct, counts, point_share)[: int(bins) // 2])
    n_bins = int(bins) - len(points)
    if integer:
        step = whole_step(distinct)
        lo, hi = int(lo), int(hi)
        n_bins = min(n_bins, (hi - lo) // step + 1)
    else:  # a spacing of the decimals that write the values is theirs to say
        step = None if count_decimals(distinct, MAX_DRAFT_DECIMALS) else float_step(distinct)
        if step is not None:
            n_bins = min(n_bins, round((hi - lo) / step) + 1)
    entry = {"bounds": [lo, hi], "bins": n_bins}
    if points:
        entry["points"] = points
    if step is not None and (step != 1 or not pd.api.types.is_integer_dtype(dtype)):
        entry["step"] = step
    if _looks_like_clock(distinct):
        entry["clock"] = True
    entry[MARK] = True
    return entry


#: A number is drafted a clock with at least this many distinct times of day.
MIN_CLOCK_VALUES = 100


def _looks_like_clock(distinct):
    """Whether sorted distinct numbers are times of day written HHMM: at least
    ``MIN_CLOCK_VALUES`` of them, past 10:00, none with last two digits of 60 or more (a
    column of other whole numbers up to 2400 holds such a value in 40% of its values)."""
    from .clock import is_hhmm

    return bool(distinct.size >= MIN_CLOCK_VALUES and distinct[-1] >= 1000
                and is_hhmm(distinct).all())


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
    """Add ``"cuts"`` to binned entries of which a listed or derived column is an interval."""
    binned = [c for c, e in domain.items() if "bounds" in e]
    # a derived column counts too: its relation to the other columns is measured through
    # its source's bins (an hour's through the clock time's)
    listed = [c for c, e in domain.items()
              if "values" in e and len(e["values"]) >= 2 or "derived" in e]
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


def _draft_calendar(X, domain):
    """Declare a day of the month beside its month (``"day_of"``): the synthetic days then
    exist in their months (:mod:`sklearn_privsyn.dates`).

    A day is a column of whole numbers from 1 to 31 with 31 among them; a month a listed
    column of numbers in 1 to 12; on every row where both are present the day is within
    its month (February 29 included). With a listed column of years (whole numbers from
    1000 to 3000) that decides every February 29 in the data, the year is declared too.
    """
    import numpy as np

    from .dates import DayOfMonth

    def listed(col, lo, hi):
        values = domain[col].get("values", [])
        return len(values) >= 1 and all(
            isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi for v in values)

    def within(date, day):
        lengths = date.month_lengths(X)
        both = ~np.isnan(day) & ~np.isnan(lengths)
        return both.any() and np.all(day[both] <= lengths[both])

    months = [c for c in domain if listed(c, 1, 12) and len(domain[c]["values"]) >= 2]
    years = [c for c in domain if listed(c, 1000, 3000)]
    for col, entry in domain.items():
        bounds = entry.get("bounds")
        if listed(col, 1, 31) and col not in months:
            bounds = [min(entry["values"]), max(entry["values"])]
        if bounds is None or bounds[0] < 1 or bounds[1] != 31 or entry.get("clock"):
            continue
        day = _whole_numbers(X[col])
        if day is None:
            continue
        dates = (DayOfMonth(col, month, year) for month in months
                 for year in [*(y for y in years if y != col), None])
        found = next((date for date in dates if within(date, day)), None)
        if found is not None:
            tail = {k: entry.pop(k) for k in ("missing", MARK) if k in entry}  # kept last
            entry["day_of"] = found.month if found.year is None else [found.year, found.month]
            entry.update(tail)


def _draft_derived(X, domain):
    """Replace the entries of columns that are functions of another by ``"derived"``."""
    import numpy as np
    import pandas as pd

    from ._sum_draft import draft_linear, sum_of

    columns = list(X.columns)
    isna = {c: X[c].isna().to_numpy() for c in columns}
    codes = {c: pd.factorize(X[c])[0] for c in columns}
    sources = draft_linear(X, domain, isna, MARK)
    for b in columns:
        if b in sources or "values" not in domain[b] and "bounds" not in domain[b]:
            continue
        if len(np.unique(codes[b][~isna[b]])) < 2:
            continue
        for a in columns:
            if a == b or "derived" in domain[a] or not np.array_equal(isna[a], isna[b]):
                continue
            if not _determines(codes[a], codes[b], isna[a]):
                continue
            later = columns.index(a) > columns.index(b)
            if later and _determines(codes[b], codes[a], isna[a]):
                continue  # each is a function of the other: the later one is derived
            spec = _function_of(X[a][~isna[a]], X[b][~isna[b]], domain[a], domain[b])
            if spec is not None:
                domain[b] = {"derived": {"of": a, **spec}, MARK: True}
                sources.add(a)
                break
        else:
            found = sum_of(X, b, domain, isna, DIVISORS)
            if found is not None:
                domain[b] = {"derived": {"of": found[0], "sum": found[1]}, MARK: True}
                sources.update(found[0])


#: Largest share of rows where a time of day drafted as a sum is present and a source is not.
NEAR_MISSING_SHARE = 0.01


def _draft_clock_sums(X, domain):
    """Derive a clock that is another time of day plus a number of minutes on every row
    where both are present (a departure of its scheduled time and its delay), and missing
    where either is, but for at most ``NEAR_MISSING_SHARE`` of the rows.

    The other time is a clock column, or a drafted sum ``100 * hour + minute`` (then the
    sum is ``60 * hour + minute + delay``); midnight is written as the column writes it.
    A flight can have an arrival time but no arrival delay (diverted: 0.2% of
    nycflights13); derived, its arrival is missing there, and agrees with its schedule and
    delay on every other row, where modelled it agreed in 0.6% of the synthetic rows.
    """
    import numpy as np

    from .clock import hhmm_to_minutes, is_hhmm, minutes_to_hhmm

    def of(entry):
        spec = entry.get("derived", {})
        return spec.get("of") if isinstance(spec.get("of"), list) else [spec.get("of")]

    sources = {c for e in domain.values() if "derived" in e for c in of(e)}
    hhmm_sums = {c for c, e in domain.items() if e.get("derived", {}).get("sum") == [100, 1]}
    values = {c: _whole_numbers(X[c]) for c, e in domain.items()
              if "bounds" in e or c in hhmm_sums}
    values = {c: v for c, v in values.items() if v is not None}
    isna = {c: np.isnan(v) for c, v in values.items()}
    times = [c for c in values if (domain[c].get("clock") or c in hhmm_sums)
             and is_hhmm(values[c][~isna[c]]).all()]
    minutes = [c for c in values if "bounds" in domain[c] and not domain[c].get("clock")]

    def sum_of(t):
        """The spec of time ``t`` as another time plus a number of minutes, or None."""
        midnight = 0 if np.any(values[t] == 0) else 2400
        for s in [c for c in times if c != t and ("derived" not in domain[c] or c in hhmm_sums)]:
            start = hhmm_to_minutes(values[s])
            for d in [c for c in minutes if c not in (s, t) and "derived" not in domain[c]]:
                absent = isna[s] | isna[d]
                if np.any(isna[t] & ~absent) or np.mean(~isna[t] & absent) > NEAR_MISSING_SHARE:
                    continue
                found = minutes_to_hhmm(start + values[d], wrap=midnight)
                if np.array_equal(found[~absent], values[t][~absent]):
                    spec = domain[s].get("derived")
                    of_sum = (spec["of"] + [d], [60, 1, 1]) if spec else ([s, d], [1, 1])
                    return {"of": of_sum[0], "sum": of_sum[1], "clock": midnight}
        return None

    for t in [c for c in times if "derived" not in domain[c]]:
        spec = None if t in sources else sum_of(t)  # a source is never derived
        if spec is not None:
            domain[t] = {"derived": spec, MARK: True}
            sources.update(spec["of"])


def _whole_numbers(series):
    """A numeric column's values as floats (missing: NaN) when every present one is a whole
    number, else None."""
    import numpy as np
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(series.dtype):
        return None
    values = series.to_numpy(dtype=float, na_value=np.nan)
    present = values[~np.isnan(values)]
    return values if np.all(present == np.round(present)) else None


def _determines(a_codes, b_codes, isna):
    """Whether ``b`` is a function of ``a`` on the rows where they are present."""
    import numpy as np

    a, b = a_codes[~isna], b_codes[~isna]
    if a.size == 0:
        return False
    pairs = np.unique(a.astype(np.int64) * (int(b.max()) + 1) + b)
    return pairs.size == np.unique(a).size


def _drafted(values, entry):
    """Values as the drafted domain writes them (text, whole numbers as int, booleans)."""
    import numpy as np

    listed = entry.get("values")
    if listed is not None and not all(isinstance(v, (int, float)) for v in listed):
        return [str(v) for v in values]
    if listed is not None and all(isinstance(v, bool) for v in listed):
        return [bool(v) for v in values]
    numbers = np.asarray(values, dtype=float)
    if np.all(numbers == np.round(numbers)):
        return [int(v) for v in numbers]
    return [float(v) for v in numbers]


def _function_of(a, b, a_entry, b_entry):
    """The derived spec (without ``"of"``) of ``b`` as a function of ``a``, or None.

    ``a`` and ``b`` hold the rows where both are present; ``b`` is known to be a
    function of ``a`` there. A listed ``a`` takes a map (exact: it takes no other
    value); a binned one arithmetic (exact on every row, so right for any value)
    before intervals (right for the values seen).
    """
    import numpy as np
    import pandas as pd

    from ._coders import is_number_dtype
    from .derived import FUNCTIONS
    from .order_rule_drafts import MIN_BROKEN_ROWS, map_breaks_by_chance

    if "values" in a_entry:
        if len(a) < MIN_ROWS_PER_VALUE * a.nunique() and (
                map_breaks_by_chance(a, b) < MIN_BROKEN_ROWS):
            return None
        pairs = pd.DataFrame({"a": a.to_numpy(), "b": b.to_numpy()}).drop_duplicates("a")
        keys, values = _drafted(pairs["a"], a_entry), _drafted(pairs["b"], b_entry)
        order = sorted(range(len(keys)), key=lambda i: [str(k) for k in a_entry["values"]]
                       .index(str(keys[i])))
        return {"map": [[keys[i], values[i]] for i in order]}
    if all(is_number_dtype(v.dtype) for v in (a, b)):
        x, y = pd.to_numeric(a).to_numpy(dtype=float), pd.to_numeric(b).to_numpy(dtype=float)
        # a quotient only where the source's bins can follow each change (its cuts); never a
        # remainder, resting on the source's noisiest, value-by-value measurement (flights'
        # minute at eps 0.1: 4.5% of the rows on the hour, 18% as a column of its own)
        for divisor in DIVISORS:
            if np.array_equal(np.floor(x / divisor), y) and np.unique(y).size <= MAX_CUTS + 1:
                return {"floordiv": divisor}
        with np.errstate(all="ignore"):
            for name, function in FUNCTIONS.items():
                image = function(x)
                if np.all(np.isfinite(image)) and np.allclose(image, y, rtol=1e-6, atol=0):
                    return {"apply": name}
    if "values" in b_entry:
        cuts = interval_cuts(a, b)
        if cuts is None:
            return None
        x = pd.to_numeric(a).to_numpy(dtype=float)
        first = pd.Series(x).groupby(b.to_numpy()).min().sort_values()
        return {"intervals": {"cuts": _drafted(cuts, a_entry),
                              "labels": _drafted(first.index, b_entry)}}
    return None
