"""Structural zeros of pairs of columns (sklearn_privsyn.adaptive._pair_zeros).

The pair tables against a brute-force weighted average, the test's two
conditions, and the rows: weighted records fitted at once keep pairs that no
real row holds out of the synthetic rows.
"""

import itertools

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.adaptive._pair_zeros import (
    pair_tables,
    records_holding,
    structural_pair_zeros,
)
from sklearn_privsyn.adaptive._projection import MarginalCells
from sklearn_privsyn.adaptive._rules import PRODUCTS_COLUMNS, pair_zeros_apply


def _index(sizes, marginals):
    X = pd.DataFrame({f"c{i}": [0] for i in range(len(sizes))})
    wl = QueryWorkload(domain={f"c{i}": s for i, s in enumerate(sizes)},
                       marginals=[tuple(f"c{a}" for a in m) for m in marginals]).fit(X)
    return MarginalCells(wl)


def _cell_table(index, vector, m):
    """Marginal m's part of ``vector`` as an array, by brute force over its cells."""
    columns = index.marginals[m]
    sizes = [int(index.sizes[a]) for a in columns]
    table = np.zeros(sizes)
    for codes in itertools.product(*[range(s) for s in sizes]):
        cell = index.offsets[m] + sum(c * index.multipliers[a, m] for a, c in zip(columns, codes))
        table[codes] = vector[cell]
    return table


def test_pair_tables_average_every_marginal_by_inverse_variance():
    index = _index([2, 3, 4], [(0, 1, 2), (0, 1)])
    rng = np.random.default_rng(0)
    target = rng.normal(size=index.n_cells)
    precision = np.where(np.arange(index.n_cells) < index.offsets[1], 4.0, 1.0)
    tables = pair_tables(index, target, precision)
    assert set(tables) == {(0, 1), (0, 2), (1, 2)}
    big, small = _cell_table(index, target, 0), _cell_table(index, target, 1)
    # (0, 1): from the 3-way marginal (4 cells of variance 1/4 summed: variance 1) and
    # from the 2-way one (variance 1): the plain mean, sd sqrt(1/2)
    estimate, sd, cell_sd = tables[(0, 1)]
    np.testing.assert_allclose(estimate, (big.sum(axis=2) + small) / 2)
    np.testing.assert_allclose(sd, np.sqrt(0.5))
    assert cell_sd == pytest.approx(0.5)  # the most precise cell holding the pair
    # (1, 2): only the 3-way marginal, 2 cells summed: variance 1/2
    estimate, sd, cell_sd = tables[(1, 2)]
    np.testing.assert_allclose(estimate, big.sum(axis=0))
    np.testing.assert_allclose(sd, np.sqrt(0.5))
    assert cell_sd == pytest.approx(0.5)


def test_unmeasured_marginals_are_left_out():
    index = _index([2, 2, 2], [(0, 1), (1, 2)])
    precision = np.where(np.arange(index.n_cells) < index.offsets[1], 1.0, 0.0)
    assert set(pair_tables(index, np.zeros(index.n_cells), precision)) == {(0, 1)}


@pytest.mark.parametrize("answers, expected", [
    # a == b: the off-diagonal cells are empty where independence puts 0.25
    ([0.5, 0.0, 0.0, 0.5], [[False, True], [True, False]]),
    # a rare value: its empty cell is expected to hold 0.02 * 0.5 = 0.01 < 2 z sd = 0.04
    ([0.49, 0.49, 0.02, 0.0], None),
    # a cell above z sd is no zero
    ([0.45, 0.05, 0.05, 0.45], None),
])
def test_a_structural_zero_tests_empty_and_far_below_independence(answers, expected):
    index = _index([2, 2], [(0, 1)])
    zeros = structural_pair_zeros(index, np.array(answers), np.full(4, 1e4), 2.0)  # sd 0.01
    if expected is None:
        assert zeros == {}
    else:
        assert zeros[(0, 1)].tolist() == expected


def test_a_pair_known_less_precisely_than_a_cell_has_no_structural_zero():
    # (0, 1) only through a 3-way marginal whose third column has 9 values: its table's
    # sd is 3 times a cell's, and a real cell of up to 2 such sd could test empty
    index = _index([2, 2, 9], [(0, 1, 2)])
    answers = np.zeros((2, 2, 9))
    answers[0, 0, :], answers[1, 1, :] = 0.5 / 9, 0.5 / 9
    cells = _cell_table(index, np.arange(index.n_cells), 0).astype(int)
    target = np.zeros(index.n_cells)
    target[cells.ravel()] = answers.ravel()
    zeros = structural_pair_zeros(index, target, np.full(index.n_cells, 1e4), 2.0)
    assert (0, 1) not in zeros
    # measured by its own 2-way marginal as well: now as precise as a cell
    index = _index([2, 2, 9], [(0, 1, 2), (0, 1)])
    target = np.concatenate([target, [0.5, 0.0, 0.0, 0.5]])
    zeros = structural_pair_zeros(index, target, np.full(index.n_cells, 1e4), 2.0)
    assert zeros[(0, 1)].tolist() == [[False, True], [True, False]]


def test_records_holding_a_zero():
    zeros = {(0, 2): np.array([[False, True], [False, False]])}
    records = np.array([[0, 5, 1], [0, 5, 0], [1, 0, 1]])
    assert records_holding(records, zeros).tolist() == [True, False, False]


def test_records_fitted_at_once_keep_impossible_pairs_out_of_the_rows():
    # group is age // 3: every pair (age, group) off that map is empty
    rng = np.random.default_rng(0)
    n = 5000
    age = rng.integers(0, 10, n)
    X = pd.DataFrame({"age": age, "group": age // 3, **{
        f"x{i}": (rng.random(n) < 0.3 + 0.04 * age).astype(int) + rng.integers(0, 2, n)
        for i in range(4)}})
    domain = {"age": 10, "group": 4, **{f"x{i}": 3 for i in range(4)}}
    share = {}
    for zero_test in (None, "auto"):
        est = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(domain=domain, k=3),
                                 rounds=1, representation="records", zero_test=zero_test,
                                 random_state=0).fit(X)
        S = est.sample(n, random_state=0)
        share[zero_test] = float(((S["age"] // 3) != S["group"]).mean())
    # without the test 9% of the rows hold an impossible pair (7% with the cells' test
    # alone); with the pairs' 3%
    assert share[None] > 0.06
    assert share["auto"] < min(0.04, share[None] / 2)


def test_wide_tables_keep_the_records_holding_pair_zeros():
    # measured on the ACS schema (80 columns): dropping cost more than it fixed
    assert pair_zeros_apply(PRODUCTS_COLUMNS)
    assert not pair_zeros_apply(PRODUCTS_COLUMNS + 1)
