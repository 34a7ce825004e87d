"""Exact oracle on highspy, with one incrementally updated model per session."""

from __future__ import annotations

import math
import time

import numpy as np

from ._compile import candidate_columns, compile_problem
from ._session import BaseSession
from ._highs_runtime import DEFAULT_HIGHS_OPTIONS, check_highs_params, new_highs, use_thread_count
from .heuristic import SolutionPool, heuristic_search

__all__ = ["HighsOracle"]

class HighsOracle:
    """Exact oracle solving a mixed-integer program with HiGHS (through highspy).

    The session keeps one HiGHS model alive. A query id seen for the first
    time adds a variable ``c_i`` and its rows; later calls only change
    objective coefficients (the query weights, 0 for queries absent from the
    call, and the linear term) and bounds. Formulation, for binary one-hot
    ``x`` with one 1 per attribute block:

    * positive query: ``c_i <= x_j`` for each literal ``j`` (``"tight"``) or
      ``k c_i <= sum_j x_j`` (``"aggregated"``, the paper's form);
    * negated query: ``c_i + sum_j x_j <= k``, i.e. ``c_i <= sum_j (1 - x_j)``;
    * maximise ``sum_i w_i c_i + <linear, x>`` with ``0 <= c_i <= 1``.

    With ``x`` integral and ``w_i >= 0`` the maximum puts every ``c_i`` at its
    query's value, so ``c`` may be continuous (``c_integer=False``, default).
    Each solve starts from the best record of a coordinate-ascent heuristic
    warm-started from earlier solutions, and values that cannot be needed by an
    optimum (in no positive query and dominated by an untouched value of the
    same attribute) are fixed to 0.

    Parameters
    ----------
    time_limit : float or None, default=None
        Seconds per solve; on time-out the best record found is returned with
        status ``"time_limit"``.
    mip_gap : float or None, default=1e-6
        Relative optimality gap at which HiGHS stops (``None``: HiGHS default).
    threads : int or None, default=1
        HiGHS threads (``None``: HiGHS default).
    verbose : bool, default=False
        Show the solver log.
    formulation : {"tight", "aggregated"}, default="tight"
    c_integer : bool, default=False
        Declare the query variables integer (not needed for exactness).
    presolve : bool, default=True
    mip_start : bool, default=True
        Pass the heuristic's record to HiGHS as a starting solution.
    reduce : bool, default=True
        Fix dominated values to 0 before solving.
    lp_check : bool, default=True
        Solve the LP relaxation first; when its bound does not exceed the
        start's objective (within the gap), return the start as optimal
        without running the MIP.
    n_restarts : int, default=4
        Random restarts of the heuristic that provides the start.
    options : dict or None, default=None
        HiGHS options overriding :data:`DEFAULT_HIGHS_OPTIONS` (probing and
        HiGHS's own primal heuristics off), e.g. ``{"mip_heuristic_effort": 0.05}``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.solvers import OneHotLayout, OracleProblem
    >>> layout = OneHotLayout((3, 3))
    >>> problem = OracleProblem(layout, literals=[[1, 5], [1, 3]], negated=[False, True],
    ...                         weights=[2.0, 1.0], linear=np.zeros(6))
    >>> session = HighsOracle().session(layout, random_state=0)
    >>> result = session.solve(problem)
    >>> result.record.tolist(), result.objective, result.status
    ([1, 2], 3.0, 'optimal')
    >>> session.close()
    """

    name = "highs"

    def __init__(self, time_limit=None, mip_gap=1e-6, threads=1, verbose=False, *,
                 formulation="tight", c_integer=False, presolve=True, mip_start=True,
                 reduce=True, lp_check=True, n_restarts=4, options=None):
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.verbose = verbose
        self.formulation = formulation
        self.c_integer = c_integer
        self.presolve = presolve
        self.mip_start = mip_start
        self.reduce = reduce
        self.lp_check = lp_check
        self.n_restarts = n_restarts
        self.options = options

    def __repr__(self):
        return (f"HighsOracle(time_limit={self.time_limit}, mip_gap={self.mip_gap}, "
                f"threads={self.threads}, formulation={self.formulation!r})")

    def session(self, layout, random_state=None):
        check_highs_params(self)
        if self.formulation not in ("tight", "aggregated"):
            raise ValueError(
                f"formulation must be 'tight' or 'aggregated'; got {self.formulation!r}."
            )
        return HighsSession(self, layout, random_state)


class HighsSession(BaseSession):
    """Session of :class:`HighsOracle`: one live HiGHS model, grown per new query id."""

    def __init__(self, oracle, layout, random_state):
        super().__init__(oracle, layout, random_state)
        self.seed = int(self.rng.integers(0, 2**31 - 1))
        self.pool = SolutionPool(layout.n_attributes, 32)
        self.highs = None

    # -- model --------------------------------------------------------------
    def _build(self):
        import highspy

        o = self.oracle
        h = new_highs(o.verbose)
        inf = highspy.kHighsInf
        d = self.layout.n_features
        h.setOptionValue("random_seed", self.seed)
        use_thread_count(o.threads)
        if o.threads is not None:
            h.setOptionValue("threads", int(o.threads))
        if o.mip_gap is not None:
            h.setOptionValue("mip_rel_gap", float(o.mip_gap))
        h.setOptionValue("presolve", "on" if o.presolve else "off")
        for key, value in {**DEFAULT_HIGHS_OPTIONS, **(o.options or {})}.items():
            if h.setOptionValue(key, value) != highspy.HighsStatus.kOk:
                raise ValueError(f"HiGHS rejected option {key}={value!r}.")
        h.addVars(d, np.zeros(d), np.ones(d))
        h.changeColsIntegrality(
            d, np.arange(d, dtype=np.int32), np.full(d, highspy.HighsVarType.kInteger)
        )
        starts = self.layout.starts
        n_att = self.layout.n_attributes
        h.addRows(
            n_att, np.ones(n_att), np.ones(n_att), d,
            np.asarray(starts, dtype=np.int32), np.arange(d, dtype=np.int32), np.ones(d),
        )
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        self.highs = h
        self.inf = inf
        self.col_of = {}       # query id -> column of c_i
        self.sig_of = {}       # query id -> (literal tuple, negated)
        self.raw_of = {}       # query id -> (literal row bytes, negated): the quick check
        self.n_cols = d

    def _add_queries(self, problem, new):
        import highspy

        h = self.highs
        o = self.oracle
        n_new = len(new)
        first = self.n_cols
        h.addVars(n_new, np.zeros(n_new), np.ones(n_new))
        # the aggregated row k c <= sum x_j allows c = 2/3 with two literals
        # met, so there c must be integer; the tight rows make it integral
        if o.c_integer or o.formulation == "aggregated":
            h.changeColsIntegrality(
                n_new, np.arange(first, first + n_new, dtype=np.int32),
                np.full(n_new, highspy.HighsVarType.kInteger),
            )
        lower, upper, row_starts, index, value = [], [], [], [], []
        for offset, i in enumerate(new):
            col = first + offset
            lits = problem.literals[i]
            lits = np.unique(lits[lits >= 0])
            k = len(lits)
            qid = int(problem.query_ids[i])
            self.col_of[qid] = col
            self.sig_of[qid] = (tuple(lits.tolist()), bool(problem.negated[i]))
            self.raw_of[qid] = (problem.literals[i].tobytes(), bool(problem.negated[i]))
            if problem.negated[i]:
                # c + sum x_j <= k
                row_starts.append(len(index))
                index.extend([col, *lits.tolist()])
                value.extend([1.0] * (k + 1))
                lower.append(-self.inf)
                upper.append(float(k))
            elif o.formulation == "tight":
                for j in lits.tolist():
                    row_starts.append(len(index))
                    index.extend([col, j])
                    value.extend([1.0, -1.0])
                    lower.append(-self.inf)
                    upper.append(0.0)
            else:
                row_starts.append(len(index))
                index.extend([col, *lits.tolist()])
                value.extend([float(k)] + [-1.0] * k)
                lower.append(-self.inf)
                upper.append(0.0)
        h.addRows(
            len(lower), np.asarray(lower), np.asarray(upper), len(index),
            np.asarray(row_starts, dtype=np.int32), np.asarray(index, dtype=np.int32),
            np.asarray(value, dtype=float),
        )
        self.n_cols += n_new

    def _verify_ids(self, problem):
        """Raise if a known query id now has different literals."""
        if self.highs is None:
            return
        for i, qid in enumerate(problem.query_ids.tolist()):
            known = self.sig_of.get(qid)
            if known is None:
                continue
            if self.raw_of[qid] == (problem.literals[i].tobytes(), bool(problem.negated[i])):
                continue  # the very row first seen: no need to canonicalise
            lits = problem.literals[i]
            sig = (tuple(np.unique(lits[lits >= 0]).tolist()), bool(problem.negated[i]))
            if sig != known:
                raise ValueError(
                    f"query id {qid} was first seen with literals/negation {known} "
                    f"and now has {sig}; query ids must be stable within a session."
                )

    def _sync(self, problem):
        """Add unseen queries; return the columns of this call's queries."""
        cols = np.empty(problem.n_queries, dtype=np.int32)
        new = []
        for i, qid in enumerate(problem.query_ids.tolist()):
            col = self.col_of.get(qid)
            if col is None:
                new.append(i)
                continue
            cols[i] = col
        if new:
            self._add_queries(problem, new)
            for i in new:
                cols[i] = self.col_of[int(problem.query_ids[i])]
        return cols

    # -- solve --------------------------------------------------------------
    def _check_problem(self, problem):
        super()._check_problem(problem)
        # a malformed problem raises here, outside the fallback's reach
        self._verify_ids(problem)

    def _solve(self, problem, t0):
        import highspy

        o = self.oracle
        if self.highs is None:
            self._build()
        cols = self._sync(problem)
        h = self.highs
        d = self.layout.n_features
        n = self.n_cols
        comp = compile_problem(problem)

        # start record: heuristic from the linear maximiser, earlier solutions, restarts
        start, start_value = heuristic_search(
            problem, self._rng_for(problem), self.pool.starts_for(problem), o.n_restarts,
            comp=comp,
        )

        cost = np.zeros(n)
        cost[:d] = problem.linear
        cost[cols] = problem.weights
        upper = np.zeros(n)
        upper[:d] = 1.0
        upper[cols] = 1.0
        if o.reduce:
            keep = candidate_columns(problem, comp)
            keep[self.layout.starts + start] = True  # the start must stay feasible
            upper[:d] = keep
        all_cols = np.arange(n, dtype=np.int32)
        h.changeColsCost(n, all_cols, cost)
        h.changeColsBounds(n, all_cols, np.zeros(n), upper)

        if o.time_limit is not None:
            remaining = float(o.time_limit) - (time.perf_counter() - t0)
            if remaining <= 0:
                return start, "time_limit", float("inf")
            # time_limit applies to each run separately
            h.setOptionValue("time_limit", max(remaining, 1e-3))

        if o.lp_check:
            # The LP relaxation is often tight: when its bound does not exceed
            # the heuristic's value, the start is optimal and no MIP is needed.
            lp_bound = self._lp_bound(d)
            if lp_bound is not None and lp_bound <= start_value + self._tolerance(start_value):
                self.pool.remember(problem, start)
                return start, "optimal", max(lp_bound, start_value)
            if o.time_limit is not None:
                remaining = float(o.time_limit) - (time.perf_counter() - t0)
                if remaining <= 0:
                    return start, "time_limit", lp_bound if lp_bound is not None else np.inf
                h.setOptionValue("time_limit", max(remaining, 1e-3))

        if o.mip_start:
            sol = np.zeros(n)
            sol[self.layout.starts + start] = 1.0
            if problem.n_queries:
                sol[cols] = problem.query_values(start)[0]
            h.setSolution(n, all_cols, sol)

        h.run()
        status = h.getModelStatus()
        info = h.getInfo()
        ms = highspy.HighsModelStatus
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        bound = float(info.mip_dual_bound) if math.isfinite(info.mip_dual_bound) else np.inf
        if status == ms.kOptimal:
            kind = "optimal"
        elif status in (ms.kTimeLimit, ms.kInterrupt, ms.kIterationLimit,
                        ms.kSolutionLimit, ms.kObjectiveBound, ms.kObjectiveTarget):
            kind = "time_limit"
        else:
            raise RuntimeError(f"HiGHS ended with model status {h.modelStatusToString(status)}")
        if has_solution:
            x = np.asarray(h.getSolution().col_value[:d])
            record = self.layout.from_onehot(np.round(x))[0]
            if float(problem.objective(record)[0]) < start_value:
                record = start
        elif kind == "time_limit":
            record = start
        else:
            raise RuntimeError("HiGHS reported optimal but returned no feasible solution")
        if kind == "optimal" and not np.isfinite(bound):
            bound = float(problem.objective(record)[0])
        self.pool.remember(problem, record)
        return record, kind, bound

    def _tolerance(self, value):
        gap = self.oracle.mip_gap
        rel = 1e-4 if gap is None else gap  # HiGHS's default relative gap
        return max(1e-7, rel * abs(value))

    def _lp_bound(self, d):
        """Optimal value of the LP relaxation (``None`` if it did not solve)."""
        import highspy

        h = self.highs
        idx = np.arange(d, dtype=np.int32)
        h.changeColsIntegrality(d, idx, np.full(d, highspy.HighsVarType.kContinuous))
        try:
            h.run()
            ok = h.getModelStatus() == highspy.HighsModelStatus.kOptimal
            value = float(h.getInfo().objective_function_value) if ok else None
        finally:
            h.changeColsIntegrality(d, idx, np.full(d, highspy.HighsVarType.kInteger))
        return value

    def _after_failure(self):
        # rebuild the model from scratch on the next call
        self.highs = None

    def close(self):
        if self.highs is not None:
            try:
                self.highs.clear()
            finally:
                self.highs = None
        super().close()
