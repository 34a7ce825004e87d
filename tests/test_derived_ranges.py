"""Derived ``"ranges"``: a number nearly fixed by a listed column (sklearn_privsyn.derived).

The values drawn within each source value's range (uniform, whole numbers for an integer
column, missing where the source is), the declaration's errors, the fit that never reads
the column, the domain file, and the drafter (sklearn_privsyn._range_draft).
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn._range_draft import EXCEPTION_SHARE, MAX_RANGE_SHARE, draft_ranges
from sklearn_privsyn.cli import main
from sklearn_privsyn.cli._commands import _outside_ranges
from sklearn_privsyn.derived import parse_derived
from sklearn_privsyn.domain_draft import draft_domain
from sklearn_privsyn.domain_file import parse_domain, workload_kwargs

# twelve sub-grades, each at one of two rates a cent apart: 24 rates, a binned number
RATES = {f"{g}{i}": (round(5.31 + 0.61 * (3 * k + i), 2), round(5.32 + 0.61 * (3 * k + i), 2))
         for k, g in enumerate("ABCD") for i in range(3)}


def loans(n=3000, seed=0):
    """A rate fixed within a cent by its sub-grade, beside a term."""
    rng = np.random.default_rng(seed)
    grade = rng.choice(list(RATES), n)
    rate = np.array([RATES[g][rng.integers(2)] for g in grade])
    return pd.DataFrame({"sub_grade": grade, "interest_rate": rate,
                         "term": rng.choice([36, 60], n)})


def ranges_spec(ranges=RATES):
    return {"of": "sub_grade", "ranges": {g: list(r) for g, r in ranges.items()}}


def workload(**kwargs):
    return QueryWorkload(domain={"sub_grade": list(RATES), "term": [36, 60]},
                         derived={"interest_rate": ranges_spec()}, k=2, **kwargs)


def test_values_are_drawn_uniformly_within_their_source_values_range():
    X = loans()
    wl = workload().fit(X)
    codes = np.repeat([[0, 0], [11, 1]], 4000, axis=0)
    rows = wl.decode(codes, random_state=0)
    for grade, (lo, hi) in RATES.items():
        rate = rows.loc[rows["sub_grade"] == grade, "interest_rate"]
        if len(rate):
            assert rate.between(lo, hi).all()
            assert stats.kstest((rate - lo) / (hi - lo), "uniform").pvalue > 0.001
    again = wl.decode(codes, random_state=0)
    pd.testing.assert_frame_equal(rows, again)  # random_state decides every draw


def test_with_decimals_the_values_are_the_ends_of_a_cent_range():
    wl = workload(decimals={"interest_rate": 2}).fit(loans())
    rows = wl.decode(np.zeros((2000, 2), dtype=int), random_state=1)
    assert set(rows["interest_rate"].round(6)) == set(RATES["A0"])


def test_an_integer_column_gets_whole_numbers_uniformly():
    X = pd.DataFrame({"band": ["low", "high"] * 50, "score": [3, 12] * 50})
    wl = QueryWorkload(domain={"band": ["low", "high"]},
                       derived={"score": {"of": "band", "ranges": [["low", 1, 4],
                                                                   ["high", 10, 12]]}},
                       k=1).fit(X)
    rows = wl.decode(np.zeros((4000, 1), dtype=int), random_state=0)
    assert rows["score"].dtype == X["score"].dtype
    counts = rows["score"].value_counts().reindex([1, 2, 3, 4], fill_value=0)
    assert counts.sum() == 4000
    assert stats.chisquare(counts).pvalue > 0.001


def test_a_missing_source_gives_a_missing_value():
    X = loans(200)
    X.loc[X.index[:20], ["sub_grade", "interest_rate"]] = np.nan
    wl = workload(handle_missing=["sub_grade"]).fit(X)
    missing_code = len(RATES)
    rows = wl.decode(np.array([[missing_code, 0], [0, 1]]), random_state=0)
    assert np.isnan(rows["interest_rate"].iloc[0]) and 5.31 <= rows["interest_rate"].iloc[1]


@pytest.mark.parametrize("spec, match", [
    ({"of": "g", "ranges": {"a": [2, 1]}}, "finite numbers lo <= hi"),
    ({"of": "g", "ranges": [["a", 1]]}, "list of \\[value, lo, hi\\]"),
    ({"of": "g", "ranges": [["a", "x", 2]]}, "finite numbers"),
    ({"of": "g", "ranges": []}, "non-empty"),
    ({"of": "g", "ranges": [["a", 1, 2], ["a", 3, 4]]}, "gives a source value twice"),
])
def test_malformed_ranges_raise_naming_the_column(spec, match):
    with pytest.raises(ValueError, match=r"derived\['r'\].*" + match):
        parse_derived({"r": spec}, ["g", "r"])


def test_every_listed_value_needs_a_range_and_the_source_must_be_listed():
    X = loans(200)
    partial = {g: r for g, r in RATES.items() if g != "C1"}
    with pytest.raises(ValueError, match=r"derived\['interest_rate'\] gives no value for 1 of "
                                         "the 12 values of 'sub_grade'"):
        QueryWorkload(domain={"sub_grade": list(RATES), "term": [36, 60]},
                      derived={"interest_rate": ranges_spec(partial)}, k=1).fit(X)
    X["code"] = np.arange(len(X)) % 50
    with pytest.raises(ValueError, match="a binned number"):
        QueryWorkload(domain={"sub_grade": list(RATES), "term": [36, 60]},
                      bounds={"code": (0, 49)},
                      derived={"interest_rate": {"of": "code", "ranges": [[0, 1, 2]]}},
                      k=1).fit(X)


def test_the_fit_never_reads_the_derived_column():
    X = loans()
    scrambled = X.assign(interest_rate=np.random.default_rng(5).permutation(X["interest_rate"]))
    fits = []
    for table in (X, scrambled):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(AdaptiveProjection(epsilon=1.0, workload=workload(),
                                           random_state=0).fit(table))
    assert "interest_rate" not in fits[0].workload_.columns_
    a, b = (f.sample(300, random_state=2) for f in fits)
    pd.testing.assert_frame_equal(a, b)
    for grade, (lo, hi) in RATES.items():
        assert a.loc[a["sub_grade"] == grade, "interest_rate"].between(lo, hi).all()


def test_the_drafter_finds_a_rate_table_and_leaves_out_a_coding_error():
    X = loans()
    # one coding error: an A0 loan at B0's rate (the grade is then no interval of the rate)
    X.loc[X.index[0], ["sub_grade", "interest_rate"]] = ["A0", RATES["B0"][0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = draft_domain(X)
    spec = draft["interest_rate"]["derived"]
    assert spec["of"] == "sub_grade"
    assert {g: (lo, hi) for g, lo, hi in spec["ranges"]} == RATES
    assert draft["interest_rate"]["decimals"] == 2 and draft["interest_rate"]["read_from_data"]
    # read back as the command line reads a CSV file: the keys as text
    kwargs = workload_kwargs(parse_domain(json.loads(json.dumps(draft))))
    assert kwargs["derived"]["interest_rate"]["ranges"][0] == ["A0", 5.31, 5.32]


def test_the_drafter_leaves_wide_ranges_few_rows_and_other_missing_alone():
    X = loans()
    lo, hi = X["interest_rate"].min(), X["interest_rate"].max()
    domain = {"sub_grade": {"values": list(RATES)}, "interest_rate": {"bounds": [lo, hi]}}
    span = hi - lo
    wide = X.assign(interest_rate=np.where(X["sub_grade"] == "A0",
                                           5.31 + (X.index % 2) * 2.5 * MAX_RANGE_SHARE * span,
                                           X["interest_rate"]))
    for table in (wide, X.head(len(RATES) * 10 - 1),
                  X.assign(interest_rate=X["interest_rate"].mask(X.index % 9 == 0))):
        entries = json.loads(json.dumps(domain))
        draft_ranges(table, entries, "read_from_data")
        assert "derived" not in entries["interest_rate"]
    # a share of exceptions beyond EXCEPTION_SHARE of a value's rows: no range either
    n_a0 = int((X["sub_grade"] == "A0").sum())
    errors = X.index[X["sub_grade"] == "A0"][: int(EXCEPTION_SHARE * n_a0) + 2]
    entries = json.loads(json.dumps(domain))
    draft_ranges(X.assign(interest_rate=X["interest_rate"].where(~X.index.isin(errors), 12.0)),
                 entries, "read_from_data")
    assert "derived" not in entries["interest_rate"]


@pytest.mark.parametrize("zeros, drafted", [(0.995, False), (0.6, True)])
def test_a_range_mostly_at_one_value_is_no_range(zeros, drafted):
    # lending_club's delinquent amount: 0 on 99.5% of the loans, up to 53 on the rest of a
    # term's trimmed rows; drawn uniformly in [0, 53] it was non-zero on 70% of the rows.
    # A range holding 60% of its rows at one end (two rates of two years) stays a range.
    rng = np.random.default_rng(7)
    n = 6000
    term = rng.choice(["36", "60"], n)
    amount = np.where(rng.random(n) < zeros, 0, rng.integers(1, 54, n))
    amount[rng.random(n) < 0.002] = 42428  # a few large amounts, trimmed as exceptions
    X = pd.DataFrame({"term": term, "amount": amount})
    domain = {"term": {"values": ["36", "60"]}, "amount": {"bounds": [0, 42428]}}
    draft_ranges(X, domain, "read_from_data")
    assert ("derived" in domain["amount"]) is drafted


def test_the_command_line_says_when_rows_of_the_data_fall_outside_the_ranges(tmp_path, capsys):
    X = loans()
    # a coding error: an A0 loan at B0's rate (the grade is then no interval of the rate)
    X.loc[X.index[0], ["sub_grade", "interest_rate"]] = ["A0", RATES["B0"][0]]
    X.to_csv(tmp_path / "t.csv", index=False)
    assert main(["domain", str(tmp_path / "t.csv"), "-o", str(tmp_path / "d.json")]) == 0
    assert "ranges" in json.loads((tmp_path / "d.json").read_text())["interest_rate"]["derived"]
    assert ("a few rows of the data hold interest_rate outside the ranges drafted "
            "(coding errors?)" in capsys.readouterr().err)
    # without the error every row is inside: nothing to say
    clean = loans()
    entries = {"sub_grade": {"values": list(RATES)},
               "interest_rate": {"bounds": [5.31, float(clean["interest_rate"].max())]}}
    draft_ranges(clean, entries, "read_from_data")
    assert not _outside_ranges(clean, "interest_rate", entries["interest_rate"]["derived"])
    assert _outside_ranges(X, "interest_rate", entries["interest_rate"]["derived"])
