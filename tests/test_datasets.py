import json
import warnings
from importlib import resources

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import datasets
from sklearn_privsyn.datasets import adult_public_domain, load_adult, load_coded_csv
from sklearn_privsyn.workload import QueryWorkload

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]


@pytest.fixture(scope="module")
def adult():
    return load_adult()


def test_load_adult_shape_and_columns(adult):
    assert adult.shape == (48_842, 15)
    assert list(adult.columns) == ADULT_COLUMNS
    for col in ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]:
        assert adult[col].dtype == np.int64
    assert sorted(adult["income"].unique()) == ["<=50K", ">50K"]
    assert adult.isna().sum().sum() == 0


def test_load_adult_matches_documented_figures(adult):
    # Figures from the UCI adult.names file.
    unknown = (adult == "?").any(axis=1)
    assert (~unknown).sum() == 45_222
    assert round(100 * (adult["income"] == ">50K").mean(), 2) == 23.93
    assert adult["age"].min() > 16 and adult["hours-per-week"].min() > 0
    assert sorted(c for c in adult.columns if (adult[c] == "?").any()) == [
        "native-country", "occupation", "workclass"
    ]


@pytest.mark.parametrize("split, n", [("train", 32_561), ("test", 16_281)])
def test_load_adult_splits(adult, split, n):
    part = load_adult(split=split)
    assert len(part) == n
    start = 0 if split == "train" else 32_561
    pd.testing.assert_frame_equal(part, adult.iloc[start : start + n].reset_index(drop=True))
    with pytest.raises(ValueError, match="split"):
        load_adult(split="validation")


def test_adult_licence_and_citation_ship_with_package():
    text = resources.files("sklearn_privsyn").joinpath("data", "ADULT_LICENSE.txt").read_text()
    for needle in ["CC BY 4.0", "10.24432/C5XW20", "Becker", "Kohavi", "1996"]:
        assert needle in text
        assert needle in datasets.load_adult.__doc__ + datasets.ADULT_CITATION


def test_adult_public_domain_fits_without_leak_warning(adult):
    params = adult_public_domain()
    assert set(params) == {"domain", "bounds", "bins", "derived"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wl = QueryWorkload(**params, k=1).fit(adult)  # also validates every value
    sizes = wl.domain_sizes_
    assert [sizes[c] for c in ["workclass", "education", "marital-status", "occupation",
                               "relationship", "race", "sex", "native-country", "income"]] == [
        9, 16, 7, 15, 6, 5, 2, 42, 2
    ]
    # every documented category occurs in the data (the lists are complete, not padded)
    for col, values in params["domain"].items():
        assert set(adult[col].unique()) == set(values), col
    # education-num is the census code of education, on every row: the declared map holds
    codes = params["derived"]["education-num"]["map"]
    assert (adult["education"].map(codes) == adult["education-num"]).all()
    assert sorted(codes.values()) == list(range(1, 17))
    # the ages are within the declared bounds (UCI: over 16; top-coded at 90)
    assert adult["age"].between(*params["bounds"]["age"]).all()
    rows = wl.decode(wl.encode(adult), random_state=0)
    assert (rows["education"].map(codes) == rows["education-num"]).all()
    assert rows["education-num"].dtype == adult["education-num"].dtype


def test_adult_public_domain_returns_fresh_copies():
    a = adult_public_domain()
    a["domain"]["sex"].append("Other")
    assert adult_public_domain()["domain"]["sex"] == ["Female", "Male"]


# ------------------------------------------------------------------ coded CSVs


def _write(tmp_path, csv_text, domain):
    csv_path = tmp_path / "t.csv"
    csv_path.write_text(csv_text)
    dom_path = tmp_path / "t-domain.json"
    dom_path.write_text(json.dumps(domain))
    return csv_path, dom_path


def test_load_coded_csv_matches_columns_by_name(tmp_path):
    frame, domain = load_coded_csv(*_write(tmp_path, "b,a\n1,0\n2,1\n", {"a": 2, "b": 3}))
    assert list(frame.columns) == ["a", "b"]
    assert domain == {"a": 2, "b": 3}
    assert frame["a"].tolist() == [0, 1] and frame["b"].tolist() == [1, 2]
    assert (frame.dtypes == np.int64).all()


def test_load_coded_csv_titanic(shared_datasets):
    frame, domain = load_coded_csv(
        shared_datasets / "titanic.csv", shared_datasets / "titanic-domain.json"
    )
    raw = pd.read_csv(shared_datasets / "titanic.csv")
    assert list(frame.columns) == list(domain) != list(raw.columns)
    pd.testing.assert_frame_equal(frame, raw[list(domain)].astype(np.int64))
    assert sum(domain.values()) == 227 and len(frame) == 1304


def test_load_coded_csv_adult(shared_datasets):
    frame, domain = load_coded_csv(
        shared_datasets / "adult.csv", shared_datasets / "adult-domain.json"
    )
    assert frame.shape == (48_842, 14) and sum(domain.values()) == 588
    assert (frame.max() < pd.Series(domain)).all()


@pytest.mark.parametrize(
    "csv_text, domain, match",
    [
        ("a,b\n0,1\n", {"a": 2}, r"in the CSV but not the domain: \['b'\]"),
        ("a\n0\n", {"a": 2, "b": 2}, r"in the domain but not the CSV: \['b'\]"),
        ("a\n0\n2\n", {"a": 2}, r"Column 'a'.* has codes outside its domain 0\.\.1"),
        ("a\n0\n-1\n", {"a": 2}, r"Column 'a'.* has codes outside its domain"),
        ("a\n0\n1.5\n", {"a": 2}, r"Column 'a'.*integer codes; it has other values"),
        ("a,b\n0,1\n,1\n", {"a": 2, "b": 2}, r"Column 'a'.*integer codes; it has other"),
        ("a\nx\n", {"a": 2}, r"Column 'a'.*integer codes; it has other values"),
        ("a\n0\n", {"a": -2}, r"column 'a'.*positive integer; got -2"),
        ("a\n0\n", {"a": 2.5}, r"column 'a'.*positive integer; got 2.5"),
        ("a\n0\n", {"a": True}, r"column 'a'.*positive integer"),
        ("a,a\n0,1\n", {"a": 2}, r"duplicate column names: \['a'\]"),
        ("a\n0\n", [2], r"JSON object"),
    ],
)
def test_load_coded_csv_errors(tmp_path, csv_text, domain, match):
    with pytest.raises(ValueError, match=match):
        load_coded_csv(*_write(tmp_path, csv_text, domain))
