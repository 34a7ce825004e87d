"""Tests of the domain file (sklearn_privsyn.domain_file): parsing, workload keywords, round trip."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import FEM, PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn.domain_draft import MARK, draft_domain
from sklearn_privsyn.domain_file import dump_domain, parse_domain, read_domain, workload_params

FAST = {"solver": "brute", "rounds": 4, "samples_per_round": 3}


@pytest.mark.parametrize(
    "entry, domain, bounds, missing, other",
    [
        (3, 3, None, False, None),
        ({"size": 3, "missing": True}, 3, None, True, None),
        (["x", 1], ["x", 1], None, False, None),
        ({"values": ["x", "y"], "missing": False}, ["x", "y"], None, False, None),
        ({"values": ["x", "Other"], "other": "Other", "missing": True},
         ["x", "Other"], None, True, "Other"),
        ({"values": [1, 2, 99], "other": 99}, [1, 2, 99], None, False, 99),
        ({"bounds": [0, 5], "bins": 2, "missing": True}, None, (0.0, 5.0), True, None),
    ],
)
def test_parse_domain_forms(entry, domain, bounds, missing, other):
    params = parse_domain({"c": entry, "d": 2})
    assert params["columns"] == ["c", "d"]
    assert params["domain"].get("c") == domain
    assert params["bounds"].get("c") == bounds
    assert params["missing"] == (["c"] if missing else [])
    assert params["other"].get("c") == other
    assert params["read_from_data"] == []


@pytest.mark.parametrize(
    "entry, match",
    [
        ({"values": ["x"], MARK: "yes"}, "'read_from_data' must be true or false"),
        ({"values": ["x"], "missing": "yes"}, "\"missing\" must be true or false"),
        ({"values": ["x"], "missing": 1}, "\"missing\" must be true or false"),
        ({"values": ["x", "y"], "other": "z"}, "\"other\" must be one of the column's values"),
        # JSON types count: 1 is not "1", and true is not 1
        ({"values": ["1", "2"], "other": 1}, "\"other\" must be one of the column's values"),
        ({"values": [1, 2], "other": True}, "\"other\" must be one of the column's values"),
        ({"bounds": [0, 1], "other": 0}, "\"other\" needs the column's \"values\" listed"),
        ({"size": 3, "other": 0}, "\"other\" needs the column's \"values\" listed"),
        ({"values": ["x"], "bins": 3},
         r"an entry with 'values' takes only \['at_least', 'at_most', 'day_of', 'equal_when', "
         r"'exactly_when', 'missing', 'only_when', 'other'\]"),
        ({"size": 3, "bounds": [0, 1]}, "exactly one of \"size\", \"values\", \"bounds\" or \"derived\""),
        ({"missing": True}, "exactly one of \"size\", \"values\", \"bounds\" or \"derived\""),
        ({"values": 3}, "\"values\" must be a list"),
        ({"values": []}, "the list of values is empty"),
        ({"values": ["x", "x"]}, "duplicates"),
        ({"values": ["x", None]}, "values must be strings or numbers"),
        ({"size": 0}, "domain size must be an int of at least 1"),
        ({"size": "3"}, "domain size must be an int of at least 1"),
        ({"bounds": [1, 1]}, r"bounds must be \[lo, hi\] with lo < hi"),
        ({"bounds": [0, 1], "bins": 0}, "bins must be a positive int"),
        (True, "expected a size, a list of values or an object"),
        ("x", "expected a size, a list of values or an object"),
    ],
)
def test_bad_entries_name_the_column_and_the_problem(entry, match):
    with pytest.raises(ValueError, match=match) as info:
        parse_domain({"ok": 2, "c": entry}, "domain file d.json")
    assert str(info.value).startswith("domain file d.json, column 'c': ")


def test_read_domain_errors_name_the_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read domain file .*absent.json"):
        read_domain(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="domain file .*bad.json is not valid JSON"):
        read_domain(tmp_path / "bad.json")
    with pytest.raises(TypeError, match="domain must be a path or a dict; got list"):
        workload_params([1, 2])


def test_workload_params_from_a_file_a_dict_and_a_draft(tmp_path):
    raw = {
        "city": {"values": ["Paris", "Rome", "Other"], "other": "Other", "missing": True},
        "mixed": {"values": ["a", 7], "other": 7},  # read as text by the CSV reader
        "code": {"size": 4, "missing": True},
        "age": {"bounds": [0, 100], "bins": 5},
        "flag": [False, True],
    }
    path = tmp_path / "d.json"
    path.write_text(json.dumps(raw))
    expected = {
        "domain": {"city": ["Paris", "Rome", "Other"], "mixed": ["a", "7"], "code": 4,
                   "flag": [False, True]},
        "bounds": {"age": (0.0, 100.0)},
        "bins": {"age": 5},
        "handle_missing": ["city", "code"],
        "other": {"city": "Other", "mixed": "7"},
        "points": None,
        "steps": None,
        "cuts": None,
        "clocks": None,
        "log_scale": None,
        "days_of_month": None,
        "derived": None,
        "decimals": None,
        "at_most": None,
        "at_least": None,
        "exactly_when": None,
        "only_when": None,
        "equal_when": None,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing marked: no warning
        assert workload_params(path) == expected
        assert workload_params(str(path)) == expected
        assert workload_params(raw) == expected
    assert workload_params({"n": 3}) == {"domain": {"n": 3}, "bounds": None, "bins": 10,
                                         "handle_missing": "error", "other": None,
                                         "points": None, "steps": None, "cuts": None,
                                         "clocks": None, "log_scale": None, "days_of_month": None,
                                         "derived": None, "decimals": None,
                                         "at_most": None, "at_least": None,
                                         "exactly_when": None, "only_when": None,
                                         "equal_when": None}
    frame = pd.DataFrame({"s": ["u", None, "v"], "n": [1.0, 2.0, 4.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(frame, max_categories=2, bins=3)
    with pytest.warns(PrivacyLeakWarning, match=r"columns \['s', 'n'\] is marked"):
        kwargs = workload_params(draft)
    assert kwargs["handle_missing"] == ["s"]
    assert QueryWorkload(**kwargs, k=2).fit(frame).domain_sizes_ == {"s": 3, "n": 3}


def _private_table(n=300, seed=0):
    """"city" has values the reviewed domain does not list; only "income" misses values."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "city": rng.choice(["Paris", "Rome", "Oslo", "Lima"], n, p=[0.3, 0.2, 0.25, 0.25]),
        "kids": rng.integers(0, 3, n),
        "income": np.where(rng.random(n) < 0.3, np.nan, rng.uniform(0, 9e4, n).round()),
    })


def test_round_trip_draft_file_fit_sample(tmp_path):
    X = _private_table()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(X)
    assert draft["income"]["missing"] is True
    assert "missing" not in draft["city"] and "missing" not in draft["kids"]
    # the owner's review: public values, an "Other" catch-all, no marks
    draft["city"] = {"values": ["Paris", "Rome", "Other"], "other": "Other"}
    draft["kids"] = {"values": [0, 1, 2]}
    draft["income"] = {"bounds": [0, 100000], "bins": 4, "missing": True}
    path = tmp_path / "domain.json"
    path.write_text(dump_domain(draft))
    assert path.read_text().count("\n") == len(draft) + 2  # one line per column
    assert read_domain(path) == parse_domain(draft, f"domain file {path}")
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        workload = QueryWorkload(**workload_params(path), k=2, random_state=0)
        # FEM keeps few records; with equal-width bins (no numbers' measurement) one of
        # them misses the income, which is what this test is about
        fem = FEM(epsilon=50.0, workload=workload, random_state=0, number_share=0,
                  **FAST).fit(X)
    synthetic = fem.sample(2000, random_state=0)
    # missing values only in the declared column; unknown cities come back as "Other"
    assert synthetic["income"].isna().any()
    assert not synthetic[["city", "kids"]].isna().any().any()
    assert set(synthetic["city"]) <= {"Paris", "Rome", "Other"}
    assert "Other" in set(synthetic["city"])
    codes = fem.workload_.encode(X)
    assert (codes[:, 0] == 2).sum() == X["city"].isin(["Oslo", "Lima"]).sum()


def test_points_and_step_of_a_number_reach_the_workload():
    raw = {"gain": {"bounds": [0, 99999], "bins": 9, "points": [0, 99999]},
           "hours": {"bounds": [1, 99], "step": 1}, "score": {"bounds": [0, 1]}}
    params = workload_params(raw)
    assert params["points"] == {"gain": [0, 99999]} and params["steps"] == {"hours": 1}
    X = pd.DataFrame({"gain": [0, 5, 99999], "hours": [1.0, 40.0, 99.0], "score": [0, 0.5, 1]})
    wl = QueryWorkload(**params, k=1).fit(X)
    assert wl.domain_sizes_["gain"] == 11 and wl.points_["gain"].tolist() == [0, 99999]


@pytest.mark.parametrize("entry, match", [
    ({"bounds": [0, 10], "points": [11]}, "points must lie within the bounds"),
    ({"bounds": [0, 10], "points": [1, 1]}, "the list of points has duplicates"),
    ({"bounds": [0, 10], "points": "0"}, "points must be a list of numbers"),
    ({"bounds": [0, 10], "points": [True]}, "points must be a list of numbers"),
    ({"bounds": [0, 10], "step": 0}, "step must be a positive number"),
    ({"values": [1, 2], "points": [1]}, "an entry with 'values' takes only"),
])
def test_bad_points_and_steps_in_a_domain_file_name_the_column(entry, match):
    with pytest.raises(ValueError, match=rf"column 'x': {match}"):
        parse_domain({"x": entry})
