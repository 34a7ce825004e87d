"""MWEM: multiplicative weights over an explicit histogram, with the exponential mechanism.

Hardt, Ligett and McSherry, "A Simple and Practical Algorithm for Differentially
Private Data Release", NeurIPS 2012. The baseline the paper's oracle-efficient
algorithms are designed to replace: it keeps one weight per point of the data
domain, so it only runs when the domain (the product of the attributes' sizes)
is small.
"""

import math
from numbers import Integral, Real

import numpy as np

from ._base import BaseSynthesizer
from ._sampling import allocate_counts
from ._sklearn_private import Interval
from .privacy import (
    exponential_mechanism_epsilon,
    exponential_mechanism_rho,
    gaussian_mechanism,
    gaussian_mechanism_rho,
    gaussian_sigma,
    split_budget,
    worst_query_mechanism,
)

__all__ = ["MWEM", "mwem_default_rounds"]


def mwem_default_rounds(n, rho, domain_size, n_candidates, max_rounds=1000):
    """Default number of MWEM rounds, balancing MW's regret against the noise.

    With ``T`` rounds, MW's error is about ``2 sqrt(ln|X| / T)`` and each
    round's selection error about ``2 ln(m) / (n epsilon_sel)`` with
    ``epsilon_sel = sqrt(8 rho / (2 T))`` (half of each round's share of the
    budget), i.e. ``ln(m) sqrt(T) / (n sqrt(rho))``. Minimising the sum gives

    ``T = 2 sqrt(ln|X|) n sqrt(rho) / ln(m)``,

    rounded and clipped to ``[1, max_rounds]``.

    Examples
    --------
    >>> mwem_default_rounds(1000, 0.01, 10**6, 2000)
    98
    """
    T = 2.0 * math.sqrt(math.log(max(domain_size, 2))) * n * math.sqrt(rho) / math.log(n_candidates)
    return int(min(max_rounds, max(1, round(T))))


class MWEM(BaseSynthesizer):
    """MWEM (Hardt, Ligett and McSherry 2012) over the workload's queries.

    Keeps a distribution ``A`` over every point of the domain, starting
    uniform. Each of ``T`` rounds

    1. **selects** a query by the exponential mechanism over the ``2 Q``
       queries (cells and their negations) with score ``q(D) - q(A)``
       (fractions of rows, sensitivity ``1 / n``); with the negations this is
       the absolute error ``|q(D) - q(A)|`` of every cell, each candidate
       appearing twice;
    2. **measures** the selected cell's answer with the Gaussian mechanism
       (sensitivity ``1 / n``; a negation's answer is ``1 -`` its cell's, so
       the cell is measured), clipped to ``[0, 1]`` (post-processing);
    3. **updates** ``A(x) <- A(x) exp(q(x) (m - q(A)) / 2)`` and renormalises,
       for every measurement so far, ``n_passes`` times (the MWEM paper's
       improvement of iterating over past measurements; it is
       post-processing).

    **Budget.** The zCDP budget ``rho`` is split evenly over the rounds and
    each round's share is split between selection (``selection_share``,
    default 0.5 as in MWEM) and measurement: ``epsilon_sel = sqrt(8
    selection_share rho / T)`` (charged ``epsilon_sel**2 / 8``, bounded range)
    and ``sigma = (1/n) / sqrt(2 (1 - selection_share) rho / T)``.
    ``rounds=None`` uses :func:`mwem_default_rounds`.

    **Domain.** The histogram has ``prod(block_sizes)`` cells. Above
    ``max_domain_size`` (default ``10**7``, 80 MB of float64) ``fit`` raises a
    ``ValueError`` before spending any budget; use :class:`~sklearn_privsyn.FEM`
    or :class:`~sklearn_privsyn.DualQuery`, which never materialise the
    domain.

    **Output.** With at most ``max_output_records`` cells, ``records_`` is the
    histogram's support and ``weights_`` its probabilities. Larger domains are
    represented by ``max_output_records`` systematic draws from ``A``
    (aggregated, each record weighted by its count), which keeps every
    answer within ``1 / max_output_records`` of ``A``'s in expectation.

    Parameters
    ----------
    epsilon : float, default=1.0
        Target epsilon of (epsilon, delta)-DP; never exceeded.
    delta : float, default=None
        Target delta; ``None`` means ``1 / n**2``.
    workload : QueryWorkload, default=None
        The queries; cloned. ``None`` means all 3-way marginals.
    rounds : int, default=None
        Number of rounds ``T``.
    selection_share : float, default=0.5
        Fraction of each round's budget spent on selection.
    n_passes : int, default=1
        Passes of the MW update over all past measurements per round (the
        cost grows like ``n_passes * T**2`` slice updates of the histogram).
    max_domain_size : int, default=10_000_000
        Largest histogram allowed.
    max_output_records : int, default=100_000
        Largest number of distinct output records.
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
    n_rounds_ : int
    histogram_ : ndarray of shape block_sizes
        The final distribution ``A`` over the domain.
    measurements_ : ndarray of shape (n_rounds_, 2)
        Selected positive query id and its noisy answer, per round.
    records_, weights_, ledger_, epsilon_, rho_, delta_, workload_
        See :class:`~sklearn_privsyn._base.BaseSynthesizer`.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn import MWEM, QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1, 1, 0] * 50, "b": [1, 1, 0, 0] * 50})
    >>> workload = QueryWorkload(domain={"a": 2, "b": 2}, k=2)
    >>> mwem = MWEM(epsilon=1.0, workload=workload, random_state=0).fit(X)
    >>> mwem.records_.shape
    (4, 2)
    >>> mwem.sample(3).shape
    (3, 2)
    """

    _parameter_constraints: dict = {
        **BaseSynthesizer._parameter_constraints,
        "rounds": [Interval(Integral, 1, None, closed="left"), None],
        "selection_share": [Interval(Real, 0, 1, closed="neither")],
        "n_passes": [Interval(Integral, 1, None, closed="left")],
        "max_domain_size": [Interval(Integral, 1, None, closed="left")],
        "max_output_records": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        workload=None,
        rounds=None,
        selection_share=0.5,
        n_passes=1,
        max_domain_size=10_000_000,
        max_output_records=100_000,
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
        self.n_passes = n_passes
        self.max_domain_size = max_domain_size
        self.max_output_records = max_output_records
        self.conversion = conversion
        self.number_share = number_share
        self.random_state = random_state
        self.verbose = verbose

    def _fit_records(self, data, rng):
        workload = self.workload_
        layout = workload.layout_
        sizes = layout.block_sizes
        domain_size = layout.n_records
        if domain_size > self.max_domain_size:
            raise ValueError(
                f"MWEM keeps one weight per point of the domain, and this domain has "
                f"{domain_size:,} points (the product of the block sizes {list(sizes)}), "
                f"more than max_domain_size={self.max_domain_size:,}. Use FEM or DualQuery, "
                "which never materialise the domain, or coarsen the columns."
            )
        n = data.n_rows
        Q = workload.n_queries_
        T = self.rounds or mwem_default_rounds(n, self.synthesis_rho_, domain_size, 2 * Q)
        rho_sel, rho_meas = split_budget(
            self.synthesis_rho_, [T, T], [self.selection_share, 1.0 - self.selection_share]
        )
        eps_sel = exponential_mechanism_epsilon(rho_sel)
        sigma = gaussian_sigma(1.0 / n, rho_meas)
        rho_sel = exponential_mechanism_rho(eps_sel)
        rho_meas = gaussian_mechanism_rho(1.0 / n, sigma)

        marginal_index = self._marginal_index(workload)
        # PRIVATE: used only as the score of the exponential mechanism and the
        # value measured by the Gaussian mechanism below.
        true_answers = data.answers()

        hist = np.full(sizes, 1.0 / domain_size)
        measured = []  # (slices, noisy answer)
        history = np.empty((0, 2))
        progress = self._progress(T)
        try:
            for _ in range(T):
                if not self.ledger_.can_afford(rho_sel + rho_meas):
                    break
                synthetic = self._answers(hist, marginal_index, Q)
                error = true_answers - synthetic
                self.ledger_.charge("exponential_mechanism", rho_sel)
                chosen = worst_query_mechanism(error, eps_sel, 1.0 / n, rng)
                q = chosen % Q
                self.ledger_.charge("gaussian_mechanism", rho_meas)
                value = float(gaussian_mechanism([true_answers[q]], 1.0 / n, sigma, rng)[0])
                value = min(1.0, max(0.0, value))  # post-processing: answers are fractions
                measured.append((self._cell_slice(workload, q, len(sizes)), value))
                history = np.vstack([history, [q, value]])
                for _ in range(self.n_passes):
                    total = 1.0  # hist sums to ``total``; renormalised after each pass
                    for index, m in measured:
                        mass = hist[index].sum()
                        factor = math.exp((m - mass / total) / 2.0)
                        hist[index] *= factor
                        total += mass * (factor - 1.0)
                    hist /= hist.sum()
                if progress is not None:
                    progress.update(1)
        finally:
            if progress is not None:
                progress.close()
        self.n_rounds_ = len(measured)
        self.histogram_ = hist
        self.measurements_ = history
        return self._output(hist, rng)

    # -- helpers (post-processing only) -----------------------------------------
    @staticmethod
    def _cell_slice(workload, query_id, n_attributes):
        literals, _ = workload.query_literals([query_id])
        cols = literals[0][literals[0] >= 0]
        layout = workload.layout_
        index = [slice(None)] * n_attributes
        for col in cols:
            index[int(layout.attribute_of[col])] = int(layout.code_of[col])
        return tuple(index)

    @staticmethod
    def _marginal_index(workload):
        """Per marginal: (query ids, axes kept in increasing order, codes per kept axis)."""
        layout = workload.layout_
        offsets = workload.marginal_offsets_
        out = []
        for j in range(len(offsets) - 1):
            ids = np.arange(offsets[j], offsets[j + 1])
            literals, _ = workload.query_literals(ids)
            first = literals[0][literals[0] >= 0]
            attrs = layout.attribute_of[first]
            order = np.argsort(attrs)
            lit = literals[:, : len(first)][:, order]
            out.append((ids, tuple(int(a) for a in attrs[order]), tuple(layout.code_of[lit].T)))
        return out

    @staticmethod
    def _answers(hist, marginal_index, n_queries):
        answers = np.empty(n_queries)
        all_axes = set(range(hist.ndim))
        for ids, axes, codes in marginal_index:
            table = hist.sum(axis=tuple(sorted(all_axes - set(axes))))
            answers[ids] = table[codes]
        return answers

    def _output(self, hist, rng):
        flat = hist.ravel()
        if flat.size <= self.max_output_records:
            cells = np.flatnonzero(flat > 0)
            weights = flat[cells]
        else:
            counts = allocate_counts(flat, self.max_output_records, rng)
            cells = np.flatnonzero(counts)
            weights = counts[cells].astype(float)
        records = np.stack(np.unravel_index(cells, hist.shape), axis=1).astype(np.intp)
        return records, weights
