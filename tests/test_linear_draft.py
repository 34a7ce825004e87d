"""The drafter of linear relations among numbers (``_sum_draft.draft_linear``): a date in
years of its year and month, a batter's total bases of his hits; nothing where the sums
already draft the relation, or where none holds exactly."""

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
    lambda X: 0.37 * X["a"] + X["b"],  # a weight that is no small fraction
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
