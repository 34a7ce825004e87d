"""Determinism: the same random_state gives the same synthetic data whatever n_jobs or threads.

FEM draws its noise, the mechanism's choices and the solver seeds from
independent streams, so with an exact back-end (one optimum per problem, almost
surely, as the perturbation is continuous) the number of parallel workers and
the solver's thread count cannot change the output; an inexact back-end gets
each call's seed and warm starts with the problem, so neither can it.

HiGHS keeps one global
thread scheduler per process; changing it is tested in fresh interpreters
so that no other test depends on the scheduler's state.
"""

import json
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import FEM, AdaptiveProjection, QueryWorkload, SepFEM
from sklearn_privsyn.solvers import HeuristicOracle, HighsOracle, HybridOracle, PulpHighsOracle

COLUMNS = list("abcdef")


def data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: rng.integers(4, size=n) for c in COLUMNS})


def workload():
    return QueryWorkload(domain={c: 4 for c in COLUMNS}, k=3, n_marginals=10, random_state=0)


def fit(cls=FEM, **params):
    defaults = dict(epsilon=1.0, workload=workload(), rounds=5, samples_per_round=6,
                    random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no solver fault may hide in a determinism test
        return cls(**{**defaults, **params}).fit(data())


def assert_same_fit(a, b):
    np.testing.assert_array_equal(a.records_, b.records_)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    assert a.ledger_.entries == b.ledger_.entries
    pd.testing.assert_frame_equal(a.sample(200), b.sample(200))
    pd.testing.assert_frame_equal(a.sample(50, random_state=7), b.sample(50, random_state=7))


@pytest.mark.parametrize("cls, solver", [
    (FEM, HighsOracle()),
    (SepFEM, "brute"),
    (FEM, PulpHighsOracle()),
    (FEM, HeuristicOracle(n_restarts=2)),
    (SepFEM, HybridOracle(check_every=3)),
], ids=["FEM-highs", "SepFEM-brute", "FEM-pulp", "FEM-heuristic", "SepFEM-hybrid"])
def test_n_jobs_does_not_change_the_synthetic_data(cls, solver):
    # inexact oracles too: every call carries its own seed and warm starts, so
    # no worker's history (which calls it happened to serve) reaches an answer
    serial = fit(cls, solver=solver)
    if not isinstance(solver, (HeuristicOracle, HybridOracle)):
        assert serial.solver_stats_.n_optimal == serial.solver_stats_.calls
    # n_jobs=1 would take the serial path again; 2 and 3 spread each round over
    # worker processes (tests/test_concurrency.py covers threads and Dask)
    for n_jobs in (2, 3):
        parallel = fit(cls, solver=solver, n_jobs=n_jobs)
        assert_same_fit(serial, parallel)
        assert parallel.solver_stats_.calls == serial.solver_stats_.calls
        assert parallel.solver_stats_.n_checked == serial.solver_stats_.n_checked


def test_different_random_states_differ():
    # the comparison above can fail: another seed gives other data
    assert not np.array_equal(fit(solver="brute").records_,
                              fit(solver="brute", random_state=1).records_)


@pytest.mark.parametrize("rounds", [1, 3])
def test_adaptive_projection_same_seed_same_synthetic_data(rounds):
    params = dict(epsilon=1.0, workload=workload(), rounds=rounds, max_iter=15, representation="records",
                  solver=HighsOracle(), random_state=0)
    first = AdaptiveProjection(**params).fit(data())
    assert_same_fit(first, AdaptiveProjection(**params).fit(data()))
    other = AdaptiveProjection(**{**params, "random_state": 1}).fit(data())
    if rounds == 1:
        assert not np.array_equal(first.measurements_, other.measurements_, equal_nan=True)
    else:  # adaptive selection: the 1-way measurements differ
        assert not np.array_equal(first.marginal_measurements_[(0,)][0],
                                  other.marginal_measurements_[(0,)][0])


def test_adaptive_selection_with_the_graphical_model_is_deterministic():
    params = dict(epsilon=1.0, workload=workload(), rounds=20, max_iter=15, random_state=0)
    first = AdaptiveProjection(**params).fit(data())
    again = AdaptiveProjection(**params).fit(data())
    assert first.representation_ == "graphical"
    assert first.measured_marginals_ == again.measured_marginals_
    assert first.ledger_.entries == again.ledger_.entries
    for a, b in zip(first.graphical_model_.theta, again.graphical_model_.theta):
        np.testing.assert_array_equal(a, b)
    pd.testing.assert_frame_equal(first.sample(200), again.sample(200))
    other = AdaptiveProjection(**{**params, "random_state": 1}).fit(data())
    assert not first.sample(200).equals(other.sample(200))


SCRIPT = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np, pandas as pd
    from sklearn_privsyn import FEM, QueryWorkload
    from sklearn_privsyn.solvers import HighsOracle, PulpHighsOracle
    cols = list("abcdef")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({c: rng.integers(4, size=300) for c in cols})
    out = []
    for name, threads in json.loads(sys.argv[1]):
        oracle = {"highs": HighsOracle, "pulp": PulpHighsOracle}[name](threads=threads)
        workload = QueryWorkload(domain={c: 4 for c in cols}, k=3, n_marginals=10,
                                 random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = FEM(epsilon=1.0, workload=workload, rounds=5, samples_per_round=6,
                      solver=oracle, random_state=0).fit(X)
        out.append({"records": est.records_.tolist(),
                    "stats": est.solver_stats_.as_dict()})
    print(json.dumps(out))
""")


def run_fresh(runs):
    """Fit in a fresh interpreter, one (back-end, threads) run after another."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(runs)],
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("backend", ["highs", "pulp"])
def test_thread_count_does_not_change_the_synthetic_data(backend):
    (one,) = run_fresh([[backend, 1]])
    (two,) = run_fresh([[backend, 2]])
    for run in (one, two):
        assert run["stats"]["n_optimal"] == run["stats"]["calls"] > 0
    assert one["records"] == two["records"]


@pytest.mark.parametrize("backend", ["highs", "pulp"])
def test_switching_thread_count_within_a_process(backend):
    first, second = run_fresh([[backend, 1], [backend, 2]])
    assert second["stats"]["n_fallback"] == 0
    assert first["records"] == second["records"]


