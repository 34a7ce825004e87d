"""The encoding half of a workload: fitting the column coders, encode/decode, one-hot.

:class:`BaseTableEncoding` (in this private module) is the base class of
:class:`~sklearn_privsyn.QueryWorkload`, as ``_BaseEncoder`` is scikit-learn's
encoders': the subclass holds the parameters (the public domain) and adds the
marginals; this class turns a table into records and back. Derived columns
(:mod:`sklearn_privsyn.derived`) are dropped here before encoding and computed
here after decoding.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._table import (
    TableEncoder,
    check_public_domain,
    check_schema,
    frame_with_columns,
    missable_columns,
    warn_learned_domain,
)
from .dates import parse_days_of_month
from .decimals import parse_decimals, round_columns, with_sum_decimals
from .derived import check_sources, split_derived
from .equal_when import check_equal_when, parse_equal_when
from .order_rules import check_numeric, parse_at_least, parse_at_most
from .value_rules import check_declared_values, parse_value_rules


class BaseTableEncoding(TransformerMixin, BaseEstimator):
    """The table-encoding half of :class:`QueryWorkload`, as ``_BaseEncoder`` is scikit-learn's.

    Fits the column coders from the public domain (``domain``, ``bounds``,
    ``bins``, ``handle_missing``, ``other``, ``points``, ``steps``, ``cuts``, ``clocks``,
    ``days_of_month``, ``derived``, ``decimals``, ``at_most``, ``at_least``, ``exactly_when``,
    ``only_when``, ``equal_when`` of the subclass), encodes and decodes records, and is the one-hot
    transformer.
    The subclass's ``_fit(X, n_rows)`` calls :meth:`_fit_encoding`, then
    fits what it adds (the marginals).
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = bool(missable_columns(self.handle_missing))
        tags.transformer_tags.preserves_dtype = []
        return tags

    def _fit_or_clear(self, X, n_rows=None):
        self._validate_params()
        # A failed fit leaves no fitted attribute, never a mix of two fits.
        self._clear_fitted()
        try:
            return self._fit(X, n_rows)
        except BaseException:
            self._clear_fitted()
            raise

    def _clear_fitted(self):
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)

    def _fit_encoding(self, X, n_rows):
        """Fit the column coders (no value read with ``n_rows``); return the number of rows."""
        was_frame = isinstance(X, pd.DataFrame)
        schema_only = n_rows is not None
        X = self._as_frame(X, fitting=True, schema_only=schema_only)
        columns = tuple(X.columns)
        self.n_features_in_ = len(columns)
        if was_frame and all(isinstance(c, str) for c in columns):
            self.feature_names_in_ = np.asarray(columns, dtype=object)
        self.table_columns_ = columns
        self.order_rules_ = (parse_at_most(self.at_most, columns)
                             + parse_at_least(self.at_least, columns))
        self.value_rules_ = parse_value_rules(self.exactly_when, self.only_when, columns)
        self.equal_when_ = parse_equal_when(self.equal_when, columns)
        check_numeric(self.rules_, X)
        self.decimals_ = parse_decimals(self.decimals, X)
        self.derived_, X, cuts = split_derived(X, self)
        self.decimals_ = with_sum_decimals(self.decimals_, self.derived_, X)
        self.columns_ = tuple(X.columns)
        self.days_of_month_ = parse_days_of_month(self.days_of_month, columns)
        derived_dates = [c for d in self.days_of_month_ for c in d.columns if c in self.derived_]
        if derived_dates:
            raise ValueError(f"days_of_month names derived columns {derived_dates}: a day, its "
                             "month and its year must be modelled columns.")

        if schema_only:
            check_public_domain(X, self.domain, self.bounds, self.bins)
        missing = missable_columns(self.handle_missing)
        encoder, learned = TableEncoder.fit(
            X, domain=self.domain, bounds=self.bounds, bins=self.bins,
            missing=missing if isinstance(missing, bool) else [c for c in missing
                                                               if c not in self.derived_],
            clip=self.clip, other=self.other, points=self.points, steps=self.steps, cuts=cuts,
            clocks=self.clocks, log_scale=self.log_scale,
        )
        warn_learned_domain(learned)
        check_sources(self.derived_, encoder.coders)
        self._set_encoder(encoder)
        check_declared_values(self.value_rules_, self.categories_,
                              {c.name for c in encoder.coders if c.missing},
                              self._number_bounds())
        check_equal_when(self.equal_when_, self.derived_, self.categories_)

        if not schema_only:
            # Validate every value now, so that errors surface at fit time.
            encoder.encode(X)

        return X.shape[0] if n_rows is None else n_rows

    def _number_bounds(self):
        """``{column: (lo, hi)}`` of the binned numbers but clocks (whose edges are minutes,
        their values HHMM)."""
        return {name: (edges[0], edges[-1]) for name, edges in self.encoder_.bin_edges.items()
                if name not in (self.clocks or ())}

    def _holds(self, column):
        """Numbers -> mask of those a modelled number column can hold (listed, or in bounds)."""
        if column in self.categories_:
            listed = np.asarray([v for v in self.categories_[column] if isinstance(v, Real)],
                                dtype=float)
            return lambda values: np.isin(values, listed)
        lo, hi = self._number_bounds().get(column, (-np.inf, np.inf))
        return lambda values: (values >= lo) & (values <= hi)

    @property
    def rules_(self):
        """Every declared rule the synthetic rows keep: the order rules, the value rules,
        then the equalities under a condition."""
        return self.order_rules_ + self.value_rules_ + self.equal_when_

    def _swap_coders(self, coders):
        """Replace some columns' coders (``{column: coder}``); whether any column's number
        of codes changed (a tilt inside the bins, ``bin_tilts``, keeps them)."""
        sizes = self.layout_.block_sizes
        self._set_encoder(self.encoder_.replace_coders(coders))
        return self.layout_.block_sizes != sizes

    def _set_encoder(self, encoder):
        self.encoder_ = encoder
        self.domain_sizes_ = encoder.domain_sizes
        self.categories_ = encoder.categories
        self.bin_edges_ = encoder.bin_edges
        self.points_ = encoder.points
        self.cuts_ = encoder.cuts
        self.layout_ = encoder.layout

    def _as_frame(self, X, fitting=False, schema_only=False):
        if schema_only:  # a schema (rows not in memory): columns and dtypes, no rows
            return check_schema(X)
        if fitting:
            return frame_with_columns(X, None, type(self).__name__)
        frame = frame_with_columns(X, self.table_columns_, type(self).__name__)
        return frame[list(self.columns_)] if self.derived_ else frame

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
            If a column holds a value outside its domain (with no ``other``
            category), a missing value (not declared in ``handle_missing``), a
            string or an infinity where numbers are expected, or (with ``clip=False``) a
            number outside its bounds. The message names the column and the
            kind of problem, never a value or a row. Such an error depends on
            the data, so it is outside the privacy guarantee: declare the
            domain so that it cannot happen.
        """
        check_is_fitted(self)
        return self.encoder_.encode(self._as_frame(X))

    def decode(self, records, random_state=None, columns=None):
        """Turn records back into a table with the original columns and dtypes.

        Listed values and integer codes decode exactly. A binned numeric value
        is drawn uniformly within its bin (uniform integers for integer
        columns). A missing code decodes to a missing value; integer and
        boolean columns that receive one become float and object columns.
        A day past its month's end (``days_of_month``) is redrawn among the
        month's days; derived columns are computed last.

        Parameters
        ----------
        records : array-like of shape (n_samples, n_attributes)
            Integer codes.
        random_state : int, RandomState, Generator or None, default=None
            Randomness for binned numeric columns.
        columns : sequence or None, default=None
            Decode only these columns (with what they need: a derived
            column's sources, a day's month and year), in the table's order.

        Returns
        -------
        X : DataFrame of shape (n_samples, n_columns)
        """
        check_is_fitted(self)
        records = self.layout_.check_records(records)
        rng = random_state
        if not isinstance(rng, np.random.Generator):
            rng = check_random_state(rng)
        wanted = None if columns is None else self._columns_to_decode(columns)
        frame = self.encoder_.decode(records, rng, wanted)
        for date in self.days_of_month_:  # a public rule: February has no 30th
            if date.day in frame:
                frame[date.day] = date.keep_in_month(frame, rng)
        for rule in self.equal_when_:  # a principal repaid is the amount, when fully paid
            if rule.column in frame:
                frame[rule.column] = rule.apply(frame, self._holds(rule.column))
        # derived columns from the rounded sources; within the bounds (clocks: in minutes)
        round_columns(frame, self.decimals_, bounds=self._number_bounds())
        if not self.derived_ and wanted is None:
            return frame
        for name, column in self.derived_.items():  # a formula's derived sources first
            if wanted is None or name in wanted:
                frame[name] = column.compute(frame, rng)
                round_columns(frame, self.decimals_, (name,))  # as a formula reading it sees it
        return frame[[c for c in self.table_columns_ if c in frame]]

    def _columns_to_decode(self, columns):
        """``columns`` with the sources of derived ones and the month and year of days."""
        wanted = set(columns)
        for name, column in reversed(self.derived_.items()):  # formulas before their sources
            if name in wanted:
                wanted.update(column.sources)
        for date in self.days_of_month_:
            if date.day in wanted:
                wanted.update(date.columns)
        for rule in self.equal_when_:
            if rule.column in wanted:
                wanted.update(rule.columns)
        return wanted

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
        return self.encoder_.to_onehot(self.encode(X))

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
        return self.decode(self.encoder_.from_onehot(X), random_state=random_state)

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
        if input_features is not None and list(input_features) != list(self.table_columns_):
            raise ValueError(
                f"input_features {list(input_features)} differ from the fitted columns "
                f"{list(self.table_columns_)}."
            )
        return self.encoder_.feature_names()
