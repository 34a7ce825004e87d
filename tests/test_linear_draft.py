"""The drafter of linear relations among numbers (``_sum_draft.draft_linear``): a date in
years of its year and month, a batter's total bases of his hits, a call's charge of its
minutes; nothing where the sums already draft the relation, or where none holds exactly."""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn._sum_draft import draft_linear
from sklearn_privsyn.domain_draft import draft_domain
from sklearn_privsyn.domain_file import workload_params


def _draft(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the draft is read from the data
        return draft_domain(X)


def test_a_date_of_its_year_and_month_is_derived_and_every_row_agrees():
    # txhousing's date is year + (month - 1) / 12, kept to six decimals; drafted before
    # the intervals, the year stays modelled (not an interval of the date) and every
    # synthetic month falls in its date
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"city": rng.choice(["a", "b", "c"], n), "year": rng.integers(2000, 2016, n),
                      "month": rng.integers(1, 13, n), "sales": rng.integers(10, 500, n)})
    X["date"] = np.round(X["year"] + (X["month"] - 1) / 12, 6)
    draft = _draft(X)
    assert draft["date"]["derived"] == {"of": ["year", "month"],
                                        "expression": "`year` + `month` / 12 - 1 / 12"}
    assert "derived" not in draft["year"] and "derived" not in draft["month"]
    with pytest.warns(PrivacyLeakWarning):  # the draft's marks
        est = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(**workload_params(draft)),
                                 random_state=0).fit(X)
    rows = est.sample(500, random_state=0)
    np.testing.assert_allclose(rows["date"], rows["year"] + (rows["month"] - 1) / 12)


def test_a_total_of_weighted_counts_is_derived_and_a_part_is_not():
    # total bases: hit + double + 2 triple + 3 home_run; the hits are the total less the
    # rest as well, but a part (a negative weight) is never the derived column
    rng = np.random.default_rng(1)
    n = 800
    hit = rng.integers(0, 200, n)
    X = pd.DataFrame({"hit": hit, "double": (hit * rng.uniform(0, 0.25, n)).astype(int),
                      "triple": (hit * rng.uniform(0, 0.05, n)).astype(int),
                      "home_run": (hit * rng.uniform(0, 0.15, n)).astype(int)})
    X["total_base"] = X["hit"] + X["double"] + 2 * X["triple"] + 3 * X["home_run"]
    draft = _draft(X)
    assert draft["total_base"]["derived"] == {"of": ["hit", "double", "triple", "home_run"],
                                              "sum": [1, 1, 2, 3]}
    assert all("derived" not in draft[c] for c in ["hit", "double", "triple", "home_run"])


@pytest.mark.parametrize("make", [
    lambda X: X["a"] + X["b"] + X["c"],  # a plain total of three: sum_of drafts it
    lambda X: np.sqrt(0.02) * X["a"] + X["b"],  # a weight that is no short decimal
    lambda X: X["a"] + X["b"] / 12 + np.random.default_rng(0).normal(0, 0.3, len(X)),  # near
])
def test_no_linear_relation_where_the_sums_draft_it_or_none_holds(make):
    rng = np.random.default_rng(2)
    X = pd.DataFrame({c: rng.integers(0, 1000, 500) for c in "abc"})
    X["t"] = make(X)
    domain = {c: {"bounds": [-10**5, 10**5]} for c in X}
    assert draft_linear(X, domain, {c: X[c].isna().to_numpy() for c in X}, "read") == set()
    assert all("derived" not in e for e in domain.values())


def test_a_column_a_formula_cannot_name_is_no_source_of_a_linear_relation():
    # a name holding a backtick cannot be written in a formula: the relation is not drafted
    X = pd.DataFrame({"y`r": [2000, 2000, 2001, 2003, 2003] * 8, "month": [1, 7, 12, 3, 5] * 8})
    X["date"] = X["y`r"] + (X["month"] - 1) / 12
    domain = {c: {"bounds": [0, 3000]} for c in X}
    draft_linear(X, domain, {c: X[c].isna().to_numpy() for c in X}, "read")
    assert all("derived" not in entry for entry in domain.values())


def _calls(rate, n=2000, seed=3):
    # a telephone company's table: minutes in tenths, each charged at a rate to the cent
    rng = np.random.default_rng(seed)
    minutes = np.round(rng.gamma(9.0, 20.0, n), 1)
    return pd.DataFrame({"minutes": minutes, "charge": np.round(rate * minutes, 2),
                         "calls": rng.integers(0, 150, n),
                         "plan": rng.choice(["basic", "plus"], n)})


@pytest.mark.parametrize("rate, text", [(0.17, "17 * `minutes` / 100"),
                                        (0.085, "17 * `minutes` / 200"),
                                        (0.27, "27 * `minutes` / 100")])
def test_a_charge_at_a_rate_is_derived_from_its_minutes_and_rows_keep_it(rate, text):
    # at 0.27 a minute the minutes are 3.7 times the charge to their tenth as well: the
    # charge is still the derived one, since every tenth of a minute lands on its own cent
    X = _calls(rate)
    draft = _draft(X)
    assert draft["charge"]["derived"] == {"of": ["minutes"], "expression": text}
    assert draft["charge"]["decimals"] == 2
    assert "derived" not in draft["minutes"]
    with pytest.warns(PrivacyLeakWarning):  # the draft's marks
        est = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(**workload_params(draft)),
                                 random_state=0).fit(X)
    rows = est.sample(1000, random_state=0)
    # to the cent, as in the real rows (a charge of half a cent either way on a tie)
    assert np.all(np.abs(rows["charge"] - rate * rows["minutes"]) <= 0.005 + 1e-9)
    assert np.array_equal(rows["charge"], np.round(rows["charge"], 2))


def test_a_difference_from_a_constant_is_derived_from_one_source():
    # an age of a birth year in a survey of one year: 2020 - birth_year on every row
    rng = np.random.default_rng(4)
    X = pd.DataFrame({"birth_year": rng.integers(1930, 2002, 500),
                      "income": rng.integers(0, 90000, 500)})
    X["age"] = 2020 - X["birth_year"]
    domain = {c: {"bounds": [-10**5, 10**5]} for c in X}
    assert draft_linear(X, domain, {c: X[c].isna().to_numpy() for c in X}, "read") \
        == {"birth_year"}
    assert domain["age"]["derived"] == {"of": ["birth_year"],
                                        "expression": "-`birth_year` + 2020"}


def test_a_copy_of_a_constant_column_is_no_relation():
    # a constant column is any multiple of another constant: no source, no relation
    X = pd.DataFrame({"a": [5.0] * 60, "b": [10.0] * 60, "c": np.arange(60.0) % 7})
    domain = {c: {"bounds": [0, 100]} for c in X}
    assert draft_linear(X, domain, {c: X[c].isna().to_numpy() for c in X}, "read") == set()


@pytest.mark.parametrize("single", [False, True])
def test_a_square_is_derived_in_double_and_single_precision(single):
    # econometric tables carry an age squared and an income squared beside them
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"age": rng.integers(25, 65, 800).astype(float),
                      "inc": rng.uniform(10, 200, 800)})
    X = X.astype(np.float32) if single else X
    X["agesq"], X["incsq"] = X["age"] ** 2, X["inc"] ** 2  # float32: rounded to 24 bits
    draft = _draft(X.astype(float))
    assert draft["agesq"]["derived"] == {"of": "age", "apply": "square"}
    assert draft["incsq"]["derived"] == {"of": "inc", "apply": "square"}


def test_a_survey_score_counts_its_unanswered_items_as_zero():
    # the GSS's sumnat adds up eighteen spending items (-1 too little, 0, 1 too much), each
    # asked of part of the sample only, and sumnatsoc ten of them: drafted as sums counting a
    # missing item as 0, so that every synthetic score is the sum of its synthetic answers
    rng = np.random.default_rng(3)
    n = 800
    items = [f"item{i}" for i in range(8)]
    X = pd.DataFrame({c: rng.choice([-1.0, 0.0, 1.0], n) for c in items})
    for c in items:
        X.loc[rng.random(n) < 0.3, c] = np.nan
    X["age"] = rng.integers(18, 90, n)
    X["total"] = X[items].fillna(0).sum(axis=1).astype(int)
    X["social"] = X[items[:3]].fillna(0).sum(axis=1).astype(int)
    draft = _draft(X)
    assert draft["total"]["derived"] == {"of": items, "sum": [1] * 8, "missing": 0}
    assert draft["social"]["derived"] == {"of": items[:3], "sum": [1] * 3, "missing": 0}
    with pytest.warns(PrivacyLeakWarning):  # the draft's marks
        est = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(**workload_params(draft)),
                                 random_state=0).fit(X)
    rows = est.sample(500, random_state=0)
    assert (rows["total"] == rows[items].fillna(0).sum(axis=1)).all()
    assert rows["total"].dtype == X["total"].dtype


def test_no_score_where_the_missing_answers_would_have_to_count():
    # the total of the answers given, scaled to all items (a mean score), is no sum
    rng = np.random.default_rng(4)
    n = 800
    X = pd.DataFrame({f"q{i}": rng.choice([1.0, 2.0, 3.0], n) for i in range(5)})
    for c in X.columns:
        X.loc[rng.random(n) < 0.2, c] = np.nan
    X["mean"] = np.round(X.mean(axis=1) * 5, 4)
    assert "derived" not in _draft(X)["mean"]
