"""AdaptiveProjection's 1-way calibration (sklearn_privsyn.adaptive._calibration).

The estimates of each column's shares from every measured marginal, their sd against a
direct computation, the correction of values above their estimate only, and on a fit: the
records' rare value pulled back where the projection leaked mass onto it.
"""

import warnings

from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest

import sklearn_privsyn.adaptive._fitting as fitting
import sklearn_privsyn.adaptive._schedules as schedules
from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.adaptive import calibrate_weights, calibrated_shares, one_way_estimates
from sklearn_privsyn.adaptive._calibration import ALPHA
from sklearn_privsyn.adaptive._rules import HOLD_BOOST


def test_the_estimates_are_each_marginals_sums_weighted_by_their_noise():
    rng = np.random.default_rng(0)
    sizes = [2, 3, 4]
    marginals = [(0, 1), (0, 1, 2), (1, 2)]
    rows = np.column_stack([rng.integers(0, s, 500) for s in sizes])
    answers, offsets = [], [0]
    for m in marginals:
        cells = np.zeros([sizes[a] for a in m])
        np.add.at(cells, tuple(rows[:, a] for a in m), 1.0 / len(rows))
        answers.append(cells.ravel())
        offsets.append(offsets[-1] + cells.size)
    y = np.concatenate(answers)
    variances = np.concatenate([np.full(a.size, v) for a, v in zip(answers, [1e-4, 4e-4, 1e-4])])
    estimates = one_way_estimates(y, variances, marginals, np.array(offsets), sizes)
    for a in range(3):  # noiseless answers: every sum is the true 1-way marginal
        np.testing.assert_allclose(estimates[a][0], np.bincount(rows[:, a], minlength=sizes[a])
                                   / len(rows))
    # column 1: the sums of (0, 1) (2 cells of variance 1e-4 each), (0, 1, 2) (8 cells of
    # 4e-4) and (1, 2) (4 cells of 1e-4)
    precision = 1 / (2 * 1e-4) + 1 / (8 * 4e-4) + 1 / (4 * 1e-4)
    assert estimates[1][1] == pytest.approx(precision ** -0.5)
    assert one_way_estimates(y[:6], variances[:6], marginals[:1], np.array(offsets[:2]),
                             sizes)[2] is None


def test_only_values_above_their_estimate_are_corrected():
    estimate = np.array([0.9, 0.09, 0.01])
    assert calibrated_shares(np.array([0.895, 0.095, 0.01]), estimate, 0.002, 4.0) is None
    # below by 5 sd: left (a common value's deficit is spread over fitted cells)
    assert calibrated_shares(np.array([0.885, 0.1, 0.015]), estimate, 0.003, 4.0) is None
    shares = calibrated_shares(np.array([0.88, 0.09, 0.03]), estimate, 0.002, 4.0)
    assert shares[2] == pytest.approx(0.01)
    np.testing.assert_allclose(shares[:2] / shares[:2].sum(), [0.88 / 0.97, 0.09 / 0.97])
    # an estimate below zero is zero
    assert calibrated_shares(np.array([0.9, 0.08, 0.02]), np.array([0.91, 0.093, -0.003]),
                             0.002, 4.0)[2] == 0.0


def test_weights_are_returned_unchanged_when_no_value_is_off():
    records = np.array([[0, 1], [1, 0], [1, 1]])
    weights = np.array([0.2, 0.5, 0.3])
    estimates = [(np.array([0.21, 0.79]), 0.01), None]
    assert calibrate_weights(records, weights, estimates, [2, 2]) is weights


def rare_table(n=20000, seed=0):
    """A value on 0.3% of the rows, beside two columns of 30 and 20 values (1,800 cells)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.choice(["x", "y", "rare"], n, p=[0.6, 0.397, 0.003]),
                         "b": rng.integers(0, 30, n), "c": rng.integers(0, 20, n)})


def rare_workload():
    return QueryWorkload(domain={"a": ["x", "y", "rare"], "b": list(range(30)),
                                 "c": list(range(20))}, k=3)


def fit_at_once(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AdaptiveProjection(epsilon=1.0, workload=rare_workload(), rounds=1,
                                  representation="records", random_state=0).fit(X)


def test_a_fit_at_once_keeps_no_value_above_its_estimate():
    est = fit_at_once(rare_table())
    w = est.workload_
    sizes = w.layout_.block_sizes
    estimates = one_way_estimates(est.measurements_, est.measurement_variances_,
                                  est.measured_marginals_, w.marginal_offsets_, sizes)
    n_values = sum(sizes)
    z = NormalDist().inv_cdf(1 - ALPHA / n_values)
    for a, (estimate, sd) in enumerate(estimates):
        model = np.bincount(est.records_[:, a], weights=est.weights_, minlength=sizes[a])
        # IPF stops within its tolerance (1e-3 in total variation)
        assert np.all(model - estimate <= z * sd + 2e-3), w.columns_[a]
    assert np.all(est.weights_ > 0) and est.weights_.sum() == pytest.approx(1.0)


def test_calibration_is_post_processing_and_pulls_the_rare_value_back(monkeypatch):
    X = rare_table()
    calibrated = fit_at_once(X)
    monkeypatch.setattr(schedules, "calibration_targets", lambda r, w, e, s: [None] * len(s))
    plain = fit_at_once(X)
    assert calibrated.ledger_.entries == plain.ledger_.entries
    np.testing.assert_array_equal(calibrated.measurements_, plain.measurements_)
    rare = calibrated.workload_.categories_["a"].tolist().index("rare")

    def share(est):
        return est.weights_[est.records_[:, 0] == rare].sum()

    # the projection leaks mass onto the rare value (0.055 of the model's rows, 0.003 of the
    # real ones); calibrated: 0.006
    assert share(plain) > 0.02
    assert abs(share(calibrated) - 0.003) < 0.005


def record_the_continuation(monkeypatch):
    """What the continuation's Projection (the one with extra marginals) is given."""
    seen = {}

    class Recording(fitting.Projection):
        def __init__(self, workload, noisy, variances, **kwargs):
            if kwargs.get("extra_marginals"):
                seen.update(noisy=np.asarray(noisy), variances=np.asarray(variances),
                            extra=kwargs["extra_marginals"], n_cells=workload.n_queries_)
            super().__init__(workload, noisy, variances, **kwargs)

    monkeypatch.setattr(fitting, "Projection", Recording)
    return seen


def test_the_fit_continues_with_only_the_far_off_values_held_to_their_shares(monkeypatch):
    seen = record_the_continuation(monkeypatch)
    est = fit_at_once(rare_table())
    w = est.workload_
    assert seen["extra"] == ((0,),)  # column "a" only
    estimate, sd = one_way_estimates(est.measurements_, est.measurement_variances_,
                                     est.measured_marginals_, w.marginal_offsets_,
                                     w.layout_.block_sizes)[0]
    rare = w.categories_["a"].tolist().index("rare")
    variances = seen["variances"][seen["n_cells"]:]
    assert variances[rare] == pytest.approx(sd**2 / HOLD_BOOST)
    assert np.isinf(np.delete(variances, rare)).all()
    assert seen["noisy"][seen["n_cells"] + rare] == pytest.approx(max(estimate[rare], 0.0))
    np.testing.assert_array_equal(seen["noisy"][:seen["n_cells"]], est.measurements_)


def missing_table(n=20000, seed=0):
    """A number missing on 0.5% of the rows, beside columns of 30 and 20 values."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.gamma(3.0, 10.0, n), 1)
    return pd.DataFrame({"x": np.where(rng.random(n) < 0.005, np.nan, x),
                         "b": rng.integers(0, 30, n), "c": rng.integers(0, 20, n)})


def fit_missing_at_once(X):
    workload = QueryWorkload(domain={"b": list(range(30)), "c": list(range(20))},
                             bounds={"x": (0.0, 150.0)}, bins={"x": 10},
                             handle_missing=["x"], k=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return AdaptiveProjection(epsilon=1.0, workload=workload, rounds=1,
                                  representation="records", random_state=0).fit(X)


def test_the_measured_missing_share_is_held_as_post_processing(monkeypatch):
    seen = record_the_continuation(monkeypatch)
    X = missing_table()
    est = fit_missing_at_once(X)
    w = est.workload_
    x = w.columns_.index("x")
    assert seen["extra"] == ((x,),)  # nothing else is off here
    share, sd = est.number_missing_["x"]
    estimate, marginal_sd = one_way_estimates(est.measurements_, est.measurement_variances_,
                                              est.measured_marginals_, w.marginal_offsets_,
                                              w.layout_.block_sizes)[x]
    # the target: the two independent estimates by inverse variance; only the missing code
    weights = np.array([sd**-2, marginal_sd**-2])
    combined = (weights @ [share, estimate[-1]]) / weights.sum()
    variances = seen["variances"][seen["n_cells"]:]
    assert variances[-1] == pytest.approx(1.0 / weights.sum() / HOLD_BOOST)
    assert np.isinf(variances[:-1]).all()
    assert seen["noisy"][-1] == pytest.approx(max(combined, 0.0))
    # the records hold the missing code on about that share
    model = est.weights_[est.records_[:, x] == w.layout_.block_sizes[x] - 1].sum()
    assert abs(model - combined) < 3 * weights.sum() ** -0.5
    # post-processing: the same measurements and ledger without it
    monkeypatch.setattr(schedules, "with_missing_shares", lambda t, *args: t)
    plain = fit_missing_at_once(X)
    assert plain.ledger_.entries == est.ledger_.entries
    np.testing.assert_array_equal(plain.measurements_, est.measurements_)


def test_without_a_missable_number_nothing_is_held():
    est = fit_at_once(rare_table())
    assert est.number_missing_ == {}
