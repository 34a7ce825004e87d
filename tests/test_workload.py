import itertools
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from sklearn_privsyn.datasets import load_coded_csv
from sklearn_privsyn.exceptions import PrivacyLeakWarning
from sklearn_privsyn.solvers._base import OneHotLayout
from sklearn_privsyn.workload import QueryWorkload


def _mixed_frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "colour": pd.Series(rng.choice(["red", "green", "blue"], n), dtype="str"),
            "code": rng.integers(0, 4, n),
            "flag": rng.random(n) < 0.3,
            "grade": pd.Categorical(rng.choice(["lo", "hi"], n), categories=["lo", "mid", "hi"]),
            "x": rng.uniform(0, 10, n),
        }
    )


MIXED_DOMAIN = {
    "colour": ["red", "green", "blue"],
    "code": 4,
    "flag": [False, True],
    "grade": ["lo", "mid", "hi"],
}
MIXED_BOUNDS = {"x": (0, 10)}


def _mixed_workload(**params):
    params = {"domain": MIXED_DOMAIN, "bounds": MIXED_BOUNDS, "bins": 5, "k": 2, **params}
    return QueryWorkload(**params)


def _fit_quiet(workload, X):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a public domain must not warn
        return workload.fit(X)


def _paper_protocol(domain, k, max_cells, n_marginals, seed):
    """Independent re-implementation of the paper's marginal selection."""
    cols = list(domain)
    eligible = [
        c for c in itertools.combinations(cols, k) if math.prod(domain[a] for a in c) <= max_cells
    ]
    pick = np.random.RandomState(seed).choice(len(eligible), n_marginals, replace=False)
    return eligible, [eligible[i] for i in pick]


# ---------------------------------------------------------------- paper workloads


def test_adult_paper_workload_3way_cell_count(shared_datasets):
    X, domain = load_coded_csv(shared_datasets / "adult.csv", shared_datasets / "adult-domain.json")
    wl = _fit_quiet(
        QueryWorkload(domain=domain, k=3, n_marginals=64, max_cells=48842, random_state=0), X
    )
    assert wl.n_queries_ == 458_996
    assert wl.n_eligible_marginals_ == 278
    assert len(wl.marginals_) == 64
    _, chosen = _paper_protocol(domain, 3, 48842, 64, 0)
    assert sorted(wl.marginals_) == sorted(chosen)
    # "n_rows" is the same limit here
    wl_n = QueryWorkload(domain=domain, k=3, n_marginals=64, max_cells="n_rows", random_state=0)
    assert wl_n.fit(X).marginals_ == wl.marginals_


@pytest.mark.parametrize("k", [2, 5])
def test_adult_paper_protocol_other_k(shared_datasets, k):
    X, domain = load_coded_csv(shared_datasets / "adult.csv", shared_datasets / "adult-domain.json")
    wl = QueryWorkload(domain=domain, k=k, n_marginals=64, max_cells=len(X), random_state=0).fit(X)
    eligible, chosen = _paper_protocol(domain, k, len(X), 64, 0)
    assert wl.n_eligible_marginals_ == len(eligible)
    assert set(wl.marginals_) == set(chosen)
    assert wl.n_queries_ == sum(math.prod(domain[c] for c in m) for m in chosen)


def test_titanic_columns_matched_by_name(shared_datasets):
    X, domain = load_coded_csv(
        shared_datasets / "titanic.csv", shared_datasets / "titanic-domain.json"
    )
    wl = _fit_quiet(QueryWorkload(domain=domain, k=2), X)
    assert wl.columns_ == tuple(domain)
    assert wl.layout_.block_sizes == tuple(domain.values())
    assert wl.layout_.n_features == 227
    raw = pd.read_csv(shared_datasets / "titanic.csv")
    np.testing.assert_allclose(wl.answer(raw), wl.answer(X))


# ---------------------------------------------------------------- answers


def _groupby_answers(wl, X, values_of=None):
    """Answers from pandas groupby counts, mapped to query ids by unravelling cells."""
    values_of = wl.categories_ if values_of is None else values_of
    n = len(X)
    expected = np.zeros(wl.n_queries_)
    for j, marginal in enumerate(wl.marginals_):
        counts = X.groupby(list(marginal), observed=True, dropna=False).size()
        sizes = [wl.domain_sizes_[c] for c in marginal]
        values = [values_of[c] for c in marginal]
        for cell in range(math.prod(sizes)):
            key = tuple(v[i] for v, i in zip(values, np.unravel_index(cell, sizes)))
            key = key if len(key) > 1 else key[0]
            expected[wl.marginal_offsets_[j] + cell] = counts.get(key, 0) / n
    return expected


@pytest.mark.parametrize("k", [1, 2, 3])
def test_answers_match_groupby(k):
    X = _mixed_frame(n=200, seed=k).drop(columns="x")
    X["code"] = X["code"].map({0: 10, 1: 20, 2: 30, 3: 40})
    domain = {**MIXED_DOMAIN, "code": [10, 20, 30, 40]}
    wl = _fit_quiet(QueryWorkload(domain=domain, k=k), X)
    np.testing.assert_allclose(wl.answer(X), _groupby_answers(wl, X), atol=1e-12)


def test_answers_match_groupby_on_titanic(shared_datasets):
    X, domain = load_coded_csv(
        shared_datasets / "titanic.csv", shared_datasets / "titanic-domain.json"
    )
    wl = QueryWorkload(domain=domain, k=3, n_marginals=5, max_cells=2000, random_state=1).fit(X)
    codes = {c: np.arange(s) for c, s in domain.items()}  # the values are the codes
    np.testing.assert_allclose(wl.answer(X), _groupby_answers(wl, X, codes), atol=1e-12)


def test_answer_codes_weights_equal_duplicated_rows():
    X = _mixed_frame(n=50)
    wl = _fit_quiet(_mixed_workload(k=3), X)
    records = wl.encode(X)
    reps = np.random.default_rng(0).integers(0, 4, len(X))
    duplicated = np.repeat(records, reps, axis=0)
    np.testing.assert_allclose(
        wl.answer_codes(records, weights=reps * 0.37), wl.answer_codes(duplicated), atol=1e-12
    )
    # each marginal's cells sum to one
    np.testing.assert_allclose(
        np.add.reduceat(wl.answer(X), wl.marginal_offsets_[:-1]), 1.0, atol=1e-12
    )


def test_answer_codes_chunked_rows_agree(monkeypatch):
    X = _mixed_frame(n=97)
    wl = _fit_quiet(_mixed_workload(k=2), X)
    records = wl.encode(X)
    whole = wl.answer_codes(records)
    monkeypatch.setattr("sklearn_privsyn.marginals._CHUNK_ENTRIES", 7)
    np.testing.assert_array_equal(wl.answer_codes(records), whole)


def test_query_literals_evaluate_to_answers():
    X = _mixed_frame(n=80)
    wl = _fit_quiet(_mixed_workload(marginals=[("colour",), ("code", "x"), ("flag", "grade", "x")]), X)
    records = wl.encode(X)
    onehot = wl.layout_.to_onehot(records)
    ids = np.arange(2 * wl.n_queries_)
    literals, negated = wl.query_literals(ids)
    assert literals.shape == (len(ids), 3)
    assert np.array_equal(negated, ids >= wl.n_queries_)
    # padding: 1-way marginal has two -1 pads, 2-way one
    arity = np.tile(np.array([len(m) for m in wl.marginals_])[wl.marginal_of_query_], 2)
    assert np.array_equal((literals >= 0).sum(axis=1), arity)
    # literals of one query lie in distinct blocks
    attrs = np.where(literals >= 0, wl.layout_.attribute_of[np.maximum(literals, 0)], -1)
    for row, a in zip(attrs, arity):
        assert len(set(row[:a])) == a
    sat = np.ones((len(records), len(ids)), dtype=bool)
    for i in range(3):
        col = literals[:, i]
        sat &= np.where(col >= 0, onehot[:, np.maximum(col, 0)], True)
    values = np.where(negated, 1 - sat.mean(axis=0), sat.mean(axis=0))
    answers = wl.answer(X)
    np.testing.assert_allclose(values, np.concatenate([answers, 1 - answers]), atol=1e-12)


def test_query_ids_are_c_order_of_codes():
    X = pd.DataFrame({"a": [0, 1, 2], "b": [0, 1, 0]})
    wl = _fit_quiet(QueryWorkload(domain={"a": 3, "b": 2}, k=2), X)
    literals, _ = wl.query_literals(np.arange(6))
    # cell (a, b): a varies slowest; b's one-hot columns start at 3
    assert literals.tolist() == [[0, 3], [0, 4], [1, 3], [1, 4], [2, 3], [2, 4]]
    assert wl.answer(X).tolist() == pytest.approx([1 / 3, 0, 0, 1 / 3, 1 / 3, 0])
    assert wl.marginal_offsets_.tolist() == [0, 6]
    assert wl.marginal_of_query_.tolist() == [0] * 6


@pytest.mark.parametrize("ids", [[-1], [12], [0.5]])
def test_query_literals_rejects_bad_ids(ids):
    X = pd.DataFrame({"a": [0, 1, 2], "b": [0, 1, 0]})
    wl = QueryWorkload(domain={"a": 3, "b": 2}, k=2).fit(X)
    with pytest.raises(ValueError, match="query"):
        wl.query_literals(ids)


@pytest.mark.parametrize(
    "weights, match",
    [([1.0, -1.0, 1.0], "non-negative"), ([1.0, 2.0], "shape"), ([0.0, 0.0, 0.0], "empty")],
)
def test_answer_codes_rejects_bad_weights(weights, match):
    X = pd.DataFrame({"a": [0, 1, 2]})
    wl = QueryWorkload(domain={"a": 3}, k=1).fit(X)
    with pytest.raises(ValueError, match=match):
        wl.answer_codes(wl.encode(X), weights=weights)


def test_answer_codes_rejects_out_of_range_records():
    X = pd.DataFrame({"a": [0, 1, 2]})
    wl = QueryWorkload(domain={"a": 3}, k=1).fit(X)
    with pytest.raises(ValueError, match="outside"):
        wl.answer_codes([[3]])


# ---------------------------------------------------------------- marginals


def test_marginals_sorted_in_enumeration_order_and_seeded():
    X = pd.DataFrame({c: [0, 1] for c in "abcdef"})
    domain = dict.fromkeys("abcdef", 2)
    a = QueryWorkload(domain=domain, k=2, n_marginals=6, random_state=3).fit(X)
    b = QueryWorkload(domain=domain, k=2, n_marginals=6, random_state=3).fit(X)
    c = QueryWorkload(domain=domain, k=2, n_marginals=6, random_state=4).fit(X)
    all_pairs = list(itertools.combinations("abcdef", 2))
    assert a.marginals_ == b.marginals_
    assert a.marginals_ != c.marginals_
    assert list(a.marginals_) == sorted(a.marginals_, key=all_pairs.index)
    full = QueryWorkload(domain=domain, k=2).fit(X)
    assert full.marginals_ == tuple(all_pairs) and full.n_queries_ == 15 * 4


def test_max_cells_filters():
    X = pd.DataFrame({"a": [0], "b": [0], "c": [0]})
    wl = QueryWorkload(domain={"a": 2, "b": 3, "c": 5}, k=2, max_cells=10).fit(X)
    assert wl.marginals_ == (("a", "b"), ("a", "c"))
    assert wl.n_queries_ == 6 + 10


def test_explicit_marginals_mixed_arity():
    X = _mixed_frame(n=10)
    wl = _fit_quiet(_mixed_workload(marginals=["colour", ("x", "code"), ["flag", "grade", "x"]]), X)
    assert wl.marginals_ == (("colour",), ("x", "code"), ("flag", "grade", "x"))
    assert wl.marginal_offsets_.tolist() == [0, 3, 3 + 20, 3 + 20 + 2 * 3 * 5]
    assert wl.n_eligible_marginals_ is None


# ---------------------------------------------------------------- encoding


def test_encoding_kinds_and_layout():
    X = _mixed_frame(n=30)
    wl = _fit_quiet(_mixed_workload(), X)
    assert wl.domain_sizes_ == {"colour": 3, "code": 4, "flag": 2, "grade": 3, "x": 5}
    assert isinstance(wl.layout_, OneHotLayout)
    assert wl.layout_.block_sizes == (3, 4, 2, 3, 5)
    np.testing.assert_allclose(wl.bin_edges_["x"], [0, 2, 4, 6, 8, 10])
    records = wl.encode(X)
    assert records.dtype == np.intp
    expected_colour = X["colour"].map({"red": 0, "green": 1, "blue": 2}).to_numpy()
    np.testing.assert_array_equal(records[:, 0], expected_colour)
    np.testing.assert_array_equal(records[:, 1], X["code"].to_numpy())
    np.testing.assert_array_equal(records[:, 2], X["flag"].astype(int).to_numpy())
    np.testing.assert_array_equal(records[:, 4], np.minimum(X["x"] // 2, 4).astype(int))
    assert wl.feature_names_in_.tolist() == list(X.columns)
    names = wl.get_feature_names_out()
    assert len(names) == wl.layout_.n_features
    assert names[:3].tolist() == ["colour_red", "colour_green", "colour_blue"]
    assert names[-1] == "x_[8, 10]" and names[-5] == "x_[0, 2)"


def test_bin_edges_closed_last_bin_and_clip():
    X = pd.DataFrame({"x": [0.0, 1.999, 2.0, 10.0]})
    strict = QueryWorkload(bounds={"x": (0, 10)}, bins=5, k=1, clip=False).fit(X)
    assert strict.encode(X)[:, 0].tolist() == [0, 0, 1, 4]
    with pytest.raises(ValueError, match=r"Column 'x' has values outside its bounds \[0, 10\]"):
        strict.encode(pd.DataFrame({"x": [10.5]}))
    clipped = QueryWorkload(bounds={"x": (0, 10)}, bins=5, k=1).fit(X)
    assert clipped.encode(pd.DataFrame({"x": [-3.0, 10.5]}))[:, 0].tolist() == [0, 4]


def test_explicit_bin_edges_for_integer_column():
    X = pd.DataFrame({"gain": [0, 1, 4999, 5000, 99999]})
    wl = _fit_quiet(QueryWorkload(bins={"gain": [0, 1, 5000, 100000]}, k=1), X)
    assert wl.encode(X)[:, 0].tolist() == [0, 1, 1, 2, 2]
    back = wl.decode(np.array([[0], [1], [2]] * 50), random_state=0)
    assert back["gain"].dtype == np.int64
    codes = np.array([0, 1, 2] * 50)
    assert np.all(back["gain"].to_numpy()[codes == 0] == 0)
    assert np.all(wl.encode(back)[:, 0] == codes)


def test_handle_missing_category():
    X = pd.DataFrame(
        {
            "s": pd.Series(["a", None, "b"], dtype="str"),
            "i": [1.0, np.nan, 0.0],
            "x": [0.5, 2.5, np.nan],
        }
    )
    wl = _fit_quiet(
        QueryWorkload(domain={"s": ["a", "b"], "i": 2}, bounds={"x": (0, 3)}, bins=3, k=1,
                      handle_missing="category"),
        X,
    )
    assert wl.domain_sizes_ == {"s": 3, "i": 3, "x": 4}
    records = wl.encode(X)
    assert records.tolist() == [[0, 1, 0], [2, 2, 2], [1, 0, 3]]
    back = wl.decode(records, random_state=0)
    assert back["s"].isna().tolist() == [False, True, False]
    assert back["i"].isna().tolist() == [False, True, False]
    assert back["x"].isna().tolist() == [False, False, True]
    np.testing.assert_array_equal(wl.encode(back), records)
    assert wl.get_feature_names_out()[2] == "s_nan"


def test_handle_missing_list_gives_only_those_columns_a_missing_code():
    X = pd.DataFrame({"s": ["a", None, "b", "a"], "i": [1, 0, 1, 0], "x": [0.5, 2.5, np.nan, 1.0]})
    wl = QueryWorkload(domain={"s": ["a", "b"], "i": 2}, bounds={"x": (0, 3)}, bins=3, k=1,
                       handle_missing=["s", "x"]).fit(X)
    assert wl.domain_sizes_ == {"s": 3, "i": 2, "x": 4}
    assert wl.encode(X).tolist() == [[0, 1, 0], [2, 0, 2], [1, 1, 3], [0, 0, 1]]
    # a column not declared missable has no missing code, so samples never miss it
    back = wl.decode(np.array([[2, 1, 3]] * 3), random_state=0)
    assert back["i"].tolist() == [1, 1, 1] and back["i"].dtype == np.int64
    assert back["s"].isna().all() and back["x"].isna().all()
    with pytest.raises(ValueError, match=r"Column 'i' has missing values .*handle_missing"):
        wl.encode(X.assign(i=[1, np.nan, 0, 0]))
    assert wl.__sklearn_tags__().input_tags.allow_nan


def test_other_category_takes_unknown_values():
    X = pd.DataFrame({"s": ["a", "zz", "b", "Other"], "t": ["x", "y", "x", "y"]})
    wl = QueryWorkload(domain={"s": ["a", "b", "Other"], "t": ["x", "y"]},
                       other={"s": "Other"}, k=1).fit(X)
    assert wl.encode(X)[:, 0].tolist() == [0, 2, 1, 2]
    assert wl.encode(pd.DataFrame({"s": [7, "q"], "t": ["x", "x"]}))[:, 0].tolist() == [2, 2]
    # columns without a declared "other" still raise, naming only the column
    with pytest.raises(ValueError, match=r"Column 't' has values outside its domain"):
        wl.encode(pd.DataFrame({"s": ["a"], "t": ["zz"]}))


# ---------------------------------------------------------------- round trips


@st.composite
def _frames(draw):
    n = draw(st.integers(1, 25))
    cats = draw(st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=4, unique=True))
    ints = draw(st.lists(st.integers(-50, 50), min_size=1, max_size=4, unique=True))
    size = draw(st.integers(1, 6))
    idx = st.integers(0, 10**6)
    rows = draw(st.lists(st.tuples(idx, idx, idx, st.booleans(), st.floats(-5, 5)),
                         min_size=n, max_size=n))
    frame = pd.DataFrame(
        {
            "s": pd.Series([cats[r[0] % len(cats)] for r in rows], dtype="str"),
            "i": np.array([ints[r[1] % len(ints)] for r in rows], dtype=np.int64),
            "c": np.array([r[2] % size for r in rows], dtype=np.int32),
            "b": np.array([r[3] for r in rows], dtype=bool),
            "cat": pd.Categorical([cats[r[0] % len(cats)] for r in rows], categories=cats),
            "x": np.array([r[4] for r in rows], dtype=np.float64),
        }
    )
    domain = {"s": cats, "i": ints, "c": size, "b": [False, True], "cat": cats}
    return frame, domain


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_frames(), st.integers(1, 7))
def test_encode_decode_round_trip(data, bins):
    X, domain = data
    wl = _fit_quiet(QueryWorkload(domain=domain, bounds={"x": (-5, 5)}, bins=bins, k=2), X)
    records = wl.encode(X)
    back = wl.decode(records, random_state=0)
    assert list(back.columns) == list(X.columns)
    assert back.dtypes.to_dict() == X.dtypes.to_dict()
    pd.testing.assert_frame_equal(back.drop(columns="x"), X.drop(columns="x"))
    edges = wl.bin_edges_["x"]
    code = records[:, 5]
    assert np.all(back["x"] >= edges[code]) and np.all(back["x"] <= edges[code + 1])
    np.testing.assert_array_equal(wl.encode(back), records)
    onehot = wl.transform(X)
    assert sp.issparse(onehot) and onehot.shape == (len(X), wl.layout_.n_features)
    np.testing.assert_array_equal(onehot.toarray(), wl.layout_.to_onehot(records))
    again = wl.inverse_transform(onehot.toarray(), random_state=0)
    pd.testing.assert_frame_equal(again, back)


def test_decode_is_seeded_and_accepts_generators():
    X = pd.DataFrame({"x": np.linspace(0, 1, 20)})
    wl = QueryWorkload(bounds={"x": (0, 1)}, bins=2, k=1).fit(X)
    records = wl.encode(X)
    a = wl.decode(records, random_state=1)
    pd.testing.assert_frame_equal(a, wl.decode(records, random_state=1))
    assert not a.equals(wl.decode(records, random_state=2))
    g = wl.decode(records, random_state=np.random.default_rng(0))
    assert np.array_equal(wl.encode(g), records)


def test_inverse_transform_rejects_non_onehot():
    X = pd.DataFrame({"a": [0, 1], "b": [1, 0]})
    wl = QueryWorkload(domain={"a": 2, "b": 2}, k=1).fit(X)
    with pytest.raises(ValueError, match="one-hot"):
        wl.inverse_transform([[1, 1, 0, 1]])
    with pytest.raises(ValueError, match="one-hot"):
        wl.inverse_transform([[1, 0, 0, 0]])
    with pytest.raises(ValueError, match="one-hot"):
        wl.inverse_transform([[0.5, 0.5, 0, 1]])
    with pytest.raises(ValueError, match="4"):
        wl.inverse_transform([[1, 0, 1]])


# ---------------------------------------------------------------- privacy warnings


def test_public_domain_does_not_warn_and_inferred_does():
    X = _mixed_frame(n=20)
    _fit_quiet(_mixed_workload(), X)  # raises if anything warns
    with pytest.warns(PrivacyLeakWarning) as record:
        QueryWorkload(domain={"code": 4}, k=1).fit(X)
    message = str(record[0].message)
    for col in ["colour", "grade", "x"]:
        assert repr(col) in message
    assert "'code'" not in message and "'flag'" not in message  # bool is public


def test_inferred_domains():
    X = pd.DataFrame({"s": ["b", "a", "b"], "i": [7, 3, 7], "x": [1.0, 3.0, 2.0]})
    with pytest.warns(PrivacyLeakWarning, match="min/max of numeric columns \\['x'\\]"):
        wl = QueryWorkload(k=1, bins=4).fit(X)
    assert wl.categories_["s"].tolist() == ["a", "b"]
    assert wl.categories_["i"].tolist() == [3, 7]
    np.testing.assert_allclose(wl.bin_edges_["x"], [1, 1.5, 2, 2.5, 3])


# ---------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "params, match",
    [
        ({"domain": {"nope": 2}}, r"domain names columns not in X: \['nope'\]"),
        ({"bounds": {"nope": (0, 1)}}, r"bounds names columns not in X: \['nope'\]"),
        ({"bins": {"nope": 3}}, r"bins names columns not in X: \['nope'\]"),
        ({"marginals": [("a", "nope")]}, r"'nope'"),
        ({"marginals": [("a", "a")]}, "repeats a column"),
        ({"marginals": [("a", "b"), ("b", "a")]}, "same marginal"),
        ({"marginals": [()]}, "empty marginal"),
        ({"marginals": [("a",)], "n_marginals": 1}, "n_marginals"),
        ({"k": 4}, r"k=4 is larger than the number of columns \(3\)"),
        ({"domain": {"a": -1}}, r"domain\['a'\] = -1"),
        ({"domain": {"a": 0}}, r"domain\['a'\] = 0"),
        ({"domain": {"a": 2.5}}, r"domain\['a'\]"),
        ({"domain": {"a": True}}, r"domain\['a'\]"),
        ({"domain": {"a": "abc"}}, r"domain\['a'\]"),
        ({"domain": {"a": []}}, r"domain\['a'\] is empty"),
        ({"domain": {"a": [0, 1, 1]}}, r"'a'.*duplicates"),
        ({"domain": {"a": [0, None]}}, r"domain\['a'\] contains a missing value"),
        ({"domain": {"a": 2}}, r"Column 'a' has values outside its domain of integer codes 0\.\.1"),
        ({"domain": {"a": [0, 1]}}, r"Column 'a' has values outside its domain of 2 values"),
        ({"domain": {"a": 3}, "other": {"a": 0}}, r"other\['a'\] needs the column's values"),
        ({"domain": {"s": ["x", "y"]}, "other": {"s": "z"}}, r"other\['s'\] = 'z' is not one"),
        ({"other": {"nope": 1}}, r"other names columns not in X: \['nope'\]"),
        ({"handle_missing": ["nope"]}, r"handle_missing names columns not in X: \['nope'\]"),
        ({"domain": {"a": 3}, "bounds": {"a": (0, 3)}}, r"'a' is in domain and in bounds"),
        ({"bounds": {"a": (3, 0)}}, r"bounds\['a'\]"),
        ({"bounds": {"a": (0, 1)}, "bins": 2, "clip": False},
         r"Column 'a' has values outside its bounds \[0, 1\]"),
        ({"bins": {"a": [0, 2, 1]}}, r"bins\['a'\]"),
        ({"bins": {"a": [0, 3]}, "bounds": {"a": (0, 4)}}, r"bounds\['a'\].*disagrees"),
        ({"bounds": {"a": (0, 2)}, "bins": 5}, r"integer column 'a'.*fewer bins"),
        ({"bounds": {"s": (0, 2)}}, r"Column 's' has dtype"),
        ({"domain": {"s": 3}}, r"domain\['s'\] = 3 .*numeric column"),
        ({"n_marginals": 5, "k": 2}, r"n_marginals=5 .*3 eligible"),
        ({"max_cells": 1, "k": 2}, r"max_cells=1"),
    ],
)
def test_bad_inputs_raise_naming_the_culprit(params, match):
    X = pd.DataFrame({"a": [0, 1, 2], "b": [0, 1, 0], "s": ["x", "y", "x"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(ValueError, match=match):
            QueryWorkload(**{"k": 1, **params}).fit(X)


@pytest.mark.parametrize(
    "params",
    [{"k": 0}, {"k": 1.5}, {"n_marginals": 0}, {"max_cells": "rows"}, {"bins": 0},
     {"handle_missing": "drop"}, {"domain": [1, 2]}, {"clip": "yes"}],
)
def test_bad_params_rejected(params):
    X = pd.DataFrame({"a": [0, 1]})
    with pytest.raises(ValueError, match=next(iter(params))):
        QueryWorkload(**params).fit(X)


def test_missing_values_raise_naming_column():
    X = pd.DataFrame({"a": [0, 1], "s": ["x", None]})
    with pytest.raises(ValueError, match=r"Column 's' has missing values.*not declared") as err:
        QueryWorkload(domain={"a": 2, "s": ["x"]}, k=1).fit(X)
    assert "row" not in str(err.value)
    with pytest.raises(ValueError, match=r"Column 'a' has missing values"):
        QueryWorkload(domain={"a": 2}, k=1).fit(pd.DataFrame({"a": [0.0, np.nan]}))


def test_empty_and_duplicate_frames():
    with pytest.raises(ValueError, match="0 sample"):
        QueryWorkload(domain={"a": 2}, k=1).fit(pd.DataFrame({"a": pd.Series([], dtype=int)}))
    with pytest.raises(ValueError, match="0 feature"):
        QueryWorkload(k=1).fit(pd.DataFrame(index=range(3)))
    dup = pd.DataFrame([[0, 1], [1, 0]], columns=["a", "a"])
    with pytest.raises(ValueError, match=r"duplicate column names: \['a'\]"):
        QueryWorkload(domain={"a": 2}, k=1).fit(dup)


def test_transform_checks_columns_and_values():
    X = pd.DataFrame({"a": [0, 1], "s": ["x", "y"]})
    wl = QueryWorkload(domain={"a": 2, "s": ["x", "y"]}, k=1).fit(X)
    with pytest.raises(ValueError, match=r"missing \['s'\]"):
        wl.transform(X[["a"]])
    with pytest.raises(ValueError, match=r"unexpected \['z'\]"):
        wl.transform(X.assign(z=1))
    with pytest.raises(ValueError, match=r"Column 's' has values outside its domain") as err:
        wl.encode(pd.DataFrame({"a": [0], "s": ["wxyz"]}))
    assert "wxyz" not in str(err.value)
    with pytest.raises(ValueError, match=r"Column 'a' has non-numeric values") as err:
        wl.encode(pd.DataFrame({"a": [0, "secret"], "s": ["x", "y"]}))
    assert "secret" not in str(err.value) and "row" not in str(err.value)
    # column order is matched by name
    np.testing.assert_array_equal(wl.encode(X[["s", "a"]]), wl.encode(X))
    with pytest.raises(NotFittedError):
        QueryWorkload().encode(X)


# ---------------------------------------------------------------- estimator basics


def test_clone_get_params_and_pickle():
    wl = QueryWorkload(domain={"a": 2}, k=1, n_marginals=1, random_state=3)
    params = wl.get_params()
    assert params["domain"] == {"a": 2} and params["random_state"] == 3
    assert set(params) == {
        "domain", "k", "marginals", "n_marginals", "max_cells", "bins", "bounds", "clip",
        "handle_missing", "other", "points", "steps", "cuts", "clocks", "log_scale",
        "days_of_month", "derived", "decimals", "at_most", "at_least", "exactly_when", "only_when",
        "equal_when", "random_state",
    }
    cloned = clone(wl)
    assert cloned.get_params() == params and cloned is not wl
    X = pd.DataFrame({"a": [0, 1, 1]})
    fitted = pickle.loads(pickle.dumps(wl.fit(X)))
    np.testing.assert_allclose(fitted.answer(X), [1 / 3, 2 / 3])
    assert not hasattr(clone(wl), "layout_")


def test_sklearn_estimator_checks():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(QueryWorkload(k=1), on_fail=None)
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == []


def test_non_scalar_cells_are_an_error_naming_only_the_column():
    X = pd.DataFrame({"a": ["x", ["secret", 1], "y"]})
    with pytest.raises(TypeError, match=r"Column 'a' holds non-scalar values") as err:
        QueryWorkload(domain={"a": ["x", "y"]}, k=1).fit(X)
    assert "secret" not in str(err.value) and "row" not in str(err.value)


def test_arrays_get_the_synthesizers_column_names():
    from sklearn_privsyn import MWEM

    X = np.array([[0, "u"], [1, "v"], [1, "u"]], dtype=object)
    domain = {"x0": 2, "x1": ["u", "v"]}
    wl = QueryWorkload(domain=domain, k=2).fit(X)
    assert wl.columns_ == ("x0", "x1") and not hasattr(wl, "feature_names_in_")
    assert wl.encode(X).tolist() == [[0, 0], [1, 1], [1, 0]]
    # the same domain means the same columns inside a synthesizer
    est = MWEM(epsilon=1.0, workload=QueryWorkload(domain=domain, k=2), rounds=2,
               random_state=0).fit(X)
    assert est.workload_.columns_ == wl.columns_


def test_all_missing_float_column_asks_for_its_bounds():
    X = pd.DataFrame({"f": [np.nan, np.nan]})
    with pytest.raises(ValueError, match=r"Column 'f' has no finite values .*bounds\['f'\]"):
        QueryWorkload(k=1, handle_missing=["f"]).fit(X)
