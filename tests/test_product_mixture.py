"""The mixture-of-products representation: gradient, fit, sampling, and its use in AdaptiveProjection."""

import itertools
import math
import pickle

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.adaptive import (
    PRODUCTS_COLUMNS,
    adaptive_default_representation,
    workload_pairs,
)
from sklearn_privsyn.metrics import synthesizer_error
from sklearn_privsyn.product_mixture import (
    ProductMixture,
    fit_product_mixture,
    sample_product_mixture,
)

SIZES = {"a": 2, "b": 3, "c": 2, "d": 3}


def workload(k=3):
    X = pd.DataFrame({c: [0] for c in SIZES})
    return QueryWorkload(domain=SIZES, k=k).fit(X)


def random_mixture(n_components, seed):
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.ones(n_components))
    tables = [rng.dirichlet(np.full(s, 0.5), size=n_components) for s in SIZES.values()]
    return weights, tables


def joint(weights, tables):
    """The mixture's full joint distribution, by enumeration (independent of the module)."""
    sizes = [t.shape[1] for t in tables]
    p = np.zeros(sizes)
    for v in itertools.product(*(range(s) for s in sizes)):
        p[v] = sum(w * np.prod([t[k, x] for t, x in zip(tables, v)])
                   for k, w in enumerate(weights))
    return p


def marginal_answers(wl, p):
    """The workload's cells from a full joint table ``p`` (C order within each marginal)."""
    out = []
    for m in wl.marginal_set_.marginals:
        drop = tuple(a for a in range(p.ndim) if a not in m)
        out.append(p.sum(axis=drop).ravel())
    return np.concatenate(out)


def test_answers_match_the_enumerated_joint():
    wl = workload()
    weights, tables = random_mixture(3, seed=0)
    np.testing.assert_allclose(ProductMixture.answers_of(wl, weights, tables),
                               marginal_answers(wl, joint(weights, tables)), atol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_gradient_matches_finite_differences(k):
    wl = workload(k)
    rng = np.random.default_rng(k)
    noisy = rng.uniform(0, 0.3, wl.n_queries_)
    variances = rng.uniform(1e-3, 1e-2, wl.n_queries_)
    variances[: len(variances) // 3] = np.inf  # some cells not measured
    mixture = ProductMixture(wl, noisy, variances, n_components=3, random_state=0)
    x = mixture._start()
    _, gradient = mixture._objective_gradient(x)
    h = 1e-6
    numeric = np.array([
        (mixture._objective_gradient(x + h * e)[0] - mixture._objective_gradient(x - h * e)[0])
        / (2 * h) for e in np.eye(len(x))
    ])
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6 * np.abs(gradient).max())


@pytest.mark.parametrize("seed", [0, 1])
def test_answers_realisable_by_k_products_are_recovered(seed):
    wl = workload()
    weights, tables = random_mixture(2, seed)
    exact = marginal_answers(wl, joint(weights, tables))
    fit = fit_product_mixture(wl, exact, 1e-4, n_components=2, max_iter=2000, tol=1e-14,
                              random_state=seed)
    assert fit.objective < 1e-6 * fit.start_objective
    np.testing.assert_allclose(ProductMixture.answers_of(wl, fit.weights, fit.tables), exact,
                               atol=2e-3)


@pytest.mark.parametrize("max_iter", [1, 5, 200])
def test_objective_never_worse_than_the_start(max_iter):
    wl = workload()
    rng = np.random.default_rng(3)
    noisy = rng.normal(0.1, 0.2, wl.n_queries_)  # not answers of any distribution
    fit = fit_product_mixture(wl, noisy, 0.01, n_components=4, max_iter=max_iter,
                              random_state=0)
    assert fit.objective <= fit.start_objective
    assert fit.weights.sum() == pytest.approx(1.0)
    for t in fit.tables:
        np.testing.assert_allclose(t.sum(axis=1), 1.0)


def test_same_seed_same_fit_other_seed_differs():
    wl = workload()
    noisy = marginal_answers(wl, joint(*random_mixture(3, seed=5)))
    a, b, c = (fit_product_mixture(wl, noisy, 1e-3, n_components=3, max_iter=30, random_state=s)
               for s in (0, 0, 1))
    np.testing.assert_array_equal(a.weights, b.weights)
    for ta, tb in zip(a.tables, b.tables):
        np.testing.assert_array_equal(ta, tb)
    assert not np.array_equal(a.weights, c.weights)


def test_rejects_bad_variances():
    wl = workload()
    with pytest.raises(ValueError, match="variances must be positive"):
        ProductMixture(wl, np.zeros(wl.n_queries_), 0.0)
    noisy = np.full(wl.n_queries_, np.nan)
    with pytest.raises(ValueError, match="finite where measured"):
        ProductMixture(wl, noisy, 1.0)


def test_sample_follows_the_mixture():
    weights, tables = random_mixture(3, seed=2)
    tables = tables[:2]  # columns a (2 values) and b (3 values): 6 cells
    n = 20000
    records = sample_product_mixture(weights, tables, n, random_state=0)
    observed = np.bincount(records[:, 0] * 3 + records[:, 1], minlength=6)
    expected = n * joint(weights, tables).ravel()
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    again = sample_product_mixture(weights, tables, n, random_state=0)
    np.testing.assert_array_equal(records, again)


def data(n=400, seed=0, n_cols=5, size=4):
    rng = np.random.default_rng(seed)
    z = rng.integers(2, size=n)
    return pd.DataFrame({f"x{j}": (z * (j + 1) + rng.integers(size - 1, size=n)) % size
                         for j in range(n_cols)})


def fit(**params):
    defaults = dict(epsilon=1.0, workload=QueryWorkload(domain={f"x{j}": 4 for j in range(5)},
                                                        k=3),
                    solver="heuristic", max_iter=20, n_components=4, random_state=0)
    return AdaptiveProjection(**{**defaults, **params}).fit(data())


@pytest.mark.parametrize("rounds", [1, 3])
def test_products_are_post_processing_the_ledger_and_measurements_do_not_change(rounds):
    products, records = fit(rounds=rounds, representation="products"), fit(rounds=rounds)
    assert products.ledger_.entries == records.ledger_.entries
    assert products.representation_ == "products"
    if rounds == 1:  # adaptive selections depend on the representation's answers
        np.testing.assert_array_equal(products.measurements_, records.measurements_)
    assert not hasattr(products, "records_")
    assert products.component_weights_.shape == (4,)
    assert [t.shape for t in products.component_tables_] == [(4, 4)] * 5


def test_products_sample_is_deterministic_and_pickles():
    a, b = fit(rounds=3, representation="products"), fit(rounds=3, representation="products")
    np.testing.assert_array_equal(a.component_weights_, b.component_weights_)
    pd.testing.assert_frame_equal(a.sample(100), b.sample(100))
    loaded = pickle.loads(pickle.dumps(a))
    pd.testing.assert_frame_equal(a.sample(60, random_state=4), loaded.sample(60, random_state=4))
    assert not a.sample(100, random_state=1).equals(a.sample(100, random_state=2))


def test_products_fitted_answers_are_the_mixture_answers():
    est = fit(rounds=1, representation="products")
    answers = est.fitted_answers()
    assert answers.shape == (est.workload_.n_queries_,)
    sample = est.workload_.encode(est.sample(20000, random_state=0))
    assert np.abs(est.workload_.answer_codes(sample) - answers).max() < 0.03
    error = synthesizer_error(est, data())
    assert error.max_error == pytest.approx(np.abs(est.workload_.answer(data()) - answers).max())


def test_products_verbose_shows_a_progress_bar(capsys):
    fit(rounds=1, representation="products", verbose=1)
    assert "AdaptiveProjection" in capsys.readouterr().err


def test_bad_representation_is_rejected():
    with pytest.raises(ValueError, match="representation"):
        fit(representation="points")


@pytest.mark.parametrize("n, rho, M, rounds", [
    (48842, 0.000167, 64, 1), (48842, 0.0143, 64, 1), (7000, 0.018, 64, 1), (1000, 3e-4, 64, 2),
    (400, 5.0, 10, 1),
])
def test_default_representation_rule(n, rho, M, rounds):
    sigma_all = math.sqrt(M / rho) / n
    expected = "products" if rounds == 1 and sigma_all >= 0.005 else "records"
    if rounds >= 2:  # adaptive selection: the graphical model
        expected = "graphical"
    assert adaptive_default_representation(n, rho, M, rounds) == expected


@pytest.mark.parametrize("n_columns", [None, 14, PRODUCTS_COLUMNS, PRODUCTS_COLUMNS + 1, 80])
def test_default_representation_rule_sees_the_width(n_columns):
    # where the noise alone would choose products, a wide table gets the records
    n, rho, M = 48842, 0.000167, 64  # sigma_all 0.0127
    expected = ("products" if n_columns is None or n_columns <= PRODUCTS_COLUMNS
                else "records")
    assert adaptive_default_representation(n, rho, M, 1, n_columns=n_columns) == expected
    # below the noise level, or measuring the 1-way marginals only, width changes nothing
    assert adaptive_default_representation(n, 0.0143, M, 1, n_columns=n_columns) == "records"
    assert adaptive_default_representation(n, rho, M, 0, n_columns=n_columns) == "products"


@pytest.mark.parametrize("n_pairs", [None, 100, PRODUCTS_COLUMNS * (PRODUCTS_COLUMNS - 1) // 2,
                                     PRODUCTS_COLUMNS * (PRODUCTS_COLUMNS - 1) // 2 + 1, 3000])
def test_a_wide_table_whose_workload_holds_few_pairs_gets_the_products(n_pairs):
    n, rho, M = 48842, 0.000167, 64  # sigma_all 0.0127: the noise alone chooses products
    few = n_pairs is not None and n_pairs <= 496
    assert adaptive_default_representation(n, rho, M, 1, n_columns=80, n_pairs=n_pairs) == (
        "products" if few else "records")
    # a narrow table's choice never depends on its pairs
    assert adaptive_default_representation(n, rho, M, 1, n_columns=14, n_pairs=n_pairs) == (
        "products")
    assert adaptive_default_representation(n, 0.0143, M, 1, n_columns=80,
                                           n_pairs=n_pairs) == "records"


def test_workload_pairs_counts_distinct_column_pairs():
    assert workload_pairs([(0, 1, 2), (0, 1, 3), (2, 1)]) == 5
    assert workload_pairs([(0,), (1,)]) == 0
    assert workload_pairs([tuple(range(32))]) == 496


def test_auto_representation_follows_the_rule():
    chosen = set()
    for epsilon in (0.3, 30.0):
        est = fit(rounds=1, representation="auto", epsilon=epsilon)
        M = len(est.workload_.marginals_)
        assert est.representation_ == adaptive_default_representation(400, est.rho_, M, 1)
        assert hasattr(est, "records_") == (est.representation_ == "records")
        chosen.add(est.representation_)
    assert chosen == {"records", "products"}


def test_products_zero_test_is_post_processing():
    with_test = fit(rounds=1, representation="products", zero_test=2.0)
    without = fit(rounds=1, representation="products", zero_test=None)
    assert with_test.ledger_.entries == without.ledger_.entries
    np.testing.assert_array_equal(with_test.measurements_, without.measurements_)
    assert not np.array_equal(with_test.component_weights_, without.component_weights_)
    # the objective is reported against the measured answers, not the zeroed ones
    mixture = ProductMixture(with_test.workload_, with_test.measurements_,
                             with_test.measurement_variances_, n_components=4)
    mixture.x = np.concatenate([np.log(with_test.component_weights_),
                                np.log(np.hstack(with_test.component_tables_)).ravel()])
    assert with_test.projection_objective_ == pytest.approx(mixture.objective(), rel=1e-9)


def test_products_time_limit_stops_the_fit_with_the_last_iterate():
    est = fit(rounds=1, representation="products", max_iter=1000, time_limit=1e-9)
    assert est.projection_stop_ == "time_limit"
    assert est.n_iter_ == 1
    assert est.component_weights_.sum() == pytest.approx(1.0)
