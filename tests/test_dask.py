"""Fitting on a Dask DataFrame: the counts, the fits, the errors, and a LocalCluster.

A fit on a ``dask.dataframe.DataFrame`` reads the rows only as marginal counts
computed partition by partition (``sklearn_privsyn/counts.py``). For the same
rows and seed it must equal the fit on the same rows in pandas: the same
counts, the same ledger, the same fitted records and the same sample.
"""

import json
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import DQRS, FEM, MWEM, AdaptiveProjection, DualQuery, QueryWorkload
from sklearn_privsyn.clock import is_hhmm, minutes_to_hhmm
from sklearn_privsyn.counts import DaskCounts, RecordCounts, is_dask_frame, schema

dd = pytest.importorskip("dask.dataframe")

DOMAIN = {"a": 3, "b": 4, "c": ["x", "y"], "d": [False, True]}


def table(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    return pd.DataFrame({
        "a": a,
        "b": (a + rng.integers(0, 2, n)) % 4,
        "c": np.where(rng.random(n) < 0.3, "x", "y"),
        "d": rng.random(n) < 0.5,
    })


def as_dask(X, npartitions=4):
    return dd.from_pandas(X, npartitions=npartitions)


def workload(k=2):
    return QueryWorkload(domain=DOMAIN, k=k)


ESTIMATORS = {
    "AdaptiveProjection": lambda: AdaptiveProjection(epsilon=1.0, workload=workload(),
                                                     random_state=0),
    "AdaptiveProjection-rounds": lambda: AdaptiveProjection(epsilon=1.0, workload=workload(),
                                                            rounds=3, solver="brute",
                                                            random_state=0),
    "FEM": lambda: FEM(epsilon=1.0, workload=workload(), solver="brute", random_state=0),
    "DualQuery": lambda: DualQuery(epsilon=1.0, workload=workload(), solver="brute",
                                   random_state=0),
    "DQRS": lambda: DQRS(epsilon=1.0, workload=workload(), solver="brute", random_state=0),
    "MWEM": lambda: MWEM(epsilon=1.0, workload=workload(), random_state=0),
}


def test_is_dask_frame():
    X = table(10)
    assert is_dask_frame(as_dask(X, 2))
    assert not is_dask_frame(X)
    assert not is_dask_frame(X.to_numpy())


@pytest.mark.parametrize("npartitions", [1, 3, 17])
def test_dask_counts_equal_the_records_counts(npartitions):
    X = table(300)
    wl = workload(k=3).fit(X)
    memory = RecordCounts(wl, wl.encode(X))
    D = as_dask(X, npartitions)
    dask = DaskCounts(workload(k=3).fit_schema(schema(D), len(X)), D, len(X))
    assert dask.n_rows == memory.n_rows == 300
    np.testing.assert_array_equal(dask.counts(), memory.counts())
    np.testing.assert_array_equal(dask.answers(), memory.answers())
    one_way = [(0,), (1,), (2,), (3,)]
    np.testing.assert_array_equal(dask.counts(one_way), memory.counts(one_way))
    # a marginal outside the first pass takes one more pass, with the same result
    np.testing.assert_array_equal(dask.counts([(3, 0)]), memory.counts([(3, 0)]))
    # exact integers: every cell of every marginal sums to the rows
    assert dask.counts([(1,)]).sum() == 300


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_fit_on_dask_equals_the_fit_on_the_same_rows_in_pandas(name):
    D = as_dask(table(), npartitions=5)
    X = D.compute()  # the same rows, with the dtypes dask gives them
    memory = ESTIMATORS[name]().fit(X)
    dask = ESTIMATORS[name]().fit(D)
    assert dask.ledger_.entries == memory.ledger_.entries
    assert dask.epsilon_ == memory.epsilon_ and dask.delta_ == memory.delta_
    if hasattr(memory, "records_"):
        np.testing.assert_array_equal(dask.records_, memory.records_)
        np.testing.assert_array_equal(dask.weights_, memory.weights_)
    pd.testing.assert_frame_equal(dask.sample(50, random_state=1),
                                  memory.sample(50, random_state=1))
    assert list(dask.feature_names_in_) == list(X.columns)
    assert dask.n_features_in_ == 4


def test_a_dask_fit_with_derived_columns_equals_the_pandas_fit():
    D = as_dask(table().assign(e=lambda t: t["b"] // 2), npartitions=3)
    X = D.compute()  # the same rows, with the dtypes dask gives them
    derived = {"e": {"of": "b", "floordiv": 2}}
    fits = [AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(domain=DOMAIN, k=2,
                                                                   derived=derived),
                               random_state=0).fit(rows)
            for rows in (X, D)]
    assert fits[0].ledger_.entries == fits[1].ledger_.entries
    samples = [f.sample(50, random_state=1) for f in fits]
    pd.testing.assert_frame_equal(samples[0], samples[1])
    assert (samples[0]["e"] == samples[0]["b"] // 2).all()


def test_dask_fit_without_a_domain_names_the_columns():
    X = table()
    D = as_dask(X.assign(e=np.arange(len(X)) % 5), 2)
    with pytest.raises(ValueError, match=r"Columns \['e'\] have no public domain"):
        AdaptiveProjection(workload=QueryWorkload(domain=DOMAIN, k=2)).fit(D)
    # the default workload has no domain at all
    with pytest.raises(ValueError, match="no public domain"):
        AdaptiveProjection().fit(as_dask(X, 2))


def test_dask_fit_value_outside_the_domain_names_the_column_not_the_value():
    X = table().astype({"c": object})
    X.loc[7, "c"] = "secret-value"
    with pytest.raises(ValueError, match="Column 'c'") as info:
        AdaptiveProjection(workload=workload()).fit(as_dask(X, 3))
    assert "secret-value" not in str(info.value)


def test_dask_fit_rejects_y_and_a_single_row():
    D = as_dask(table(), 2)
    with pytest.raises(ValueError, match="add it to X as a column"):
        AdaptiveProjection(workload=workload()).fit(D, y=np.zeros(400))
    one = as_dask(table().iloc[:1], 1)
    with pytest.raises(ValueError, match="n_samples=1"):
        AdaptiveProjection(workload=workload()).fit(one)


def test_dask_is_not_imported_by_the_package():
    code = ("import sys, sklearn_privsyn, sklearn_privsyn.counts; "
            "from sklearn_privsyn import AdaptiveProjection; "
            "print(any(m == 'dask' or m.startswith('dask.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_fit_on_a_local_cluster_equals_the_pandas_fit(tmp_path):
    distributed = pytest.importorskip("distributed")
    X = table(1000, seed=3)
    path = tmp_path / "parts"
    as_dask(X, 4).to_parquet(path)
    # in-process workers keep the test fast; what crosses to worker processes (the
    # workload and the marginal set) is checked to pickle below
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None, memory_limit="1GB") as cluster, \
            distributed.Client(cluster) as client:
        D = dd.read_parquet(path)
        assert D.npartitions == 4
        with distributed.get_task_stream(client) as stream:
            dask = AdaptiveProjection(epsilon=1.0, workload=workload(k=3),
                                      random_state=0).fit(D)
        # every partition was counted by a task on the cluster's workers
        keys = [t["key"][0] if isinstance(t["key"], tuple) else t["key"] for t in stream.data]
        counted = [t for t, key in zip(stream.data, keys) if key.startswith("_count_partition")]
        assert len(counted) == 4
        assert {t["worker"] for t in counted} <= set(client.scheduler_info()["workers"])
    memory = AdaptiveProjection(epsilon=1.0, workload=workload(k=3),
                                random_state=0).fit(dd.read_parquet(path).compute())
    assert dask.ledger_.entries == memory.ledger_.entries
    pd.testing.assert_frame_equal(dask.sample(100, random_state=2),
                                  memory.sample(100, random_state=2))


def test_what_the_counting_tasks_carry_pickles():
    X = table(50)
    wl = workload(k=3).fit(X)
    again = pickle.loads(pickle.dumps(wl))
    np.testing.assert_array_equal(RecordCounts(again, again.encode(X)).counts(),
                                  RecordCounts(wl, wl.encode(X)).counts())
    marginal_set = pickle.loads(pickle.dumps(wl.marginal_set_))
    np.testing.assert_array_equal(marginal_set.counts(wl.encode(X)),
                                  wl.marginal_set_.counts(wl.encode(X)))


@pytest.mark.parametrize("npartitions", [1, 3])
def test_numbers_measured_on_dask_equal_the_pandas_ones(npartitions):
    # binned numbers (public bounds, a missable one, a clock counted in minutes): the
    # numbers' measurement counts each partition where it lives; the same noisy
    # measurement, refined coders and sample
    rng = np.random.default_rng(0)
    n = 3000
    X = table(n).assign(
        gain=np.where(rng.random(n) < 0.7, 0, rng.integers(1, 9000, n)),
        score=np.where(rng.random(n) < 0.1, np.nan, rng.beta(2, 5, n) * 10),
        time=minutes_to_hhmm(rng.integers(300, 1400, n)))
    wl = QueryWorkload(domain=DOMAIN, bounds={"gain": (0, 9999), "score": (0, 10),
                                              "time": (0, 2400)},
                       handle_missing=["score"], clocks=["time"], k=2)
    D = as_dask(X, npartitions)
    fits = [AdaptiveProjection(epsilon=1.0, workload=wl, number_share=0.2, rounds=1,
                               max_iter=5, solver="heuristic", random_state=0).fit(data)
            for data in (D.compute(), D)]  # the same rows, with the dtypes dask gives them
    assert fits[0].number_share_ == 0.2
    assert fits[0].ledger_.entries == fits[1].ledger_.entries
    for col in ("gain", "score", "time"):
        assert np.array_equal(fits[0].number_measurements_[col],
                              fits[1].number_measurements_[col])
        assert np.array_equal(fits[0].workload_.bin_edges_[col], fits[1].workload_.bin_edges_[col])
    samples = [f.sample(500, random_state=1) for f in fits]
    pd.testing.assert_frame_equal(samples[0], samples[1])
    assert is_hhmm(samples[0]["time"]).all()


# ---------------------------------------------------------------------- the command line


@pytest.fixture()
def dataset(tmp_path):
    """The same private rows as a CSV file and as a Parquet dataset directory, and a domain."""
    rng = np.random.default_rng(1)
    n = 300
    frame = pd.DataFrame({
        "colour": rng.choice(["red", "green", "blue"], n),
        "code": rng.integers(0, 3, n),
        "amount": rng.uniform(0, 100, n).round(2),
    })
    frame.to_csv(tmp_path / "rows.csv", index=False)
    as_dask(frame, 3).to_parquet(tmp_path / "rows")
    domain = {"colour": ["red", "green", "blue"], "code": 3,
              "amount": {"bounds": [0, 100], "bins": 4}}
    (tmp_path / "domain.json").write_text(json.dumps(domain))
    return tmp_path


CLI_FAST = ["--algorithm", "fem", "--solver", "brute", "--rounds", "4",
            "--samples-per-round", "3", "--seed", "0", "--k", "2", "-q"]


def test_cli_fits_a_parquet_dataset_directory_as_the_same_rows_in_a_file(dataset):
    from sklearn_privsyn.cli import main

    domain = str(dataset / "domain.json")
    assert main(["fit", str(dataset / "rows"), "--domain", domain, *CLI_FAST,
                 "-o", str(dataset / "from_directory.csv")]) == 0
    assert main(["fit", str(dataset / "rows.csv"), "--domain", domain, *CLI_FAST,
                 "-o", str(dataset / "from_file.csv")]) == 0
    directory = (dataset / "from_directory.csv").read_text()
    assert directory == (dataset / "from_file.csv").read_text()
    assert len(directory.splitlines()) == 301  # header and as many rows as the input


def test_cli_counts_a_dataset_directory_once_and_the_estimator_once(dataset, monkeypatch):
    from sklearn_privsyn import _base, counts
    from sklearn_privsyn.cli import main

    passes = []
    count = counts.n_rows

    def counted(frame):
        passes.append(counts.is_dask_frame(frame))
        return count(frame)

    monkeypatch.setattr(counts, "n_rows", counted)
    monkeypatch.setattr(_base, "n_rows", counted)
    assert main(["fit", str(dataset / "rows"), "--domain", str(dataset / "domain.json"),
                 *CLI_FAST, "-o", str(dataset / "out.csv")]) == 0
    # the command's count serves the workload's cell budget too; fit counts its own X
    assert passes == [True, True]


def test_cli_parquet_dataset_directory_errors(dataset, capsys):
    from sklearn_privsyn.cli import EXIT_DATA, EXIT_USAGE, main

    rows, domain = str(dataset / "rows"), str(dataset / "domain.json")
    assert main(["fit", rows, "--infer-domain", *CLI_FAST]) == EXIT_USAGE
    assert "give --domain" in capsys.readouterr().err
    assert main(["fit", str(dataset / "rows.csv"), "--domain", domain, "--scheduler",
                 "tcp://127.0.0.1:1", *CLI_FAST]) == EXIT_USAGE
    assert "only to a Parquet dataset directory" in capsys.readouterr().err
    other = json.loads((dataset / "domain.json").read_text())
    other["size"] = 4
    (dataset / "other.json").write_text(json.dumps(other))
    assert main(["fit", rows, "--domain", str(dataset / "other.json"), *CLI_FAST]) == EXIT_DATA
    assert "has no column 'size'" in capsys.readouterr().err
