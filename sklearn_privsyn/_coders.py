"""Column coders: one class per kind of column, turning values into codes and back.

A coder is built from the public domain of one column and encodes that column's
values as integer codes ``0 .. size - 1``, decodes codes back into values, and
(for binned numbers) draws a value uniformly within a code's cell. The three
kinds are

* :class:`CategoryCoder`: listed values (strings, booleans, any hashable);
* :class:`CodeCoder`: a column that already holds integer codes ``0 .. m - 1``;
* :class:`BinnedCoder`: numbers cut into bins by increasing edges.

Every kind may reserve one extra code, after the others, for missing values.
:func:`make_coder` is the one place that decides a column's kind.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from numbers import Integral, Real

import numpy as np
import pandas as pd

from ._number_spec import (check_bounds, check_cuts, check_points, check_step, cut_edges,
                           draw_between, float_values, integer_ranges, step_units)
from ._random import uniform
from .bin_tilts import tilted_uniform
from .clock import check_clock_values, clock_spec_in_minutes, minutes_to_hhmm

__all__ = ["BinnedCoder", "CategoryCoder", "CodeCoder", "ColumnCoder", "is_number_dtype",
           "make_coder", "series_of_dtype"]


def is_number_dtype(dtype):
    """Whether ``dtype`` holds numbers: numeric, not boolean (nor categorical)."""
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _check_finite(name, values):
    if np.isinf(values).any():
        raise ValueError(f"Column {name!r} has infinite values (inf or -inf).")


def _preview(values, n=8):
    shown = [v.item() if isinstance(v, np.generic) else v for v in values[:n]]
    return f"{shown!r}" if len(values) <= n else f"{shown!r}[:{n}] ..."


@dataclass
class ColumnCoder:
    """Encoding of one column; subclasses implement one kind of column.

    Parameters
    ----------
    name : object
        The column's name.
    n_values : int
        Number of codes for values (the missing code, if any, comes after them).
    dtype : object
        The column's dtype at fit time, restored by :meth:`decode`.
    missing : bool, default=False
        Whether code ``n_values`` stands for a missing value.
    """

    name: object
    n_values: int
    dtype: object
    missing: bool = False

    @property
    def size(self):
        """Number of codes, the missing code included."""
        return self.n_values + int(self.missing)

    def encode(self, series):
        """Codes of a column's values, shape ``(n,)``; raises ``ValueError`` on bad values."""
        isna = series.isna().to_numpy()
        has_na = bool(isna.any())
        if has_na and not self.missing:
            raise ValueError(
                f"Column {self.name!r} has missing values (NaN/None) but is not declared "
                "missable: drop or impute them, or list the column in handle_missing."
            )
        codes = self._encode_values(series, isna)
        if has_na:
            codes = np.where(isna, self.n_values, codes)
        return codes

    def decode(self, codes, rng):
        """Values of codes as a Series with the fitted dtype (missing codes become NA)."""
        isna = codes == self.n_values if self.missing else np.zeros(codes.shape, bool)
        has_na = bool(isna.any())
        safe = np.where(isna, 0, codes)
        values = self._decode_values(safe, rng)
        if has_na:
            if values.dtype == object:
                values[isna] = None
            else:
                values = values.astype(float)
                values[isna] = np.nan
        return self._as_series(values, has_na)

    def _as_series(self, values, has_na):
        """Values as a Series of the fitted dtype (widened when missing values must fit)."""
        return series_of_dtype(values, self.dtype, has_na)

    def feature_names(self):
        """One-hot column names ``"{column}_{value}"``, the missing code's last."""
        names = [f"{self.name}_{v}" for v in self._value_names()]
        if self.missing:
            names.append(f"{self.name}_nan")
        return names

    def _encode_values(self, series, isna):  # pragma: no cover - abstract
        raise NotImplementedError

    def _decode_values(self, codes, rng):  # pragma: no cover - abstract
        raise NotImplementedError

    def _value_names(self):  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass
class CategoryCoder(ColumnCoder):
    """A column of listed values: code ``i`` is ``categories[i]``.

    With ``other`` set, values outside the list get code ``other`` (a declared
    catch-all category such as ``"Other"``) instead of raising.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn._coders import CategoryCoder
    >>> coder = CategoryCoder.from_values("colour", ["red", "blue"], np.dtype(object))
    >>> coder.encode(pd.Series(["blue", "red"])).tolist()
    [1, 0]
    >>> coder.decode(np.array([0, 1]), rng=None).tolist()
    ['red', 'blue']
    """

    categories: np.ndarray | None = None
    other: int | None = None

    @classmethod
    def from_values(cls, name, values, dtype, missing=False, source="domain", other=None):
        """A coder for the listed ``values``; ``source`` names where they came from.

        ``other``, if not None, is the listed value that unknown values map to.
        """
        if len(values) == 0:
            raise ValueError(f"domain[{name!r}] is empty; a column needs at least one value.")
        if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
            raise ValueError(
                f"domain[{name!r}] contains a missing value; list the column in "
                "handle_missing to give missing values their own code."
            )
        index = pd.Index(values, dtype=object)
        if index.has_duplicates:
            dup = index[index.duplicated()].unique().tolist()
            raise ValueError(f"{source} values of column {name!r} contain duplicates: {dup}.")
        categories = np.empty(len(values), dtype=object)
        categories[:] = values
        other_code = None
        if other is not None:
            other_code = int(index.get_indexer([other])[0])
            if other_code < 0:
                raise ValueError(
                    f"other[{name!r}] = {other!r} is not one of the column's domain values "
                    f"{_preview(categories)}."
                )
        return cls(name, len(values), dtype, missing=missing, categories=categories,
                   other=other_code)

    def _encode_values(self, series, isna):
        if is_number_dtype(series.dtype):  # an infinity is an error, not a category
            _check_finite(self.name, series.to_numpy(dtype=float, na_value=np.nan))
        codes = pd.Index(self.categories, dtype=object).get_indexer(series.to_numpy(dtype=object))
        bad = (codes < 0) & ~isna
        if bad.any():
            if self.other is None:
                raise ValueError(
                    f"Column {self.name!r} has values outside its domain of {self.n_values} "
                    f"values {_preview(self.categories)}: add them to the domain, or declare "
                    "an 'other' category that unknown values map to (other=)."
                )
            codes = np.where(bad, self.other, codes)
        return codes

    def _decode_values(self, codes, rng):
        return self.categories[codes]

    def _as_series(self, values, has_na):
        dtype = self.dtype
        if not isinstance(dtype, pd.CategoricalDtype):
            return super()._as_series(values, has_na)
        if not set(self.categories) <= set(dtype.categories):
            dtype = pd.CategoricalDtype(list(self.categories), ordered=dtype.ordered)
        return pd.Series(pd.Categorical(values, dtype=dtype))

    def _value_names(self):
        return list(self.categories)


def series_of_dtype(values, dtype, has_na):
    """``values`` as a Series of ``dtype``, widened when missing values must fit.

    A boolean column with missing values becomes an object column, an integer
    one a float column; values that do not convert keep their own dtype.
    """
    if has_na:
        if pd.api.types.is_bool_dtype(dtype) and not isinstance(dtype, pd.CategoricalDtype):
            dtype = object
        elif isinstance(dtype, np.dtype) and dtype.kind in "iu":
            dtype = np.float64
    series = pd.Series(values)
    try:
        return series.astype(dtype)
    except (TypeError, ValueError):
        return series


def _numeric_values(name, series, isna):
    """A column's values as floats (missing ones 0.0); raises on strings and infinities."""
    values = float_values(series)
    if (np.isnan(values) & ~isna).any():
        raise ValueError(
            f"Column {name!r} has non-numeric values (strings or other objects) but is "
            "encoded as numbers; give its values in domain instead."
        )
    _check_finite(name, values)
    if isna.any():
        values = np.where(isna, 0.0, values)
    return values


@dataclass
class CodeCoder(ColumnCoder):
    """A column that holds integer codes ``0 .. n_values - 1`` (the paper's format).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn._coders import CodeCoder
    >>> CodeCoder("grade", 3, np.dtype("int64")).encode(pd.Series([2, 0])).tolist()
    [2, 0]
    """


    def _encode_values(self, series, isna):
        values = _numeric_values(self.name, series, isna)
        bad = (values != np.round(values)) | (values < 0) | (values >= self.n_values)
        if bad.any():
            raise ValueError(
                f"Column {self.name!r} has values outside its domain of integer codes "
                f"0..{self.n_values - 1}."
            )
        return values.astype(np.intp)

    def _decode_values(self, codes, rng):
        return codes.astype(np.int64)

    def _value_names(self):
        return list(range(self.n_values))


@dataclass
class BinnedCoder(ColumnCoder):
    """Numbers cut into bins ``[edges[i], edges[i + 1])`` (the last bin closed), and points.

    Codes ``0 .. n_bins - 1`` are the bins; codes ``n_bins ..`` are the
    *points*, exact values with codes of their own (point masses such as a
    capital gain of 0), which the bins then exclude. Values outside the
    edges go into the first or last bin when ``clip`` is true, and raise
    otherwise (infinities always raise). Decoding gives a point its value
    and draws a value within its bin: from ``sampler`` (an estimated shape,
    :class:`~sklearn_privsyn.numbers.InBinSampler`) when the fit measured
    one, else uniformly, or tilted by ``tilts`` (a linear density per bin,
    :mod:`sklearn_privsyn.bin_tilts`); on the ``step`` grid (multiples of ``step``; 1 for
    integer columns) when there is one. A ``clock`` column holds times of day
    written HHMM: its edges, points, cuts and step are in minutes since
    midnight (:mod:`sklearn_privsyn.clock`), and it encodes and decodes HHMM.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn._coders import BinnedCoder
    >>> coder = BinnedCoder("age", 2, np.dtype(float), edges=np.array([0.0, 50.0, 100.0]))
    >>> coder.encode(pd.Series([10.0, 75.0, 100.0])).tolist()
    [0, 1, 1]
    >>> value = coder.decode(np.array([1]), np.random.default_rng(0))[0]
    >>> bool(50.0 <= value <= 100.0)
    True
    >>> gain = BinnedCoder("gain", 3, np.dtype(int), edges=np.array([0.0, 50.0, 100.0]),
    ...                    integer=True, points=np.array([0.0]), step=1.0)
    >>> gain.encode(pd.Series([0, 1, 75])).tolist()
    [2, 0, 1]
    """

    edges: np.ndarray | None = None  # length n_bins + 1
    integer: bool = False  # decode to integers
    clip: bool = True
    points: np.ndarray = field(default_factory=lambda: np.zeros(0))
    step: float | None = None
    equal_width: bool = False  # bins from an int number of bins (may be re-cut privately)
    sampler: object = None  # InBinSampler or None
    tilts: np.ndarray | None = None  # per bin, when there is no sampler (bin_tilts)
    cuts: np.ndarray = field(default_factory=lambda: np.zeros(0))  # edges every cut keeps
    clock: bool = False  # HHMM times of day, binned in minutes (clock.py)
    log: bool | str = False  # True: bins and fine cells on the log scale; "bins": bins alone

    @property
    def n_bins(self):
        """Number of bins (the points' codes come after them)."""
        return len(self.edges) - 1

    @classmethod
    def from_spec(cls, name, series, bound, bin_spec, missing=False, clip=True, points=None,
                  step=None, cuts=None, clock=False, log=False):
        """Return (coder, learned): the bins from ``bounds``/``bins``, or from the data.

        ``learned`` is ``"bounds"`` when the range was taken from the data's
        min and max (not covered by any privacy guarantee), else None.
        ``points`` are declared exact values with codes of their own;
        ``step`` the spacing of the column's values (1 for integer columns);
        ``cuts`` values where a bin must begin (``_number_spec.py``);
        ``clock`` that the column holds HHMM times (bounds, edges, points and
        cuts given as HHMM, ``step`` in minutes, 1 by default); ``log`` its log scale.
        """
        learned = None
        dtype = series.dtype
        integer = pd.api.types.is_integer_dtype(dtype)
        step = check_step(name, step, integer)
        if clock:
            series, bound, bin_spec, points, cuts = clock_spec_in_minutes(
                name, series, bound, bin_spec, points, cuts)
            step = 1.0 if step is None else step
        if isinstance(bin_spec, (bool, np.bool_)) or not (
            isinstance(bin_spec, Integral) or np.ndim(bin_spec) == 1
        ):
            raise ValueError(
                f"bins[{name!r}] must be a positive int or a list of bin edges; got {bin_spec!r}."
            )
        equal_width = isinstance(bin_spec, Integral)
        if isinstance(bin_spec, Integral):
            if bin_spec < 1:
                raise ValueError(f"bins[{name!r}] = {bin_spec} must be at least 1.")
            if bound is None:
                values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
                values = values[np.isfinite(values)]
                if values.size == 0:
                    raise ValueError(
                        f"Column {name!r} has no finite values to learn bounds from; "
                        f"give bounds[{name!r}]."
                    )
                lo, hi = float(values.min()), float(values.max())
                learned = "bounds"
            else:
                lo, hi = check_bounds(name, bound)
            cuts = np.zeros(0) if cuts is None else check_cuts(name, cuts, lo, hi, step)
            # a constant column: one closed bin [lo, lo], which decodes to lo itself
            edges = (np.array([lo, lo]) if hi == lo
                     else cut_edges(lo, hi, int(bin_spec), cuts, step, log))
        else:
            edges = np.asarray(bin_spec, dtype=float)
            if edges.size < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
                raise ValueError(
                    f"bins[{name!r}] must be at least two finite, strictly increasing bin "
                    f"edges; got {list(bin_spec)!r}."
                )
            if bound is not None:
                lo, hi = check_bounds(name, bound)
                if (lo, hi) != (edges[0], edges[-1]):
                    raise ValueError(
                        f"bounds[{name!r}] = {bound!r} disagrees with the first and last "
                        f"edges of bins[{name!r}] ({edges[0]:g}, {edges[-1]:g})."
                    )
            if cuts is not None:
                cuts = check_cuts(name, cuts, edges[0], edges[-1], step)
                if not np.all(np.isin(cuts, edges)):
                    raise ValueError(f"cuts[{name!r}] must be edges of bins[{name!r}].")
        point_values = (np.zeros(0) if points is None
                        else check_points(name, points, edges[0], edges[-1], step))
        if step is not None and edges[-1] > edges[0]:
            lows, highs = integer_ranges(edges / step)
            empty = np.flatnonzero(lows > highs)
            if empty.size:
                i = int(empty[0])
                what = "clock" if clock else "integer column" if integer else "column"
                value = ("whole minute" if clock else "integer" if step == 1
                         else f"multiple of its step {step:g}")
                lo, hi = minutes_to_hhmm(edges[i:i + 2]) if clock else edges[i:i + 2]
                raise ValueError(
                    f"Bin {i} [{lo:g}, {hi:g}) of {what} {name!r} "
                    f"contains no {value}; use fewer bins or wider bounds."
                )
        coder = cls(name, len(edges) - 1 + len(point_values), dtype, missing=missing,
                    edges=edges, integer=integer, clip=clip, points=point_values, step=step,
                    equal_width=equal_width, cuts=np.zeros(0) if cuts is None else cuts,
                    clock=clock, log="bins" if log == "bins" else bool(log))
        return coder, learned

    def with_points(self, points, edges):
        """A copy with other points and bin edges (and no sampler)."""
        points = np.asarray(points, dtype=float)
        return replace(self, n_values=len(edges) - 1 + len(points), edges=np.asarray(edges, float),
                       points=points, sampler=None, tilts=None)

    def with_sampler(self, sampler):
        """A copy that draws values inside bins from ``sampler``."""
        return replace(self, sampler=sampler)

    def bin_of(self, values):
        """Bin of each (finite) value, clipped into the first or last bin."""
        # compared in steps, if the column has one: a value's last bit is no other value
        codes = np.searchsorted(step_units(self.edges, self.step), step_units(values, self.step),
                                "right") - 1
        return np.clip(codes, 0, self.n_bins - 1)

    def _encode_values(self, series, isna):
        values = _numeric_values(self.name, series, isna)
        if self.clock:  # (a missing value is 0.0 here, 0 minutes)
            values = check_clock_values(self.name, values)
        edges = self.edges
        outside = (values < edges[0]) | (values > edges[-1])
        if outside.any() and not self.clip:
            lo, hi = minutes_to_hhmm(edges[[0, -1]]) if self.clock else edges[[0, -1]]
            raise ValueError(
                f"Column {self.name!r} has values outside its bounds [{lo:g}, {hi:g}]: "
                "widen the bounds, or set clip=True (the default) to clip them into the "
                "first or last bin."
            )
        codes = self.bin_of(values)
        if len(self.points):
            points = step_units(self.points, self.step)
            clipped = step_units(np.clip(values, edges[0], edges[-1]), self.step)
            index = np.minimum(np.searchsorted(points, clipped), len(points) - 1)
            is_point = (points[index] == clipped) & ~isna
            codes = np.where(is_point, self.n_bins + index, codes)
        return codes

    def _decode_values(self, codes, rng):
        u = uniform(rng, codes.shape)
        is_point = codes >= self.n_bins
        bins = np.where(is_point, 0, codes)
        if self.sampler is None and self.tilts is not None:
            u = tilted_uniform(self.tilts[bins], u)
        if self.sampler is not None:
            v = uniform(rng, codes.shape)
            rounds = ()
            if self.sampler.rounds:  # which level of round numbers, then which one
                rounds = (uniform(rng, codes.shape),
                          uniform(rng, (self.sampler.round_tries,) + codes.shape))
            values = self.sampler.sample(bins, u, v, *rounds)
        elif self.step is not None:
            values = self._uniform_on_grid(bins, u)
        else:
            lo, hi = self.edges[bins], self.edges[bins + 1]
            values = lo + u * (hi - lo)
            # keep values of half-open bins strictly below their upper edge
            last = bins == self.n_bins - 1
            values = np.where(last | (values < hi), values, np.nextafter(hi, lo))
        if len(self.points):
            values = np.where(is_point, self.points[np.where(is_point, codes - self.n_bins, 0)],
                              values)
        values = np.clip(values, self.edges[0], self.edges[-1])  # (a step's last bit)
        if self.clock:
            values = minutes_to_hhmm(values)
        # + 0.0 turns a -0.0 (a grid value rounded from below 0) into 0.0, which a CSV
        # would otherwise write as "-0.0"
        return values + 0.0

    def _uniform_on_grid(self, bins, u):
        """A uniform multiple of ``step`` within each bin other than the points."""
        step = self.step
        lows, highs = integer_ranges(step_units(self.edges, step))
        k = draw_between(lows[bins], highs[bins], u, step_units(self.points, step))
        return np.round(k * step, 12) if step != 1.0 else k

    def _value_names(self):
        if self.clock:  # HH:MM, the first whole minute at or after each edge
            def show(m):
                m = int(math.ceil(m - 1e-9))
                return f"{m // 60:02d}:{m % 60:02d}"
        else:
            def show(v):
                return f"{v:g}"
        e = self.edges
        names = [f"[{show(e[i])}, {show(e[i + 1])}{']' if i == self.n_bins - 1 else ')'}"
                 for i in range(self.n_bins)]
        return names + [f"={show(v)}" for v in self.points]


def _bad_domain_spec(name, spec):
    return ValueError(
        f"domain[{name!r}] must be a list of values or a positive int size; got {spec!r}."
    )


def make_coder(name, series, *, domain, bounds, bins, default_bins, missing, clip, other=None,
               points=None, step=None, cuts=None, clock=False, log=False):
    """Build the coder of one column from the public domain, or learn it from the data.

    The kind is decided here, in this order: ``domain[name]`` (a list of
    values, or an int number of codes), ``bounds``/``bins`` or a float dtype
    (binned numbers), a boolean dtype (``[False, True]``), and otherwise the
    column's categories or sorted observed values. ``missing`` reserves a code
    for missing values; ``other`` (only with a list of values) is the listed
    value that unknown values map to; ``points``, ``step`` and ``cuts`` (only
    for binned numbers) are the column's declared point masses, step and cuts;
    ``clock`` declares a binned column of HHMM times of day, ``log`` one on a log scale.

    Returns
    -------
    coder : ColumnCoder
    learned : {None, "categories", "bounds"}
        What was taken from the data rather than from the public domain.
    """
    dtype = series.dtype
    if pd.api.types.is_complex_dtype(dtype):
        raise ValueError(f"Complex data not supported (column {name!r}).")
    if other is not None and (name not in domain or isinstance(domain[name], Integral)):
        raise ValueError(
            f"other[{name!r}] needs the column's values listed in domain[{name!r}]."
        )
    in_bins = name in bins
    binned = name in bounds or in_bins or (is_number_dtype(dtype) and name not in domain
                                           and not pd.api.types.is_integer_dtype(dtype))
    if clock and (name in domain or log):
        raise ValueError(
            f"clocks names column {name!r}, which is in "
            + ("log_scale: a time of day has no log scale." if log else
               "domain: a clock is a binned number; give its bounds instead."))
    binned = binned or clock
    for param, value in (("points", points), ("steps", step), ("cuts", cuts),
                         ("log_scale", log or None)):
        if value is not None and not binned:
            raise ValueError(
                f"{param}[{name!r}] applies to binned numbers only, but column {name!r} is "
                "encoded by its values; give its bounds (and bins) to bin it."
            )
    if name in domain and (name in bounds or in_bins):
        raise ValueError(
            f"Column {name!r} is in domain and in {'bounds' if name in bounds else 'bins'}; "
            "give either a value list / size (domain) or a numeric binning (bounds, bins)."
        )
    if name in domain:
        spec = domain[name]
        if isinstance(spec, (bool, np.bool_)):
            raise _bad_domain_spec(name, spec)
        if isinstance(spec, Integral):
            if spec < 1:
                raise ValueError(
                    f"domain[{name!r}] = {spec} must be a positive domain size "
                    "(codes 0..size-1) or a list of values."
                )
            if not is_number_dtype(dtype):
                raise ValueError(
                    f"domain[{name!r}] = {spec} (integer codes) needs a numeric column, "
                    f"but column {name!r} has dtype {dtype}; give a list of values instead."
                )
            return CodeCoder(name, int(spec), dtype, missing=missing), None
        if isinstance(spec, (Real, str, bytes, dict)):
            raise _bad_domain_spec(name, spec)
        try:
            values = list(spec)
        except TypeError:
            raise _bad_domain_spec(name, spec) from None
        return CategoryCoder.from_values(name, values, dtype, missing, "domain", other), None

    if binned:
        if not is_number_dtype(dtype):
            where = "bounds" if name in bounds else "bins" if in_bins else "clocks"
            raise ValueError(
                f"Column {name!r} has dtype {dtype} but is binned as numeric "
                f"(it is in {where}); give its values in domain instead."
            )
        return BinnedCoder.from_spec(name, series, bounds.get(name), bins.get(name, default_bins),
                                     missing, clip, points=points, step=step, cuts=cuts,
                                     clock=clock, log=log)

    if pd.api.types.is_bool_dtype(dtype):
        return CategoryCoder.from_values(name, [False, True], dtype, missing, "dtype"), None
    if isinstance(dtype, pd.CategoricalDtype):
        values = list(dtype.categories)
    else:
        observed = series.dropna().unique()
        try:
            values = sorted(observed)
        except TypeError:
            values = list(observed)
    if not values:
        raise ValueError(
            f"Column {name!r} has no non-missing values to learn its categories from; "
            "give its values in domain."
        )
    return CategoryCoder.from_values(name, values, dtype, missing, "data"), "categories"
