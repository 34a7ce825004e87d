"""FEM and sepFEM: follow-the-perturbed-leader against the exponential mechanism.

Vietri, Tian, Bun, Steinke and Wu, "New Oracle-Efficient Algorithms for Private
Synthetic Data Release", ICML 2020, Algorithms 1-3.

Each round the *query player* picks the query the current synthetic data answers
worst, by the exponential mechanism (the only step that reads the private data
and the only privacy cost), and the *data player* draws ``samples_per_round``
follow-the-perturbed-leader samples: each is one oracle call that maximises the
number of past chosen queries a record satisfies plus fresh random noise. The
data player never sees the private data, so everything it does, whatever the
solver returns, is post-processing.
"""

import math
from numbers import Integral, Real

import numpy as np
from joblib import effective_n_jobs

from ._base import SOLVER_CONSTRAINT, BaseSynthesizer
from ._sklearn_private import Interval
from .privacy import (
    compose,
    exponential_mechanism_epsilon,
    exponential_mechanism_rho,
    gaussian_mechanism,
    gaussian_mechanism_rho,
    gaussian_sigma,
    split_budget,
    worst_query_mechanism,
)
from .solvers import OracleProblem, get_oracle
from .solvers.parallel import SerialOracle, WorkerOracles

__all__ = ["FEM", "SepFEM", "default_rounds", "default_samples", "sepfem_noise_scale"]


def default_rounds(n, rho, n_candidates, scale=1.0):
    """The default number of rounds T, derived from the regret trade-off.

    The exponential mechanism with per-round parameter ``epsilon_0`` picks a
    query whose error is within ``2 ln(m) / (n epsilon_0)`` of the worst (``m``
    candidates). Spending ``rho`` over ``T`` rounds at ``epsilon_0**2 / 8`` each
    gives ``epsilon_0 = sqrt(8 rho / T)``, so that slack grows like
    ``sqrt(T)`` while the data player's regret falls like ``1 / sqrt(T)``.
    Balancing the two gives ``T`` proportional to ``n sqrt(rho) / ln(m)``;
    ``scale`` is the constant, chosen on generated data, not on the data sets
    we report (see ``benchmarks/tune_fem.py``).

    Parameters
    ----------
    n : int
        Number of rows (public under replace-one neighbours).
    rho : float
        zCDP budget.
    n_candidates : int
        Queries the exponential mechanism chooses from (with negations).
    scale : float, default=1.0
        Multiplier of the rule.

    Returns
    -------
    T : int
        At least 1.

    Examples
    --------
    >>> default_rounds(48842, 0.0145, 2 * 458996)
    428
    """
    return max(1, int(round(scale * n * math.sqrt(rho) / math.log(n_candidates))))


def default_samples(rounds, min_samples=50, max_samples=200, output_records=10_000):
    """The default FTPL samples a round: ``ceil(10,000 / (T + 1))`` within ``[50, 200]``.

    Each round's samples are independent draws from the data player's
    perturbed-leader distribution, and the output is an equally weighted
    mixture of the samples of the kept rounds. With ``N`` output records a
    cell's answer carries a sampling error of about ``sqrt(p (1 - p) / N)``
    on top of the game's own error, and the max over hundreds of thousands
    of cells picks up its tail. With few rounds (small budgets) the paper's
    ``s = 50`` leaves few records (``T = 46``: 1,175 kept), so the rule
    raises ``s`` until the ``T + 1`` rounds hold ``output_records`` samples,
    half of them kept by default, but never beyond four times the paper's
    ``s``, which bounds the cost of a round; with many rounds it keeps the
    paper's 50. Samples are cheap exactly where this applies: few rounds
    mean few chosen queries and easy oracle calls. Public: it uses only
    ``T``. The constants were checked on generated data, never on the data
    sets we report (``benchmarks/RESULTS.md``).

    Parameters
    ----------
    rounds : int
        Number of rounds T.
    min_samples : int, default=50
        The paper's ``s``, the least the rule gives.
    max_samples : int, default=200
        The most the rule gives.
    output_records : int, default=10_000
        Samples over all ``T + 1`` rounds the rule aims for.

    Returns
    -------
    s : int

    Examples
    --------
    >>> default_samples(46), default_samples(100), default_samples(425)
    (200, 100, 50)
    """
    return min(int(max_samples), max(int(min_samples), math.ceil(output_records / (rounds + 1))))



def _distinct_rows(records, limit):
    """The first ``limit`` distinct rows of ``records``, in order of first appearance."""
    _, first = np.unique(records, axis=0, return_index=True)
    return records[np.sort(first)[:limit]]


class _FTPLSynthesizer(BaseSynthesizer):
    """The primal framework (the paper's Algorithm 1) with a pluggable perturbation."""

    _reweight_passes = 20
    # warm starts handed to each oracle call: the previous round's distinct records
    _warm_start_limit = 32

    _parameter_constraints: dict = {
        **BaseSynthesizer._parameter_constraints,
        "rounds": [Interval(Integral, 1, None, closed="left"), None],
        "round_epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "noise_scale": [Interval(Real, 0, None, closed="neither"), None],
        "samples_per_round": [Interval(Integral, 1, None, closed="left"), None],
        "keep": [Interval(Real, 0, 1, closed="right")],
        "measure_share": [Interval(Real, 0, 1, closed="left")],
        "solver": SOLVER_CONSTRAINT,
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        workload=None,
        rounds=None,
        round_epsilon=None,
        noise_scale=None,
        samples_per_round=None,
        keep=0.5,
        measure_share=0.0,
        solver="hybrid",
        conversion="cks",
        number_share="auto",
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.rounds = rounds
        self.round_epsilon = round_epsilon
        self.noise_scale = noise_scale
        self.samples_per_round = samples_per_round
        self.keep = keep
        self.measure_share = measure_share
        self.solver = solver
        self.conversion = conversion
        self.number_share = number_share
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- schedule -----------------------------------------------------------------
    def _schedule(self, n, n_candidates):
        """(epsilon_0, rounds) from the parameters and the budget; uses public n only.

        ``rounds`` charges of ``exponential_mechanism_rho(epsilon_0)`` never
        exceed the rounds' budget, by any rounding (:func:`split_budget`).
        """
        if self.round_epsilon is not None and self.rounds is not None:
            raise ValueError("give at most one of rounds and round_epsilon")
        budget = self.synthesis_rho_ * (1.0 - self.measure_share)  # <= rho_: the factor is <= 1
        if self.round_epsilon is not None:
            eps0 = float(self.round_epsilon)
            round_rho = exponential_mechanism_rho(eps0)
            rounds = int(math.floor(budget / round_rho))
            while rounds >= 1 and compose([(round_rho, rounds)]) > budget:
                rounds -= 1
            while compose([(round_rho, rounds + 1)]) <= budget:
                rounds += 1
            if rounds < 1:
                raise ValueError(
                    f"round_epsilon={eps0} costs {round_rho:.3g} zCDP a "
                    f"round, more than the budget for rounds rho={budget:.3g}"
                )
            return eps0, rounds
        rounds = self.rounds or default_rounds(n, budget, n_candidates)
        (round_rho,) = split_budget(budget, [rounds])
        return exponential_mechanism_epsilon(round_rho), rounds

    def _noise_scale(self, rounds):
        if self.noise_scale is not None:
            return float(self.noise_scale)
        return self._default_noise_multiplier * math.sqrt(rounds)

    # -- the game -----------------------------------------------------------------
    def _fit_records(self, data, rng):
        workload = self.workload_
        layout = workload.layout_
        n = data.n_rows
        n_queries = workload.n_queries_
        eps0, rounds = self._schedule(n, 2 * n_queries)
        eta = self._noise_scale(rounds)
        round_rho = exponential_mechanism_rho(eps0)
        self.round_epsilon_ = eps0
        self.noise_scale_ = eta
        self.samples_per_round_ = (default_samples(rounds) if self.samples_per_round is None
                                   else int(self.samples_per_round))

        # PRIVATE: the only read of the data; used solely inside the mechanism below.
        true_answers = data.answers()

        # Independent streams, so that n_jobs (which changes how solver seeds are
        # drawn) cannot change the noise or the mechanism's draws.
        query_rng, noise_rng, solver_rng = rng.spawn(3)
        multiplicity = {int(query_rng.integers(2 * n_queries)): 1}  # q_0: uniform, data-free
        n_workers = self._n_workers()
        if n_workers == 1:
            oracle = SerialOracle(self._oracle_session(solver_rng))
        else:
            oracle = WorkerOracles(get_oracle(self.solver), layout, self.n_jobs, n_workers,
                                    int(solver_rng.integers(np.iinfo(np.int32).max)))
            self.solver_stats_ = oracle.stats
        per_round = []
        warm_starts = np.zeros((0, layout.n_attributes), dtype=np.intp)
        progress = self._progress(rounds + 1)
        try:
            for t in range(rounds + 1):
                samples = self._data_player(multiplicity, eta, noise_rng, oracle,
                                            solver_rng, warm_starts)
                warm_starts = _distinct_rows(samples, self._warm_start_limit)
                per_round.append(samples)
                if progress is not None:
                    progress.update(1)
                    if self.solver_stats_ is not None:
                        progress.set_postfix(oracle_s=f"{self.solver_stats_.seconds:.0f}")
                if t == rounds:
                    break
                # Query player: exponential mechanism, score q(D) - q(D_t), sensitivity 1/n.
                error = true_answers - workload.answer_codes(samples)
                self.ledger_.charge("exponential_mechanism", round_rho)
                chosen = worst_query_mechanism(error, eps0, 1.0 / n, query_rng)
                multiplicity[int(chosen)] = multiplicity.get(int(chosen), 0) + 1
        finally:
            if progress is not None:
                progress.close()
            oracle.close()

        self.n_rounds_ = rounds
        self.query_history_ = np.array(sorted(multiplicity), dtype=np.intp)
        first_kept = min(len(per_round) - 1, int(math.floor((1.0 - self.keep) * len(per_round))))
        self.n_rounds_kept_ = len(per_round) - first_kept
        synthetic = np.concatenate(per_round[first_kept:], axis=0)
        weights = np.full(len(synthetic), 1.0 / len(synthetic))
        if self.measure_share > 0:
            weights = self._measure_and_reweight(synthetic, weights, true_answers, n, query_rng)
        return synthetic, weights

    def _measure_and_reweight(self, synthetic, weights, true_answers, n, rng):
        """Measure the chosen queries with Gaussian noise, then reweight the records.

        The cells the query player chose (a negation measures its cell) are
        measured jointly by one Gaussian mechanism with the rest of the budget.
        Under replace-one neighbours a changed row moves one unit of count
        between two cells of a marginal, so with ``c_m`` measured cells in
        marginal ``m`` the L2 sensitivity of the fractions is
        ``sqrt(sum_m min(2, c_m)) / n``. The reweighting that follows
        (multiplicative weights over the synthetic records, as in MWEM) reads
        only the noisy answers: post-processing.
        """
        workload = self.workload_
        n_queries = workload.n_queries_
        ids = self.query_history_
        cells = np.unique(np.where(ids >= n_queries, ids - n_queries, ids))
        per_marginal = np.bincount(workload.marginal_of_query_[cells])
        sensitivity = math.sqrt(np.minimum(per_marginal, 2).sum()) / n
        sigma = gaussian_sigma(sensitivity, self.ledger_.rho_remaining)
        self.ledger_.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
        # PRIVATE: true answers of the chosen cells, read only through the mechanism.
        noisy = gaussian_mechanism(true_answers[cells], sensitivity, sigma, rng)
        self.measurement_sigma_ = sigma

        # post-processing: multiplicative weights towards the noisy answers
        literals, _ = workload.query_literals(cells)
        values = OracleProblem(
            layout=workload.layout_, literals=literals, negated=np.zeros(len(cells), dtype=bool),
            weights=np.ones(len(cells)), linear=np.zeros(workload.layout_.n_features),
            query_ids=cells,
        ).query_values(synthetic).astype(float)
        targets = np.clip(noisy, 0.0, 1.0)
        log_w = np.log(weights)
        for _ in range(self._reweight_passes):
            for j in range(len(cells)):
                w = np.exp(log_w - log_w.max())
                w /= w.sum()
                log_w += values[:, j] * (targets[j] - values[:, j] @ w) / 2.0
        w = np.exp(log_w - log_w.max())
        return w / w.sum()

    def _data_player(self, multiplicity, eta, noise_rng, oracle, seed_rng, warm_starts):
        """``samples_per_round`` FTPL samples against the chosen queries (post-processing).

        Each problem carries its own seed and the previous round's records as
        warm starts, so an inexact oracle's answer is a function of the
        problem alone and the output does not depend on ``n_jobs``.
        """
        layout = self.workload_.layout_
        ids = np.fromiter(multiplicity, dtype=np.intp, count=len(multiplicity))
        weights = np.fromiter(multiplicity.values(), dtype=float, count=len(multiplicity))
        literals, negated = self.workload_.query_literals(ids)
        problems = [
            OracleProblem(
                layout=layout,
                literals=literals,
                negated=negated,
                weights=weights,
                linear=self._perturbation(noise_rng, eta, layout.n_features),
                query_ids=ids,
                warm_starts=warm_starts,
                seed=int(seed),
            )
            for seed in seed_rng.integers(np.iinfo(np.int64).max, size=self.samples_per_round_)
        ]
        return np.array(oracle.solve_all(problems))

    def _n_workers(self):
        if self.n_jobs is None:
            return 1
        return max(1, min(effective_n_jobs(self.n_jobs), self.samples_per_round_))



class FEM(_FTPLSynthesizer):
    """FEM: non-convex FTPL data player against an exponential-mechanism query player.

    The paper's Algorithms 1 and 2. Each round costs one exponential mechanism
    with parameter ``round_epsilon_``, accounted as ``round_epsilon_**2 / 8``
    zCDP (bounded-range analysis, Cesar and Rogers 2021); rounds continue while
    the ledger has budget. Each FTPL sample solves
    ``max_x sum_i w_i q_i(x) - <x, sigma>`` with ``sigma`` drawn coordinatewise
    from an exponential distribution of scale ``noise_scale_``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Target epsilon of (epsilon, delta)-DP; never exceeded.
    delta : float, default=None
        Target delta; ``None`` means ``1 / n**2`` as in the paper (``n`` is
        public under the replace-one neighbouring relation used throughout).
    workload : QueryWorkload, default=None
        The queries to answer; cloned, never mutated. ``None`` means all 3-way
        marginals with the domain read from the data (which warns).
    rounds : int, default=None
        Number of rounds T; ``None`` derives it with :func:`default_rounds`.
    round_epsilon : float, default=None
        Per-round exponential-mechanism epsilon instead of ``rounds``.
    noise_scale : float, default=None
        Scale of the FTPL perturbation; ``None`` means ``0.16 * sqrt(T)``.
    samples_per_round : int, default=None
        FTPL samples (oracle calls) per round, ``s`` in the paper; ``None``
        means :func:`default_samples`: the paper's 50 unless the rounds are
        too few to hold 10,000 samples in all, then more, up to 200 (200 at
        ``T = 46``, eps 0.1 on ADULT). Fitted value in ``samples_per_round_``.
    keep : float, default=0.5
        Fraction of the last rounds whose samples form the output.
    measure_share : float, default=0.0
        Share of the zCDP budget kept back from the rounds to measure, with
        one Gaussian mechanism, the cells the query player chose; the output
        records are then reweighted towards those noisy answers by
        multiplicative weights (post-processing). ``0`` is the paper's FEM.
    solver : {"hybrid", "highs", "pulp", "heuristic", "brute"} or oracle, default="hybrid"
        The optimisation oracle; privacy does not depend on it (whatever it
        returns is post-processing). The default, :class:`~sklearn_privsyn.solvers.HybridOracle`,
        runs a local search on every call and HiGHS on one call in 50, which
        replaces the answer when better and records the local search's gap in
        ``solver_stats_``. Chosen on generated data: at eps 1 its mean error
        and TVD equalled HiGHS's and its max error was within HiGHS's spread,
        at a quarter of the CPU time (``benchmarks/RESULTS.md``).
    conversion : {"cks", "classic"}, default="cks"
        zCDP to (epsilon, delta) conversion.
    number_share : float in [0, 1) or "auto", default="auto"
        Share of the budget spent measuring the binned numeric columns finely
        before the workload: point masses, bins of similar mass and the shape
        of the values inside each bin (:mod:`sklearn_privsyn.numbers`).
        ``"auto"`` derives it from the workload and the columns; 0 keeps
        equal-width bins drawn uniformly. Nothing is spent without binned
        columns.
    n_jobs : int, default=None
        Parallel oracle calls within a round, through joblib (so a Dask or Ray
        joblib backend can carry them). Each worker keeps its own oracle
        session between rounds; sessions are never shared between threads,
        so concurrent fits in one process are safe. The output does not
        depend on ``n_jobs`` with any built-in solver: each oracle call
        carries its own seed and warm starts (the previous round's records),
        so an inexact answer is a function of the call alone, and an exact
        one is the (almost surely unique) optimum.
    random_state : int, RandomState instance or None, default=None
        Controls every random draw, solver seeds included.
    verbose : int, default=0
        Show a progress bar over rounds.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn import FEM, QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1, 1, 0] * 50, "b": [1, 1, 0, 0] * 50})
    >>> workload = QueryWorkload(domain={"a": 2, "b": 2}, k=2)
    >>> fem = FEM(epsilon=1.0, workload=workload, samples_per_round=5,
    ...           solver="brute", random_state=0).fit(X)
    >>> fem.epsilon_ <= 1.0
    True
    >>> fem.sample(3).shape
    (3, 2)
    """

    _default_noise_multiplier = 0.16

    def _perturbation(self, rng, eta, size):
        return -rng.exponential(eta, size=size)


def sepfem_noise_scale(rounds, block_sizes, scale=0.25):
    """sepFEM's default Laplace scale: separator FTPL's regret-optimal scale, times ``scale``.

    With one-hot records the ``d`` coordinate queries ``x_j`` form a
    separator set of size ``M = d``, and the data player chooses among
    ``N = |X| = prod(block_sizes)`` records. Separator FTPL with Laplace
    noise of scale ``b`` on those ``M`` coordinates (Syrgkanis et al. 2016,
    as restated in the paper's sepFEM regret lemma, whose ``eta`` is the rate
    ``1 / b``) has average regret over ``T`` rounds at most

    ``R(b) = 4 M / b + 10 sqrt(M) ln(N) b / T``:

    the first term is the cost of instability (less noise, more switching),
    the second the bias of the noise itself. ``R'(b) = 0`` gives

    ``b* = sqrt(2 sqrt(M) T / (5 ln N))``, with ``M = d = sum(block_sizes)``
    and ``ln N = sum(ln(block_sizes))``.

    Like FEM's ``0.16 sqrt(T)`` it grows as ``sqrt(T)`` (the objective is a
    sum of ``T`` queries), and its dependence on the schema (``d`` one-hot
    coordinates each perturbed, against ``ln N`` bits of choice) comes from
    the bound. The bound is a worst case and its constant overshoots in
    practice (FEM's ``0.16 sqrt(T)`` is likewise far below its own bound's
    optimum): on generated tables with ADULT's schema the max error fell as
    the scale went down from ``2 b*`` to ``b* / 4`` at eps 0.1 and from
    ``b*`` to ``b* / 4`` at eps 1, flat below ``b* / 4`` at both
    (``benchmarks/tune_fem.py --algorithm
    sepfem --rule-scale``; ``benchmarks/RESULTS.md``), so the default is
    ``b* / 4``, chosen there, never on the data sets we report. Public: it
    uses only the schema and ``T``.

    Parameters
    ----------
    rounds : int
        Number of rounds T.
    block_sizes : sequence of int
        Number of values of each attribute (the one-hot blocks).
    scale : float, default=0.25
        Multiplier of ``b*``, chosen on generated data.

    Returns
    -------
    noise_scale : float
        The Laplace scale ``scale * b*``.

    Examples
    --------
    >>> adult = [85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2]
    >>> round(sepfem_noise_scale(425, adult, scale=1.0), 2), round(sepfem_noise_scale(425, adult), 2)
    (10.03, 2.51)
    """
    sizes = np.asarray(block_sizes, dtype=float)
    log_records = float(np.log(sizes).sum())
    if log_records == 0.0:  # a single possible record: nothing to choose, no noise needed
        return scale
    return scale * math.sqrt(2.0 * math.sqrt(sizes.sum()) * rounds / (5.0 * log_records))


class SepFEM(_FTPLSynthesizer):
    """sepFEM: the FTPL data player perturbed through a separator set.

    The paper's Algorithm 3. For one-hot records the coordinate queries
    ``x_j`` separate any two distinct records, so the perturbation adds
    ``sum_j sigma_j x_j`` with ``sigma_j`` drawn from a Laplace distribution of
    scale ``noise_scale_``. Privacy accounting is FEM's: only the query
    player's exponential mechanism reads the data.

    Parameters are FEM's (see :class:`FEM`), except that ``noise_scale=None``
    means :func:`sepfem_noise_scale`, ``0.25 sqrt(2 sqrt(d) T / (5 ln |X|))``
    for one-hot width ``d`` and ``|X|`` possible records: the scale that
    minimises separator FTPL's regret bound, times a constant chosen on
    generated data.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn import SepFEM, QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1, 1, 0] * 50, "b": [1, 1, 0, 0] * 50})
    >>> workload = QueryWorkload(domain={"a": 2, "b": 2}, k=2)
    >>> sep = SepFEM(epsilon=1.0, workload=workload, samples_per_round=5,
    ...              solver="brute", random_state=0).fit(X)
    >>> sep.sample(4).shape
    (4, 2)
    """

    def _noise_scale(self, rounds):
        if self.noise_scale is not None:
            return float(self.noise_scale)
        return sepfem_noise_scale(rounds, self.workload_.layout_.block_sizes)

    def _perturbation(self, rng, eta, size):
        return rng.laplace(0.0, eta, size=size)
