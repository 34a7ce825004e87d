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
import time
from numbers import Integral, Real

import numpy as np

from ._base import SOLVER_CONSTRAINT, BaseSynthesizer
from ._sklearn_private import Interval, StrOptions
from .privacy import compose, exponential_mechanism_rho
from .solvers import OracleProblem, SolverStats

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


# ---------------------------------------------------------------------------
# Privacy costs (public functions of public parameters only)
# ---------------------------------------------------------------------------


def mw_draw_epsilon(learning_rate, t, n):
    """Exponential-mechanism parameter of one draw from the MW distribution of round ``t``.

    ``Q^t`` is the exponential mechanism with score ``sum_{i<t} (q(D) - q(x^i))``
    (sensitivity ``(t - 1) / n``) and ``epsilon / (2 Delta) = eta``, so
    ``epsilon_t = 2 eta (t - 1) / n``; round 1 (uniform) gives 0.

    Examples
    --------
    >>> mw_draw_epsilon(0.5, 3, 100)
    0.02
    """
    return 2.0 * learning_rate * (t - 1) / n


def _dualquery_cost(learning_rate, samples_per_round, n, rounds):
    """zCDP the ledger charges for ``rounds`` DualQuery rounds, summed as it sums them."""
    return compose(
        (exponential_mechanism_rho(mw_draw_epsilon(learning_rate, t, n)), samples_per_round)
        for t in range(2, rounds + 1)
    )


def dualquery_rounds(rho, learning_rate, samples_per_round, n):
    """Largest number of DualQuery rounds whose draws fit in ``rho`` zCDP.

    Round ``t`` costs ``s * (2 eta (t-1) / n)**2 / 8``, so ``T`` rounds cost
    ``s eta**2 / (2 n**2) * sum_{t=1}^{T} (t-1)**2``. The closed form gives a
    first guess; the answer is then checked with the per-round costs summed
    exactly as the ledger sums them, so the ``T`` rounds are never refused.

    Examples
    --------
    >>> dualquery_rounds(0.01, 0.1, 10, 1000)
    84
    """
    per = samples_per_round * learning_rate**2 / (2.0 * n * n)
    if per <= 0:
        raise ValueError("learning_rate must be > 0")
    # sum_{t=1}^T (t-1)^2 = (T-1) T (2T-1) / 6 <= rho / per; start from the cube root.
    limit = rho / per
    T = max(1, int((3.0 * limit) ** (1.0 / 3.0)) + 2)
    while T > 1 and (T - 1) * T * (2 * T - 1) / 6.0 > limit:
        T -= 1
    while T * (T + 1) * (2 * T + 1) / 6.0 <= limit:
        T += 1
    # the closed form and the ledger's sum round differently: settle on the ledger's
    while T > 1 and _dualquery_cost(learning_rate, samples_per_round, n, T) > rho:
        T -= 1
    while _dualquery_cost(learning_rate, samples_per_round, n, T + 1) <= rho:
        T += 1
    return T


def default_learning_rate(rho, n, n_candidates, samples_per_round, scale=8.0):
    """The default MW learning rate ``eta``, from the regret trade-off.

    MW over ``m = 2 Q`` queries with gains in ``[-1, 1]`` has average regret
    about ``ln(m) / (eta T) + eta``; with DualQuery's cost
    ``s eta**2 T**3 / (6 n**2) = rho`` the budget buys
    ``T = (6 n**2 rho / (s eta**2))**(1/3)`` rounds. Balancing the two regret
    terms (``eta**2 T = ln m``) gives ``T = sqrt(6 n**2 rho / (s ln m))`` and

    ``eta = ln(m)**(3/4) * (s / (6 n**2 rho))**(1/4)``,

    times ``scale``, capped at 2. The regret bound is worst case; on generated
    data (``python benchmarks/bench_dualquery.py tune``: n = 50,000, 64
    3-way marginals, eps 0.1 and 1) the max error kept falling up to
    ``scale = 8`` with ``s = 3``, the default. Rechecked with
    ``tie_break="history"`` on three generated tables (``--tables mixture
    latent-class dominant-1``): ``s = 3`` and ``scale = 8`` stay within about
    10% of the best cell of the grid at both budgets (``s = 1`` is better at
    eps 0.1 on two tables, ``s = 10`` at eps 1). The rule was not tuned on
    ADULT.

    Examples
    --------
    >>> round(default_learning_rate(0.0147, 48842, 917992, 3), 4)
    0.6235
    """
    log_m = math.log(n_candidates)
    eta = scale * log_m**0.75 * (samples_per_round / (6.0 * n * n * rho)) ** 0.25
    return float(min(eta, 2.0))


def rejection_step_rho(learning_rate, gamma, n, accounting="bounded_range"):
    """zCDP cost of one DQRS accept/reject step.

    A reused query ``q`` is kept with probability
    ``p = exp(eta (g - 1) - gamma)`` where ``g = q(D) - q(x^t)`` lies in
    ``[-1, 1]`` and moves by at most ``1 / n`` between neighbours, so
    ``log p`` lies in ``[-2 eta - gamma, -gamma]`` and moves by at most
    ``eta / n``.

    ``accounting="pure"`` is the paper's Lemma (Rejection Sampling Privacy):
    the step is ``epsilon``-DP with ``epsilon = max(eta / n, eta / (gamma n))``,
    and ``epsilon``-DP implies ``epsilon**2 / 2`` zCDP (Bun and Steinke 2016).

    ``accounting="bounded_range"`` (default) is tighter and equally rigorous.
    The step has two outcomes whose privacy losses ``log(p/p')`` and
    ``log((1-p)/(1-p'))`` have opposite signs, so the loss lies in an interval
    of width ``|logit(p) - logit(p')|``. As ``d logit(p) / d log p = 1 / (1 - p)``
    increases with ``p``, the width is largest with ``log p`` at the top of its
    range:

    ``w = eta/n + log(1 - exp(-gamma - eta/n)) - log(1 - exp(-gamma))``.

    The step is therefore ``w``-bounded-range and ``w**2 / 8`` zCDP (Cesar and
    Rogers 2021, the lemma that also gives the exponential mechanism's
    ``epsilon**2 / 8``). Since ``w ~ (eta / n) / (1 - exp(-gamma))``, this is
    about a quarter of the pure-DP charge when ``gamma`` is small.

    Examples
    --------
    >>> round(rejection_step_rho(0.1, 0.05, 1000, "pure") * 1e6, 4)
    2.0
    >>> round(rejection_step_rho(0.1, 0.05, 1000) * 1e6, 4)
    0.5245
    """
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0; got {gamma!r}")
    a = learning_rate / n
    if accounting == "pure":
        eps = max(a, learning_rate / (gamma * n))
        return eps * eps / 2.0
    if accounting == "bounded_range":
        width = a + math.log(-math.expm1(-gamma - a)) - math.log(-math.expm1(-gamma))
        return width * width / 8.0
    raise ValueError(
        f"accounting must be 'bounded_range' or 'pure'; got {accounting!r}"
    )


# ---------------------------------------------------------------------------
# Samplers
# ---------------------------------------------------------------------------


def _draw(scores, epsilon, sensitivity, size, rng):
    """``size`` independent exponential-mechanism draws: index ``i`` with probability
    proportional to ``exp(epsilon * scores[i] / (2 sensitivity))``.

    Each draw costs ``exponential_mechanism_rho(epsilon)`` when the scores
    have sensitivity at most ``sensitivity``. Inverse-CDF sampling: the same
    distribution as the Gumbel-max
    :func:`~sklearn_privsyn.privacy.exponential_mechanism`, at
    ``O(m + size log m)`` instead of ``O(m size)``.
    """
    if size == 0:
        return np.empty(0, dtype=np.intp)
    log_weights = np.asarray(scores, dtype=float) * (epsilon / (2.0 * sensitivity))
    p = np.exp(log_weights - log_weights.max())
    cdf = np.cumsum(p)
    u = rng.uniform(0.0, cdf[-1], size=size)
    return np.minimum(np.searchsorted(cdf, u, side="right"), len(p) - 1).astype(np.intp)


def _mw_draw_args(cumulative, learning_rate, t, n):
    """(scores, epsilon, sensitivity) of a draw from round ``t``'s MW distribution.

    The score ``sum_{i<t} (q(D) - q(x^i))`` over the ``2 Q`` queries (a
    negation's is minus its query's) moves by at most ``(t - 1) / n``.
    """
    scores = np.concatenate([cumulative, -cumulative])
    return scores, mw_draw_epsilon(learning_rate, t, n), (t - 1) / n


def acceptance_probabilities(gains, learning_rate, gamma):
    """DQRS keep probabilities ``exp(eta (g - 1) - gamma)`` for gains ``g`` in ``[-1, 1]``.

    They equal ``Qhat^{t+1}_q / Q^t_q`` in the paper's Algorithm 4 and are at
    most ``exp(-gamma) < 1``.

    Examples
    --------
    >>> acceptance_probabilities(np.array([1.0, -1.0]), 0.5, 0.1).round(4).tolist()
    [0.9048, 0.3329]
    """
    gains = np.asarray(gains, dtype=float)
    return np.exp(learning_rate * (gains - 1.0) - gamma)


def _keep(sample, gains, learning_rate, gamma, rng):
    """The accept/reject steps: a boolean mask over ``sample`` (one coin each).

    Each coin costs :func:`rejection_step_rho` when every gain moves by at
    most ``1 / n`` between neighbouring tables.
    """
    p = acceptance_probabilities(np.asarray(gains)[sample], learning_rate, gamma)
    return rng.random(len(sample)) < p


def rejection_resample(sample, gains, learning_rate, gamma, rng, draw_fresh):
    """Turn a sample from ``Q`` into a sample from the MW update ``P`` of ``Q``.

    ``P(q) ∝ Q(q) exp(eta g(q))``. Each element of ``sample`` (i.i.d. from
    ``Q``) is kept with probability ``exp(eta (g - 1) - gamma) = M P(q) / Q(q)``
    for a constant ``M``; conditioned on being kept it is distributed as ``P``
    (the paper's Lemma Rejection Sampling Accuracy). The rejected elements
    are replaced by ``draw_fresh(n_rejected)``, fresh draws from ``P``: with
    all of them the result is ``len(sample)`` i.i.d. draws from ``P``, with no
    failure event; with fewer (DQRS's last round, when the budget runs out)
    it is a shorter i.i.d. sample. This is the one implementation of DQRS's
    rejection step.

    Parameters
    ----------
    sample : ndarray of int
        Candidate indices drawn from ``Q``.
    gains : ndarray of float, shape (m,)
        ``g(q)`` in ``[-1, 1]`` for every candidate.
    learning_rate, gamma : float
    rng : numpy.random.Generator
        Source of the accept/reject coins.
    draw_fresh : callable
        ``draw_fresh(n_rejected)`` returns at most ``n_rejected`` indices
        drawn from ``P`` (and, in DQRS, charges the ledger for them first).

    Returns
    -------
    new_sample : ndarray of int
        Kept elements followed by the fresh draws.
    n_rejected : int
        Number of rejections.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> gains = np.array([0.5, -0.5, 0.0])
    >>> new, n_rejected = rejection_resample(
    ...     np.array([0, 1, 2, 0]), gains, 0.3, 0.1, rng,
    ...     lambda k: rng.choice(3, size=k, p=np.exp(0.3 * gains) / np.exp(0.3 * gains).sum()))
    >>> len(new), 0 <= n_rejected <= 4
    (4, True)
    """
    sample = np.asarray(sample, dtype=np.intp)
    kept = sample[_keep(sample, gains, learning_rate, gamma, rng)]
    n_rejected = int(len(sample) - len(kept))
    fresh = np.asarray(draw_fresh(n_rejected), dtype=np.intp)
    if len(fresh) > n_rejected:
        raise ValueError(
            f"draw_fresh({n_rejected}) returned {len(fresh)} draws, more than asked"
        )
    return np.concatenate([kept, fresh]), n_rejected


# ---------------------------------------------------------------------------
# Tie-breaking among best responses (post-processing of released samples)
# ---------------------------------------------------------------------------


class _SampleHistory:
    """Decayed counts of the one-hot values that recently sampled queries asked for.

    The data player's best response to ``s`` sampled queries fixes at most
    ``s k`` attributes; every other attribute is a free choice. A uniformly
    random choice puts, say, a 100-valued column's dominant value in about 1%
    of the free records. Instead the free values follow the values that the
    positive queries sampled in recent rounds contain: those are the values
    the query player currently finds under-represented, because MW weight
    concentrates on queries with ``q(D) > q(synthetic)``. Only released
    samples are used, so this is post-processing and costs no privacy.

    Parameters
    ----------
    layout : OneHotLayout
    decay : float
        Each round's counts are multiplied by ``decay`` before the new
        sample's are added (a memory of about ``1 / (1 - decay)`` rounds).
    """

    def __init__(self, layout, decay):
        self.layout = layout
        self.decay = decay
        self.counts = np.zeros(layout.n_features)
        sizes = np.asarray(layout.block_sizes, dtype=float)
        self._prior = np.repeat(1.0 / sizes, layout.block_sizes)  # one pseudo-count a column

    def add(self, literals, negated, counts):
        """Add one round's sampled queries (negations carry no wanted value)."""
        self.counts *= self.decay
        positive = ~np.asarray(negated, dtype=bool)
        lit = np.asarray(literals)[positive]
        weight = np.broadcast_to(np.asarray(counts, dtype=float)[positive, None], lit.shape)
        used = lit >= 0
        np.add.at(self.counts, lit[used], weight[used])

    def draw_target(self, rng):
        """One value per attribute, with probability proportional to its count plus prior.

        Gumbel-max within each column. An exact tie of two keys (probability
        zero) would mark both values; harmless, as a record takes one value of
        a column and so collects at most one column's bonus.
        """
        layout = self.layout
        keys = np.log(self.counts + self._prior) + rng.gumbel(size=layout.n_features)
        best = np.maximum.reduceat(keys, layout.starts)
        return keys == best[layout.attribute_of]


# ---------------------------------------------------------------------------
# Estimators
# ---------------------------------------------------------------------------


class _DualSynthesizer(BaseSynthesizer):
    """Shared loop: MW query player (2Q queries), one oracle call per round."""

    _parameter_constraints: dict = {
        **BaseSynthesizer._parameter_constraints,
        "learning_rate": [Interval(Real, 0, None, closed="neither"), None],
        "samples_per_round": [Interval(Integral, 1, None, closed="left")],
        "rounds": [Interval(Integral, 1, None, closed="left"), None],
        "solver": SOLVER_CONSTRAINT,
        "tie_break": [StrOptions({"history", "uniform"})],
    }

    #: Scale of :func:`default_learning_rate` (chosen on generated data).
    _learning_rate_scale = 8.0
    #: Memory of ``tie_break="history"`` (chosen on generated data; 0.7-0.9 gave
    #: the same error there).
    _history_decay = 0.8
    #: Rounds per oracle session (a fresh session drops the previous queries).
    _session_rounds = 50

    def _learning_rate(self, n, n_candidates):
        if self.learning_rate is not None:
            return float(self.learning_rate)
        return default_learning_rate(
            self.rho_, n, n_candidates, self.samples_per_round, self._learning_rate_scale
        )

    def _fit_records(self, records, rng):
        workload = self.workload_
        layout = workload.layout_
        n = records.shape[0]
        n_queries = workload.n_queries_
        s = self.samples_per_round
        eta, max_rounds = self._schedule(n, 2 * n_queries)
        self.learning_rate_ = eta
        self._start_fit()

        # PRIVATE: true answers; used only inside the MW distribution / acceptance
        # probabilities, which are sampled through accounted mechanisms.
        true_answers = workload.answer_codes(records)
        cumulative = np.zeros(n_queries)  # sum_{i<t} (q(D) - q(x^i)) for positive q

        history = (
            _SampleHistory(layout, self._history_decay) if self.tie_break == "history" else None
        )
        sample = rng.integers(2 * n_queries, size=s).astype(np.intp)  # round 1: uniform, free
        session = self._oracle_session(rng)
        total_stats = SolverStats()
        progress = self._progress(max_rounds)
        out = []
        started = time.perf_counter()
        try:
            t = 1
            while True:
                if t % self._session_rounds == 0:
                    # Each round's problem holds only that round's queries; a long-lived
                    # session would keep every query ever seen in its model.
                    total_stats.merge(session.stats)
                    session.close()
                    session = self._oracle_session(rng)
                record = self._best_response(sample, session, layout, rng, history)
                out.append(record)
                if progress is not None:
                    progress.update(1)
                    progress.set_postfix(seconds=f"{time.perf_counter() - started:.0f}")
                if max_rounds is not None and t >= max_rounds:
                    break
                gains = true_answers - workload.answer_codes(record[None, :])
                cumulative += gains
                sample = self._next_sample(t + 1, sample, gains, cumulative, eta, n, rng)
                if sample is None:
                    break
                t += 1
        finally:
            if progress is not None:
                progress.close()
            session.close()
            total_stats.merge(session.stats)
            self.solver_stats_ = total_stats
        self.n_rounds_ = len(out)
        return np.array(out, dtype=np.intp), np.ones(len(out))

    def _best_response(self, sample, session, layout, rng, history):
        """One oracle call: the record satisfying the most sampled queries (post-processing).

        The weights are integer counts, so a linear term whose total stays
        below 1 only breaks ties between equally good records: uniform noise
        (total < 0.5) for ``tie_break="uniform"``; for ``"history"`` a bonus
        (total 0.8) for agreeing with a target record drawn from
        :class:`_SampleHistory`, plus noise (total < 0.1) among the rest.
        """
        ids, counts = np.unique(sample, return_counts=True)
        literals, negated = self.workload_.query_literals(ids)
        n_attributes = layout.n_attributes
        if history is None:
            linear = rng.uniform(0.0, 0.5 / n_attributes, size=layout.n_features)
        else:
            history.add(literals, negated, counts)
            linear = (0.8 / n_attributes) * history.draw_target(rng) + rng.uniform(
                0.0, 0.1 / n_attributes, size=layout.n_features
            )
        problem = OracleProblem(
            layout=layout,
            literals=literals,
            negated=negated,
            weights=counts.astype(float),
            linear=linear,
            query_ids=ids,
        )
        return np.asarray(session.solve(problem).record, dtype=np.intp)




class DualQuery(_DualSynthesizer):
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
            eta = n * math.sqrt(2.0 * self.rho_ / (s * total)) * (1 - 1e-9)
            return eta, T
        eta = self._learning_rate(n, n_candidates)
        return eta, dualquery_rounds(self.rho_, eta, s, n)

    def _start_fit(self):
        pass

    def _next_sample(self, t, sample, gains, cumulative, eta, n, rng):
        s = self.samples_per_round
        rho = exponential_mechanism_rho(mw_draw_epsilon(eta, t, n))
        if not self.ledger_.can_afford(rho, s):
            return None
        self.ledger_.charge("exponential_mechanism", rho, s)
        return _draw(*_mw_draw_args(cumulative, eta, t, n), s, rng)


class DQRS(_DualSynthesizer):
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
        **_DualSynthesizer._parameter_constraints,
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
        draw_args = _mw_draw_args(cumulative, eta, t, n)

        def draw_fresh(n_rejected):
            # Replace every rejection while the budget lasts (all of them unless
            # this is the last round); a short sample is still i.i.d. from Q^{t}.
            n_fresh = min(n_rejected, self._affordable(rho_fresh, n_rejected))
            if n_fresh:
                self.ledger_.charge("exponential_mechanism", rho_fresh, n_fresh)
            self._fresh.append(n_fresh)
            return _draw(*draw_args, n_fresh, rng)

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

    def _fit_records(self, records, rng):
        out = super()._fit_records(records, rng)
        self.n_fresh_ = np.array(self._fresh, dtype=np.intp)
        self.gamma_ = np.array(self._gammas, dtype=float)
        del self._fresh, self._gammas
        return out
