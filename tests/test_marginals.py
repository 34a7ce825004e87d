"""MarginalSet: cell numbering, vectorised answers and literals, checked by brute force."""

import itertools

import numpy as np
import pytest

from sklearn_privsyn.marginals import MarginalSet, choose_marginals
from sklearn_privsyn.solvers import OneHotLayout

SIZES = (2, 3, 4)
MARGINALS = [(0,), (2, 0), (0, 1, 2)]


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(3)
    records = np.column_stack([rng.integers(0, s, 50) for s in SIZES])
    weights = rng.uniform(0, 2, 50)
    return MarginalSet(OneHotLayout(SIZES), MARGINALS, names=["a", "b", "c"]), records, weights


def brute_force_counts(records, weights):
    """Per marginal, the weight of the records in each cell, cells in C order."""
    out = []
    for m in MARGINALS:
        for cell in itertools.product(*(range(SIZES[a]) for a in m)):
            hit = np.all(records[:, list(m)] == cell, axis=1)
            out.append(weights[hit].sum())
    return np.array(out)


@pytest.mark.parametrize("weighted", [False, True])
def test_counts_answers_and_one_marginal_match_brute_force(setup, weighted):
    ms, records, weights = setup
    w = weights if weighted else np.ones(len(records))
    expected = brute_force_counts(records, w)
    assert ms.n_queries == len(expected) == 2 + 8 + 24
    np.testing.assert_allclose(ms.counts(records, w if weighted else None), expected)
    np.testing.assert_allclose(ms.answers(records, w if weighted else None), expected / w.sum())
    for j in range(ms.n_marginals):
        np.testing.assert_allclose(
            ms.marginal_answers(j, records, w if weighted else None),
            expected[ms.cells(j)] / w.sum(),
        )
    assert np.all(np.diff(ms.marginal_of_query) >= 0)
    assert np.bincount(ms.marginal_of_query).tolist() == [2, 8, 24]


def test_cell_index_and_literals_agree(setup):
    ms, records, _ = setup
    layout = ms.layout
    cells = ms.cell_index(records)
    assert cells.shape == (len(records), ms.n_marginals)
    for j in range(ms.n_marginals):
        np.testing.assert_array_equal(ms.cell_index(records, j), cells[:, j])
        literals, negated = ms.query_literals(ms.offsets[j] + cells[:, j])
        assert not negated.any()
        onehot = layout.to_onehot(records)
        # every record satisfies the literals of its own cell
        hits = np.array([onehot[i, lit[lit >= 0]].all() for i, lit in enumerate(literals)])
        assert hits.all()
    literals, negated = ms.query_literals([ms.n_queries])
    assert negated.tolist() == [True] and literals.tolist() == [[0, -1, -1]]


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda ms, r: ms.answers(r[:0]), "empty table"),
        (lambda ms, r: ms.answers(r, weights=np.ones(3)), r"weights must have shape \(50,\)"),
        (lambda ms, r: ms.answers(r, weights=-np.ones(50)), "non-negative"),
        (lambda ms, r: ms.query_literals([68]), r"query id 68 is outside 0\.\.67"),
        (lambda ms, r: ms.counts(r + 5), "outside attribute"),
    ],
)
def test_bad_calls_raise(setup, call, match):
    ms, records, _ = setup
    with pytest.raises(ValueError, match=match):
        call(ms, records)
    assert ms.counts(records[:0]).sum() == 0


def test_choose_marginals_is_the_seeded_choice_in_enumeration_order():
    chosen, n_eligible = choose_marginals((2, 3, 4, 5), 2, max_cells=12, n_marginals=3,
                                          random_state=0)
    eligible = [m for m in itertools.combinations(range(4), 2)
                if np.prod([(2, 3, 4, 5)[a] for a in m]) <= 12]
    assert n_eligible == len(eligible)
    pick = np.random.RandomState(0).choice(len(eligible), 3, replace=False)
    assert chosen == [eligible[i] for i in sorted(pick)]


@pytest.mark.parametrize("chunk_entries", [1, 5, 64, 1 << 22])
@pytest.mark.parametrize("weighted", [False, True])
def test_counts_in_row_chunks_and_marginal_blocks_match_brute_force(setup, weighted,
                                                                    chunk_entries, monkeypatch):
    # rows are counted in chunks and marginals in blocks of about _CHUNK_ENTRIES
    # entries, each block into its own cells: every split gives the same counts
    import sklearn_privsyn.marginals as marginals_module

    monkeypatch.setattr(marginals_module, "_CHUNK_ENTRIES", chunk_entries)
    ms, records, weights = setup
    w = weights if weighted else np.ones(len(records))
    np.testing.assert_allclose(ms.counts(records, w if weighted else None),
                               brute_force_counts(records, w))
