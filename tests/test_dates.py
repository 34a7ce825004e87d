"""Days of the month (sklearn_privsyn.dates): no synthetic February 30.

Here: month lengths (leap years), the redraw of a day past its month's end
(only those days, uniformly among the month's days, in the column's dtype), the
workload and estimator rows, the errors, the domain file and the drafter.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.dates import MONTH_LENGTHS, DayOfMonth, is_leap_year, parse_days_of_month
from sklearn_privsyn.domain_draft import draft_domain
from sklearn_privsyn.domain_file import parse_domain, workload_params

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_privsyn.PrivacyLeakWarning")


def calendar(n=3000, seed=0, year=2013):
    """Dates of one year, and a number that grows with the day."""
    rng = np.random.default_rng(seed)
    month = rng.integers(1, 13, n)
    lengths = np.array(MONTH_LENGTHS)[month - 1] + ((month == 2) & is_leap_year(year))
    day = np.floor(rng.random(n) * lengths).astype(int) + 1
    return pd.DataFrame({"year": np.full(n, year), "month": month, "day": day,
                         "x": day + rng.normal(size=n)})


@pytest.mark.parametrize("year, leap", [(2013, False), (2012, True), (1900, False),
                                        (2000, True)])
def test_leap_years_follow_the_gregorian_rule(year, leap):
    assert bool(is_leap_year(year)) is leap
    rows = pd.DataFrame({"year": [year], "month": [2], "day": [29]})
    assert DayOfMonth("day", "month", "year").month_lengths(rows)[0] == (29 if leap else 28)


def test_only_days_past_the_months_end_are_redrawn_uniformly_among_its_days():
    n = 31000
    rows = pd.DataFrame({"month": np.r_[np.full(n, 2), [4, 1, np.nan]],
                         "day": np.r_[np.full(n, 30), [30, 31, 31]]})
    kept = DayOfMonth("day", "month").keep_in_month(rows, np.random.default_rng(0))
    assert kept.dtype == rows["day"].dtype
    assert kept.iloc[n:].tolist() == [30, 31, 31]  # within their months, or no month
    counts = np.bincount(kept.iloc[:n].astype(int), minlength=30)[1:]
    assert counts.size == 29 and np.abs(counts / n - 1 / 29).max() < 0.005


def test_a_workload_decodes_days_that_exist_in_their_months():
    X = calendar()
    kwargs = dict(domain={"month": list(range(1, 13)), "year": [2013]},
                  bounds={"day": (1, 31), "x": (-5, 40)}, k=2)
    plain = QueryWorkload(**kwargs).fit(X)
    # every (month, day bin) pair: the last bin holds the 29th to the 31st in every month
    codes = np.array([[0, m, d, 0] for m in range(12) for d in range(10)] * 200)
    assert (plain.decode(codes, random_state=0).pipe(
        lambda t: t["day"] > t["month"].map(dict(zip(range(1, 13), MONTH_LENGTHS))))).any()
    wl = QueryWorkload(**kwargs, days_of_month={"day": ["year", "month"]}).fit(X)
    out = wl.decode(codes, random_state=0)
    lengths = out["month"].map(dict(zip(range(1, 13), MONTH_LENGTHS)))
    assert (out["day"] <= lengths).all() and out["day"].dtype == X["day"].dtype
    assert wl.days_of_month_ == (DayOfMonth("day", "month", "year"),)
    # the other columns and the days already in their months are decoded as before
    before = plain.decode(codes, random_state=0)
    inside = before["day"] <= lengths
    pd.testing.assert_frame_equal(out[inside], before[inside])
    # the day alone comes with its year and month, and keeps its month
    some = wl.decode(codes, random_state=0, columns=["day"])
    assert list(some.columns) == ["year", "month", "day"]
    assert (some["day"] <= some["month"].map(dict(zip(range(1, 13), MONTH_LENGTHS)))).all()


def test_synthetic_rows_of_an_estimator_keep_every_day_in_its_month():
    X = calendar(2000)
    wl = QueryWorkload(domain={"month": list(range(1, 13)), "year": [2013]},
                       bounds={"day": (1, 31), "x": (-5, 40)}, k=2,
                       days_of_month={"day": ["year", "month"]})
    rows = AdaptiveProjection(epsilon=0.1, workload=wl, random_state=0).fit(X).sample(
        5000, random_state=1)
    assert (rows["day"] <= rows["month"].map(dict(zip(range(1, 13), MONTH_LENGTHS)))).all()


@pytest.mark.parametrize("spec, match", [
    ({"day": "nope"}, r"days_of_month\['day'\] names columns not in X: \['nope'\]"),
    ({"day": ["year", "month", "x"]}, r"must be a month column or \[year, month\]"),
    ({"day": "day"}, "three different columns"),
    (["day"], "must be a dict"),
])
def test_bad_declarations_name_the_column(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_days_of_month(spec, ["year", "month", "day", "x"])


def test_a_derived_day_or_month_is_refused():
    wl = QueryWorkload(bounds={"day": (1, 31)}, k=1, days_of_month={"day": "month"},
                       derived={"month": {"of": "day", "floordiv": 3}})
    with pytest.raises(ValueError, match=r"days_of_month names derived columns \['month'\]"):
        wl.fit(calendar())


def test_a_domain_file_declares_days_of_their_months():
    params = parse_domain({"month": list(range(1, 13)), "year": [2013],
                           "day": {"bounds": [1, 31], "day_of": ["year", "month"]},
                           "x": {"bounds": [-5, 40]}})
    assert params["days_of_month"] == {"day": ["year", "month"]}
    assert workload_params({"m": [1, 2], "d": {"values": [1, 31], "day_of": "m"}})[
        "days_of_month"] == {"d": "m"}
    with pytest.raises(ValueError, match="\"day_of\" must be the month's column"):
        parse_domain({"m": [1, 2], "d": {"bounds": [1, 31], "day_of": 3}})


@pytest.mark.parametrize("year, expected", [(2013, ["year", "month"]), (None, "month")])
def test_the_drafter_declares_a_day_beside_its_month(year, expected):
    X = calendar(4000)
    if year is None:  # a leap day without a year column: the month alone
        X = X.drop(columns="year")
        X.loc[X.index[X["month"] == 2][0], "day"] = 29
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = draft_domain(X)
        other = draft_domain(X.assign(day=X["day"].where(X["month"] != 2, 30)))
    assert draft["day"]["day_of"] == expected
    assert "day_of" not in other["day"] and "day_of" not in draft["x"]
    wl = QueryWorkload(**workload_params(draft), k=2).fit(X)
    assert wl.days_of_month_[0].day == "day"
