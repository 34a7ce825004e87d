"""Adaptive selection: which marginals to measure, and with how much of the budget.

AIM's idea (McKenna, Mullins, Sheldon and Miklau 2022), our code and our
accounting (zCDP, replace-one neighbours). The candidates are the workload's
marginals and every subset of them; each is weighted by how much of the
workload it covers (``w_c = sum_r |c & r|`` over the workload's marginals
``r``). After the 1-way marginals of every column, each round

1. scores every candidate by ``w_c * (|| a_c - m_c ||_1 - sqrt(2/pi) sigma C_c)``:
   the current model's L1 error on it (``a_c`` the true answers, ``m_c`` the
   model's) less the L1 noise its measurement would add (``C_c`` cells at
   noise ``sigma``), so a large marginal is chosen only when it repays its
   noise. Under replace-one neighbours a changed row moves ``1 / n`` between
   two cells of a marginal, so the score has sensitivity ``2 w_max / n``;
2. picks one by the exponential mechanism (``epsilon``, charged
   ``epsilon**2 / 8``) and measures it with the Gaussian mechanism
   (sensitivity ``sqrt(2) / n``, charged ``1 / (n sigma)**2``);
3. refits the model on everything measured so far (post-processing);
4. anneals: when the refit moved the chosen marginal by no more than the
   noise its measurement carried (``sqrt(2/pi) sigma C_c`` in L1), the next
   rounds measure at half the noise (``sigma / 2``, four times the cost) and
   select at twice ``epsilon``.

The budget is planned as ``n_rounds`` equal rounds of ``rho / n_rounds``, a
``selection_share`` of each for the selection; the 1-way marginals take as
much as ``n_columns`` rounds' measurements. When less than two rounds' cost
is left, the last round spends exactly what is left. Every charge is planned a
factor ``1 - margin`` below its share, so that rounding never takes the ledger
over the budget.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..privacy import (
    exponential_mechanism,
    exponential_mechanism_rho,
    gaussian_mechanism,
    gaussian_mechanism_rho,
    gaussian_sigma,
)

__all__ = ["Candidates", "candidate_marginals", "measure_adaptively", "round_noise"]


@dataclass(frozen=True)
class Candidates:
    """The marginals a round may measure.

    Attributes
    ----------
    marginals : tuple of tuples of int
        Sorted column tuples: every non-empty subset of a workload marginal,
        1-way first, then by size and columns.
    weights : ndarray of shape (n_candidates,)
        ``w_c = sum_r |c & r|`` over the workload's marginals ``r``.
    cells : ndarray of shape (n_candidates,)
        Number of cells of each.
    """

    marginals: tuple
    weights: np.ndarray
    cells: np.ndarray


def candidate_marginals(workload_marginals, sizes):
    """The workload's marginals and all their subsets, weighted by workload overlap.

    A workload marginal keeps its own column order (its cells are numbered in
    it); the other subsets are sorted tuples.

    Examples
    --------
    >>> c = candidate_marginals([(0, 1), (1, 2)], [2, 3, 2])
    >>> c.marginals
    ((0,), (1,), (2,), (0, 1), (1, 2))
    >>> c.weights.tolist()
    [1.0, 2.0, 1.0, 3.0, 3.0]
    """
    found = {}
    for m in workload_marginals:
        key = tuple(sorted(int(a) for a in m))
        for r in range(1, len(key)):
            for subset in itertools.combinations(key, r):
                found.setdefault(subset, subset)
    for m in workload_marginals:  # a workload marginal in its own order
        found[tuple(sorted(int(a) for a in m))] = tuple(int(a) for a in m)
    marginals = tuple(found[k] for k in sorted(found, key=lambda c: (len(c), c)))
    workload = [set(int(a) for a in m) for m in workload_marginals]
    weights = np.array([sum(len(set(c) & r) for r in workload) for c in marginals], dtype=float)
    cells = np.array([math.prod(int(sizes[a]) for a in c) for c in marginals], dtype=np.int64)
    return Candidates(marginals, weights, cells)


def round_noise(n, rho, n_rounds, selection_share):
    """``(sigma, epsilon)`` of a round when ``rho`` is planned as ``n_rounds`` equal rounds.

    A measurement at ``sigma`` (sensitivity ``sqrt(2) / n``) costs
    ``1 / (n sigma)**2`` and gets ``(1 - selection_share) rho / n_rounds``;
    the selection's ``epsilon**2 / 8`` gets the rest.

    Examples
    --------
    >>> sigma, eps = round_noise(1000, 0.5, 10, 0.1)
    >>> round(1 / (1000 * sigma)**2 + eps**2 / 8, 12)
    0.05
    """
    share = rho / n_rounds
    sigma = gaussian_sigma(math.sqrt(2.0) / n, (1.0 - selection_share) * share)
    epsilon = math.sqrt(8.0 * selection_share * share)
    return sigma, epsilon


def measure_adaptively(truth, candidates, n, rho, ledger, rng, model, *, n_rounds,
                       selection_share=0.1, margin=1e-9, anneal=True):
    """Measure the 1-way marginals, then select and measure until the budget is spent.

    Parameters
    ----------
    truth : ndarray
        PRIVATE: the true answers of every candidate's cells, concatenated in
        ``candidates.marginals`` order. Read only by the mechanisms here.
    candidates : Candidates
    n : int
        Number of rows (public under replace-one neighbours).
    rho : float
        zCDP budget of the whole selection.
    ledger : PrivacyLedger
        Charged for every mechanism run.
    rng : numpy.random.Generator
        Noise and selections.
    model : object
        The representation being fitted, with ``refit(measurements)`` (fit
        to the noisy answers so far: ``{candidate index: (noisy, variance)}``),
        ``answers(indices)`` (its answers to those candidates' cells,
        concatenated) and ``admissible(candidates, progress)`` (boolean mask
        of candidates it can take on; ``progress`` the share of the budget
        spent). Post-processing only: it never sees ``truth``.
    n_rounds : int
        Rounds the budget is planned for (the 1-way marginals count as one
        round each).
    selection_share : float, default=0.1
    margin : float, default=1e-9
    anneal : bool, default=True

    Returns
    -------
    measurements : dict
        ``{candidate index: (noisy answers, variance)}``, repeated
        measurements averaged by inverse variance.
    chosen : list of (int, float)
        The candidate selected in each round and the noise sd it was measured with.
    """
    offsets = np.concatenate([[0], np.cumsum(candidates.cells)])
    budget = rho * (1.0 - margin)
    sigma, epsilon = round_noise(n, budget, n_rounds, selection_share)
    one_way = [i for i, m in enumerate(candidates.marginals) if len(m) == 1]
    d = len(one_way)
    sensitivity = math.sqrt(2.0 * d) / n
    if gaussian_mechanism_rho(sensitivity, sigma) > budget:  # too few rounds: all to the 1-ways
        sigma = gaussian_sigma(sensitivity, budget)
    cells = np.concatenate([np.arange(offsets[i], offsets[i + 1]) for i in one_way])
    ledger.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
    noisy = gaussian_mechanism(truth[cells], sensitivity, sigma, rng)
    spent = gaussian_mechanism_rho(sensitivity, sigma)
    measurements = {}
    start = 0
    for i in one_way:
        k = int(candidates.cells[i])
        measurements[i] = (noisy[start:start + k], sigma**2)
        start += k
    model.refit(measurements)
    chosen = []
    weight_max = float(candidates.weights.max())
    while budget - spent > 0:
        remaining = budget - spent
        sensitivity = math.sqrt(2.0) / n
        cost = gaussian_mechanism_rho(sensitivity, sigma) + exponential_mechanism_rho(epsilon)
        last = remaining < 2.0 * cost
        if last:  # the last round spends what is left
            sigma = gaussian_sigma(sensitivity, (1.0 - selection_share) * remaining)
            epsilon = math.sqrt(8.0 * selection_share * remaining)
        before = model.answers(range(len(candidates.marginals)))
        errors = np.add.reduceat(np.abs(truth - before), offsets[:-1])
        bias = math.sqrt(2.0 / math.pi) * sigma * candidates.cells
        scores = candidates.weights * (errors - bias)
        allowed = np.flatnonzero(model.admissible(candidates, spent / budget))
        ledger.charge("exponential_mechanism", exponential_mechanism_rho(epsilon))
        m = int(allowed[exponential_mechanism(scores[allowed], epsilon, 2.0 * weight_max / n,
                                              rng)])
        cells = slice(offsets[m], offsets[m + 1])
        ledger.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
        noisy = gaussian_mechanism(truth[cells], sensitivity, sigma, rng)
        spent += exponential_mechanism_rho(epsilon) + gaussian_mechanism_rho(sensitivity, sigma)
        if m in measurements:
            old, variance = measurements[m]
            precision = 1.0 / variance + 1.0 / sigma**2
            measurements[m] = ((old / variance + noisy / sigma**2) / precision, 1.0 / precision)
        else:
            measurements[m] = (noisy, sigma**2)
        chosen.append((m, sigma))
        model.refit(measurements)
        if last:
            break
        moved = float(np.abs(model.answers([m]) - before[cells]).sum())
        if anneal and moved <= bias[m]:
            sigma /= 2.0
            epsilon *= 2.0
    return measurements, chosen
