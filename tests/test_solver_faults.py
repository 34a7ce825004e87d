"""Solver faults inside a fit: the fit completes, privacy and the ledger are untouched.

The oracle is post-processing (it never sees the private data), so a time-out,
an infeasible or crashed solve, or a back-end handing back garbage may cost
accuracy but must never change the privacy accounting. Each fault is counted
in ``solver_stats_`` and summarised by ONE ``SolverWarning`` per fit.
"""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_backend

from sklearn_privsyn import DQRS, FEM, DualQuery, QueryWorkload, SepFEM
from sklearn_privsyn.exceptions import SolverWarning
from sklearn_privsyn.solvers import BruteForceOracle, HighsOracle, OracleResult, get_oracle

FAST = {
    FEM: {"rounds": 3, "samples_per_round": 3},
    SepFEM: {"rounds": 3, "samples_per_round": 3},
    DualQuery: {"rounds": 4, "samples_per_round": 2},
    DQRS: {"rounds": 4, "samples_per_round": 2},
}
# rounds are fixed by the parameters and the budget: the ledger is the same whatever
# the oracle returns (DQRS's number of fresh draws depends on the records, see below)
FIXED_LEDGER = [FEM, SepFEM, DualQuery]


def data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(3, size=n)
    return pd.DataFrame({"a": a, "b": (a + rng.integers(2, size=n)) % 3,
                         "c": rng.choice(["x", "y"], size=n)})


def workload():
    return QueryWorkload(domain={"a": 3, "b": 3, "c": ["x", "y"]}, k=2)


def make(cls, solver, **params):
    return cls(**{"epsilon": 2.0, "workload": workload(), "solver": solver, "random_state": 0,
                  **FAST[cls], **params})


def fit_recording(est, X):
    """Fit, returning the SolverWarnings raised (every other warning passes through)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X)
    return [w for w in caught if issubclass(w.category, SolverWarning)]


class FaultyOracle:
    """A user's oracle whose session is not a BaseSession and misbehaves on some calls.

    ``fault(call, problem)`` returns what ``solve`` does on that call: an
    exception instance is raised, anything else returned. Calls where it
    returns ``None`` are delegated to an exact brute-force session. Every
    problem and its fallback record are kept, to check what the fit did.
    """

    def __init__(self, fault):
        self.fault = fault
        self.problems = []
        self.closed = 0

    def session(self, layout, random_state=None):
        inner = BruteForceOracle().session(layout, random_state)
        outer = self

        class Session:
            def solve(self, problem):
                outer.problems.append(problem)
                out = outer.fault(len(outer.problems) - 1, problem)
                if isinstance(out, Exception):
                    raise out
                return inner.solve(problem) if out is None else out

            def close(self):
                outer.closed += 1

        return Session()


def always_raise(call, problem):
    return RuntimeError("back-end crashed")


GARBAGE = {
    "raises": always_raise,
    "record out of range": lambda c, p: OracleResult(np.array([7, 0, 0]), 1e9, "optimal"),
    "record too short": lambda c, p: OracleResult(np.array([0, 0]), 1.0, "optimal"),
    "NaN record": lambda c, p: OracleResult(np.array([np.nan, 0, 0]), 1.0, "optimal"),
    "unknown status": lambda c, p: OracleResult(np.array([0, 0, 0]), 1.0, "feasible-ish"),
    "None": lambda c, p: _NONE,
    "a string": lambda c, p: "optimal",
    "KeyError": lambda c, p: KeyError("x"),
}
_NONE = object()  # returned as is: no record attribute


@pytest.mark.parametrize("kind", list(GARBAGE))
@pytest.mark.parametrize("cls", FIXED_LEDGER, ids=lambda c: c.__name__)
def test_custom_oracle_faults_become_counted_fallbacks(cls, kind):
    X = data()
    reference = make(cls, "brute")
    assert fit_recording(reference, X) == []
    oracle = FaultyOracle(GARBAGE[kind])
    est = make(cls, oracle)
    caught = fit_recording(est, X)

    n_calls = len(oracle.problems)
    assert n_calls == reference.solver_stats_.calls > 0
    stats = est.solver_stats_
    assert (stats.calls, stats.n_fallback, stats.n_errors, stats.n_optimal) == (
        n_calls, n_calls, n_calls, 0)
    # ONE warning for the whole fit, with the count
    assert len(caught) == 1
    assert re.search(rf"of {n_calls} oracle calls, {n_calls} failed", str(caught[0].message))
    # the synthetic records are exactly the data-independent fallbacks
    fallbacks = np.array([p.fallback_record() for p in oracle.problems])
    if cls is DualQuery:
        np.testing.assert_array_equal(est.records_, fallbacks)
    else:  # FEM keeps the samples of the last rounds
        np.testing.assert_array_equal(est.records_, fallbacks[-len(est.records_):])
    # the guarantee and the ledger are those of the fault-free run
    assert est.ledger_.entries == reference.ledger_.entries
    assert (est.rho_, est.epsilon_, est.delta_) == (
        reference.rho_, reference.epsilon_, reference.delta_)
    assert oracle.closed >= 1


@pytest.mark.parametrize("cls", list(FAST), ids=lambda c: c.__name__)
def test_intermittent_faults_are_counted(cls):
    X = data()
    oracle = FaultyOracle(lambda call, p: always_raise(call, p) if call % 2 else None)
    est = make(cls, oracle)
    caught = fit_recording(est, X)
    n_calls = len(oracle.problems)
    stats = est.solver_stats_
    assert stats.calls == n_calls
    assert stats.n_fallback == stats.n_errors == n_calls // 2
    assert stats.n_optimal == n_calls - n_calls // 2
    assert "RuntimeError: back-end crashed" in stats.last_error
    assert len(caught) == 1
    assert f"{n_calls // 2} failed" in str(caught[0].message)
    assert est.ledger_.rho_spent <= est.rho_ * (1 + 1e-9)
    assert est.epsilon_ <= 2.0 * (1 + 1e-9)


def test_dqrs_ledger_stays_within_budget_whatever_the_oracle():
    # DQRS's fresh draws depend on the accept/reject coins, which depend on the
    # records: the ledger may differ from a fault-free run, but never the cap
    X = data()
    reference = make(DQRS, "brute", rounds=None, epsilon=0.5).fit(X)
    est = make(DQRS, FaultyOracle(always_raise), rounds=None, epsilon=0.5)
    assert len(fit_recording(est, X)) == 1
    assert est.rho_ == reference.rho_
    assert est.ledger_.rho_spent <= est.rho_ * (1 + 1e-9)
    assert est.epsilon_ <= 0.5 * (1 + 1e-9)
    assert est.solver_stats_.n_fallback == est.solver_stats_.calls == est.n_rounds_


def test_dualquery_counts_faults_across_its_session_renewals():
    # DualQuery opens a fresh session every 50 rounds; the counts must add up
    X = data()
    oracle = FaultyOracle(always_raise)
    est = make(DualQuery, oracle, rounds=120, samples_per_round=1)
    caught = fit_recording(est, X)
    assert oracle.closed == 3
    assert est.solver_stats_.calls == est.solver_stats_.n_fallback == 120
    assert len(caught) == 1 and "of 120 oracle calls, 120 failed" in str(caught[0].message)


def test_fault_free_fit_does_not_warn():
    est = make(FEM, FaultyOracle(lambda c, p: None))
    assert fit_recording(est, data()) == []
    assert est.solver_stats_.n_fallback == 0 and est.solver_stats_.n_errors == 0


def test_a_result_with_a_nan_bound_is_accepted_with_an_unknown_bound():
    def nan_bound(call, problem):
        return OracleResult(problem.fallback_record(), 0.0, "heuristic", float("nan"))

    est = make(FEM, FaultyOracle(nan_bound))
    assert fit_recording(est, data()) == []
    assert est.solver_stats_.n_heuristic == est.solver_stats_.calls


def test_oracle_whose_session_cannot_open_fails_the_fit_cleanly():
    class Unopenable:
        def session(self, layout, random_state=None):
            raise OSError("licence server unreachable")

    est = make(FEM, Unopenable())
    with pytest.raises(OSError, match="licence server unreachable"):
        est.fit(data())
    assert [k for k in vars(est) if k.endswith("_")] == []


def test_parallel_fem_merges_fault_counts_and_warns_once():
    X = data()
    oracle = FaultyOracle(always_raise)
    est = make(FEM, oracle, n_jobs=2)
    with parallel_backend("threading", n_jobs=2):
        caught = fit_recording(est, X)
    n_calls = (est.n_rounds_ + 1) * 3
    assert len(oracle.problems) == n_calls
    assert est.solver_stats_.calls == est.solver_stats_.n_fallback == n_calls
    assert len(caught) == 1


# ---------------------------------------------------------------------- HiGHS faults


def _highs_status(name):
    import highspy

    return getattr(highspy.HighsModelStatus, name)


@pytest.fixture
def highs_fault(monkeypatch):
    """Install a fault in highspy.Highs for the duration of a test."""
    import highspy

    def install(kind):
        if kind == "run raises":
            def run(self):
                raise RuntimeError("HiGHS crashed")
            monkeypatch.setattr(highspy.Highs, "run", run)
        elif kind in ("infeasible", "time limit"):
            status = _highs_status("kInfeasible" if kind == "infeasible" else "kTimeLimit")
            monkeypatch.setattr(highspy.Highs, "getModelStatus", lambda self: status)
        elif kind == "garbage solution":
            real = highspy.Highs.getSolution

            def get_solution(self):
                solution = real(self)
                solution.col_value = [0.5] * len(solution.col_value)
                return solution
            monkeypatch.setattr(highspy.Highs, "getSolution", get_solution)
        else:  # pragma: no cover
            raise ValueError(kind)

    return install


@pytest.mark.parametrize("kind, counter", [
    ("run raises", "n_fallback"),
    ("infeasible", "n_fallback"),
    ("garbage solution", "n_fallback"),
    ("time limit", "n_time_limit"),
])
@pytest.mark.parametrize("cls", [FEM, DualQuery], ids=lambda c: c.__name__)
def test_highs_faults_inside_a_fit(cls, kind, counter, highs_fault):
    X = data()
    # lp_check off: every call reaches the MIP solve, where the fault is
    oracle = HighsOracle(lp_check=False)
    reference = make(cls, oracle)
    assert fit_recording(reference, X) == []
    highs_fault(kind)
    est = make(cls, oracle)
    caught = fit_recording(est, X)
    stats = est.solver_stats_
    assert stats.calls == reference.solver_stats_.calls
    assert getattr(stats, counter) == stats.calls
    assert len(caught) == 1
    message = str(caught[0].message)
    if counter == "n_fallback":
        assert f"{stats.calls} failed" in message and stats.n_errors == stats.calls
    else:
        # a time-out keeps the best record found (the heuristic start): valid, not a fallback
        assert f"{stats.calls} stopped at the time limit" in message
        assert stats.n_fallback == 0
    assert est.ledger_.entries == reference.ledger_.entries
    assert est.epsilon_ == reference.epsilon_
    est.workload_.layout_.check_records(est.records_)
    assert est.sample(5).shape == (5, 3)


def test_standalone_sessions_still_warn_per_call():
    # outside an estimator a session cannot summarise at the end, so it warns per call
    from sklearn_privsyn.solvers import OneHotLayout, OracleProblem
    from sklearn_privsyn.solvers.highs import HighsSession

    layout = OneHotLayout((2, 2))
    problem = OracleProblem(layout, [[0, 2]], [False], [1.0], [0.0, 0.1, 0.0, 0.0])
    session = get_oracle("highs").session(layout, 0)
    assert isinstance(session, HighsSession)
    session._solve = lambda problem, t0: (_ for _ in ()).throw(RuntimeError("boom"))
    with pytest.warns(SolverWarning, match="boom"):
        assert session.solve(problem).status == "fallback"


def test_guarded_session_still_rejects_malformed_problems():
    from sklearn_privsyn.solvers import OneHotLayout, OracleProblem
    from sklearn_privsyn.solvers._session import GuardedSession, open_session

    layout = OneHotLayout((2, 2))
    session = open_session(FaultyOracle(always_raise), layout, 0)
    assert isinstance(session, GuardedSession)
    other = OracleProblem(OneHotLayout((3,)), [[0]], [False], [1.0], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="session's layout"):
        session.solve(other)
    # a built-in session is returned as it is, with per-call warnings off
    builtin = open_session(get_oracle("brute"), layout, 0)
    assert not isinstance(builtin, GuardedSession) and builtin.warn_on_fault is False
