"""Vectorised block coordinate ascent: a fast, inexact oracle."""

from __future__ import annotations

import numpy as np

from ._base import OneHotLayout, linear_argmax
from ._compile import CompiledProblem, compile_problem
from ._session import BaseSession

__all__ = ["HeuristicOracle", "coordinate_ascent"]


def _unsatisfied(comp: CompiledProblem, records: np.ndarray) -> np.ndarray:
    """Number of unsatisfied literals of each query for each record, (r, m)."""
    if comp.attr.shape[0] == 0:
        return np.zeros((records.shape[0], 0), dtype=np.intp)
    vals = records[:, np.maximum(comp.attr, 0)]  # (r, m, k)
    miss = (vals != comp.code) & comp.valid
    return miss.sum(axis=2)


class _AttributeMoves:
    """Per-attribute data of the queries touching it (for coordinate steps)."""

    def __init__(self, layout: OneHotLayout, comp: CompiledProblem, linear: np.ndarray):
        self.blocks = []
        starts, sizes = layout.starts, layout.block_sizes
        weights = comp.sign * comp.weights
        for a in range(layout.n_attributes):
            qi, kj = np.nonzero((comp.attr == a) & comp.valid & (comp.weights > 0)[:, None])
            codes = comp.code[qi, kj]
            # scatter matrix: gain (r, e) @ scatter (e, b) -> score per value
            scatter = np.zeros((len(qi), sizes[a]))
            scatter[np.arange(len(qi)), codes] = weights[qi]
            lin = linear[starts[a]:starts[a] + sizes[a]]
            self.blocks.append((qi, codes, scatter, lin))


def coordinate_ascent(problem, starts, rng, comp=None, max_passes=100, tol=1e-9):
    """Improve a batch of records by exact best-response moves, one attribute at a time.

    Parameters
    ----------
    problem : OracleProblem
    starts : ndarray of int, shape (r, n_attributes)
        Start records (modified copies are returned).
    rng : numpy.random.Generator
        Shuffles the attribute order of each pass.
    comp : CompiledProblem, optional

    Returns
    -------
    records : ndarray, shape (r, n_attributes)
        Local optima: no single attribute change improves any of them.
    """
    layout = problem.layout
    comp = compile_problem(problem) if comp is None else comp
    records = np.array(starts, dtype=np.intp, copy=True)
    moves = _AttributeMoves(layout, comp, problem.linear)
    unsat = _unsatisfied(comp, records)
    rows = np.arange(records.shape[0])
    n_att = layout.n_attributes
    for _ in range(max_passes):
        changed = False
        for a in rng.permutation(n_att):
            qi, codes, scatter, lin = moves.blocks[a]
            cur = records[:, a]
            if len(qi):
                mismatch = cur[:, None] != codes[None, :]  # (r, e)
                others = unsat[:, qi] - mismatch
                score = lin[None, :] + (others == 0) @ scatter
            else:
                score = np.broadcast_to(lin, (records.shape[0], len(lin)))
            best = np.argmax(score, axis=1)
            better = score[rows, best] > score[rows, cur] + tol
            if not better.any():
                continue
            changed = True
            new = np.where(better, best, cur)
            if len(qi):
                unsat[:, qi] += (new[:, None] != codes[None, :]).astype(np.intp) - mismatch
            records[:, a] = new
        if not changed:
            break
    return records


class HeuristicOracle:
    """Fast inexact oracle: vectorised block coordinate ascent with restarts.

    Each attribute in turn is set to its best value with the others fixed
    until no single change improves the record. Starts: the maximiser of the
    linear term, the best records of earlier calls in the session, and
    ``n_restarts`` random records; all run as one batch. The result has status
    ``"heuristic"``: a valid record whose objective may be below the optimum.

    Parameters
    ----------
    n_restarts : int, default=8
        Random start records per call.
    max_passes : int, default=100
        Limit on passes over the attributes.
    memory : int, default=32
        Number of earlier solutions kept as warm starts.
    time_limit, mip_gap, threads : ignored
        Accepted for a uniform interface with the exact back-ends.
    verbose : bool, default=False

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.solvers import OneHotLayout, OracleProblem
    >>> layout = OneHotLayout((3, 3))
    >>> problem = OracleProblem(layout, literals=[[1, 5]], negated=[False],
    ...                         weights=[2.0], linear=np.zeros(6))
    >>> session = HeuristicOracle().session(layout, random_state=0)
    >>> result = session.solve(problem)
    >>> result.record.tolist(), result.objective, result.status
    ([1, 2], 2.0, 'heuristic')
    """

    name = "heuristic"

    def __init__(self, n_restarts=8, max_passes=100, memory=32, time_limit=None,
                 mip_gap=None, threads=None, verbose=False):
        self.n_restarts = n_restarts
        self.max_passes = max_passes
        self.memory = memory
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.verbose = verbose

    def __repr__(self):
        return f"HeuristicOracle(n_restarts={self.n_restarts})"

    def session(self, layout, random_state=None):
        return HeuristicSession(self, layout, random_state)


class SolutionPool:
    """Distinct records returned earlier in a session (warm starts).

    A problem that carries its own ``warm_starts`` uses those instead and
    leaves the pool as it was, so that its answer does not depend on which
    session solved the calls before it.
    """

    def __init__(self, n_attributes, size):
        self.size = int(size)
        self.records = np.zeros((0, n_attributes), dtype=np.intp)

    def starts_for(self, problem):
        """The call's warm starts: the problem's own, else the pool's records."""
        return self.records if problem.warm_starts is None else problem.warm_starts

    def remember(self, problem, record):
        """Keep ``record`` for later calls, unless the problem brought its own starts."""
        if problem.warm_starts is None:
            self.add(record)

    def add(self, record):
        if self.size <= 0:
            return
        record = np.asarray(record, dtype=np.intp)[None, :]
        same = np.all(self.records == record, axis=1)
        rest = self.records[~same]
        self.records = np.concatenate([record, rest])[: self.size]


def _query_moves(problem, comp, record):
    """Copies of ``record`` with all literals of one positive query imposed, (e, n_attributes)."""
    pos = np.flatnonzero((comp.sign > 0) & (comp.weights > 0))
    if len(pos) == 0:
        return np.zeros((0, len(record)), dtype=np.intp)
    attr, code, valid = comp.attr[pos], comp.code[pos], comp.valid[pos]
    satisfied = np.all((record[np.maximum(attr, 0)] == code) | ~valid, axis=1)
    attr, code, valid = attr[~satisfied], code[~satisfied], valid[~satisfied]
    cand = np.repeat(record[None, :], len(attr), axis=0)
    rows = np.repeat(np.arange(len(attr)), attr.shape[1])
    flat_valid = valid.ravel()
    cand[rows[flat_valid], attr.ravel()[flat_valid]] = code.ravel()[flat_valid]
    return cand


def heuristic_search(problem, rng, warm_starts=None, n_restarts=8, max_passes=100, comp=None,
                     n_kicks=20, n_kick_starts=16):
    """Best record found by local search, and its objective.

    Coordinate ascent runs from the linear maximiser, the ``warm_starts``
    (earlier solutions) and random records. Then, repeatedly, every positive query not
    met by the incumbent is imposed on it (all its literals at once: a move
    coordinate ascent cannot make, since it changes several attributes); the
    ``n_kick_starts`` best such records are improved by coordinate ascent and
    the incumbent is replaced when one of them beats it.
    """
    layout = problem.layout
    comp = compile_problem(problem) if comp is None else comp
    sizes = np.asarray(layout.block_sizes)
    starts = [linear_argmax(layout, problem.linear)[None, :]]
    if warm_starts is not None and len(warm_starts):
        starts.append(np.asarray(warm_starts, dtype=np.intp))
    if n_restarts > 0:
        starts.append((rng.random((n_restarts, layout.n_attributes)) * sizes).astype(np.intp))
    starts = np.concatenate(starts)
    found = coordinate_ascent(problem, starts, rng, comp=comp, max_passes=max_passes)
    values = problem.objective(found)
    best = int(np.argmax(values))
    record, value = found[best], float(values[best])
    for _ in range(n_kicks):
        cand = _query_moves(problem, comp, record)
        if len(cand) == 0:
            break
        cand_values = problem.objective(cand)
        top = np.argsort(-cand_values, kind="stable")[:n_kick_starts]
        found = coordinate_ascent(problem, cand[top], rng, comp=comp, max_passes=max_passes)
        values = problem.objective(found)
        best = int(np.argmax(values))
        if values[best] <= value + 1e-9:
            break
        record, value = found[best], float(values[best])
    return record, value


class HeuristicSession(BaseSession):
    """Session of :class:`HeuristicOracle` (keeps a pool of earlier solutions)."""

    def __init__(self, oracle, layout, random_state):
        super().__init__(oracle, layout, random_state)
        self.pool = SolutionPool(layout.n_attributes, oracle.memory)

    def _solve(self, problem, t0):
        record, _ = heuristic_search(
            problem, self._rng_for(problem), self.pool.starts_for(problem),
            self.oracle.n_restarts, self.oracle.max_passes,
        )
        self.pool.remember(problem, record)
        return record, "heuristic", float("inf")
