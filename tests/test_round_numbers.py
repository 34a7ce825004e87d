"""Round numbers: incomes of 60,000 and loans of 12,000, measured and drawn.

The levels' measurement shares the numbers' mechanism (its sensitivity and the
audits are in tests/test_numbers.py and tests/test_privacy_audit.py); here the
grids of round numbers, the draw of a round number inside an interval against
enumeration, the chances against their formula and the noise, and the rows.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.numbers import (
    InBinSampler,
    NumberGrid,
    measure_numbers,
    number_counts,
    plan_numbers,
    point_threshold,
    refine_coder,
    round_chances,
    round_levels,
    round_number_near,
)
from sklearn_privsyn.number_measurement import level_of
from sklearn_privsyn.privacy import PrivacyLedger


@pytest.mark.parametrize("resolution, lo, hi, expected", [
    (1.0, 0, 99, (1.0, 5.0, 10.0, 50.0)),
    (0.01, 0, 1, (0.01, 0.05, 0.1, 0.5, 1.0)),
    (2.0, -120, 30, (2.0, 10.0, 50.0, 100.0)),   # 5 is no multiple of 2
    (3.0, 0, 10**6, ()),                         # no round number is a multiple of 3
    (None, 0, 10**6, ()),                        # a float with neither step nor decimals
    (1.0, 0, 3, ()),                             # nothing coarser within the bounds
])
def test_round_levels_are_nested_multiples_up_to_the_bounds(resolution, lo, hi, expected):
    levels = round_levels(resolution, lo, hi)
    assert levels == expected
    for a, b in zip(levels, levels[1:]):
        assert b / a == pytest.approx(round(b / a)) and b > a


def test_a_value_counts_at_the_coarsest_level_it_is_a_multiple_of():
    levels = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0)
    values = np.array([0.03, 0.15, 0.2, 2.5, 7.0, 15.0, 0.0, 123.45, 60.0])
    assert level_of(values, levels).tolist() == [0, 1, 2, 3, 4, 5, 6, 1, 6]


def test_only_grids_of_cells_measure_round_levels():
    assert NumberGrid.of("gain", 0, 99999, 1.0, 10).heaps == round_levels(1.0, 0, 99999)
    assert NumberGrid.of("age", 17, 90, 1.0, 10).heaps == ()          # value by value
    assert NumberGrid.of("x", 0, 10**6, None, 5).heaps == ()          # no resolution
    grid = NumberGrid.of("x", 0, 10**6, None, 5, resolution=0.01)
    assert grid.heaps[0] == 0.01 and grid.heaps[-1] == 10**6
    assert grid.n_partitions == 5 + 1 + 1 / 4  # round levels at twice a node's noise
    values = np.array([60000.0, 60000.0, 1234.56, 0.0])
    counts = grid.counts(values)
    rounds = grid.split(counts)[2]
    assert rounds.sum() == 4 and rounds[grid.heaps.index(10000.0)] == 2


@pytest.mark.parametrize("grid", [1.0, 5.0, 0.5, 10.0])
def test_the_round_number_near_a_value_is_the_nearest_inside_by_enumeration(grid):
    rng = np.random.default_rng(0)
    for _ in range(300):
        lo = float(rng.integers(-60, 60) * rng.choice([1.0, 0.5, 0.25]))
        hi = lo + float(rng.integers(0, 80) * rng.choice([1.0, 0.5, 0.3]))
        top = hi if rng.random() < 0.3 else hi + 100.0
        value = lo + rng.random() * (hi - lo)
        near = np.arange(np.floor(lo / grid) - 2, np.ceil(hi / grid) + 3) * grid
        inside = near[(near >= lo) & ((near < hi) | ((hi >= top) & (near <= hi)))]
        args = (np.array([value] * 2), np.array([lo] * 2), np.array([hi] * 2), grid, top)
        own = round_number_near(*args)
        other = round_number_near(*args, x=np.array([0.2, 0.8]))
        if len(inside) == 0:
            assert np.isnan(own).all() and np.isnan(other).all()
            continue
        nearest = np.round(value / grid) * grid
        clip = lambda v: float(np.clip(v, inside[0], inside[-1]))  # noqa: E731
        assert own[0] == pytest.approx(clip(nearest))
        assert other.tolist() == pytest.approx([clip(nearest - grid), clip(nearest + grid)])


def _smooth_shares(levels, present):
    coarser = list(levels[1:]) + [0.0]
    return np.array([levels[0] / g - (levels[0] / c if c else 0.0)
                     for g, c in zip(levels, coarser)]) * present


def test_round_chances_find_the_grids_values_were_rounded_to():
    # incomes on a whole-number grid: 30% rounded to the nearest 1,000, 20% to the nearest
    # 10,000, the rest left; the level counts of the rows give those shares back
    rng = np.random.default_rng(0)
    values = rng.integers(0, 10**6, 200000).astype(float)
    how = rng.random(len(values))
    values = np.where(how < 0.3, np.round(values, -3),
                      np.where(how < 0.5, np.round(values, -4), values))
    levels = round_levels(1.0, 0, 10**6)
    shares = np.bincount(level_of(values, levels), minlength=len(levels)) / len(values)
    rounds = round_chances(levels, 0.8 * shares, 0.001, 0.8)
    assert [g for g, _ in rounds] == [1000.0, 10000.0]
    chance = dict(rounds)
    assert chance[1000.0] == pytest.approx(0.3, abs=0.005)
    assert chance[10000.0] == pytest.approx(0.2, abs=0.005)


def test_round_chances_keep_nothing_on_noise_alone_but_at_the_threshold_rate():
    # a smooth shape measured with noise: a level is kept in at most ~POINT_ALPHA of fits
    levels = round_levels(0.01, 0, 2 * 10**6)
    rng = np.random.default_rng(0)
    sigma, present = 0.03, 0.9
    kept = sum(bool(round_chances(levels, _smooth_shares(levels, present)
                                  + rng.normal(0, sigma, len(levels)), sigma, present))
               for _ in range(2000))
    assert kept / 2000 < 0.02
    # and a real heap of twice the threshold is found nearly always
    shares = _smooth_shares(levels, present)
    shares[levels.index(1000.0)] += 2 * point_threshold(sigma, len(levels) - 1)
    found = sum(any(g == 1000.0 for g, _ in round_chances(
        levels, shares + rng.normal(0, sigma, len(levels)), sigma, present))
        for _ in range(500))
    assert found / 500 > 0.97


def test_the_sampler_draws_round_numbers_at_their_chances_and_never_a_point():
    sampler = InBinSampler.from_pieces([0, 0], [0.0, 20000.0], [20000.0, 100000.0], [1, 4],
                                       1.0, 100000.0)
    sampler = sampler.with_rounds([(1000.0, 0.3), (10000.0, 0.2)],
                                  points=[50000.0, 70000.0], bin_mass=[5.0])
    # one bin: its multiples serve all of it (a point's neighbours take its rows)
    np.testing.assert_allclose(sampler.bin_chances, [[0.3, 0.2]])
    rng = np.random.default_rng(1)
    n = 40000
    codes = np.zeros(n, dtype=np.intp)
    values = sampler.sample(codes, rng.random(n), rng.random(n), rng.random(n),
                            rng.random((sampler.round_tries, n)))
    assert not np.isin(values, [50000.0, 70000.0]).any()
    # every moved value is a whole thousand; the half left keeps 1 in 1,000 of its own
    p_1000 = 0.5 + 0.5 / 1000
    assert stats.binomtest(int((values % 1000 == 0).sum()), n, p_1000).pvalue > 0.001
    # ten thousands: those rounded to them, but the 2 points' rows (1 in 10 each, on
    # 40k/60k and 60k/80k instead: still ten thousands), and 1 in 10 of those rounded to
    # thousands but the 2 points' (on 49k/51k, 69k/71k); 100,000 (the closed top) half
    # a multiple's share, and 0 half as well
    p_10000 = 0.2 + 0.3 * (10 - 2 - 1) / 100 + 0.5 / 10000
    assert stats.binomtest(int((values % 10000 == 0).sum()), n, p_10000).pvalue > 0.001
    # a value moves to its nearest multiple (a point's rows to either side): half still
    # below 50,000
    assert stats.binomtest(int((values < 50000).sum()), n, 0.5).pvalue > 0.001
    # the ten thousands of a flat shape are equally likely but those beside a point, which
    # take half its rows each (40k, 60k twice: beside 50k and 70k, 80k) and the ends
    tens, counts = np.unique(values[values % 10000 == 0], return_counts=True)
    assert tens.tolist() == [0, 10000, 20000, 30000, 40000, 60000, 80000, 90000, 100000]
    assert stats.chisquare(counts[[1, 2, 3, 7]]).pvalue > 0.001


def test_a_bin_without_round_numbers_leaves_its_chance_to_the_bins_with_them():
    # below 20,000 the only ten-thousands are 0 and 10,000, a point; [20k, 40k] has 20k,
    # 30k and 40k (its closed top)
    sampler = InBinSampler.from_pieces([0, 1, 2], [0.0, 10000.0, 20000.0],
                                       [10000.0, 20000.0, 40000.0], [1, 1, 2], 1.0, 40000.0)
    sampler = sampler.with_rounds([(10000.0, 0.25)], points=[10000.0],
                                  bin_mass=[1.0, 1.0, 2.0])
    # bin 0 has 0 (served whole), bin 1 only the point, bin 2 three (served whole): 3 of
    # the 4 rows' mass served, so each served bin gets 0.25 * 4 / 3
    np.testing.assert_allclose(sampler.bin_chances[:, 0], [1 / 3, 0.0, 1 / 3])
    # with 30,000 a point too, bin 2 still has 20k and 40k: served whole
    other = sampler.with_rounds([(10000.0, 0.25)], points=[10000.0, 30000.0],
                                bin_mass=[1.0, 1.0, 2.0])
    np.testing.assert_allclose(other.bin_chances[:, 0], [1 / 3, 0.0, 1 / 3])
    # a bin that holds no multiple of the grid is not served
    narrow = InBinSampler.from_pieces([0], [15000.0], [25000.0], [1], 1.0, 1e6)
    narrow = narrow.with_rounds([(50000.0, 0.1)], points=[], bin_mass=[1.0])
    np.testing.assert_allclose(narrow.bin_chances, [[0.0]])


def incomes(n=20000, seed=0):
    """Stated incomes: 60% rounded to thousands (half of those to ten thousands)."""
    rng = np.random.default_rng(seed)
    income = rng.lognormal(11, 0.5, n)
    how = rng.random(n)
    income = np.where(how < 0.3, np.round(income, -4),
                      np.where(how < 0.6, np.round(income, -3), np.round(income, 2)))
    return pd.DataFrame({"income": np.clip(income, 0, 500000),
                         "group": rng.choice(["a", "b"], n)})


def income_workload(decimals):
    return QueryWorkload(domain={"group": ["a", "b"]}, bounds={"income": (0, 500000)},
                         bins={"income": 10}, decimals=decimals, k=2)


def _fit_rows(X, decimals, seed=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AdaptiveProjection(epsilon=2.0, workload=income_workload(decimals),
                                 random_state=seed).fit(X)
    return est, est.sample(len(X), random_state=seed)["income"]


def test_stated_incomes_come_out_as_round_as_the_real_ones():
    X = incomes()
    est, rows = _fit_rows(X, {"income": 2})
    real = X["income"]
    for g in (1000.0, 10000.0):
        share = np.mean(np.abs(rows / g - np.round(rows / g)) < 1e-9)
        assert share == pytest.approx(np.mean(real % g == 0), abs=0.04)
    # the most common real value is as common in the rows
    top = real.value_counts(normalize=True)
    assert np.mean(rows == top.index[0]) == pytest.approx(top.iloc[0], abs=0.02)
    # without decimals there is no finest grid: round numbers only at the points found
    plain_est, plain = _fit_rows(X, None)
    (coder,) = [c for c in plain_est.workload_.encoder_.coders if c.name == "income"]
    assert coder.sampler.rounds == () and len(coder.points)
    assert np.mean((plain % 1000 == 0) & ~plain.isin(coder.points)) < 0.005


def test_a_smooth_column_gets_no_round_numbers():
    X = incomes().assign(income=lambda d: np.round(np.random.default_rng(1).lognormal(
        11, 0.5, len(d)).clip(0, 500000), 2))
    _, rows = _fit_rows(X, {"income": 2})
    assert np.mean(rows % 1000 == 0) < 0.005


def test_round_numbers_are_reproducible_under_random_state():
    X = incomes(5000)
    a = _fit_rows(X, {"income": 2}, seed=3)[1]
    b = _fit_rows(X, {"income": 2}, seed=3)[1]
    pd.testing.assert_series_equal(a, b)
    assert not a.equals(_fit_rows(X, {"income": 2}, seed=4)[1])


def test_each_level_holds_the_multiples_of_its_grid_and_not_of_the_next():
    levels = round_levels(1.0, 0, 1000)
    values = np.arange(0, 1001, dtype=float)
    found = level_of(values, levels)
    for i, (g, coarser) in enumerate(zip(levels, list(levels[1:]) + [None])):
        mine = values[found == i]
        assert len(mine) and np.all(mine % g == 0)
        if coarser is not None:
            assert not np.any(mine % coarser == 0)


def test_a_column_held_by_its_points_alone_draws_no_round_numbers():
    # every value at a point: no piece is left inside the bins to move to a round number
    X = pd.DataFrame({"x": np.full(100, 60000.0)})
    coder = QueryWorkload(bounds={"x": (0, 100000)}, bins={"x": 4}, k=1).fit(X).encoder_.coders[0]
    grid = NumberGrid.of("x", 0.0, 100000.0, None, 4, resolution=1.0)
    levels, candidates, rounds = grid.split(grid.counts(X["x"].to_numpy()) / len(X))
    refined = refine_coder(coder, grid, levels, candidates, 1e-6, round_shares=rounds)
    assert refined.points.tolist() == [60000.0] and refined.sampler is None


def test_the_trees_noise_is_the_same_draw_with_or_without_round_levels():
    X = incomes(3000)
    coder = income_workload(None).fit(X).encoder_.coders[0]
    out = {}
    for decimals in (None, {"income": 2}):
        plan = plan_numbers([coder], len(X), 0.5, 0.2, 3, decimals)
        true = number_counts(plan.grids, X) / len(X)
        ledger = PrivacyLedger()
        levels, candidates, rounds, sd, _ = measure_numbers(plan, X, len(X), ledger,
                                                            np.random.default_rng(7))["income"]
        assert ledger.rho_spent == pytest.approx(plan.rho, rel=1e-9)
        tree = np.concatenate([*levels, candidates])
        out[decimals is None] = ((tree - true[:len(tree)]) / sd, len(rounds), sd)
    (z_with, n_rounds, sd_with), (z_without, none, sd_without) = out[False], out[True]
    assert none == 0 and n_rounds == len(round_levels(0.01, 0, 500000))
    np.testing.assert_allclose(z_with, z_without)  # the same standard normals
    # a quarter of a partition more: sd up by sqrt((T + 1/4) / T)
    T = plan.grids[0].n_partitions - 1 / 4
    assert sd_with / sd_without == pytest.approx(math.sqrt((T + 0.25) / T), rel=1e-6)
