"""The graphical model of AdaptiveProjection's adaptive selection (sklearn_privsyn.adaptive._graphical)."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from sklearn_privsyn.adaptive import GraphicalModel, junction_tree, junction_tree_size
from sklearn_privsyn.adaptive._graphical import junction_tree_sizes


def marginal_of(joint, columns):
    return joint.sum(axis=tuple(i for i in range(joint.ndim) if i not in columns))


def joint_of(model):
    """The model's full joint by brute force: exp(sum of log-potentials), normalised."""
    sizes = model.sizes
    total = np.zeros(sizes)
    for m, theta in zip(model.marginals, model.theta):
        total = total + np.expand_dims(theta, tuple(i for i in range(len(sizes)) if i not in m))
    p = np.exp(total - total[np.isfinite(total)].max())
    return p / p.sum()


def random_model(seed, sizes=(3, 4, 2, 5, 3), marginals=((0, 1), (1, 2), (2, 3), (0, 3), (3, 4))):
    rng = np.random.default_rng(seed)
    model = GraphicalModel(sizes, marginals)
    model.theta = [rng.normal(size=t.shape) for t in model.theta]
    model._beliefs = None
    return model


def running_intersection(cliques, parent):
    """Every column's cliques form a connected subtree."""
    for a in set(itertools.chain(*cliques)):
        holding = {i for i, c in enumerate(cliques) if a in c}
        tops = [i for i in holding if parent[i] not in holding]
        if len(tops) != 1:
            return False
    return True


@pytest.mark.parametrize("seed", range(5))
def test_junction_tree_covers_every_set_and_has_running_intersection(seed):
    rng = np.random.default_rng(seed)
    d = 7
    sizes = rng.integers(2, 5, size=d).tolist()
    sets = [tuple(sorted(rng.choice(d, size=rng.integers(1, 4), replace=False))) for _ in range(6)]
    cliques, parent, order = junction_tree(sizes, sets)
    assert all(any(set(s) <= set(c) for c in cliques) for s in sets)
    assert set(itertools.chain(*cliques)) == set(range(d))
    assert sorted(order) == list(range(len(cliques))) and parent[order[0]] == -1
    assert running_intersection(cliques, parent)
    assert junction_tree_size(sizes, sets) == sum(math.prod(sizes[a] for a in c) for c in cliques)


def greedy_cliques(sizes, sets):
    """The greedy elimination written plainly: each step recounts every column's clique."""
    d = len(sizes)
    neighbours = {a: set() for a in range(d)}
    for s in sets:
        for a, b in itertools.permutations(s, 2):
            neighbours[a].add(b)
    alive, found = set(range(d)), set()
    while alive:
        v = min(alive, key=lambda u: (math.prod(sizes[b] for b in neighbours[u] & alive) * sizes[u], u))
        clique = neighbours[v] & alive
        for a, b in itertools.permutations(clique, 2):
            neighbours[a].add(b)
        found.add(frozenset(clique | {v}))
        alive.remove(v)
    return {c for c in found if not any(c < other for other in found)}


@pytest.mark.parametrize("seed", range(20))
def test_the_elimination_is_the_plain_greedy_one_whatever_the_order_of_the_sets(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 12))
    sizes = rng.choice([2, 3, 4, 6, 12], size=d).tolist()  # many ties of cells: 2*6 == 3*4
    sets = [tuple(int(a) for a in rng.choice(d, size=rng.integers(1, 4), replace=False))
            for _ in range(int(rng.integers(1, 2 * d)))]
    cliques, _, _ = junction_tree(sizes, sets)
    assert {frozenset(c) for c in cliques} == greedy_cliques(sizes, sets)
    shuffled = [tuple(rng.permutation(s)) for s in rng.permutation(np.array(sets, dtype=object))]
    assert junction_tree(sizes, shuffled)[0] == cliques
    extra = [tuple(rng.choice(d, size=2, replace=False)) for _ in range(5)] + [()]
    assert junction_tree_sizes(sizes, sets, extra) == [
        junction_tree_size(sizes, sets + [e]) for e in extra]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("columns", [(0,), (0, 1), (0, 2), (1, 4), (0, 2, 4), (4, 1), (0, 1, 2, 3, 4)])
def test_marginals_equal_the_brute_force_joints(seed, columns):
    model = random_model(seed)
    joint = joint_of(model)
    expected = marginal_of(joint, sorted(columns))
    np.testing.assert_allclose(model.marginal(columns), expected, atol=1e-12)
    # answers() numbers cells in the marginal's own column order
    own = np.transpose(expected, np.argsort(np.argsort(columns))) if len(columns) > 1 else expected
    np.testing.assert_allclose(model.answers([columns]), own.ravel(), atol=1e-12)


def test_fit_reproduces_consistent_marginals():
    rng = np.random.default_rng(0)
    sizes = [3, 4, 2, 5]
    joint = rng.dirichlet(np.full(np.prod(sizes), 0.5)).reshape(sizes)
    marginals = [(0, 1), (1, 2), (2, 3), (0, 3)]
    model = GraphicalModel(sizes, marginals)
    targets = [marginal_of(joint, m) for m in marginals]
    model.fit(targets, [np.full(t.shape, 1e4) for t in targets], max_iter=3000, tol=0)
    for m, t in zip(marginals, targets):
        np.testing.assert_allclose(model.marginal(m), t, atol=1e-4)


def test_structural_zeros_are_never_sampled_and_the_rest_still_fits():
    rng = np.random.default_rng(1)
    sizes = [4, 4, 3]
    # a deterministic pair (0, 1) and a noisy third column
    a = rng.integers(4, size=5000)
    rows = np.column_stack([a, a, (a + rng.integers(2, size=5000)) % 3])
    marginals = [(0, 1), (1, 2)]
    targets = [np.histogramdd(rows[:, list(m)], bins=[sizes[i] for i in m],
                              range=[(0, sizes[i]) for i in m])[0] / len(rows) for m in marginals]
    noisy = [t + rng.normal(scale=0.01, size=t.shape) for t in targets]
    model = GraphicalModel(sizes, marginals)
    model.set_zeros((0, 1), targets[0] == 0)
    model.fit(noisy, [np.full(t.shape, 1e4) for t in noisy], max_iter=300)
    sample = model.sample(20000, np.random.default_rng(2))
    assert np.all(sample[:, 0] == sample[:, 1])
    np.testing.assert_allclose(model.marginal((1, 2)), targets[1], atol=0.03)
    model.clear_zeros()
    assert all(np.all(np.isfinite(t)) for t in model.theta)


def test_zeros_that_exclude_every_row_raise():
    model = GraphicalModel([2], [(0,)])
    model.set_zeros((0,), np.array([True, True]))
    with pytest.raises(FloatingPointError, match="no possible row"):
        model.marginal((0,))


@pytest.mark.parametrize("seed", range(2))
def test_sample_follows_the_model(seed):
    model = random_model(seed)
    joint = joint_of(model)
    n = 40000
    sample = model.sample(n, np.random.default_rng(seed))
    counts = np.zeros(joint.shape)
    np.add.at(counts, tuple(sample.T), 1)
    for columns in [(0, 1), (1, 3), (2, 4), (0, 4)]:
        expected = marginal_of(joint, columns).ravel() * n
        observed = marginal_of(counts, columns).ravel()
        keep = expected > 5
        chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
        # stratified draws are at most as dispersed as independent ones
        assert stats.chi2.sf(chi2, keep.sum() - 1) > 1e-3


def test_sample_is_reproducible_and_the_systematic_root_counts_are_exact():
    model = random_model(0, sizes=(3, 2), marginals=((0, 1),))
    a = model.sample(1000, np.random.default_rng(5))
    b = model.sample(1000, np.random.default_rng(5))
    assert np.array_equal(a, b)
    joint = marginal_of(joint_of(model), (0, 1))
    counts = np.zeros((3, 2))
    np.add.at(counts, tuple(a.T), 1)
    assert np.all(np.abs(counts - 1000 * joint) < 1)  # rounded up or down, never further


def test_marginals_of_wide_tables_use_any_column_index():
    # numpy.einsum takes labels below 52: columns 52 and up must still work
    d = 60
    marginals = [(a, a + 1) for a in range(0, d - 1, 2)] + [(a, a + 1) for a in range(1, d - 1, 2)]
    model = GraphicalModel([2] * d, marginals)
    rng = np.random.default_rng(0)
    model.theta = [rng.normal(size=t.shape) for t in model.theta]
    model._beliefs = None
    chain = model.marginal((0, 57, 59))  # not in one clique: summed over the subtree
    assert chain.shape == (2, 2, 2) and chain.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(chain.sum(axis=(1, 2)), model.marginal((0,)), atol=1e-12)
    np.testing.assert_allclose(chain.sum(axis=0), model.marginal((57, 59)), atol=1e-12)


def test_the_zero_test_never_removes_a_value_spread_thin_over_another_column():
    # a value of 3% of the rows (a missing code) beside ten equal bins: each of its cells
    # (0.3%) is below 2 sd of a precise 2-way measurement (sd 0.0045), so each one tests
    # empty; zeroed together they would leave the value out of every row, while its
    # 1-way answer (sd 0.018) says 3%
    from sklearn_privsyn.adaptive._rules import GRAPHICAL_ZERO_TEST, structural_zeros

    rng = np.random.default_rng(2)  # (a draw of the noise where every such cell tests empty)
    one_way = np.array([0.97, 0.03])
    two_way = np.outer(one_way, np.full(10, 0.1))
    targets = [one_way + rng.normal(scale=0.018, size=2),
               two_way + rng.normal(scale=0.0045, size=(2, 10))]
    sds = [0.018, 0.0045]
    assert np.all(targets[1][1] < GRAPHICAL_ZERO_TEST * sds[1])  # every cell tests empty
    zeros = structural_zeros(targets[1], sds[1], GRAPHICAL_ZERO_TEST)
    assert zeros[1].sum() <= 1  # kept beside the bins holding 90% of the rows
    model = GraphicalModel([2, 10], [(0,), (0, 1)])
    if zeros.any():
        model.set_zeros((0, 1), zeros)
    model.fit(targets, [np.full(t.shape, s ** -2) for t, s in zip(targets, sds)],
              max_iter=500)
    assert 0.01 < model.marginal((0,))[1] < 0.05
    rows = model.sample(20000, np.random.default_rng(1))
    assert 0.01 < np.mean(rows[:, 0] == 1) < 0.05


def test_a_value_every_cell_of_which_tests_empty_keeps_only_common_combinations():
    # a rare value (0.05%) beside a column of two common and eight rare values: all of its
    # cells test empty; it keeps those beside the common two (90% of the rows), not the
    # eight the fit would fill with positive noise
    from sklearn_privsyn.adaptive._rules import ZERO_KEPT_MASS, structural_zeros

    other = np.array([0.6, 0.35] + [0.05 / 8] * 8)
    table = np.outer([0.9995, 0.0005], other) + np.random.default_rng(0).normal(
        scale=0.001, size=(2, 10))
    zeros = structural_zeros(table, 0.001, 2.0)
    assert zeros[1].tolist() == [False, False] + [True] * 8
    assert other[:2].sum() >= ZERO_KEPT_MASS > other[0]
    assert not zeros[0].any()  # the common value's cells are all well above 2 sd
