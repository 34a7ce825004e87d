"""A tilt inside the bins that nothing measured finely (sklearn_privsyn.bin_tilts)."""

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn._coders import BinnedCoder
from sklearn_privsyn.bin_tilts import bin_tilts, tilted_cdf, tilted_uniform


@pytest.mark.parametrize("slope", [-0.015, -0.005, 0.0, 0.01])
@pytest.mark.parametrize("edges", [np.linspace(0.0, 10.0, 6), np.array([0.0, 1, 3, 4, 7, 10])])
def test_a_linear_density_gets_its_own_slope(slope, edges):
    # shares of the density 0.1 + slope (x - 5) on [0, 10] (positive): every tilt exact
    lo, hi = edges[:-1], edges[1:]
    shares = 0.1 * (hi - lo) + slope * ((hi - 5) ** 2 - (lo - 5) ** 2) / 2
    mean_density = shares / (hi - lo)
    expected = slope * (hi - lo) / (2 * mean_density)
    np.testing.assert_allclose(bin_tilts(shares, edges), expected, atol=1e-12)


@pytest.mark.parametrize("shares, expected", [
    ([0.1, 0.5, 0.1, 0.3], [1.0, 0.0, 0.0, 1 / 3]),  # a peak, then a trough: flat
    ([0.3, 0.0, 0.7], [-0.5, 0.0, 0.5]),  # an empty bin has no tilt
    ([1.0], [0.0]),  # one bin: no neighbour
    ([0.0, 0.0], [0.0, 0.0]),
])
def test_peaks_troughs_and_empty_bins(shares, expected):
    edges = np.arange(len(shares) + 1, dtype=float)
    np.testing.assert_allclose(bin_tilts(shares, edges), expected, atol=1e-12)


def test_the_limiter_keeps_the_smaller_side():
    # densities 1, 2, 10 on unit bins: the centred difference (4.5) would overshoot the
    # left one (1); the limit is twice the smaller side: 2, a tilt of 2 / (2 * 2)
    assert bin_tilts([1.0, 2.0, 10.0], np.arange(4.0))[1] == pytest.approx(0.5)


def test_tilts_never_leave_minus_one_to_one():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(2, 12))
        shares = rng.exponential(size=k) * (rng.random(k) < 0.8)
        edges = np.cumsum(np.concatenate([[0.0], rng.exponential(size=k)]))
        tilts = bin_tilts(shares, edges)
        assert np.all(np.abs(tilts) <= 1.0)
        assert np.all(tilts[shares == 0] == 0.0)


def test_a_zero_width_bin_has_no_tilt():
    assert bin_tilts([0.5, 0.2, 0.3], [0.0, 1.0, 1.0, 2.0]).tolist()[1] == 0.0
    # a constant column's bins all have width 0: no tilt, and no warning from numpy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert bin_tilts([0.5, 0.5, 0.0], np.full(4, 3.0)).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("tilt", [-1.0, -0.6, 0.3, 1.0])
def test_tilted_uniform_has_the_linear_density(tilt):
    u = np.random.default_rng(1).random(20_000)
    t = tilted_uniform(np.full(u.shape, tilt), u)
    assert np.all((t >= 0) & (t <= 1))
    cdf = lambda x: tilt * x**2 + (1 - tilt) * x  # noqa: E731
    assert stats.kstest(t, cdf).pvalue > 0.001
    # and it is not uniform
    assert stats.kstest(t, "uniform").pvalue < 0.001


def test_the_distribution_function_inverts_the_draws():
    rng = np.random.default_rng(3)
    tilts, u = rng.uniform(-1, 1, 1000), rng.random(1000)
    np.testing.assert_allclose(tilted_cdf(tilts, tilted_uniform(tilts, u)), u, atol=1e-12)
    assert tilted_cdf(tilts, np.zeros(1000)).tolist() == [0.0] * 1000
    np.testing.assert_allclose(tilted_cdf(tilts, np.ones(1000)), 1.0)


def test_no_tilt_keeps_the_uniforms():
    u = np.random.default_rng(2).random(1000)
    assert np.array_equal(tilted_uniform(np.zeros(1000), u), u)
    assert tilted_uniform(np.array([1.0]), np.array([0.0])).tolist() == [0.0]


@pytest.mark.parametrize("step, integer", [(None, False), (1.0, True)])
def test_a_tilted_coder_draws_inside_its_bins_by_the_tilt(step, integer):
    coder = BinnedCoder("x", 3, np.dtype(int if integer else float),
                        edges=np.array([0.0, 100.0, 200.0]), step=step, integer=integer,
                        points=np.array([0.0]))
    tilted = replace(coder, tilts=np.array([-0.9, 0.6]))
    codes = np.repeat([0, 1, 2], 20_000)
    values = tilted.decode(codes, np.random.default_rng(3)).to_numpy(float)
    plain = coder.decode(codes, np.random.default_rng(3)).to_numpy(float)
    # the codes, the bounds and the point stay
    np.testing.assert_array_equal(tilted.encode(pd.Series(values)), codes)
    assert np.all(values[codes == 2] == 0.0)
    # a density 1 + a (2 t - 1) has mean position 1/2 + a/6
    first, second = values[codes == 0] / 100, (values[codes == 1] - 100) / 100
    assert first.mean() == pytest.approx(0.5 - 0.9 / 6, abs=0.01)
    assert second.mean() == pytest.approx(0.5 + 0.6 / 6, abs=0.01)
    assert plain[codes == 0].mean() / 100 == pytest.approx(0.5, abs=0.01)


def test_new_points_and_edges_drop_the_tilts():
    coder = BinnedCoder("x", 2, np.dtype(float), edges=np.array([0.0, 1.0, 2.0]),
                        tilts=np.array([0.5, -0.5]))
    assert coder.with_points([1.5], np.array([0.0, 2.0])).tilts is None


def _skewed(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"income": np.minimum(rng.exponential(900.0, n), 9999).round(),
                         "group": rng.choice(["a", "b", "c"], n),
                         "flag": rng.choice(["y", "n"], n)})


def _fit(representation, number_share=0.0, epsilon=1.0):
    workload = QueryWorkload(k=2, bounds={"income": (0, 9999)})
    # the graphical model needs adaptive selection: a few rounds
    rounds = 4 if representation == "graphical" else None
    estimator = AdaptiveProjection(workload=workload, epsilon=epsilon, random_state=0,
                                   representation=representation, rounds=rounds,
                                   number_share=number_share)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(_skewed())


@pytest.mark.parametrize("representation", ["records", "products", "graphical"])
def test_a_fit_that_measures_no_shapes_tilts_by_the_models_shares(representation):
    estimator = _fit(representation)
    assert estimator.representation_ == representation
    coder = estimator.workload_.encoder_.coders[0]
    assert coder.sampler is None
    # the model's shares of the bins, read from many of its rows
    codes = estimator._sample_codes(200_000, np.random.default_rng(4))[:, 0]
    shares = np.bincount(codes, minlength=coder.n_values)[:coder.n_bins] / len(codes)
    assert np.all(np.diff(shares[:4]) < 0)  # an income's bins fall
    assert np.all(coder.tilts[:4] < 0)
    # (the bins holding 5% of the rows or more, and their neighbours, estimated well enough)
    big = np.flatnonzero(np.convolve(shares >= 0.05, [1, 1, 1], "same") == 3)
    np.testing.assert_allclose(coder.tilts[big], bin_tilts(shares, coder.edges)[big], atol=0.03)
    # no charge for it: the ledger holds the fit's measurements only
    assert estimator.ledger_.rho_spent <= estimator.rho_


def test_the_tilt_brings_a_skewed_number_closer():
    estimator = _fit("records")
    real = _skewed()["income"]
    tilted = estimator.sample(4000, random_state=5)["income"]
    name = estimator.workload_.encoder_.coders[0].name
    flat = replace(estimator.workload_.encoder_.coders[0], tilts=None)
    estimator.workload_._replace_coders({name: flat})
    uniform = estimator.sample(4000, random_state=5)["income"]
    assert stats.ks_2samp(real, tilted).statistic < 0.5 * stats.ks_2samp(real, uniform).statistic


def test_a_measured_shape_is_not_tilted():
    estimator = _fit("records", number_share=0.2, epsilon=5.0)
    coder = estimator.workload_.encoder_.coders[0]
    assert coder.sampler is not None and coder.tilts is None


def test_every_synthesizer_tilts_from_its_weighted_records():
    from sklearn_privsyn import MWEM

    workload = QueryWorkload(k=2, bounds={"income": (0, 9999)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        estimator = MWEM(workload=workload, epsilon=1.0, rounds=10, number_share=0.0,
                         random_state=0).fit(_skewed())
    coder = estimator.workload_.encoder_.coders[0]
    # the records' weighted shares of the bins, counted here
    shares = np.zeros(coder.n_values)
    np.add.at(shares, estimator.records_[:, 0], estimator.weights_)
    np.testing.assert_allclose(coder.tilts, bin_tilts(shares[:coder.n_bins], coder.edges))
    assert np.any(coder.tilts != 0)
