"""AdaptiveProjection: measure marginals with Gaussian noise, project onto records.

The private data is read only by Gaussian mechanisms on workload marginals
(and, in adaptive rounds, by exponential mechanisms choosing which marginal
to measure next), in the three schedules of ``_schedules.py``. Everything
after a measurement, the fit of the noisy answers by weighted records, a
mixture of products or a graphical model (``_fitting.py``), is
post-processing: its oracle calls, time-outs or failures change accuracy,
never the privacy guarantee. The rules that choose a schedule and a
representation from public quantities are in ``_rules.py``.
"""

import warnings
from numbers import Integral, Real

from sklearn.utils.validation import check_is_fitted

from .._base import SOLVER_CONSTRAINT, BaseSynthesizer
from .._sklearn_private import Interval, StrOptions
from ._product_mixture import ProductMixture, sample_product_mixture
from ._rules import (
    GRAPHICAL_ZERO_TEST,
    ZERO_TEST,
    adaptive_default_representation,
    adaptive_default_rounds,
    workload_pairs,
    workload_redundancy,
)
from ._schedules import measure_all_at_once, measure_by_selection, measure_one_way_only

__all__ = ["AdaptiveProjection"]


class AdaptiveProjection(BaseSynthesizer):
    """Gaussian measurements of marginals, fitted by records, products or a graphical model.

    **Measure.** One of three schedules (``rounds``; by default
    :func:`adaptive_default_rounds` picks one from public quantities):

    * ``n_rounds_ == 1``, everything at once: every marginal of the workload
      is measured once by one Gaussian mechanism. Under replace-one
      neighbours a changed row moves ``1 / n`` between two cells of each
      marginal, so the ``M`` marginals together have L2 sensitivity
      ``sqrt(2 M) / n``, and the whole budget ``rho`` buys
      ``sigma = sqrt(M / rho) / n`` on every cell.
    * ``n_rounds_ = T >= 2``, adaptive selection (AIM's idea, our code:
      :func:`~sklearn_privsyn.adaptive.measure_adaptively`): the budget is
      planned as ``d + T`` equal rounds. The 1-way marginals of the ``d``
      columns are measured first (one Gaussian mechanism, sensitivity
      ``sqrt(2 d) / n``, at a round's noise). Each round then scores every
      candidate (the workload's marginals and all their subsets) by the
      current fit's L1 error on it, weighted by its overlap with the
      workload, less the L1 noise its measurement would add; picks one by
      the exponential mechanism (a ``selection_share`` of the round,
      charged ``epsilon**2 / 8``, sensitivity ``2 w_max / n``) and measures
      it with the Gaussian mechanism (sensitivity ``sqrt(2) / n``); refits;
      and halves the noise of later rounds when the refit moved the chosen
      marginal by less than its noise. The last round spends what is left.
      ``n_selection_rounds_`` rounds ran; a marginal measured twice keeps
      the inverse-variance average.
    * ``n_rounds_ == 0``: the whole budget measures the 1-way marginals (one
      Gaussian mechanism, sensitivity ``sqrt(2 d) / n``) and nothing else,
      fitted by a single product distribution (the independence model):
      where even the whole budget cannot measure the 1-way marginals and a
      few more usefully, this wins. Each column's noisy answers are first
      mixed with the uniform distribution, with the weight that minimises
      Stein's unbiased estimate of their squared error
      (``one_way_shrinkage_``): where a cell's noise is as large as the
      column's mass, the rows are not drawn from the few values the noise
      happened to raise.

    **Fit** (post-processing: reads only the noisy answers). After adaptive
    selection, by default a graphical model
    (:class:`~sklearn_privsyn.adaptive.GraphicalModel`: one log-potential
    table per measured marginal, fitted by mirror descent over a junction
    tree; the maximum-entropy family, so marginals never measured follow
    smoothly from the measured ones), refitted after every round; cells of
    a measured marginal that test as empty are fixed at zero
    (``zero_test``), so no synthetic row holds them. Measured all at once,
    the noisy answers are turned into weighted records by
    :class:`~sklearn_privsyn.adaptive.Projection` (the distribution over
    records closest to them in inverse-variance weighted l2, by a fully
    corrective Frank-Wolfe whose new records come from a coordinate descent
    and the optimisation oracle, ``solver``), or, at moderate noise, into a
    mixture of ``n_components`` product distributions
    (:class:`~sklearn_privsyn.adaptive.ProductMixture`, the same objective by
    L-BFGS). ``representation`` chooses; ``"auto"`` uses
    :func:`adaptive_default_representation`. :meth:`sample` draws rows from
    the fit: records repeated by weight, or rows drawn from the mixture or
    the graphical model.

    Parameters
    ----------
    epsilon : float, default=1.0
        Target epsilon of (epsilon, delta)-DP; never exceeded.
    delta : float, default=None
        Target delta; ``None`` means ``1 / n**2``.
    workload : QueryWorkload, default=None
        The marginals to measure; cloned. ``None`` means all 3-way marginals
        with the domain read from the data (which warns).
    rounds : int, default=None
        1 measures every marginal at once; ``T >= 2`` selects adaptively,
        with the budget planned for ``T`` rounds after the 1-way marginals
        (annealing may end it in fewer); 0 measures only the 1-way
        marginals; ``None`` uses :func:`adaptive_default_rounds`.
    selection_share : float, default=0.1
        Share of each adaptive round's budget spent on choosing the marginal.
    max_iter : int, default=100
        Frank-Wolfe iterations of the final projection at most (adaptive
        rounds in between run at most ``max_iter // 10`` each). With
        ``representation="products"``: ``5 * max_iter`` L-BFGS iterations
        for the final fit, ``max_iter`` for each adaptive round's; with
        ``"graphical"``: ``5 * max_iter`` mirror-descent steps for the final
        fit, ``max_iter`` after each round.
    tol : float, default=0.005
        Stop the projection when its Frank-Wolfe gap is below ``tol`` times
        its objective (records fitted to every marginal at once: and below
        one cell at the hold's threshold per marginal, see the docs).
    time_limit : float, default=None
        Seconds for the final projection; the best mixture so far is kept.
    zero_test : float, "auto" or None, default="auto"
        A noisy answer below ``zero_test`` noise standard deviations (a
        one-sided test that the cell is not empty) counts as zero. Records:
        after the final projection they are re-weighted against the answers
        with those set to zero. Graphical model: such cells of measured
        marginals of two or more columns are fixed at zero (never sampled)
        where ``zero_test`` sd is at most 0.01 (a wrongly zeroed real cell
        then holds little), but never every cell of a value (the test removes
        combinations, not values). Products: the fit continues against the zeroed
        answers. ``None`` switches it off. ``"auto"`` means 2.0 with records
        measured all at once and with the graphical model, ``None``
        otherwise. Post-processing: no privacy cost.
    representation : {"records", "products", "graphical", "auto"}, default="auto"
        What the noisy answers are fitted by: weighted records
        (:class:`~sklearn_privsyn.adaptive.Projection`), a mixture of
        product distributions
        (:class:`~sklearn_privsyn.adaptive.ProductMixture`) or a graphical
        model (:class:`~sklearn_privsyn.adaptive.GraphicalModel`; adaptive
        selection or 1-way marginals only, not with ``rounds=1``).
        ``"auto"`` uses :func:`adaptive_default_representation` (public
        quantities only).
    n_components : int, default=8
        Components of the mixture of products (``representation="products"``);
        chosen on generated tables (see the docs). With ``n_rounds_ == 0``
        one component is fitted whatever its value: 1-way answers alone say
        nothing about how columns go together.
    solver : {"highs", "pulp", "heuristic", "brute"} or oracle, default="highs"
        The oracle that prices records when the coordinate descent finds none.
    conversion : {"cks", "classic"}, default="cks"
        zCDP to (epsilon, delta) conversion.
    number_share : float in [0, 1) or "auto", default="auto"
        Share of the budget spent measuring the binned numeric columns finely
        before the workload: point masses, bins of similar mass and the shape
        of the values inside each bin (:mod:`sklearn_privsyn.numbers`).
        ``"auto"`` derives it from the workload and the columns; 0 keeps
        equal-width bins drawn uniformly. Nothing is spent without binned
        columns.
    random_state : int, RandomState instance or None, default=None
        Controls every random draw: noise, selections, pricing starts and
        solver seeds.
    verbose : int, default=0
        Show a progress bar over projection iterations.

    Attributes
    ----------
    n_rounds_ : int
        The schedule used (0: 1-way marginals only; 1: every marginal
        measured at once; ``T >= 2``: adaptive selection planned for ``T``
        rounds). Named ``rounds_`` in earlier development versions; that
        name still reads it, with a ``FutureWarning``.
    n_selection_rounds_ : int
        Adaptive selection only: rounds that ran (select and measure).
    zero_test_ : float or None
        The zero test's threshold used (``zero_test`` resolved).
    measured_marginals_ : list of tuples of int
        The marginals (column indices) measured, in order: every workload
        marginal when ``n_rounds_ == 1``, the one chosen in each round of
        adaptive selection (after the 1-way marginals), none with 0.
    marginal_measurements_ : dict
        Adaptive selection only: ``{marginal: (noisy answers, variance)}``
        for every marginal measured (1-way ones included), cells in the
        marginal's column order; repeated measurements averaged. A DP output.
    one_way_measurements_ : ndarray
        Noisy 1-way answers of every column, concatenated in column order
        (``n_rounds_ == 0`` only). A DP output.
    one_way_shrinkage_ : ndarray of shape (n_columns,)
        ``n_rounds_ == 0`` only: each column's weight ``lam`` in ``[0, 1]``
        on the projection of its noisy answers, the rest on uniform (1: the
        answers as measured; 0: uniform).
    measurements_ : ndarray of shape (n_queries,)
        Noisy answers of every workload cell when measured at once (``nan``
        everywhere with ``n_rounds_ == 0``; absent with adaptive
        selection). A DP output.
    measurement_variances_ : ndarray of shape (n_queries,)
        Their noise variances (``inf`` where never measured).
    representation_ : str
        The representation used (``representation`` resolved).
    projection_gap_ : float
        Frank-Wolfe gap of the final projection (records only).
    projection_objective_ : float
        Its objective ``1/2 sum_c (a_c - y_c)**2 / var_c``.
    projection_stop_ : str
        Why the final projection stopped.
    n_iter_ : int
        Frank-Wolfe (records), L-BFGS (products) or mirror-descent
        (graphical) iterations of the final fit.
    graphical_model_ : GraphicalModel
        The fitted graphical model (graphical only; ``records_`` and
        ``weights_`` are then absent).
    component_weights_ : ndarray of shape (n_components,)
        Mixture weights (products only; records_ and weights_ are then absent).
    component_tables_ : list of ndarray of shape (n_components, block_size)
        Per column, each component's distribution over its codes (products only).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn import AdaptiveProjection, QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1, 1, 0] * 50, "b": [1, 1, 0, 0] * 50})
    >>> workload = QueryWorkload(domain={"a": 2, "b": 2}, k=2)
    >>> est = AdaptiveProjection(epsilon=1.0, workload=workload, solver="brute",
    ...                          random_state=0).fit(X)
    >>> est.epsilon_ <= 1.0
    True
    >>> est.sample(3).shape
    (3, 2)
    """

    _parameter_constraints: dict = {
        **BaseSynthesizer._parameter_constraints,
        "rounds": [Interval(Integral, 0, None, closed="left"), None],
        "selection_share": [Interval(Real, 0, 1, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "zero_test": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"}), None],
        "representation": [StrOptions({"records", "products", "graphical", "auto"})],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "solver": SOLVER_CONSTRAINT,
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        workload=None,
        rounds=None,
        selection_share=0.1,
        max_iter=100,
        tol=0.005,
        time_limit=None,
        zero_test="auto",
        representation="auto",
        n_components=8,
        solver="highs",
        conversion="cks",
        number_share="auto",
        random_state=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.rounds = rounds
        self.selection_share = selection_share
        self.max_iter = max_iter
        self.tol = tol
        self.time_limit = time_limit
        self.zero_test = zero_test
        self.representation = representation
        self.n_components = n_components
        self.solver = solver
        self.conversion = conversion
        self.number_share = number_share
        self.random_state = random_state
        self.verbose = verbose

    def _measured_marginals(self, n):
        # every marginal (rounds 1), the 1-way ones (rounds 0), or those and T selected
        return self._n_measured(n, self.rho_)[1]

    def _n_measured(self, n, rho):
        """(rounds, marginals measured) that ``rho`` buys; public quantities only."""
        workload = self.workload_
        M = len(workload.marginal_offsets_) - 1
        d = workload.layout_.n_attributes
        rounds = (adaptive_default_rounds(
            n, rho, M, d, workload_redundancy(workload.marginal_set_.marginals),
            selection_share=self.selection_share) if self.rounds is None else self.rounds)
        return rounds, (M if rounds == 1 else d + rounds)

    def _fit_records(self, data, rng):
        workload = self.workload_
        n = data.n_rows
        M = len(workload.marginal_offsets_) - 1
        rounds, _ = self._n_measured(n, self.synthesis_rho_)
        self.n_rounds_ = int(rounds)
        self.representation_ = (
            adaptive_default_representation(
                n, self.synthesis_rho_, M, self.n_rounds_,
                n_columns=workload.layout_.n_attributes,
                n_pairs=workload_pairs(workload.marginal_set_.marginals))
            if self.representation == "auto" else self.representation
        )
        if self.representation_ == "graphical" and rounds == 1:
            raise ValueError(
                "representation='graphical' needs adaptive selection (rounds >= 2 or None); "
                f"with rounds={rounds} use 'records' or 'products'."
            )
        self.zero_test_ = self._zero_test()

        noise_rng, select_rng, project_rng, solver_rng = rng.spawn(4)
        session = self._oracle_session(solver_rng) if self.representation_ == "records" else None
        try:  # the schedules (_schedules.py) measure, record and fit
            if rounds == 1:
                result = measure_all_at_once(self, data, noise_rng, session, project_rng)
            elif rounds == 0:
                result = measure_one_way_only(self, data, noise_rng, session, project_rng)
            else:
                result = measure_by_selection(self, data, rounds, noise_rng, session, project_rng)
        finally:
            if session is not None:
                session.close()

        self.projection_objective_ = result.objective
        self.projection_stop_ = result.stop_reason
        self.n_iter_ = result.n_iter
        if self.representation_ == "graphical":
            self.graphical_model_ = result.model
            return None
        if self.representation_ == "products":
            self.component_weights_ = result.weights
            self.component_tables_ = result.tables
            return None
        self.projection_gap_ = result.gap
        return result.records, result.weights

    @property
    def rounds_(self):
        """Deprecated alias of ``n_rounds_``, the name every synthesizer uses."""
        n_rounds = self.n_rounds_
        warnings.warn("AdaptiveProjection.rounds_ is deprecated and will be removed; use "
                      "n_rounds_", FutureWarning, stacklevel=2)
        return n_rounds

    def _measured_columns(self):
        # the 1-way marginals of every column open the 1-way and selection schedules
        if self.n_rounds_ != 1:
            return set(range(self.workload_.layout_.n_attributes))
        return super()._measured_columns()

    def _zero_test(self):
        if self.zero_test == "auto":
            if self.representation_ == "graphical":
                return GRAPHICAL_ZERO_TEST
            return ZERO_TEST if self.n_rounds_ == 1 and self.representation_ == "records" else None
        return self.zero_test

    def _draws_columns_independently(self):
        return self.representation_ == "products" and len(self.component_weights_) == 1

    def _sample_codes(self, n_samples, rng):
        if self.representation_ == "graphical":
            return self.graphical_model_.sample(n_samples, rng)
        if self.representation_ == "products":
            return sample_product_mixture(self.component_weights_, self.component_tables_,
                                          n_samples, rng)
        return super()._sample_codes(n_samples, rng)

    def _column_shares(self, a):
        if self.representation_ == "graphical":
            return self.graphical_model_.answers([(a,)])
        if self.representation_ == "products":
            return self.component_weights_ @ self.component_tables_[a]
        return super()._column_shares(a)

    def _output_description(self):
        if self.representation_ == "graphical":
            return (f"a graphical model over {len(self.graphical_model_.marginals)} measured "
                    "marginals")
        if self.representation_ == "products":
            return f"a mixture of {len(self.component_weights_)} product distributions"
        return super()._output_description()

    def fitted_answers(self):
        """Answers of the fitted distribution to the workload's cells (a DP output).

        The weighted records' answers, or the mixture of products' exact
        answers; the rows :meth:`sample` draws estimate them.

        Returns
        -------
        answers : ndarray of shape (workload_.n_queries_,)
        """
        check_is_fitted(self, "ledger_")
        if self.representation_ == "graphical":
            return self.graphical_model_.answers(self.workload_.marginal_set_.marginals)
        if self.representation_ == "products":
            return ProductMixture.answers_of(self.workload_, self.component_weights_,
                                             self.component_tables_)
        return self.workload_.answer_codes(self.records_, self.weights_)
