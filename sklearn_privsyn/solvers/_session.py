"""Common session plumbing: validation, timing, failure semantics (internal)."""

from __future__ import annotations

import time
import warnings

import numpy as np

from .._random import make_generator
from ..exceptions import SolverWarning
from ._base import STATUSES, OneHotLayout, OracleProblem, OracleResult, SolverStats


class BaseSession:
    """Runs ``self._solve`` and turns any fault into the data-independent fallback.

    ``_solve(problem, t0)`` returns ``(record, status, bound)``. The record
    is checked and its objective recomputed here, so a back-end can never
    report a wrong value or an invalid record. :meth:`solve` is the one code
    path every session's calls go through, built-in or foreign
    (:class:`GuardedSession`).
    """

    #: statuses a back-end may report; anything else counts as a fault
    _statuses = ("optimal", "time_limit", "heuristic")

    def __init__(self, oracle, layout, random_state):
        if not isinstance(layout, OneHotLayout):
            raise TypeError(f"layout must be a OneHotLayout, got {type(layout).__name__}.")
        self.oracle = oracle
        self.layout = layout
        self.random_state = random_state
        self.rng = make_generator(random_state)
        self.stats = SolverStats()
        self.closed = False
        # Estimators turn this off and emit one summary warning per fit instead.
        self.warn_on_fault = True

    def _check_problem(self, problem):
        if not isinstance(problem, OracleProblem):
            raise TypeError(f"problem must be an OracleProblem, got {type(problem).__name__}.")
        if problem.layout != self.layout:
            raise ValueError(
                f"problem.layout {problem.layout.block_sizes} differs from the session's "
                f"layout {self.layout.block_sizes}."
            )
        if self.closed:
            raise RuntimeError("this oracle session is closed.")

    def solve(self, problem: OracleProblem) -> OracleResult:
        """Maximise ``problem``'s objective; never raises for solver faults."""
        self._check_problem(problem)
        t0 = time.perf_counter()
        try:
            record, status, bound = self._solve(problem, t0)
            record = self.layout.check_records(np.asarray(record).reshape(1, -1))[0]
            if status not in self._statuses:
                raise RuntimeError(f"back-end returned status {status!r}")
            bound = float(bound)
            if bound != bound:  # NaN: no usable bound
                bound = float("inf")
        except Exception as exc:  # noqa: BLE001 - any solver fault -> fallback
            self.stats.n_errors += 1
            self.stats.last_error = f"{type(exc).__name__}: {exc}"
            if self.warn_on_fault:
                warnings.warn(
                    f"oracle {type(self.oracle).__name__} failed ({self.stats.last_error}); "
                    "returning the fallback record.",
                    SolverWarning,
                    stacklevel=2,
                )
            self._after_failure()
            record, status, bound = problem.fallback_record(), "fallback", float("inf")
        value = float(problem.objective(record)[0])
        result = OracleResult(record, value, status, bound, time.perf_counter() - t0)
        self.stats.record(result)
        return result

    def _solve(self, problem, t0):  # pragma: no cover - abstract
        raise NotImplementedError

    def _rng_for(self, problem):
        """The call's generator: seeded by the problem when it carries a seed, else the session's."""
        return self.rng if problem.seed is None else np.random.default_rng(problem.seed)

    def _after_failure(self):
        """Hook: reset state after a fault (e.g. rebuild the model next call)."""

    def close(self):
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class GuardedSession(BaseSession):
    """Gives a foreign session (a user's oracle) the failure semantics of :class:`BaseSession`.

    Whatever the wrapped session does (raise, return a record outside the
    layout, a malformed result or an unknown status), :meth:`solve` returns a
    valid :class:`OracleResult` whose objective is recomputed here; a fault
    gives the data-independent fallback record, counted in ``stats``. The
    problem is checked before the wrapped session sees it, so a malformed
    problem still raises.
    """

    _statuses = STATUSES

    def __init__(self, session, layout, oracle=None):
        super().__init__(oracle, layout, None)
        self.session = session
        self.warn_on_fault = False

    def _check_problem(self, problem):
        if not isinstance(problem, OracleProblem) or problem.layout != self.layout:
            raise ValueError("problem must be an OracleProblem on the session's layout.")

    def _solve(self, problem, t0):
        result = self.session.solve(problem)
        return result.record, result.status, getattr(result, "bound", float("inf"))

    def close(self):
        if not self.closed:
            self.closed = True
            try:
                self.session.close()
            except Exception as exc:  # noqa: BLE001
                self.stats.last_error = f"{type(exc).__name__} on close: {exc}"


def open_session(oracle, layout, random_state):
    """A session of ``oracle`` for an estimator's fit: quiet, and guarded if foreign.

    Built-in sessions keep their failure semantics but do not warn per call
    (the estimator summarises the faults once per fit). A session whose
    ``solve`` is not :meth:`BaseSession.solve` is wrapped in
    :class:`GuardedSession`, so that a user's oracle cannot raise into the
    fit or hand back an invalid record.
    """
    session = oracle.session(layout, random_state)
    if isinstance(session, BaseSession) and type(session).solve is BaseSession.solve:
        session.warn_on_fault = False
        return session
    return GuardedSession(session, layout, oracle)
