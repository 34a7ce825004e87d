"""Concurrency: FEM's parallel data player under threads, processes and Dask.

Each worker keeps its own oracle session per fit (thread-local), so threads
never share a HiGHS model and concurrent fits never close each other's
sessions. With an exact back-end the output is the serial path's, whatever the
backend; every comparison below is with a run that genuinely used more than
one worker.
"""

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_backend

from sklearn_privsyn import FEM, QueryWorkload
from sklearn_privsyn.solvers import HighsOracle

COLUMNS = list("abcdef")


def data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({c: rng.integers(4, size=n) for c in COLUMNS})


def fem(**params):
    workload = QueryWorkload(domain={c: 4 for c in COLUMNS}, k=3, n_marginals=10,
                             random_state=0)
    return FEM(**{"epsilon": 1.0, "workload": workload, "rounds": 5, "samples_per_round": 6,
                  "solver": HighsOracle(), "random_state": 0, **params})


class ThreadRecordingOracle:
    """HiGHS, recording the thread of every call (sessions are the workers')."""

    def __init__(self):
        self.threads = []

    def session(self, layout, random_state=None):
        inner = HighsOracle().session(layout, random_state)
        threads = self.threads

        class Session:
            stats = inner.stats

            def solve(self, problem):
                threads.append(threading.get_ident())
                return inner.solve(problem)

            def close(self):
                inner.close()

        return Session()


def assert_same_fit(a, b):
    np.testing.assert_array_equal(a.records_, b.records_)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    assert a.ledger_.entries == b.ledger_.entries
    assert b.solver_stats_.calls == a.solver_stats_.calls
    assert b.solver_stats_.n_optimal == b.solver_stats_.calls
    assert b.solver_stats_.n_errors == 0


@pytest.fixture(scope="module")
def serial():
    return fem().fit(data())


def test_threading_backend_uses_several_threads_and_matches_the_serial_fit(serial):
    oracle = ThreadRecordingOracle()
    with parallel_backend("threading", n_jobs=2):
        parallel = fem(solver=oracle, n_jobs=2).fit(data())
    # genuinely parallel: the calls ran in two worker threads, not in this one
    assert len(set(oracle.threads)) == 2
    assert threading.get_ident() not in oracle.threads
    assert_same_fit(serial, parallel)


def test_process_backend_matches_the_serial_fit(serial):
    with parallel_backend("loky", n_jobs=2):
        parallel = fem(n_jobs=2).fit(data())
    assert_same_fit(serial, parallel)


def test_concurrent_fits_in_threads_each_with_a_threading_backend(serial):
    # three fits at once, each spreading its oracle calls over two more threads:
    # no session is shared or closed under another fit
    def fit(_):
        with parallel_backend("threading", n_jobs=2):
            return fem(n_jobs=2).fit(data())

    with ThreadPoolExecutor(max_workers=3) as pool:
        fits = list(pool.map(fit, range(3)))
    for parallel in fits:
        assert_same_fit(serial, parallel)


def test_concurrent_serial_fits_in_threads(serial):
    with ThreadPoolExecutor(max_workers=3) as pool:
        fits = list(pool.map(lambda _: fem().fit(data()), range(3)))
    for other in fits:
        assert_same_fit(serial, other)


def test_parallel_workers_report_their_errors():
    class FailingOnOddCalls:
        def __init__(self):
            self.lock = threading.Lock()
            self.count = 0

        def session(self, layout, random_state=None):
            inner = HighsOracle().session(layout, random_state)
            outer = self

            class Session:
                def solve(self, problem):
                    with outer.lock:
                        outer.count += 1
                        odd = outer.count % 2
                    if odd:
                        raise RuntimeError("worker fault")
                    return inner.solve(problem)

                def close(self):
                    inner.close()

            return Session()

    oracle = FailingOnOddCalls()
    with parallel_backend("threading", n_jobs=2):
        with pytest.warns(Warning, match="worker fault"):
            est = fem(solver=oracle, n_jobs=2).fit(data())
    stats = est.solver_stats_
    assert stats.calls == oracle.count == (est.n_rounds_ + 1) * 6
    assert stats.n_errors == stats.n_fallback == (oracle.count + 1) // 2
    assert stats.last_error == "RuntimeError: worker fault"


# ---------------------------------------------------------------------- Dask


LOAD_RUNNER = """
import importlib.util, sys
if "privsyn_bench_run" not in sys.modules:
    spec = importlib.util.spec_from_file_location("privsyn_bench_run", {path!r})
    sys.modules[spec.name] = module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
"""


def _load_run():
    exec(LOAD_RUNNER.format(path=str(Path(__file__).resolve().parents[1] / "benchmarks" / "run.py")),
         {})
    return sys.modules["privsyn_bench_run"]


@pytest.mark.parametrize("processes", [True, False], ids=["processes", "threads"])
def test_fit_and_benchmark_grid_on_a_dask_local_cluster(serial, processes, tmp_path):
    distributed = pytest.importorskip("distributed")
    run = _load_run()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                  dashboard_address=None, silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        # the runner is not an installed module: worker processes load it from its file
        client.run(exec, LOAD_RUNNER.format(path=run.__file__), {})
        with parallel_backend("dask"):
            parallel = fem(n_jobs=2).fit(data())
            domain = tmp_path / "tiny-domain.json"
            domain.write_text('{"a": 3, "b": 4, "c": 2}')
            specs = run.expand_grid({
                "algorithms": ["fem", "zeros"], "datasets": [f"generated:{domain}:300"],
                "epsilon": [1.0], "k": [2], "n_marginals": [3], "seeds": [0],
                "params": {"fem": {"solver": "heuristic", "rounds": 3,
                                   "samples_per_round": 3}},
            })
            rows = run.run_grid(specs, tmp_path / "runs.csv", n_jobs=2, isolation="none",
                                progress=False)
    assert_same_fit(serial, parallel)
    assert sorted(row["algorithm"] for row in rows) == ["fem", "zeros"]
    assert all(row["status"] == "ok" for row in rows), [row.get("error") for row in rows]
    assert all(float(row["max_error"]) <= 1.0 for row in rows)
