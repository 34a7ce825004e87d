import math

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import MWEM, QueryWorkload
from sklearn_privsyn.metrics import workload_error
from sklearn_privsyn.mwem import mwem_default_rounds
from sklearn_privsyn.privacy import epsilon_to_rho


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 4
    c = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "b": b, "c": c})
    return X, {"a": 3, "b": 4, "c": 2}


def _fit(**params):
    X, domain = _data()
    workload = params.pop("workload", QueryWorkload(domain=domain, k=2))
    params = {"random_state": 0, **params}
    return MWEM(workload=workload, **params).fit(X), X


def test_domain_size_error_names_size_and_suggests_fem():
    X, domain = _data()
    est = MWEM(workload=QueryWorkload(domain=domain, k=2), max_domain_size=23)
    with pytest.raises(ValueError, match=r"24 points .*max_domain_size=23.*FEM"):
        est.fit(X)


def test_domain_size_error_on_a_large_domain_before_allocating():
    X = pd.DataFrame({f"c{i}": [0, 1] for i in range(30)})
    workload = QueryWorkload(domain={f"c{i}": 100 for i in range(30)}, k=1)
    with pytest.raises(ValueError, match=r"1,000,000,000,000,000,000,.* points"):
        MWEM(workload=workload).fit(X)


@pytest.mark.parametrize("epsilon", [0.1, 1.0])
@pytest.mark.parametrize("rounds,share", [(5, 0.5), (12, 0.3)])
def test_accounting_matches_formula(epsilon, rounds, share):
    est, X = _fit(epsilon=epsilon, rounds=rounds, selection_share=share)
    n = len(X)
    rho = epsilon_to_rho(epsilon, 1 / n**2)
    eps_sel = math.sqrt(8 * share * rho / rounds)
    sigma = (1 / n) / math.sqrt(2 * (1 - share) * rho / rounds)
    frame = est.ledger_.to_frame().groupby("mechanism")[["total_rho", "count"]].sum()
    assert frame.loc["exponential_mechanism", "count"] == rounds
    assert frame.loc["gaussian_mechanism", "count"] == rounds
    assert frame.loc["exponential_mechanism", "total_rho"] == pytest.approx(
        rounds * eps_sel**2 / 8, rel=1e-6)
    assert frame.loc["gaussian_mechanism", "total_rho"] == pytest.approx(
        rounds * (1 / n) ** 2 / (2 * sigma**2), rel=1e-6)
    assert est.ledger_.rho_spent <= est.rho_
    assert est.epsilon_ <= epsilon
    assert est.n_rounds_ == rounds
    assert est.measurements_.shape == (rounds, 2)


def test_default_rounds_rule():
    est, X = _fit(epsilon=1.0)
    n, Q = len(X), est.workload_.n_queries_
    expected = round(2 * math.sqrt(math.log(24)) * n * math.sqrt(est.rho_) / math.log(2 * Q))
    assert est.n_rounds_ == max(1, min(1000, expected))
    assert mwem_default_rounds(10, 1e-9, 10, 100) == 1
    assert mwem_default_rounds(10**6, 1.0, 10**6, 100) == 1000


def test_histogram_answers_match_workload():
    # the per-marginal answers MWEM scores with must be the workload's answers on
    # the histogram, whatever the order of the marginals' columns
    X, domain = _data()
    workload = QueryWorkload(domain=domain, marginals=[("c", "a"), ("b",), ("b", "a", "c")])
    est = MWEM(epsilon=1.0, workload=workload, rounds=3, random_state=0).fit(X)
    wl = est.workload_
    hist = np.random.default_rng(0).random((3, 4, 2))
    hist /= hist.sum()
    got = MWEM._answers(hist, MWEM._marginal_index(wl), wl.n_queries_)
    cells = np.stack(np.unravel_index(np.arange(hist.size), hist.shape), axis=1)
    np.testing.assert_allclose(got, wl.answer_codes(cells, hist.ravel()))


def test_output_is_the_histogram_for_small_domains():
    est, _ = _fit(epsilon=1.0, rounds=4)
    assert est.records_.shape == (24, 3)
    np.testing.assert_allclose(est.weights_, est.histogram_[tuple(est.records_.T)])
    assert est.weights_.sum() == pytest.approx(1.0)


def test_output_is_a_sample_for_large_domains():
    est, _ = _fit(epsilon=1.0, rounds=4, max_output_records=10)
    assert len(est.records_) <= 10
    counts = est.weights_ * 10
    np.testing.assert_allclose(counts, np.round(counts))
    # systematic sampling: each count within 1 of 10 * probability
    assert np.all(np.abs(counts - 10 * est.histogram_[tuple(est.records_.T)]) < 1 + 1e-9)


def test_high_budget_is_accurate():
    est, X = _fit(epsilon=50.0, rounds=30, n_passes=5)
    err = workload_error(est.workload_, est.workload_.encode(X), est.records_,
                         synthetic_weights=est.weights_)
    uniform = workload_error(est.workload_, est.workload_.encode(X),
                             est.records_, synthetic_weights=np.ones(len(est.records_)))
    assert err.max_error < 0.05
    assert err.max_error < uniform.max_error / 3


def test_deterministic_with_random_state():
    a, _ = _fit(epsilon=1.0)
    b, _ = _fit(epsilon=1.0)
    c, _ = _fit(epsilon=1.0, random_state=1)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.measurements_, b.measurements_)
    assert not np.array_equal(a.measurements_, c.measurements_)


def test_sample_columns_and_dtypes():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({
        "colour": rng.choice(["red", "blue"], 200),
        "size": rng.integers(0, 3, 200),
    })
    workload = QueryWorkload(domain={"colour": ["red", "blue"], "size": 3}, k=2)
    est = MWEM(epsilon=1.0, workload=workload, random_state=0).fit(X)
    out = est.sample(40, random_state=0)
    assert list(out.columns) == ["colour", "size"]
    assert out.shape == (40, 2)
    assert set(out["colour"]) <= {"red", "blue"}
    assert out["size"].dtype.kind == "i"
    arr = MWEM(epsilon=1.0, workload=workload, random_state=0).fit(X).sample(5)
    assert isinstance(arr, pd.DataFrame)


def test_parameter_validation():
    X, domain = _data()
    with pytest.raises(ValueError, match="selection_share"):
        MWEM(selection_share=1.0, workload=QueryWorkload(domain=domain, k=2)).fit(X)
