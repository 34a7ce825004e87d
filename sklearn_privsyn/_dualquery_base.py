"""The loop DualQuery and DQRS share, and their schedules (public functions of public parameters).

The query player runs multiplicative weights over the workload's ``2 Q``
queries and releases samples of them through the mechanisms of
:mod:`sklearn_privsyn.privacy` (``exponential_mechanism_draws``, and DQRS's
``rejection_coins``); the data player best-responds to each round's sample with
one oracle call. See :mod:`sklearn_privsyn.dualquery` for the estimators.
"""

import math
import time
from numbers import Integral, Real

import numpy as np

from ._base import SOLVER_CONSTRAINT, BaseSynthesizer
from ._sklearn_private import Interval, StrOptions
from .privacy import compose, exponential_mechanism_rho, rejection_coins
from .solvers import OracleProblem, SolverStats

__all__ = [
    "BaseDualQuery",
    "SampleHistory",
    "default_learning_rate",
    "dualquery_rounds",
    "mw_draw_args",
    "mw_draw_epsilon",
    "rejection_resample",
]


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


def mw_draw_args(cumulative, learning_rate, t, n):
    """(scores, epsilon, sensitivity) of a draw from round ``t``'s MW distribution.

    The score ``sum_{i<t} (q(D) - q(x^i))`` over the ``2 Q`` queries (a
    negation's is minus its query's) moves by at most ``(t - 1) / n``.
    """
    scores = np.concatenate([cumulative, -cumulative])
    return scores, mw_draw_epsilon(learning_rate, t, n), (t - 1) / n



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
    kept = sample[rejection_coins(sample, gains, learning_rate, gamma, rng)]
    n_rejected = int(len(sample) - len(kept))
    fresh = np.asarray(draw_fresh(n_rejected), dtype=np.intp)
    if len(fresh) > n_rejected:
        raise ValueError(
            f"draw_fresh({n_rejected}) returned {len(fresh)} draws, more than asked"
        )
    return np.concatenate([kept, fresh]), n_rejected



class SampleHistory:
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



class BaseDualQuery(BaseSynthesizer):
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
            self.synthesis_rho_, n, n_candidates, self.samples_per_round,
            self._learning_rate_scale
        )

    def _fit_records(self, data, rng):
        workload = self.workload_
        layout = workload.layout_
        n = data.n_rows
        n_queries = workload.n_queries_
        s = self.samples_per_round
        eta, max_rounds = self._schedule(n, 2 * n_queries)
        self.learning_rate_ = eta
        self._start_fit()

        # PRIVATE: true answers; used only inside the MW distribution / acceptance
        # probabilities, which are sampled through accounted mechanisms.
        true_answers = data.answers()
        cumulative = np.zeros(n_queries)  # sum_{i<t} (q(D) - q(x^i)) for positive q

        history = (
            SampleHistory(layout, self._history_decay) if self.tie_break == "history" else None
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
        :class:`SampleHistory`, plus noise (total < 0.1) among the rest.
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
