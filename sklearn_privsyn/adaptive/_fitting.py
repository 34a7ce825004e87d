"""Fitting AdaptiveProjection's representation to its noisy measurements.

Post-processing only: everything here reads the noisy answers and their
public variances, never the data. :func:`new_projection` and
:func:`run_projection` fit weighted records (``_projection.py``) or a
mixture of products (``_product_mixture.py``); during adaptive selection
the representation is refitted after every round through
:class:`GraphicalFit` (the graphical model, ``_graphical.py``) or
:class:`ProjectionFit` (records or products), which
:func:`~sklearn_privsyn.adaptive.measure_adaptively` drives.
"""

import dataclasses
import math

import numpy as np

from ._graphical import GraphicalModel, junction_tree_sizes
from ._product_mixture import ProductMixture
from ._projection import Projection, zeroed_targets
from ._rules import (
    GRAPHICAL_ITER_FACTOR,
    GRAPHICAL_MAX_CELLS,
    HOLD_BOOST,
    PRODUCT_ITER_FACTOR,
    WIDE_INNER_QP_ITER,
    WIDE_MARGINALS,
    hold_threshold,
    pair_zeros_apply,
    structural_zeros,
)

__all__ = ["GraphicalFit", "GraphicalResult", "ProjectionFit", "new_projection", "refit_to_shares",
           "run_projection"]


def new_projection(est, noisy, variances, extra, session, rng):
    """The records projection or the mixture of products that ``est`` fits to ``noisy``."""
    if est.representation_ == "products":
        n_components = 1 if est.n_rounds_ == 0 else est.n_components
        return ProductMixture(est.workload_, noisy, variances, n_components=n_components,
                              extra_marginals=extra, random_state=rng)
    return Projection(est.workload_, noisy, variances, extra_marginals=extra,
                      session=session, random_state=rng)


def _hold(est):
    """Records fitted to every marginal at once: the cells they miss are held (else None)."""
    return hold_threshold(est.workload_.n_queries_) if est.n_rounds_ == 1 else None


def _records_fit(est):
    """The records' final-fit settings: stopping, zero test, pair zeros and hold."""
    return dict(tol=est.tol, time_limit=est.time_limit, zero_test=est.zero_test_,
                pair_zeros=pair_zeros_apply(est.workload_.layout_.n_attributes),
                hold=_hold(est))


def _inner_qp_iter(est):
    """Re-weighting steps per Frank-Wolfe iteration of the records: all 300 on
    small workloads, 30 (then a final 300) from ``WIDE_MARGINALS`` marginals on,
    where each step costs ``n_records * n_marginals``."""
    return WIDE_INNER_QP_ITER if len(est.workload_.marginals_) >= WIDE_MARGINALS else None


def run_projection(est, projection, final):
    """Run the projection: to the end (``final``), or briefly inside adaptive rounds."""
    products = est.representation_ == "products"
    if not final:
        if products:
            return projection.run(max_iter=est.max_iter)
        return projection.run(max_iter=max(1, est.max_iter // 10), tol=est.tol)
    max_iter = PRODUCT_ITER_FACTOR * est.max_iter if products else est.max_iter
    bar = est._progress(max_iter)
    try:
        if products:
            result = projection.run(max_iter=max_iter, time_limit=est.time_limit,
                                    progress=None if bar is None else _reporter(bar))
            if est.zero_test_ is not None:
                # continue against the zeroed answers; report the objective against
                # the measured ones, as the records' re-weighting does
                noisy, precision = projection.target, projection.precision
                with np.errstate(divide="ignore"):
                    variances = 1.0 / precision
                projection.update_targets(
                    zeroed_targets(noisy, precision, est.zero_test_), variances)
                result = projection.run(max_iter=est.max_iter)
                projection.update_targets(noisy, variances)
                result = dataclasses.replace(result, objective=projection.objective())
            return result
        return projection.run(max_iter=est.max_iter, inner_qp_iter=_inner_qp_iter(est),
                              progress=None if bar is None else _reporter(bar),
                              **_records_fit(est))
    finally:
        if bar is not None:
            bar.close()


def refit_to_shares(est, noisy, variance, result, targets, session, rng):
    """Continue the records' fit with the far-off values' calibrated shares as targets.

    Each column with a value off (``targets`` from
    :func:`~sklearn_privsyn.adaptive._calibration.calibration_targets`) becomes an extra
    1-way marginal: its far-off values take their calibrated share with ``HOLD_BOOST``
    times the precision of their estimate, its other values are not measured. Frank-Wolfe
    continues from the fitted records for ``max_iter // 10`` iterations of
    ``WIDE_INNER_QP_ITER`` re-weighting steps, with the final fit's settings
    (``tol``, ``time_limit``, zero test, pair zeros, hold), so that the measurements
    place the mass taken off those values. Post-processing of the noisy answers.
    """
    extra = tuple((a,) for a, t in enumerate(targets) if t is not None)
    shares = [targets[a][0] for (a,) in extra]
    variances = [np.where(targets[a][1], targets[a][2] ** 2 / HOLD_BOOST, np.inf)
                 for (a,) in extra]
    projection = Projection(est.workload_, np.concatenate([noisy, *shares]),
                            np.concatenate([np.broadcast_to(variance, len(noisy)), *variances]),
                            extra_marginals=extra, session=session, random_state=rng)
    projection.warm_start(result.records, result.weights)
    return projection.run(max_iter=max(1, est.max_iter // 10), inner_qp_iter=WIDE_INNER_QP_ITER,
                          **_records_fit(est))


@dataclasses.dataclass(frozen=True)
class GraphicalResult:
    model: GraphicalModel
    objective: float
    n_iter: int
    stop_reason: str


class GraphicalFit:
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
        allowed = np.array([any(set(m) <= c for c in cliques) for m in candidates.marginals],
                           dtype=bool)
        others = np.flatnonzero(~allowed)  # a marginal outside every clique changes the tree
        sizes = junction_tree_sizes(self.sizes, self.model.marginals,
                                    [candidates.marginals[i] for i in others])
        allowed[others] = np.asarray(sizes, dtype=float) <= limit
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
            self.model.fit(targets, precisions, max_iter=GRAPHICAL_ITER_FACTOR * self.max_iter)
        except FloatingPointError:  # the zeros leave no possible row: fit without them
            self.model.clear_zeros()
            self.model.fit(targets, precisions, max_iter=GRAPHICAL_ITER_FACTOR * self.max_iter)
        return GraphicalResult(self.model, self.model.objective_, self.model.n_iter_,
                                "max_iter" if self.model.n_iter_ >= GRAPHICAL_ITER_FACTOR
                                * self.max_iter else "converged")


class ProjectionFit:
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
            self.projection = new_projection(self.est, noisy, variances, self.extra,
                                                       self.session, self.rng)
        else:
            self.projection.update_targets(noisy, variances)
        run_projection(self.est, self.projection, final=False)

    def answers(self, indices):
        answers = self.projection.answers()
        return np.concatenate([answers[self.slices[i]] for i in indices])

    def admissible(self, candidates, progress):
        return np.ones(len(candidates.marginals), dtype=bool)

    def finish(self, est):
        return run_projection(est, self.projection, final=True)


def _reporter(bar):
    """A projection progress callback that advances ``bar`` and shows the objective (and gap)."""

    def update(iteration, value, gap=None):
        bar.update(1)
        if gap is None:
            bar.set_postfix(objective=f"{value:.4g}")
        else:
            bar.set_postfix(objective=f"{value:.4g}", gap=f"{gap:.3g}")

    return update
