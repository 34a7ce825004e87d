"""AdaptiveProjection: measure marginals with Gaussian noise, project onto records.

The private data is read only by Gaussian mechanisms on workload marginals
(and, in adaptive rounds, by exponential mechanisms choosing which marginal
to measure next). Everything after a measurement, the projection of the noisy
answers onto a weighted set of synthetic records
(``_projection.py``, or ``_product_mixture.py``), is post-processing: its oracle calls,
time-outs or failures change accuracy, never the privacy guarantee.
"""

import dataclasses
import itertools
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
from ._graphical import GraphicalModel, junction_tree_size
from ._product_mixture import ProductMixture, sample_product_mixture
from ._projection import Projection, zeroed_targets
from ._selection import candidate_marginals, measure_adaptively

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

# Records' Frank-Wolfe on workloads of at least _WIDE_MARGINALS marginals re-weights
# by _WIDE_INNER_QP_ITER accelerated steps an iteration (warm), then 300 at the end:
# a step costs n_records * n_marginals, and 300 a step made ACS-schema fits with
# 4,096 marginals spend most of their time there (benchmarks/notes/wide.md).
# Smaller workloads (the paper's 64 marginals) keep 300 an iteration.
_WIDE_MARGINALS = 1024
_WIDE_INNER_QP_ITER = 30

#: Largest number of columns at which the default representation may be the
#: mixture of products (see adaptive_default_representation).
PRODUCTS_COLUMNS = 32

#: Largest per-cell noise sd at which the default measures every marginal at
#: once when the workload's marginals share few pairs of columns (redundancy at
#: most SPARSE_REDUNDANCY; see adaptive_default_rounds): every marginal is then
#: measured as precisely as an adaptive round would measure one (SELECTION_NOISE).
ALL_AT_ONCE_NOISE = 0.018

#: The same when they share many (every 3-way marginal of a table, say).
REDUNDANT_ALL_AT_ONCE_NOISE = 0.003

#: Largest workload redundancy (workload_redundancy) counted as sparse.
SPARSE_REDUNDANCY = 3.0

#: Per-cell noise sd each adaptive round's measurement is planned for: the
#: default plans floor((1 - selection_share) rho (n SELECTION_NOISE)**2) rounds.
SELECTION_NOISE = 0.018

#: At most this many planned rounds per column (AIM's 16 d, the 1-way
#: marginals' d included).
MAX_ROUNDS_PER_COLUMN = 15

#: Largest junction tree (total cells of its cliques) the graphical model may
#: grow to; a round may take a marginal only while the tree stays below this
#: times the share of the budget spent so far (small models first, as in AIM).
GRAPHICAL_MAX_CELLS = 1_000_000

# representation="graphical": mirror-descent steps of the final fit per unit of
# max_iter (each adaptive round's refit, warm-started, runs max_iter steps).
_GRAPHICAL_ITER_FACTOR = 5

# zero_test="auto" with the graphical model: a cell of a measured marginal of two
# or more columns whose noisy answer is below 2 noise sd is a structural zero, when
# 2 sd is at most _ZERO_MAX_MASS (so a real cell wrongly zeroed holds little).
_GRAPHICAL_ZERO_TEST = 2.0
_ZERO_MAX_MASS = 0.01


def _all_at_once_sd(n, rho, n_marginals):
    """Per-cell noise sd when ``n_marginals`` marginals share ``rho`` (sensitivity sqrt(2)/n each)."""
    return math.sqrt(n_marginals / rho) / n


def workload_redundancy(marginals):
    """How many of the workload's marginals hold each pair of columns, on average.

    The mean, over the pairs of columns that some marginal holds, of the
    number of marginals holding the pair: about 2 for 64 random 3-way
    marginals of 14 columns, ``d - 2`` for every 3-way marginal of ``d``
    columns; 0 when no marginal holds two columns. Public: it reads the
    workload's marginals only.

    Examples
    --------
    >>> workload_redundancy([(0, 1, 2), (0, 1, 3)])
    1.2
    >>> workload_redundancy([(0,), (1,)])
    0.0
    """
    counts = {}
    for m in marginals:
        for pair in itertools.combinations(sorted(set(int(a) for a in m)), 2):
            counts[pair] = counts.get(pair, 0) + 1
    return float(np.mean(list(counts.values()))) if counts else 0.0


def adaptive_default_rounds(n, rho, n_marginals, n_columns=None, redundancy=0.0, *,
                            selection_share=0.1):
    """Rounds of measurement: 1 (all at once), ``T >= 2`` (adaptive selection) or 0 (1-way only).

    Measuring all ``M`` marginals at once gives every cell Gaussian noise of
    standard deviation ``sigma_all = sqrt(M / rho) / n``. The rule:

    1. **Everything at once** (1) while ``sigma_all`` is at most
       ``ALL_AT_ONCE_NOISE`` (0.018, the noise an adaptive round is planned
       for: every marginal is then measured as precisely as a round would
       measure one) for a workload whose marginals share few pairs of
       columns (``redundancy`` at most ``SPARSE_REDUNDANCY``, 3: a random
       subset of the 3-way marginals), or at most
       ``REDUNDANT_ALL_AT_ONCE_NOISE`` (0.003) when they share many (every
       3-way marginal: the redundancy is ``d - 2``). Measured at once, a
       redundant workload pays for each pair of columns many times over;
       selection pays once for the pairs that carry structure.
    2. Otherwise **adaptive selection** planned for
       ``T = min(floor((1 - selection_share) rho (n SELECTION_NOISE)**2) - d,
       MAX_ROUNDS_PER_COLUMN d)`` rounds after the 1-way marginals of the
       ``d = n_columns`` columns: the number of rounds whose measurements
       would each have noise ``SELECTION_NOISE`` (0.018) a cell, counting the
       1-way marginals as ``d`` of them, capped as AIM caps its rounds at
       ``16 d``. Annealing then spends the budget in fewer, more precise
       rounds where the data allow (:mod:`._selection`).
    3. **The 1-way marginals only** (0) when that leaves fewer than 2 rounds:
       the whole budget cannot measure the 1-way marginals and two more at
       that noise.

    Only public quantities enter: ``n`` (public under replace-one
    neighbours), ``rho``, the number of marginals, of columns and the
    workload's redundancy (:func:`workload_redundancy`). Without
    ``n_columns`` the rule never selects (1 or 0).

    The constants were chosen on the development suite of real tables
    (``../shared/datasets/REAL.md``) and generated tables together (see
    ``docs/algorithms/adaptive.rst`` and ``benchmarks/notes/selection.md``).

    Parameters
    ----------
    n : int
        Number of rows.
    rho : float
        zCDP budget.
    n_marginals : int
        Number of workload marginals ``M``.
    n_columns : int, default=None
        Number of columns ``d``.
    redundancy : float, default=0.0
        :func:`workload_redundancy` of the workload's marginals.
    selection_share : float, default=0.1
        Share of each round's budget spent on the selection.

    Returns
    -------
    rounds : int

    Examples
    --------
    >>> adaptive_default_rounds(48842, 0.000167, 64, 14, 2.1)  # ADULT, 64 marginals, eps 0.1
    1
    >>> adaptive_default_rounds(48842, 0.0143, 455, 15, 13.0)  # raw Adult, every 3-way, eps 1
    225
    >>> adaptive_default_rounds(3000, 0.000256, 165, 11, 9.0)  # 3,000 rows, eps 0.1
    0
    """
    limit = ALL_AT_ONCE_NOISE if redundancy <= SPARSE_REDUNDANCY else REDUNDANT_ALL_AT_ONCE_NOISE
    if _all_at_once_sd(n, rho, n_marginals) <= limit:
        return 1
    if n_columns is None:
        return 0
    units = math.floor((1.0 - selection_share) * rho * (n * SELECTION_NOISE) ** 2)
    rounds = min(units - int(n_columns), MAX_ROUNDS_PER_COLUMN * int(n_columns))
    return int(rounds) if rounds >= 2 else 0


def adaptive_default_representation(n, rho, n_marginals, rounds, products_noise=0.005,
                                    n_columns=None, products_columns=None):
    """The representation fitted: graphical model, mixture of products or weighted records.

    With adaptive selection (``rounds >= 2``) it is the graphical model
    (:class:`~sklearn_privsyn.adaptive.GraphicalModel`): a few marginals are
    measured, and the maximum-entropy model over them infers the others
    (on the development suite it had lower mean error and TVD than records
    or products after the same selection; ``benchmarks/notes/selection.md``).
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

    The table's width enters too: a mixture of a few products is a
    latent-class model, one pattern of dependence a component, and on wide
    tables with many dependent column pairs it cannot hold them all. With
    more than ``products_columns`` columns (``PRODUCTS_COLUMNS``, 32) the
    records are used where everything is measured at once: on a
    Bayesian-network table on the 80-column ACS schema (50,000 rows, 4,096
    marginals measured at once at ``sigma_all = 0.0107``) the products missed
    cells of small, precisely measured marginals by up to 0.17, three times
    the noise floor (32 components: 0.14), where the records ended at 0.083
    (``benchmarks/notes/wide.md``). ``n_columns=None`` leaves width out.

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
    n_columns : int, default=None
        Number of columns of the table (None: width is not considered).
    products_columns : int, default=None
        Largest number of columns at which products are used
        (None: ``PRODUCTS_COLUMNS``).

    Returns
    -------
    representation : {"records", "products", "graphical"}

    Examples
    --------
    >>> adaptive_default_representation(48842, 0.000167, 64, 1)
    'products'
    >>> adaptive_default_representation(48842, 0.0143, 64, 1)
    'records'
    >>> adaptive_default_representation(7000, 0.000221, 64, 3)
    'graphical'
    >>> adaptive_default_representation(48842, 0.000167, 64, 1, n_columns=80)
    'records'
    """
    if rounds >= 2:
        return "graphical"
    if rounds == 0:
        return "products"
    limit = PRODUCTS_COLUMNS if products_columns is None else products_columns
    narrow = n_columns is None or n_columns <= limit
    if rounds == 1 and narrow and _all_at_once_sd(n, rho, n_marginals) >= products_noise:
        return "products"
    return "records"


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
      few more usefully, this wins.

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
        its objective.
    time_limit : float, default=None
        Seconds for the final projection; the best mixture so far is kept.
    zero_test : float, "auto" or None, default="auto"
        A noisy answer below ``zero_test`` noise standard deviations (a
        one-sided test that the cell is not empty) counts as zero. Records:
        after the final projection they are re-weighted against the answers
        with those set to zero. Graphical model: such cells of measured
        marginals of two or more columns are fixed at zero (never sampled)
        where ``zero_test`` sd is at most 0.01 (a wrongly zeroed real cell
        then holds little). Products: the fit continues against the zeroed
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
            adaptive_default_representation(n, self.synthesis_rho_, M, self.n_rounds_,
                                            n_columns=workload.layout_.n_attributes)
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
        try:
            if rounds == 1:
                # PRIVATE: every workload answer, read only by the Gaussian mechanism below.
                true_answers = data.answers()
                sensitivity = math.sqrt(2.0 * M) / n
                sigma = gaussian_sigma(sensitivity, self.synthesis_rho_ * (1.0 - _BUDGET_MARGIN))
                self.ledger_.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
                noisy = gaussian_mechanism(true_answers, sensitivity, sigma, noise_rng)
                true_answers = None  # one vector of every cell less from here on
                self.measured_marginals_ = list(workload.marginal_set_.marginals)
                self.measurements_ = noisy
                # one variance for every cell: a read-only view, not a vector of them
                self.measurement_variances_ = np.broadcast_to(sigma**2, len(noisy))
                projection = self._new_projection(noisy, sigma**2, (), session, project_rng)
                result = self._run_projection(projection, final=True)
            elif rounds == 0:
                result = self._one_way_only(data, noise_rng, session, project_rng)
            else:
                result = self._select(data, rounds, noise_rng, session, project_rng)
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

    def _select(self, data, rounds, rng, session, project_rng):
        """Adaptive selection (:mod:`._selection`): 1-way marginals, then ``rounds`` planned rounds."""
        workload = self.workload_
        layout = workload.layout_
        n, d = data.n_rows, layout.n_attributes
        candidates = candidate_marginals(workload.marginal_set_.marginals, layout.block_sizes)
        # PRIVATE: the true answers of every candidate, read only by the mechanisms
        # inside measure_adaptively; the model below never sees them.
        truth = data.answers(candidates.marginals)
        if self.representation_ == "graphical":
            model = _GraphicalFit(layout.block_sizes, candidates, self.max_iter)
        else:
            model = _ProjectionFit(self, candidates, session, project_rng)
        measurements, chosen = measure_adaptively(
            truth, candidates, n, self.synthesis_rho_, self.ledger_, rng, model,
            n_rounds=d + rounds,
            selection_share=self.selection_share, margin=_BUDGET_MARGIN)
        del truth
        self.measured_marginals_ = [candidates.marginals[m] for m, _ in chosen]
        self.marginal_measurements_ = {candidates.marginals[m]: (np.asarray(y), float(v))
                                       for m, (y, v) in measurements.items()}
        self.n_selection_rounds_ = len(chosen)
        return model.finish(self)

    def _one_way_only(self, data, rng, session, project_rng):
        """The whole budget on the 1-way marginals of every column (sensitivity ``sqrt(2 d) / n``).

        Returns the final fit's result.
        """
        workload = self.workload_
        n = data.n_rows
        sizes = np.asarray(workload.layout_.block_sizes)
        Q = workload.n_queries_
        # PRIVATE: the true 1-way answers, read only by the Gaussian mechanism below.
        one_way_true = data.answers([(a,) for a in range(len(sizes))])
        sensitivity = math.sqrt(2.0 * len(sizes)) / n
        sigma = gaussian_sigma(sensitivity, self.synthesis_rho_ * (1.0 - _BUDGET_MARGIN))
        self.ledger_.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
        noisy = gaussian_mechanism(one_way_true, sensitivity, sigma, rng)
        self.measurements_ = np.full(Q, np.nan)
        self.measurement_variances_ = np.full(Q, np.inf)
        self.one_way_measurements_ = noisy
        self.measured_marginals_ = []
        one_way = [(a,) for a in range(len(sizes))]
        if self.representation_ == "graphical":  # the independence model, by mirror descent
            model = _GraphicalFit(sizes, candidate_marginals(one_way, sizes), self.max_iter)
            start = np.concatenate([[0], np.cumsum(sizes)])
            model.refit({a: (noisy[start[a]:start[a + 1]], sigma**2) for a in range(len(sizes))})
            return model.finish(self)
        projection = self._new_projection(
            np.concatenate([np.zeros(Q), noisy]),
            np.concatenate([np.full(Q, np.inf), np.full(len(noisy), sigma**2)]),
            one_way, session, project_rng)
        return self._run_projection(projection, final=True)

    @property
    def rounds_(self):
        """Deprecated alias of ``n_rounds_``, the name every synthesizer uses."""
        n_rounds = self.n_rounds_
        warnings.warn("AdaptiveProjection.rounds_ is deprecated and will be removed; use "
                      "n_rounds_", FutureWarning, stacklevel=2)
        return n_rounds

    def _zero_test(self):
        if self.zero_test == "auto":
            if self.representation_ == "graphical":
                return _GRAPHICAL_ZERO_TEST
            return _ZERO_TEST if self.n_rounds_ == 1 and self.representation_ == "records" else None
        return self.zero_test

    def _new_projection(self, noisy, variances, extra, session, rng):
        if self.representation_ == "products":
            n_components = 1 if self.n_rounds_ == 0 else self.n_components
            return ProductMixture(self.workload_, noisy, variances, n_components=n_components,
                                  extra_marginals=extra, random_state=rng)
        return Projection(self.workload_, noisy, variances, extra_marginals=extra,
                          session=session, random_state=rng)

    def _inner_qp_iter(self):
        """Re-weighting steps per Frank-Wolfe iteration of the records: all 300 on
        small workloads, 30 (then a final 300) from ``_WIDE_MARGINALS`` marginals on,
        where each step costs ``n_records * n_marginals``."""
        return _WIDE_INNER_QP_ITER if len(self.workload_.marginals_) >= _WIDE_MARGINALS else None

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
                                  inner_qp_iter=self._inner_qp_iter(),
                                  progress=None if bar is None else _reporter(bar))
        finally:
            if bar is not None:
                bar.close()

    def _sample_codes(self, n_samples, rng):
        if self.representation_ == "graphical":
            return self.graphical_model_.sample(n_samples, rng)
        if self.representation_ == "products":
            return sample_product_mixture(self.component_weights_, self.component_tables_,
                                          n_samples, rng)
        return super()._sample_codes(n_samples, rng)

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


def structural_zeros(noisy, sd, z, max_mass=_ZERO_MAX_MASS):
    """Cells of a measured marginal that the graphical model fixes at zero.

    A cell whose noisy answer is below ``z`` noise sd cannot be told from
    an empty cell by a one-sided test at that level. It is fixed at zero
    (no synthetic row will hold it) only where ``z`` sd is at most
    ``max_mass``: a real cell wrongly zeroed then holds little mass, while
    at a thin budget, where small real cells are below ``z`` sd too, the
    fit keeps them. Reads only noisy answers and their public sd.

    Examples
    --------
    >>> import numpy as np
    >>> structural_zeros(np.array([0.5, 0.001, 0.499]), 0.001, 2.0).tolist()
    [False, True, False]
    >>> structural_zeros(np.array([0.5, 0.001, 0.499]), 0.01, 2.0).tolist()
    [False, False, False]
    """
    noisy = np.asarray(noisy, dtype=float)
    sd = np.broadcast_to(np.asarray(sd, dtype=float), noisy.shape)
    return (noisy < z * sd) & (z * sd <= max_mass)


@dataclasses.dataclass(frozen=True)
class _GraphicalResult:
    model: GraphicalModel
    objective: float
    n_iter: int
    stop_reason: str


class _GraphicalFit:
    """The graphical model as adaptive selection's representation (post-processing only).

    ``refit`` fits it to every measurement so far (warm-started);
    ``admissible`` lets a round take a marginal only while the junction
    tree with it stays below ``GRAPHICAL_MAX_CELLS`` times the share of the
    budget spent (small models first, as AIM does); ``finish`` marks the
    structural zeros (``zero_test``) and runs the final fit.
    """

    def __init__(self, sizes, candidates, max_iter):
        self.sizes = [int(s) for s in sizes]
        self.candidates = candidates
        self.max_iter = int(max_iter)
        self.model = None
        self.measurements = {}

    def _targets(self):
        where = {tuple(sorted(self.candidates.marginals[i])): i for i in self.measurements}
        targets, precisions = [], []
        for m in self.model.marginals:
            i = where[m]
            noisy, variance = self.measurements[i]
            own = self.candidates.marginals[i]
            table = np.asarray(noisy).reshape([self.sizes[a] for a in own])
            table = np.transpose(table, np.argsort(own))  # to the model's sorted order
            targets.append(table)
            precisions.append(np.full(table.shape, 1.0 / variance))
        return targets, precisions

    def refit(self, measurements, max_iter=None):
        self.measurements = measurements
        marginals = [self.candidates.marginals[i] for i in measurements]
        if self.model is None:
            self.model = GraphicalModel(self.sizes, marginals)
        else:
            for m in marginals:
                self.model.add_marginal(m)
        targets, precisions = self._targets()
        self.model.fit(targets, precisions, max_iter=max_iter or self.max_iter)

    def answers(self, indices):
        return self.model.answers([self.candidates.marginals[i] for i in indices])

    def admissible(self, candidates, progress):
        limit = GRAPHICAL_MAX_CELLS * progress
        cliques = [set(c) for c in self.model.cliques]
        allowed = np.zeros(len(candidates.marginals), dtype=bool)
        for i, m in enumerate(candidates.marginals):
            allowed[i] = (any(set(m) <= c for c in cliques)
                          or junction_tree_size(self.sizes, self.model.marginals + [m]) <= limit)
        return allowed

    def finish(self, est):
        if est.zero_test_ is not None:
            targets, precisions = self._targets()
            for m, y, w in zip(self.model.marginals, targets, precisions):
                if len(m) < 2:  # a 1-way zero would remove a value, not a combination
                    continue
                zeros = structural_zeros(y, 1.0 / np.sqrt(w), est.zero_test_)
                if zeros.any() and not zeros.all():
                    self.model.set_zeros(m, zeros)
        targets, precisions = self._targets()
        try:
            self.model.fit(targets, precisions, max_iter=_GRAPHICAL_ITER_FACTOR * self.max_iter)
        except FloatingPointError:  # the zeros leave no possible row: fit without them
            self.model.clear_zeros()
            self.model.fit(targets, precisions, max_iter=_GRAPHICAL_ITER_FACTOR * self.max_iter)
        return _GraphicalResult(self.model, self.model.objective_, self.model.n_iter_,
                                "max_iter" if self.model.n_iter_ >= _GRAPHICAL_ITER_FACTOR
                                * self.max_iter else "converged")


class _ProjectionFit:
    """Weighted records or a mixture of products as adaptive selection's representation.

    The projection indexes the workload's cells followed by those of every
    candidate that is not a workload marginal; a candidate not measured yet
    has infinite variance (it does not count).
    """

    def __init__(self, est, candidates, session, rng):
        workload = est.workload_
        self.est = est
        own = {tuple(sorted(m)): j for j, m in enumerate(workload.marginal_set_.marginals)}
        extra = [m for m in candidates.marginals if tuple(sorted(m)) not in own]
        offsets = workload.marginal_offsets_
        Q = int(offsets[-1])
        cells = {tuple(sorted(m)): (int(offsets[j]), int(offsets[j + 1]))
                 for m, j in own.items()}
        start = Q
        for m in extra:
            size = math.prod(int(workload.layout_.block_sizes[a]) for a in m)
            cells[tuple(sorted(m))] = (start, start + size)
            start += size
        self.slices = [slice(*cells[tuple(sorted(m))]) for m in candidates.marginals]
        self.n_cells = start
        self.extra = extra
        self.session, self.rng = session, rng
        self.projection = None

    def _targets(self, measurements):
        noisy = np.zeros(self.n_cells)
        variances = np.full(self.n_cells, np.inf)
        for i, (y, v) in measurements.items():
            noisy[self.slices[i]] = y
            variances[self.slices[i]] = v
        return noisy, variances

    def refit(self, measurements):
        noisy, variances = self._targets(measurements)
        if self.projection is None:
            self.projection = self.est._new_projection(noisy, variances, self.extra,
                                                       self.session, self.rng)
        else:
            self.projection.update_targets(noisy, variances)
        self.est._run_projection(self.projection, final=False)

    def answers(self, indices):
        answers = self.projection.answers()
        return np.concatenate([answers[self.slices[i]] for i in indices])

    def admissible(self, candidates, progress):
        return np.ones(len(candidates.marginals), dtype=bool)

    def finish(self, est):
        return est._run_projection(self.projection, final=True)


def _reporter(bar):
    """A projection progress callback that advances ``bar`` and shows the objective (and gap)."""

    def update(iteration, value, gap=None):
        bar.update(1)
        if gap is None:
            bar.set_postfix(objective=f"{value:.4g}")
        else:
            bar.set_postfix(objective=f"{value:.4g}", gap=f"{gap:.3g}")

    return update

