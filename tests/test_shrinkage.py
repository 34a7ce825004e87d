"""The 1-way answers mixed with uniform (sklearn_privsyn.adaptive._shrinkage)."""

import numpy as np
import pytest

from sklearn_privsyn.adaptive import shrink_one_way, shrink_toward_uniform
from sklearn_privsyn.simplex import project_to_simplex


def sure(estimate_of, y, sigma, lam):
    """Stein's unbiased risk estimate of the mixture, its divergence by finite differences."""
    g = estimate_of(y, lam)
    h = 1e-6
    divergence = sum((estimate_of(y + h * e, lam) - g) @ e / h for e in np.eye(y.size))
    return float((g - y) @ (g - y)) - y.size * sigma**2 + 2 * sigma**2 * divergence


def mixture(y, lam):
    return (1 - lam) / y.size + lam * project_to_simplex(y)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("sigma", [0.01, 0.1, 0.3])
def test_the_weight_minimises_steins_risk_estimate(seed, sigma):
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.full(8, 0.5))
    y = truth + rng.normal(0, sigma, truth.size)
    estimate, lam = shrink_toward_uniform(y, sigma)
    np.testing.assert_allclose(estimate, mixture(y, lam), atol=1e-12)
    grid = np.linspace(0, 1, 201)
    risks = [sure(mixture, y, sigma, g) for g in grid]
    assert sure(mixture, y, sigma, lam) <= min(risks) + 1e-9


def test_steins_estimate_is_unbiased_for_the_squared_error():
    # the divergence |S| - 1 (from the formula above) and the estimate's mean: checked
    # against the true squared error over many draws of the noise
    rng = np.random.default_rng(0)
    truth, sigma, lam = np.array([0.4, 0.3, 0.2, 0.1, 0.0]), 0.2, 0.6
    errors, estimates = [], []
    for _ in range(20000):
        y = truth + rng.normal(0, sigma, truth.size)
        g = mixture(y, lam)
        errors.append(float((g - truth) @ (g - truth)))
        free = np.count_nonzero(project_to_simplex(y)) - 1
        estimates.append(float((g - y) @ (g - y)) - y.size * sigma**2
                         + 2 * sigma**2 * lam * free)
    assert np.mean(estimates) == pytest.approx(np.mean(errors), abs=4 * np.std(estimates) / 141)


@pytest.mark.parametrize("truth", [np.full(10, 0.1), np.linspace(1, 2, 10) / 15])
def test_under_large_noise_the_mixture_is_closer_than_the_projection(truth):
    rng = np.random.default_rng(1)
    sigma = 0.3
    mixed, projected = [], []
    for _ in range(2000):
        y = truth + rng.normal(0, sigma, truth.size)
        mixed.append(np.abs(shrink_toward_uniform(y, sigma)[0] - truth).sum())
        projected.append(np.abs(project_to_simplex(y) - truth).sum())
    assert np.mean(mixed) < 0.6 * np.mean(projected)  # L1, what the TVD measures


def test_clear_answers_are_kept_as_measured():
    truth = np.array([0.9, 0.0, 0.05, 0.05])
    y = truth + np.random.default_rng(2).normal(0, 0.002, 4)
    estimate, lam = shrink_toward_uniform(y, 0.002)
    assert lam > 0.99
    np.testing.assert_allclose(estimate, project_to_simplex(y), atol=1e-3)


def test_blocks_are_distributions_and_a_one_cell_column_is_kept():
    rng = np.random.default_rng(3)
    sizes = [1, 2, 5, 12]
    noisy = rng.normal(0.2, 0.3, sum(sizes))
    estimates, factors = shrink_one_way(noisy, sizes, 0.3)
    assert factors.shape == (4,) and factors[0] == 1.0
    start = np.concatenate([[0], np.cumsum(sizes)])
    for j in range(len(sizes)):
        block = estimates[start[j]:start[j + 1]]
        assert np.all(block >= 0) and block.sum() == pytest.approx(1.0)
        expected, lam = shrink_toward_uniform(noisy[start[j]:start[j + 1]], 0.3)
        np.testing.assert_array_equal(block, expected)
        assert factors[j] == lam
