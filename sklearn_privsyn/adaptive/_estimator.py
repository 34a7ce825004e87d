"""AdaptiveProjection: measure marginals with Gaussian noise, project onto records.

The private data is read only by Gaussian mechanisms on workload marginals
(and, in adaptive rounds, by exponential mechanisms choosing which marginal
to measure next). Everything after a measurement, the projection of the noisy
answers onto a weighted set of synthetic records
(``_projection.py``, or ``_product_mixture.py``), is post-processing: its oracle calls,
time-outs or failures change accuracy, never the privacy guarantee.
"""

import dataclasses
import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._base import SOLVER_CONSTRAINT, BaseSynthesizer
from .._sklearn_private import Interval, StrOptions
from ..privacy import (
    exponential_mechanism,
    exponential_mechanism_rho,
    gaussian_mechanism,
    gaussian_mechanism_rho,
    gaussian_sigma,
)
from ._product_mixture import ProductMixture, sample_product_mixture
from ._projection import Projection, zeroed_targets

__all__ = ["AdaptiveProjection", "adaptive_default_representation", "adaptive_default_rounds"]

# Charges are planned this fraction below their share of the budget, so that
# rounding in sigma -> rho can never push the ledger's total over the budget.
_BUDGET_MARGIN = 1e-9

# zero_test="auto" with every marginal measured at once: answers below 2 noise sd
# count as zero in the final re-weighting (chosen on generated tables, see the docs).
_ZERO_TEST = 2.0

# representation="products": L-BFGS iterations of the final fit per unit of
# max_iter (each adaptive round's intermediate fit, warm-started from the
# previous round's, runs max_iter iterations).
_PRODUCT_ITER_FACTOR = 5

#: Largest per-cell noise sd at which the default measures every marginal at
#: once; above it, only the 1-way marginals (see adaptive_default_rounds).
ALL_AT_ONCE_NOISE = 0.03


def _all_at_once_sd(n, rho, n_marginals):
    """Per-cell noise sd when ``n_marginals`` marginals share ``rho`` (sensitivity sqrt(2)/n each)."""
    return math.sqrt(n_marginals / rho) / n


def adaptive_default_rounds(n, rho, n_marginals, noise_level=ALL_AT_ONCE_NOISE):
    """Rounds of measurement: 1 (every marginal at once) or 0 (the 1-way marginals only).

    Measuring all ``M`` marginals at once gives every cell Gaussian noise of
    standard deviation ``sigma_all = sqrt(M / rho) / n`` (sensitivity
    ``sqrt(2) / n`` per marginal, ``rho / M`` each). While ``sigma_all`` is at
    most ``noise_level`` every marginal is measured at once (1); above it the
    whole budget measures only every column's 1-way marginal, fitted by the
    independence model (0). Adaptive rounds (``rounds=T > 1``) are never the
    default: on generated tables they lost to one of these two schedules
    wherever they were run. Only public quantities enter: ``n`` (public
    under replace-one neighbours), ``rho`` and the number of marginals.

    ``noise_level`` (``ALL_AT_ONCE_NOISE``, 0.03) was chosen on
    generated tables (``benchmarks/bench_adaptive.py --data generated
    --rounds 0 1``, latent-class and Bayesian-network tables, plain and with
    dominant values): it is the largest ``sigma_all`` tried at which
    measuring everything at once had the lower max error on every table
    (7,000 rows with 64 marginals, 48,842 rows with 278). Above it the
    outcome depends on the table and workload: at 0.05 the 1-way marginals
    alone had as low a max error and lower mean error on the 7,000-row
    tables, while everything at once still had the lower max error on the
    48,842-row ones. Below it the 1-way marginals alone often still have the
    lower mean error; the rule favours the max error.

    Parameters
    ----------
    n : int
        Number of rows.
    rho : float
        zCDP budget.
    n_marginals : int
        Number of workload marginals ``M``.
    noise_level : float, default=ALL_AT_ONCE_NOISE
        Largest per-cell noise standard deviation for measuring all at once.

    Returns
    -------
    rounds : int
        1 to measure every marginal at once, 0 for the 1-way marginals only.

    Examples
    --------
    >>> adaptive_default_rounds(48842, 0.0143, 64)
    1
    >>> adaptive_default_rounds(48842, 0.000167, 278)
    1
    >>> adaptive_default_rounds(7000, 0.00022, 64)
    0
    >>> adaptive_default_rounds(1000, 0.0245, 64)
    0
    """
    return int(_all_at_once_sd(n, rho, n_marginals) <= noise_level)


def adaptive_default_representation(n, rho, n_marginals, rounds, products_noise=0.005):
    """The projection's representation: products when everything is measured at moderate noise.

    With every marginal measured at once (``rounds == 1``) each cell has
    noise of standard deviation ``sigma_all = sqrt(M / rho) / n``. When
    ``sigma_all`` is at least ``products_noise`` the noisy answers are fitted
    by a mixture of product distributions, otherwise (little noise, or
    adaptive rounds) by weighted records. Only public quantities enter.
    Chosen on generated tables (latent-class and Bayesian-network tables,
    with and without dominant values; ``benchmarks/bench_adaptive.py --data
    generated --generator ... --representation records products``): measured
    all at once, the mixture of products had 15-42% lower mean error than
    the records at every noise level, and as low a max error (within the
    seeds' spread) at ``sigma_all`` of 0.0085 and above, but 1.8 to 3.6
    times the records' at 0.0014 (48,842 rows, ``epsilon = 1``), where the
    records fit the large cells that a few products cannot; in adaptive
    rounds (few marginals measured) the records had the lower max error in
    11 of 12 settings. With only the 1-way marginals measured
    (``rounds == 0``) it is products: one product distribution, the
    independence model.

    Parameters
    ----------
    n : int
        Number of rows.
    rho : float
        zCDP budget.
    n_marginals : int
        Number of workload marginals ``M``.
    rounds : int
        Rounds of measurement (0: 1-way marginals only, 1: every marginal at once).
    products_noise : float, default=0.005
        Smallest ``sigma_all`` at which products are used.

    Returns
    -------
    representation : {"records", "products"}

    Examples
    --------
    >>> adaptive_default_representation(48842, 0.000167, 64, 1)
    'products'
    >>> adaptive_default_representation(48842, 0.0143, 64, 1)
    'records'
    >>> adaptive_default_representation(7000, 0.000221, 64, 3)
    'records'
    """
    if rounds == 0:
        return "products"
    if rounds == 1 and _all_at_once_sd(n, rho, n_marginals) >= products_noise:
        return "products"
    return "records"


class AdaptiveProjection(BaseSynthesizer):
    """Gaussian measurements of the workload's marginals, projected onto records or products.

    **Measure.** With ``n_rounds_ == 1`` every marginal of the workload is
    measured once by one Gaussian mechanism: under replace-one neighbours a
    changed row moves ``1 / n`` between two cells of each marginal, so the
    ``M`` marginals together have L2 sensitivity ``sqrt(2 M) / n``, and the
    whole budget ``rho`` buys ``sigma = sqrt(M / rho) / n`` on every cell.
    With ``n_rounds_ = T > 1`` the budget is split evenly over ``T`` rounds.
    The first measures the 1-way marginal of every column (one Gaussian
    mechanism, sensitivity ``sqrt(2 d) / n`` for ``d`` columns), so that
    columns no later round measures are still spread as in the data. Each
    later round picks one workload marginal by the exponential mechanism (a
    ``selection_share`` of the round's budget, charged ``epsilon**2 / 8``)
    with score the L1 distance between its true and current synthetic
    answers (sensitivity ``2 / n``) minus the L1 noise expected from
    measuring it (public), and measures it with the rest (sensitivity
    ``sqrt(2) / n``). A marginal measured twice keeps the inverse-variance
    average of its measurements. With ``n_rounds_ == 0`` the whole budget
    measures the 1-way marginals (one Gaussian mechanism, sensitivity
    ``sqrt(2 d) / n``) and nothing else, and they are fitted by a single
    product distribution (the independence model): where even the whole
    budget cannot measure one workload marginal usefully, this beat spending
    part of it on one.

    **Project.** The noisy answers are turned into weighted records by
    :class:`~sklearn_privsyn.adaptive.Projection`: the distribution over
    records closest to them in inverse-variance weighted l2, by a fully
    corrective Frank-Wolfe whose new records come from a coordinate descent
    and the optimisation oracle (``solver``). This reads only noisy answers.

    With ``representation="products"`` the noisy answers are fitted instead
    by a mixture of ``n_components`` product distributions
    (:class:`~sklearn_privsyn.adaptive.ProductMixture`: one
    categorical distribution per column and component, minimising the same
    objective by L-BFGS), and :meth:`sample` draws each row from it (a
    component, then every column independently). Also post-processing.
    The default ``representation="auto"`` does so when every marginal is
    measured at once with noise of standard deviation at least 0.005 a cell
    (:func:`adaptive_default_representation`), and uses records otherwise.

    ``rounds=None`` uses :func:`adaptive_default_rounds`.

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
        1 measures every marginal at once; ``T > 1`` measures every 1-way
        marginal, then ``T - 1`` marginals chosen adaptively; 0 measures
        only the 1-way marginals; ``None`` derives 1 or 0 from the noise
        level (:func:`adaptive_default_rounds`; adaptive rounds are never
        the default).
    selection_share : float, default=0.1
        Share of each adaptive round's budget spent on choosing the marginal.
    max_iter : int, default=100
        Frank-Wolfe iterations of the final projection at most (adaptive
        rounds in between run at most ``max_iter // 10`` each). With
        ``representation="products"``: ``5 * max_iter`` L-BFGS iterations
        for the final fit, ``max_iter`` for each adaptive round's.
    tol : float, default=0.005
        Stop the projection when its Frank-Wolfe gap is below ``tol`` times
        its objective.
    time_limit : float, default=None
        Seconds for the final projection; the best mixture so far is kept.
    zero_test : float, "auto" or None, default="auto"
        After the final projection, its records are re-weighted against the
        noisy answers with every answer below ``zero_test`` noise standard
        deviations (a one-sided test that the cell is not empty) set to
        zero; ``None`` keeps the l2 projection's weights. ``"auto"`` means
        2.0 when every marginal is measured at once (``n_rounds_ == 1``) and
        ``None`` in adaptive rounds, where on generated tables it lost, and
        with ``representation="products"``, where a given ``z`` continues
        the fit against the zeroed answers. Post-processing: no privacy cost.
    representation : {"records", "products", "auto"}, default="auto"
        What the noisy answers are projected onto: weighted records
        (:class:`~sklearn_privsyn.adaptive.Projection`) or a mixture of
        product distributions
        (:class:`~sklearn_privsyn.adaptive.ProductMixture`).
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
    random_state : int, RandomState instance or None, default=None
        Controls every random draw: noise, selections, pricing starts and
        solver seeds.
    verbose : int, default=0
        Show a progress bar over projection iterations.

    Attributes
    ----------
    n_rounds_ : int
        Rounds used (0: 1-way marginals only; 1: every marginal measured at once).
        Named ``rounds_`` in earlier development versions; that name still reads it, with a
        ``FutureWarning``.
    zero_test_ : float or None
        The final re-weighting's threshold used (``zero_test`` resolved).
    measured_marginals_ : ndarray of int
        Index of the workload marginal measured in each selection round (all
        of them, in order, when ``n_rounds_ == 1``).
    one_way_measurements_ : ndarray
        Noisy 1-way answers of every column, concatenated in column order
        (adaptive rounds only). A DP output.
    measurements_ : ndarray of shape (n_queries,)
        Noisy answers of every cell (inverse-variance averages of repeated
        measurements); ``nan`` where never measured. A DP output.
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
        Frank-Wolfe (records) or L-BFGS (products) iterations of the final
        projection.
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
        "representation": [StrOptions({"records", "products", "auto"})],
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
        self.random_state = random_state
        self.verbose = verbose

    def _fit_records(self, records, rng):
        workload = self.workload_
        n = records.shape[0]
        offsets = workload.marginal_offsets_
        marginal_cells = np.diff(offsets)
        M = len(marginal_cells)
        rounds = adaptive_default_rounds(n, self.rho_, M) if self.rounds is None else self.rounds
        self.n_rounds_ = int(rounds)
        self.representation_ = (
            adaptive_default_representation(n, self.rho_, M, self.n_rounds_)
            if self.representation == "auto" else self.representation
        )
        self.zero_test_ = self._zero_test()

        # PRIVATE: the only reads of the data, used solely inside the mechanisms below
        # (with rounds 0 only the 1-way answers are measured, computed in _adaptive).
        true_answers = workload.answer_codes(records) if rounds != 0 else None

        noise_rng, select_rng, project_rng, solver_rng = rng.spawn(4)
        session = self._oracle_session(solver_rng) if self.representation_ == "records" else None
        try:
            if rounds == 1:
                sensitivity = math.sqrt(2.0 * M) / n
                sigma = gaussian_sigma(sensitivity, self.rho_ * (1.0 - _BUDGET_MARGIN))
                self.ledger_.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
                noisy = gaussian_mechanism(true_answers, sensitivity, sigma, noise_rng)
                self.measured_marginals_ = np.arange(M, dtype=np.intp)
                self.measurements_ = noisy
                self.measurement_variances_ = np.full(len(noisy), sigma**2)
                projection = self._new_projection(noisy, sigma**2, (), session, project_rng)
            else:
                projection = self._adaptive(records, true_answers, rounds, session, noise_rng,
                                            select_rng, project_rng)
            result = self._run_projection(projection, final=True)
        finally:
            if session is not None:
                session.close()

        self.projection_objective_ = result.objective
        self.projection_stop_ = result.stop_reason
        self.n_iter_ = result.n_iter
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

    def _zero_test(self):
        if self.zero_test == "auto":
            return _ZERO_TEST if self.n_rounds_ == 1 and self.representation_ == "records" else None
        return self.zero_test

    def _new_projection(self, noisy, variances, extra, session, rng):
        if self.representation_ == "products":
            n_components = 1 if self.n_rounds_ == 0 else self.n_components
            return ProductMixture(self.workload_, noisy, variances, n_components=n_components,
                                  extra_marginals=extra, random_state=rng)
        return Projection(self.workload_, noisy, variances, extra_marginals=extra,
                          session=session, random_state=rng)

    def _run_projection(self, projection, final):
        """Run the projection: to the end (``final``), or briefly inside adaptive rounds."""
        products = self.representation_ == "products"
        if not final:
            if products:
                return projection.run(max_iter=self.max_iter)
            return projection.run(max_iter=max(1, self.max_iter // 10), tol=self.tol)
        max_iter = _PRODUCT_ITER_FACTOR * self.max_iter if products else self.max_iter
        bar = self._progress(max_iter)
        try:
            if products:
                result = projection.run(max_iter=max_iter, time_limit=self.time_limit,
                                        progress=None if bar is None else _reporter(bar))
                if self.zero_test_ is not None:
                    # continue against the zeroed answers; report the objective against
                    # the measured ones, as the records' re-weighting does
                    noisy, precision = projection.target, projection.precision
                    with np.errstate(divide="ignore"):
                        variances = 1.0 / precision
                    projection.update_targets(
                        zeroed_targets(noisy, precision, self.zero_test_), variances)
                    result = projection.run(max_iter=self.max_iter)
                    projection.update_targets(noisy, variances)
                    result = dataclasses.replace(result, objective=projection.objective())
                return result
            return projection.run(max_iter=self.max_iter, tol=self.tol,
                                  time_limit=self.time_limit, zero_test=self.zero_test_,
                                  progress=None if bar is None else _reporter(bar))
        finally:
            if bar is not None:
                bar.close()

    def _projection(self, weighted_sum, precision, session, rng, projection=None):
        """The projection onto the inverse-variance averages of the measurements so far."""
        with np.errstate(divide="ignore", invalid="ignore"):
            noisy = weighted_sum / precision  # nan where not measured
            variances = 1.0 / precision  # inf where not measured
        Q = self.workload_.n_queries_
        self.measurements_, self.measurement_variances_ = noisy[:Q], variances[:Q]
        self.one_way_measurements_ = noisy[Q:]
        noisy = np.nan_to_num(noisy, nan=0.0)
        if projection is None:
            one_way = [(a,) for a in range(self.workload_.layout_.n_attributes)]
            return self._new_projection(noisy, variances, one_way, session, rng)
        projection.update_targets(noisy, variances)
        return projection

    def _sample_codes(self, n_samples, rng):
        if self.representation_ == "products":
            return sample_product_mixture(self.component_weights_, self.component_tables_,
                                          n_samples, rng)
        return super()._sample_codes(n_samples, rng)

    def _output_description(self):
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
        if self.representation_ == "products":
            return ProductMixture.answers_of(self.workload_, self.component_weights_,
                                             self.component_tables_)
        return self.workload_.answer_codes(self.records_, self.weights_)

    def _adaptive(self, records, true_answers, rounds, session, noise_rng, select_rng,
                  project_rng):
        """Measure every 1-way marginal, then ``rounds - 1`` rounds of select, measure, re-project.

        The first round's share (the whole budget when ``rounds == 0``)
        measures the 1-way marginal of every column (sensitivity
        ``sqrt(2 d) / n`` for ``d`` columns), so that columns the later
        rounds never measure are still spread as the data are
        (without them a mixture of few records puts each such column on one
        value). They are projection targets, not workload queries.
        """
        workload = self.workload_
        n = records.shape[0]
        offsets = workload.marginal_offsets_
        marginal_cells = np.diff(offsets)
        Q = workload.n_queries_
        sizes = np.asarray(workload.layout_.block_sizes)
        # PRIVATE: the true 1-way answers, read only by the Gaussian mechanism below.
        one_way_true = np.concatenate([
            np.bincount(records[:, a], minlength=size) / n
            for a, size in enumerate(sizes)
        ])
        precision = np.zeros(Q + len(one_way_true))
        weighted_sum = np.zeros(Q + len(one_way_true))
        round_rho = self.rho_ * (1.0 - _BUDGET_MARGIN) / max(rounds, 1)

        sensitivity = math.sqrt(2.0 * len(sizes)) / n
        sigma = gaussian_sigma(sensitivity, round_rho)
        self.ledger_.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
        noisy = gaussian_mechanism(one_way_true, sensitivity, sigma, noise_rng)
        precision[Q:] = 1.0 / sigma**2
        weighted_sum[Q:] = noisy / sigma**2
        projection = self._projection(weighted_sum, precision, session, project_rng)
        self.measured_marginals_ = np.zeros(0, dtype=np.intp)
        if rounds == 0:
            return projection
        self._run_projection(projection, final=False)

        select_epsilon = math.sqrt(8.0 * self.selection_share * round_rho)
        sensitivity = math.sqrt(2.0) / n
        sigma = gaussian_sigma(sensitivity, (1.0 - self.selection_share) * round_rho)
        # Public: the expected L1 noise of measuring a marginal at sigma.
        expected_noise = math.sqrt(2.0 / math.pi) * sigma * marginal_cells
        chosen = []
        for _ in range(rounds - 1):
            synthetic = projection.answers()[:Q]
            l1 = np.add.reduceat(np.abs(true_answers - synthetic), offsets[:-1])
            self.ledger_.charge("exponential_mechanism", exponential_mechanism_rho(select_epsilon))
            m = exponential_mechanism(l1 - expected_noise, select_epsilon, 2.0 / n, select_rng)
            cells = slice(offsets[m], offsets[m + 1])
            self.ledger_.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
            noisy = gaussian_mechanism(true_answers[cells], sensitivity, sigma, noise_rng)
            precision[cells] += 1.0 / sigma**2
            weighted_sum[cells] += noisy / sigma**2
            chosen.append(m)
            projection = self._projection(weighted_sum, precision, session, project_rng,
                                          projection)
            self._run_projection(projection, final=False)
        self.measured_marginals_ = np.asarray(chosen, dtype=np.intp)
        return projection


def _reporter(bar):
    """A projection progress callback that advances ``bar`` and shows the objective (and gap)."""

    def update(iteration, value, gap=None):
        bar.update(1)
        if gap is None:
            bar.set_postfix(objective=f"{value:.4g}")
        else:
            bar.set_postfix(objective=f"{value:.4g}", gap=f"{gap:.3g}")

    return update

