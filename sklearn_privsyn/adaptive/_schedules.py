"""AdaptiveProjection's three measurement schedules: where its fit reads private data.

Each function measures with Gaussian mechanisms (and, for selection, the
exponential mechanisms inside :func:`~sklearn_privsyn.adaptive.measure_adaptively`),
charges ``est.ledger_``, records the measurements on the estimator and
returns the result of the final fit (:mod:`._fitting`, post-processing):

* :func:`measure_all_at_once`: every workload marginal by one Gaussian
  mechanism (``n_rounds_ == 1``);
* :func:`measure_one_way_only`: the 1-way marginals with the whole budget
  (``n_rounds_ == 0``);
* :func:`measure_by_selection`: the 1-way marginals, then adaptive rounds
  (``n_rounds_ >= 2``).
"""

import math

import numpy as np

from ..privacy import gaussian_mechanism, gaussian_mechanism_rho, gaussian_sigma
from ._calibration import calibration_targets, one_way_estimates, with_missing_shares
from ._fitting import (
    GraphicalFit,
    ProjectionFit,
    new_projection,
    refit_to_shares,
    run_projection,
)
from ._rules import BUDGET_MARGIN
from ._selection import candidate_marginals, measure_adaptively
from ._shrinkage import shrink_one_way

__all__ = ["measure_all_at_once", "measure_by_selection", "measure_one_way_only"]


def measure_all_at_once(est, data, rng, session, project_rng):
    """Every workload marginal by one Gaussian mechanism (sensitivity ``sqrt(2 M) / n``)."""
    workload = est.workload_
    n = data.n_rows
    M = len(workload.marginal_offsets_) - 1
    # PRIVATE: every workload answer, read only by the Gaussian mechanism below.
    true_answers = data.answers()
    sensitivity = math.sqrt(2.0 * M) / n
    sigma = gaussian_sigma(sensitivity, est.synthesis_rho_ * (1.0 - BUDGET_MARGIN))
    est.ledger_.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
    noisy = gaussian_mechanism(true_answers, sensitivity, sigma, rng)
    true_answers = None  # one vector of every cell less from here on
    est.measured_marginals_ = list(workload.marginal_set_.marginals)
    est.measurements_ = noisy
    # one variance for every cell: a read-only view, not a vector of them
    est.measurement_variances_ = np.broadcast_to(sigma**2, len(noisy))
    projection = new_projection(est, noisy, sigma**2, (), session, project_rng)
    result = run_projection(est, projection, final=True)
    if est.representation_ != "records":
        return result
    # the records' non-negative weights leak mass from common values to rare ones: where
    # every marginal's unbiased sums find a value far off, the fit continues with its
    # calibrated share as a target (post-processing)
    sizes = workload.layout_.block_sizes
    estimates = one_way_estimates(noisy, est.measurement_variances_, est.measured_marginals_,
                                  workload.marginal_offsets_, sizes)
    targets = calibration_targets(result.records, result.weights, estimates, sizes)
    names = [c.name for c in workload.encoder_.coders]
    missing = {names.index(name): share for name, share in est.number_missing_.items()}
    targets = with_missing_shares(targets, missing, estimates, result.records, result.weights,
                                  sizes)
    if all(t is None for t in targets):
        return result
    return refit_to_shares(est, noisy, sigma**2, result, targets, session, project_rng)


def measure_by_selection(est, data, rounds, rng, session, project_rng):
    """Adaptive selection (:mod:`._selection`): 1-way marginals, then ``rounds`` planned rounds."""
    workload = est.workload_
    layout = workload.layout_
    n, d = data.n_rows, layout.n_attributes
    candidates = candidate_marginals(workload.marginal_set_.marginals, layout.block_sizes)
    # PRIVATE: the true answers of every candidate, read only by the mechanisms
    # inside measure_adaptively; the model below never sees them.
    truth = data.answers(candidates.marginals)
    if est.representation_ == "graphical":
        model = GraphicalFit(layout.block_sizes, candidates, est.max_iter)
    else:
        model = ProjectionFit(est, candidates, session, project_rng)
    measurements, chosen = measure_adaptively(
        truth, candidates, n, est.synthesis_rho_, est.ledger_, rng, model,
        n_rounds=d + rounds,
        selection_share=est.selection_share, margin=BUDGET_MARGIN)
    del truth
    est.measured_marginals_ = [candidates.marginals[m] for m, _ in chosen]
    est.marginal_measurements_ = {candidates.marginals[m]: (np.asarray(y), float(v))
                                  for m, (y, v) in measurements.items()}
    est.n_selection_rounds_ = len(chosen)
    return model.finish(est)


def measure_one_way_only(est, data, rng, session, project_rng):
    """The whole budget on the 1-way marginals of every column (sensitivity ``sqrt(2 d) / n``).

    The fit reads each column's answers mixed with uniform by
    :func:`~sklearn_privsyn.adaptive.shrink_one_way` (post-processing).

    Returns the final fit's result.
    """
    workload = est.workload_
    n = data.n_rows
    sizes = np.asarray(workload.layout_.block_sizes)
    Q = workload.n_queries_
    # PRIVATE: the true 1-way answers, read only by the Gaussian mechanism below.
    one_way_true = data.answers([(a,) for a in range(len(sizes))])
    sensitivity = math.sqrt(2.0 * len(sizes)) / n
    sigma = gaussian_sigma(sensitivity, est.synthesis_rho_ * (1.0 - BUDGET_MARGIN))
    est.ledger_.charge("gaussian_mechanism", gaussian_mechanism_rho(sensitivity, sigma))
    noisy = gaussian_mechanism(one_way_true, sensitivity, sigma, rng)
    est.measurements_ = np.full(Q, np.nan)
    est.measurement_variances_ = np.full(Q, np.inf)
    est.one_way_measurements_ = noisy
    est.measured_marginals_ = []
    # post-processing: each column's answers mixed with uniform where the noise is large
    targets, est.one_way_shrinkage_ = shrink_one_way(noisy, sizes, sigma)
    one_way = [(a,) for a in range(len(sizes))]
    if est.representation_ == "graphical":  # the independence model, by mirror descent
        model = GraphicalFit(sizes, candidate_marginals(one_way, sizes), est.max_iter)
        start = np.concatenate([[0], np.cumsum(sizes)])
        model.refit({a: (targets[start[a]:start[a + 1]], sigma**2) for a in range(len(sizes))})
        return model.finish(est)
    projection = new_projection(
        est,
        np.concatenate([np.zeros(Q), targets]),
        np.concatenate([np.full(Q, np.inf), np.full(len(noisy), sigma**2)]),
        one_way, session, project_rng)
    return run_projection(est, projection, final=True)
