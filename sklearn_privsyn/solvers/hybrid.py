"""The heuristic on every call, HiGHS on a seeded share of them: fast, with its gap measured."""

from __future__ import annotations

from ._session import BaseSession, open_session
from .heuristic import HeuristicOracle
from .highs import HighsOracle

__all__ = ["HybridOracle"]


class HybridOracle:
    """Local search on every call, checked (and improved) by HiGHS on one call in ``check_every``.

    Each call runs :class:`HeuristicOracle`'s search. One call in
    ``check_every`` is also solved exactly by :class:`HighsOracle`; when the
    exact record scores higher it is returned instead, and the session
    counts the check, the improvement and the largest gap in its
    :class:`SolverStats` (``n_checked``, ``n_improved``, ``max_gap``), so a
    fit reports how far its heuristic answers were from optimal on a sample
    of its own problems. Which calls are checked is decided by the
    problem's ``seed`` when it carries one (``seed % check_every == 0``), so
    the choice, like the answer, does not depend on which worker solves the
    call; otherwise every ``check_every``-th call of the session is checked.

    Whatever either part returns is post-processing: a failed or timed-out
    check leaves the heuristic's record, and privacy never depends on it.

    Parameters
    ----------
    check_every : int, default=50
        One call in this many is checked by HiGHS (``1``: every call).
    n_restarts : int, default=8
        Random start records of the heuristic per call.
    max_passes : int, default=100
        Limit on the heuristic's passes over the attributes.
    memory : int, default=32
        Earlier solutions the heuristic keeps as warm starts (for problems
        that bring no ``warm_starts`` of their own).
    time_limit : float or None, default=None
        Seconds per exact check; on time-out its best record still counts.
    mip_gap : float or None, default=1e-6
        Relative optimality gap of the exact check.
    threads : int or None, default=1
        HiGHS threads.
    verbose : bool, default=False

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privsyn.solvers import OneHotLayout, OracleProblem
    >>> layout = OneHotLayout((3, 3))
    >>> problem = OracleProblem(layout, literals=[[1, 5]], negated=[False],
    ...                         weights=[2.0], linear=np.zeros(6))
    >>> session = HybridOracle(check_every=1).session(layout, random_state=0)
    >>> result = session.solve(problem)
    >>> result.record.tolist(), result.objective, result.status
    ([1, 2], 2.0, 'optimal')
    >>> session.stats.n_checked, session.stats.n_improved
    (1, 0)
    >>> session.close()
    """

    name = "hybrid"

    def __init__(self, check_every=50, n_restarts=8, max_passes=100, memory=32,
                 time_limit=None, mip_gap=1e-6, threads=1, verbose=False):
        self.check_every = check_every
        self.n_restarts = n_restarts
        self.max_passes = max_passes
        self.memory = memory
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.threads = threads
        self.verbose = verbose

    def __repr__(self):
        return f"HybridOracle(check_every={self.check_every}, time_limit={self.time_limit})"

    def session(self, layout, random_state=None):
        if isinstance(self.check_every, bool) or not isinstance(self.check_every, int) \
                or self.check_every < 1:
            raise ValueError(f"check_every must be an int >= 1; got {self.check_every!r}.")
        return HybridSession(self, layout, random_state)


class HybridSession(BaseSession):
    """Session of :class:`HybridOracle`: a heuristic session and a HiGHS session side by side."""

    def __init__(self, oracle, layout, random_state):
        super().__init__(oracle, layout, random_state)
        heuristic_rng, exact_rng = self.rng.spawn(2)
        heuristic = HeuristicOracle(n_restarts=oracle.n_restarts, max_passes=oracle.max_passes,
                                    memory=oracle.memory)
        exact = HighsOracle(time_limit=oracle.time_limit, mip_gap=oracle.mip_gap,
                            threads=oracle.threads, verbose=oracle.verbose)
        self.heuristic = open_session(heuristic, layout, heuristic_rng)
        self.exact = open_session(exact, layout, exact_rng)
        self.n_calls = 0

    def _check_problem(self, problem):
        super()._check_problem(problem)
        if self._checks(problem):  # a malformed problem raises here, as with HighsOracle
            self.exact._check_problem(problem)

    def _checks(self, problem):
        every = self.oracle.check_every
        if problem.seed is not None:
            return problem.seed % every == 0
        return self.n_calls % every == 0

    def _solve(self, problem, t0):
        checked = self._checks(problem)
        self.n_calls += 1
        found = self.heuristic.solve(problem)
        if found.status == "fallback":
            raise RuntimeError(f"heuristic failed: {self.heuristic.stats.last_error}")
        if not checked:
            return found.record, "heuristic", float("inf")
        exact = self.exact.solve(problem)
        if exact.status == "fallback":  # a failed check leaves the heuristic's answer
            self.stats.n_errors += 1
            self.stats.last_error = f"exact check: {self.exact.stats.last_error}"
            return found.record, "heuristic", float("inf")
        self.stats.n_checked += 1
        gap = exact.objective - found.objective
        tolerance = 1e-9 * max(1.0, abs(exact.objective))
        if gap > tolerance:
            self.stats.n_improved += 1
            self.stats.max_gap = max(self.stats.max_gap, gap)
            self.heuristic.pool.remember(problem, exact.record)
            return exact.record, exact.status, exact.bound
        if exact.status == "optimal":
            return found.record, "optimal", max(exact.bound, found.objective)
        return found.record, "heuristic", float("inf")

    def close(self):
        try:
            self.heuristic.close()
            self.exact.close()
        finally:
            super().close()
