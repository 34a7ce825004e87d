"""Cuts: values where a binned column's bins must begin (sklearn_privsyn._number_spec).

A column derived from a number (an age group of an age) stays consistent with
the number's synthetic values only if no bin of the number straddles one of
its boundaries; here: the equal-width bins between cuts, the bins re-cut at
private quantiles, the drafter that finds the boundaries, the domain file,
errors, and the agreement of the synthetic rows.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn._number_spec import allocate_bins, cut_edges, interval_capacity
from sklearn_privsyn.domain_draft import MAX_CUTS, draft_domain, interval_cuts
from sklearn_privsyn.domain_file import parse_domain, workload_params

GROUPS = ["18-29", "30-39", "40-49", "50-59", "60+"]


def age_table(n=20000, seed=0):
    """Ages with their age group (an interval function of the age) and an unrelated score."""
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.gamma(6, 7, n) + 18), 18, 89).astype(np.int64)
    return pd.DataFrame({"age": age, "ageGroup": group_of(age),
                         "score": rng.integers(0, 11, n)})


def group_of(age):
    return np.asarray(GROUPS, dtype=object)[np.searchsorted([30, 40, 50, 60], age, side="right")]


def age_workload(cuts):
    return QueryWorkload(domain={"ageGroup": GROUPS, "score": list(range(11))},
                         bounds={"age": (18, 89)}, bins={"age": 10}, cuts=cuts, k=2)


def straddles(edges, cuts):
    """Whether a bin (a, b) holds a cut strictly inside it."""
    edges = np.asarray(edges)
    return any(np.any((edges[:-1] < c) & (c < edges[1:])) for c in cuts)


# ------------------------------------------------------------------ the bins


@pytest.mark.parametrize("n_bins, weights, capacity, expected", [
    (10, [1.0, 3.0], [100, 100], [3, 7]),       # highest averages: 1/3 and 3/7
    (3, [1.0, 1.0, 1.0, 1.0], [5, 5, 5, 5], [1, 1, 1, 1]),   # one an interval at least
    (6, [10.0, 1.0], [2, 100], [2, 4]),         # the first interval is full at 2
    (4, [0.0, 0.0], [3, 1], [3, 1]),            # no weight: the room decides
    (9, [1.0, 1.0], [2, 2], [2, 2]),            # every capacity full: fewer bins
])
def test_allocate_bins(n_bins, weights, capacity, expected):
    assert allocate_bins(n_bins, weights, capacity).tolist() == expected


def test_interval_capacity_counts_the_step_values():
    # [18, 30) holds 12 integers, [30, 40) 10, [40, 89] (closed) 50
    assert interval_capacity([18, 30, 40, 89], 1.0).tolist() == [12, 10, 50]
    assert interval_capacity([0, 0.5, 1.0], 0.25).tolist() == [2, 3]
    assert np.isinf(interval_capacity([0.0, 1.0, 2.0], None)).all()


def test_cut_edges_are_equal_width_between_cuts():
    assert cut_edges(18.0, 89.0, 10, []).tolist() == np.linspace(18, 89, 11).tolist()
    edges = cut_edges(18.0, 89.0, 10, [30.0, 40.0, 50.0, 60.0], 1.0)
    assert len(edges) == 11 and not straddles(edges, [30, 40, 50, 60])
    assert set([30.0, 40.0, 50.0, 60.0]) <= set(edges.tolist())
    # the widest interval (60 to 89) gets the most bins
    widths = np.diff(edges)
    assert np.isclose(widths[edges[:-1] >= 60], (89 - 60) / np.sum(edges[:-1] >= 60)).all()
    # more cuts than bins: one bin an interval
    assert cut_edges(0.0, 10.0, 2, [2.0, 4.0, 6.0], 1.0).tolist() == [0.0, 2.0, 4.0, 6.0, 10.0]


def test_the_workload_bins_never_straddle_a_cut():
    X = age_table(500)
    wl = age_workload({"age": [30, 40, 50, 60]}).fit(X)
    edges = wl.bin_edges_["age"]
    assert len(edges) == 11 and not straddles(edges, [30, 40, 50, 60])
    assert wl.cuts_["age"].tolist() == [30, 40, 50, 60]
    # more intervals than bins: the column gets one bin an interval
    wl = QueryWorkload(bounds={"age": (18, 89)}, bins={"age": 2}, cuts={"age": [30, 40, 50]},
                       k=1).fit(X[["age"]])
    assert wl.domain_sizes_["age"] == 4


def test_explicit_edges_must_hold_the_cuts():
    X = age_table(100)[["age"]]
    wl = QueryWorkload(bins={"age": [18, 30, 60, 89]}, cuts={"age": [30, 60]}, k=1).fit(X)
    assert wl.bin_edges_["age"].tolist() == [18, 30, 60, 89]
    with pytest.raises(ValueError, match=r"cuts\['age'\] must be edges of bins\['age'\]"):
        QueryWorkload(bins={"age": [18, 30, 60, 89]}, cuts={"age": [40]}, k=1).fit(X)


@pytest.mark.parametrize("cuts, match", [
    ([18], r"cuts\['age'\] = \[18\] must lie strictly inside the column's bounds"),
    ([95], "must lie strictly inside"),
    ([30, 30], r"cuts\['age'\] has duplicates"),
    ([30.5], r"must be multiples of its step 1"),
    (["x"], r"cuts\['age'\] must be a list of numbers"),
    ([np.nan], r"cuts\['age'\] must be a list of finite numbers"),
])
def test_bad_cuts_name_the_column(cuts, match):
    X = age_table(100)
    with pytest.raises(ValueError, match=match):
        age_workload({"age": cuts}).fit(X)


def test_cuts_of_a_column_encoded_by_its_values_are_refused():
    X = age_table(100)
    with pytest.raises(ValueError, match=r"cuts\['score'\] applies to binned numbers only"):
        age_workload({"score": [5]}).fit(X)


# ------------------------------------------------------------------ the synthetic rows


@pytest.mark.parametrize("number_share", ["auto", 0.0])
def test_bins_a_fit_re_cuts_keep_every_cut_and_the_rows_agree(number_share):
    X = age_table()
    agreement, edges = {}, {}
    for cuts in (None, {"age": [30, 40, 50, 60]}):
        est = AdaptiveProjection(epsilon=1.0, workload=age_workload(cuts),
                                 number_share=number_share, random_state=0).fit(X)
        edges[cuts is None] = est.workload_.bin_edges_["age"]
        S = est.sample(len(X), random_state=0)
        agreement[cuts is None] = (group_of(S["age"].to_numpy()) == S["ageGroup"]).mean()
    assert not straddles(edges[False], [30, 40, 50, 60])
    assert straddles(edges[True], [30, 40, 50, 60])  # without cuts some bin does
    assert agreement[False] >= 0.98
    assert agreement[True] < agreement[False] - 0.03


def test_points_found_privately_leave_a_bin_between_every_two_cuts():
    # a spike at 40 would take a bin's place; four cuts need five bins
    rng = np.random.default_rng(1)
    age = np.where(rng.random(5000) < 0.5, 40, rng.integers(18, 90, 5000))
    X = pd.DataFrame({"age": age})
    wl = QueryWorkload(bounds={"age": (18, 89)}, bins={"age": 6},
                       cuts={"age": [30, 40, 50, 60]}, k=1)
    est = AdaptiveProjection(epsilon=5.0, workload=wl, random_state=0).fit(X)
    fitted = est.workload_
    assert 40 in fitted.points_["age"]
    assert len(fitted.bin_edges_["age"]) - 1 >= 5
    assert not straddles(fitted.bin_edges_["age"], [30, 40, 50, 60])


# ------------------------------------------------------------------ drafting and the domain file


def test_interval_cuts_finds_the_boundaries_of_a_derived_column():
    X = age_table(2000)
    assert interval_cuts(X["age"], X["ageGroup"]) == [30.0, 40.0, 50.0, 60.0]
    assert interval_cuts(X["age"], X["score"].astype(str)) is None  # overlapping values
    assert interval_cuts(X["age"], pd.Series(["one"] * len(X))) is None  # one label
    # missing values on either side are left out
    age = X["age"].astype(float).where(np.arange(len(X)) % 7 != 0)
    assert interval_cuts(age, X["ageGroup"].where(np.arange(len(X)) % 5 != 0)) == [30, 40, 50, 60]


def _draft(frame, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return draft_domain(frame, **kwargs)


def test_draft_gives_a_number_the_cuts_of_its_derived_columns():
    rng = np.random.default_rng(0)
    educ = rng.integers(0, 21, 3000)
    level = np.select([educ < 12, educ == 12, educ < 16, educ == 16], ["<12", "12", "13-15", "16"],
                      ">16")
    X = age_table(3000).assign(educ=educ, level=level)
    X.loc[rng.random(3000) < 0.45, "educ"] = 12  # a spike: a point of its own
    X["level"] = np.where(X["educ"] == 12, "12", X["level"])
    # missing where their number is not: not derived columns, so the numbers get cuts
    X["ageGroup"] = X["ageGroup"].where(rng.random(3000) > 0.05)
    X["level"] = X["level"].where(rng.random(3000) > 0.05)
    draft = _draft(X)
    assert draft["age"]["cuts"] == [30, 40, 50, 60]
    # the interval [12, 13) holds only the point 12: the cut at 12 is dropped
    assert draft["educ"]["points"] == [12] and draft["educ"]["cuts"] == [13, 16, 17]
    assert "cuts" not in draft["score"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        wl = QueryWorkload(**workload_params(draft), k=2).fit(X)
    assert not straddles(wl.bin_edges_["age"], [30, 40, 50, 60])
    # missing where the number is (here: nowhere), the group is derived, with the same cuts
    draft = _draft(age_table(3000))
    assert draft["age"]["cuts"] == [30, 40, 50, 60] and draft["ageGroup"]["derived"]["of"] == "age"


def test_draft_leaves_out_a_derived_column_of_too_many_values():
    x = np.arange(4000)
    gaps = np.arange(4000) % 97 == 0  # the blocks miss values where x does not: not derived
    X = pd.DataFrame({"x": x, "block": pd.Series((x // 100).astype(str)).where(~gaps)})
    draft = _draft(X, max_categories=10)  # 40 labels: 39 cuts
    assert MAX_CUTS < 39 and "cuts" not in draft["x"]
    X = pd.DataFrame({"x": x, "block": pd.Series((x // 1000).astype(str)).where(~gaps)})
    assert _draft(X, max_categories=10)["x"]["cuts"] == [1000, 2000, 3000]


def test_cuts_in_a_domain_file_reach_the_workload():
    params = parse_domain({"age": {"bounds": [18, 89], "bins": 10, "cuts": [30, 60]}})
    assert params["cuts"] == {"age": [30, 60]}
    wl = QueryWorkload(**workload_params({"age": {"bounds": [18, 89], "cuts": [30, 60]}}),
                       k=1).fit(age_table(100)[["age"]])
    assert wl.cuts_["age"].tolist() == [30, 60]


@pytest.mark.parametrize("entry, match", [
    ({"bounds": [0, 10], "cuts": [10]}, "cuts must lie strictly inside the bounds"),
    ({"bounds": [0, 10], "cuts": "5"}, "cuts must be a list of numbers"),
    ({"bounds": [0, 10], "cuts": [False]}, "cuts must be a list of numbers"),
    ({"values": [1, 2], "cuts": [1]}, "an entry with 'values' takes only"),
])
def test_bad_cuts_in_a_domain_file_name_the_column(entry, match):
    with pytest.raises(ValueError, match=rf"column 'x': {match}"):
        parse_domain({"x": entry})
