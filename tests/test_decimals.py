"""Decimals (sklearn_privsyn.decimals): synthetic numbers written as the real ones are.

Rounding at decode, derived sums of rounded sources, output only (the same fit and
measurements), the checks and their messages, the domain file and the drafter.
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.decimals import count_decimals, parse_decimals, with_sum_decimals
from sklearn_privsyn.domain_draft import draft_domain
from sklearn_privsyn.domain_file import parse_domain, workload_kwargs


def loan_table(n=2000, seed=0):
    """Amounts in cents, a rate with two decimals, a whole-number term and their total."""
    rng = np.random.default_rng(seed)
    principal = np.round(rng.gamma(2.0, 800.0, n), 2)
    interest = np.round(rng.gamma(2.0, 90.0, n), 2)
    X = pd.DataFrame({"principal": principal, "interest": interest,
                      "rate": np.round(rng.uniform(5.0, 30.0, n), 2),
                      "term": rng.choice([36, 60], n)})
    X["paid"] = X["principal"] + X["interest"]
    return X


def loan_workload(decimals):
    return QueryWorkload(bounds={"principal": (0.0, 20000.0), "interest": (0.0, 2000.0),
                                 "rate": (5.0, 30.0)},
                         domain={"term": [36, 60]},
                         derived={"paid": {"of": ["principal", "interest"], "sum": [1, 1]}},
                         decimals=decimals, k=2)


def written_decimals(series):
    """Most decimals of the column's values as a CSV writes them."""
    text = series.dropna().map(repr)
    return int(text.str.split(".").str[1].str.len().max())


def test_decoded_numbers_are_written_with_their_decimals():
    X = loan_table()
    wl = loan_workload({"principal": 2, "interest": 2, "rate": 1}).fit(X)
    rows = wl.decode(wl.encode(X), random_state=0)
    assert written_decimals(rows["principal"]) == 2 and written_decimals(rows["interest"]) <= 2
    assert written_decimals(rows["rate"]) == 1
    # the total of the rounded amounts is rounded too: no 1886.3999999999999
    assert wl.decimals_["paid"] == 2 and written_decimals(rows["paid"]) <= 2
    np.testing.assert_allclose(rows["paid"], rows["principal"] + rows["interest"], atol=1e-9)
    assert rows["rate"].between(5.0, 30.0).all() and rows["principal"].between(0, 20000).all()
    assert not np.signbit(rows[["principal", "interest", "rate"]].to_numpy()).any()


def test_rounding_is_output_only():
    # (declared decimals also set the finest grid of the numbers' round levels, a
    # measurement of its own: tests/test_numbers.py; here the synthesizer's alone)
    X = loan_table()

    def fit(decimals):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return AdaptiveProjection(epsilon=1.0, workload=loan_workload(decimals),
                                      number_share=0.0, random_state=0).fit(X)

    plain, rounded = fit(None), fit({"principal": 2, "interest": 2, "rate": 2})
    assert plain.ledger_.entries == rounded.ledger_.entries
    np.testing.assert_array_equal(plain.measurements_, rounded.measurements_)
    a, b = plain.sample(500, random_state=1), rounded.sample(500, random_state=1)
    for col in ("principal", "interest", "rate"):
        np.testing.assert_allclose(b[col], np.round(a[col], 2), atol=1e-9)
    assert a["term"].equals(b["term"])


def test_rounded_values_stay_within_bounds_of_more_decimals():
    X = pd.DataFrame({"x": np.random.default_rng(0).uniform(0.004, 0.996, 500)})
    wl = QueryWorkload(bounds={"x": (0.004, 0.996)}, bins={"x": 1}, decimals={"x": 2},
                       k=1).fit(X)
    rows = wl.decode(np.zeros((2000, 1), dtype=int), random_state=0)
    assert rows["x"].min() == 0.01 and rows["x"].max() == 0.99


def test_a_missing_value_stays_missing():
    X = loan_table()
    X.loc[X.index[::7], "rate"] = np.nan
    wl = QueryWorkload(bounds={"rate": (5.0, 30.0)}, handle_missing=["rate"],
                       decimals={"rate": 2}, k=1).fit(X[["rate"]])
    codes = wl.encode(X[["rate"]])
    rows = wl.decode(codes, random_state=0)
    assert rows["rate"].isna().sum() == X["rate"].isna().sum()
    assert written_decimals(rows["rate"]) <= 2


@pytest.mark.parametrize("decimals, match", [
    ({"nowhere": 2}, "decimals names a column not in X: 'nowhere'"),
    ({"term": -1}, r"decimals\['term'\] must be a whole number from 0 to 15"),
    ({"rate": 2.5}, r"decimals\['rate'\] must be a whole number"),
    ({"rate": True}, r"decimals\['rate'\] must be a whole number"),
])
def test_bad_decimals_name_the_column(decimals, match):
    with pytest.raises(ValueError, match=match):
        parse_decimals(decimals, loan_table(50))


def test_decimals_of_a_text_column_raise_naming_it():
    X = pd.DataFrame({"grade": ["A", "B"] * 10, "x": np.linspace(0, 1, 20)})
    with pytest.raises(ValueError, match=r"decimals\['grade'\]: column 'grade' does not hold "
                                         "numbers"):
        QueryWorkload(domain={"grade": ["A", "B"]}, bounds={"x": (0, 1)},
                      decimals={"grade": 1}, k=1).fit(X)


def test_a_sum_is_rounded_only_when_its_sources_are():
    X = loan_table(50)
    wl = loan_workload(None).fit(X)
    assert wl.decimals_ == {}
    assert with_sum_decimals({"principal": 2}, wl.derived_, X) == {"principal": 2}
    assert with_sum_decimals({"principal": 2, "interest": 1}, wl.derived_, X)["paid"] == 2
    # declared: the declaration wins
    assert with_sum_decimals({"principal": 2, "interest": 2, "paid": 0}, wl.derived_,
                             X)["paid"] == 0


@pytest.mark.parametrize("values, expected", [
    ([1.5, 2.25, 1e6], 2), ([3.0, 4.0], 0), ([0.1, 0.2, 0.30000000000000004], 1),
    ([1 / 3], None), ([np.nan, 2.5], 1), ([0.12345], None),
])
def test_count_decimals(values, expected):
    assert count_decimals(values, 4) == expected


def test_the_drafter_drafts_decimals_and_the_domain_file_reads_them():
    X = loan_table(300)
    X["ratio"] = X["principal"] / 7.0  # computed: no decimals drafted
    X["whole"] = np.round(X["rate"]) * 1.0  # whole floats: a step, not decimals
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = draft_domain(X)
    drafted = {c: e.get("decimals") for c, e in draft.items()}
    assert drafted["principal"] == 2 and drafted["rate"] == 2 and drafted["paid"] == 2
    assert drafted["ratio"] is None and drafted["whole"] is None and drafted["term"] is None
    assert "derived" in draft["paid"]
    kwargs = workload_kwargs(parse_domain(json.loads(json.dumps(draft))))
    assert kwargs["decimals"] == {"principal": 2, "interest": 2, "rate": 2, "paid": 2}


@pytest.mark.parametrize("count", [-1, 1.5, "2", 16, True])
def test_a_domain_file_with_bad_decimals_names_the_column(count):
    raw = {"rate": {"bounds": [5, 30], "bins": 4, "decimals": count}}
    with pytest.raises(ValueError, match=r"column 'rate': \"decimals\" must be a whole number"):
        parse_domain(raw, "domain file d.json")


def test_decimals_on_a_listed_column_are_refused_by_the_domain_file():
    with pytest.raises(ValueError, match="column 'grade'"):
        parse_domain({"grade": {"values": ["A", "B"], "decimals": 1}}, "domain file d.json")
