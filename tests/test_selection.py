"""Adaptive selection's plan and accounting (sklearn_privsyn.adaptive._selection)."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

import sklearn_privsyn.adaptive._selection as selection
from sklearn_privsyn.adaptive._selection import (
    candidate_marginals,
    measure_adaptively,
    round_noise,
)
from sklearn_privsyn.privacy import PrivacyLedger


class StubModel:
    """A representation that fits nothing: answers are a fixed guess (post-processing only)."""

    def __init__(self, candidates, rng, allowed=None):
        self.cells = candidates.cells
        self.rng = rng
        self.allowed = allowed
        self.refits = 0

    def refit(self, measurements):
        self.refits += 1
        self.measurements = dict(measurements)

    def answers(self, indices):
        return np.concatenate([np.full(self.cells[i], 1.0 / self.cells[i]) for i in indices])

    def admissible(self, candidates, progress):
        if self.allowed is None:
            return np.ones(len(candidates.marginals), dtype=bool)
        return self.allowed


def test_candidates_are_the_workload_and_its_subsets_weighted_by_overlap():
    c = candidate_marginals([(2, 0), (0, 1, 3)], [2, 3, 4, 2])
    assert c.marginals == ((0,), (1,), (2,), (3,), (0, 1), (2, 0), (0, 3), (1, 3), (0, 1, 3))
    # w_c = sum over workload marginals r of |c & r|
    assert c.weights.tolist() == [2, 1, 1, 1, 3, 3, 3, 2, 4]
    assert c.cells.tolist() == [2, 3, 4, 2, 6, 8, 4, 6, 12]


def test_round_noise_splits_a_round_between_measurement_and_selection():
    n, rho, T, share = 500, 0.3, 12, 0.25
    sigma, eps = round_noise(n, rho, T, share)
    assert (math.sqrt(2) / n) ** 2 / (2 * sigma**2) == pytest.approx((1 - share) * rho / T)
    assert eps**2 / 8 == pytest.approx(share * rho / T)


@pytest.mark.parametrize("n, rho, d, rounds", list(itertools.product(
    [40, 1000, 48842], [1e-4, 0.02, 1.0, 8.0], [2, 4, 7], [1, 5, 60, 400])))
def test_the_plan_never_spends_above_the_budget(n, rho, d, rounds):
    sizes = [3] * d
    candidates = candidate_marginals(list(itertools.combinations(range(d), 2)), sizes)
    rng = np.random.default_rng(0)
    truth = rng.dirichlet(np.ones(3), size=int(candidates.cells.sum()) // 3 + 1).ravel()
    truth = truth[: int(candidates.cells.sum())]
    ledger = PrivacyLedger(rho)
    measure_adaptively(truth, candidates, n, rho, ledger, rng, StubModel(candidates, rng),
                       n_rounds=d + rounds)
    assert sum(Fraction(e.rho) * e.count for e in ledger.entries) <= Fraction(rho)
    assert ledger.rho_spent == pytest.approx(rho, rel=1e-6)  # and spends it all


def test_every_charge_matches_an_independent_formula(monkeypatch):
    calls = []
    real_gauss, real_em = selection.gaussian_mechanism, selection.exponential_mechanism

    def gauss(values, sensitivity, sigma, rng):
        calls.append(("gaussian", len(values), sensitivity, sigma))
        return real_gauss(values, sensitivity, sigma, rng)

    def em(scores, epsilon, sensitivity, rng):
        calls.append(("exponential", len(scores), sensitivity, epsilon))
        return real_em(scores, epsilon, sensitivity, rng)

    monkeypatch.setattr(selection, "gaussian_mechanism", gauss)
    monkeypatch.setattr(selection, "exponential_mechanism", em)
    n, rho, d = 300, 0.5, 4
    candidates = candidate_marginals([(0, 1, 2), (1, 2, 3)], [2, 3, 2, 4])
    rng = np.random.default_rng(3)
    truth = rng.uniform(size=int(candidates.cells.sum())) / 10
    ledger = PrivacyLedger(rho)
    measurements, chosen = measure_adaptively(truth, candidates, n, rho, ledger, rng,
                                               StubModel(candidates, rng), n_rounds=d + 8)
    # 1-way marginals first: one Gaussian over d columns, sensitivity sqrt(2 d) / n
    kind, size, sensitivity, sigma = calls[0]
    assert kind == "gaussian" and size == 2 + 3 + 2 + 4
    assert sensitivity == pytest.approx(math.sqrt(2 * d) / n)
    expected = d / (n * sigma) ** 2
    weight_max = candidates.weights.max()
    for kind, size, sensitivity, value in calls[1:]:
        if kind == "gaussian":
            assert sensitivity == pytest.approx(math.sqrt(2) / n)
            expected += 1 / (n * value) ** 2  # Delta**2 / (2 sigma**2)
        else:
            assert sensitivity == pytest.approx(2 * weight_max / n)  # weighted L1 score
            expected += value**2 / 8
    assert ledger.rho_spent == pytest.approx(expected, rel=1e-12)
    assert len(chosen) == sum(k == "exponential" for k, *_ in calls)
    assert [s for _, s in chosen] == [c[3] for c in calls[2::2]]


def test_annealing_halves_the_noise_when_a_round_changes_nothing():
    # the stub model never moves, so every round anneals: sigma halves each round
    n, rho, d = 1000, 1.0, 3
    candidates = candidate_marginals([(0, 1), (1, 2)], [2, 2, 2])
    rng = np.random.default_rng(0)
    truth = np.full(int(candidates.cells.sum()), 0.25)
    ledger = PrivacyLedger(rho)
    _, chosen = measure_adaptively(truth, candidates, n, rho, ledger, rng,
                                   StubModel(candidates, rng), n_rounds=d + 50)
    sigmas = [s for _, s in chosen]
    assert all(b == pytest.approx(a / 2) for a, b in zip(sigmas[:-2], sigmas[1:-1]))
    assert len(chosen) < 10  # four times the cost each round: few rounds


def test_selection_reads_only_admissible_candidates():
    candidates = candidate_marginals([(0, 1), (1, 2)], [2, 2, 2])
    allowed = np.array([True, True, True, False, True])
    rng = np.random.default_rng(0)
    truth = rng.uniform(size=int(candidates.cells.sum()))
    _, chosen = measure_adaptively(truth, candidates, 100, 2.0, PrivacyLedger(2.0), rng,
                                   StubModel(candidates, rng, allowed), n_rounds=20)
    assert chosen and all(allowed[m] for m, _ in chosen)


def test_repeated_measurements_are_averaged_by_inverse_variance():
    candidates = candidate_marginals([(0,)], [3])
    rng = np.random.default_rng(0)
    truth = np.array([0.2, 0.3, 0.5])
    measurements, chosen = measure_adaptively(truth, candidates, 2000, 1.0, PrivacyLedger(1.0),
                                              rng, StubModel(candidates, rng), n_rounds=6)
    (y, var), = measurements.values()
    precision = 1 / var
    assert precision == pytest.approx(sum(1 / s**2 for _, s in chosen)
                                      + 1 / round_noise(2000, 1.0 * (1 - 1e-9), 6, 0.1)[0] ** 2)
