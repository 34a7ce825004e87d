import dataclasses
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_privsyn import DQRS, DualQuery, QueryWorkload
from sklearn_privsyn._dualquery_base import SampleHistory
from sklearn_privsyn.dualquery import (
    acceptance_probabilities,
    default_learning_rate,
    dualquery_rounds,
    rejection_resample,
    rejection_step_rho,
)
from sklearn_privsyn.metrics import workload_error
from sklearn_privsyn.privacy import exponential_mechanism_draws
from sklearn_privsyn.solvers import BruteForceOracle, OneHotLayout

from neighbours import dqrs_coin_rho_by_brute_force


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (a + rng.integers(0, 2, n)) % 3
    c = rng.integers(0, 2, n)
    X = pd.DataFrame({"a": a, "b": b, "c": c})
    workload = QueryWorkload(domain={"a": 3, "b": 3, "c": 2}, k=2)
    return X, workload


def _fit(cls, **params):
    X, workload = _data()
    params = {"workload": workload, "solver": "brute", "random_state": 0, **params}
    return cls(**params).fit(X), X


# --- DualQuery accounting ---------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
@pytest.mark.parametrize("learning_rate,s", [(0.2, 5), (0.5, 2)])
def test_dualquery_accounting_matches_formula(epsilon, learning_rate, s):
    est, X = _fit(DualQuery, epsilon=epsilon, learning_rate=learning_rate, samples_per_round=s)
    n = len(X)
    T = est.n_rounds_

    def cost(rounds):  # sum over rounds 2..T of s draws at eps_t = 2 eta (t-1) / n
        return sum(s * (2 * learning_rate * (t - 1) / n) ** 2 / 8 for t in range(1, rounds + 1))

    assert est.ledger_.rho_spent == pytest.approx(cost(T), rel=1e-9)
    assert cost(T) <= est.rho_
    assert cost(T + 1) > est.rho_  # maximal: one more round would overspend
    assert {e.mechanism for e in est.ledger_.entries} <= {"exponential_mechanism"}
    assert len(est.records_) == T
    assert np.allclose(est.weights_, 1.0 / T)


def test_dualquery_rounds_helper_is_maximal():
    rho, eta, s, n = 0.003, 0.3, 7, 500
    T = dualquery_rounds(rho, eta, s, n)
    per = s * eta**2 / (2 * n**2)
    assert per * sum((t - 1) ** 2 for t in range(1, T + 1)) <= rho
    assert per * sum((t - 1) ** 2 for t in range(1, T + 2)) > rho


def test_dualquery_given_rounds_spends_the_budget():
    est, _ = _fit(DualQuery, epsilon=1.0, rounds=12)
    assert est.n_rounds_ == 12
    assert est.ledger_.rho_spent <= est.rho_
    assert est.ledger_.rho_spent == pytest.approx(est.rho_, rel=1e-6)
    assert est.epsilon_ <= 1.0


def test_dualquery_rounds_and_learning_rate_conflict():
    with pytest.raises(ValueError, match="at most one of rounds"):
        _fit(DualQuery, rounds=5, learning_rate=0.1)


@pytest.mark.parametrize("cls", [DualQuery, DQRS])
@pytest.mark.parametrize("epsilon", [0.05, 0.5, 2.0])
def test_never_over_budget(cls, epsilon):
    est, _ = _fit(cls, epsilon=epsilon)
    assert est.ledger_.rho_spent <= est.rho_
    assert est.epsilon_ <= epsilon
    assert est.n_rounds_ >= 1


def test_default_learning_rate_formula():
    rho, n, m, s = 0.01, 1000, 500, 10
    expected = math.log(m) ** 0.75 * (s / (6 * n * n * rho)) ** 0.25
    assert default_learning_rate(rho, n, m, s, scale=1.0) == pytest.approx(expected)
    assert default_learning_rate(rho, n, m, s, scale=3.0) == pytest.approx(3 * expected)
    assert default_learning_rate(1e-12, 10, 10**6, 10) == 2.0  # capped


# --- DQRS accounting --------------------------------------------------------------


@pytest.mark.parametrize("accounting", ["bounded_range", "pure"])
def test_dqrs_accounting_matches_formula(accounting):
    eta, s, c = 0.3, 6, 0.5
    est, X = _fit(DQRS, epsilon=2.0, learning_rate=eta, samples_per_round=s, gamma=c,
                  rejection_accounting=accounting)
    n = len(X)
    T = est.n_rounds_
    assert len(est.n_fresh_) == T - 1
    rs_total, fresh_total = 0.0, 0.0
    for k in range(2, T + 1):  # building round k's sample
        gamma = c * (k - 1) ** (-2 / 3)
        assert est.gamma_[k - 2] == pytest.approx(gamma)
        brute = dqrs_coin_rho_by_brute_force(eta, gamma, n, accounting)
        if accounting == "pure":
            rs = max(eta / n, eta / (gamma * n)) ** 2 / 2  # the paper's Lemma: looser
            assert rs >= brute * (1 - 1e-9)
        else:
            rs = brute  # the bounded-range analysis is tight
        rs_total += s * rs
        fresh_total += est.n_fresh_[k - 2] * (2 * eta * (k - 1) / n) ** 2 / 8
    by_mech = est.ledger_.to_frame().groupby("mechanism")["total_rho"].sum()
    assert by_mech["rejection_sampling"] == pytest.approx(rs_total, rel=1e-9)
    assert by_mech["exponential_mechanism"] == pytest.approx(fresh_total, rel=1e-9)
    assert est.ledger_.rho_spent <= est.rho_
    assert np.all(est.n_fresh_ <= s)


def test_dqrs_auto_gamma_starts_all_fresh_and_reuses_later():
    est, _ = _fit(DQRS, epsilon=3.0, samples_per_round=8)
    assert math.isinf(est.gamma_[0])  # round 2: fresh draws are cheaper than reuse
    assert est.n_fresh_[0] == 8
    assert np.isfinite(est.gamma_[-1])  # later rounds reuse samples
    assert est.n_fresh_[np.isfinite(est.gamma_)].mean() < 8
    assert est.n_rounds_ > DualQuery(
        epsilon=3.0, workload=est.workload, samples_per_round=8,
        learning_rate=est.learning_rate_, solver="brute", random_state=0,
    ).fit(_data()[0]).n_rounds_


def test_rejection_step_pure_is_papers_lemma():
    for eta, gamma, n in [(0.1, 0.05, 1000), (0.5, 2.0, 10), (0.01, 0.9, 7)]:
        expected = max(eta / n, eta / (gamma * n)) ** 2 / 2
        assert rejection_step_rho(eta, gamma, n, "pure") == pytest.approx(expected)


@pytest.mark.parametrize("eta,gamma,n", [(0.1, 0.05, 100), (0.5, 0.5, 50), (1.0, 3.0, 20)])
def test_rejection_step_bounded_range_width_by_brute_force(eta, gamma, n):
    # Over all gains g, g' in [-1, 1] with |g - g'| <= 1/n, the largest gap between
    # the log-odds of keeping is the bounded-range width w; rho = w^2 / 8.
    g = np.linspace(-1, 1 - 1 / n, 20001)
    p = np.exp(eta * (g - 1) - gamma)
    p2 = np.exp(eta * (g + 1 / n - 1) - gamma)
    width = np.max(np.abs(np.log(p2 / (1 - p2)) - np.log(p / (1 - p))))
    rho = rejection_step_rho(eta, gamma, n)
    assert math.sqrt(8 * rho) >= width * (1 - 1e-9)
    assert math.sqrt(8 * rho) == pytest.approx(width, rel=1e-6)
    assert rho <= rejection_step_rho(eta, gamma, n, "pure")


def test_rejection_step_rejects_bad_input():
    with pytest.raises(ValueError, match="gamma must be > 0"):
        rejection_step_rho(0.1, 0.0, 10)
    with pytest.raises(ValueError, match="accounting must be"):
        rejection_step_rho(0.1, 0.1, 10, "loose")


# --- samplers ---------------------------------------------------------------------


@pytest.mark.parametrize("eta,gamma", [(0.1, 0.01), (1.0, 0.5), (3.0, 2.0)])
def test_acceptance_probabilities_at_most_one(eta, gamma):
    gains = np.linspace(-1, 1, 101)
    p = acceptance_probabilities(gains, eta, gamma)
    assert np.all(p > 0)
    assert np.all(p <= 1)
    assert p.max() == pytest.approx(math.exp(-gamma))


def test_draw_matches_softmax():
    rng = np.random.default_rng(1)
    logw = np.array([0.0, 1.0, -2.0, 0.5, 700.0 - 700.0])
    # scores logw / 2 at epsilon 1 and sensitivity 1/4: log-weights eps * score / (2 Delta) = logw
    draws = exponential_mechanism_draws(logw / 2, 1.0, 0.25, 40_000, rng)
    p = np.exp(logw) / np.exp(logw).sum()
    counts = np.bincount(draws, minlength=len(p))
    assert stats.chisquare(counts, p * len(draws)).pvalue > 1e-3


@pytest.mark.parametrize("replaced", [1, 2], ids=["all-rejections-replaced", "half-replaced"])
def test_rejection_resample_is_distributed_as_new_mw_distribution(replaced):
    # replaced=2: DQRS's last round, where only the affordable share of the
    # rejections is replaced; the shorter sample is still i.i.d. from the update
    rng = np.random.default_rng(0)
    m, size, eta, gamma = 8, 30_000, 1.5, 0.2
    old_logw = rng.normal(size=m)
    q_old = np.exp(old_logw) / np.exp(old_logw).sum()
    gains = rng.uniform(-1, 1, m)
    new_logw = old_logw + eta * gains
    p_new = np.exp(new_logw) / np.exp(new_logw).sum()
    sample = rng.choice(m, size=size, p=q_old)
    new, n_rejected = rejection_resample(
        sample, gains, eta, gamma, rng,
        lambda k: exponential_mechanism_draws(new_logw, 2.0, 1.0, k // replaced, rng))
    assert len(new) == size - n_rejected + n_rejected // replaced
    counts = np.bincount(new, minlength=m)
    assert stats.chisquare(counts, p_new * len(new)).pvalue > 1e-3
    # the test has power: the old distribution is rejected
    assert stats.chisquare(counts, q_old * len(new)).pvalue < 1e-6
    # rejections happen at the rate implied by the keep probabilities
    expected = size * (1 - np.sum(q_old * acceptance_probabilities(gains, eta, gamma)))
    assert abs(n_rejected - expected) < 5 * math.sqrt(size * 0.25)


def test_rejection_resample_refuses_extra_fresh_draws():
    sample, gains = np.array([0, 1, 1]), np.array([0.5, -0.5])
    with pytest.raises(ValueError, match="more than asked"):
        rejection_resample(sample, gains, 1.0, 0.1, np.random.default_rng(0),
                           lambda k: np.zeros(k + 1, dtype=int))


# --- estimator behaviour ----------------------------------------------------------


@pytest.mark.parametrize("cls", [DualQuery, DQRS])
def test_deterministic_with_random_state(cls):
    a, _ = _fit(cls, epsilon=1.0)
    b, _ = _fit(cls, epsilon=1.0)
    c, _ = _fit(cls, epsilon=1.0, random_state=1)
    np.testing.assert_array_equal(a.records_, b.records_)
    assert a.ledger_.rho_spent == b.ledger_.rho_spent
    assert not (a.records_.shape == c.records_.shape and np.array_equal(a.records_, c.records_))


@pytest.mark.parametrize("cls", [DualQuery, DQRS])
def test_sample_columns_and_dtypes(cls):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({
        "colour": pd.Categorical(rng.choice(["red", "blue"], 200), categories=["red", "blue"]),
        "size": rng.integers(0, 3, 200),
    })
    y = pd.Series(rng.integers(0, 2, 200), name="label")
    workload = QueryWorkload(
        domain={"colour": ["red", "blue"], "size": 3, "label": 2}, k=2
    )
    est = cls(epsilon=1.0, workload=workload, solver="brute", random_state=0).fit(X, y)
    out = est.sample(50, random_state=0)
    assert list(out.columns) == ["colour", "size", "label"]
    assert out.shape == (50, 3)
    assert isinstance(out["colour"].dtype, pd.CategoricalDtype)
    assert list(out["colour"].cat.categories) == ["red", "blue"]
    assert out["size"].isin([0, 1, 2]).all()


@pytest.mark.parametrize("cls", [DualQuery, DQRS])
def test_high_budget_is_accurate(cls):
    # With a generous budget the synthetic records answer 2-way marginals well
    # (uniform random records would be off by about 0.17 here).
    X, workload = _data(n=400)
    est = cls(epsilon=20.0, workload=workload, solver="brute", random_state=0).fit(X)
    err = workload_error(est.workload_, est.workload_.encode(X), est.records_,
                         synthetic_weights=est.weights_)
    uniform = workload_error(est.workload_, est.workload_.encode(X),
                             np.array([[a, b, c] for a in range(3) for b in range(3)
                                       for c in range(2)]))
    assert err.max_error < 0.1
    assert err.max_error < uniform.max_error / 2


def test_one_oracle_call_per_round():
    est, _ = _fit(DualQuery, epsilon=1.0, samples_per_round=1, learning_rate=0.3)
    assert est.solver_stats_.calls == est.n_rounds_


@pytest.mark.parametrize("cls,params,match", [
    (DualQuery, {"samples_per_round": 0}, "samples_per_round"),
    (DQRS, {"gamma": "paper"}, "gamma"),
    (DQRS, {"rejection_accounting": "loose"}, "rejection_accounting"),
    (DQRS, {"tie_break": "random"}, "tie_break"),
    (DualQuery, {"learning_rate": -1.0}, "learning_rate"),
])
def test_parameter_validation(cls, params, match):
    X, workload = _data()
    with pytest.raises(ValueError, match=match):
        cls(workload=workload, solver="brute", **params).fit(X)


def test_dqrs_rounds_is_a_cap():
    est, _ = _fit(DQRS, epsilon=5.0, rounds=4)
    assert est.n_rounds_ == 4
    assert est.ledger_.rho_spent < est.rho_


# --- tie-breaking among best responses --------------------------------------------


class _RecordingBrute:
    """Brute-force oracle that keeps every (problem, record) pair it solves."""

    def __init__(self):
        self.solved = []

    def session(self, layout, random_state=None):
        inner = BruteForceOracle().session(layout, random_state)
        outer = self

        class Session:
            stats = inner.stats

            def solve(self, problem):
                result = inner.solve(problem)
                outer.solved.append((problem, np.asarray(result.record)))
                return result

            def close(self):
                inner.close()

        return Session()


@pytest.mark.parametrize("cls", [DualQuery, DQRS])
@pytest.mark.parametrize("tie_break", ["history", "uniform"])
def test_tie_break_keeps_an_exact_best_response(cls, tie_break):
    oracle = _RecordingBrute()
    est, _ = _fit(cls, epsilon=2.0, solver=oracle, tie_break=tie_break)
    layout = est.workload_.layout_
    every = np.array(list(itertools.product(*(range(b) for b in layout.block_sizes))))
    assert len(oracle.solved) == est.n_rounds_ > 5
    for problem, record in oracle.solved:
        # the largest linear gain of any record stays below one unit of count
        assert problem.linear.min() >= 0
        assert np.maximum.reduceat(problem.linear, layout.starts).sum() < 1.0
        counts = dataclasses.replace(problem, linear=np.zeros(layout.n_features))
        best = counts.objective(every).max()
        assert counts.objective(record[None, :])[0] == best


def test_tie_break_does_not_change_the_privacy_cost():
    costs = {}
    for tie_break in ("history", "uniform"):
        est, _ = _fit(DualQuery, epsilon=1.0, tie_break=tie_break)
        costs[tie_break] = [(e.mechanism, e.rho, e.count) for e in est.ledger_.entries]
    assert costs["history"] == costs["uniform"]


def test_sample_history_counts_positive_literals_with_decay():
    layout = OneHotLayout((3, 2))
    history = SampleHistory(layout, decay=0.5)
    history.add([[0, 3], [1, -1]], negated=[False, True], counts=[2, 5])
    assert history.counts.tolist() == [2.0, 0.0, 0.0, 2.0, 0.0]
    history.add([[1, 4]], negated=[False], counts=[1])
    assert history.counts.tolist() == [1.0, 1.0, 0.0, 1.0, 1.0]


def test_sample_history_target_distribution():
    layout = OneHotLayout((3, 2))
    history = SampleHistory(layout, decay=1.0)
    history.add([[0, 3], [1, 3]], negated=[False, False], counts=[6, 2])
    rng = np.random.default_rng(0)
    draws = np.array([history.draw_target(rng) for _ in range(6000)])
    assert (draws[:, :3].sum(axis=1) == 1).all() and (draws[:, 3:].sum(axis=1) == 1).all()
    # counts plus one pseudo-count per column spread uniformly over its values
    for block, weights in ((slice(0, 3), [6 + 1 / 3, 2 + 1 / 3, 1 / 3]),
                           (slice(3, 5), [8 + 1 / 2, 1 / 2])):
        observed = draws[:, block].sum(axis=0)
        expected = np.array(weights) / sum(weights) * len(draws)
        assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_history_tie_break_follows_dominant_values():
    # One dominant value per column that no query fixes when s = 1 and k = 2:
    # the history tie-break must put it in far more records than 1 in 12.
    rng = np.random.default_rng(1)
    n, size = 2000, 12
    X = pd.DataFrame({c: np.where(rng.random(n) < 0.9, 0, rng.integers(1, size, n))
                      for c in "abcd"})
    workload = QueryWorkload(domain={c: size for c in "abcd"}, k=2)
    share = {}
    for tie_break in ("history", "uniform"):
        est = DualQuery(epsilon=2.0, workload=workload, samples_per_round=1,
                        solver="highs", tie_break=tie_break, random_state=0).fit(X)
        share[tie_break] = (est.records_ == 0).mean()
    assert share["history"] > 0.5
    assert share["history"] > share["uniform"] + 0.2
