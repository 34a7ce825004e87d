"""Tests of domain drafting (sklearn_privsyn.domain_draft) and budgeted marginals."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn.domain_file import parse_domain, workload_params
from sklearn_privsyn.domain_draft import MARK, draft_domain
from sklearn_privsyn.cell_budget import budgeted_marginals, budgeted_workload


def _draft(frame, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return draft_domain(frame, **kwargs)


@pytest.mark.parametrize(
    "values, kwargs, expected",
    [
        (["b", "a", "b", None], {}, {"values": ["a", "b"], "missing": True, MARK: True}),
        # that a column has missing values was read from the data: marked
        ([True, None, False], {}, {"values": [False, True], "missing": True, MARK: True}),
        ([1.5, np.nan, 2.5], {}, {"values": [1.5, 2.5], "missing": True, MARK: True}),
        ([3, 1, 3, 2], {}, {"values": [1, 2, 3], MARK: True}),
        ([0.5, 1.5, 0.5], {}, {"values": [0.5, 1.5], MARK: True}),
        # an integer column never gets more bins than integers in its range
        ([0, 1, 2, 3], {"max_categories": 2, "bins": 10, "point_share": 1},
         {"bounds": [0, 3], "bins": 4, MARK: True}),
        # floats written with one decimal: written so in the synthetic rows
        ([0.5, 2.5, 10.0], {"max_categories": 2, "bins": 4, "point_share": 1},
         {"bounds": [0.5, 10.0], "bins": 4, "decimals": 1, MARK: True}),
        # common values become points, in the place of bins (at most half of them)
        ([0, 0, 0, 0, 5, 17, 30, 42], {"max_categories": 2, "bins": 4, "point_share": 0.2},
         {"bounds": [0, 42], "bins": 3, "points": [0], MARK: True}),
        ([0, 0, 0, 5, 5, 5, 2, 9], {"max_categories": 2, "bins": 4, "point_share": 0.3},
         {"bounds": [0, 9], "bins": 2, "points": [0, 5], MARK: True}),
        # a smooth peak is no spike: 0 and 1 are as common as each other
        ([0, 0, 0, 1, 1, 1, 5, 9], {"max_categories": 2, "bins": 4, "point_share": 0.3},
         {"bounds": [0, 9], "bins": 4, MARK: True}),
        # whole numbers in a float column (missing values): step 1
        ([0.0, 2.0, 7.0, 11.0, np.nan], {"max_categories": 2, "point_share": 1},
         {"bounds": [0, 11], "bins": 10, "step": 1, "missing": True, MARK: True}),
        ([True, False], {}, {"values": [False, True]}),
    ],
)
def test_draft_rules(values, kwargs, expected):
    assert _draft(pd.DataFrame({"c": values}), **kwargs)["c"] == expected


def test_draft_warns_naming_the_columns_read_from_the_data():
    frame = pd.DataFrame({"flag": [True, False], "city": ["x", "y"], "n": [1, 2]})
    with pytest.warns(PrivacyLeakWarning, match=r"\['city', 'n'\] was read from the data"):
        draft = draft_domain(frame)
    assert list(draft) == ["flag", "city", "n"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        draft_domain(frame[["flag"]])  # a dtype's values are public: no warning


@pytest.mark.parametrize(
    "frame, match",
    [
        (pd.DataFrame({"empty": [np.nan, np.nan]}), "Column 'empty' has no non-missing value"),
        (pd.DataFrame({"big": [1.0, np.inf]}), "Column 'big' has an infinite value"),
        ([[1, 2]], "X must be a DataFrame"),
    ],
)
def test_draft_errors_name_the_column(frame, match):
    with pytest.raises((ValueError, TypeError), match=match):
        _draft(frame)


def test_draft_is_a_domain_the_workload_reads():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"s": rng.choice(["u", "v"], 50), "i": rng.integers(0, 1000, 50),
                          "f": rng.normal(size=50), "few": rng.integers(0, 3, 50)})
    params = parse_domain(_draft(frame, bins=5))
    assert params["read_from_data"] == ["s", "i", "f", "few"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every column has a domain: nothing learned at fit
        wl = QueryWorkload(domain=params["domain"], bounds=params["bounds"],
                           bins=params["bins"], k=2).fit(frame)
    assert wl.domain_sizes_ == {"s": 2, "i": 5, "f": 5, "few": 3}


def _total_cells(marginals, sizes):
    return sum(math.prod(sizes[c] for c in m) for m in marginals)


def test_budgeted_marginals_respects_both_limits_and_the_seed():
    sizes = {f"c{i}": s for i, s in enumerate([2, 3, 5, 10, 40, 100, 7, 4])}
    choice = budgeted_marginals(sizes, k=3, max_cells=500, cell_budget=2000, random_state=0)
    three_way = [m for m in choice.marginals if len(m) == 3]
    assert all(math.prod(sizes[c] for c in m) <= 500 for m in three_way)
    assert _total_cells(three_way, sizes) <= 2000
    assert choice.n_cells == _total_cells(choice.marginals, sizes)
    assert 0 < len(three_way) < choice.n_eligible
    eligible = [m for m in itertools.combinations(sizes, 3)
                if math.prod(sizes[c] for c in m) <= 500]
    assert choice.n_eligible == len(eligible)
    assert choice.n_too_big == math.comb(8, 3) - len(eligible)
    assert set(three_way) <= set(eligible)
    assert list(three_way) == sorted(three_way, key=eligible.index)
    # c5 (100 codes) is in no 3-way marginal of at most 500 cells: the budget left holds
    # none of its 2-way ones, so it gets its 1-way marginal
    assert choice.covered == ("c5",) and choice.marginals[len(three_way):] == (("c5",),)
    again = budgeted_marginals(sizes, k=3, max_cells=500, cell_budget=2000, random_state=0)
    assert again == choice
    other = budgeted_marginals(sizes, k=3, max_cells=500, cell_budget=2000, random_state=1)
    assert other.marginals != choice.marginals


@pytest.mark.parametrize("cell_budget, cover", [
    (20_000, (("c0", "c5"), ("c1", "c5"), ("c2", "c5"), ("c5", "c7"))),  # its 2-way ones that fit
    (2_000, (("c5",),)),  # no budget left for them: its 1-way marginal
])
def test_budgeted_marginals_cover_a_column_in_none_of_them(cell_budget, cover):
    # a column in no chosen marginal would be drawn uniformly (mlbbat10's triples, 14
    # values, in no 3-way marginal of at most 1,199 cells: a median of 6.5 against 0)
    sizes = {f"c{i}": s for i, s in enumerate([2, 3, 5, 10, 40, 100, 7, 4])}
    choice = budgeted_marginals(sizes, k=3, max_cells=500, cell_budget=cell_budget,
                                random_state=0)
    assert {c for m in choice.marginals for c in m} == set(sizes)
    assert choice.covered == ("c5",)
    assert choice.marginals[-len(cover):] == cover
    assert all(len(m) == 3 for m in choice.marginals[:-len(cover)])
    assert "lower-order marginals added for the columns in none of them: 'c5'" in (
        choice.describe())


def test_budgeted_workload_measures_every_column_but_the_derived_ones():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(18, 80, 300), "sex": rng.choice(["F", "M"], 300),
                      "job": rng.choice(["a", "b", "c"], 300)})
    X["band"] = np.where(X["age"] < 40, "young", "old")
    params = parse_domain({"age": {"bounds": [18, 80], "bins": 4},
                           "sex": {"values": ["F", "M"]}, "job": {"values": ["a", "b", "c"]},
                           "band": {"derived": {"of": "age", "intervals": {
                               "cuts": [40], "labels": ["young", "old"]}}}})
    workload, choice = budgeted_workload(params, X, k=2, cell_budget=15, random_state=0)
    sizes = {"age": 4, "sex": 2, "job": 3}
    assert choice == budgeted_marginals(sizes, k=2, cell_budget=15, n_rows=300,
                                        random_state=0)
    assert workload.marginals == list(choice.marginals) and workload.random_state == 0
    assert "band" not in {c for m in choice.marginals for c in m}
    assert workload.fit(X).derived_  # the derived column is computed, not measured


def test_budgeted_marginals_cover_each_column_too_big_for_any_marginal():
    # 1-way marginals (k=1) over the limit: each such column gets its own 1-way marginal
    choice = budgeted_marginals({"a": 3, "b": 50, "c": 4, "d": 60}, k=1, max_cells=10)
    assert choice.marginals == (("a",), ("c",), ("b",), ("d",))
    assert choice.covered == ("b", "d") and choice.n_cells == 117 and choice.n_added == 2
    assert choice.describe().startswith("2 of 2 eligible 1-way marginals")


def test_budgeted_marginals_keeps_all_that_fit_and_uses_n_rows():
    sizes = {"a": 2, "b": 3, "c": 4}
    choice = budgeted_marginals(sizes, k=2, n_rows=8)  # max_cells defaults to n_rows
    assert choice.marginals == (("a", "b"), ("a", "c"))
    assert choice.max_cells == 8 and choice.n_too_big == 1


def test_budgeted_marginals_lowers_k_when_nothing_fits():
    choice = budgeted_marginals({"a": 10, "b": 10, "c": 10}, k=3, max_cells=150)
    assert choice.k == 2 and len(choice.marginals) == 3


def test_budgeted_marginals_error_names_the_smallest_column():
    with pytest.raises(ValueError, match=r"more than 20 codes \(the smallest, 'b', has 50\)"):
        budgeted_marginals({"a": 100, "b": 50}, k=2, max_cells=20)


@pytest.mark.parametrize("values, step", [
    (np.arange(0, 360, 10), 10),  # wind directions in tens of degrees
    (np.arange(10, 170, 5).astype(float), 5),  # storm winds in 5-knot steps, as floats
    (np.arange(1000, 40001, 25), 25),  # loans in multiples of $25
    (np.arange(0, 100), None),  # every whole number: no step (an integer column)
])
def test_whole_numbers_with_a_common_divisor_get_it_as_their_step(values, step):
    rng = np.random.default_rng(9)
    X = pd.DataFrame({"x": rng.choice(values, 3000)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the draft is read from the data
        entry = draft_domain(X)["x"]
    assert entry.get("step") == step
    if step:
        workload = QueryWorkload(**workload_params({"x": entry}), k=1)
        rows = AdaptiveProjection(epsilon=1.0, workload=workload, random_state=0).fit(
            X).sample(2000, random_state=0)
        assert (rows["x"] % step == 0).all()  # every synthetic value on the grid


def _knots(rng, size):
    """Wind speeds in whole knots written in miles an hour, and one sensor fault of 911 knots."""
    knots = np.concatenate([rng.poisson(9, size - 1), [911]])
    return knots * 1.15078


@pytest.mark.parametrize("make, step", [
    (_knots, 1.15078),
    (lambda rng, size: 2000 + rng.integers(0, 190, size) / 12, 1 / 12),  # months
    (lambda rng, size: rng.integers(-40, 80, size) * 1.15078, 1.15078),  # below 0 too
    (lambda rng, size: rng.integers(-40, 80, size) * 0.5, None),  # halves: one decimal says it
    (lambda rng, size: rng.integers(0, 2000, size) / 100, None),  # cents: two decimals
    (lambda rng, size: rng.integers(20 * 365, 70 * 365, size) / 365.25, None),  # days as years
    (lambda rng, size: rng.normal(50, 10, size), None),  # measured to the last bit
])
def test_numbers_filling_a_spacing_no_decimals_write_get_it_as_their_step(make, step):
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"x": make(rng, 3000)})
    entry = _draft(X)["x"]
    assert entry.get("step") == (None if step is None else pytest.approx(step, rel=1e-12))
    if step:
        assert "decimals" not in entry
        workload = QueryWorkload(**workload_params({"x": entry}), k=1)
        rows = AdaptiveProjection(epsilon=1.0, workload=workload, random_state=0).fit(
            X).sample(2000, random_state=0)
        multiples = rows["x"].to_numpy() / step
        assert np.abs(multiples - np.round(multiples)).max() < 1e-6  # every value on the grid
        assert rows["x"].between(*entry["bounds"]).all()
        common = X["x"].round(9).mode()[0]  # the most common real value is drawn exactly
        assert (rows["x"].round(9) == common).mean() > 0.5 * (X["x"].round(9) == common).mean()


def test_an_isolated_extreme_of_a_few_rows_is_left_outside_the_drafted_bounds():
    rng = np.random.default_rng(2)
    speeds = np.r_[rng.poisson(9, 4999), 911] * 1.15078  # one faulty reading of 1,048 mph
    X = pd.DataFrame({"wind": speeds})
    entry = _draft(X)["wind"]
    assert entry["bounds"] == [0.0, speeds[:-1].max()]
    workload = QueryWorkload(**workload_params({"wind": entry}), k=1)
    rows = AdaptiveProjection(epsilon=0.1, workload=workload, random_state=0).fit(X).sample(
        5000, random_state=0)
    assert rows["wind"].between(*entry["bounds"]).all()
    assert abs(rows["wind"].median() - X["wind"].median()) < 5  # the bins cut where rows are
    # held by 4 rows, or by one row of 500 (0.2%), or below: the extreme is a bound
    assert _draft(pd.concat([X] + [X.iloc[[-1]]] * 3))["wind"]["bounds"][1] == speeds[-1]
    few = pd.DataFrame({"x": np.r_[rng.normal(20, 5, 499), 1000.0]})
    assert _draft(few)["x"]["bounds"][1] == 1000.0
    assert _draft(X.assign(wind=-X["wind"]))["wind"]["bounds"] == [-speeds[:-1].max(), -0.0]
