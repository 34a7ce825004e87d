"""Projection of noisy marginal answers onto weighted synthetic records.

Given noisy answers ``y`` to the cells of a workload's marginals and their variances,
find the mixture of records whose answers ``a(w)`` minimise the weighted squared error

    f(w) = 1/2 * sum_c (a_c(w) - y_c)**2 / var_c

over all distributions ``w`` on the record domain (Nikolov, Talwar and Zhang 2013's projection
mechanism, in a weighted l2 norm; cells of infinite variance do not count). It reads only the
noisy answers: post-processing, whatever the solver does.

The method is a fully corrective Frank-Wolfe (column generation):

* the gradient of ``f`` with respect to the weight of a record ``x`` is
  ``s(x) = sum_m r[cell_m(x)]`` with cell residuals ``r_c = (a_c - y_c) /
  var_c``: pricing a new record is a MAP problem, minimise a sum of one table
  per marginal over records. A vectorised coordinate descent (one attribute at
  a time, all its values at once, from many starts) prices records quickly;
  an optimisation oracle (HiGHS by default) then takes the cells with the
  largest ``|r|`` as weighted conjunctions (a positive residual is a
  negation) to look for a better record, and is exact when it sees every
  cell with a non-zero residual;
* the weights over the active records are re-optimised each iteration: a small
  simplex-constrained least squares whose Gram matrix counts, weighted by inverse
  variance, the marginals on which two records agree (FISTA with restarts).

The Frank-Wolfe gap ``sum_i w_i s(x_i) - min_x s(x)`` bounds ``f(w) - f*`` when the minimum
over records is exact; else it is the gap to the best record found (``gap_certified``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._random import make_generator
from ..marginals import MarginalSet
from ..simplex import project_to_simplex
from ..solvers import OracleProblem
from ._pair_zeros import records_holding, structural_pair_zeros
from ._rules import HOLD_BOOST, HOLD_PASSES, HOLD_RECORDS_PER_CELL

__all__ = ["MarginalCells", "Projection", "ProjectionResult", "checked_targets", "project",
           "zeroed_targets"]


class MarginalCells:
    """Cell index of records in each marginal of a fitted workload (and extra marginals).

    A view of the workload's :class:`~sklearn_privsyn.marginals.MarginalSet`
    (its ``layout_`` and ``marginal_set_``), extended by ``extra`` marginals,
    with the workload's numbering: within a marginal, cells are in C order of
    its columns' codes; cells of ``extra`` marginals are numbered after the
    workload's. It adds what the projection's pricing needs: unchecked integer
    cell lookups and, per attribute, the marginals holding it.

    Parameters
    ----------
    workload : QueryWorkload
        A fitted workload.
    extra : sequence of tuples of int, default=()
        More marginals, as tuples of attribute indices.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 1], "b": [2, 0], "c": [1, 1]})
    >>> wl = QueryWorkload(domain={"a": 2, "b": 3, "c": 2}, k=2).fit(X)
    >>> MarginalCells(wl).cells([[1, 2, 0]]).tolist()  # (a, b), (a, c), (b, c)
    [[5, 8, 14]]
    >>> MarginalCells(wl, extra=[(1,)]).cells([[1, 2, 0]]).tolist()  # and (b,)
    [[5, 8, 14, 18]]
    """

    def __init__(self, workload, extra=()):
        marginals = tuple(workload.marginal_set_.marginals)
        marginals += tuple(tuple(int(a) for a in m) for m in extra)
        self._set = MarginalSet(workload.layout_, marginals)
        self.marginals = marginals
        self.sizes = np.asarray(workload.layout_.block_sizes, dtype=np.int64)
        self.offsets = self._set.offsets.astype(np.int64)
        self.n_cells = self._set.n_queries
        self.n_marginals = self._set.n_marginals
        self.multipliers = self._set.multipliers
        # attribute -> (marginals holding it, its multiplier in each)
        self.by_attribute = [
            (np.flatnonzero(self.multipliers[a]), self.multipliers[a][self.multipliers[a] > 0])
            for a in range(len(self.sizes))
        ]

    def cells(self, records):
        """Cell id (offset included) of each record in each marginal, ``(n, n_marginals)``."""
        # The pricing loop's hot path: integer arithmetic, no record checks.
        records = np.asarray(records, dtype=np.int64)
        return records @ self.multipliers + self.offsets[:-1]

    def answers(self, records, weights):
        """Weighted answers ``a(w)`` of all cells, shape ``(n_cells,)``."""
        return self._set.counts(records, weights)

    def literals(self, cell_ids):
        """One-hot columns of each cell's conjunction, ``(m, kmax)`` padded with -1."""
        literals, _ = self._set.query_literals(np.asarray(cell_ids, dtype=np.int64))
        return literals


@dataclass(frozen=True)
class ProjectionResult:
    """Records and weights found by :func:`project`, with the solver's figures.

    Attributes
    ----------
    records : ndarray of shape (n_records, n_attributes)
        Distinct records in code space.
    weights : ndarray of shape (n_records,)
        Their probabilities (positive, summing to one).
    objective : float
        ``f(w) = 1/2 sum_c (a_c(w) - y_c)**2 / var_c``.
    gap : float
        Frank-Wolfe gap at the end: ``f(w) - f* <= gap`` when certified.
    gap_certified : bool
        Whether the last pricing was exact (every cell with a non-zero
        residual went to an exact oracle), so that ``gap`` bounds the
        distance to the optimum.
    n_iter : int
        Frank-Wolfe iterations.
    n_columns : int
        Records priced into the active set over the run.
    stop_reason : str
        ``"gap"``, ``"max_iter"``, ``"time_limit"`` or ``"no_column"``.
    seconds : float
        Wall-clock time.
    """

    records: np.ndarray
    weights: np.ndarray
    objective: float
    gap: float
    gap_certified: bool
    n_iter: int
    n_columns: int
    stop_reason: str
    seconds: float


def checked_targets(noisy, variances, n_cells):
    """Precisions ``1 / var`` and targets (0 where not measured) of noisy answers, checked."""
    noisy = np.broadcast_to(np.asarray(noisy, dtype=float), (n_cells,))
    if np.ndim(variances) == 0:
        # one variance for every cell: read-only views, no arrays of n_cells
        if not variances > 0:
            raise ValueError("variances must be positive (inf for cells not measured).")
        precision = np.broadcast_to(1.0 / float(variances), (n_cells,))
        if precision[0] == 0:
            return precision, np.broadcast_to(0.0, (n_cells,))
        if not np.isfinite(noisy).all():
            raise ValueError("noisy answers must be finite where measured.")
        return precision, noisy
    variances = np.broadcast_to(np.asarray(variances, dtype=float), (n_cells,))
    if np.any(~(variances > 0)):
        raise ValueError("variances must be positive (inf for cells not measured).")
    precision = 1.0 / variances
    if not np.all(np.isfinite(noisy) | (precision == 0)):
        raise ValueError("noisy answers must be finite where measured.")
    return precision, np.where(precision > 0, noisy, 0.0)


def zeroed_targets(target, precision, z):
    """``target`` with every answer below ``z`` noise standard deviations set to zero."""
    if np.ndim(precision) == 1 and precision.strides[0] == 0:  # one precision for all cells
        threshold = z / np.sqrt(precision[0]) if precision[0] > 0 else np.inf
        return np.where(target < threshold, 0.0, target)
    with np.errstate(divide="ignore"):
        sd = 1.0 / np.sqrt(precision)  # inf where not measured
    return np.where(target < z * sd, 0.0, target)


def _local_cells(cells, n_cells):
    """The distinct cells in ``cells`` (sorted) and each entry's index among them.

    ``np.unique(cells, return_inverse=True)`` without the sort: a marker over
    the ``n_cells`` cell ids, ``O(n_cells + cells.size)``.
    """
    mark = np.zeros(n_cells, dtype=bool)
    mark[cells.ravel()] = True
    used = np.flatnonzero(mark)
    if n_cells > 8 * cells.size:  # a binary search each, rather than an index of every cell
        return used, np.searchsorted(used, cells)
    index = np.cumsum(mark, dtype=np.int64) - 1
    return used, index[cells]


def _simplex_qp(cells, precision, target, w, max_iter, tol, power_iter=30, held=None):
    """Re-optimise the weights of the active records: FISTA on the simplex.

    Minimises ``1/2 sum_c precision_c (a_c(w) - target_c)**2`` over the
    simplex, where record ``i`` lies in cells ``cells[i]``. The Gram matrix
    (inverse-variance weighted count of the marginals two records agree on)
    is never formed: with the sparse incidence matrix ``A`` (a record's row
    holds a 1 in each cell it lies in, numbered among the cells the active
    records touch) a product with it is ``A (lambda * (A^T v))``,
    ``O(n_records * n_marginals)``. The momentum restarts when it points
    uphill (O'Donoghue and Candes 2015); stops when no weight moves by more
    than ``tol``. ``held``, ``(cell ids, answers, factor)``: those (touched) cells
    take those targets and their precision times ``factor``.
    """
    n_records, n_marginals = cells.shape
    used, local = _local_cells(cells, len(precision))
    lam, y = precision[used], target[used]
    if held is not None:
        at = np.searchsorted(used, held[0])
        lam[at] *= held[2]
        y[at] = held[1]
    incidence = sp.csr_matrix(
        (np.ones(local.size), local.ravel(), np.arange(0, local.size + 1, n_marginals)),
        shape=(n_records, len(used)),
    )
    transposed = incidence.T.tocsr()

    def gram_times(v):
        return incidence @ (lam * (transposed @ v))

    linear = incidence @ (lam * y)
    v = np.full(len(w), 1.0 / np.sqrt(len(w)))
    for _ in range(power_iter):  # largest eigenvalue of the Gram matrix, by power iteration
        u = gram_times(v)
        norm = np.linalg.norm(u)
        if norm == 0:
            return w
        v = u / norm
    # power iteration approaches the eigenvalue from below: a few iterations get a margin
    step = 1.0 / ((1.05 if power_iter >= 30 else 1.2) * float(v @ gram_times(v)))
    z, t, x = w.copy(), 1.0, w.copy()
    for _ in range(max_iter):
        x_new = project_to_simplex(z - step * (gram_times(z) - linear))
        if (z - x_new) @ (x_new - x) > 0:  # restart the momentum
            t = 1.0
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        z = x_new + ((t - 1.0) / t_new) * (x_new - x)
        moved = float(np.max(np.abs(x_new - x)))
        x, t = x_new, t_new
        if moved <= tol:
            break
    return x


class Projection:
    """Projection of noisy answers onto mixtures of records (see :func:`project`).

    Keeps the state of one run (the active records and their weights) so
    that it can be continued with more measurements (adaptive rounds): call
    :meth:`update_targets` and :meth:`run` again. ``noisy`` and ``variances``
    index the workload's cells followed by those of ``extra_marginals``
    (tuples of attribute indices, see :class:`MarginalCells`).
    """

    def __init__(self, workload, noisy, variances, *, extra_marginals=(), session=None,
                 oracle_cells=128, n_starts=128, n_add=64, random_state=None):
        self.index = MarginalCells(workload, extra_marginals)
        self.layout = workload.layout_
        self.session = session
        self.oracle_cells = int(oracle_cells)
        self.n_starts = int(n_starts)
        self.n_add = int(n_add)
        self.rng = make_generator(random_state)
        self.records = np.zeros((0, len(self.index.sizes)), dtype=np.int64)
        self.cells = np.zeros((0, self.index.n_marginals), dtype=np.int64)
        self.weights = np.zeros(0)
        self.update_targets(noisy, variances)

    # -- targets -----------------------------------------------------------------
    def update_targets(self, noisy, variances):
        """Set the noisy answers and their variances (``inf``: not measured)."""
        self.precision, self.target = checked_targets(noisy, variances, self.index.n_cells)


    # -- objective ---------------------------------------------------------------
    def answers(self):
        """Answers of the current mixture, shape ``(n_cells,)``."""
        if len(self.weights) == 0:
            return np.zeros(self.index.n_cells)
        return self.index.answers(self.records, self.weights)

    def objective(self):
        """``f(w) = 1/2 sum_c precision_c (a_c - y_c)**2``."""
        return self._residuals()[1]

    def _residuals(self):
        """Cell residuals ``precision * (a - y)`` and the objective."""
        difference = self.answers()
        difference -= self.target
        residual = self.precision * difference
        return residual, 0.5 * float(residual @ difference)

    # -- pricing -----------------------------------------------------------------
    def _score(self, residual, records):
        return residual[self.index.cells(records)].sum(axis=1)

    def _coordinate_descent(self, residual, starts, max_sweeps=8):
        """Local minima of ``s(x)``, one attribute at a time, from each start."""
        x = np.array(starts, dtype=np.int64)
        cells = self.index.cells(x)
        n_attr = x.shape[1]
        for _ in range(max_sweeps):
            changed = False
            for a in self.rng.permutation(n_attr):
                ms, mult = self.index.by_attribute[a]
                if len(ms) == 0:
                    continue
                size = int(self.index.sizes[a])
                base = cells[:, ms] - x[:, a][:, None] * mult  # (S, |ms|)
                values = np.arange(size)
                costs = residual[base[:, :, None] + mult[None, :, None] * values].sum(axis=1)
                best = np.argmin(costs, axis=1)
                current = costs[np.arange(len(x)), x[:, a]]
                better = costs[np.arange(len(x)), best] < current - 1e-12 * np.abs(current)
                if better.any():
                    changed = True
                    new = np.where(better, best, x[:, a])
                    cells[:, ms] = base + new[:, None] * mult
                    x[:, a] = new
            if not changed:
                break
        return x

    def _starts(self):
        n_attr = len(self.index.sizes)
        n = self.n_starts
        starts = self.rng.integers(self.index.sizes, size=(n, n_attr))
        if len(self.weights):
            # Half of the starts: heavy active records with one attribute redrawn.
            k = min(n // 2, len(self.weights))
            p = self.weights / self.weights.sum()
            picked = self.rng.choice(len(self.weights), size=k, p=p)
            moved = self.records[picked].copy()
            a = self.rng.integers(n_attr, size=k)
            moved[np.arange(k), a] = self.rng.integers(self.index.sizes[a])
            starts[:k] = moved
        return starts

    def _oracle_record(self, residual):
        """Ask the oracle for ``min s(x)`` on the cells with the largest ``|r|``."""
        n_nonzero = int(np.count_nonzero(residual))
        if n_nonzero == 0:
            return None, True
        exact = n_nonzero <= self.oracle_cells
        if exact:
            nonzero = np.flatnonzero(residual)
        else:
            top = np.argpartition(-np.abs(residual), self.oracle_cells - 1)
            nonzero = np.sort(top[: self.oracle_cells])
        r = residual[nonzero]
        # min sum_c r_c q_c(x): a negative residual rewards cell c (weight -r on q_c), a
        # positive one its negation (weight r on 1 - q_c); ids 2c, 2c + 1 whatever is added
        ids = 2 * nonzero + (r > 0)
        problem = OracleProblem(
            layout=self.layout, literals=self.index.literals(nonzero), negated=r > 0,
            weights=np.abs(r), linear=np.zeros(self.layout.n_features), query_ids=ids,
        )
        result = self.session.solve(problem)
        return np.asarray(result.record, dtype=np.int64)[None, :], exact and result.status == "optimal"

    def _price(self, residual, use_oracle):
        """Candidate records, their scores, and whether the minimum is certified."""
        candidates = self._coordinate_descent(residual, self._starts())
        certified = False
        if use_oracle and self.session is not None:
            record, certified = self._oracle_record(residual)
            if record is not None:
                candidates = np.vstack([candidates, self._coordinate_descent(residual, record)])
        candidates = np.unique(candidates, axis=0)
        return candidates, self._score(residual, candidates), certified

    # -- the active set -------------------------------------------------------------
    def _add(self, new_records):
        new_cells = self.index.cells(new_records)
        self.records = np.vstack([self.records, new_records])
        self.cells = np.vstack([self.cells, new_cells])
        self.weights = np.concatenate([self.weights, np.zeros(len(new_records))])

    def warm_start(self, records, weights):
        """Start from ``records`` with ``weights`` (e.g. a fit to other targets)."""
        self._add(np.asarray(records, dtype=np.int64))
        self.weights = np.asarray(weights, dtype=float).copy()

    def _prune(self, keep):
        self.records, self.cells = self.records[keep], self.cells[keep]
        self.weights = self.weights[keep]

    def _known(self, candidates):
        if len(self.records) == 0:
            return np.zeros(len(candidates), dtype=bool)
        key = self.index.sizes
        radix = np.concatenate([np.cumprod(key[::-1])[::-1][1:], [1]]).astype(float)
        have = set((self.records @ radix).tolist())
        return np.array([v in have for v in (candidates @ radix).tolist()])

    # -- the loop ---------------------------------------------------------------------
    def refit_to_significant(self, z, qp_iter=300, pair_zeros=True):
        """Re-weight the active records against the answers that test above zero.

        A measured cell whose noisy answer is below ``z`` of its noise
        standard deviations cannot be told from an empty cell by a one-sided
        test at that level; its target becomes 0 and the weights of the
        active records (their support is kept) are re-optimised, by the same
        simplex least squares as each iteration. The l2 projection gives
        such cells a little mass each, taken from the large cells; over the
        many near-empty cells of a large marginal at small ``epsilon`` that
        is most of its error. With ``pair_zeros``, records that hold a
        structural zero of a pair of columns (:mod:`._pair_zeros`) are dropped
        first. Reads only the noisy answers and their variances:
        post-processing.
        """
        if len(self.weights) == 0:
            return
        held = np.zeros(len(self.records), dtype=bool)
        if pair_zeros:
            held = records_holding(
                self.records, structural_pair_zeros(self.index, self.target, self.precision, z))
        if held.any() and not held.all():
            self._prune(~held)
            self.weights = self.weights / self.weights.sum()
        target = zeroed_targets(self.target, self.precision, z)
        weights = _simplex_qp(self.cells, self.precision, target, self.weights, qp_iter, 1e-9)
        self.weights = weights
        self._prune(weights > 0)

    def hold_to_measurements(self, z, zero_test=None, qp_iter=300):
        """Re-weight with each cell the fit misses by more than ``z`` sd held to its answer.

        Over thousands of marginals the positive noise of near-empty cells draws mass
        from the few large ones, one of which can end many sd from its measurement
        (benchmarks/notes/wide.md). Such a cell takes its measured answer and its
        precision times ``HOLD_BOOST``; the weights are re-fitted (other targets zeroed
        below ``zero_test`` sd if set), ``HOLD_PASSES`` times at most, while the cells
        held are one per ``HOLD_RECORDS_PER_CELL`` records at most. Post-processing.
        """
        used, local = _local_cells(self.cells, self.index.n_cells)
        precision, measured = self.precision[used], self.target[used]
        held, target = np.zeros(len(used), dtype=bool), None
        for _ in range(HOLD_PASSES):
            answers = np.bincount(local.ravel(), minlength=len(used),
                                  weights=np.repeat(self.weights, local.shape[1]))
            fresh = (np.abs(answers - measured) * np.sqrt(precision) > z) & ~held
            room = len(self.weights) // HOLD_RECORDS_PER_CELL - np.count_nonzero(held)
            if not fresh.any() or np.count_nonzero(fresh) > room:
                break
            held |= fresh
            if target is None:
                target = (self.target if zero_test is None
                          else zeroed_targets(self.target, self.precision, zero_test))
            self.weights = _simplex_qp(self.cells, self.precision, target, self.weights, qp_iter,
                                       1e-9, held=(used[held], measured[held], HOLD_BOOST))
        self._prune(self.weights > 0)

    def run(self, *, max_iter=200, tol=1e-4, time_limit=None, qp_iter=300, inner_qp_iter=None,
            zero_test=None, pair_zeros=True, hold=None, progress=None):
        """Frank-Wolfe iterations until the relative gap is below ``tol``.

        Each iteration re-optimises the weights by ``inner_qp_iter``
        accelerated gradient steps from the previous weights (``qp_iter``
        when None); with fewer, the weights are polished by ``qp_iter`` steps
        at the end. With ``zero_test`` set, the weights are then re-fitted by
        :meth:`refit_to_significant` (``pair_zeros`` passed on), and with ``hold`` set
        by :meth:`hold_to_measurements`; ``objective`` and ``gap`` of the
        result stay those of the l2 projection (``objective`` at the final
        weights). With ``hold``, the gap must also reach ``hold**2 / 2`` per measured
        marginal (one cell ``hold`` sd off). Returns a :class:`ProjectionResult`.
        """
        inner = qp_iter if inner_qp_iter is None else min(int(inner_qp_iter), qp_iter)
        power = 30 if inner == qp_iter else 10
        t0 = time.perf_counter()
        n_columns, gap, certified, reason, it = 0, np.inf, False, "max_iter", 0
        cap = np.inf if hold is None else 0.5 * hold**2 * np.count_nonzero(
            np.add.reduceat(self.precision > 0, self.index.offsets[:-1]))  # measured marginals
        if len(self.weights) == 0:
            residual = self.precision * (-self.target)
            candidates, scores, _ = self._price(residual, use_oracle=True)
            first = candidates[np.argmin(scores)][None, :]
            self._add(first)
            self.weights = np.ones(1)
            n_columns = 1
        for it in range(1, max_iter + 1):
            residual, value = self._residuals()
            current = float(self.weights @ residual[self.cells].sum(axis=1))
            candidates, scores, certified = self._price(residual, use_oracle=False)
            fresh = (scores < current) & ~self._known(candidates)
            if not fresh.any() or current - scores.min() <= min(tol * value, cap):
                # Before stopping, let the oracle look for a better record (and certify).
                candidates, scores, certified = self._price(residual, use_oracle=True)
                fresh = (scores < current) & ~self._known(candidates)
            gap = max(0.0, current - float(scores.min()))
            if progress is not None:
                progress(it, value, gap)
            if gap <= min(tol * value, cap):
                reason = "gap"
                break
            if not fresh.any():
                reason = "no_column"
                break
            order = np.argsort(scores[fresh])[: self.n_add]
            self._add(candidates[fresh][order])
            n_columns += len(order)
            self.weights = _simplex_qp(self.cells, self.precision, self.target, self.weights,
                                       inner, 1e-9, power_iter=power)
            self._prune(self.weights > 0)
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                reason = "time_limit"
                break
        if inner < qp_iter and zero_test is None:
            self.weights = _simplex_qp(self.cells, self.precision, self.target, self.weights,
                                       qp_iter, 1e-9)
            self._prune(self.weights > 0)
        if zero_test is not None:
            self.refit_to_significant(zero_test, qp_iter, pair_zeros)
        if hold is not None:
            self.hold_to_measurements(hold, zero_test, qp_iter)
        weights = self.weights / self.weights.sum()
        return ProjectionResult(
            records=self.records.astype(np.intp),
            weights=weights,
            objective=self._residuals()[1],
            gap=float(gap),
            gap_certified=bool(certified),
            n_iter=it,
            n_columns=n_columns,
            stop_reason=reason,
            seconds=time.perf_counter() - t0,
        )


def project(workload, noisy, variances, *, session=None, max_iter=200, tol=1e-4,
            time_limit=None, zero_test=None, oracle_cells=128, n_starts=128, n_add=64,
            inner_qp_iter=None, random_state=None):
    """Weighted records whose answers best fit noisy answers, in inverse-variance l2.

    Minimises ``1/2 sum_c (a_c(w) - y_c)**2 / var_c`` over all distributions
    on records (see the module docstring for the method). Post-processing:
    it reads only ``noisy`` and ``variances``, never data.

    Parameters
    ----------
    workload : QueryWorkload
        A fitted workload; its cells are the answers' index.
    noisy : array-like of shape (n_queries_,)
        Noisy answers of the workload's cells (fractions of rows).
    variances : float or array-like of shape (n_queries_,)
        Their noise variances; ``inf`` marks a cell that was not measured.
    session : OracleSession, default=None
        An optimisation oracle session on ``workload.layout_``; without one
        the pricing is coordinate descent alone and the gap is not certified.
    max_iter : int, default=200
        Frank-Wolfe iterations at most.
    tol : float, default=1e-4
        Stop when the gap is below ``tol`` times the objective.
    time_limit : float, default=None
        Seconds; the best mixture so far is returned when exceeded.
    zero_test : float, default=None
        If set, the projection's records are re-weighted at the end against
        the noisy answers with those below ``zero_test`` noise standard
        deviations set to zero (:meth:`Projection.refit_to_significant`).
    oracle_cells : int, default=128
        Cells (largest residuals) handed to the oracle. HiGHS's time grows
        steeply with them: on a 24-column one-hot layout one call took 0.7,
        1.5, 5.4 and 24.7 s with 64, 128, 256 and 512 cells (loaded machine).
    n_starts : int, default=128
        Starts of the coordinate descent per pricing.
    n_add : int, default=64
        Records added to the active set per iteration at most.
    inner_qp_iter : int, default=None
        Accelerated gradient steps re-weighting the records in each iteration
        (from the previous weights), the final weights then polished by 300;
        None runs the full 300 every iteration.
    random_state : int, Generator or None, default=None
        Seed of the pricing's random starts.

    Returns
    -------
    result : ProjectionResult

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn_privsyn.workload import QueryWorkload
    >>> X = pd.DataFrame({"a": [0, 0, 1, 1], "b": [0, 1, 1, 1]})
    >>> wl = QueryWorkload(domain={"a": 2, "b": 2}, k=2).fit(X)
    >>> res = project(wl, wl.answer(X), 1e-4, random_state=0)
    >>> np.round(wl.answer_codes(res.records, res.weights), 3).tolist()
    [0.25, 0.25, 0.0, 0.5]
    """
    projection = Projection(workload, noisy, variances, session=session,
                            oracle_cells=oracle_cells, n_starts=n_starts, n_add=n_add,
                            random_state=random_state)
    return projection.run(max_iter=max_iter, tol=tol, time_limit=time_limit,
                          zero_test=zero_test, inner_qp_iter=inner_qp_iter)
