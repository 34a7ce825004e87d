"""Marginal query workloads: encoding, query enumeration and fast answers.

A :class:`QueryWorkload` turns a table into *records* (one integer code per
attribute, see ``docs/architecture.md``) using a public domain, chooses a set
of k-way marginals, and answers their counting queries. Every cell of every
chosen marginal is a positive query; query ``q + Q`` is the negation of query
``q``. Answers are fractions of rows, computed from per-marginal counts
(``np.bincount`` on a mixed-radix cell index), never from a dense query matrix.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .exceptions import PrivacyLeakWarning
from .solvers._base import OneHotLayout

__all__ = ["QueryWorkload"]

# Rows are processed in chunks so that a chunk's (rows x marginals) index
# matrix stays around this many entries (32 MB of int64).
_CHUNK_ENTRIES = 1 << 22
# Largest number of positive queries (total cells) a workload may have: the
# estimators keep several float arrays of 2 * Q entries, so 2**26 cells already
# means gigabytes. Beyond it fit raises instead of exhausting memory.
_MAX_QUERIES = 1 << 26
# Largest number of k-subsets of the columns enumerated when marginals=None.
_MAX_SUBSETS = 1 << 24


@dataclass
class _ColumnCoder:
    """Fitted encoding of one column (private)."""

    name: object
    kind: str  # "category" (listed values), "code" (0..size-1), "bins" (numeric)
    n_values: int  # codes for values, excluding the missing code
    dtype: object  # the column's dtype at fit time
    categories: np.ndarray | None = None  # kind == "category"
    edges: np.ndarray | None = None  # kind == "bins", length n_values + 1
    integer: bool = False  # kind == "bins": decode to integers
    missing: bool = False  # code n_values stands for a missing value

    @property
    def size(self):
        return self.n_values + int(self.missing)


def _is_integer_dtype(dtype):
    return pd.api.types.is_integer_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _is_numeric_dtype(dtype):
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _check_scalar_cells(frame):
    """Object columns may hold only scalars: a list or dict cell is an error, not a category."""
    for col in frame.columns:
        if frame[col].dtype != object:
            continue
        scalar = frame[col].map(pd.api.types.is_scalar).to_numpy(dtype=bool)
        if not scalar.all():
            row = int(np.flatnonzero(~scalar)[0])
            value = frame[col].iloc[row]
            raise TypeError(
                f"Column {col!r} row {row} holds {value!r} ({type(value).__name__}): "
                "each argument must be a string or a number (a scalar)."
            )


def _first_bad(mask):
    return int(np.flatnonzero(mask)[0])


def _show(value):
    """repr of a value without numpy's scalar wrapper (2, not np.int64(2))."""
    return repr(value.item() if isinstance(value, np.generic) else value)


class QueryWorkload(TransformerMixin, BaseEstimator):
    """Workload of k-way marginal queries over a table with a public domain.

    The workload fixes (1) how each column is encoded as integer codes, (2)
    which marginals (sets of columns) are measured, and (3) the numbering of
    their queries. Each cell of each marginal is one counting query, answered
    as the fraction of rows that fall in the cell.

    **Encoding.** A column's codes come from, in this order:

    * ``domain[col]`` as a list of values: codes ``0 .. len - 1`` in list order
      (categorical, string, boolean, integer or any hashable values);
    * ``domain[col]`` as an int ``m``: the column already holds integer codes
      ``0 .. m - 1`` (the paper's format, see
      :func:`~sklearn_privsyn.datasets.load_coded_csv`);
    * ``bounds[col] = (lo, hi)`` and/or ``bins[col]``: numeric values binned
      into equal-width bins over ``[lo, hi]`` (``bins[col]`` an int), or into
      explicit bins (``bins[col]`` a list of increasing edges); the last bin
      is closed;
    * otherwise the domain is learned from the data: boolean columns get
      ``[False, True]`` (public, no warning); categorical, string, object and
      integer columns get their sorted observed values (the dtype's categories
      for a categorical dtype); float columns get ``bins`` equal-width bins
      between their observed min and max. Anything learned from the data
      raises a :class:`~sklearn_privsyn.exceptions.PrivacyLeakWarning`
      naming the columns: it is not covered by any privacy guarantee.

    **Marginals.** With ``marginals=None`` the paper's protocol is used: all
    ``k``-subsets of the columns are enumerated in column order
    (``itertools.combinations``), those with at most ``max_cells`` cells (the
    product of their domain sizes) are kept, and if ``n_marginals`` is given,
    ``check_random_state(random_state).choice(n_eligible, n_marginals,
    replace=False)`` picks that many. The chosen marginals are kept in
    enumeration order (the choice decides the set, not the order). With an
    int ``random_state`` this is exactly the paper's
    ``np.random.RandomState(seed).choice``: on ADULT with ``k=3``,
    ``max_cells=48842``, ``n_marginals=64`` and ``random_state=0`` it picks
    64 of the 278 eligible marginals with 458,996 cells in all.

    **Queries.** Positive query ids ``0 .. Q-1`` run marginal by marginal
    (see ``marginal_offsets_``); within a marginal, cells are in C order of
    its columns' codes (the last column varies fastest). Id ``q + Q`` is the
    negation of id ``q``; its answer is ``1 - answer[q]``.

    Parameters
    ----------
    domain : dict, default=None
        Public domain: column -> list of values, or int domain size (the
        column holds codes ``0 .. size - 1``).
    k : int, default=3
        Arity of the marginals when ``marginals`` is None.
    marginals : list of tuples of column names, default=None
        Explicit marginals (any arities). A bare column name is a 1-way
        marginal. When given, ``k`` is ignored and ``n_marginals`` and
        ``max_cells`` must be None.
    n_marginals : int, default=None
        Number of marginals drawn at random from the eligible ones; None keeps
        all eligible marginals.
    max_cells : int or "n_rows", default=None
        Keep only marginals with at most this many cells; ``"n_rows"`` uses
        the number of rows of the table passed to ``fit`` (public under the
        replace-one neighbouring relation). None means no limit.
    bins : int or dict, default=10
        Bins per numeric column: an int for all numeric columns, or a dict
        column -> int (equal-width bins) or list of bin edges. Numeric
        columns missing from the dict get 10 equal-width bins.
    bounds : dict, default=None
        Public bounds column -> ``(lo, hi)`` of numeric columns.
    clip : bool, default=False
        Clip numeric values outside their bounds into the first or last bin
        instead of raising ``ValueError``.
    handle_missing : {"error", "category"}, default="error"
        ``"error"`` raises on missing values (NaN, None, NA). ``"category"``
        gives every column one extra code, after the others, for missing
        values (every column, so the domain does not depend on the data).
    random_state : int, RandomState instance or None, default=None
        Seed of the random choice of marginals.

    Attributes
    ----------
    n_features_in_ : int
        Number of columns seen during fit.
    feature_names_in_ : ndarray of str
        Column names seen during fit (only for string column names).
    columns_ : tuple
        Column names, in order; attribute ``a`` of a record is column
        ``columns_[a]``.
    domain_sizes_ : dict
        Column -> number of codes (``{column: size}``, as in domain JSON files).
    categories_ : dict
        Column -> array of values, for columns encoded by value lists.
    bin_edges_ : dict
        Column -> array of bin edges, for binned numeric columns.
    layout_ : OneHotLayout
        The one-hot layout (one block per column).
    marginals_ : tuple of tuples
        The chosen marginals (tuples of column names).
    n_eligible_marginals_ : int or None
        Number of k-subsets that met ``max_cells`` (None with explicit
        ``marginals``).
    marginal_offsets_ : ndarray of shape (n_marginals + 1,)
        The cells of marginal ``j`` are the positive query ids
        ``marginal_offsets_[j] .. marginal_offsets_[j + 1] - 1``.
    marginal_of_query_ : ndarray of shape (n_queries_,)
        Marginal index of each positive query (also ``marginal_of_query``).
    n_queries_ : int
        Number ``Q`` of positive queries (total cells); ``2 * Q`` ids with
        negations.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> X = pd.DataFrame({"colour": ["red", "blue", "red"], "size": [0, 2, 1]})
    >>> wl = QueryWorkload(domain={"colour": ["red", "blue"], "size": 3}, k=2).fit(X)
    >>> wl.marginals_, wl.n_queries_
    ((('colour', 'size'),), 6)
    >>> wl.answer(X).round(3).tolist()
    [0.333, 0.333, 0.0, 0.0, 0.0, 0.333]
    >>> wl.encode(X).tolist()
    [[0, 0], [1, 2], [0, 1]]
    >>> wl.query_literals([5, 6])  # cell (blue, 2), and NOT (red, 0)
    (array([[1, 4],
           [0, 2]]), array([False,  True]))
    """

    _parameter_constraints: dict = {
        "domain": [dict, None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "marginals": ["array-like", None],
        "n_marginals": [Interval(Integral, 1, None, closed="left"), None],
        "max_cells": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"n_rows"}),
            None,
        ],
        "bins": [Interval(Integral, 1, None, closed="left"), dict],
        "bounds": [dict, None],
        "clip": ["boolean"],
        "handle_missing": [StrOptions({"error", "category"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        domain=None,
        k=3,
        marginals=None,
        n_marginals=None,
        max_cells=None,
        bins=10,
        bounds=None,
        clip=False,
        handle_missing="error",
        random_state=None,
    ):
        self.domain = domain
        self.k = k
        self.marginals = marginals
        self.n_marginals = n_marginals
        self.max_cells = max_cells
        self.bins = bins
        self.bounds = bounds
        self.clip = clip
        self.handle_missing = handle_missing
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = self.handle_missing == "category"
        tags.transformer_tags.preserves_dtype = []
        return tags

    # ------------------------------------------------------------------ fit

    def fit(self, X, y=None):
        """Learn the encoding and choose the marginals.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_columns)
            The table. Arrays are accepted and get integer column names.
        y : None
            Ignored.

        Returns
        -------
        self : QueryWorkload
        """
        self._validate_params()
        # A failed fit leaves no fitted attribute, never a mix of two fits.
        self._clear_fitted()
        try:
            return self._fit(X)
        except BaseException:
            self._clear_fitted()
            raise

    _PRIVATE_FITTED = ("_coders", "_marginal_attrs", "_marginal_mult", "_marginal_radix",
                       "_radix_matrix")

    def _clear_fitted(self):
        for name in list(vars(self)):
            if (name.endswith("_") and not name.startswith("__")) or name in self._PRIVATE_FITTED:
                delattr(self, name)

    def _fit(self, X):
        X = self._as_frame(X, fitting=True)
        columns = tuple(X.columns)
        self.n_features_in_ = len(columns)
        if all(isinstance(c, str) for c in columns):
            self.feature_names_in_ = np.asarray(columns, dtype=object)
        self.columns_ = columns

        domain = {} if self.domain is None else dict(self.domain)
        bounds = {} if self.bounds is None else dict(self.bounds)
        bins = self.bins if isinstance(self.bins, dict) else {}
        for param, spec in (("domain", domain), ("bounds", bounds), ("bins", bins)):
            unknown = [c for c in spec if c not in columns]
            if unknown:
                raise ValueError(
                    f"{param} names columns not in X: {unknown}. X has columns {list(columns)}."
                )

        learned_categories, learned_bounds = [], []
        coders = []
        for col in columns:
            coder, learned = self._fit_column(col, X[col], domain, bounds, bins)
            coders.append(coder)
            if learned == "categories":
                learned_categories.append(col)
            elif learned == "bounds":
                learned_bounds.append(col)
        if learned_categories or learned_bounds:
            parts = []
            if learned_categories:
                parts.append(f"the values of columns {learned_categories}")
            if learned_bounds:
                parts.append(f"the min/max of numeric columns {learned_bounds}")
            warnings.warn(
                "QueryWorkload learned "
                + " and ".join(parts)
                + " from the data. This is not covered by the privacy guarantee; "
                "give them publicly with domain= (values) and bounds= (numeric ranges).",
                PrivacyLeakWarning,
                stacklevel=3,
            )
        self._coders = coders
        self.domain_sizes_ = {c.name: c.size for c in coders}
        self.categories_ = {c.name: c.categories for c in coders if c.kind == "category"}
        self.bin_edges_ = {c.name: c.edges for c in coders if c.kind == "bins"}
        self.layout_ = OneHotLayout(tuple(c.size for c in coders))

        # Validate every value now, so that errors surface at fit time.
        self._encode_frame(X)

        self._fit_marginals(n_rows=X.shape[0])
        return self

    def _as_frame(self, X, fitting=False):
        if isinstance(X, pd.DataFrame):
            frame = X
        else:
            if sp.issparse(X):
                raise TypeError("QueryWorkload needs a table, not a sparse matrix.")
            arr = np.asarray(X, dtype=object if not hasattr(X, "dtype") else None)
            if arr.ndim != 2:
                raise ValueError(
                    f"X must be a 2-dimensional table; got shape {arr.shape}. Reshape your "
                    "data with X.reshape(-1, 1) for a single column or X.reshape(1, -1) for "
                    "a single row."
                )
            if np.iscomplexobj(arr):
                raise ValueError("Complex data not supported.")
            names = None if fitting else list(self.columns_)
            if names is not None and arr.shape[1] != len(names):
                raise ValueError(
                    f"X has {arr.shape[1]} features, but QueryWorkload is expecting "
                    f"{len(names)} features as input (columns {names})."
                )
            frame = pd.DataFrame(arr, columns=names)
            if arr.dtype == object:
                frame = frame.infer_objects()
        dup = frame.columns[frame.columns.duplicated()].unique().tolist()
        if dup:
            raise ValueError(f"X has duplicate column names: {dup}.")
        _check_scalar_cells(frame)
        if fitting:
            if frame.shape[1] == 0:
                raise ValueError(
                    f"Found array with 0 feature(s) (shape={frame.shape}) while a minimum "
                    "of 1 is required: X has no columns."
                )
            if frame.shape[0] == 0:
                raise ValueError(
                    f"Found array with 0 sample(s) (shape={frame.shape}) while a minimum "
                    "of 1 is required: X has no rows to fit on."
                )
            return frame
        missing = [c for c in self.columns_ if c not in frame.columns]
        extra = [c for c in frame.columns if c not in self.columns_]
        if missing or extra:
            raise ValueError(
                f"X's columns differ from those seen in fit: missing {missing}, "
                f"unexpected {extra}."
            )
        return frame[list(self.columns_)]

    def _fit_column(self, col, series, domain, bounds, bins):
        """Return (coder, what was learned from data: None/"categories"/"bounds")."""
        dtype = series.dtype
        if pd.api.types.is_complex_dtype(dtype):
            raise ValueError(f"Complex data not supported (column {col!r}).")
        missing = self.handle_missing == "category"
        in_bins = col in bins
        if col in domain and (col in bounds or in_bins):
            raise ValueError(
                f"Column {col!r} is in domain and in {'bounds' if col in bounds else 'bins'}; "
                "give either a value list / size (domain) or a numeric binning (bounds, bins)."
            )
        if col in domain:
            spec = domain[col]
            if isinstance(spec, (bool, np.bool_)):
                raise ValueError(
                    f"domain[{col!r}] must be a list of values or a positive int size; got {spec!r}."
                )
            if isinstance(spec, Integral):
                if spec < 1:
                    raise ValueError(
                        f"domain[{col!r}] = {spec} must be a positive domain size "
                        "(codes 0..size-1) or a list of values."
                    )
                if not _is_numeric_dtype(dtype):
                    raise ValueError(
                        f"domain[{col!r}] = {spec} (integer codes) needs a numeric column, "
                        f"but column {col!r} has dtype {dtype}; give a list of values instead."
                    )
                return _ColumnCoder(col, "code", int(spec), dtype, missing=missing), None
            if isinstance(spec, Real) or isinstance(spec, (str, bytes)) or isinstance(spec, dict):
                raise ValueError(
                    f"domain[{col!r}] must be a list of values or a positive int size; got {spec!r}."
                )
            try:
                values = list(spec)
            except TypeError:
                raise ValueError(
                    f"domain[{col!r}] must be a list of values or a positive int size; got {spec!r}."
                ) from None
            return self._category_coder(col, values, dtype, missing, source="domain"), None

        if col in bounds or in_bins or (
            _is_numeric_dtype(dtype) and not _is_integer_dtype(dtype)
        ):
            if not _is_numeric_dtype(dtype):
                raise ValueError(
                    f"Column {col!r} has dtype {dtype} but is binned as numeric "
                    f"(it is in {'bounds' if col in bounds else 'bins'}); give its values "
                    "in domain instead."
                )
            return self._bins_coder(col, series, bounds.get(col), bins.get(col), missing)

        if pd.api.types.is_bool_dtype(dtype):
            return self._category_coder(col, [False, True], dtype, missing, "dtype"), None
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
                f"Column {col!r} has no non-missing values to learn its categories from; "
                "give its values in domain."
            )
        return self._category_coder(col, values, dtype, missing, "data"), "categories"

    @staticmethod
    def _category_coder(col, values, dtype, missing, source):
        if len(values) == 0:
            raise ValueError(f"domain[{col!r}] is empty; a column needs at least one value.")
        if any(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
            raise ValueError(
                f"domain[{col!r}] contains a missing value; use handle_missing='category' "
                "to give missing values their own code."
            )
        index = pd.Index(values, dtype=object)
        if index.has_duplicates:
            dup = index[index.duplicated()].unique().tolist()
            raise ValueError(f"{source} values of column {col!r} contain duplicates: {dup}.")
        categories = np.empty(len(values), dtype=object)
        categories[:] = values
        return _ColumnCoder(col, "category", len(values), dtype, categories=categories,
                            missing=missing)

    def _bins_coder(self, col, series, bound, bin_spec, missing):
        learned = None
        integer = _is_integer_dtype(series.dtype)
        if bin_spec is None:
            bin_spec = self.bins if not isinstance(self.bins, dict) else 10
        if isinstance(bin_spec, (bool, np.bool_)) or not (
            isinstance(bin_spec, Integral) or np.ndim(bin_spec) == 1
        ):
            raise ValueError(
                f"bins[{col!r}] must be a positive int or a list of bin edges; got {bin_spec!r}."
            )
        if isinstance(bin_spec, Integral):
            if bin_spec < 1:
                raise ValueError(f"bins[{col!r}] = {bin_spec} must be at least 1.")
            if bound is None:
                values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
                values = values[np.isfinite(values)]
                if values.size == 0:
                    raise ValueError(
                        f"Column {col!r} has no finite values to learn bounds from; "
                        "give bounds[{col!r}]."
                    )
                lo, hi = float(values.min()), float(values.max())
                learned = "bounds"
            else:
                lo, hi = self._check_bounds(col, bound)
            if hi == lo:
                # a constant column: one closed bin [lo, lo], which decodes to lo itself
                edges = np.array([lo, lo])
            else:
                edges = np.linspace(lo, hi, int(bin_spec) + 1)
        else:
            edges = np.asarray(bin_spec, dtype=float)
            if edges.size < 2 or not np.all(np.isfinite(edges)) or np.any(np.diff(edges) <= 0):
                raise ValueError(
                    f"bins[{col!r}] must be at least two finite, strictly increasing bin "
                    f"edges; got {list(bin_spec)!r}."
                )
            if bound is not None:
                lo, hi = self._check_bounds(col, bound)
                if (lo, hi) != (edges[0], edges[-1]):
                    raise ValueError(
                        f"bounds[{col!r}] = {bound!r} disagrees with the first and last "
                        f"edges of bins[{col!r}] ({edges[0]:g}, {edges[-1]:g})."
                    )
        if integer:
            lows, highs = self._integer_ranges(edges)
            empty = np.flatnonzero(lows > highs)
            if empty.size:
                i = int(empty[0])
                raise ValueError(
                    f"Bin {i} [{edges[i]:g}, {edges[i + 1]:g}) of integer column {col!r} "
                    "contains no integer; use fewer bins or wider bounds."
                )
        coder = _ColumnCoder(col, "bins", len(edges) - 1, series.dtype, edges=edges,
                             integer=integer, missing=missing)
        return coder, learned

    @staticmethod
    def _check_bounds(col, bound):
        try:
            lo, hi = (float(b) for b in bound)
        except (TypeError, ValueError):
            raise ValueError(
                f"bounds[{col!r}] must be a pair (lo, hi) of numbers; got {bound!r}."
            ) from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(f"bounds[{col!r}] = {bound!r} must satisfy lo < hi (both finite).")
        return lo, hi

    @staticmethod
    def _integer_ranges(edges):
        """Integers in bin i are lows[i] .. highs[i] (last bin closed)."""
        lows = np.ceil(edges[:-1])
        highs = np.ceil(edges[1:]) - 1
        highs[-1] = np.floor(edges[-1])
        return lows, highs

    def _fit_marginals(self, n_rows):
        columns = self.columns_
        sizes = np.asarray(self.layout_.block_sizes, dtype=np.intp)
        if self.marginals is not None:
            if self.n_marginals is not None or self.max_cells is not None:
                raise ValueError(
                    "n_marginals and max_cells apply only when marginals=None; "
                    "got explicit marginals together with "
                    + ("n_marginals" if self.n_marginals is not None else "max_cells")
                    + "."
                )
            index = {c: a for a, c in enumerate(columns)}
            chosen, seen = [], {}
            for m in self.marginals:
                names = (m,) if isinstance(m, str) or not np.iterable(m) else tuple(m)
                if len(names) == 0:
                    raise ValueError("marginals contains an empty marginal ().")
                unknown = [c for c in names if c not in index]
                if unknown:
                    raise ValueError(
                        f"marginals entry {names!r} names columns not in X: {unknown}."
                    )
                if len(set(names)) != len(names):
                    raise ValueError(f"marginals entry {names!r} repeats a column.")
                key = frozenset(names)
                if key in seen:
                    raise ValueError(
                        f"marginals entries {seen[key]!r} and {names!r} are the same marginal."
                    )
                seen[key] = names
                chosen.append(tuple(index[c] for c in names))
            if not chosen:
                raise ValueError("marginals is empty; give at least one marginal.")
            self.n_eligible_marginals_ = None
        else:
            if self.k > len(columns):
                raise ValueError(
                    f"k={self.k} is larger than the number of columns ({len(columns)})."
                )
            n_subsets = math.comb(len(columns), self.k)
            if n_subsets > _MAX_SUBSETS:
                raise ValueError(
                    f"k={self.k} over {len(columns)} columns gives {n_subsets:,} marginals to "
                    f"enumerate, more than {_MAX_SUBSETS:,}; lower k or give marginals= "
                    "explicitly."
                )
            combos = np.fromiter(
                itertools.chain.from_iterable(itertools.combinations(range(len(columns)), self.k)),
                dtype=np.intp,
            ).reshape(-1, self.k)
            cells = np.prod(sizes[combos].astype(float), axis=1)
            limit = n_rows if self.max_cells == "n_rows" else self.max_cells
            if limit is not None:
                combos = combos[cells <= limit]
            self.n_eligible_marginals_ = int(combos.shape[0])
            if combos.shape[0] == 0:
                raise ValueError(
                    f"No {self.k}-way marginal has at most max_cells={limit} cells; "
                    "raise max_cells or lower k."
                )
            if self.n_marginals is not None:
                if self.n_marginals > combos.shape[0]:
                    raise ValueError(
                        f"n_marginals={self.n_marginals} is more than the "
                        f"{combos.shape[0]} eligible {self.k}-way marginals."
                    )
                rng = check_random_state(self.random_state)
                pick = rng.choice(combos.shape[0], self.n_marginals, replace=False)
                combos = combos[np.sort(pick)]
            chosen = [tuple(int(a) for a in row) for row in combos]

        cells = [math.prod(int(sizes[a]) for a in m) for m in chosen]
        if sum(cells) > _MAX_QUERIES:
            j = int(np.argmax(cells))
            biggest = tuple(columns[a] for a in chosen[j])
            sizes_of = {columns[a]: int(sizes[a]) for a in chosen[j]}
            raise ValueError(
                f"The workload has {sum(cells):,} queries (cells) in {len(chosen)} marginals, "
                f"more than {_MAX_QUERIES:,}: it would not fit in memory. The largest "
                f"marginal is {biggest!r} with {cells[j]:,} cells (domain sizes {sizes_of}). "
                "Set max_cells (and n_marginals), lower k, or coarsen the columns with "
                "many values."
            )
        self.marginals_ = tuple(tuple(columns[a] for a in m) for m in chosen)
        n_marg = len(chosen)
        kmax = max(len(m) for m in chosen)
        attrs = np.full((n_marg, kmax), -1, dtype=np.intp)
        mult = np.ones((n_marg, kmax), dtype=np.int64)
        radix = np.ones((n_marg, kmax), dtype=np.int64)
        n_cells = np.empty(n_marg, dtype=np.int64)
        for j, m in enumerate(chosen):
            msizes = [int(sizes[a]) for a in m]
            total = math.prod(msizes)
            if total >= 2**53:
                raise ValueError(
                    f"Marginal {self.marginals_[j]!r} has {total} cells, too many to index."
                )
            n_cells[j] = total
            attrs[j, : len(m)] = m
            radix[j, : len(m)] = msizes
            # C order: the last column varies fastest.
            mult[j, : len(m)] = np.concatenate([np.cumprod(msizes[::-1])[::-1][1:], [1]])
        self._marginal_attrs = attrs
        self._marginal_mult = mult
        self._marginal_radix = radix
        # (n_attributes, n_marginals) multipliers: a record's cell in marginal j
        # is records @ matrix[:, j]; exact in float64 below 2**53.
        matrix = np.zeros((len(columns), n_marg), dtype=float)
        for j, m in enumerate(chosen):
            matrix[list(m), j] = mult[j, : len(m)]
        self._radix_matrix = matrix
        self.marginal_offsets_ = np.concatenate([[0], np.cumsum(n_cells)]).astype(np.intp)
        self.n_queries_ = int(self.marginal_offsets_[-1])
        self.marginal_of_query_ = np.repeat(np.arange(n_marg, dtype=np.intp), n_cells)

    @property
    def marginal_of_query(self):
        """Marginal index of each positive query, shape ``(n_queries_,)``."""
        check_is_fitted(self)
        return self.marginal_of_query_

    # ------------------------------------------------------------- encoding

    def encode(self, X):
        """Encode a table as records (integer codes).

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_columns)
            A table with the columns seen in fit (matched by name).

        Returns
        -------
        records : ndarray of shape (n_samples, n_attributes), dtype intp
            ``records[i, a]`` is the code of row ``i`` in column ``columns_[a]``.

        Raises
        ------
        ValueError
            If a value lies outside its column's domain or is missing (with
            ``handle_missing="error"``); the message names column and value.
        """
        check_is_fitted(self)
        return self._encode_frame(self._as_frame(X))

    def _encode_frame(self, X):
        out = np.empty((X.shape[0], len(self._coders)), dtype=np.intp)
        for a, coder in enumerate(self._coders):
            out[:, a] = self._encode_column(coder, X.iloc[:, a])
        return out

    def _encode_column(self, coder, series):
        col = coder.name
        isna = series.isna().to_numpy()
        has_na = bool(isna.any())
        if has_na and not coder.missing:
            raise ValueError(
                f"Column {col!r} has missing values (NaN/None) (row {_first_bad(isna)}); drop or "
                "impute them, or use handle_missing='category'."
            )
        if coder.kind == "category":
            codes = pd.Index(coder.categories, dtype=object).get_indexer(
                series.to_numpy(dtype=object)
            )
            bad = (codes < 0) & ~isna
            if bad.any():
                row = _first_bad(bad)
                raise ValueError(
                    f"Column {col!r} has value {_show(series.iloc[row])} (row {row}) outside its "
                    f"domain of {coder.n_values} values {self._preview(coder.categories)}."
                )
        else:
            values = pd.to_numeric(series, errors="coerce")
            values = values.to_numpy(dtype=float, na_value=np.nan)
            bad = np.isnan(values) & ~isna
            if bad.any():
                row = _first_bad(bad)
                raise ValueError(
                    f"Column {col!r} has non-numeric value {_show(series.iloc[row])} (row {row})."
                )
            if np.isinf(values).any():
                row = _first_bad(np.isinf(values))
                raise ValueError(f"Column {col!r} has an infinite value (inf) in row {row}.")
            if has_na:
                values = np.where(isna, 0.0, values)
            if coder.kind == "code":
                bad = (values != np.round(values)) | (values < 0) | (values >= coder.n_values)
                if bad.any():
                    row = _first_bad(bad)
                    raise ValueError(
                        f"Column {col!r} has value {_show(series.iloc[row])} (row {row}) outside its "
                        f"domain of integer codes 0..{coder.n_values - 1}."
                    )
                codes = values.astype(np.intp)
            else:
                edges = coder.edges
                outside = (values < edges[0]) | (values > edges[-1])
                if outside.any() and not self.clip:
                    row = _first_bad(outside)
                    raise ValueError(
                        f"Column {col!r} has value {_show(series.iloc[row])} (row {row}) outside its "
                        f"bounds [{edges[0]:g}, {edges[-1]:g}]; widen bounds or set clip=True."
                    )
                codes = np.searchsorted(edges, values, side="right") - 1
                np.clip(codes, 0, coder.n_values - 1, out=codes)
        if has_na:
            codes = np.where(isna, coder.n_values, codes)
        return codes

    @staticmethod
    def _preview(values, n=8):
        shown = [v.item() if isinstance(v, np.generic) else v for v in values[:n]]
        return f"{shown!r}" if len(values) <= n else f"{shown!r}[:{n}] ..."

    def decode(self, records, random_state=None):
        """Turn records back into a table with the original columns and dtypes.

        Listed values and integer codes decode exactly. A binned numeric value
        is drawn uniformly within its bin (uniform integers for integer
        columns). A missing code decodes to a missing value; integer and
        boolean columns that receive one become float and object columns.

        Parameters
        ----------
        records : array-like of shape (n_samples, n_attributes)
            Integer codes.
        random_state : int, RandomState, Generator or None, default=None
            Randomness for binned numeric columns.

        Returns
        -------
        X : DataFrame of shape (n_samples, n_columns)
        """
        check_is_fitted(self)
        records = self.layout_.check_records(records)
        rng = random_state
        if not isinstance(rng, np.random.Generator):
            rng = check_random_state(rng)
        data = {}
        for a, coder in enumerate(self._coders):
            data[coder.name] = self._decode_column(coder, records[:, a], rng)
        return pd.DataFrame(data, columns=list(self.columns_))

    def _decode_column(self, coder, codes, rng):
        isna = codes == coder.n_values if coder.missing else np.zeros(codes.shape, bool)
        has_na = bool(isna.any())
        safe = np.where(isna, 0, codes)
        dtype = coder.dtype
        if coder.kind == "category":
            values = coder.categories[safe]
            if has_na:
                values[isna] = None
            if isinstance(dtype, pd.CategoricalDtype):
                if not set(coder.categories) <= set(dtype.categories):
                    dtype = pd.CategoricalDtype(list(coder.categories), ordered=dtype.ordered)
                return pd.Series(pd.Categorical(values, dtype=dtype))
        elif coder.kind == "code":
            values = safe.astype(float if has_na else np.int64)
            if has_na:
                values[isna] = np.nan
        else:
            u = rng.random(codes.shape) if isinstance(rng, np.random.Generator) else (
                rng.random_sample(codes.shape)
            )
            if coder.integer:
                lows, highs = self._integer_ranges(coder.edges)
                lo, hi = lows[safe], highs[safe]
                values = np.minimum(lo + np.floor(u * (hi - lo + 1)), hi)
            else:
                lo, hi = coder.edges[safe], coder.edges[safe + 1]
                values = lo + u * (hi - lo)
                # keep values of half-open bins strictly below their upper edge
                last = safe == coder.n_values - 1
                values = np.where(last | (values < hi), values, np.nextafter(hi, lo))
            if has_na:
                values[isna] = np.nan
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

    # ------------------------------------------------------------- one-hot

    def transform(self, X):
        """One-hot encode a table.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_columns)

        Returns
        -------
        onehot : scipy.sparse CSR matrix of shape (n_samples, layout_.n_features)
            Exactly one 1.0 per column block per row; columns follow
            :meth:`get_feature_names_out`.
        """
        return self._records_to_onehot(self.encode(X))

    def _records_to_onehot(self, records):
        n, p = records.shape
        indices = (records + self.layout_.starts).ravel()
        indptr = np.arange(0, n * p + 1, p, dtype=np.intp)
        data = np.ones(n * p, dtype=float)
        return sp.csr_matrix((data, indices, indptr), shape=(n, self.layout_.n_features))

    def inverse_transform(self, X, random_state=None):
        """Turn a one-hot matrix (dense or sparse) back into a table.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, layout_.n_features)
            Each row must have exactly one 1 in each column's block.
        random_state : int, RandomState, Generator or None, default=None
            Randomness for binned numeric columns (see :meth:`decode`).

        Returns
        -------
        X_original : DataFrame of shape (n_samples, n_columns)
        """
        check_is_fitted(self)
        layout = self.layout_
        if not sp.issparse(X):
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"X must be 2-dimensional; got shape {X.shape}.")
        if X.shape[1] != layout.n_features:
            raise ValueError(
                f"X has {X.shape[1]} columns; the one-hot layout has {layout.n_features}."
            )
        csr = sp.csr_matrix(X, dtype=float)
        csr.eliminate_zeros()
        csr.sum_duplicates()
        csr.sort_indices()
        n, p = csr.shape[0], layout.n_attributes
        per_row = np.diff(csr.indptr)
        ok = np.all(per_row == p) and np.all(csr.data == 1.0)
        if ok and n:
            indices = csr.indices.reshape(n, p)
            ok = np.array_equal(layout.attribute_of[indices], np.broadcast_to(np.arange(p), (n, p)))
        if not ok:
            raise ValueError(
                "X is not a valid one-hot matrix: each row needs exactly one 1 in each "
                "column's block and zeros elsewhere."
            )
        records = (csr.indices.reshape(n, p) - layout.starts) if n else np.empty((0, p), np.intp)
        return self.decode(records, random_state=random_state)

    def get_feature_names_out(self, input_features=None):
        """Names of the one-hot columns: ``"{column}_{value}"``.

        Binned columns use ``"{column}_[lo, hi)"`` (``]`` for the last bin);
        missing codes use ``"{column}_nan"``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Must equal the fitted column names if given.

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self)
        if input_features is not None and list(input_features) != list(self.columns_):
            raise ValueError(
                f"input_features {list(input_features)} differ from the fitted columns "
                f"{list(self.columns_)}."
            )
        names = []
        for coder in self._coders:
            if coder.kind == "category":
                names.extend(f"{coder.name}_{v}" for v in coder.categories)
            elif coder.kind == "code":
                names.extend(f"{coder.name}_{v}" for v in range(coder.n_values))
            else:
                e = coder.edges
                for i in range(coder.n_values):
                    close = "]" if i == coder.n_values - 1 else ")"
                    names.append(f"{coder.name}_[{e[i]:g}, {e[i + 1]:g}{close}")
            if coder.missing:
                names.append(f"{coder.name}_nan")
        return np.asarray(names, dtype=object)

    # -------------------------------------------------------------- answers

    def answer(self, X):
        """Answers of the positive queries on a table, as fractions of rows.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_columns)

        Returns
        -------
        answers : ndarray of shape (n_queries_,)
            Negation answers are ``1 - answers``.
        """
        check_is_fitted(self)
        return self.answer_codes(self.encode(X))

    def answer_codes(self, records, weights=None):
        """Weighted answers of the positive queries on records.

        Parameters
        ----------
        records : array-like of shape (n_samples, n_attributes)
            Integer codes.
        weights : array-like of shape (n_samples,), default=None
            Non-negative row weights, normalised to sum to 1. None weights
            rows equally.

        Returns
        -------
        answers : ndarray of shape (n_queries_,)
            ``answers[q]`` is the (weighted) fraction of records in cell ``q``.
        """
        check_is_fitted(self)
        records = self.layout_.check_records(records)
        n = records.shape[0]
        if weights is not None:
            weights = np.asarray(weights, dtype=float)
            if weights.shape != (n,):
                raise ValueError(
                    f"weights must have shape ({n},) (one per record); got {weights.shape}."
                )
            if not np.all(np.isfinite(weights)) or np.any(weights < 0):
                raise ValueError("weights must be finite and non-negative.")
            total = float(weights.sum())
        else:
            total = float(n)
        if total <= 0:
            raise ValueError(
                "Cannot answer queries on an empty table (no records or zero total weight)."
            )
        return self._counts(records, weights) / total

    def _counts(self, records, weights):
        Q = self.n_queries_
        matrix = self._radix_matrix
        offsets = self.marginal_offsets_[:-1]
        n_marg = matrix.shape[1]
        chunk = max(1, _CHUNK_ENTRIES // n_marg)
        counts = np.zeros(Q, dtype=float)
        for start in range(0, records.shape[0], chunk):
            block = records[start : start + chunk]
            flat = (block.astype(float) @ matrix).astype(np.intp)
            flat += offsets
            w = None
            if weights is not None:
                w = np.repeat(weights[start : start + chunk], n_marg)
            counts += np.bincount(flat.ravel(), weights=w, minlength=Q)
        return counts

    def query_literals(self, query_ids):
        """One-hot literals of queries, for the optimisation oracles.

        Parameters
        ----------
        query_ids : array-like of int, shape (m,)
            Ids in ``0 .. 2 * n_queries_ - 1``; ``q >= n_queries_`` is the
            negation of ``q - n_queries_``.

        Returns
        -------
        literals : ndarray of shape (m, kmax), dtype intp
            One-hot column indices of each query's cell, one per column of
            its marginal, padded with -1 for marginals of smaller arity.
        negated : ndarray of shape (m,), dtype bool
            Whether each query is a negation (``1 - conjunction``).
        """
        check_is_fitted(self)
        Q = self.n_queries_
        ids = np.asarray(query_ids)
        if ids.ndim != 1:
            ids = ids.reshape(-1)
        if ids.size and not np.issubdtype(ids.dtype, np.integer):
            raise ValueError(f"query_ids must be integers; got dtype {ids.dtype}.")
        ids = ids.astype(np.intp, copy=False)
        bad = (ids < 0) | (ids >= 2 * Q)
        if bad.any():
            raise ValueError(
                f"query id {_show(ids[_first_bad(bad)])} is outside 0..{2 * Q - 1} "
                f"(Q = {Q} positive queries and their negations)."
            )
        negated = ids >= Q
        base = ids - Q * negated
        j = np.searchsorted(self.marginal_offsets_, base, side="right") - 1
        cell = (base - self.marginal_offsets_[j])[:, None]
        attrs = self._marginal_attrs[j]
        codes = (cell // self._marginal_mult[j]) % self._marginal_radix[j]
        starts = self.layout_.starts
        literals = np.where(attrs >= 0, starts[np.maximum(attrs, 0)] + codes, -1)
        return literals.astype(np.intp), negated
