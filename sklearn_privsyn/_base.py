"""Plumbing shared by every synthesizer: validation, budget, ledger, sampling.

A subclass implements :meth:`BaseSynthesizer._fit_records`, which receives the
private data as marginal counts (a count source, ``counts.py``: rows in memory
or a Dask DataFrame) and returns weighted synthetic records. Everything
else (turning ``epsilon``/``delta`` into a zCDP budget, the ledger, the
workload clone, ``sample``) lives here, once.
"""

import functools
import warnings
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from ._coders import BinnedCoder
from ._random import make_generator
from ._sampling import allocate_counts, column_shares
from ._sklearn_private import HasMethods, Interval, StrOptions, fit_context
from ._table import as_frame, check_not_empty
from ._tied_draws import code_ties, hold_ties
from .bin_tilts import bin_tilts
from .counts import DaskCounts, RecordCounts, is_dask_frame, n_rows, schema
from .exceptions import SolverWarning, UncoveredColumnWarning
from .numbers import measure_numbers, missing_share, plan_numbers, refine_coder
from .order_rules import rule_block, rule_groups, rules_kept, sample_keeping_rules
from .privacy import PrivacyLedger, epsilon_to_rho
from .solvers import ORACLE_NAMES, get_oracle, open_session
from .workload import QueryWorkload

__all__ = ["BaseSynthesizer"]

#: The ``solver`` parameter of the synthesizers that call an oracle: a back-end
#: name (see :func:`~sklearn_privsyn.solvers.get_oracle`) or an oracle instance.
SOLVER_CONSTRAINT = [StrOptions(set(ORACLE_NAMES)), HasMethods(["session"])]


class BaseSynthesizer(BaseEstimator):
    """Base class for the differentially private synthesizers.

    Parameters are documented on each subclass. Fitted attributes common to
    all synthesizers:

    workload_ : QueryWorkload
        The fitted clone of ``workload`` (or the default 3-way workload).
    ledger_ : PrivacyLedger
        Every mechanism run during ``fit`` and its zCDP cost.
    rho_ : float
        The zCDP budget derived from ``epsilon`` and ``delta_``.
    delta_ : float
        The delta used (``1 / n**2`` when ``delta=None``).
    epsilon_ : float
        The epsilon actually spent at ``delta_`` (never above ``epsilon``).
    records_ : ndarray of shape (n_records, n_attributes)
        Synthetic records in code space (the DP output).
    weights_ : ndarray of shape (n_records,)
        Their probabilities (they sum to one).
    solver_stats_ : SolverStats or None
        Oracle calls, time, time-outs and fallbacks.
    number_share_ : float
        Share of ``rho_`` spent measuring the binned numbers finely (point
        masses, bins of similar mass, the shape inside each bin; see
        :mod:`sklearn_privsyn.numbers`); 0 when there was none to measure.
    number_measurements_ : dict
        Column -> the noisy tree levels, candidate counts and round levels
        measured (a DP output); empty when nothing was measured.
    number_noise_ : dict
        Column -> the noise sd of its measured counts (fractions of the rows):
        the same for every column, or, with columns that may be missing,
        growing with each column's share of present rows (measured first).
    number_missing_ : dict
        Column -> its share of missing rows and that share's sd, from the
        numbers' measurement (:func:`~sklearn_privsyn.numbers.missing_share`),
        for each measured column that may be missing.
    synthesis_rho_ : float
        The budget left for the synthesizer's own mechanisms.
    """

    _parameter_constraints: dict = {
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither"), None],
        "workload": [HasMethods(["fit", "encode", "answer_codes"]), None],
        "conversion": [StrOptions({"cks", "classic"})],
        "number_share": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    _target_column = "y"

    def _make_workload(self, n_columns):
        if self.workload is None:
            return QueryWorkload(k=min(3, n_columns))
        return clone(self.workload)

    def _frame(self, X, y):
        """X (and y as one more column) as a DataFrame, whether X was one, y's name."""
        was_frame = isinstance(X, pd.DataFrame)
        X = as_frame(X)
        check_not_empty(X)
        if y is None:
            return X, was_frame, None
        name = y.name if isinstance(y, pd.Series) and y.name is not None else self._target_column
        values = np.asarray(y)
        if values.ndim != 1:
            raise ValueError(f"y must be 1-dimensional; got shape {values.shape}")
        if name in X.columns:
            raise ValueError(
                f"y cannot be added as column {name!r}: X already has a column of that name"
            )
        if len(values) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(values)}")
        X = X.copy()
        X[name] = values
        return X, was_frame, name

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Spend the privacy budget on ``X`` and keep DP synthetic records.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The private data.
        y : array-like of shape (n_samples,), default=None
            If given, synthesised as one more column alongside ``X``.

        Returns
        -------
        self : object
            The fitted synthesizer.
        """
        # A fit either completes or leaves no fitted attribute behind: never a
        # mix of an earlier fit's attributes with this one's.
        self._clear_fitted()
        try:
            self._fit(X, y)
        except BaseException:
            self._clear_fitted()
            raise
        self._warn_solver_faults()
        self._warn_uncovered_columns()
        return self

    def _measured_columns(self):
        """Indices of the encoded columns some measured marginal holds: the workload's."""
        return {a for marginal in self.workload_.marginal_set_.marginals for a in marginal}

    def _warn_uncovered_columns(self):
        """One UncoveredColumnWarning naming the columns no measured marginal holds."""
        covered = self._measured_columns()
        names = [c.name for c in self.workload_.encoder_.coders]
        left = [name for a, name in enumerate(names) if a not in covered]
        if left:
            warnings.warn(
                f"{type(self).__name__}: columns {left} are in no marginal the fit measured: "
                "nothing was learned of them, and their synthetic values say nothing of the "
                "data (uniform, or as the synthesizer's oracle left them). Add their 1-way "
                f"marginals to the workload (QueryWorkload(marginals=[..., ({left[0]!r},)])); "
                "the command line's default workload, without --marginals, covers every "
                "column.",
                UncoveredColumnWarning,
                stacklevel=4,
            )

    def _clear_fitted(self):
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)

    def _warn_solver_faults(self):
        """One SolverWarning per fit summarising failed and timed-out oracle calls."""
        stats = getattr(self, "solver_stats_", None)
        if stats is None or not (stats.n_fallback or stats.n_time_limit):
            return
        parts = []
        if stats.n_fallback:
            last = f" (last error: {stats.last_error})" if stats.last_error else ""
            parts.append(
                f"{stats.n_fallback} failed and returned the data-independent fallback "
                f"record{last}"
            )
        if stats.n_time_limit:
            parts.append(f"{stats.n_time_limit} stopped at the time limit with the best record found")
        warnings.warn(
            f"{type(self).__name__}: of {stats.calls} oracle calls, " + "; ".join(parts)
            + ". The privacy guarantee is unaffected (the oracle never sees the data); "
            "accuracy may be lower. Counts are in solver_stats_.",
            SolverWarning,
            stacklevel=4,
        )

    def _fit(self, X, y):
        workload, rows, n, columns, was_frame, y_name = self._private_rows(X, y)
        delta = self.delta if self.delta is not None else 1.0 / n**2
        rho = epsilon_to_rho(self.epsilon, delta, method=self.conversion)
        rng = make_generator(self.random_state)

        self.workload_ = workload
        self.delta_ = float(delta)
        self.rho_ = float(rho)
        self.ledger_ = PrivacyLedger(rho)
        self.solver_stats_ = None
        self._fit_numbers(rows, n, rng)
        data = (DaskCounts(workload, rows, n) if is_dask_frame(rows)
                else RecordCounts(workload, workload.encode(rows)))
        fitted = self._fit_records(data, rng)
        if fitted is not None:  # None: the subclass keeps another representation
            synthetic, weights = fitted
            self.records_ = np.asarray(synthetic, dtype=np.intp)
            weights = np.asarray(weights, dtype=float)
            self.weights_ = weights / weights.sum()
        self._tilt_bins()
        self.epsilon_ = (
            self.ledger_.epsilon(self.delta_, method=self.conversion)
            if self.ledger_.rho_spent > 0
            else 0.0
        )
        self.n_features_in_ = len(columns) - (0 if y_name is None else 1)
        if was_frame:
            self.feature_names_in_ = np.asarray(
                [str(c) for c in columns[: self.n_features_in_]], dtype=object
            )
        self.input_was_frame_ = was_frame
        self.target_name_ = y_name

    def _private_rows(self, X, y):
        """The fitted workload and the private rows, before anything is counted.

        The rows are read afterwards only as counts: the numbers' measurement
        (:meth:`_fit_numbers`) and the count source (``counts.py``) that
        ``_fit_records`` reads. A pandas table (or array) is encoded in memory;
        a ``dask.dataframe.DataFrame`` is counted partition by partition where
        it lives (:class:`~sklearn_privsyn.counts.DaskCounts`).

        Returns ``(workload, rows, n_rows, columns, was_frame, y_name)``.
        """
        if is_dask_frame(X):
            return self._dask_rows(X, y)
        frame, was_frame, y_name = self._frame(X, y)
        self._check_rows(frame.shape[0])
        workload = self._make_workload(frame.shape[1]).fit(frame)
        return workload, frame, frame.shape[0], list(frame.columns), was_frame, y_name

    def _dask_rows(self, X, y):
        if y is not None:
            raise ValueError(
                "y cannot be given with a Dask DataFrame X: add it to X as a column."
            )
        columns = list(X.columns)
        if len(set(columns)) != len(columns):
            raise ValueError("X has duplicate column names.")
        n = n_rows(X)
        if n == 0:
            raise ValueError("Found a Dask DataFrame with 0 rows while a minimum of 1 is required.")
        self._check_rows(n)
        workload = self._make_workload(len(columns))
        if not hasattr(workload, "fit_schema"):
            raise TypeError(
                f"A Dask DataFrame needs a workload with fit_schema (a QueryWorkload); "
                f"got {type(workload).__name__}."
            )
        workload.fit_schema(schema(X), n)
        return workload, X, n, columns, True, None

    def _check_rows(self, n):
        if self.delta is None and n < 2:
            raise ValueError(
                f"n_samples={n}: delta=None means 1 / n**2, which is not a valid delta "
                "for a single row; give delta explicitly."
            )

    def _fit_numbers(self, rows, n, rng):
        """Measure the binned numbers finely with a share of the budget; refine their coders.

        One Gaussian mechanism (:func:`~sklearn_privsyn.numbers.measure_numbers`)
        over every binned column; its output turns into point masses, bins of
        similar mass and in-bin shapes (post-processing), which replace the
        columns' coders in ``workload_`` before the data are encoded. A fit
        with no binned column draws nothing from ``rng`` and spends nothing.
        Only a subclass with a ``number_share`` parameter measures numbers, and
        it plans its own mechanisms with ``synthesis_rho_``, the budget left.
        """
        workload = self.workload_
        coders = [c for c in workload.encoder_.coders
                  if isinstance(c, BinnedCoder) and c.edges[-1] > c.edges[0]]
        # a subclass without the parameter plans with rho_ and measures no numbers
        share = getattr(self, "number_share", 0.0)
        plan = plan_numbers(coders, n, self.rho_, share, self._measured_marginals(n),
                            getattr(workload, "decimals_", None))
        self.number_measurements_, self.number_noise_, self.number_missing_ = {}, {}, {}
        if plan is None:
            self.number_share_ = 0.0
            self.synthesis_rho_ = self.rho_
            return
        (number_rng,) = rng.spawn(1)
        by_name = {c.name: c for c in coders}
        noisy = measure_numbers(plan, rows, n, self.ledger_, number_rng)
        refined = {}
        for g in plan.grids:
            levels, candidates, rounds, sd, _ = noisy[g.name]
            refined[g.name] = refine_coder(by_name[g.name], g, levels, candidates, sd,
                                           round_shares=rounds)
        workload._replace_coders(refined)
        self.number_measurements_ = {name: np.concatenate([*levels, candidates, rounds])
                                     for name, (levels, candidates, rounds, _, _)
                                     in noisy.items()}
        self.number_noise_ = {name: sd for name, (_, _, _, sd, _) in noisy.items()}
        self.number_missing_ = {name: missing_share(levels, sd, present)
                                for name, (levels, _, _, sd, present) in noisy.items()
                                if present is not None}
        self.number_share_ = plan.share
        self.synthesis_rho_ = self.ledger_.rho_remaining

    def _tilt_bins(self):
        """Tilt the draws inside the bins of the numbers that nothing measured finely
        (:mod:`sklearn_privsyn.bin_tilts`), from the fitted model's 1-way shares."""
        tilted = {}
        for a, coder in enumerate(self.workload_.encoder_.coders):
            if isinstance(coder, BinnedCoder) and coder.sampler is None and coder.n_bins > 1:
                shares = self._column_shares(a)[:coder.n_bins]
                tilted[coder.name] = replace(coder, tilts=bin_tilts(shares, coder.edges))
        if tilted:
            self.workload_._replace_coders(tilted)

    def _column_shares(self, a):
        """The fitted model's shares of the codes of column ``a`` (its 1-way marginal)."""
        return column_shares(self.records_, self.weights_, a,
                             self.workload_.layout_.block_sizes[a])

    def _measured_marginals(self, n):
        """How many marginals the budget measures (public; plans the numbers' share)."""
        return len(self.workload_.marginals_)

    def _fit_records(self, data, rng):  # pragma: no cover - abstract
        """Spend the budget on ``data`` (a count source) and return synthetic
        ``(records, weights)``, or None when the subclass keeps another representation."""
        raise NotImplementedError

    def _progress(self, total):
        """A progress bar over ``total`` rounds when ``verbose``, else None."""
        if not self.verbose:
            return None
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=type(self).__name__, unit="round")

    def _oracle_session(self, rng):
        """A fresh oracle session on the workload's one-hot layout, seeded from ``rng``."""
        oracle = get_oracle(self.solver)
        session = open_session(
            oracle, self.workload_.layout_, int(rng.integers(np.iinfo(np.int32).max))
        )
        self.solver_stats_ = session.stats
        return session

    def sample(self, n_samples, random_state=None):
        """Draw synthetic rows.

        Rows are the fitted records, each repeated in proportion to its weight
        (rounded up or down at random, see ``allocate_counts``), shuffled and
        decoded into the columns, dtypes and categories of ``X``. Numeric
        columns get values drawn within their bin: from the shape the fit
        measured (:mod:`sklearn_privsyn.numbers`), or where it measured none
        from a density tilted by the neighbouring bins' shares
        (:mod:`sklearn_privsyn.bin_tilts`). With rules
        declared (``at_most``, ``at_least``, ``exactly_when``, ``only_when`` or
        ``equal_when`` of the workload) that some of these rows break, the rows are drawn instead
        from a pool of the model's rows that keep them, re-weighted to the
        model's 1-way shares (:mod:`sklearn_privsyn.order_rules`).

        Parameters
        ----------
        n_samples : int
            Number of rows, at least 1.
        random_state : int, RandomState instance or None, default=None
            Seed for the draw; ``None`` uses the estimator's ``random_state``.

        Returns
        -------
        X_synthetic : DataFrame or ndarray of shape (n_samples, n_features)
            A DataFrame when ``fit`` got one, else an array. When ``y`` was
            given to ``fit`` its column comes last.
        """
        check_is_fitted(self, "ledger_")
        if isinstance(n_samples, bool) or not isinstance(n_samples, (Integral, np.integer)):
            raise TypeError(f"n_samples must be an int; got {n_samples!r}")
        if n_samples < 1:
            raise ValueError(f"n_samples must be at least 1; got {n_samples}")
        rng = make_generator(self.random_state if random_state is None else random_state)
        rules = self.workload_.rules_
        frame = self._draw_rows(int(n_samples), rng)[1]
        if rules and not rules_kept(rules, frame).all():
            # public rules the model's rows break: rows kept from a pool, re-weighted to the
            # model's shares (where they all keep them, the rows are the model's own)
            sizes = self.workload_.layout_.block_sizes
            if self._draws_columns_independently():
                # a product: each group of rules sharing columns is a block drawn apart
                columns = list(self.workload_.columns_)
                ties = code_ties(rules, columns, self.workload_.categories_)
                draw = functools.partial(self._draw_tied_rows, ties=ties)
                for group, names in rule_groups(rules, self.workload_.derived_):
                    if rules_kept(group, frame).all():
                        continue
                    block = [(c, columns.index(c) if c in columns else None) for c in names]
                    drawn = sample_keeping_rules(
                        draw, group, sizes, int(n_samples), rng, block=block,
                        redecode=functools.partial(self._decode_codes, columns=names),
                        derived={c: d for c, d in self.workload_.derived_.items() if c in names})
                    for c in names:
                        frame[c] = drawn[c].set_axis(frame.index)
            else:
                names = rule_block(rules, self.workload_.derived_)
                frame = sample_keeping_rules(
                    self._draw_rows, rules, sizes, int(n_samples), rng,
                    redecode=functools.partial(self._decode_codes, columns=names))
        if self.input_was_frame_:
            return frame
        return frame.to_numpy()

    def _draws_columns_independently(self):
        """Whether the fitted model draws every column independently (a product)."""
        return False

    def _draw_rows(self, n_samples, rng):
        """``(codes, decoded rows)`` of ``n_samples`` rows of the fitted model."""
        codes = self._sample_codes(n_samples, rng)
        return codes, self._decode_codes(codes, rng)

    def _draw_tied_rows(self, n_samples, rng, ties):
        """:meth:`_draw_rows` of a product model with its value ties held (``_tied_draws``)."""
        codes = hold_ties(self._sample_codes(n_samples, rng), ties, rng)
        return codes, self._decode_codes(codes, rng)

    def _decode_codes(self, codes, rng, columns=None):
        """Rows of ``codes`` in the columns of ``X`` (numbers drawn inside their bins)."""
        seed = int(rng.integers(np.iinfo(np.int32).max))
        return self.workload_.decode(codes, random_state=seed, columns=columns)

    def _sample_codes(self, n_samples, rng):
        """``n_samples`` records in code space: the fitted records, each repeated by weight."""
        counts = allocate_counts(self.weights_, n_samples, rng)
        rows = np.repeat(self.records_, counts, axis=0)
        return rows[rng.permutation(len(rows))]

    def _output_description(self):
        """What the fit keeps to sample from, in words (for summaries)."""
        return f"{len(self.weights_):,} weighted records"

    def _more_tags(self):
        return {"requires_y": False}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags
