"""Tests of the optimisation oracles (sklearn_privsyn.solvers)."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sklearn_privsyn.exceptions import SolverWarning
from sklearn_privsyn.solvers import (
    BruteForceOracle,
    HeuristicOracle,
    HighsOracle,
    HybridOracle,
    OneHotLayout,
    OracleProblem,
    OracleResult,
    PulpHighsOracle,
    SolverStats,
    get_oracle,
)
from sklearn_privsyn.solvers import highs as highs_module
from sklearn_privsyn.solvers.heuristic import coordinate_ascent

EXACT = {
    "highs": lambda: HighsOracle(mip_gap=0),
    "highs-aggregated": lambda: HighsOracle(mip_gap=0, formulation="aggregated"),
    "highs-integer-c": lambda: HighsOracle(mip_gap=0, c_integer=True),
    "highs-plain": lambda: HighsOracle(mip_gap=0, reduce=False, mip_start=False, presolve=False),
    "pulp": lambda: PulpHighsOracle(mip_gap=0),
}


# -- independent reference ------------------------------------------------------


def naive_objective(layout, literals, negated, weights, linear, record):
    """Objective of one record, written with plain loops over the one-hot vector."""
    onehot = np.zeros(layout.n_features)
    for a, code in enumerate(record):
        onehot[sum(layout.block_sizes[:a]) + code] = 1.0
    total = float(np.dot(onehot, linear))
    for lits, neg, w in zip(literals, negated, weights):
        conj = all(onehot[j] == 1.0 for j in lits if j >= 0)
        total += w * ((1.0 - conj) if neg else float(conj))
    return total


def naive_optimum(layout, literals, negated, weights, linear):
    best = -np.inf
    for record in itertools.product(*(range(b) for b in layout.block_sizes)):
        best = max(best, naive_objective(layout, literals, negated, weights, linear, record))
    return best


@st.composite
def problems(draw, max_attributes=4, max_block=4, max_queries=8):
    sizes = draw(st.lists(st.integers(1, max_block), min_size=1, max_size=max_attributes))
    layout = OneHotLayout(tuple(sizes))
    d = layout.n_features
    m = draw(st.integers(0, max_queries))
    kmax = draw(st.integers(1, 3))
    rows = []
    for _ in range(m):
        k = draw(st.integers(1, kmax))
        # columns drawn freely: repeats and two values of one attribute happen
        lits = draw(st.lists(st.integers(0, d - 1), min_size=k, max_size=k))
        rows.append(lits + [-1] * (kmax - k))
    literals = np.array(rows, dtype=int).reshape(m, kmax)
    negated = np.array(draw(st.lists(st.booleans(), min_size=m, max_size=m)), dtype=bool)
    weights = np.array(
        draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 7.0]), min_size=m, max_size=m)),
        dtype=float,
    )
    linear = np.array(
        draw(st.lists(st.floats(-3, 3, allow_nan=False, width=32), min_size=d, max_size=d)),
        dtype=float,
    )
    return OracleProblem(layout, literals, negated, weights, linear)


def random_problem(layout, m, rng, ids=None, kmax=3, scale=1.0, exact_k=False):
    literals = np.full((m, kmax), -1)
    for i in range(m):
        k = kmax if exact_k else rng.integers(1, kmax + 1)
        atts = rng.choice(layout.n_attributes, size=min(k, layout.n_attributes), replace=False)
        for j, a in enumerate(atts):
            literals[i, j] = layout.starts[a] + rng.integers(layout.block_sizes[a])
    negated = rng.random(m) < 0.5
    weights = rng.integers(1, 4, size=m).astype(float)
    linear = -rng.exponential(scale, size=layout.n_features)
    return OracleProblem(layout, literals, negated, weights, linear, query_ids=ids)


# -- layout and problem -----------------------------------------------------------


def test_layout_properties_and_round_trip():
    layout = OneHotLayout((3, 1, 2))
    assert layout.n_features == 6
    assert layout.n_attributes == 3
    assert layout.starts.tolist() == [0, 3, 4]
    assert layout.attribute_of.tolist() == [0, 0, 0, 1, 2, 2]
    assert layout.n_records == 6
    records = np.array([[2, 0, 1], [0, 0, 0]])
    onehot = layout.to_onehot(records)
    assert onehot.astype(int).tolist() == [[0, 0, 1, 1, 0, 1], [1, 0, 0, 1, 1, 0]]
    np.testing.assert_array_equal(layout.from_onehot(onehot), records)
    assert layout == OneHotLayout([3, 1, 2])
    assert pickle.loads(pickle.dumps(layout)) == layout


@pytest.mark.parametrize(
    "onehot, match",
    [
        ([[1, 1, 0, 1, 1, 0]], "2 ones in attribute 0"),
        ([[0, 0, 0, 1, 1, 0]], "0 ones in attribute 0"),
        ([[0.5, 0.5, 0, 1, 1, 0]], "neither 0 nor 1"),
        ([[1, 0, 0, 1]], r"shape \(n, 6\)"),
    ],
)
def test_from_onehot_rejects_invalid(onehot, match):
    with pytest.raises(ValueError, match=match):
        OneHotLayout((3, 1, 2)).from_onehot(onehot)


@pytest.mark.parametrize(
    "sizes, error, match",
    [((), ValueError, "at least one attribute"), ((2, 0), ValueError, r"block_sizes\[1\]"),
     ((2, 1.5), TypeError, "must be an int")],
)
def test_layout_rejects_bad_sizes(sizes, error, match):
    with pytest.raises(error, match=match):
        OneHotLayout(sizes)


def test_check_records_names_bad_entry():
    with pytest.raises(ValueError, match=r"records\[1, 1\] = 2 is outside attribute 1"):
        OneHotLayout((3, 2)).check_records([[0, 0], [1, 2]])


def _valid_kwargs():
    return dict(literals=[[0, 3], [1, -1]], negated=[False, True], weights=[1.0, 2.0],
                linear=np.zeros(5))


@pytest.mark.parametrize(
    "change, match",
    [
        (dict(linear=np.zeros(4)), r"linear must have shape \(5,\)"),
        (dict(weights=[1.0]), r"weights must have shape \(2,\)"),
        (dict(weights=[1.0, -1.0]), "weights must be finite and >= 0"),
        (dict(negated=[True]), r"negated must have shape \(2,\)"),
        (dict(literals=[[0, 5], [1, -1]]), r"literals\[0, 1\] = 5 is not a one-hot column"),
        (dict(literals=[[0, 3], [-1, -1]]), "query 1 .* has no literals"),
        (dict(literals=[0, 3]), "literals must be a 2-d"),
        (dict(literals=[[0.5, 3], [1, -1]]), "integer column indices"),
        (dict(linear=np.array([0, 0, np.nan, 0, 0])), "linear must be finite"),
        (dict(query_ids=[4, 4]), "query_ids must be distinct"),
        (dict(warm_starts=[[3, 0]]), r"warm_starts\[0, 0\] = 3 is outside attribute 0"),
        (dict(warm_starts=[[0, 0, 0]]), r"warm_starts must have shape \(n, 2\)"),
        (dict(seed=-1), "seed must be a non-negative int"),
        (dict(seed=1.5), "seed must be a non-negative int"),
    ],
)
def test_problem_rejects_malformed(change, match):
    kwargs = {**_valid_kwargs(), **change}
    with pytest.raises(ValueError, match=match):
        OracleProblem(OneHotLayout((3, 2)), **kwargs)


def test_problem_objective_matches_naive_loops():
    rng = np.random.default_rng(0)
    layout = OneHotLayout((3, 2, 4))
    problem = random_problem(layout, 10, rng)
    records = np.array(list(itertools.product(range(3), range(2), range(4))))
    expected = [
        naive_objective(layout, problem.literals, problem.negated, problem.weights,
                        problem.linear, r)
        for r in records
    ]
    np.testing.assert_allclose(problem.objective(records), expected)


def test_problem_arrays_are_read_only_copies():
    linear = np.zeros(5)
    problem = OracleProblem(OneHotLayout((3, 2)), **{**_valid_kwargs(), "linear": linear})
    linear[0] = 9.0
    assert problem.linear[0] == 0.0
    with pytest.raises(ValueError):
        problem.weights[0] = 3.0


# -- exact back-ends agree with enumeration ----------------------------------------


@pytest.mark.parametrize("name", list(EXACT))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems())
def test_exact_backends_match_brute_force(name, problem):
    expected = naive_optimum(problem.layout, problem.literals, problem.negated,
                             problem.weights, problem.linear)
    with EXACT[name]().session(problem.layout, random_state=0) as session:
        result = session.solve(problem)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(expected, abs=1e-6)
    # the reported objective is the record's true objective
    assert naive_objective(problem.layout, problem.literals, problem.negated,
                           problem.weights, problem.linear, result.record) == pytest.approx(
        result.objective, abs=1e-9)
    assert result.bound >= expected - 1e-6


@settings(max_examples=40, deadline=None)
@given(problem=problems())
def test_brute_force_matches_naive_optimum(problem):
    result = BruteForceOracle(chunk_size=7).session(problem.layout).solve(problem)
    expected = naive_optimum(problem.layout, problem.literals, problem.negated,
                             problem.weights, problem.linear)
    assert result.objective == pytest.approx(expected)
    assert result.status == "optimal"


@settings(max_examples=40, deadline=None)
@given(problem=problems(), seed=st.integers(0, 3))
def test_heuristic_valid_and_not_above_optimum(problem, seed):
    result = HeuristicOracle(n_restarts=2).session(problem.layout, seed).solve(problem)
    problem.layout.check_records(result.record[None, :])
    assert result.status == "heuristic"
    assert result.bound == np.inf
    expected = naive_optimum(problem.layout, problem.literals, problem.negated,
                             problem.weights, problem.linear)
    assert result.objective <= expected + 1e-9
    assert result.objective == pytest.approx(problem.objective(result.record)[0])


def test_coordinate_ascent_reaches_single_attribute_local_optimum():
    rng = np.random.default_rng(3)
    layout = OneHotLayout((4, 3, 5, 2))
    problem = random_problem(layout, 12, rng)
    starts = np.array([[0, 0, 0, 0], [3, 2, 4, 1], [1, 1, 1, 1]])
    found = coordinate_ascent(problem, starts, rng)
    for record in found:
        value = problem.objective(record)[0]
        for a, size in enumerate(layout.block_sizes):
            neighbours = np.repeat(record[None, :], size, axis=0)
            neighbours[:, a] = np.arange(size)
            assert problem.objective(neighbours).max() <= value + 1e-9


def test_positive_query_needs_no_integer_variable():
    # all queries positive, linear term pushing away from them: a continuous c
    # would be exploited by a fractional x if the formulation were loose; the
    # integer x keeps the optimum exact
    layout = OneHotLayout((2, 2, 2))
    problem = OracleProblem(
        layout, literals=[[0, 2, 4], [1, 3, 5], [0, 3, -1]], negated=[False, False, False],
        weights=[1.0, 1.0, 1.5], linear=[0, 0.2, 0, 0.2, 0, 0.2],
    )
    result = HighsOracle(mip_gap=0).session(layout, 0).solve(problem)
    assert result.objective == pytest.approx(naive_optimum(
        layout, problem.literals, problem.negated, problem.weights, problem.linear))


def test_empty_problem_returns_linear_argmax():
    layout = OneHotLayout((3, 2))
    problem = OracleProblem(layout, np.zeros((0, 3), int), [], [], [0, 2, 1, -1, 0])
    for oracle in (HighsOracle(), PulpHighsOracle(), HeuristicOracle(), BruteForceOracle()):
        result = oracle.session(layout, 0).solve(problem)
        assert result.record.tolist() == [1, 1]
        assert result.objective == pytest.approx(2.0)


# -- incremental model -------------------------------------------------------------


@pytest.mark.parametrize("oracle", [HighsOracle(mip_gap=0), PulpHighsOracle(mip_gap=0)],
                         ids=["highs", "pulp"])
def test_incremental_session_matches_fresh_model(oracle):
    rng = np.random.default_rng(7)
    layout = OneHotLayout((3, 4, 2, 3))
    pool = random_problem(layout, 14, rng)  # 14 candidate queries with fixed ids
    session = oracle.session(layout, random_state=0)
    for step in range(8):
        present = np.sort(rng.choice(14, size=rng.integers(1, 10), replace=False))
        problem = OracleProblem(
            layout, pool.literals[present], pool.negated[present],
            rng.integers(0, 5, size=len(present)).astype(float),
            -rng.exponential(1.0, size=layout.n_features), query_ids=present,
        )
        incremental = session.solve(problem)
        fresh = oracle.session(layout, random_state=0).solve(problem)
        expected = naive_optimum(layout, problem.literals, problem.negated,
                                 problem.weights, problem.linear)
        assert incremental.status == "optimal"
        assert incremental.objective == pytest.approx(expected, abs=1e-6)
        assert fresh.objective == pytest.approx(expected, abs=1e-6)
    assert session.stats.calls == 8
    assert session.stats.n_optimal == 8
    session.close()


@pytest.mark.parametrize("oracle", [HighsOracle(), PulpHighsOracle()], ids=["highs", "pulp"])
def test_unstable_query_id_raises(oracle):
    layout = OneHotLayout((3, 2))
    session = oracle.session(layout, 0)
    session.solve(OracleProblem(layout, [[0, 3]], [False], [1.0], np.zeros(5), query_ids=[5]))
    with pytest.raises(ValueError, match="query id 5 was first seen"):
        session.solve(OracleProblem(layout, [[1, 3]], [False], [1.0], np.zeros(5),
                                    query_ids=[5]))


# -- failure semantics -------------------------------------------------------------


def test_tiny_time_limit_returns_valid_record():
    rng = np.random.default_rng(1)
    layout = OneHotLayout((5, 4, 6, 3, 5))
    problem = random_problem(layout, 30, rng)
    for oracle in (HighsOracle(time_limit=1e-9), PulpHighsOracle(time_limit=1e-9)):
        session = oracle.session(layout, 0)
        result = session.solve(problem)
        layout.check_records(result.record[None, :])
        assert result.status in ("time_limit", "optimal")
        assert result.objective == pytest.approx(problem.objective(result.record)[0])
        assert session.stats.n_fallback == 0


def test_highs_time_limit_status_from_solver(monkeypatch):
    # the HiGHS run itself hits the limit: time_limit is applied as an option
    rng = np.random.default_rng(2)
    layout = OneHotLayout((6, 6, 6, 6, 6, 6))
    problem = random_problem(layout, 60, rng, scale=0.2)
    session = HighsOracle(time_limit=0.002, mip_gap=0, mip_start=False).session(layout, 0)
    result = session.solve(problem)
    assert result.status in ("time_limit", "optimal")
    layout.check_records(result.record[None, :])
    assert session.stats.n_time_limit + session.stats.n_optimal == 1


def test_time_limit_holds_on_every_call_of_a_session():
    # ADULT-sized problems that take HiGHS ~0.3-1 s each to prove optimal
    rng = np.random.default_rng(4)
    layout = OneHotLayout((85, 9, 100, 16, 7, 15, 6, 5, 2, 100, 100, 99, 42, 2))
    base = random_problem(layout, 400, rng, exact_k=True)
    session = HighsOracle(time_limit=0.05, lp_check=False).session(layout, 0)
    for _ in range(3):
        problem = OracleProblem(layout, base.literals, base.negated, base.weights,
                                -rng.exponential(1.0, layout.n_features))
        result = session.solve(problem)
        assert result.seconds < 0.5
        assert result.objective == pytest.approx(problem.objective(result.record)[0])
        if result.status == "time_limit":
            assert result.bound >= result.objective - 1e-9
    assert session.stats.n_time_limit >= 1
    assert session.stats.n_fallback == 0


@pytest.mark.parametrize("oracle_cls", [HighsOracle, PulpHighsOracle])
def test_solver_exception_gives_counted_fallback(monkeypatch, oracle_cls):
    import highspy

    layout = OneHotLayout((3, 3))
    problem = OracleProblem(layout, [[1, 5]], [False], [5.0], [0, 0, 0.3, 0.1, 0, 0])

    def broken_run(self):
        raise RuntimeError("solver crashed")

    monkeypatch.setattr(highspy.Highs, "run", broken_run)
    session = oracle_cls().session(layout, 0)
    with pytest.warns(SolverWarning, match="solver crashed"):
        result = session.solve(problem)
    assert result.status == "fallback"
    assert result.record.tolist() == [2, 0]  # per-block argmax of the linear term
    assert result.objective == pytest.approx(0.4)
    assert session.stats.n_fallback == 1
    assert session.stats.n_errors == 1
    assert "solver crashed" in session.stats.last_error
    monkeypatch.undo()
    again = session.solve(problem)  # the session recovers
    assert again.status == "optimal"
    assert again.objective == pytest.approx(5.0)


def test_invalid_solution_gives_fallback(monkeypatch):
    layout = OneHotLayout((3, 3))
    problem = OracleProblem(layout, [[1, 5]], [False], [5.0], [0, 0, 0.3, 0.1, 0, 0])
    monkeypatch.setattr(highs_module.HighsSession, "_solve",
                        lambda self, problem, t0: (np.array([7, 0]), "optimal", 5.0))
    session = HighsOracle().session(layout, 0)
    with pytest.warns(SolverWarning, match="outside attribute 0"):
        result = session.solve(problem)
    assert result.status == "fallback"
    assert result.record.tolist() == [2, 0]
    assert session.stats.n_fallback == 1


def test_wrong_layout_raises_instead_of_fallback():
    session = HighsOracle().session(OneHotLayout((3, 3)), 0)
    other = OracleProblem(OneHotLayout((3, 2)), [[0]], [False], [1.0], np.zeros(5))
    with pytest.raises(ValueError, match="differs from the session's layout"):
        session.solve(other)
    with pytest.raises(TypeError, match="must be an OracleProblem"):
        session.solve("not a problem")


def test_brute_force_refuses_large_domains():
    with pytest.raises(ValueError, match="max_records=100"):
        BruteForceOracle(max_records=100).session(OneHotLayout((10, 11)))


@pytest.mark.parametrize(
    "oracle, match",
    [(HighsOracle(time_limit=-1), "time_limit must be"), (HighsOracle(mip_gap=-0.1), "mip_gap"),
     (HighsOracle(threads=0), "threads must be"), (HighsOracle(formulation="x"), "formulation"),
     (PulpHighsOracle(solver="glpk"), "solver must be"),
     (HighsOracle(options={"no_such_option": 1}), "HiGHS rejected option no_such_option")],
)
def test_bad_parameters_raise_at_session(oracle, match):
    with pytest.raises(ValueError, match=match):
        oracle.session(OneHotLayout((2, 2)), 0)


# -- determinism, registry, pickling ---------------------------------------------


@pytest.mark.parametrize("make", [HeuristicOracle, HighsOracle, PulpHighsOracle])
def test_same_random_state_same_records(make):
    layout = OneHotLayout((4, 5, 3, 6))
    rng = np.random.default_rng(11)
    base = random_problem(layout, 12, rng)
    problems_ = [
        OracleProblem(layout, base.literals, base.negated, rng.integers(0, 4, 12),
                      -rng.exponential(1.0, layout.n_features))
        for _ in range(4)
    ]

    def records(seed):
        session = make().session(layout, seed)
        return [session.solve(p).record.tolist() for p in problems_]

    assert records(5) == records(5)
    assert records(np.random.RandomState(2)) == records(np.random.RandomState(2))


def test_get_oracle_names_and_instances():
    assert isinstance(get_oracle("highs"), HighsOracle)
    assert isinstance(get_oracle("PULP"), PulpHighsOracle)
    assert isinstance(get_oracle("heuristic"), HeuristicOracle)
    assert isinstance(get_oracle("brute"), BruteForceOracle)
    assert isinstance(get_oracle("hybrid"), HybridOracle)
    custom = HighsOracle(time_limit=3)
    assert get_oracle(custom) is custom
    with pytest.raises(ValueError, match="unknown oracle 'cplex'; valid names are 'highs'"):
        get_oracle("cplex")
    with pytest.raises(TypeError, match="session"):
        get_oracle(3)


@pytest.mark.parametrize("name", ["highs", "pulp", "heuristic", "hybrid", "brute"])
def test_oracles_pickle_and_sessions_solve(name):
    oracle = pickle.loads(pickle.dumps(get_oracle(name)))
    layout = OneHotLayout((2, 3))
    problem = OracleProblem(layout, [[0, 4]], [False], [2.0], np.zeros(5))
    result = oracle.session(layout, 0).solve(problem)
    assert isinstance(result, OracleResult)
    assert result.objective == pytest.approx(2.0)


def test_no_solver_output_when_not_verbose(capfd):
    layout = OneHotLayout((3, 3))
    problem = OracleProblem(layout, [[1, 5], [0, 4]], [False, True], [2.0, 1.0], np.zeros(6))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HighsOracle().session(layout, 0).solve(problem)
        PulpHighsOracle().session(layout, 0).solve(problem)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_solver_stats_counts_statuses():
    stats = SolverStats()
    for status in ["optimal", "optimal", "time_limit", "fallback", "heuristic"]:
        stats.record(OracleResult(np.array([0]), 0.0, status, np.inf, 0.5))
    assert (stats.calls, stats.n_optimal, stats.n_time_limit, stats.n_fallback,
            stats.n_heuristic) == (5, 2, 1, 1, 1)
    assert stats.seconds == pytest.approx(2.5)


# -- calls that carry their own seed and warm starts; the hybrid oracle ----------


def _seeded(problem, seed, warm_starts):
    return OracleProblem(problem.layout, problem.literals, problem.negated, problem.weights,
                         problem.linear, problem.query_ids, warm_starts=warm_starts, seed=seed)


@pytest.mark.parametrize("make", [HeuristicOracle, HighsOracle, PulpHighsOracle,
                                  lambda: HybridOracle(check_every=2)],
                         ids=["heuristic", "highs", "pulp", "hybrid"])
def test_seeded_call_answer_does_not_depend_on_the_session_history(make):
    layout = OneHotLayout((4, 5, 3, 6, 4))
    rng = np.random.default_rng(3)
    warm = rng.integers(0, 3, size=(5, layout.n_attributes))
    calls = [_seeded(random_problem(layout, 14, rng, ids=np.arange(14) + 14 * i), seed, warm)
             for i, seed in enumerate((7, 8, 10, 12))]
    fresh = [make().session(layout, 1).solve(call).record.tolist() for call in calls]
    # one session, other seed, another problem solved first, calls in reverse order
    session = make().session(layout, 99)
    session.solve(random_problem(layout, 14, rng, ids=np.arange(14) + 100))
    again = [session.solve(call).record.tolist() for call in reversed(calls)][::-1]
    assert again == fresh


def test_warm_starts_leave_the_session_pool_untouched():
    layout = OneHotLayout((4, 5, 3))
    rng = np.random.default_rng(0)
    session = HeuristicOracle().session(layout, 0)
    session.solve(_seeded(random_problem(layout, 6, rng), 1, np.zeros((0, 3), dtype=int)))
    assert len(session.pool.records) == 0
    session.solve(random_problem(layout, 6, rng))
    assert len(session.pool.records) == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems())
def test_hybrid_checking_every_call_is_exact(problem):
    expected = naive_optimum(problem.layout, problem.literals, problem.negated,
                             problem.weights, problem.linear)
    with HybridOracle(check_every=1, mip_gap=0).session(problem.layout, 0) as session:
        result = session.solve(problem)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(expected, abs=1e-6)
    assert session.stats.n_checked == 1


@pytest.mark.parametrize("seeds, checked", [((0, 3, 6, 7, 9, 12), 5), ((1, 2, 4), 0)])
def test_hybrid_checks_the_calls_whose_seed_it_divides(seeds, checked):
    layout = OneHotLayout((3, 4, 2))
    rng = np.random.default_rng(5)
    session = HybridOracle(check_every=3).session(layout, 0)
    statuses = [session.solve(_seeded(random_problem(layout, 5, rng, ids=np.arange(5) + 5 * i),
                                      seed, None)).status
                for i, seed in enumerate(seeds)]
    assert session.stats.n_checked == checked
    assert statuses.count("heuristic") == len(seeds) - checked


def test_hybrid_without_seeds_checks_one_call_in_check_every():
    layout = OneHotLayout((3, 4, 2))
    rng = np.random.default_rng(5)
    session = HybridOracle(check_every=4).session(layout, 0)
    for i in range(9):
        session.solve(random_problem(layout, 5, rng, ids=np.arange(5) + 5 * i))
    assert (session.stats.calls, session.stats.n_checked) == (9, 3)


def test_hybrid_returns_the_better_exact_record_and_records_the_gap(monkeypatch):
    layout = OneHotLayout((3, 3))
    problem = OracleProblem(layout, [[1, 5]], [False], [2.0], np.zeros(6))
    session = HybridOracle(check_every=1).session(layout, 0)
    # a heuristic that misses the query: objective 0 where 2 is possible
    monkeypatch.setattr(session.heuristic, "_solve",
                        lambda problem, t0: (np.array([0, 0]), "heuristic", np.inf))
    result = session.solve(problem)
    assert (result.record.tolist(), result.objective, result.status) == ([1, 2], 2.0, "optimal")
    stats = session.stats
    assert (stats.n_checked, stats.n_improved, stats.max_gap) == (1, 1, 2.0)


def test_hybrid_failed_check_keeps_the_heuristic_record(monkeypatch):
    layout = OneHotLayout((3, 3))
    problem = OracleProblem(layout, [[1, 5]], [False], [2.0], np.zeros(6))
    session = HybridOracle(check_every=1).session(layout, 0)

    def broken(problem, t0):
        raise RuntimeError("HiGHS is down")

    monkeypatch.setattr(session.exact, "_solve", broken)
    result = session.solve(problem)
    assert (result.record.tolist(), result.status) == ([1, 2], "heuristic")
    assert (session.stats.n_checked, session.stats.n_errors) == (0, 1)
    assert "HiGHS is down" in session.stats.last_error


def test_hybrid_malformed_problem_raises_like_highs():
    layout = OneHotLayout((3, 3))
    session = HybridOracle(check_every=1).session(layout, 0)
    session.solve(OracleProblem(layout, [[1, 5]], [False], [1.0], np.zeros(6), query_ids=[7]))
    with pytest.raises(ValueError, match="query id 7 was first seen"):
        session.solve(OracleProblem(layout, [[0, 4]], [False], [1.0], np.zeros(6), query_ids=[7]))


@pytest.mark.parametrize("check_every", [0, 2.5, True])
def test_hybrid_rejects_bad_check_every(check_every):
    with pytest.raises(ValueError, match="check_every must be an int >= 1"):
        HybridOracle(check_every=check_every).session(OneHotLayout((2, 2)), 0)


def test_solver_stats_merge_adds_checks_and_keeps_the_largest_gap():
    a = SolverStats(calls=3, n_checked=1, n_improved=1, max_gap=0.5)
    b = SolverStats(calls=2, n_checked=2, n_improved=0, max_gap=0.25)
    a.merge(b)
    assert (a.calls, a.n_checked, a.n_improved, a.max_gap) == (5, 3, 1, 0.5)
    assert a.as_dict()["max_gap"] == 0.5


def test_solver_stats_since_a_snapshot_counts_only_what_was_added():
    stats = SolverStats(calls=4, n_optimal=4, n_checked=2, max_gap=0.5)
    before = SolverStats(calls=4, n_optimal=4, n_checked=2, max_gap=0.5)
    stats.record(OracleResult(np.array([0]), 0.0, "heuristic", np.inf, 0.5))
    stats.n_errors, stats.last_error = 1, "RuntimeError: x"
    added = stats.since(before)
    assert (added.calls, added.n_optimal, added.n_heuristic, added.n_checked,
            added.n_errors) == (1, 0, 1, 0, 1)
    assert (added.max_gap, added.last_error) == (0.5, "RuntimeError: x")
    assert stats.since(stats).last_error is None
