"""Numbers as users see them: points, bins of similar mass, shapes inside bins.

The privacy of the numbers' measurement (its sensitivity, its charge, the
replay of every mechanism, the end-to-end audit) is checked in
tests/test_privacy_audit.py beside the estimators' other mechanisms; here:
its accounting against formulas computed here, the in-bin sampler's
distribution, points, types and bounds, determinism and errors.
"""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_privsyn import FEM, MWEM, AdaptiveProjection, DualQuery, QueryWorkload
from sklearn_privsyn._coders import BinnedCoder
from sklearn_privsyn.numbers import (
    LEVELS_EXACT_MAX,
    PRESENT_FLOOR_SD,
    SHARE_MAX,
    SHARE_MIN,
    SPLIT_ALPHA,
    SPLIT_SD,
    InBinSampler,
    NumberGrid,
    default_number_share,
    leaf_masses,
    measure_numbers,
    missing_share,
    number_counts,
    numbers_sensitivity,
    plan_numbers,
    point_threshold,
    split_sd,
)
from sklearn_privsyn.privacy import PrivacyLedger, epsilon_to_rho


def table(n=2000, seed=0):
    """A number with a point mass at 0 and a long tail, a spiky integer, a category."""
    rng = np.random.default_rng(seed)
    gain = np.where(rng.random(n) < 0.7, 0, np.round(rng.lognormal(8, 1, n)))
    hours = np.where(rng.random(n) < 0.5, 40, rng.integers(1, 100, n))
    return pd.DataFrame({
        "gain": np.minimum(gain, 99999).astype(np.int64),
        "hours": hours.astype(np.int64),
        "score": rng.beta(2, 5, n) * 10,
        "group": rng.choice(["a", "b", "c"], n),
    })


def workload(**kw):
    return QueryWorkload(domain={"group": ["a", "b", "c"]},
                         bounds={"gain": (0, 99999), "hours": (1, 99), "score": (0, 10)},
                         bins={"gain": 6, "hours": 6, "score": 6}, k=2, **kw)


def ks(a, b):
    return stats.ks_2samp(np.asarray(a, float), np.asarray(b, float)).statistic


# ------------------------------------------------------------------ accounting


@pytest.mark.parametrize("log", [False, True])
def test_sensitivity_is_attained_and_never_exceeded_by_brute_force(log):
    # every replace-one change of one row, over a grid of values that covers
    # the leaves, the candidates and missing values, for two columns at once
    # (counts divided by their noise scale: a round level's by 2); cells equal
    # on a log scale cost what equal-width ones cost
    n = 7
    grids = [NumberGrid.of("a", 0.0, 10.0, 1.0, 10, log=log),  # exact: 11 values, 4 levels
             NumberGrid.of("b", 0.0, 5000.0, None, 3, log=log),  # cells: 3 levels + candidates
             NumberGrid.of("c", 0.0, 5000.0, None, 3, resolution=1.0, log=log)]  # + round levels
    assert [g.log for g in grids] == [False, log, log]  # a grid of values has no scale
    rows = [(0.0, 0.0, 0.0), (10.0, 2500.0, 2500.0), (3.0, 5000.0, 1234.0),
            (7.0, 1234.5, 5000.0), (np.nan, 100.0, np.nan), (5.0, np.nan, 37.0),
            (2.0, 0.3, 0.7)]
    base = [(1.0, 10.0, 10.0)] * (n - 1)

    def vector(last):
        frame = np.array(base + [last], dtype=float)
        return np.concatenate([g.counts(v[~np.isnan(v)]) / n / g.noise_scale()
                               for g, v in zip(grids, frame.T, strict=True)])

    worst = max(np.linalg.norm(vector(x) - vector(y))
                for x, y in itertools.permutations(rows, 2))
    claimed = numbers_sensitivity(grids, n)
    assert claimed == pytest.approx(
        math.sqrt(2 * (4 + 0) + 2 * (3 + 1) + 2 * (3 + 1 + 1 / 4)) / n)
    assert worst <= claimed + 1e-12
    assert worst == pytest.approx(claimed)


@pytest.mark.parametrize("share", [0.1, 0.3, "auto"])
def test_the_ledger_holds_the_planned_share_and_the_rest_for_the_synthesizer(share):
    X = table(5000)
    est = AdaptiveProjection(epsilon=1.0, workload=workload(), rounds=1, max_iter=5,
                             solver="heuristic", number_share=share, random_state=0).fit(X)
    entries = {e.mechanism: e for e in est.ledger_.entries}
    rho = epsilon_to_rho(1.0, 1 / 5000**2)
    assert est.rho_ == pytest.approx(rho)
    numbers = entries["number_histogram"]
    assert numbers.count == 1
    expected_share = est.number_share_ if share == "auto" else share
    if share == "auto":  # T / (T + M) within the bounds, T the measured partitions
        T = sum(_partitions(v, GAIN_ROUNDS if c == "gain" else 0)
                for c, v in est.number_measurements_.items())
        M = len(est.workload_.marginals_)
        assert est.number_share_ == pytest.approx(min(max(T / (T + M), SHARE_MIN), SHARE_MAX))
    assert numbers.rho == pytest.approx(expected_share * rho, rel=1e-6)
    assert numbers.rho <= expected_share * rho
    # the measurement's noise: sigma = Delta / sqrt(2 rho), Delta from the grids' structure
    assert est.synthesis_rho_ == pytest.approx(rho - numbers.rho, rel=1e-9)
    gaussian = entries["gaussian_mechanism"]
    assert gaussian.rho == pytest.approx((1 - expected_share) * rho, rel=1e-6)
    assert est.ledger_.rho_spent <= est.rho_ and est.epsilon_ <= 1.0


#: gain's levels of round numbers: integers (step 1) up to 99,999: 1, 5, ..., 50,000
GAIN_ROUNDS = 10


def _partitions(vector, rounds=0):
    """Levels below the root (+1 for a candidate list, +1/4 for ``rounds`` levels of round
    numbers, at twice the noise) of a measured column's vector."""
    vector = vector[:len(vector) - rounds]
    levels = 0
    while 2 ** (levels + 2) - 1 <= len(vector):
        levels += 1
    return levels + (len(vector) > 2 ** (levels + 1) - 1) + (rounds > 0) / 4  # noise x 2


def test_default_share_formula():
    assert default_number_share(45, 455) == pytest.approx(45 / 500)
    assert default_number_share(1, 1000) == SHARE_MIN
    assert default_number_share(60, 15) == SHARE_MAX


def test_the_noise_is_the_gaussian_of_the_planned_cost():
    X = table(500)
    wl = workload().fit(X)
    coders = [c for c in wl.encoder_.coders if isinstance(c, BinnedCoder)]
    rho = 0.05
    plan = plan_numbers(coders, 500, rho, 0.2, len(wl.marginals_))
    squares = sum(2 * (g.levels + (0 if g.exact else 1) + (1 / 4 if g.heaps else 0))
                  for g in plan.grids)
    assert [len(g.heaps) for g in plan.grids] == [GAIN_ROUNDS, 0, 0]  # score: no decimals
    assert plan.sensitivity == pytest.approx(math.sqrt(squares) / 500)
    assert plan.sigma == pytest.approx(plan.sensitivity / math.sqrt(2 * 0.2 * rho), rel=1e-6)
    assert plan.rho == pytest.approx(plan.sensitivity**2 / (2 * plan.sigma**2))
    assert plan.rho <= 0.2 * rho
    # a grid of cells is as deep as the noise allows: its average node above one sd
    for g in plan.grids:
        if not g.exact:
            assert 2.0**-g.levels >= plan.sigma or g.levels == 3


def joint_table(n=20000, present=0.25, seed=0):
    """An income on every row and a joint income present on a share of them."""
    rng = np.random.default_rng(seed)
    income = np.round(rng.lognormal(11.5, 0.5, n), -2)
    return pd.DataFrame({"joint": np.where(rng.random(n) < present, income, np.nan),
                         "own": np.round(rng.lognormal(11, 0.6, n), -2)})


def joint_workload():
    return QueryWorkload(bounds={"joint": (10000, 1000000), "own": (0, 1000000)},
                         bins={"joint": 10, "own": 10}, handle_missing=["joint"], k=1)


def test_a_missable_column_is_measured_first_and_its_noise_follows_its_present_rows():
    X = joint_table()
    n = len(X)
    est = AdaptiveProjection(epsilon=5.0, workload=joint_workload(), number_share=0.3,
                             random_state=0).fit(X)
    charges = [e for e in est.ledger_.entries if e.mechanism == "number_histogram"]
    assert [e.count for e in charges] == [1, 1]
    present, trees = charges
    T = {c: _partitions(v) for c, v in est.number_measurements_.items()}
    total = 0.3 * est.rho_
    # the present counts: one count (k = 1) at about one node's noise, 1 / (1 + 2T) of it
    assert present.rho == pytest.approx(total / (1 + 2 * sum(T.values())), rel=1e-6)
    # the trees: sum over columns of (2 T_c / n**2) / (2 sigma_c**2), the rest of the share
    sd = est.number_noise_
    assert trees.rho == pytest.approx(sum(T[c] / (n * n * sd[c] ** 2) for c in T), rel=1e-9)
    assert present.rho + trees.rho == pytest.approx(total, rel=1e-6)
    assert present.rho + trees.rho <= total
    # sd ratio sqrt(p): the joint income is on a quarter of the rows
    assert sd["joint"] / sd["own"] == pytest.approx(0.5, abs=0.03)


def test_without_missable_columns_the_trees_have_one_noise_and_one_charge():
    X = joint_table().fillna(50000.0)
    wl = joint_workload().set_params(handle_missing="error")
    est = AdaptiveProjection(epsilon=5.0, workload=wl, number_share=0.3, random_state=0).fit(X)
    charges = [e for e in est.ledger_.entries if e.mechanism == "number_histogram"]
    assert len(charges) == 1 and charges[0].count == 1
    assert est.number_noise_["joint"] == est.number_noise_["own"]


@pytest.mark.parametrize("present", [0.25, 0.0])
def test_the_measured_noise_has_the_sd_it_claims(present):
    # 300 measurements of the same table: every node's error over its claimed sd is N(0, 1)
    X = joint_table(4000, present=present)
    wl = joint_workload().fit(X)
    coders = [c for c in wl.encoder_.coders if isinstance(c, BinnedCoder)]
    plan = plan_numbers(coders, len(X), 0.5, 0.2, 2, {"joint": 0, "own": 0})
    assert plan.missable == (True, False) and plan.present_rho > 0
    assert all(g.heaps for g in plan.grids)  # whole numbers: their round levels too
    true = number_counts(plan.grids, X) / len(X)
    present_rows = X["joint"].notna().mean()
    z, ratios, z_present, z_missing = [], [], [], []
    for seed in range(300):
        ledger = PrivacyLedger()
        out = measure_numbers(plan, X, len(X), ledger, np.random.default_rng(seed))
        assert ledger.rho_spent == pytest.approx(plan.rho, rel=1e-9)
        noisy = np.concatenate([np.concatenate([*lv, c, r]) for lv, c, r, _, _ in out.values()])
        sd = np.concatenate([out[g.name][3] * np.r_[np.ones(g.size - len(g.heaps)),
                                                    np.full(len(g.heaps), 2.0)]
                             for g in plan.grids])
        z.append((noisy - true) / sd)
        ratios.append(out["joint"][3] / out["own"][3])
        count, count_sd = out["joint"][4]
        share, share_sd = missing_share(out["joint"][0], out["joint"][3], (count, count_sd))
        z_present.append((count - present_rows) / count_sd)
        z_missing.append((share - (1.0 - present_rows)) / share_sd)
        assert out["own"][4] is None  # never missing: no present count
    z = np.concatenate(z)
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1.0) < 0.01
    assert stats.kstest(z[::7], "norm").pvalue > 0.001
    # the present count (measured first) and the missing share from it and the tree's root
    assert stats.kstest(z_present, "norm").pvalue > 0.001
    if present > 0:  # (never present: the share is clipped at 1)
        assert stats.kstest(z_missing, "norm").pvalue > 0.001
    # a column (nearly) never present is held at the floor: it cannot take the budget
    floor = math.sqrt(PRESENT_FLOOR_SD * plan.present_sigma)
    assert min(ratios) >= floor - 1e-12
    if present == 0.0:
        assert np.median(ratios) == pytest.approx(floor)
    else:
        assert np.mean(ratios) == pytest.approx(0.5, abs=0.02)


def test_no_binned_column_spends_nothing_and_draws_nothing():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.integers(3, size=300), "b": rng.integers(2, size=300)})
    wl = QueryWorkload(domain={"a": 3, "b": 2}, k=2)
    fits = [AdaptiveProjection(epsilon=1.0, workload=wl, max_iter=5, solver="heuristic",
                               rounds=1, representation="records", number_share=s,
                               random_state=0).fit(X) for s in ("auto", 0.0)]
    assert [e.mechanism for e in fits[0].ledger_.entries] == ["gaussian_mechanism"]
    assert fits[0].number_share_ == 0.0 and fits[0].synthesis_rho_ == fits[0].rho_
    assert np.array_equal(fits[0].records_, fits[1].records_)
    assert np.array_equal(fits[0].weights_, fits[1].weights_)


def test_share_zero_keeps_equal_width_bins_and_uniform_draws():
    X = table(500)
    est = AdaptiveProjection(epsilon=1.0, workload=workload(), max_iter=5, solver="heuristic",
                             number_share=0, random_state=0).fit(X)
    assert "number_histogram" not in {e.mechanism for e in est.ledger_.entries}
    assert np.allclose(est.workload_.bin_edges_["score"], np.linspace(0, 10, 7))
    assert est.workload_.points_ == {}


# ------------------------------------------------------------------ the sampler


def test_in_bin_sampler_draws_pieces_by_mass_and_uniformly_within():
    # bin 0: a single value 1.0 (mass 1) and [2, 4) (mass 3); bin 1: [5, 6) only
    sampler = InBinSampler.from_pieces([0, 0, 1], [1.0, 2.0, 5.0], [1.0, 4.0, 6.0],
                                       [1.0, 3.0, 2.0], step=None, top=6.0)
    rng = np.random.default_rng(0)
    N = 40_000
    codes = np.zeros(N, dtype=np.intp)
    values = sampler.sample(codes, rng.random(N), rng.random(N))
    point = values == 1.0
    # P(piece) by a binomial test, the interval's values uniform by KS
    assert stats.binomtest(int(point.sum()), N, 0.25).pvalue > 1e-3
    inside = values[~point]
    assert np.all((inside >= 2.0) & (inside < 4.0))
    assert stats.kstest(inside, stats.uniform(2, 2).cdf).pvalue > 1e-3
    other = sampler.sample(np.ones(1000, np.intp), rng.random(1000), rng.random(1000))
    assert np.all((other >= 5.0) & (other < 6.0))


def test_in_bin_sampler_on_a_step_grid_is_uniform_over_the_grid_values():
    # [0, 10) and the closing piece [10, 20] on the grid of multiples of 2.5
    sampler = InBinSampler.from_pieces([0, 0], [0.0, 10.0], [10.0, 20.0], [1.0, 1.0],
                                       step=2.5, top=20.0)
    rng = np.random.default_rng(1)
    N = 50_000
    values = sampler.sample(np.zeros(N, np.intp), rng.random(N), rng.random(N))
    grid = np.arange(0, 20.01, 2.5)
    counts = np.array([(values == v).sum() for v in grid])
    assert counts.sum() == N  # only grid values
    expected = np.r_[np.full(4, N / 2 / 4), np.full(5, N / 2 / 5)]
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_in_bin_sampler_on_a_step_grid_never_draws_a_point():
    # a row equal to a point has the point's code: a bin's code stands for the other values
    sampler = InBinSampler.from_pieces([0, 0], [0.0, 10.0], [10.0, 20.0], [1.0, 1.0],
                                       step=2.5, top=20.0, points=[5.0, 17.5])
    rng = np.random.default_rng(2)
    N = 50_000
    values = sampler.sample(np.zeros(N, np.intp), rng.random(N), rng.random(N))
    grid = np.array([0.0, 2.5, 7.5, 10.0, 12.5, 15.0, 20.0])
    counts = np.array([(values == v).sum() for v in grid])
    assert counts.sum() == N  # only grid values, never 5 or 17.5
    expected = np.r_[np.full(3, N / 2 / 3), np.full(4, N / 2 / 4)]
    assert stats.chisquare(counts, expected).pvalue > 1e-3


def test_a_piece_of_points_alone_still_draws_its_values():
    # every grid value of the piece is a point: nothing else to draw, so the points stay
    sampler = InBinSampler.from_pieces([0], [5.0], [7.5], [1.0], step=2.5, top=20.0,
                                       points=[5.0])
    rng = np.random.default_rng(3)
    values = sampler.sample(np.zeros(100, np.intp), rng.random(100), rng.random(100))
    assert np.all(values == 5.0)


@pytest.mark.parametrize("share", [0.0, 0.3])
def test_a_bin_holding_a_point_draws_its_other_values(share):
    # hours of work: 40 a point in the bin [36, 44]; drawn values of the bin skip it, so
    # 40's share is the point code's alone (uniform draws over the bin added a ninth)
    rng = np.random.default_rng(0)
    n = 20000
    hours = np.where(rng.random(n) < 0.4, 40, rng.integers(36, 45, n))
    X = pd.DataFrame({"hours": hours.astype(np.int64)})
    wl = QueryWorkload(bounds={"hours": (36, 44)}, bins={"hours": [36, 44]},
                       points={"hours": [40]}, k=1)
    est = AdaptiveProjection(epsilon=100.0, workload=wl, max_iter=20, solver="heuristic",
                             number_share=share, random_state=0).fit(X)
    S = est.sample(n, random_state=0)["hours"]
    assert abs((S == 40).mean() - (X["hours"] == 40).mean()) < 0.01
    others = S[S != 40]
    counts = np.array([(others == v).sum() for v in (36, 37, 38, 39, 41, 42, 43, 44)])
    assert counts.sum() == len(others)
    assert stats.chisquare(counts).pvalue > 1e-3


def _noisy_tree(leaves, sigma, rng):
    levels = [np.asarray(leaves, float)]
    while len(levels[0]) > 1:
        levels.insert(0, levels[0][0::2] + levels[0][1::2])
    return [level + rng.normal(0, sigma, level.shape) for level in levels]


def test_split_sd_is_bonferronis_bound_over_a_levels_pairs_at_least_split_sd():
    for pairs in (1, 2, 8, 64, 1024, 8192):
        expected = max(SPLIT_SD, stats.norm.isf(SPLIT_ALPHA / (2 * pairs)))
        assert split_sd(pairs) == pytest.approx(expected, rel=1e-9)
    assert split_sd(0) == split_sd(1) == SPLIT_SD


def test_a_smooth_column_keeps_every_value_and_a_heaped_one_its_heaps():
    # 128 values of equal share, each about two noise sd: two sd a pair split a few pairs
    # of nearly every tree (one value twice its share, its pruned neighbour none)
    rng = np.random.default_rng(0)
    flat, sigma = np.full(128, 1 / 128), 0.004
    masses = [leaf_masses(_noisy_tree(flat, sigma, rng), sigma, 128) for _ in range(200)]
    with_hole = np.mean([np.any(m < 0.25 / 128) for m in masses])
    assert with_hole < 0.3  # 0.18 measured; 0.96 with two sd on every level
    ks = np.mean([np.abs(np.cumsum(m / m.sum()) - np.cumsum(flat)).max() for m in masses])
    assert ks < 0.004  # 0.0021; 0.0079 before
    # values on even numbers only: the level's differences stand far above the bound
    heaped, sigma = np.tile([2 / 128, 0.0], 64), 0.002
    odd = [leaf_masses(_noisy_tree(heaped, sigma, rng), sigma, 128)[1::2].sum()
           for _ in range(50)]
    assert np.mean(odd) < 0.05


def test_in_bin_shape_follows_the_data_not_the_bin():
    # a bin of [0, 10) whose values sit in [0, 1): without the shape they spread over the bin
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": np.r_[rng.uniform(0, 1, 3000), rng.uniform(9, 10, 1000)]})
    wl = QueryWorkload(bounds={"x": (0, 10)}, bins={"x": 2}, k=1)
    fits = {s: AdaptiveProjection(epsilon=5.0, workload=wl, max_iter=20, solver="heuristic",
                                  number_share=s, random_state=0).fit(X) for s in (0.0, 0.3)}
    flat, shaped = (fits[s].sample(4000, random_state=1)["x"] for s in (0.0, 0.3))
    assert ks(X["x"], flat) > 0.3
    assert ks(X["x"], shaped) < 0.05


def test_a_step_grid_of_thousands_of_values_is_measured_value_by_value():
    # a delay in minutes: a sharp peak at -5 (not a round number) among 3,044 values;
    # cells of several minutes would spread the peak over its neighbours
    assert NumberGrid.of("d", -43, 3000, 1.0, 10).exact
    assert NumberGrid.of("d", 0, 2**LEVELS_EXACT_MAX - 1, 1.0, 10).exact
    assert not NumberGrid.of("d", 0, 2**LEVELS_EXACT_MAX, 1.0, 10).exact
    rng = np.random.default_rng(0)
    n = 20000
    peak = np.round(rng.normal(-5, 1, n))
    spread = np.round(rng.uniform(-43, 3000, n))
    X = pd.DataFrame({"delay": np.where(rng.random(n) < 0.2, peak, spread).astype(np.int64)})
    wl = QueryWorkload(bounds={"delay": (-43, 3000)}, bins={"delay": 10}, k=1)
    est = AdaptiveProjection(epsilon=2.0, workload=wl, max_iter=20, solver="heuristic",
                             random_state=0).fit(X)
    S = est.sample(n, random_state=0)["delay"]
    # cells of 3 minutes (the grid before): up to 0.033 off at -7, KS 0.034
    for value in range(-7, -2):
        assert abs((S == value).mean() - (X["delay"] == value).mean()) < 0.015
    assert ks(X["delay"], S) < 0.02


# ------------------------------------------------------------------ points, types, bounds


def test_points_are_found_privately_and_keep_their_share():
    X = table(4000)
    est = AdaptiveProjection(epsilon=2.0, workload=workload(), max_iter=30, solver="heuristic",
                             random_state=0).fit(X)
    points = est.workload_.points_
    assert 0 in points["gain"] and 40 in points["hours"]
    assert "score" not in points  # a continuous number has no point mass
    S = est.sample(len(X), random_state=0)
    for col, value in (("gain", 0), ("hours", 40)):
        assert abs((S[col] == value).mean() - (X[col] == value).mean()) < 0.03
    # codes stay within the column's planned count: points took the place of bins
    for col in ("gain", "hours", "score"):
        assert est.workload_.domain_sizes_[col] <= 6


def test_declared_points_are_codes_of_their_own_without_any_budget():
    X = table(1000)
    wl = workload(points={"gain": [0]}).fit(X)
    codes = wl.encode(X)[:, list(wl.columns_).index("gain")]
    assert wl.domain_sizes_["gain"] == 7 and wl.points_["gain"].tolist() == [0.0]
    assert np.array_equal(codes == 6, X["gain"].to_numpy() == 0)
    assert wl.get_feature_names_out()[6] == "gain_=0"
    est = AdaptiveProjection(epsilon=1.0, workload=workload(points={"gain": [0]}), max_iter=5,
                             solver="heuristic", number_share=0, random_state=0).fit(X)
    S = est.sample(2000, random_state=0)
    assert abs((S["gain"] == 0).mean() - 0.7) < 0.06


@pytest.mark.parametrize("cls", [AdaptiveProjection, FEM, DualQuery, MWEM])
def test_types_and_bounds_hold_for_every_estimator(cls):
    X = table(600)
    X["maybe"] = np.where(np.arange(600) % 7 == 0, np.nan, np.arange(600) % 50).astype(float)
    wl = workload(steps={"maybe": 1}, handle_missing=["maybe"]).set_params(
        bounds={"gain": (0, 99999), "hours": (1, 99), "score": (0, 10), "maybe": (0, 49)},
        bins={"gain": 6, "hours": 6, "score": 6, "maybe": 4})
    params = dict(epsilon=2.0, workload=wl, number_share=0.2, random_state=0)
    if cls is MWEM:
        wl.set_params(marginals=[("gain",), ("hours",), ("score",), ("maybe",), ("group",)],
                      k=1)
    elif cls is not AdaptiveProjection:
        params.update(solver="heuristic", rounds=5)
    else:
        params.update(solver="heuristic", max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = cls(**params).fit(X)
    S = est.sample(3000, random_state=0)
    assert list(S.dtypes) == [np.dtype("int64"), np.dtype("int64"), np.dtype(float),
                              S.dtypes["group"], np.dtype(float)]
    assert S["gain"].between(0, 99999).all() and S["hours"].between(1, 99).all()
    assert S["score"].between(0, 10).all()
    present = S["maybe"].dropna()
    assert present.between(0, 49).all() and (present == present.round()).all()
    assert est.number_share_ > 0


def test_a_float_column_with_a_step_decodes_to_multiples_of_it():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.integers(0, 400, 2000) * 0.25})
    wl = QueryWorkload(bounds={"price": (0, 100)}, bins={"price": 5}, steps={"price": 0.25}, k=1)
    for share in (0.0, 0.2):
        est = AdaptiveProjection(epsilon=1.0, workload=wl, max_iter=5, solver="heuristic",
                                 number_share=share, random_state=0).fit(X)
        S = est.sample(2000, random_state=0)["price"]
        assert np.allclose(S * 4, np.round(S * 4)) and S.between(0, 100).all()


def test_multiples_of_a_step_that_is_not_a_decimal_stay_inside_the_bounds():
    # the step's last bit times a large multiple passes the upper bound: 2015.750000000002
    step = 0.0833333333333334
    X = pd.DataFrame({"date": 2000 + np.arange(190) / 12})
    wl = QueryWorkload(bounds={"date": (2000, 2015.75)}, bins={"date": 2}, steps={"date": step},
                       k=1)
    assert 24189 * step > 2015.75 and round(24189 * step, 12) > 2015.75
    for share in (0.0, 0.5):  # drawn uniformly in a bin, and from the fine measurement
        est = AdaptiveProjection(epsilon=100.0, workload=wl, max_iter=5, solver="heuristic",
                                 number_share=share, random_state=0).fit(X)
        S = est.sample(5000, random_state=0)["date"]
        assert S.between(2000, 2015.75).all()
        assert share == 0 or (S == 2015.75).any()  # the top multiple, at the bound


@pytest.mark.parametrize("share", [0.0, 0.3])
def test_multiples_written_with_binary_noise_keep_their_bins_and_points(share):
    # 6 knots in miles an hour, as a table holds it: 6.904679999999999, just below 6 * 1.15078
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"wind": rng.poisson(8, 20000) * 1.15078})
    assert (X["wind"] == 6.904679999999999).any()
    wl = QueryWorkload(bounds={"wind": (0, 34.5234)}, bins={"wind": [0, 6.90468, 34.5234]},
                       points={"wind": [8.05546]}, steps={"wind": 1.15078}, k=1)
    codes = wl.fit(X).encode(X)[:, 0]
    assert (codes[X["wind"] == 6.904679999999999] == 1).all()  # [6.90468, 34.5234), not below
    assert (codes[X["wind"].round(9) == 8.05546] == 2).all()  # the point's own code
    est = AdaptiveProjection(epsilon=100.0, workload=wl, max_iter=20, solver="heuristic",
                             number_share=share, random_state=0).fit(X)
    S = est.sample(20000, random_state=0)["wind"].round(9)
    real = X["wind"].round(9).value_counts(normalize=True)
    synthetic = S.value_counts(normalize=True).reindex(real.index, fill_value=0.0)
    assert abs((S < 6.9).mean() - (X["wind"] < 6.9).mean()) < 0.02  # the codes' shares
    if share:  # every value's share, from the fine measurement (uniform in a bin without)
        assert np.abs(real - synthetic).max() < 0.02


def test_a_grid_value_of_zero_is_never_a_negative_zero():
    # a CSV writes -0.0 as "-0.0": years of schooling a reader calls impossible
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"educ": np.clip(np.round(rng.normal(12, 4, 5000)), 0, 20).astype(float)})
    wl = QueryWorkload(bounds={"educ": (0, 20)}, bins={"educ": 5}, steps={"educ": 1.0}, k=1)
    est = AdaptiveProjection(epsilon=1.0, workload=wl, max_iter=5, solver="heuristic",
                             number_share=0.2, random_state=0).fit(X)
    S = est.sample(20000, random_state=0)["educ"].to_numpy()
    assert (S == 0).sum() > 20 and not np.any(np.signbit(S) & (S == 0))


def test_values_outside_the_bounds_are_clipped_into_the_measurement():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": np.r_[rng.uniform(0, 10, 900), np.full(100, 50.0)]})
    wl = QueryWorkload(bounds={"x": (0, 10)}, bins={"x": 4}, k=1)
    est = AdaptiveProjection(epsilon=5.0, workload=wl, max_iter=10, solver="heuristic",
                             random_state=0).fit(X)
    S = est.sample(2000, random_state=0)["x"]
    assert S.between(0, 10).all()
    assert 10.0 in est.workload_.points_.get("x", [])  # the clipped mass sits at the bound


def test_point_threshold_controls_false_points_on_a_flat_column():
    # with no point mass, a column's candidates clear the threshold rarely
    assert point_threshold(0.001, 100) == pytest.approx(
        max(0.01, stats.norm.isf(0.01 / 100) * 0.001))
    rng = np.random.default_rng(0)
    found = 0
    for seed in range(20):
        X = pd.DataFrame({"x": rng.integers(0, 1000, 20_000)})
        wl = QueryWorkload(bounds={"x": (0, 999)}, bins={"x": 8}, k=1)
        est = AdaptiveProjection(epsilon=1.0, workload=wl, rounds=0, random_state=seed).fit(X)
        found += len(est.workload_.points_.get("x", []))
    assert found <= 2


# ------------------------------------------------------------------ determinism, errors


def test_fits_are_deterministic_under_random_state():
    X = table(800)
    make = lambda seed: AdaptiveProjection(epsilon=1.0, workload=workload(), max_iter=5,  # noqa
                                           solver="heuristic", number_share=0.2,
                                           random_state=seed)
    a, b, c = make(0).fit(X), make(0).fit(X), make(1).fit(X)
    for col in ("gain", "hours", "score"):
        assert np.array_equal(a.number_measurements_[col], b.number_measurements_[col])
        assert not np.array_equal(a.number_measurements_[col], c.number_measurements_[col])
    pd.testing.assert_frame_equal(a.sample(500, random_state=3), b.sample(500, random_state=3))


@pytest.mark.parametrize("params, message", [
    ({"points": {"gain": [-5]}}, r"points\['gain'\].*within the column's bounds"),
    ({"points": {"gain": [0, 0]}}, r"points\['gain'\] has duplicates"),
    ({"points": {"gain": ["zero"]}}, r"points\['gain'\] must be a list of numbers"),
    ({"points": {"group": [0]}}, r"points\['group'\] applies to binned numbers only"),
    ({"points": {"nope": [0]}}, r"points names columns not in X"),
    ({"steps": {"gain": 0.5}}, r"steps\['gain'\].*must be a whole number"),
    ({"steps": {"score": -1}}, r"steps\['score'\] must be a positive number"),
    ({"steps": {"score": 4}}, r"Bin 1 .* of column 'score' contains no multiple of its step 4"),
])
def test_bad_points_and_steps_name_the_column(params, message):
    with pytest.raises(ValueError, match=message):
        workload(**params).fit(table(50))


def test_number_share_is_validated():
    with pytest.raises(ValueError, match="number_share"):
        AdaptiveProjection(number_share=1.0).fit(table(50))


def test_the_default_measures_nothing_where_the_noise_would_drown_it():
    # 300 rows at epsilon 1: the tree's noise sd would be far above NOISE_MAX
    from sklearn_privsyn.numbers import NOISE_MAX

    X = table(300)
    est = AdaptiveProjection(epsilon=1.0, workload=workload(), max_iter=5, solver="heuristic",
                             random_state=0).fit(X)
    assert est.number_share_ == 0.0 and est.synthesis_rho_ == est.rho_
    wl = workload().fit(X)
    coders = [c for c in wl.encoder_.coders if isinstance(c, BinnedCoder)]
    forced = plan_numbers(coders, 300, est.rho_, 0.25, len(wl.marginals_))
    assert forced.sigma > NOISE_MAX
