"""Exact oracle modelled with PuLP and solved by HiGHS."""

from __future__ import annotations

import numpy as np

from ._compile import candidate_columns, compile_problem
from ._session import BaseSession
from ._highs_runtime import DEFAULT_HIGHS_OPTIONS, check_highs_params, new_highs, use_thread_count
from .heuristic import SolutionPool, heuristic_search

__all__ = ["PulpHighsOracle"]


def _pulp_highs_class():
    """A ``pulp.HiGHS`` subclass that passes a MIP start and keeps the dual bound."""
    import pulp

    class _StartedHiGHS(pulp.HiGHS):
        start = None  # (indices of variables, values) set before each solve
        dual_bound = float("inf")

        def callSolver(self, lp):
            if self.start is not None:
                variables, values = self.start
                index = np.array([v.index for v in variables], dtype=np.int32)
                lp.solverModel.setSolution(len(index), index, np.asarray(values, dtype=float))
            lp.solverModel.run()
            info = lp.solverModel.getInfo()
            # PuLP hands HiGHS the minimisation of minus the objective
            self.dual_bound = -float(info.mip_dual_bound)

    return _StartedHiGHS


class PulpHighsOracle:
    """Exact oracle modelled with PuLP and solved by HiGHS.

    The same mixed-integer program as :class:`HighsOracle` ("tight"
    formulation, continuous query variables), written with PuLP and solved by
    ``pulp.HiGHS`` (the highspy interface), or by the ``highs`` executable
    through ``pulp.HiGHS_CMD`` when highspy is missing. The PuLP model is kept
    and extended across calls, but PuLP hands HiGHS a fresh copy each solve, so
    this back-end is slower than ``"highs"``; it exists for users who want to
    inspect or export the model (``session.model``).

    Parameters
    ----------
    time_limit : float or None, default=None
        Seconds per solve; on time-out the best record found is returned with
        status ``"time_limit"``.
    mip_gap : float or None, default=1e-6
        Relative optimality gap at which HiGHS stops.
    threads : int or None, default=1
    verbose : bool, default=False
        Show the solver log.
    solver : {"auto", "highspy", "cmd"}, default="auto"
        ``"auto"`` uses ``pulp.HiGHS`` when available, else ``pulp.HiGHS_CMD``.
    mip_start : bool, default=True
        Start HiGHS from the heuristic's record (highspy solver only).
    reduce : bool, default=True
        Fix dominated values to 0 (see :class:`HighsOracle`).
    options : dict or None, default=None
        HiGHS options overriding ``DEFAULT_HIGHS_OPTIONS`` (as in :class:`HighsOracle`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.solvers import OneHotLayout, OracleProblem
    >>> layout = OneHotLayout((3, 3))
    >>> problem = OracleProblem(layout, literals=[[1, 5], [1, 3]], negated=[False, True],
    ...                         weights=[2.0, 1.0], linear=np.zeros(6))
    >>> result = PulpHighsOracle().session(layout, random_state=0).solve(problem)
    >>> result.record.tolist(), result.objective, result.status
    ([1, 2], 3.0, 'optimal')
    """

    name = "pulp"

    def __init__(self, time_limit=None, mip_gap=1e-6, threads=1, verbose=False, *,
                 solver="auto", mip_start=True, reduce=True, n_restarts=4, options=None):
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.verbose = verbose
        self.solver = solver
        self.mip_start = mip_start
        self.reduce = reduce
        self.n_restarts = n_restarts
        self.options = options

    def __repr__(self):
        return (f"PulpHighsOracle(time_limit={self.time_limit}, mip_gap={self.mip_gap}, "
                f"threads={self.threads}, solver={self.solver!r})")

    def session(self, layout, random_state=None):
        check_highs_params(self)
        if self.solver not in ("auto", "highspy", "cmd"):
            raise ValueError(f"solver must be 'auto', 'highspy' or 'cmd'; got {self.solver!r}.")
        return PulpHighsSession(self, layout, random_state)


class PulpHighsSession(BaseSession):
    """Session of :class:`PulpHighsOracle`: a PuLP model grown per new query id."""

    def __init__(self, oracle, layout, random_state):
        import pulp

        super().__init__(oracle, layout, random_state)
        self.seed = int(self.rng.integers(0, 2**31 - 1))
        self.pool = SolutionPool(layout.n_attributes, 32)
        use_api = oracle.solver in ("auto", "highspy") and pulp.HiGHS().available()
        if oracle.solver == "highspy" and not use_api:
            raise ValueError("solver='highspy' needs the highspy package; it is not available.")
        self.use_api = use_api
        if use_api:
            new_highs(oracle.verbose)  # swallow the one-off banner unless verbose
        self.model = None

    def _make_solver(self):
        import pulp

        o = self.oracle
        options = {"random_seed": self.seed, **DEFAULT_HIGHS_OPTIONS, **(o.options or {})}
        kw = dict(msg=bool(o.verbose), timeLimit=o.time_limit, threads=o.threads)
        if self.use_api:
            use_thread_count(o.threads)
            solver = _pulp_highs_class()(gapRel=o.mip_gap, **kw, **options)
        else:
            opts = [f"{k}={v}" for k, v in options.items()]
            if o.mip_gap is not None:
                opts.append(f"mip_rel_gap={o.mip_gap}")
            solver = pulp.HiGHS_CMD(options=opts, **kw)
            if not solver.available():
                raise RuntimeError("neither highspy nor a 'highs' executable is available")
        return solver

    def _build(self):
        import pulp

        layout = self.layout
        model = pulp.LpProblem("oracle", pulp.LpMaximize)
        self.model = model
        x = [self._variable(f"x_{a}_{v}", pulp.LpBinary)
             for a in range(layout.n_attributes) for v in range(layout.block_sizes[a])]
        for a, (s, b) in enumerate(zip(layout.starts, layout.block_sizes)):
            model += pulp.lpSum(x[s:s + b]) == 1, f"block_{a}"
        self.model, self.x, self.c = model, x, {}

    def _variable(self, name, cat):
        import pulp

        if hasattr(self.model, "add_variable"):  # PuLP >= 3.3; LpVariable(...) is deprecated
            return self.model.add_variable(name, 0, 1, cat=cat)
        return pulp.LpVariable(name, lowBound=0, upBound=1, cat=cat)

    def _add_query(self, qid, lits, negated):
        import pulp

        c = self._variable(f"c_{qid}", pulp.LpContinuous)
        self.c[qid] = (c, tuple(lits), negated)
        if negated:
            self.model += (c + pulp.lpSum(self.x[j] for j in lits) <= len(lits)), f"neg_{qid}"
        else:
            for j in lits:
                self.model += (c <= self.x[j]), f"pos_{qid}_{j}"

    def _check_problem(self, problem):
        super()._check_problem(problem)
        if self.model is None:
            return
        for i, qid in enumerate(problem.query_ids.tolist()):
            known = self.c.get(qid)
            lits = problem.literals[i]
            sig = (tuple(np.unique(lits[lits >= 0]).tolist()), bool(problem.negated[i]))
            if known is not None and known[1:] != sig:
                raise ValueError(
                    f"query id {qid} was first seen with literals/negation {known[1:]} "
                    f"and now has {sig}; query ids must be stable within a session."
                )

    def _solve(self, problem, t0):
        import pulp

        o = self.oracle
        if self.model is None:
            self._build()
        for i, qid in enumerate(problem.query_ids.tolist()):
            if qid not in self.c:
                lits = problem.literals[i]
                self._add_query(qid, np.unique(lits[lits >= 0]).tolist(), bool(problem.negated[i]))
        comp = compile_problem(problem)
        start, start_value = heuristic_search(
            problem, self._rng_for(problem), self.pool.starts_for(problem), o.n_restarts,
            comp=comp,
        )

        present = {}
        for i, qid in enumerate(problem.query_ids.tolist()):
            present[qid] = float(problem.weights[i])
        terms = list(zip(self.x, problem.linear.tolist()))
        for qid, (c, _, _) in self.c.items():
            w = present.get(qid)
            c.upBound = 1 if w is not None else 0
            if w:
                terms.append((c, w))
        self.model.setObjective(pulp.LpAffineExpression(terms))
        keep = candidate_columns(problem, comp) if o.reduce else np.ones(len(self.x), bool)
        keep[self.layout.starts + start] = True
        for var, k in zip(self.x, keep.tolist()):
            var.upBound = 1 if k else 0

        solver = self._make_solver()
        if self.use_api and o.mip_start:
            qvals = problem.query_values(start)[0] if problem.n_queries else []
            sol = np.zeros(len(self.x))
            sol[self.layout.starts + start] = 1.0
            variables = list(self.x)
            values = sol.tolist()
            for i, qid in enumerate(problem.query_ids.tolist()):
                variables.append(self.c[qid][0])
                values.append(float(qvals[i]))
            solver.start = (variables, values)
        self.model.solve(solver)
        sol_status = self.model.sol_status
        if sol_status == pulp.LpSolutionOptimal:
            kind = "optimal"
        elif sol_status == pulp.LpSolutionIntegerFeasible:
            kind = "time_limit"
        else:
            raise RuntimeError(
                f"PuLP/HiGHS returned {pulp.LpStatus[self.model.status]} "
                f"(solution status {sol_status})"
            )
        x = np.array([v.varValue if v.varValue is not None else np.nan for v in self.x])
        record = self.layout.from_onehot(np.round(x))[0]
        if float(problem.objective(record)[0]) < start_value:
            record = start
        bound = getattr(solver, "dual_bound", float("inf"))
        if not np.isfinite(bound):
            bound = float("inf")
        if kind == "optimal":
            bound = max(bound, float(problem.objective(record)[0])) if np.isfinite(bound) else \
                float(problem.objective(record)[0])
        self.pool.remember(problem, record)
        return record, kind, bound

    def _after_failure(self):
        self.model = None
