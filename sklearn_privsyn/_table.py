"""Tables in and out: the array-to-DataFrame convention and the table encoder.

:func:`as_frame` is the one place where an array becomes a table: its columns
are named ``x0, x1, ...`` (scikit-learn's convention for unnamed features), so a
domain written for an array (``{"x0": [...]}``) means the same columns whether
it is fitted by a workload alone or inside a synthesizer.

:class:`TableEncoder` holds one column coder per column (see ``_coders.py``) and
the one-hot layout they make; it turns a table into records and back.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ._coders import BinnedCoder, CategoryCoder, make_coder
from .exceptions import PrivacyLeakWarning
from ._layout import OneHotLayout
from ._number_spec import log_scales

__all__ = [
    "TableEncoder",
    "as_frame",
    "check_not_empty",
    "check_public_domain",
    "check_schema",
    "check_scalar_cells",
    "default_column_names",
    "frame_with_columns",
    "missable_columns",
    "warn_learned_domain",
]


def default_column_names(n_columns):
    """Names of an array's columns: ``x0, x1, ...``."""
    return [f"x{i}" for i in range(n_columns)]


def as_frame(X, columns=None, owner="the estimator"):
    """``X`` as a DataFrame; an array gets ``columns`` (default ``x0, x1, ...``).

    ``owner`` names the estimator in the width error (scikit-learn's wording).

    Raises ``TypeError`` for sparse input and ``ValueError`` for input that is
    not two-dimensional, complex, or (with ``columns``) of the wrong width.
    """
    if isinstance(X, pd.DataFrame):
        return X
    if sp.issparse(X):
        raise TypeError(
            "Sparse data was passed for X, but dense data is required: a synthesizer "
            "models a table. Use X.toarray() to convert to a dense numpy array."
        )
    # lists keep each value's own type (a str array would turn 1 into "1")
    array = np.asarray(X, dtype=object if not hasattr(X, "dtype") else None)
    if array.ndim != 2:
        raise ValueError(
            "X must be 2-dimensional (a DataFrame or an array of shape (n_samples, "
            f"n_features)); got an array of shape {array.shape}. Reshape your data with "
            "X.reshape(-1, 1) for a single column or X.reshape(1, -1) for a single row."
        )
    if np.iscomplexobj(array):
        raise ValueError("Complex data not supported.")
    if columns is not None and array.shape[1] != len(columns):
        raise ValueError(
            f"X has {array.shape[1]} features, but {owner} is expecting {len(columns)} "
            f"features as input (columns {list(columns)})."
        )
    frame = pd.DataFrame(array, columns=default_column_names(array.shape[1])
                         if columns is None else list(columns))
    if array.dtype == object:
        frame = frame.infer_objects()
    return frame


def check_not_empty(frame):
    """Raise ``ValueError`` if the table has no rows or no columns."""
    for axis, what in ((1, "feature"), (0, "sample")):
        if frame.shape[axis] == 0:
            raise ValueError(
                f"Found array with 0 {what}(s) (shape={frame.shape}) while a minimum of 1 "
                "is required."
            )


def check_scalar_cells(frame):
    """Object columns may hold only scalars: a list or dict cell is an error, not a category."""
    for col in frame.columns:
        if frame[col].dtype != object:
            continue
        if not frame[col].map(pd.api.types.is_scalar).all():
            raise TypeError(
                f"Column {col!r} holds non-scalar values (lists, dicts or other containers): "
                "each argument must be a string or a number (a scalar)."
            )


def frame_with_columns(X, columns, owner):
    """``X`` as a DataFrame of scalar cells: the table to fit (``columns=None``), or one
    with exactly the fitted ``columns``, returned in their order."""
    frame = as_frame(X, columns=columns, owner=owner)
    dup = frame.columns[frame.columns.duplicated()].unique().tolist()
    if dup:
        raise ValueError(f"X has duplicate column names: {dup}.")
    check_scalar_cells(frame)
    if columns is None:
        check_not_empty(frame)
        return frame
    missing = [c for c in columns if c not in frame.columns]
    extra = [c for c in frame.columns if c not in columns]
    if not (missing or extra):
        return frame[list(columns)]
    raise ValueError(
        f"X's columns differ from those seen in fit: missing {missing}, unexpected {extra}."
    )


def warn_learned_domain(learned, stacklevel=4):
    """One ``PrivacyLeakWarning`` naming the columns whose domain was read from the data.

    ``learned`` maps a column to ``"categories"`` or ``"bounds"``, as
    :meth:`TableEncoder.fit` returns it.
    """
    categories = [c for c, what in learned.items() if what == "categories"]
    bounds = [c for c, what in learned.items() if what == "bounds"]
    if not (categories or bounds):
        return
    parts = []
    if categories:
        parts.append(f"the values of columns {categories}")
    if bounds:
        parts.append(f"the min/max of numeric columns {bounds}")
    warnings.warn(
        "QueryWorkload learned "
        + " and ".join(parts)
        + " from the data. This is not covered by the privacy guarantee; "
        "give them publicly with domain= (values) and bounds= (numeric ranges).",
        PrivacyLeakWarning,
        stacklevel=stacklevel,
    )


@dataclass
class TableEncoder:
    """Column coders of a table and the one-hot layout they make.

    Parameters
    ----------
    coders : tuple of ColumnCoder
        One coder per column, in column order.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn._table import TableEncoder
    >>> X = pd.DataFrame({"colour": ["red", "blue"], "size": [0, 2]})
    >>> encoder, learned = TableEncoder.fit(X, domain={"colour": ["red", "blue"], "size": 3})
    >>> encoder.layout.block_sizes, learned
    ((2, 3), {})
    >>> encoder.encode(X).tolist()
    [[0, 0], [1, 2]]
    """

    coders: tuple

    @classmethod
    def fit(cls, frame, domain=None, bounds=None, bins=10, missing=(), clip=True, other=None,
            points=None, steps=None, cuts=None, clocks=None, log_scale=None):
        """Build the coders of ``frame``'s columns from the public domain.

        ``missing`` is True (every column gets a missing code) or the columns
        that may be missing; ``other`` maps columns to their catch-all value.

        Returns the encoder and ``{column: "categories" or "bounds"}`` for the
        columns whose domain had to be learned from the data.
        """
        domain = {} if domain is None else dict(domain)
        bounds = {} if bounds is None else dict(bounds)
        other = {} if other is None else dict(other)
        points = {} if points is None else dict(points)
        steps = {} if steps is None else dict(steps)
        cuts = {} if cuts is None else dict(cuts)
        clocks = [] if clocks is None else list(clocks)
        log_scale = log_scales(log_scale)
        per_column_bins = bins if isinstance(bins, dict) else {}
        default_bins = 10 if isinstance(bins, dict) else bins
        columns = list(frame.columns)
        missable = columns if missing is True else list(missing or ())
        for param, spec in (("domain", domain), ("bounds", bounds), ("bins", per_column_bins),
                            ("handle_missing", missable), ("other", other),
                            ("points", points), ("steps", steps), ("cuts", cuts),
                            ("clocks", clocks), ("log_scale", log_scale)):
            unknown = [c for c in spec if c not in columns]
            if unknown:
                raise ValueError(
                    f"{param} names columns not in X: {unknown}. X has columns {columns}."
                )
        coders, learned = [], {}
        for col in columns:
            coder, what = make_coder(col, frame[col], domain=domain, bounds=bounds,
                                     bins=per_column_bins, default_bins=default_bins,
                                     missing=col in missable, clip=clip,
                                     other=other.get(col), points=points.get(col),
                                     step=steps.get(col), cuts=cuts.get(col),
                                     clock=col in clocks, log=log_scale.get(col, False))
            coders.append(coder)
            if what is not None:
                learned[col] = what
        return cls(tuple(coders)), learned

    @cached_property
    def layout(self):
        """The one-hot layout: one block of ``coder.size`` columns per column."""
        return OneHotLayout(tuple(c.size for c in self.coders))

    @property
    def domain_sizes(self):
        return {c.name: c.size for c in self.coders}

    @property
    def categories(self):
        return {c.name: c.categories for c in self.coders if isinstance(c, CategoryCoder)}

    @property
    def bin_edges(self):
        return {c.name: c.edges for c in self.coders if isinstance(c, BinnedCoder)}

    @property
    def points(self):
        return {c.name: c.points for c in self.coders
                if isinstance(c, BinnedCoder) and len(c.points)}

    @property
    def cuts(self):
        return {c.name: c.cuts for c in self.coders
                if isinstance(c, BinnedCoder) and len(c.cuts)}

    def replace_coders(self, coders):
        """A copy with some coders replaced (``{column: coder}``)."""
        return type(self)(tuple(coders.get(c.name, c) for c in self.coders))

    def encode(self, frame):
        """Records of a table whose columns are in the coders' order."""
        out = np.empty((frame.shape[0], len(self.coders)), dtype=np.intp)
        for a, coder in enumerate(self.coders):
            out[:, a] = coder.encode(frame.iloc[:, a])
        return out

    def decode(self, records, rng, columns=None):
        """A DataFrame of the records' values (``records`` already checked).

        Only the coders of ``columns`` (a set of names) when given.
        """
        coders = [(a, c) for a, c in enumerate(self.coders) if columns is None or c.name in columns]
        data = {coder.name: coder.decode(records[:, a], rng) for a, coder in coders}
        return pd.DataFrame(data, columns=[c.name for _, c in coders])

    def to_onehot(self, records):
        """Sparse CSR one-hot image of checked records."""
        n, p = records.shape
        indices = (records + self.layout.starts).ravel()
        indptr = np.arange(0, n * p + 1, p, dtype=np.intp)
        data = np.ones(n * p, dtype=float)
        return sp.csr_matrix((data, indices, indptr), shape=(n, self.layout.n_features))

    def from_onehot(self, X):
        """Records of a one-hot matrix (dense or sparse); raises if it is not one-hot."""
        layout = self.layout
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
        return (csr.indices.reshape(n, p) - layout.starts) if n else np.empty((0, p), np.intp)

    def feature_names(self):
        """One-hot column names, block by block."""
        return np.asarray([name for c in self.coders for name in c.feature_names()], dtype=object)


def missable_columns(handle_missing):
    """Columns that may be missing: True (every column), False (none) or a list."""
    if isinstance(handle_missing, str):
        return handle_missing == "category"
    return list(handle_missing)


def check_schema(X):
    """A table's schema (columns and dtypes, rows not in memory), checked as a frame would be."""
    duplicated = X.columns[X.columns.duplicated()].unique().tolist()
    if duplicated:
        raise ValueError(f"X has duplicate column names: {duplicated}.")
    if X.shape[1] == 0:
        raise ValueError("Found a table with 0 columns while a minimum of 1 is required.")
    return X


def check_public_domain(X, domain, bounds, bins):
    """Raise naming the columns whose domain would have to be learned from values."""
    domain, bounds = domain or {}, bounds or {}
    edges = bins if isinstance(bins, dict) else {}
    unknown = [
        c for c in X.columns
        if c not in domain and c not in bounds and np.ndim(edges.get(c, 0)) != 1
        and not pd.api.types.is_bool_dtype(X[c].dtype)
    ]
    if unknown:
        raise ValueError(
            f"Columns {unknown} have no public domain: rows that are not in memory "
            "(a Dask DataFrame) are never read to learn one. Give their values or sizes "
            "in domain=, or bounds= (and bins=) for numbers."
        )
