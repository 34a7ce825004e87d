"""DualQuery and DQRS: multiplicative weights over queries against a best-responding oracle.

The *dual* framework of the query release game (Gaboardi, Arias, Hsu, Roth and
Wu, "Dual Query: Practical Private Query Release for High Dimensional Data",
ICML 2014; Vietri, Tian, Bun, Steinke and Wu, "New Oracle-Efficient Algorithms
for Private Synthetic Data Release", ICML 2020, Section 5 and Algorithm 4).

The *query player* runs multiplicative weights (MW) over the workload's query
class with negations (``2 Q`` queries). Its distribution in round ``t`` is

.. math::

    \\mathcal{Q}^t(q) \\propto \\exp\\Big(\\eta \\sum_{i < t} \\big(q(D) - q(x^i)\\big)\\Big),

an exponential mechanism whose score ``sum_{i<t} (q(D) - q(x^i))`` has
sensitivity ``(t - 1) / n``: one draw has parameter
``epsilon_t = 2 eta (t - 1) / n``, is ``epsilon_t``-bounded-range and costs
``epsilon_t**2 / 8`` zCDP (:func:`~sklearn_privsyn.privacy.exponential_mechanism_rho`).
Round 1 is uniform and free. The *data player* best-responds to the ``s``
sampled queries with one oracle call (the record satisfying the most of them,
counted with multiplicity); it never sees the data, so it is post-processing.
The output is the ``T`` best responses with equal weights.

The authors' DualQuery code composed its per-draw epsilons with an
advanced-composition term half the standard one; here everything is accounted in
zCDP through :class:`~sklearn_privsyn.privacy.PrivacyLedger`, which stops the
rounds before the budget would be exceeded.
"""

import math
from numbers import Real

import numpy as np

from ._dualquery_base import (
    BaseDualQuery,
    default_learning_rate,
    dualquery_rounds,
    mw_draw_args,
    mw_draw_epsilon,
    rejection_resample,
)
from ._sklearn_private import Interval, StrOptions
from .privacy import (
    acceptance_probabilities,
    exponential_mechanism_draws,
    exponential_mechanism_rho,
    rejection_step_rho,
)

__all__ = [
    "DQRS",
    "DualQuery",
    "acceptance_probabilities",
    "default_learning_rate",
    "dualquery_rounds",
    "mw_draw_epsilon",
    "rejection_resample",
    "rejection_step_rho",
]


class DualQuery(BaseDualQuery):
    """DualQuery: multiplicative weights over queries, the oracle best-responds.

    Gaboardi et al. (ICML 2014), as described in Vietri et al. (ICML 2020).
    Each round draws ``samples_per_round`` queries from the query player's MW
    distribution over the ``2 Q`` queries (cells and their negations) and
    solves one oracle problem: maximise the number of sampled queries (with
    multiplicity) a record satisfies, plus a linear tie-breaking term whose
    total is below 1, so an optimal record of the perturbed problem is optimal
    for the unperturbed one. The term (``tie_break``) is built from released
    samples only: by default it steers the attributes that no sampled query
    fixes towards values that recently sampled queries asked for.

    **Privacy.** A draw in round ``t`` is an exponential mechanism with
    ``epsilon_t = 2 eta (t - 1) / n`` (:func:`mw_draw_epsilon`), charged
    ``epsilon_t**2 / 8`` zCDP (bounded range); round 1 is uniform and free.
    ``T`` rounds cost ``s eta**2 / (2 n**2) * sum_{t<=T} (t-1)**2``. Rounds
    stop before the next would overspend, so the ledger never exceeds the
    budget.

    **Defaults.** ``learning_rate=None`` uses :func:`default_learning_rate`,
    which balances MW's regret against the budget; ``rounds=None`` runs as
    many rounds as the budget buys (:func:`dualquery_rounds`). Given
    ``rounds`` instead, ``eta`` is the largest rate for which that many rounds
    fit. ``samples_per_round=3`` was chosen on generated data (see
    ``benchmarks/bench_dualquery.py``), not on the data sets we report.

    Parameters
    ----------
    epsilon : float, default=1.0
        Target epsilon of (epsilon, delta)-DP; never exceeded.
    delta : float, default=None
        Target delta; ``None`` means ``1 / n**2``.
    workload : QueryWorkload, default=None
        The queries to answer; cloned. ``None`` means all 3-way marginals.
    learning_rate : float, default=None
        MW learning rate ``eta``; ``None`` derives it (see above).
    samples_per_round : int, default=3
        Queries ``s`` drawn from the MW distribution each round.
    rounds : int, default=None
        Number of rounds ``T``; ``None`` spends the budget. At most one of
        ``rounds`` and ``learning_rate`` may be given.
    solver : {"highs", "pulp", "heuristic", "hybrid", "brute"} or oracle, default="highs"
        The optimisation oracle; privacy does not depend on it.
    tie_break : {"history", "uniform"}, default="history"
        How the oracle chooses among records that satisfy equally many sampled
        queries (the attributes no sampled query fixes). ``"uniform"``: at
        random, as in the original algorithm. ``"history"``: prefer a target
        record whose values are drawn in proportion to how often the positive
        queries sampled in recent rounds asked for them (decay 0.8 a round).
        Both are post-processing of released samples and cost no privacy; the
        record is a best response either way.
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
        Controls every random draw.
    verbose : int, default=0
        Show a progress bar over rounds.

    Attributes
    ----------
    learning_rate_ : float
        The ``eta`` used.
    n_rounds_ : int
        Rounds run (= number of synthetic records).
    records_, weights_, ledger_, epsilon_, rho_, delta_, workload_, solver_stats_
        See :class:`~sklearn_privsyn._base.BaseSynthesizer`.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn import DualQuery, QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1, 1, 0] * 50, "b": [1, 1, 0, 0] * 50})
    >>> workload = QueryWorkload(domain={"a": 2, "b": 2}, k=2)
    >>> dq = DualQuery(epsilon=1.0, workload=workload, solver="brute",
    ...                random_state=0).fit(X)
    >>> dq.epsilon_ <= 1.0
    True
    >>> dq.sample(3).shape
    (3, 2)
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        workload=None,
        learning_rate=None,
        samples_per_round=3,
        rounds=None,
        solver="highs",
        tie_break="history",
        conversion="cks",
        number_share="auto",
        random_state=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.learning_rate = learning_rate
        self.samples_per_round = samples_per_round
        self.rounds = rounds
        self.solver = solver
        self.tie_break = tie_break
        self.conversion = conversion
        self.number_share = number_share
        self.random_state = random_state
        self.verbose = verbose

    def _schedule(self, n, n_candidates):
        s = self.samples_per_round
        if self.rounds is not None and self.learning_rate is not None:
            raise ValueError(
                f"give at most one of rounds={self.rounds} and "
                f"learning_rate={self.learning_rate}"
            )
        if self.rounds is not None:
            T = int(self.rounds)
            total = sum((t - 1) ** 2 for t in range(1, T + 1))
            if total == 0:
                return 1.0, 1
            # largest eta with s eta^2 / (2 n^2) * total <= rho
            eta = n * math.sqrt(2.0 * self.synthesis_rho_ / (s * total)) * (1 - 1e-9)
            return eta, T
        eta = self._learning_rate(n, n_candidates)
        return eta, dualquery_rounds(self.synthesis_rho_, eta, s, n)

    def _start_fit(self):
        pass

    def _next_sample(self, t, sample, gains, cumulative, eta, n, rng):
        s = self.samples_per_round
        rho = exponential_mechanism_rho(mw_draw_epsilon(eta, t, n))
        if not self.ledger_.can_afford(rho, s):
            return None
        self.ledger_.charge("exponential_mechanism", rho, s)
        return exponential_mechanism_draws(*mw_draw_args(cumulative, eta, t, n), s, rng)


class DQRS(BaseDualQuery):
    """DQRS: DualQuery with rejection sampling (Vietri et al. 2020, Algorithm 4).

    As :class:`DualQuery`, but round ``t + 1``'s sample is built from round
    ``t``'s by rejection sampling instead of ``s`` fresh draws: each reused
    query ``q`` is kept with probability
    ``Qhat^{t+1}_q / Q^t_q = exp(eta (g - 1) - gamma_t)``, ``g = q(D) - q(x^t)``
    (:func:`acceptance_probabilities`, at most ``exp(-gamma_t) < 1``), and each
    rejected query is replaced by one fresh draw from ``Q^{t+1}``. A kept query
    is distributed as ``Q^{t+1}`` (Lemma Rejection Sampling Accuracy with
    ``M = 1 / Z``), so the new sample is again ``s`` i.i.d. draws from
    ``Q^{t+1}``. The paper instead always draws ``(2 gamma_t + 4 eta) s``
    fresh queries and discards extras at random (with a small failure
    probability when there are too few); drawing exactly the shortfall needs
    no failure event and, in expectation, fewer paid draws.

    **Privacy derivation.** Round ``t + 1`` runs, in this order,

    * ``s`` accept/reject steps, each a two-outcome mechanism whose privacy
      cost is :func:`rejection_step_rho` (``accounting="bounded_range"``:
      ``w**2 / 8`` with ``w = eta/n + log(1 - e^{-gamma-eta/n}) -
      log(1 - e^{-gamma})``; ``"pure"``: the paper's Lemma, ``epsilon =
      max(eta/n, eta/(gamma n))`` charged ``epsilon**2 / 2``), recorded as
      ledger entries ``"rejection_sampling"``;
    * one exponential-mechanism draw per rejection, ``epsilon = 2 eta t / n``
      (Lemma bad-samples) charged ``epsilon**2 / 8``, recorded as
      ``"exponential_mechanism"``.

    Both costs are functions of public quantities (``eta``, ``gamma_t``, ``t``,
    ``n``). The number of fresh draws depends on the accept/reject outcomes,
    which are themselves accounted DP outputs. Every charge is checked
    against the ledger before the mechanism runs: a round starts only if its
    accept/reject steps and one fresh draw fit, and in the last round only
    the affordable number of rejections is replaced (the sample is then
    shorter, still i.i.d.), so the realised total never exceeds the budget.
    Adaptively chosen zCDP costs under a fixed cap compose to the cap (a
    Renyi privacy filter, Feldman and Zrnic 2021, applied at every order).

    **gamma.** ``gamma="auto"`` (default) picks ``gamma_t`` each round to
    minimise the estimated per-sample cost
    ``rho_rs(gamma) + (1 - exp(-gamma - eta)) rho_fresh(t)`` (the rejection
    rate estimated at gain 0), and draws all ``s`` queries fresh (no
    accept/reject step, DualQuery's round) when that is cheaper, as it is in
    the first rounds. The choice uses public quantities only. A float ``c``
    gives the paper's schedule ``gamma_t = c t**(-2/3)`` (paper: ``c = 0.5``)
    with rejection sampling in every round after the first.

    Note the paper's accuracy lemma treats the reused sample as independent of
    the update; in the algorithm the update uses ``x^t``, which depends on the
    sample, so the resampled set is exactly ``Q^{t+1}``-distributed only
    marginally. This affects accuracy only, never privacy (the privacy proof
    conditions on every released value).

    Parameters
    ----------
    epsilon, delta, workload, learning_rate, samples_per_round
        As in :class:`DualQuery`. ``learning_rate=None`` uses DualQuery's rule.
    solver, tie_break, conversion, random_state, verbose
        As in :class:`DualQuery`.
    rounds : int, default=None
        Maximum number of rounds; ``None`` runs until the budget is spent.
    gamma : "auto" or float, default="auto"
        Rejection parameter schedule (see above).
    rejection_accounting : {"bounded_range", "pure"}, default="bounded_range"
        How an accept/reject step is charged (see :func:`rejection_step_rho`).

    Attributes
    ----------
    learning_rate_ : float
    n_rounds_ : int
    n_fresh_ : ndarray of int, shape (n_rounds_ - 1,)
        Fresh exponential-mechanism draws in rounds 2, 3, ...
    gamma_ : ndarray of float, shape (n_rounds_ - 1,)
        ``gamma`` of each round (``inf`` for an all-fresh round).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn import DQRS, QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1, 1, 0] * 50, "b": [1, 1, 0, 0] * 50})
    >>> workload = QueryWorkload(domain={"a": 2, "b": 2}, k=2)
    >>> dqrs = DQRS(epsilon=1.0, workload=workload, solver="brute",
    ...             random_state=0).fit(X)
    >>> dqrs.ledger_.rho_spent <= dqrs.rho_
    True
    >>> dqrs.sample(3).shape
    (3, 2)
    """

    _parameter_constraints: dict = {
        **BaseDualQuery._parameter_constraints,
        "gamma": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "rejection_accounting": [StrOptions({"bounded_range", "pure"})],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        workload=None,
        learning_rate=None,
        samples_per_round=3,
        rounds=None,
        gamma="auto",
        rejection_accounting="bounded_range",
        solver="highs",
        tie_break="history",
        conversion="cks",
        number_share="auto",
        random_state=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.learning_rate = learning_rate
        self.samples_per_round = samples_per_round
        self.rounds = rounds
        self.gamma = gamma
        self.rejection_accounting = rejection_accounting
        self.solver = solver
        self.tie_break = tie_break
        self.conversion = conversion
        self.number_share = number_share
        self.random_state = random_state
        self.verbose = verbose

    _GAMMA_GRID = np.geomspace(1e-4, 20.0, 400)

    def _schedule(self, n, n_candidates):
        return self._learning_rate(n, n_candidates), self.rounds

    def _start_fit(self):
        self._fresh = []
        self._gammas = []

    def _round_plan(self, t, eta, n):
        """(gamma, rho per step, rho per fresh draw) for building round ``t``'s sample.

        ``gamma`` is ``inf`` for an all-fresh round. Public quantities only.
        """
        rho_fresh = exponential_mechanism_rho(mw_draw_epsilon(eta, t, n))
        if self.gamma != "auto":
            gamma = float(self.gamma) * (t - 1) ** (-2.0 / 3.0)  # paper's gamma_{t-1}
            return gamma, rejection_step_rho(eta, gamma, n, self.rejection_accounting), rho_fresh
        grid = self._GAMMA_GRID
        rho_rs = np.array([rejection_step_rho(eta, g, n, self.rejection_accounting) for g in grid])
        cost = rho_rs + (-np.expm1(-grid - eta)) * rho_fresh
        i = int(np.argmin(cost))
        if cost[i] >= rho_fresh:
            return math.inf, 0.0, rho_fresh
        return float(grid[i]), float(rho_rs[i]), rho_fresh

    def _next_sample(self, t, sample, gains, cumulative, eta, n, rng):
        gamma, rho_rs, rho_fresh = self._round_plan(t, eta, n)
        m = len(sample)
        # A round needs its accept/reject steps and at least one fresh draw.
        if not self.ledger_.can_afford(m * rho_rs + rho_fresh):
            return None
        draw_args = mw_draw_args(cumulative, eta, t, n)

        def draw_fresh(n_rejected):
            # Replace every rejection while the budget lasts (all of them unless
            # this is the last round); a short sample is still i.i.d. from Q^{t}.
            n_fresh = min(n_rejected, self._affordable(rho_fresh, n_rejected))
            if n_fresh:
                self.ledger_.charge("exponential_mechanism", rho_fresh, n_fresh)
            self._fresh.append(n_fresh)
            return exponential_mechanism_draws(*draw_args, n_fresh, rng)

        if math.isinf(gamma):
            new = draw_fresh(m)
        else:
            self.ledger_.charge("rejection_sampling", rho_rs, m)
            new, _ = rejection_resample(
                sample, np.concatenate([gains, -gains]), eta, gamma, rng, draw_fresh
            )
        if len(new) == 0:
            self._fresh.pop()
            return None
        self._gammas.append(gamma)
        return new

    def _affordable(self, rho, limit):
        """Largest ``k <= limit`` with ``k`` charges of ``rho`` affordable."""
        if limit == 0 or rho == 0:
            return limit
        k = min(limit, int(self.ledger_.rho_remaining / rho) + 1)
        while k > 0 and not self.ledger_.can_afford(rho, k):
            k -= 1
        return k

    def _fit_records(self, data, rng):
        out = super()._fit_records(data, rng)
        self.n_fresh_ = np.array(self._fresh, dtype=np.intp)
        self.gamma_ = np.array(self._gammas, dtype=float)
        del self._fresh, self._gammas
        return out
