import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sklearn_privsyn.exceptions import BudgetExceededError
from sklearn_privsyn.privacy import (
    LedgerEntry,
    PrivacyLedger,
    cks_delta,
    compose,
    epsilon_to_rho,
    exponential_mechanism,
    exponential_mechanism_epsilon,
    exponential_mechanism_rho,
    gaussian_mechanism,
    gaussian_mechanism_rho,
    gaussian_sigma,
    rho_to_epsilon,
    split_budget,
    worst_query_mechanism,
)

ADULT_DELTA = 1 / 48842**2


# ---------------------------------------------------------------------------
# Independent references: brute force over a dense grid of alpha
# ---------------------------------------------------------------------------

# alpha - 1 from 1e-9 to 1e13, about 4e-5 apart in log scale.
_ALPHA = 1.0 + np.logspace(-9, 13, 1_200_001)


def grid_cks_delta(rho, eps):
    """min over the alpha grid of the CKS bound, written as in the paper."""
    a = _ALPHA
    log_terms = (a - 1) * (a * rho - eps) - np.log(a - 1) + a * np.log(1 - 1 / a)
    return min(1.0, float(np.exp(log_terms.min())))


def grid_cks_epsilon(rho, delta):
    """min over the alpha grid of the epsilon at which each alpha gives delta.

    Solving the CKS bound for epsilon at fixed alpha gives
    eps(alpha) = alpha rho + (ln(1/delta) + (alpha-1) ln(1-1/alpha) - ln alpha) / (alpha-1).
    """
    a = _ALPHA
    eps = a * rho + (-math.log(delta) + (a - 1) * np.log(1 - 1 / a) - np.log(a)) / (a - 1)
    return max(0.0, float(eps.min()))


# ---------------------------------------------------------------------------
# cks_delta
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rho, eps",
    [
        (0.5, 5.0),
        (0.01, 0.5),
        (1e-3, 0.1),
        (1.6747e-4, 0.1),
        (0.0143, 1.0),
        (0.1, 0.0),
        (1e-12, 0.0),
        (1e-12, 1e-5),
        (2.0, 1.0),
        (10.0, 1.0),
        (100.0, 300.0),
    ],
)
def test_cks_delta_matches_grid_minimum(rho, eps):
    expected = grid_cks_delta(rho, eps)
    assert cks_delta(rho, eps) == pytest.approx(expected, rel=1e-6)
    # The grid only samples alpha, so it can never beat the true infimum by
    # more than rounding.
    assert cks_delta(rho, eps) <= expected * (1 + 1e-9)


def test_cks_delta_known_value():
    # Evaluated independently (bisection for the optimal alpha, the root of
    # (2 alpha - 1) rho - eps + ln(1 - 1/alpha) = 0, in 50-digit decimal arithmetic).
    assert cks_delta(0.5, 5.0) == pytest.approx(2.8961228093847950e-06, rel=1e-12)


def test_cks_delta_is_below_classic_tail_bound():
    # exp(-(eps - rho)^2 / (4 rho)) is the classic (Bun-Steinke) delta.
    for rho, eps in [(0.01, 0.5), (1e-3, 0.1), (0.0143, 1.0)]:
        assert cks_delta(rho, eps) < math.exp(-((eps - rho) ** 2) / (4 * rho))


@pytest.mark.parametrize(
    "rho, eps, expected",
    [
        (0.0, 0.0, 0.0),
        (0.0, 1.0, 0.0),
        (1.0, math.inf, 0.0),
        (math.inf, 1.0, 1.0),
        (1e6, 1.0, 1.0),
        (1e300, 1e3, 1.0),
        (1e-12, 1e-3, 0.0),
        (1e-300, 1.0, 0.0),
    ],
)
def test_cks_delta_trivial_and_extreme_cases(rho, eps, expected):
    assert cks_delta(rho, eps) == pytest.approx(expected, abs=1e-12)


def test_cks_delta_tiny_rho_at_zero_epsilon():
    # With eps = 0 delta shrinks like sqrt(rho); compare with the grid.
    for rho in [1e-12, 1e-8]:
        assert cks_delta(rho, 0.0) == pytest.approx(grid_cks_delta(rho, 0.0), rel=1e-6)
    assert 0.0 < cks_delta(1e-300, 0.0) < 1e-140


# ---------------------------------------------------------------------------
# rho_to_epsilon / epsilon_to_rho
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("rho", [1e-8, 1e-4, 0.01, 0.5, 3.0])
@pytest.mark.parametrize("delta", [1e-12, ADULT_DELTA, 1e-6, 0.01])
def test_rho_to_epsilon_classic_by_hand(rho, delta):
    expected = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert rho_to_epsilon(rho, delta, method="classic") == pytest.approx(expected, rel=1e-14)


def test_rho_to_epsilon_classic_known_value():
    # 0.01 + 2 sqrt(0.01 ln(1e6)), ln(1e6) = 13.815510557964274
    assert rho_to_epsilon(0.01, 1e-6, method="classic") == pytest.approx(
        0.7533844377699678, rel=1e-12
    )


@pytest.mark.parametrize("rho", [1e-6, 1.6747e-4, 0.01, 0.5, 3.0])
@pytest.mark.parametrize("delta", [1e-12, ADULT_DELTA, 1e-5])
def test_rho_to_epsilon_cks_matches_grid(rho, delta):
    eps = rho_to_epsilon(rho, delta)
    assert eps == pytest.approx(grid_cks_epsilon(rho, delta), rel=1e-6)
    assert cks_delta(rho, eps) <= delta
    assert eps <= rho_to_epsilon(rho, delta, method="classic")


@pytest.mark.parametrize("eps", [1e-3, 0.1, 0.5, 1.0, 2.0, 10.0])
@pytest.mark.parametrize("delta", [1e-12, ADULT_DELTA, 1e-6, 0.1])
def test_epsilon_to_rho_classic_closed_form_and_round_trip(eps, delta):
    rho = epsilon_to_rho(eps, delta, method="classic")
    log_inv = math.log(1 / delta)
    assert rho == pytest.approx((math.sqrt(log_inv + eps) - math.sqrt(log_inv)) ** 2, rel=1e-9)
    back = rho_to_epsilon(rho, delta, method="classic")
    assert back <= eps
    assert back == pytest.approx(eps, rel=1e-12)


@pytest.mark.parametrize("eps", [1e-3, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, ADULT_DELTA, 1e-6, 0.1])
def test_epsilon_to_rho_cks_is_largest_safe_rho(eps, delta):
    rho = epsilon_to_rho(eps, delta)
    assert cks_delta(rho, eps) <= delta  # safe as computed
    assert cks_delta(rho * (1 + 1e-9), eps) > delta  # and (nearly) the largest
    assert rho_to_epsilon(rho, delta) == pytest.approx(eps, rel=1e-9)
    # CKS is never worse than the classic conversion.
    assert rho >= epsilon_to_rho(eps, delta, method="classic")


def test_epsilon_to_rho_cks_matches_grid_inverse():
    # Invert the grid epsilon by bisection on rho, independently of the module.
    eps, delta = 0.5, ADULT_DELTA
    lo, hi = 1e-6, 1.0
    for _ in range(45):  # log-width 13.8 / 2**45: 4e-13 relative
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if grid_cks_epsilon(mid, delta) <= eps else (lo, mid)
    assert epsilon_to_rho(eps, delta) == pytest.approx(lo, rel=1e-6)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0])
def test_cks_gain_over_classic_on_adult(eps):
    # The gain reported in benchmarks/bench_conversions.py: between 1.2x and 1.5x.
    ratio = epsilon_to_rho(eps, ADULT_DELTA) / epsilon_to_rho(eps, ADULT_DELTA, method="classic")
    assert 1.2 < ratio < 1.5


_rhos = st.floats(min_value=1e-10, max_value=50.0)
_epss = st.floats(min_value=1e-4, max_value=50.0)
_deltas = st.floats(min_value=1e-15, max_value=0.5)
_factor = st.floats(min_value=1.01, max_value=10.0)


@settings(max_examples=40, deadline=None)
@given(rho=_rhos, eps=st.floats(min_value=0.0, max_value=50.0), factor=_factor)
def test_cks_delta_monotone(rho, eps, factor):
    assert cks_delta(rho * factor, eps) >= cks_delta(rho, eps)
    assert cks_delta(rho, eps * factor + 1e-3) <= cks_delta(rho, eps)


@settings(max_examples=40, deadline=None)
@given(rho=_rhos, delta=_deltas, factor=_factor)
def test_rho_to_epsilon_monotone(rho, delta, factor):
    for method in ["cks", "classic"]:
        eps = rho_to_epsilon(rho, delta, method=method)
        assert rho_to_epsilon(rho * factor, delta, method=method) >= eps
        assert rho_to_epsilon(rho, delta / factor, method=method) >= eps
    assert rho_to_epsilon(rho, delta) <= rho_to_epsilon(rho, delta, method="classic")


@settings(max_examples=40, deadline=None)
@given(eps=_epss, delta=_deltas, factor=_factor)
def test_epsilon_to_rho_monotone_and_cks_allows_more(eps, delta, factor):
    for method in ["cks", "classic"]:
        rho = epsilon_to_rho(eps, delta, method=method)
        assert epsilon_to_rho(eps * factor, delta, method=method) >= rho
        assert epsilon_to_rho(eps, delta / factor, method=method) <= rho
    cks = epsilon_to_rho(eps, delta)
    assert cks >= epsilon_to_rho(eps, delta, method="classic")
    assert cks_delta(cks, eps) <= delta


def test_conversion_edge_cases():
    assert rho_to_epsilon(0.0, 1e-6) == 0.0
    assert rho_to_epsilon(0.0, 1e-6, method="classic") == 0.0
    assert rho_to_epsilon(math.inf, 1e-6) == math.inf
    # A tiny rho still gets a (tiny) positive epsilon at a small delta.
    assert 0.0 < rho_to_epsilon(1e-12, 1e-9) < 1e-4
    assert rho_to_epsilon(1e-12, 1e-9) == pytest.approx(grid_cks_epsilon(1e-12, 1e-9), rel=1e-5)
    # At a large delta a tiny rho is already (0, delta)-DP.
    assert rho_to_epsilon(1e-12, 0.5) == 0.0


_EXTREMES = [5e-324, 1e-300, 1e-100, 1e-20, 1e-5, 1.0, 1e5, 1e50, 1e99, 1e101, 1e300, 1.7e308]


@pytest.mark.parametrize("delta", [1e-300, 1e-9, 0.5])
def test_conversions_survive_extreme_inputs(delta):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x in _EXTREMES:
            assert 0.0 <= cks_delta(x, 0.0) <= 1.0
            assert 0.0 <= cks_delta(1.0, x) <= 1.0
            assert 0.0 <= cks_delta(x, x) <= 1.0
            rho = epsilon_to_rho(x, delta)
            # Safe, or outside the range where CKS is evaluated (then classic).
            assert cks_delta(rho, x) <= delta or rho == epsilon_to_rho(x, delta, "classic")
            eps = rho_to_epsilon(x, delta)
            assert math.isfinite(eps)
            assert cks_delta(x, eps) <= delta or eps == rho_to_epsilon(x, delta, "classic")


@pytest.mark.parametrize(
    "func, kwargs, error, match",
    [
        (cks_delta, dict(rho=-1.0, epsilon=1.0), ValueError, "rho must be >= 0"),
        (cks_delta, dict(rho=float("nan"), epsilon=1.0), ValueError, "rho must be finite"),
        (cks_delta, dict(rho=1.0, epsilon=-0.1), ValueError, "epsilon must be >= 0"),
        (cks_delta, dict(rho="a", epsilon=1.0), TypeError, "rho must be a real number"),
        (rho_to_epsilon, dict(rho=-1e-3, delta=1e-6), ValueError, "rho must be >= 0"),
        (rho_to_epsilon, dict(rho=1.0, delta=0.0), ValueError, "delta must be > 0"),
        (rho_to_epsilon, dict(rho=1.0, delta=1.0), ValueError, "delta must be < 1"),
        (rho_to_epsilon, dict(rho=1.0, delta=1e-6, method="rdp"), ValueError, "method must be one of"),
        (epsilon_to_rho, dict(epsilon=0.0, delta=1e-6), ValueError, "epsilon must be > 0"),
        (epsilon_to_rho, dict(epsilon=math.inf, delta=1e-6), ValueError, "epsilon must be finite"),
        (epsilon_to_rho, dict(epsilon=1.0, delta=-1e-6), ValueError, "delta must be > 0"),
        (epsilon_to_rho, dict(epsilon=1.0, delta=2.0), ValueError, "delta must be < 1"),
        (epsilon_to_rho, dict(epsilon=1.0, delta=None), TypeError, "delta must be a real number"),
        (epsilon_to_rho, dict(epsilon=1.0, delta=1e-6, method="CKS"), ValueError, "method must be one of"),
        (exponential_mechanism_rho, dict(epsilon=-1.0), ValueError, "epsilon must be >= 0"),
        (exponential_mechanism_epsilon, dict(rho=math.inf), ValueError, "rho must be finite"),
        (gaussian_mechanism_rho, dict(sensitivity=1.0, sigma=0.0), ValueError, "sigma must be > 0"),
        (gaussian_mechanism_rho, dict(sensitivity=-1.0, sigma=1.0), ValueError, "sensitivity must be >= 0"),
        (gaussian_sigma, dict(sensitivity=1.0, rho=0.0), ValueError, "rho must be > 0"),
    ],
)
def test_conversion_validation(func, kwargs, error, match):
    with pytest.raises(error, match=match):
        func(**kwargs)


# ---------------------------------------------------------------------------
# Mechanism costs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.0, 0.00506, 0.2, 3.0])
def test_exponential_mechanism_rho_is_bounded_range_cost(eps):
    assert exponential_mechanism_rho(eps) == pytest.approx(eps * eps / 8, rel=1e-15)
    assert exponential_mechanism_epsilon(exponential_mechanism_rho(eps)) == pytest.approx(eps)


def test_exponential_mechanism_rho_known_value():
    assert exponential_mechanism_rho(0.2) == pytest.approx(0.005)
    assert exponential_mechanism_epsilon(0.005) == pytest.approx(0.2)
    assert exponential_mechanism_rho(exponential_mechanism_epsilon(0.005)) <= 0.005


@pytest.mark.parametrize("sensitivity, sigma, rho", [(1.0, 5.0, 0.02), (0.5, 1.0, 0.125), (2.0, 0.1, 200.0)])
def test_gaussian_costs(sensitivity, sigma, rho):
    assert gaussian_mechanism_rho(sensitivity, sigma) == pytest.approx(rho)
    assert gaussian_sigma(sensitivity, rho) == pytest.approx(sigma)


# ---------------------------------------------------------------------------
# exponential_mechanism
# ---------------------------------------------------------------------------


def _draw(scores, eps, sens, n_draws, seed):
    rng = np.random.default_rng(seed)
    picks = [exponential_mechanism(scores, eps, sens, rng) for _ in range(n_draws)]
    return np.bincount(picks, minlength=len(scores))


def test_exponential_mechanism_matches_softmax():
    scores = np.array([0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 1.0, 1.2, 1.5])
    eps, sens, n_draws = 2.0, 0.5, 50_000
    counts = _draw(scores, eps, sens, n_draws, seed=12345)
    w = np.exp(eps * scores / (2 * sens))
    expected = n_draws * w / w.sum()
    assert stats.chisquare(counts, expected).pvalue > 1e-3
    # The test has power: a mechanism without the factor 1/2 would be rejected.
    w_wrong = np.exp(eps * scores / sens)
    wrong = n_draws * w_wrong / w_wrong.sum()
    assert stats.chisquare(counts, wrong).pvalue < 1e-10


def test_exponential_mechanism_huge_epsilon_picks_the_maximum():
    rng = np.random.default_rng(0)
    scores = rng.uniform(size=1000)
    for eps in [1e6, 1e300]:
        assert exponential_mechanism(scores, eps, 1e-3, rng) == int(np.argmax(scores))


def test_exponential_mechanism_no_overflow_with_extreme_scaling():
    scores = np.array([1.0, -1.0, 0.999999, 1e300, 1e300 * (1 - 1e-15), -1e300])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any overflow RuntimeWarning fails
        picks = {exponential_mechanism(scores, 10.0, 1e-10, seed) for seed in range(20)}
        # scale * gap is ~1e300 for every runner-up: only the top can win.
        assert picks == {3}
        # scale = eps / (2 sens) itself overflows to inf.
        assert exponential_mechanism(scores, 1e300, 1e-300, 0) == 3
        # The score range itself overflows (1e308 - (-1e308)).
        assert exponential_mechanism([-1.7e308, 1.7e308], 1.0, 1.0, 0) == 1


def test_exponential_mechanism_ties_share_the_mass():
    scores = np.array([0.0, 1.0, 1.0, -5.0])
    counts = _draw(scores, 1e300, 1.0, 2000, seed=3)
    assert counts[0] == counts[3] == 0
    assert stats.binomtest(int(counts[1]), 2000, 0.5).pvalue > 1e-3


def test_exponential_mechanism_one_million_candidates():
    rng = np.random.default_rng(7)
    scores = rng.uniform(size=1_000_000)
    scores[123_456] = 2.0
    assert exponential_mechanism(scores, 1e4, 1.0, rng) == 123_456
    # At a moderate epsilon the pick is in the top of the distribution.
    picks = [exponential_mechanism(scores, 40.0, 1.0, rng) for _ in range(5)]
    assert all(0 <= p < 1_000_000 for p in picks)
    assert np.mean(scores[picks]) > 0.8


def test_exponential_mechanism_rng_types():
    scores = np.linspace(0, 1, 50)
    assert exponential_mechanism(scores, 1.0, 1.0, 42) == exponential_mechanism(
        scores, 1.0, 1.0, np.random.default_rng(42)
    )
    assert isinstance(exponential_mechanism(scores, 1.0, 1.0, 0), int)
    # the package's one rule (make_generator): a RandomState is drawn from, so it advances
    state = np.random.RandomState(0)
    exponential_mechanism(scores, 1.0, 1.0, state)
    assert not np.array_equal(state.get_state()[1], np.random.RandomState(0).get_state()[1])
    with pytest.raises(TypeError, match="rng must be None, an int seed"):
        exponential_mechanism(scores, 1.0, 1.0, "0")


@pytest.mark.parametrize(
    "scores, eps, sens, error, match",
    [
        ([0.0, np.nan], 1.0, 1.0, ValueError, r"scores must be finite; scores\[1\]"),
        ([0.0, np.inf], 1.0, 1.0, ValueError, r"scores must be finite"),
        ([], 1.0, 1.0, ValueError, "non-empty 1-d"),
        ([[0.0, 1.0]], 1.0, 1.0, ValueError, "non-empty 1-d"),
        ([0.0, 1.0], 0.0, 1.0, ValueError, "epsilon must be > 0"),
        ([0.0, 1.0], math.inf, 1.0, ValueError, "epsilon must be finite"),
        ([0.0, 1.0], 1.0, 0.0, ValueError, "sensitivity must be > 0"),
    ],
)
def test_exponential_mechanism_validation(scores, eps, sens, error, match):
    with pytest.raises(error, match=match):
        exponential_mechanism(scores, eps, sens, 0)


# ---------------------------------------------------------------------------
# worst_query_mechanism: the exponential mechanism over queries and negations
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("errors, eps, sens", [
    (np.array([0.0, 0.1, -0.2, 0.3, -0.05, 0.0, 0.25]), 4.0, 0.5),
    (np.array([-0.4, 0.4, 0.39, -0.01]), 20.0, 0.5),
])
def test_worst_query_mechanism_matches_the_softmax_over_2q_scores(errors, eps, sens):
    rng = np.random.default_rng(2024)
    n_draws = 40_000
    picks = [worst_query_mechanism(errors, eps, sens, rng) for _ in range(n_draws)]
    counts = np.bincount(picks, minlength=2 * len(errors))
    assert len(counts) == 2 * len(errors)
    scores = np.concatenate([errors, -errors])

    def pvalue(logits):
        expected = n_draws * np.exp(logits - logits.max())
        expected *= n_draws / expected.sum()
        rare = expected < 5  # pooled: the chi-square needs no tiny expected counts
        observed, expected = counts[~rare], expected[~rare]
        if rare.any():
            observed = np.append(observed, counts[rare].sum())
            expected = np.append(expected, n_draws - expected.sum())
        return stats.chisquare(observed, expected).pvalue

    assert pvalue(eps * scores / (2 * sens)) > 1e-3
    # power: the scores without the factor 1/2 are rejected
    assert pvalue(eps * scores / sens) < 1e-10


def test_worst_query_mechanism_agrees_with_the_gumbel_sampler():
    # the two samplers of one distribution, on a workload-sized spread of errors
    errors = np.random.default_rng(5).normal(0.0, 0.02, size=40)
    eps, sens, n_draws = 1.0, 1e-2, 20_000
    rng = np.random.default_rng(9)
    ours = np.bincount([worst_query_mechanism(errors, eps, sens, rng) for _ in range(n_draws)],
                       minlength=80)
    gumbel = np.bincount([exponential_mechanism(np.concatenate([errors, -errors]), eps, sens, rng)
                          for _ in range(n_draws)], minlength=80)
    seen = (ours + gumbel) > 0
    assert stats.chi2_contingency(np.array([ours[seen], gumbel[seen]])).pvalue > 1e-3


def test_worst_query_mechanism_extreme_scales_pick_the_largest_error_with_its_sign():
    errors = np.array([0.3, -0.9, 0.5, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seed in range(10):
            assert worst_query_mechanism(errors, 1e6, 1e-3, seed) == 4 + 1  # negation of query 1
            # eps / (2 sens) overflows to inf
            assert worst_query_mechanism(errors, 1e300, 1e-300, seed) == 5
            assert worst_query_mechanism(-errors, 1e300, 1e-300, seed) == 1
        # all errors zero at an infinite scale: every candidate is a maximum
        picks = {worst_query_mechanism(np.zeros(3), 1e300, 1e-300, seed) for seed in range(200)}
        assert picks == set(range(6))


@pytest.mark.parametrize("errors, eps, sens, match", [
    ([0.0, np.nan], 1.0, 1.0, "errors must be finite"),
    ([], 1.0, 1.0, "non-empty 1-d"),
    ([0.1], 0.0, 1.0, "epsilon must be > 0"),
    ([0.1], 1.0, -1.0, "sensitivity must be > 0"),
])
def test_worst_query_mechanism_validation(errors, eps, sens, match):
    with pytest.raises(ValueError, match=match):
        worst_query_mechanism(errors, eps, sens, 0)


# ---------------------------------------------------------------------------
# gaussian_mechanism
# ---------------------------------------------------------------------------


def test_gaussian_mechanism_noise_std_and_mean():
    values = np.full((400, 500), 3.0)
    noisy = gaussian_mechanism(values, sensitivity=1.0, sigma=2.0, rng=0)
    assert noisy.shape == values.shape
    noise = noisy - values
    # Standard errors: mean 2/sqrt(2e5) = 0.0045, std 2/sqrt(4e5) = 0.0032.
    assert abs(noise.mean()) < 0.03
    assert noise.std() == pytest.approx(2.0, abs=0.02)
    assert stats.normaltest(noise.ravel()[:5000]).pvalue > 1e-3


def test_gaussian_mechanism_seeded_and_validated():
    a = gaussian_mechanism([1.0, 2.0], 1.0, 0.5, 5)
    b = gaussian_mechanism([1.0, 2.0], 1.0, 0.5, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="values must be finite"):
        gaussian_mechanism([1.0, np.nan], 1.0, 0.5, 0)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        gaussian_mechanism([1.0], 1.0, -0.5, 0)


# ---------------------------------------------------------------------------
# PrivacyLedger
# ---------------------------------------------------------------------------


def test_ledger_totals_and_aggregation():
    ledger = PrivacyLedger(rho_budget=1.0)
    ledger.charge("exponential", 0.01)
    ledger.charge("gaussian", 0.02, count=3)
    ledger.charge("exponential", 0.01, count=4)
    ledger.charge("exponential", 0.005)
    assert ledger.entries == (
        LedgerEntry("exponential", 0.01, 5),
        LedgerEntry("gaussian", 0.02, 3),
        LedgerEntry("exponential", 0.005, 1),
    )
    expected = 0.05 + 0.06 + 0.005
    assert ledger.rho_spent == pytest.approx(expected, rel=1e-15)
    assert ledger.rho_remaining == pytest.approx(1.0 - expected, rel=1e-15)
    assert ledger.rho_budget == 1.0
    assert ledger.epsilon(1e-6) == rho_to_epsilon(ledger.rho_spent, 1e-6)
    assert ledger.epsilon(1e-6, method="classic") == pytest.approx(
        expected + 2 * math.sqrt(expected * math.log(1e6))
    )


def test_ledger_to_frame_and_repr():
    ledger = PrivacyLedger(rho_budget=0.5)
    ledger.charge("exponential", 0.01, count=10)
    ledger.charge("gaussian", 0.05)
    frame = ledger.to_frame()
    assert list(frame.columns) == ["mechanism", "rho", "count", "total_rho"]
    assert frame["mechanism"].tolist() == ["exponential", "gaussian"]
    assert frame["count"].tolist() == [10, 1]
    np.testing.assert_allclose(frame["total_rho"], [0.1, 0.05])
    assert frame["total_rho"].sum() == pytest.approx(ledger.rho_spent)
    text = repr(ledger)
    assert text.startswith("PrivacyLedger(rho_budget=0.5, rho_spent=0.15")
    assert "exponential: 10 x 0.01" in text and "gaussian: 1 x 0.05" in text


def test_ledger_empty():
    ledger = PrivacyLedger()
    assert ledger.rho_budget == math.inf
    assert ledger.rho_spent == 0.0
    assert ledger.entries == ()
    assert ledger.epsilon(1e-6) == 0.0
    frame = ledger.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 0
    assert list(frame.columns) == ["mechanism", "rho", "count", "total_rho"]
    ledger.charge("exponential", 1e6)  # no limit
    assert ledger.rho_remaining == math.inf


def test_ledger_overspend_raises_and_changes_nothing():
    ledger = PrivacyLedger(rho_budget=0.1)
    ledger.charge("exponential", 0.03, count=3)
    before = (ledger.entries, ledger.rho_spent)
    assert not ledger.can_afford(0.011)
    with pytest.raises(BudgetExceededError, match="exponential.*rho_budget=0.1"):
        ledger.charge("exponential", 0.011)
    with pytest.raises(BudgetExceededError, match="'gaussian'"):
        ledger.charge("gaussian", 0.004, count=3)
    assert (ledger.entries, ledger.rho_spent) == before
    assert ledger.can_afford(0.01)
    ledger.charge("gaussian", 0.01)
    assert ledger.rho_spent == pytest.approx(0.1)
    assert ledger.rho_remaining == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("T", [3, 7, 10, 37, 49, 100, 354, 1000])
@pytest.mark.parametrize("budget", [0.1, 0.014270342830637767, 1 / 3])
def test_ledger_T_charges_of_a_split_budget_fit(T, budget):
    (part,) = split_budget(budget, [T])
    assert part <= budget / T and part == pytest.approx(budget / T, rel=1e-14)
    ledger = PrivacyLedger(rho_budget=budget)
    for _ in range(T):
        ledger.charge("exponential", part)
    assert ledger.rho_spent <= budget
    assert ledger.rho_spent == pytest.approx(budget, rel=1e-13)
    assert ledger.entries == (LedgerEntry("exponential", part, T),)
    # One more charge of the same size does not fit.
    assert not ledger.can_afford(part)
    with pytest.raises(BudgetExceededError):
        ledger.charge("exponential", part)
    # Nor does the whole batch at once plus a little.
    fresh = PrivacyLedger(rho_budget=budget)
    assert fresh.can_afford(part, count=T)
    assert not fresh.can_afford(part * (1 + 1e-6), count=T)


def test_ledger_refuses_any_excess():
    # seven charges of 0.1 / 7 add up (exactly) to a little more than 0.1,
    # although the float sum rounds back to 0.1
    budget = 0.1
    part = budget / 7
    assert Fraction(part) * 7 > Fraction(budget) and math.fsum([part] * 7) == budget
    ledger = PrivacyLedger(rho_budget=budget)
    assert not ledger.can_afford(part, count=7)
    with pytest.raises(BudgetExceededError):
        ledger.charge("exponential", part, count=7)
    for _ in range(6):
        ledger.charge("exponential", part)
    with pytest.raises(BudgetExceededError):
        ledger.charge("exponential", part)
    ledger = PrivacyLedger(rho_budget=budget)
    ledger.charge("exponential", 0.05)
    assert not ledger.can_afford(math.nextafter(0.05, 1.0))
    assert ledger.can_afford(ledger.rho_remaining)
    ledger.charge("gaussian", ledger.rho_remaining)
    assert ledger.rho_spent <= budget
    assert ledger.rho_remaining == 0.0


@pytest.mark.parametrize("budget", [1e-12, 0.0147, 0.1, 1 / 3, 7.0])
@pytest.mark.parametrize(
    "counts, shares",
    [([7], None), ([3, 3], [0.3, 0.7]), ([354, 1], [0.8, 0.2]), ([10, 10, 1], [1, 2, 3])],
)
def test_split_budget_never_exceeds_and_keeps_the_shares(budget, counts, shares):
    costs = split_budget(budget, counts, shares)
    weights = np.ones(len(counts)) if shares is None else np.asarray(shares, float)
    weights = weights / weights.sum()
    # independent sum: exact rational arithmetic over the floats
    total = sum(Fraction(c) * n for c, n in zip(costs, counts))
    assert total <= Fraction(budget)
    assert compose(zip(costs, counts)) <= budget
    for cost, n, w in zip(costs, counts, weights):
        assert cost * n == pytest.approx(budget * w, rel=1e-13)


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((0.1, []), ValueError, "at least one part"),
        ((0.1, [2, 3], [1.0]), ValueError, "shares has 1 entries but counts has 2"),
        ((0.1, [2], [0.0]), ValueError, "must not all be zero"),
        ((0.1, [0]), ValueError, "count must be a positive integer"),
        ((-0.1, [1]), ValueError, "rho must be >= 0"),
    ],
)
def test_split_budget_rejects_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        split_budget(*args)


@pytest.mark.parametrize("seed", range(3))
def test_inverse_costs_round_on_the_safe_side(seed):
    # exponential_mechanism_epsilon and gaussian_sigma: the mechanism they give
    # never costs more than asked, for thousands of awkward values
    rng = np.random.default_rng(seed)
    for rho in np.exp(rng.uniform(math.log(1e-12), math.log(10.0), 2000)):
        rho = float(rho)
        eps = exponential_mechanism_epsilon(rho)
        assert exponential_mechanism_rho(eps) <= rho
        assert exponential_mechanism_rho(math.nextafter(eps, 1.0)) >= rho * (1 - 1e-15)
        sensitivity = float(rng.uniform(1e-6, 2.0))
        sigma = gaussian_sigma(sensitivity, rho)
        assert gaussian_mechanism_rho(sensitivity, sigma) <= rho
        assert gaussian_mechanism_rho(sensitivity, math.nextafter(sigma, 0.0)) >= rho * (1 - 1e-15)


def test_ledger_zero_budget():
    ledger = PrivacyLedger(rho_budget=0.0)
    ledger.charge("free", 0.0, count=5)
    with pytest.raises(BudgetExceededError):
        ledger.charge("exponential", 1e-300)
    assert ledger.rho_spent == 0.0


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(mechanism="em", rho=-0.1), ValueError, "rho must be >= 0"),
        (dict(mechanism="em", rho=math.nan), ValueError, "rho must be finite"),
        (dict(mechanism="em", rho=math.inf), ValueError, "rho must be finite"),
        (dict(mechanism="em", rho="0.1"), TypeError, "rho must be a real number"),
        (dict(mechanism="em", rho=0.1, count=0), ValueError, "count must be a positive integer"),
        (dict(mechanism="em", rho=0.1, count=1.5), TypeError, "count must be a positive integer"),
        (dict(mechanism="em", rho=0.1, count=True), TypeError, "count must be a positive integer"),
        (dict(mechanism="", rho=0.1), TypeError, "mechanism must be a non-empty string"),
        (dict(mechanism=None, rho=0.1), TypeError, "mechanism must be a non-empty string"),
    ],
)
def test_ledger_charge_validation(kwargs, error, match):
    ledger = PrivacyLedger(rho_budget=1.0)
    with pytest.raises(error, match=match):
        ledger.charge(**kwargs)
    assert ledger.entries == () and ledger.rho_spent == 0.0


def test_ledger_accepts_numpy_scalars():
    ledger = PrivacyLedger(rho_budget=np.float64(1.0))
    ledger.charge("em", np.float32(0.25), count=np.int64(2))
    assert ledger.entries == (LedgerEntry("em", float(np.float32(0.25)), 2),)
    assert type(ledger.entries[0].count) is int


@pytest.mark.parametrize(
    "budget, error, match",
    [
        (-1.0, ValueError, "rho_budget must be >= 0"),
        (math.nan, ValueError, "rho_budget must be finite"),
        ("1", TypeError, "rho_budget must be a real number"),
    ],
)
def test_ledger_budget_validation(budget, error, match):
    with pytest.raises(error, match=match):
        PrivacyLedger(rho_budget=budget)


def test_ledger_can_afford_validation():
    with pytest.raises(ValueError, match="count must be a positive integer"):
        PrivacyLedger(1.0).can_afford(0.1, count=-1)
    with pytest.raises(ValueError, match="delta must be > 0"):
        PrivacyLedger(1.0).epsilon(0.0)


def test_public_lazy_export():
    import sklearn_privsyn

    assert sklearn_privsyn.PrivacyLedger is PrivacyLedger
