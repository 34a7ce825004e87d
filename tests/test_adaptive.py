"""AdaptiveProjection and the projection: exactness, accounting, noise, conformance."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from sklearn.utils.estimator_checks import parametrize_with_checks

import sklearn_privsyn.adaptive._fitting as fitting_module
import sklearn_privsyn.adaptive._projection as projection_module
import sklearn_privsyn.adaptive._schedules as schedules_module
import sklearn_privsyn.adaptive._selection as selection_module
from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.adaptive import (
    ALL_AT_ONCE_NOISE,
    adaptive_default_rounds,
    candidate_marginals,
    workload_redundancy,
)
from sklearn_privsyn.adaptive._rules import (
    HOLD_BOOST,
    HOLD_FALSE_CELLS,
    HOLD_PASSES,
    REDUNDANT_ALL_AT_ONCE_NOISE,
    SELECTION_NOISE,
    hold_threshold,
)
from sklearn_privsyn.exceptions import SolverWarning
from sklearn_privsyn.privacy import epsilon_to_rho, gaussian_mechanism
from sklearn_privsyn.adaptive._projection import _local_cells
from sklearn_privsyn.projection import (
    MarginalCells,
    Projection,
    checked_targets,
    project,
    zeroed_targets,
)
from sklearn_privsyn.simplex import project_to_simplex
from sklearn_privsyn.solvers import BruteForceOracle, HighsOracle

SIZES = {"a": 2, "b": 3, "c": 2}


def small_workload(X=None):
    X = X if X is not None else pd.DataFrame({c: [0] for c in SIZES})
    return QueryWorkload(domain=SIZES, k=2).fit(X)


def all_records(sizes):
    return np.array(list(itertools.product(*(range(s) for s in sizes))), dtype=np.intp)


def brute_force_projection(workload, noisy, variances, records=None):
    """The exact optimum over ``records`` (default: the whole domain), by SLSQP on their weights."""
    records = all_records(list(SIZES.values())) if records is None else records
    A = np.stack([workload.answer_codes(r[None, :]) for r in records], axis=1)  # cells x records
    scale = np.max(1.0 / np.asarray(variances))  # SLSQP's line search wants f of order 1
    precision = 1.0 / np.asarray(variances) / scale

    def f(w):
        r = A @ w - noisy
        return 0.5 * np.sum(precision * r * r), A.T @ (precision * r)

    w0 = np.full(len(records), 1.0 / len(records))
    res = optimize.minimize(f, w0, jac=True, method="SLSQP", bounds=[(0, 1)] * len(w0),
                            constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1,
                                          "jac": lambda w: np.ones_like(w)}],
                            options={"ftol": 1e-15, "maxiter": 1000})
    assert res.success
    return A @ res.x, res.fun * scale


def noisy_answers(workload, seed, variance_range):
    """Answers of 30 random records plus N(0, 0.1**2) noise, and variances drawn in a range."""
    rng = np.random.default_rng(seed)
    Q = workload.n_queries_
    noisy = workload.answer_codes(rng.integers(0, [2, 3, 2], size=(30, 3))) + rng.normal(0, 0.1, Q)
    return noisy, rng.uniform(*variance_range, Q)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("with_oracle", [True, False])
def test_projection_equals_the_brute_force_optimum(seed, with_oracle):
    workload = small_workload()
    noisy, variances = noisy_answers(workload, seed, (0.5, 2.0))
    variances[workload.marginal_offsets_[1]:workload.marginal_offsets_[2]] = np.inf  # unmeasured
    session = BruteForceOracle().session(workload.layout_, 0) if with_oracle else None
    result = project(workload, noisy, variances, session=session, tol=1e-10, max_iter=500,
                     random_state=seed)
    answers = workload.answer_codes(result.records, result.weights)
    finite = np.isfinite(variances)
    expected_answers, expected_value = brute_force_projection(
        workload, np.where(finite, noisy, 0), np.where(finite, variances, np.inf))
    assert result.objective == pytest.approx(expected_value, rel=1e-6, abs=1e-9)
    np.testing.assert_allclose(answers[finite], expected_answers[finite], atol=1e-4)
    assert result.weights.sum() == pytest.approx(1.0)
    assert np.all(result.weights > 0)
    assert len(np.unique(result.records, axis=0)) == len(result.records)
    if with_oracle:
        assert result.gap_certified


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("z", [1.0, 2.0])
def test_zero_test_refit_is_the_optimum_on_the_support_with_small_answers_zeroed(seed, z):
    workload = small_workload()
    noisy, variances = noisy_answers(workload, seed, (0.005, 0.02))
    projection = Projection(workload, noisy, variances, random_state=seed)
    projection.run(tol=1e-10, max_iter=500)
    support = projection.records.copy()
    projection.refit_to_significant(z, qp_iter=20000)
    zeroed = np.where(noisy < z * np.sqrt(variances), 0.0, noisy)
    assert np.any(zeroed != noisy) and np.any(zeroed > 0)
    expected_answers, expected_value = brute_force_projection(workload, zeroed, variances,
                                                              records=support)
    np.testing.assert_allclose(projection.answers(), expected_answers, atol=1e-4)
    difference = projection.answers() - zeroed
    assert 0.5 * np.sum(difference**2 / variances) == pytest.approx(expected_value, rel=1e-6)
    assert len(projection.records) <= len(support)
    assert projection.weights.sum() == pytest.approx(1.0)


def _next_held(answers, noisy, variances, z, touched, held, room):
    """The hold's rule, written out: every cell outside ``z`` sd, if ``room`` holds them."""
    outside = touched & ~held & (np.abs(answers - noisy) > z * np.sqrt(variances))
    return held | outside if np.count_nonzero(outside) <= room else held


def _deviations(projection, noisy, variances):
    """Each touched cell's distance to its answer in sd, largest first (a small fit)."""
    answers = projection.answers()
    return np.sort((np.abs(answers - noisy) / np.sqrt(variances))[answers > 0])[::-1]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("share", [0.0, 0.5])
def test_hold_refit_is_the_optimum_on_the_support_with_the_missed_cells_held(
        seed, share, monkeypatch):
    records_per_cell = 1
    monkeypatch.setattr(projection_module, "HOLD_RECORDS_PER_CELL", records_per_cell)
    workload = small_workload()
    noisy, variances = noisy_answers(workload, seed, (0.005, 0.02))
    projection = Projection(workload, noisy, variances, random_state=seed)
    projection.run(tol=1e-10, max_iter=500)
    support = projection.records.copy()
    touched = np.zeros(workload.n_queries_, dtype=bool)
    for record in support:
        touched |= workload.answer_codes(record[None, :]) > 0
    # z between the k-th and (k+1)-th furthest cells: k = 1, or half the records
    k = max(1, int(share * len(support)))
    deviations = _deviations(projection, noisy, variances)
    z = 0.5 * (deviations[k - 1] + deviations[k])
    cap = len(support) // records_per_cell
    # the passes, independently: the cells outside z sd are held (variance /
    # HOLD_BOOST) while they are one per records_per_cell records at most, the
    # optimum on the support re-found, the cells then outside added
    none = np.zeros(workload.n_queries_, dtype=bool)
    held = _next_held(projection.answers(), noisy, variances, z, touched, none, cap)
    assert held.any() and not held.all()
    for _ in range(HOLD_PASSES):
        expected, _ = brute_force_projection(
            workload, noisy, np.where(held, variances / HOLD_BOOST, variances), records=support)
        more = _next_held(expected, noisy, variances, z, touched, held,
                          cap - np.count_nonzero(held))
        if np.array_equal(more, held):
            break
        held = more
    assert np.count_nonzero(held) <= cap
    projection.hold_to_measurements(z, qp_iter=20000)
    np.testing.assert_allclose(projection.answers(), expected, atol=1e-4)
    assert projection.weights.sum() == pytest.approx(1.0)
    assert len(projection.records) <= len(support)


def test_hold_moves_nothing_when_every_cell_is_within_its_noise(monkeypatch):
    monkeypatch.setattr(projection_module, "HOLD_RECORDS_PER_CELL", 1)
    workload = small_workload()
    noisy, variances = noisy_answers(workload, 0, (0.005, 0.02))
    projection = Projection(workload, noisy, variances, random_state=0)
    projection.run(tol=1e-10, max_iter=500)
    records, weights = projection.records.copy(), projection.weights.copy()
    answers = projection.answers()
    furthest = np.max(np.abs(answers - noisy)[answers > 0] / np.sqrt(variances)[answers > 0])
    projection.hold_to_measurements(furthest + 1e-6)
    np.testing.assert_array_equal(projection.records, records)
    np.testing.assert_array_equal(projection.weights, weights)
    projection.hold_to_measurements(furthest - 1e-6)  # now the furthest cell is held
    assert not np.array_equal(projection.answers(), answers)


@pytest.mark.parametrize("seed", range(3))
def test_hold_holds_nothing_when_more_cells_are_off_than_the_records_can_hold(seed, monkeypatch):
    workload = small_workload()
    noisy, variances = noisy_answers(workload, seed, (0.005, 0.02))
    projection = Projection(workload, noisy, variances, random_state=seed)
    projection.run(tol=1e-10, max_iter=500)
    records, weights = projection.records.copy(), projection.weights.copy()
    deviations = _deviations(projection, noisy, variances)
    z = 0.5 * (deviations[1] + deviations[2])  # two cells off, room for one
    monkeypatch.setattr(projection_module, "HOLD_RECORDS_PER_CELL", len(records))
    projection.hold_to_measurements(z)
    np.testing.assert_array_equal(projection.records, records)
    np.testing.assert_array_equal(projection.weights, weights)
    monkeypatch.setattr(projection_module, "HOLD_RECORDS_PER_CELL", len(records) // 2)
    projection.hold_to_measurements(z)  # room for both
    assert not np.array_equal(projection.weights, weights)


@pytest.mark.parametrize("rounds, held", [(1, True), (3, False)])
def test_only_records_fitted_to_every_marginal_at_once_hold_the_cells_they_miss(
        rounds, held, monkeypatch):
    seen = []

    class Recording(Projection):
        def run(self, **kwargs):
            seen.append(kwargs.get("hold"))
            return super().run(**kwargs)

    monkeypatch.setattr(fitting_module, "Projection", Recording)
    est = fit(rounds=rounds)
    assert seen
    if held:
        assert est.n_rounds_ == 1
        assert seen[-1] == pytest.approx(stats.norm.isf(0.5 / est.workload_.n_queries_))
    else:
        assert all(hold is None for hold in seen)


@pytest.mark.parametrize("seed", range(3))
def test_with_a_hold_the_gap_must_also_fall_below_one_held_cell_per_measured_marginal(seed):
    # tol * value alone stops where the noise is most of the objective; with ``hold=z``
    # the gap must also reach z**2 / 2 (one cell z sd off) times the measured marginals
    workload = small_workload()
    noisy, variances = noisy_answers(workload, seed, (0.005, 0.02))
    offsets = workload.marginal_offsets_
    variances[offsets[1]:offsets[2]] = np.inf  # one marginal unmeasured
    n_measured = len(offsets) - 2
    tol = 1e9  # the relative gap alone stops at once

    def run(**kwargs):
        seen = []
        session = BruteForceOracle().session(workload.layout_, 0)
        result = Projection(workload, noisy, variances, session=session,
                            random_state=seed).run(tol=tol, max_iter=500, progress=lambda it,
                                                   value, gap: seen.append(gap), **kwargs)
        return result, seen

    plain, seen = run()
    assert plain.stop_reason == "gap" and plain.n_iter == 1
    cap = 0.1 * seen[0]
    held, seen = run(hold=np.sqrt(2 * cap / n_measured))
    assert held.stop_reason == "gap"
    assert seen[-1] <= cap and all(gap > cap for gap in seen[:-1])
    assert held.n_iter > plain.n_iter


def test_a_continuation_with_more_cells_shares_the_oracle_session():
    # the calibration's continuation adds 1-way cells after the workload's on the fit's
    # session: a cell's negation and a new cell must never share a query id
    workload = small_workload()
    Q = workload.n_queries_
    session = HighsOracle().session(workload.layout_, 0)
    noisy, variances = noisy_answers(workload, 0, (0.5, 2.0))
    first = Projection(workload, noisy, variances, session=session, oracle_cells=10**6)
    first._oracle_record(np.ones(Q))  # every cell's negation
    n_extra = SIZES["a"]
    later = Projection(workload, np.concatenate([noisy, np.full(n_extra, 0.5)]),
                       np.concatenate([variances, np.ones(n_extra)]), extra_marginals=((0,),),
                       session=session, oracle_cells=10**6)
    residual = np.concatenate([np.ones(Q), -np.ones(n_extra)])  # the new cells themselves
    record, certified = later._oracle_record(residual)
    assert record.shape == (1, 3) and certified


@pytest.mark.parametrize("n_cells", [1, 64, 5_892_396])
def test_hold_threshold_expects_one_cell_beyond_it_in_n(n_cells):
    z = hold_threshold(n_cells)
    assert z == pytest.approx(stats.norm.isf(0.5 / n_cells), rel=1e-9)
    assert 2 * n_cells * stats.norm.sf(z) == pytest.approx(HOLD_FALSE_CELLS)


@pytest.mark.parametrize("seed", range(3))
def test_projection_with_few_inner_steps_and_a_final_polish_reaches_the_optimum(seed):
    # a few accelerated steps per Frank-Wolfe iteration (the default at width), then
    # the full re-weighting: the same optimum as the brute force
    workload = small_workload()
    noisy, variances = noisy_answers(workload, seed, (0.5, 2.0))
    result = project(workload, noisy, variances, tol=1e-10, max_iter=500, random_state=seed,
                     inner_qp_iter=5)
    expected_answers, expected_value = brute_force_projection(workload, noisy, variances)
    assert result.objective == pytest.approx(expected_value, rel=1e-6, abs=1e-9)
    np.testing.assert_allclose(workload.answer_codes(result.records, result.weights),
                               expected_answers, atol=1e-4)


@pytest.mark.parametrize("n_cells", [40, 4000])
def test_local_cell_numbering_is_numpy_unique(n_cells):
    # the marker index (few cells) and the binary search (many cells) both
    rng = np.random.default_rng(0)
    cells = rng.integers(0, 40, size=(7, 3))
    used, local = _local_cells(cells, n_cells)
    expected_used, expected_local = np.unique(cells, return_inverse=True)
    np.testing.assert_array_equal(used, expected_used)
    np.testing.assert_array_equal(local, expected_local.reshape(cells.shape))


def test_one_variance_for_every_cell_is_a_view_not_a_vector():
    noisy = np.array([0.5, -0.1, 0.02, 0.3])
    precision, target = checked_targets(noisy, 0.01, 4)
    assert precision.strides == (0,)  # no vector of precisions
    assert np.shares_memory(target, noisy)  # no copy of the answers
    full_precision, full_target = checked_targets(noisy, np.full(4, 0.01), 4)
    np.testing.assert_array_equal(precision, full_precision)
    np.testing.assert_array_equal(target, full_target)
    np.testing.assert_array_equal(zeroed_targets(target, precision, 2.0),
                                  zeroed_targets(full_target, full_precision, 2.0))
    precision, target = checked_targets(noisy, np.inf, 4)  # nothing measured
    assert not precision.any() and not target.any()


def test_projection_of_exact_answers_reproduces_them():
    X = pd.DataFrame({"a": [0, 1, 1, 0, 1], "b": [2, 0, 1, 1, 1], "c": [1, 1, 0, 0, 0]})
    workload = small_workload(X)
    true = workload.answer(X)
    result = project(workload, true, 1e-4, tol=1e-12, max_iter=300, random_state=0)
    np.testing.assert_allclose(workload.answer_codes(result.records, result.weights), true,
                               atol=1e-5)


def test_marginal_cells_match_the_workload_numbering():
    workload = QueryWorkload(domain={"a": 3, "b": 4, "c": 2, "d": 5}, k=3).fit(
        pd.DataFrame({c: [0] for c in "abcd"}))
    records = np.random.default_rng(0).integers(0, [3, 4, 2, 5], size=(50, 4))
    index = MarginalCells(workload)
    cells = index.cells(records)
    for i, record in enumerate(records):
        one = np.flatnonzero(workload.answer_codes(record[None, :]))
        np.testing.assert_array_equal(np.sort(cells[i]), one)
    weights = np.random.default_rng(1).uniform(size=50)
    np.testing.assert_allclose(index.answers(records, weights / weights.sum()),
                               workload.answer_codes(records, weights))


@pytest.mark.parametrize("bad, match", [
    (np.zeros(3), "variances must be positive"),
    (np.full(3, np.nan), "variances must be positive"),
])
def test_projection_rejects_bad_variances(bad, match):
    workload = small_workload()
    variances = np.ones(workload.n_queries_)
    variances[:3] = bad
    with pytest.raises(ValueError, match=match):
        project(workload, np.zeros(workload.n_queries_), variances)


# ---------------------------------------------------------------------- the estimator


def data(n=400, seed=0, n_cols=5, size=4):
    rng = np.random.default_rng(seed)
    z = rng.integers(2, size=n)
    return pd.DataFrame({f"x{j}": (z * (j + 1) + rng.integers(size - 1, size=n)) % size
                         for j in range(n_cols)})


def domain_workload(n_cols=5, size=4, k=3):
    return QueryWorkload(domain={f"x{j}": size for j in range(n_cols)}, k=k)


def fit(X=None, **params):
    X = data() if X is None else X
    defaults = dict(epsilon=1.0, workload=domain_workload(), solver="heuristic", max_iter=20,
                    representation="records", random_state=0)
    return AdaptiveProjection(**{**defaults, **params}).fit(X)


class Recorder:
    def __init__(self, func):
        self.func, self.calls = func, []

    def __call__(self, *args, **kwargs):
        self.calls.append(args)
        return self.func(*args, **kwargs)


def totals(est):
    frame = est.ledger_.to_frame()
    return {m: (g["count"].sum(), g["total_rho"].sum()) for m, g in frame.groupby("mechanism")}


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_measure_everything_runs_and_charges_one_gaussian(epsilon, monkeypatch):
    X = data()
    gauss = Recorder(schedules_module.gaussian_mechanism)
    monkeypatch.setattr(schedules_module, "gaussian_mechanism", gauss)
    est = fit(X, epsilon=epsilon, rounds=1)
    n, M = len(X), len(est.workload_.marginals_)
    rho = epsilon_to_rho(epsilon, 1 / n**2)
    (values, sensitivity, sigma, _), = gauss.calls
    np.testing.assert_allclose(values, est.workload_.answer(X))
    assert sensitivity == pytest.approx(math.sqrt(2 * M) / n, rel=1e-12)
    assert sigma == pytest.approx(math.sqrt(M / rho) / n, rel=1e-8)
    assert totals(est) == {"gaussian_mechanism": (1, pytest.approx(rho, rel=1e-8))}
    assert est.ledger_.rho_spent <= est.rho_
    assert est.epsilon_ <= epsilon
    np.testing.assert_allclose(est.measurement_variances_, sigma**2)
    assert est.measured_marginals_ == list(est.workload_.marginal_set_.marginals)


def test_replace_one_sensitivity_of_all_marginals_is_sqrt_2m_over_n():
    X = data(n=12, n_cols=3, size=3)
    workload = domain_workload(n_cols=3, size=3, k=2).fit(X)
    records = workload.encode(X)
    base = workload.answer_codes(records)
    worst = 0.0
    for i in range(len(records)):
        for value in itertools.product(range(3), repeat=3):
            other = records.copy()
            other[i] = value
            worst = max(worst, np.linalg.norm(workload.answer_codes(other) - base))
    assert worst == pytest.approx(math.sqrt(2 * len(workload.marginals_)) / len(X))


@pytest.mark.parametrize("rounds, share, representation",
                         [(3, 0.1, "records"), (5, 0.4, "graphical"), (40, 0.1, "graphical")])
def test_adaptive_selection_runs_exactly_the_mechanisms_it_charges(rounds, share, representation,
                                                                  monkeypatch):
    X = data()
    select = Recorder(selection_module.exponential_mechanism)
    gauss = Recorder(selection_module.gaussian_mechanism)
    monkeypatch.setattr(selection_module, "exponential_mechanism", select)
    monkeypatch.setattr(selection_module, "gaussian_mechanism", gauss)
    est = fit(X, rounds=rounds, selection_share=share, representation=representation)
    n, d = len(X), X.shape[1]
    rho = epsilon_to_rho(1.0, 1 / n**2)
    candidates = candidate_marginals(est.workload_.marginal_set_.marginals,
                                     est.workload_.layout_.block_sizes)
    codes = est.workload_.encode(X)
    # the 1-way marginals first, at a planned round's noise (d of the d + T rounds)
    (values, sensitivity, sigma_1, _), *measured = gauss.calls
    one_way = np.concatenate([np.bincount(codes[:, a], minlength=size) / n
                              for a, size in enumerate(est.workload_.layout_.block_sizes)])
    np.testing.assert_allclose(values, one_way)
    assert sensitivity == pytest.approx(math.sqrt(2 * d) / n)
    planned = rho * (1 - 1e-9) / (d + rounds)
    sigma_planned = math.sqrt(1 / ((1 - share) * planned)) / n
    assert sigma_1 == pytest.approx(min(sigma_planned, math.sqrt(d / (rho * (1 - 1e-9))) / n)
                                    if d / (n * sigma_planned) ** 2 > rho else sigma_planned)
    # then one selection and one measurement a round
    assert len(select.calls) == len(measured) == est.n_selection_rounds_ >= 1
    expected = d / (n * sigma_1) ** 2
    for (scores, epsilon, sensitivity, _), (values, g_sens, g_sigma, _), m in zip(
            select.calls, measured, est.measured_marginals_):
        assert len(scores) <= len(candidates.marginals)
        assert sensitivity == pytest.approx(2 * candidates.weights.max() / n)
        rows = pd.DataFrame(codes[:, list(m)])
        true = QueryWorkload(domain={c: s for c, s in zip(rows.columns, [
            est.workload_.layout_.block_sizes[a] for a in m])}, marginals=[tuple(rows.columns)]
            ).fit(rows).answer(rows)
        np.testing.assert_allclose(values, true)  # the true answers, in the marginal's order
        assert g_sens == pytest.approx(math.sqrt(2) / n)
        expected += epsilon**2 / 8 + 1 / (n * g_sigma) ** 2  # independent formulas
    assert est.ledger_.rho_spent == pytest.approx(expected, rel=1e-9)
    assert est.ledger_.rho_spent <= est.rho_
    assert est.ledger_.rho_spent == pytest.approx(rho, rel=1e-8)  # the last round spends the rest
    # every measurement kept, repeated ones averaged by inverse variance
    assert set(est.marginal_measurements_) == (
        {(a,) for a in range(d)} | set(est.measured_marginals_))
    for marginal, (_, variance) in est.marginal_measurements_.items():
        sigmas = [g[2] for g, m in zip(measured, est.measured_marginals_) if m == marginal]
        if len(marginal) == 1:
            sigmas.append(sigma_1)
        assert 1 / variance == pytest.approx(sum(1 / s**2 for s in sigmas))
    assert est.representation_ == representation


@pytest.mark.parametrize("representation", ["auto", "records"])
def test_rounds_zero_measures_only_the_one_way_marginals_with_the_whole_budget(representation,
                                                                               monkeypatch):
    X = data()
    select = Recorder(selection_module.exponential_mechanism)
    gauss = Recorder(schedules_module.gaussian_mechanism)
    monkeypatch.setattr(selection_module, "exponential_mechanism", select)
    monkeypatch.setattr(schedules_module, "gaussian_mechanism", gauss)
    est = fit(X, rounds=0, representation=representation)
    n, d = len(X), X.shape[1]
    rho = epsilon_to_rho(1.0, 1 / n**2)
    [(values, sensitivity, sigma, _)] = gauss.calls
    assert select.calls == []
    assert len(values) == sum(est.workload_.layout_.block_sizes)
    assert sensitivity == pytest.approx(math.sqrt(2 * d) / n)
    assert sigma == pytest.approx(math.sqrt(2 * d) / n / math.sqrt(2 * rho), rel=1e-8)
    assert totals(est) == {"gaussian_mechanism": (1, pytest.approx(rho, rel=1e-8))}
    assert est.ledger_.rho_spent <= est.rho_
    assert np.all(np.isnan(est.measurements_)) and len(est.measured_marginals_) == 0
    assert est.n_rounds_ == 0
    if representation == "auto":  # the independence model: one product distribution
        assert est.representation_ == "products"
        assert est.component_weights_.shape == (1,)
    assert est.sample(50).shape == (50, d)


@pytest.mark.parametrize("epsilon", [0.02, 1.0, 50.0])
def test_rounds_zero_fits_each_column_to_its_answers_mixed_with_uniform(epsilon):
    # the independence model's tables are the noisy answers, each column mixed with uniform
    # by its recorded factor: uniform where the noise swamps the answers, as measured where not
    est = fit(rounds=0, representation="products", epsilon=epsilon)
    sizes = est.workload_.layout_.block_sizes
    noisy, factors = est.one_way_measurements_, est.one_way_shrinkage_
    assert factors.shape == (len(sizes),) and np.all((factors >= 0) & (factors <= 1))
    start = np.concatenate([[0], np.cumsum(sizes)])
    for j, table in enumerate(est.component_tables_):
        uniform = np.full(sizes[j], 1 / sizes[j])
        projected = project_to_simplex(noisy[start[j]:start[j + 1]])
        expected = uniform + factors[j] * (projected - uniform)
        np.testing.assert_allclose(table[0], expected, atol=2e-3)
    if epsilon == 50.0:  # little noise: the answers as measured
        assert factors.min() > 0.99
    if epsilon == 0.02:  # noise sd above the columns' mass: mostly uniform
        assert factors.mean() < 0.5


def test_selection_score_sensitivity_is_two_over_n():
    # the L1 error of a marginal against fixed synthetic answers moves by at most 2/n
    X = data(n=10, n_cols=3, size=3)
    workload = domain_workload(n_cols=3, size=3, k=2).fit(X)
    records = workload.encode(X)
    synthetic = np.random.default_rng(0).dirichlet(np.ones(workload.n_queries_))
    offsets = workload.marginal_offsets_[:-1]

    def l1(recs):
        return np.add.reduceat(np.abs(workload.answer_codes(recs) - synthetic), offsets)

    base, worst = l1(records), 0.0
    for i in range(len(records)):
        for value in itertools.product(range(3), repeat=3):
            other = records.copy()
            other[i] = value
            worst = max(worst, np.abs(l1(other) - base).max())
    assert worst <= 2 / len(X) + 1e-12
    assert worst > 1 / len(X)


@pytest.mark.parametrize("rounds", [1, 60])
def test_measurement_noise_is_gaussian_with_the_charged_sigma(rounds, monkeypatch):
    outputs = []

    def recording(values, sensitivity, sigma, rng):
        noisy = gaussian_mechanism(values, sensitivity, sigma, rng)
        outputs.append((np.asarray(values), noisy, sigma))
        return noisy

    monkeypatch.setattr(schedules_module, "gaussian_mechanism", recording)
    X = data(n=500, n_cols=6, size=5)
    monkeypatch.setattr(selection_module, "gaussian_mechanism", recording)
    X = data(n=500, n_cols=6, size=5)
    fits = 1 if rounds == 1 else 16  # a few measurements a fit with selection: several fits
    for seed in range(fits):
        est = fit(X, workload=domain_workload(n_cols=6, size=5), rounds=rounds, epsilon=2.0,
                  max_iter=4, representation="graphical" if rounds > 1 else "records",
                  random_state=seed)
    z = np.concatenate([(noisy - values) / sigma for values, noisy, sigma in outputs])
    assert len(z) >= 5 * 125
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # the test can fail: noise 20% off the charged sigma is caught
    assert stats.kstest(z / 1.2, "norm").pvalue < 1e-3
    if rounds == 1:  # one measurement a cell: the recorded one
        np.testing.assert_allclose(est.measurements_, outputs[0][1], rtol=1e-12)


@pytest.mark.parametrize("n, epsilon, n_marginals, expected", [
    (48842, 1.0, 64, 1),    # sigma_all 0.0014: everything at once
    (48842, 0.1, 64, 1),    # 0.013
    (48842, 0.1, 278, 0),   # 0.026: without the columns, the 1-way marginals only
    (7000, 0.1, 64, 0),     # 0.077
    (1000, 1.0, 64, 0),     # 0.051
    (1000, 0.1, 64, 0),     # 0.45
])
def test_default_rounds_rule_without_columns_is_all_at_once_or_one_way(n, epsilon, n_marginals,
                                                                         expected):
    rho = epsilon_to_rho(epsilon, float(n) ** -2)
    sigma_all = math.sqrt(n_marginals / rho) / n
    assert (sigma_all <= ALL_AT_ONCE_NOISE) == bool(expected)
    assert adaptive_default_rounds(n, rho, n_marginals) == expected


@pytest.mark.parametrize("n, epsilon, M, d, redundancy, expected", [
    (48842, 0.1, 64, 14, 2.1, 1),     # ADULT's paper workload: sparse, sigma_all 0.013
    (48842, 1.0, 64, 14, 2.1, 1),
    (48842, 1.0, 455, 15, 13.0, 225),  # raw Adult, every 3-way: redundant, 0.0037; capped 15 d
    (10000, 1.0, 1239, 54, 2.6, 447),  # 54 columns, a random 1,239 3-way: sparse but 0.027
    (28155, 1.0, 35, 7, 5.0, 1),      # 0.0017: at once even when redundant
    (50000, 1.0, 4096, 80, 3.9, 1),   # 80 columns: a wide table's workload counts as sparse
    (50000, 1.0, 4096, 30, 3.9, 450),  # the same workload on 30 columns is redundant: 15 d
    (3000, 1.0, 165, 11, 9.0, 42),    # 0.030: floor(0.9 rho (3000 * 0.018)**2) - 11 rounds
    (3000, 0.1, 165, 11, 9.0, 0),     # too thin for two rounds: the 1-way marginals only
    (1000, 0.1, 64, 14, 2.1, 0),
])
def test_default_rounds_rule(n, epsilon, M, d, redundancy, expected):
    rho = epsilon_to_rho(epsilon, float(n) ** -2)
    assert adaptive_default_rounds(n, rho, M, d, redundancy) == expected
    if expected >= 2:
        units = math.floor(0.9 * rho * (n * SELECTION_NOISE) ** 2)
        assert expected == min(units - d, 15 * d)


def test_default_rounds_regimes_follow_the_budget():
    n, M, d = 7000, 120, 10
    for redundancy, limit in [(2.0, ALL_AT_ONCE_NOISE), (8.0, REDUNDANT_ALL_AT_ONCE_NOISE)]:
        rho_at = M / (n * limit) ** 2  # sigma_all exactly at the threshold
        assert adaptive_default_rounds(n, rho_at * (1 + 1e-9), M, d, redundancy) == 1
        assert adaptive_default_rounds(n, rho_at * (1 - 1e-6), M, d, redundancy) != 1
        rhos = np.geomspace(1e-6, 100.0, 200)
        rounds = [adaptive_default_rounds(n, r, M, d, redundancy) for r in rhos]
        # 1-way only, then adaptive selection with more rounds, then everything at once
        regime = [0 if t == 0 else (2 if t == 1 else 1) for t in rounds]
        assert np.all(np.diff(regime) >= 0) and regime[0] == 0 and regime[-1] == 2
        selected = [t for t in rounds if t >= 2]
        assert selected and np.all(np.diff(selected) >= 0) and max(selected) <= 15 * d


def test_workload_redundancy_counts_marginals_per_pair():
    every = list(itertools.combinations(range(6), 3))
    assert workload_redundancy(every) == pytest.approx(4.0)  # d - 2
    assert workload_redundancy([(0, 1), (2, 3)]) == 1.0
    assert workload_redundancy([(0,), (1,)]) == 0.0


def test_default_fit_takes_the_rounds_from_the_rule():
    X = data()
    for epsilon, expected in [(50.0, 1), (0.05, 0)]:
        est = fit(X, epsilon=epsilon, max_iter=5)
        M = len(est.workload_.marginals_)
        assert est.n_rounds_ == adaptive_default_rounds(len(X), est.rho_, M) == expected
    # a redundant workload (every 3-way marginal of 6 columns) at a moderate budget selects
    X = data(n=2000, n_cols=6)
    workload = domain_workload(n_cols=6)
    est = AdaptiveProjection(epsilon=1.0, workload=workload, max_iter=5, solver="heuristic",
                             random_state=0).fit(X)
    expected = adaptive_default_rounds(len(X), est.rho_, 20, 6, 4.0)
    assert est.n_rounds_ == expected >= 2
    assert est.representation_ == "graphical" and est.n_selection_rounds_ >= 1


@pytest.mark.parametrize("representation", ["records", "products"])
def test_accuracy_beats_the_noise_on_a_structured_table(representation):
    X = data(n=3000)
    est = fit(X, epsilon=1.0, rounds=1, max_iter=60, representation=representation)
    true = est.workload_.answer(X)
    noise = np.abs(est.measurements_ - true).max()
    fitted = np.abs(est.fitted_answers() - true).max()
    assert fitted < noise
    sample = est.workload_.answer(est.sample(3000))
    assert np.abs(sample - true).max() < noise


@pytest.mark.parametrize("representation", ["records", "graphical"])
def test_same_seed_same_output_and_other_seed_differs(representation):
    a, b = (fit(rounds=3, representation=representation) for _ in range(2))
    if representation == "records":
        np.testing.assert_array_equal(a.records_, b.records_)
        np.testing.assert_array_equal(a.weights_, b.weights_)
    else:
        for ta, tb in zip(a.graphical_model_.theta, b.graphical_model_.theta):
            np.testing.assert_array_equal(ta, tb)
    assert a.measured_marginals_ == b.measured_marginals_
    for m, (y, v) in a.marginal_measurements_.items():
        np.testing.assert_array_equal(y, b.marginal_measurements_[m][0])
    pd.testing.assert_frame_equal(a.sample(100), b.sample(100))
    c = fit(rounds=3, random_state=1, representation=representation)
    assert not np.array_equal(a.marginal_measurements_[(0,)][0], c.marginal_measurements_[(0,)][0])


@pytest.mark.parametrize("rounds", [1, 3])
def test_solver_faults_change_accuracy_never_the_ledger(rounds):
    class Broken:
        def session(self, layout, random_state=None):
            class Session:
                def solve(self, problem):
                    raise RuntimeError("back-end crashed")

                def close(self):
                    pass

            return Session()

    reference = fit(solver="brute", rounds=rounds)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        broken = fit(solver=Broken(), rounds=rounds)
    assert broken.solver_stats_.n_fallback == broken.solver_stats_.calls > 0
    assert any(issubclass(w.category, SolverWarning) for w in caught)
    if rounds == 1:  # adaptive selections depend on the synthetic data, so on the oracle
        assert broken.ledger_.entries == reference.ledger_.entries
        np.testing.assert_array_equal(broken.measurements_, reference.measurements_)
    assert broken.ledger_.rho_spent == pytest.approx(reference.ledger_.rho_spent)
    assert broken.ledger_.rho_spent <= broken.rho_
    assert broken.weights_.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("rounds", [1, 3])
def test_zero_test_is_post_processing_the_ledger_and_measurements_do_not_change(rounds):
    with_test, without = fit(rounds=rounds, zero_test=2.0), fit(rounds=rounds, zero_test=None)
    assert with_test.ledger_.to_frame().equals(without.ledger_.to_frame())
    if rounds == 1:
        np.testing.assert_array_equal(with_test.measurements_, without.measurements_)
    else:
        assert with_test.measured_marginals_ == without.measured_marginals_
    assert not np.array_equal(with_test.weights_, without.weights_)


def test_time_limit_stops_the_projection():
    est = fit(X=data(n=2000), max_iter=1000, tol=0.0, time_limit=1e-6)
    assert est.projection_stop_ == "time_limit"
    assert est.n_iter_ == 1


def test_verbose_shows_a_progress_bar(capsys):
    fit(verbose=1, max_iter=3, tol=0.0)
    assert "AdaptiveProjection" in capsys.readouterr().err


@parametrize_with_checks(
    [AdaptiveProjection(epsilon=1.0, rounds=1, max_iter=2, representation=r, solver="heuristic",
                        random_state=0) for r in ("records", "products")],
    expected_failed_checks=lambda est: {},
)
def test_sklearn_compatible(estimator, check):
    from sklearn_privsyn import PrivacyLeakWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        check(estimator)


def test_rounds_is_a_deprecated_alias_of_n_rounds():
    est = fit(max_iter=3)
    with pytest.warns(FutureWarning, match="rounds_ is deprecated.*use n_rounds_"):
        assert est.rounds_ == est.n_rounds_
    assert not hasattr(AdaptiveProjection(), "n_rounds_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not hasattr(AdaptiveProjection(), "rounds_")  # unfitted: no warning either
