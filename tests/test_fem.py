"""FEM and sepFEM: accounting, distributions of the perturbations, sklearn conformance."""

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from neighbours import answer_sensitivity_by_brute_force
from scipy import stats
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_privsyn import FEM, QueryWorkload, SepFEM
from sklearn_privsyn.fem import default_rounds, default_samples, sepfem_noise_scale
from sklearn_privsyn.solvers import BruteForceOracle, get_oracle


def toy_frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(3, size=n)
    b = (a + rng.integers(2, size=n)) % 3
    c = rng.choice(["x", "y"], size=n, p=[0.7, 0.3])
    return pd.DataFrame({"a": a, "b": b, "c": c})


TOY_DOMAIN = {"a": 3, "b": 3, "c": ["x", "y"]}


def toy_workload(k=2):
    return QueryWorkload(domain=TOY_DOMAIN, k=k)


def fast(cls=FEM, **params):
    defaults = dict(
        epsilon=1.0, workload=toy_workload(), samples_per_round=4, solver="brute", random_state=0
    )
    defaults.update(params)
    return cls(**defaults)


class RecordingOracle:
    """Wraps an oracle and keeps every problem it is asked (to inspect what FEM sends)."""

    def __init__(self, inner="brute"):
        self.inner = inner
        self.problems = []

    def session(self, layout, random_state=None):
        session = get_oracle(self.inner).session(layout, random_state)
        outer = self

        class Recording:
            stats = session.stats

            def solve(self, problem):
                outer.problems.append(problem)
                return session.solve(problem)

            def close(self):
                session.close()

        return Recording()


def cks_epsilon_by_grid(rho, delta):
    """Independent CKS conversion: the smallest epsilon whose delta (infimum over a grid of
    alpha) is at most delta, by bisection."""
    alphas = 1 + np.geomspace(1e-4, 1e4, 200_000)

    def delta_of(eps):
        log = (
            (alphas - 1) * (alphas * rho - eps)
            - np.log(alphas - 1)
            + alphas * np.log1p(-1 / alphas)
        )
        return np.exp(log.min())

    lo, hi = 0.0, rho + 2 * math.sqrt(rho * math.log(1 / delta)) + 1
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if delta_of(mid) <= delta else (mid, hi)
    return hi


@pytest.mark.parametrize("cls", [FEM, SepFEM])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_ledger_matches_independent_formulas(cls, epsilon):
    X = toy_frame()
    n = len(X)
    est = fast(cls, epsilon=epsilon).fit(X)
    delta = 1 / n**2
    assert est.delta_ == pytest.approx(delta)
    # each round: one exponential mechanism of parameter eps0, at eps0^2 / 8 zCDP
    (entry,) = est.ledger_.entries
    assert entry.mechanism == "exponential_mechanism"
    assert entry.count == est.n_rounds_
    assert entry.rho == pytest.approx(est.round_epsilon_**2 / 8)
    assert est.ledger_.rho_spent == pytest.approx(est.n_rounds_ * est.round_epsilon_**2 / 8)
    assert est.ledger_.rho_spent <= est.rho_
    # the default schedule spends the whole budget in equal rounds
    assert est.ledger_.rho_spent == pytest.approx(est.rho_, rel=1e-9)
    # spent epsilon, by an independent CKS computation, is the target (never above)
    assert est.epsilon_ <= epsilon
    assert cks_epsilon_by_grid(est.ledger_.rho_spent, delta) == pytest.approx(epsilon, rel=1e-4)


def test_classic_conversion_budget_is_closed_form():
    X = toy_frame()
    delta = 1e-6
    est = fast(epsilon=0.5, delta=delta, conversion="classic").fit(X)
    log_inv = math.log(1 / delta)
    expected_rho = (math.sqrt(log_inv + 0.5) - math.sqrt(log_inv)) ** 2
    assert est.rho_ == pytest.approx(expected_rho, rel=1e-9)
    assert est.epsilon_ == pytest.approx(0.5, rel=1e-6)


def test_round_epsilon_sets_rounds_from_budget():
    X = toy_frame()
    est = fast(epsilon=1.0, round_epsilon=0.05).fit(X)
    assert est.n_rounds_ == math.floor(est.rho_ / (0.05**2 / 8))
    assert est.ledger_.rho_spent <= est.rho_


def test_round_epsilon_larger_than_budget_is_a_clear_error():
    with pytest.raises(ValueError, match="round_epsilon"):
        fast(epsilon=0.01, round_epsilon=5.0).fit(toy_frame())


def test_rounds_and_round_epsilon_are_exclusive():
    with pytest.raises(ValueError, match="at most one of rounds and round_epsilon"):
        fast(rounds=3, round_epsilon=0.1).fit(toy_frame())


def test_default_rounds_rule():
    assert default_rounds(48842, 0.0145, 2 * 458996) == round(48842 * math.sqrt(0.0145) / math.log(917992))
    assert default_rounds(10, 1e-12, 100) == 1
    # more data or more budget never means fewer rounds
    assert default_rounds(1000, 0.1, 50) <= default_rounds(2000, 0.1, 50) <= default_rounds(2000, 0.2, 50)


def test_fem_sends_the_oracle_exponential_noise_and_chosen_queries_only():
    X = toy_frame()
    oracle = RecordingOracle()
    est = fast(rounds=6, samples_per_round=30, noise_scale=2.0, solver=oracle).fit(X)
    problems = oracle.problems
    assert len(problems) == (est.n_rounds_ + 1) * 30
    noise = -np.concatenate([p.linear for p in problems])
    # sigma ~ Exponential(scale 2) coordinatewise
    assert stats.kstest(noise, stats.expon(scale=2.0).cdf).pvalue > 1e-3
    # query weights are multiplicities: q_0 plus one query per round so far
    for t in range(est.n_rounds_ + 1):
        for p in problems[t * 30 : (t + 1) * 30]:
            assert p.weights.sum() == t + 1
            assert np.all(p.query_ids < 2 * est.workload_.n_queries_)


def test_sepfem_perturbation_is_laplace_on_coordinates():
    X = toy_frame()
    oracle = RecordingOracle()
    fast(SepFEM, rounds=4, samples_per_round=40, noise_scale=1.5, solver=oracle).fit(X)
    noise = np.concatenate([p.linear for p in oracle.problems])
    assert stats.kstest(noise, stats.laplace(scale=1.5).cdf).pvalue > 1e-3


def test_noise_scale_default_is_multiple_of_sqrt_rounds():
    est = fast(rounds=16).fit(toy_frame())
    assert est.noise_scale_ == pytest.approx(0.16 * 4)


def test_sepfem_noise_default_is_its_own_rule_of_the_schema():
    est = fast(SepFEM, rounds=16).fit(toy_frame())
    d, log_records = 3 + 3 + 2, math.log(3 * 3 * 2)
    bound_optimum = math.sqrt(2 * math.sqrt(d) * 16 / (5 * log_records))
    assert est.noise_scale_ == pytest.approx(0.25 * bound_optimum)
    assert fast(SepFEM, rounds=16, noise_scale=0.7).fit(toy_frame()).noise_scale_ == 0.7


@pytest.mark.parametrize("rounds, sizes", [(46, [85, 9, 100, 2]), (425, [2] * 30), (7, [5, 1])])
def test_sepfem_noise_rule_minimises_the_separator_regret_bound(rounds, sizes):
    m, log_n = sum(sizes), sum(math.log(v) for v in sizes)

    def regret(b):  # 4 M / b + 10 sqrt(M) ln N b / T, M = one-hot width
        return 4 * m / b + 10 * math.sqrt(m) * log_n * b / rounds

    best = sepfem_noise_scale(rounds, sizes, scale=1.0)
    grid = best * np.linspace(0.5, 2.0, 61)
    assert regret(best) <= min(regret(b) for b in grid) + 1e-12
    assert sepfem_noise_scale(4 * rounds, sizes, scale=1.0) == pytest.approx(2 * best)
    assert sepfem_noise_scale(rounds, sizes) == pytest.approx(0.25 * best)


@pytest.mark.parametrize("rounds, expected", [(1, 200), (46, 200), (49, 200), (50, 197),
                                               (99, 100), (199, 50), (425, 50)])
def test_default_samples_fills_ten_thousand_samples_between_50_and_200(rounds, expected):
    assert default_samples(rounds) == expected
    assert expected == min(200, max(50, -(-10_000 // (rounds + 1))))


@pytest.mark.parametrize("given, expected", [(None, 200), (7, 7)])
def test_samples_per_round_default_follows_the_rule(given, expected):
    oracle = RecordingOracle()
    est = fast(rounds=2, samples_per_round=given, solver=oracle).fit(toy_frame())
    assert est.samples_per_round_ == expected
    assert len(oracle.problems) == 3 * expected  # T + 1 rounds of the data player
    assert est.samples_per_round == given  # the parameter is left as given


def test_fem_default_solver_is_the_hybrid_oracle():
    est = FEM(epsilon=1.0, workload=toy_workload(), rounds=3, samples_per_round=50,
              random_state=0).fit(toy_frame())
    assert est.solver == "hybrid" and SepFEM().solver == "hybrid"
    stats = est.solver_stats_
    # one call in 50 is checked, chosen by each call's seed: 200 calls, about 4 checks
    assert stats.calls == 200 and 0 < stats.n_checked < 15
    assert stats.n_heuristic + stats.n_optimal + stats.n_time_limit == 200


@pytest.mark.parametrize("keep, expected_rounds", [(1.0, 9), (0.5, 5), (0.1, 1)])
def test_keep_selects_the_later_rounds(keep, expected_rounds):
    est = fast(rounds=8, keep=keep, samples_per_round=3).fit(toy_frame())
    assert est.n_rounds_kept_ == expected_rounds
    assert est.records_.shape == (expected_rounds * 3, 3)
    np.testing.assert_allclose(est.weights_, 1 / len(est.records_))


def test_same_random_state_gives_identical_output():
    X = toy_frame()
    a = fast().fit(X)
    b = fast().fit(X)
    np.testing.assert_array_equal(a.records_, b.records_)
    pd.testing.assert_frame_equal(a.sample(50), b.sample(50))
    c = fast(random_state=1).fit(X)
    assert not np.array_equal(a.records_, c.records_)


def test_n_jobs_does_not_change_the_result():
    X = toy_frame()
    serial = fast(rounds=5).fit(X)
    parallel = fast(rounds=5, n_jobs=2).fit(X)
    np.testing.assert_array_equal(serial.records_, parallel.records_)
    assert parallel.solver_stats_.calls == serial.solver_stats_.calls


def test_fit_learns_the_data():
    # with a generous budget the synthetic 2-way marginals track the real ones
    X = toy_frame(n=2000)
    est = fast(epsilon=5.0, samples_per_round=10).fit(X)
    real = est.workload_.answer(X)
    synthetic = est.workload_.answer_codes(est.records_, est.weights_)
    uniform = est.workload_.answer_codes(
        np.array(np.meshgrid(range(3), range(3), range(2))).reshape(3, -1).T
    )
    assert np.abs(real - synthetic).max() < 0.5 * np.abs(real - uniform).max()


def test_sample_has_columns_dtypes_and_categories_of_x():
    X = toy_frame()
    est = fast().fit(X)
    out = est.sample(123)
    assert list(out.columns) == list(X.columns)
    assert len(out) == 123
    assert out.dtypes.equals(X.dtypes)
    assert set(out["c"]) <= {"x", "y"}


def test_sample_with_y_adds_the_target_column():
    X = toy_frame()
    y = pd.Series(np.where(X["a"] > 0, "hi", "lo"), name="label")
    workload = QueryWorkload(domain={**TOY_DOMAIN, "label": ["hi", "lo"]}, k=2)
    est = fast(workload=workload).fit(X, y)
    out = est.sample(20)
    assert list(out.columns) == ["a", "b", "c", "label"]
    assert est.n_features_in_ == 3


@pytest.mark.parametrize("n_samples", [0, -3])
def test_sample_rejects_non_positive_counts(n_samples):
    est = fast(rounds=2).fit(toy_frame())
    with pytest.raises(ValueError, match="n_samples must be at least 1"):
        est.sample(n_samples)


def test_sample_rejects_non_integer_counts():
    est = fast(rounds=2).fit(toy_frame())
    with pytest.raises(TypeError, match="n_samples must be an int"):
        est.sample(2.5)


def test_sample_before_fit_raises():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        fast().sample(3)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"delta": 0.0}, "delta"),
        ({"samples_per_round": 0}, "samples_per_round"),
        ({"keep": 0.0}, "keep"),
        ({"solver": "gurobi"}, "solver"),
    ],
)
def test_bad_parameters_are_named(params, match):
    with pytest.raises(ValueError, match=match):
        fast(**params).fit(toy_frame())


def test_fit_does_not_mutate_parameters_or_the_workload():
    workload = toy_workload()
    est = fast(workload=workload)
    before = est.get_params(deep=False)
    est.fit(toy_frame())
    assert not hasattr(workload, "layout_")
    after = est.get_params(deep=False)
    assert before.keys() == after.keys()
    assert all(before[k] is after[k] for k in before)


def test_clone_pipeline_and_pickle():
    X = toy_frame()
    est = clone(fast(rounds=3))
    pipe = Pipeline([("identity", FunctionTransformer()), ("fem", est)]).fit(X)
    assert pipe.named_steps["fem"].n_rounds_ == 3
    restored = pickle.loads(pickle.dumps(pipe.named_steps["fem"]))
    pd.testing.assert_frame_equal(restored.sample(10, random_state=3), pipe.named_steps["fem"].sample(10, random_state=3))


def test_estimator_holds_no_true_answers_or_real_rows():
    X = toy_frame()
    est = fast(rounds=4).fit(X)
    true = est.workload_.answer(X)
    for name, value in vars(est).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.shape == true.shape:
            assert not np.allclose(value, true), name
        if isinstance(value, (np.ndarray, pd.DataFrame)):
            assert len(value) != len(X) or name == "feature_names_in_", name


def test_verbose_progress_bar_reports_rounds(capsys):
    fast(rounds=3, verbose=1).fit(toy_frame())
    err = capsys.readouterr().err
    assert "FEM" in err and "4/4" in err


# scikit-learn conformance. A synthesizer is neither a predictor nor a transformer,
# so the checks that apply are the API ones (params, clone, pickle, input validation).
@parametrize_with_checks(
    [
        FEM(epsilon=1.0, rounds=2, samples_per_round=2, solver="heuristic", random_state=0),
        SepFEM(epsilon=1.0, rounds=2, samples_per_round=2, solver="heuristic", random_state=0),
    ],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check):
    import warnings

    from sklearn_privsyn import PrivacyLeakWarning

    with warnings.catch_warnings():
        # the checks feed arrays with no public domain: the leak warning is expected
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_measure_share_splits_the_budget_and_charges_a_gaussian():
    X = toy_frame()
    est = fast(epsilon=1.0, measure_share=0.2, rounds=6).fit(X)
    entries = {e.mechanism: e for e in est.ledger_.entries}
    assert set(entries) == {"exponential_mechanism", "gaussian_mechanism"}
    em, gauss = entries["exponential_mechanism"], entries["gaussian_mechanism"]
    assert em.count == 6
    assert em.count * em.rho == pytest.approx(0.8 * est.rho_, rel=1e-9)
    assert gauss.count == 1
    assert gauss.rho == pytest.approx(0.2 * est.rho_, rel=1e-9)
    assert est.ledger_.rho_spent <= est.rho_
    # the sensitivity sigma is calibrated to cover the L2 change of the measured
    # cells between any two neighbouring tables (brute force); the package's
    # per-marginal bound sqrt(sum_m min(2, c_m)) / n may be above it, never below
    Q = est.workload_.n_queries_
    cells = np.unique([i - Q if i >= Q else i for i in est.query_history_])
    brute = answer_sensitivity_by_brute_force(est.workload_, len(X), cells)
    calibrated = est.measurement_sigma_ * math.sqrt(2 * gauss.rho)
    assert brute <= calibrated * (1 + 1e-12)
    assert calibrated <= brute * math.sqrt(3)  # and not wastefully far above
    assert est.weights_.sum() == pytest.approx(1.0)
    assert est.weights_.std() > 0  # the records were reweighted


def test_measure_share_reweighting_moves_answers_towards_the_data():
    X = toy_frame(n=3000)
    plain = fast(epsilon=5.0, rounds=8, samples_per_round=10).fit(X)
    measured = fast(epsilon=5.0, rounds=8, samples_per_round=10, measure_share=0.3).fit(X)
    true = plain.workload_.answer(X)

    def error(est):
        return np.abs(true - est.workload_.answer_codes(est.records_, est.weights_)).max()

    assert error(measured) < error(plain)
