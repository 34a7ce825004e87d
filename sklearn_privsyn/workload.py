"""Marginal query workloads: encoding, query enumeration and fast answers.

A :class:`QueryWorkload` turns a table into *records* (one integer code per
attribute, see ``docs/architecture.md``) using a public domain, chooses a set
of k-way marginals, and answers their counting queries. Every cell of every
chosen marginal is a positive query; query ``q + Q`` is the negation of query
``q``. Answers are fractions of rows, computed from per-marginal counts
(``np.bincount`` on a mixed-radix cell index), never from a dense query matrix.

The encoding of a table (fitting the column coders, ``encode``/``decode`` and
the one-hot transform) is the private base class ``BaseTableEncoding``
(``_table_encoding.py``);
:class:`QueryWorkload` adds the parameters, the choice of marginals and the
answers.
"""

from __future__ import annotations

from numbers import Integral

from sklearn.utils.validation import check_is_fitted

from ._sklearn_private import Interval, StrOptions
from ._table_encoding import BaseTableEncoding
from .marginals import MarginalSet, workload_marginals

__all__ = ["QueryWorkload"]


class QueryWorkload(BaseTableEncoding):
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

    Each column kind is one coder in ``_coders.py``; the codes of a column
    declared missable (``handle_missing``) end with one code for missing
    values. An array's columns are named ``x0, x1, ...``, as in the
    synthesizers, so one domain serves both.

    **Domain files.** The command line's JSON domain files declare all of
    this per column (values, size, or bounds and bins; ``"missing": true``
    for ``handle_missing``; ``"other"``), and
    :func:`~sklearn_privsyn.domain_file.workload_params` turns one into these
    keyword arguments: ``QueryWorkload(**workload_params("domain.json"),
    k=3)``. See :mod:`sklearn_privsyn.domain_file` for the format.

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
        ``max_cells`` must be None. A synthesizer learns nothing of a column
        in none of them (it warns: :class:`~sklearn_privsyn.UncoveredColumnWarning`).
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
    clip : bool, default=True
        Numbers outside their column's bounds go into the first or last bin, silently: the declared bounds are the public
        contract, and an error that depends on one row's value would itself
        reveal something about that row. ``clip=False`` raises ``ValueError``
        instead (the message names the column, never a value or a row).
    handle_missing : {"error", "category"} or list of columns, default="error"
        Which columns may hold missing values (NaN, None, NA). A list of
        column names declares those columns missable: each gets one extra
        code, after the others, for missing values, and a missing value in
        any other column raises ``ValueError``. ``"error"`` declares none;
        ``"category"`` declares every column (samples may then hold missing
        values in columns that never had any). The declaration is part of
        the public domain: it must not be read off the data.
    other : dict, default=None
        Column -> a value of its ``domain`` list that values outside the list
        are encoded as (a declared catch-all category such as ``"Other"``).
        Columns without one raise ``ValueError`` on values outside their list.
    points : dict, default=None
        Binned column -> list of exact values (point masses, e.g. a capital
        gain of 0) that get codes of their own after the column's bins; the
        bins then exclude them. Public knowledge, like the bounds. A
        synthesizer may find more privately (see :doc:`/numbers`).
    steps : dict, default=None
        Binned column -> the spacing of its values: decoded values are
        multiples of it. Integer columns have step 1 unless given.
    cuts : dict, default=None
        Binned column -> values where a bin must begin (the boundaries of a
        column derived from it, such as the ages where an age group changes):
        no bin straddles a cut, in the equal-width bins (``bins`` spread over
        the intervals between cuts by width, at least one each) and in bins a
        synthesizer re-cuts privately (see :doc:`/numbers`). Public knowledge.
    clocks : list of columns, default=None
        Binned columns that hold times of day written HHMM (``517`` is 5:17,
        midnight ``0`` or ``2400``): modelled in minutes since midnight, so
        that bins are spans of time and every synthetic value is a time of
        day (:mod:`sklearn_privsyn.clock`). Their ``bounds``, ``points``,
        ``cuts`` and bin edges are given as HHMM, their ``steps`` in minutes
        (1 by default); ``bin_edges_`` holds minutes. Public knowledge.
    log_scale : list of columns or dict, default=None
        Binned columns whose bins (of an int ``bins``) and fine cells are equal in
        ``log(x - lo + c)`` (:doc:`/numbers`); ``{col: "bins"}``: its bins alone. Public knowledge.
    days_of_month : dict, default=None
        Day column -> its month column, or ``[year, month]``: the day must
        exist in its month (no February 30; February 29 only in a leap year
        when the year is given). :meth:`decode` redraws a day past its
        month's end uniformly among the month's days
        (:mod:`sklearn_privsyn.dates`): public knowledge, no budget.
    derived : dict, default=None
        Column -> the public function of another column that it is, e.g.
        ``{"of": "clock", "floordiv": 100}`` (:mod:`sklearn_privsyn.derived`
        lists the functions). It is never read nor measured (no attribute,
        no marginal); :meth:`decode` computes it from its source.
    decimals : dict, default=None
        Numeric column (modelled or derived) -> how many decimals its values
        are written with (2 for amounts in cents, public): :meth:`decode` rounds
        them (:mod:`sklearn_privsyn.decimals`); the last decimal is the finest
        grid of its round numbers (:func:`~sklearn_privsyn.numbers.round_levels`).
    at_most : dict, default=None
        Numeric column -> a column it never exceeds, that column plus or
        minus a number (``"Age - 18"``), a positive number times it
        (``"8.7 * air_time"``), a number less it (``"64 - experience"``: the
        two add up to at most 64), or a list of these: order rules
        that every estimator's ``sample`` keeps
        (:mod:`sklearn_privsyn.order_rules`). Public knowledge, no budget.
    at_least : dict, default=None
        The same bounds from below (``{"education": "12 - experience"}``:
        the two add up to at least 12), kept the same way.
    equal_when : dict, default=None
        Number -> ``{"column": other, "when": c, "values": [v, ...]}``: it equals
        ``other`` where ``c`` is one of the ``v`` (:mod:`sklearn_privsyn.equal_when`).
    exactly_when : dict, default=None
        Column -> ``{"value": v, "column": other, "values": [w, ...]}`` (or a
        list of these): the column holds ``v`` exactly when ``other`` holds
        one of the ``w`` (an occupation not known exactly when there is no
        work), kept by every estimator's ``sample``
        (:mod:`sklearn_privsyn.value_rules`); ``"missing": True`` in place of
        ``"values"``: exactly when ``other`` (in ``handle_missing``) is missing (an
        individual application has no joint income); ``"between": [lo, hi]`` (maybe
        with ``"missing": True``): when the number ``other`` is within (or missing).
    only_when : dict, default=None
        Column -> ``{"value": v, "column": other, "values": [w, ...]}`` (or a
        list of these): the column holds ``v`` only when ``other`` holds one
        of the ``w`` (a husband is married; a sales executive works in
        sales), kept by every estimator's ``sample``; ``{"value": v, "column":
        number, "between": [lo, hi]}`` in place of ``"values"``: only when the
        number is within ``lo`` and ``hi`` (a job level's pay band), or
        ``"missing": True``: only when ``other`` is missing. Public knowledge,
        no budget.
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
        ``columns_[a]``. Derived columns are not among them.
    table_columns_ : tuple
        Every column of the table, derived ones included (what :meth:`encode`
        takes and :meth:`decode` returns).
    derived_ : dict
        Derived column -> its :class:`~sklearn_privsyn.derived.DerivedColumn`.
    decimals_ : dict
        Column -> the decimals its decoded values are rounded to: the declared
        ones, and a derived sum's whose sources all have some
        (:func:`~sklearn_privsyn.decimals.with_sum_decimals`).
    order_rules_ : tuple of OrderRule
        The declared order rules (:class:`~sklearn_privsyn.order_rules.OrderRule`):
        those of ``at_most``, then those of ``at_least``.
    value_rules_ : tuple of ValueRule
        The declared value rules (:class:`~sklearn_privsyn.value_rules.ValueRule`):
        those of ``exactly_when``, then those of ``only_when``.
    equal_when_ : tuple of EqualWhen
        The declared equalities under a condition.
    rules_ : tuple
        ``order_rules_ + value_rules_ + equal_when_``: every rule the rows keep.
    days_of_month_ : tuple of DayOfMonth
        The declared days of the month (:class:`~sklearn_privsyn.dates.DayOfMonth`).
    domain_sizes_ : dict
        Column -> number of codes (``{column: size}``, as in domain JSON files).
    categories_ : dict
        Column -> array of values, for columns encoded by value lists.
    bin_edges_ : dict
        Column -> array of bin edges, for binned numeric columns.
    points_ : dict
        Column -> array of its point masses (binned columns that have any);
        their codes follow the column's bins.
    cuts_ : dict
        Column -> array of its cuts (binned columns that have any).
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
        Marginal index of each positive query.
    n_queries_ : int
        Number ``Q`` of positive queries (total cells); ``2 * Q`` ids with
        negations.
    encoder_ : TableEncoder
        The column coders (one per column, see ``_coders.py``) and their layout.
    marginal_set_ : MarginalSet
        The chosen marginals in attribute indices, with vectorised answers
        (all cells, or one marginal's) and query literals; see
        :class:`~sklearn_privsyn.marginals.MarginalSet`.

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
        "max_cells": [Interval(Integral, 1, None, closed="left"), StrOptions({"n_rows"}), None],
        "bins": [Interval(Integral, 1, None, closed="left"), dict],
        "bounds": [dict, None],
        "clip": ["boolean"],
        "handle_missing": [StrOptions({"error", "category"}), list, tuple],
        "other": [dict, None],
        "points": [dict, None],
        "steps": [dict, None],
        "cuts": [dict, None],
        "clocks": [list, tuple, None],
        "log_scale": [list, tuple, dict, None],
        "days_of_month": [dict, None],
        "derived": [dict, None],
        "decimals": [dict, None],
        "at_most": [dict, None],
        "at_least": [dict, None],
        "equal_when": [dict, None],
        "exactly_when": [dict, None],
        "only_when": [dict, None],
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
        clip=True,
        handle_missing="error",
        other=None,
        points=None, steps=None, cuts=None, clocks=None, log_scale=None,
        days_of_month=None,
        derived=None,
        decimals=None,
        at_most=None,
        at_least=None,
        equal_when=None,
        exactly_when=None,
        only_when=None,
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
        self.other = other
        self.points = points
        self.steps = steps
        self.cuts = cuts
        self.clocks = clocks
        self.log_scale = log_scale
        self.days_of_month = days_of_month
        self.derived = derived
        self.decimals = decimals
        self.at_most = at_most
        self.at_least = at_least
        self.equal_when = equal_when
        self.exactly_when = exactly_when
        self.only_when = only_when
        self.random_state = random_state

    def fit(self, X, y=None):
        """Learn the encoding and choose the marginals.

        Parameters
        ----------
        X : DataFrame of shape (n_samples, n_columns)
            The table. Arrays are accepted; their columns are named ``x0, x1, ...``.
        y : None
            Ignored.

        Returns
        -------
        self : QueryWorkload
        """
        return self._fit_or_clear(X)

    def fit_schema(self, X, n_rows):
        """Fit to a table's columns and dtypes alone, for rows that are not in memory.

        ``X`` gives the column names and dtypes (it may have no rows, as a
        Dask DataFrame's ``_meta``), ``n_rows`` the number of rows (public
        under replace-one neighbours; ``max_cells="n_rows"`` reads it). No
        value is read, so every column's domain must be public (``domain``,
        or ``bounds`` for binned numbers): a column whose domain would be
        learned from the data is an error naming it. Values are checked when
        the rows are encoded.

        Parameters
        ----------
        X : DataFrame
            The table's schema: its columns, with their dtypes.
        n_rows : int
            The table's number of rows.

        Returns
        -------
        self : QueryWorkload
        """
        return self._fit_or_clear(X, n_rows=int(n_rows))

    def _fit(self, X, n_rows):
        self._fit_marginals(self._fit_encoding(X, n_rows))
        return self

    def _replace_coders(self, coders):
        """Replace some columns' coders of a fitted workload, keeping its marginals.

        The synthesizers call this with binned columns refined by the private
        measurement of numbers (a DP output, :mod:`sklearn_privsyn.numbers`):
        the same marginals, re-numbered on the new codes; and with tilted bins
        (:mod:`sklearn_privsyn.bin_tilts`), whose codes are those of before.
        """
        check_is_fitted(self)
        if self._swap_coders(coders):
            index = {c: a for a, c in enumerate(self.columns_)}
            self._set_marginals([tuple(index[c] for c in m) for m in self.marginals_])
        return self

    def _fit_marginals(self, n_rows):
        chosen, self.n_eligible_marginals_ = workload_marginals(
            self.layout_.block_sizes, self.columns_, marginals=self.marginals, k=self.k,
            n_marginals=self.n_marginals, max_cells=self.max_cells, n_rows=n_rows,
            random_state=self.random_state,
        )
        self._set_marginals(chosen)

    def _set_marginals(self, chosen):
        """The fitted attributes of the chosen marginals (tuples of attribute indices)."""
        marginal_set = MarginalSet(self.layout_, chosen, names=self.columns_)
        self.marginal_set_ = marginal_set
        self.marginals_ = tuple(tuple(self.columns_[a] for a in m) for m in chosen)
        self.marginal_offsets_ = marginal_set.offsets
        self.n_queries_ = marginal_set.n_queries
        self.marginal_of_query_ = marginal_set.marginal_of_query

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
        return self.marginal_set_.answers(records, weights)

    def query_literals(self, query_ids):
        """One-hot literals of queries, for the optimisation oracles.

        Ids ``q >= n_queries_`` are the negation of ``q - n_queries_``.
        Returns ``(literals, negated)``: the one-hot columns of each query's
        cell, padded with -1, and whether it is negated; see
        :meth:`MarginalSet.query_literals <sklearn_privsyn.marginals.MarginalSet.query_literals>`.
        """
        check_is_fitted(self)
        return self.marginal_set_.query_literals(query_ids)
