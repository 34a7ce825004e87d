"""Derived columns (sklearn_privsyn.derived): a public function of another column.

A derived column is never read, encoded or measured; ``decode`` computes it
from its synthetic source. Here: each kind of function, dtypes and missing
values, that the fit never reads the column (the same fit whatever it holds),
the errors, the domain file and the command line, and the drafter that finds
functions in a table.
"""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import FEM, AdaptiveProjection, PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn.cli import main
from sklearn_privsyn.derived import DerivedColumn, parse_derived
from sklearn_privsyn.domain_draft import MIN_ROWS_PER_VALUE, draft_domain
from sklearn_privsyn.order_rule_drafts import MIN_BROKEN_ROWS, map_breaks_by_chance
from sklearn_privsyn.domain_file import parse_domain, workload_params

# declarations that leave some derived columns out make their domains learned: not the point here
pytestmark = pytest.mark.filterwarnings("ignore:QueryWorkload learned:RuntimeWarning")

EDUCATION = {"HS-grad": 9, "Some-college": 10, "Bachelors": 13, "Masters": 14}
GROUPS = ["18-29", "30-59", "60+"]


def people(n=2000, seed=0):
    """A table with four derived columns (a code, a band, a clock's hour and minute, a log)."""
    rng = np.random.default_rng(seed)
    education = rng.choice(list(EDUCATION), n, p=[0.4, 0.3, 0.2, 0.1])
    age = rng.integers(18, 90, n)
    clock = rng.integers(5, 23, n) * 100 + rng.choice([0, 15, 30, 45], n)
    wage = np.exp(rng.normal(4.5, 0.4, n))
    return pd.DataFrame({
        "education": education,
        "education-num": pd.Series(education).map(EDUCATION).to_numpy(),
        "age": age,
        "ageGroup": np.asarray(GROUPS, dtype=object)[np.searchsorted([30, 60], age, "right")],
        "clock": clock,
        "hour": clock // 100,
        "minute": clock % 100,
        "wage": wage,
        "logwage": np.log(wage),
        "sex": rng.choice(["F", "M"], n),
    })


DERIVED = {
    "education-num": {"of": "education", "map": EDUCATION},
    "ageGroup": {"of": "age", "intervals": {"cuts": [30, 60], "labels": GROUPS}},
    "hour": {"of": "clock", "floordiv": 100},
    "minute": {"of": "clock", "mod": 100},
    "logwage": {"of": "wage", "apply": "log"},
}


def people_workload(derived=DERIVED, **kwargs):
    return QueryWorkload(domain={"education": list(EDUCATION), "sex": ["F", "M"]},
                         bounds={"age": (18, 89), "clock": (0, 2359), "wage": (1, 1000)},
                         derived=derived, k=2, **kwargs)


def relations_hold(frame):
    return {
        "education-num": bool((frame["education-num"] ==
                               frame["education"].map(EDUCATION)).all()),
        "ageGroup": bool((frame["ageGroup"].to_numpy() == np.asarray(GROUPS, dtype=object)[
            np.searchsorted([30, 60], frame["age"], "right")]).all()),
        "hour": bool((frame["hour"] == frame["clock"] // 100).all()),
        "minute": bool((frame["minute"] == frame["clock"] % 100).all()),
        "logwage": bool(np.allclose(frame["logwage"], np.log(frame["wage"]))),
    }


# ------------------------------------------------------------------ the workload


def test_derived_columns_are_no_attributes_and_decode_computes_them():
    X = people()
    wl = people_workload().fit(X)
    assert wl.columns_ == ("education", "age", "clock", "wage", "sex")
    assert wl.table_columns_ == tuple(X.columns) and wl.n_features_in_ == X.shape[1]
    assert all(c in wl.columns_ for m in wl.marginals_ for c in m)
    records = wl.encode(X)  # the whole table: the derived columns are dropped
    assert records.shape == (len(X), 5)
    decoded = wl.decode(records, random_state=0)
    assert list(decoded.columns) == list(X.columns)
    assert decoded.dtypes.to_dict() == X.dtypes.to_dict()
    assert all(relations_hold(decoded).values())
    # the answers are those of the table without its derived columns
    cuts = {c: v.tolist() for c, v in wl.cuts_.items()}
    base = people_workload(derived=None, cuts=cuts).fit(X.drop(columns=list(DERIVED)))
    np.testing.assert_array_equal(wl.answer(X), base.answer(X.drop(columns=list(DERIVED))))


def test_a_binned_source_gets_the_cuts_where_its_derived_column_changes():
    wl = people_workload().fit(people(200))
    assert wl.cuts_["age"].tolist() == [30, 60]
    assert wl.cuts_["clock"].tolist() == list(range(100, 2400, 100))
    for column, cuts in wl.cuts_.items():
        edges = wl.bin_edges_[column]
        assert not any(np.any((edges[:-1] < c) & (c < edges[1:])) for c in cuts)
    # cuts of its own win; a quotient with more than MAX_CUTS multiples adds none
    wl = people_workload(cuts={"clock": [1200]}).set_params(derived={
        "hour": {"of": "clock", "floordiv": 100}, "logwage": {"of": "age", "floordiv": 2}})
    fitted = wl.fit(people(200).drop(columns=["education-num", "ageGroup", "minute"]))
    assert fitted.cuts_["clock"].tolist() == [1200] and "age" not in fitted.cuts_
    assert wl.get_params()["cuts"] == {"clock": [1200]}  # the parameter is left as it is


@pytest.mark.parametrize("spec, source, expected", [
    ({"map": [["a", 1], ["b", 2]]}, ["b", "a", None], [2, 1, None]),
    ({"intervals": {"cuts": [10, 20], "labels": ["lo", "mid", "hi"]}},
     [9.99, 10, 19.5, 20, np.nan], ["lo", "mid", "mid", "hi", None]),
    ({"floordiv": 60}, [59, 60, 125, -1], [0, 1, 2, -1]),
    ({"mod": 60}, [59, 60, 125, -1], [59, 0, 5, 59]),
    ({"apply": "log1p"}, [-0.0, 0.0], [0.0, 0.0]),  # log1p(-0.0) is -0.0
    ({"apply": "log10"}, [1, 100, np.nan], [0.0, 2.0, np.nan]),
    ({"apply": "sqrt"}, [0, 4, 2.25], [0.0, 2.0, 1.5]),
    ({"apply": "square"}, [-3, 0, 1.5, np.nan], [9.0, 0.0, 2.25, np.nan]),
])
def test_each_function_computes_its_values(spec, source, expected):
    column = parse_derived({"y": {"of": "x", **spec}}, ["x", "y"])["y"]
    out = column.compute(pd.DataFrame({"x": source})).tolist()
    assert [None if pd.isna(v) else v for v in out] == [None if pd.isna(v) else v
                                                       for v in expected]
    assert not any(v == 0 and math.copysign(1.0, v) < 0 for v in out if isinstance(v, float))


def test_a_weighted_sum_of_several_sources():
    column = parse_derived({"t": {"of": ["h", "m"], "sum": [100, 1]}}, ["h", "m", "t"])["t"]
    frame = pd.DataFrame({"h": [5, 23, np.nan], "m": [0, 59, 30]})
    assert column.sources == ("h", "m")
    assert column.compute(frame).tolist()[:2] == [500.0, 2359.0]
    assert np.isnan(column.compute(frame).tolist()[2])
    X = pd.DataFrame({"h": [5, 6, 7] * 20, "m": [0, 15, 30, 45] * 15})
    X["t"] = 100 * X["h"] + X["m"]
    wl = QueryWorkload(domain={"h": [5, 6, 7], "m": [0, 15, 30, 45]}, k=2,
                       derived={"t": {"of": ["h", "m"], "sum": [100, 1]}}).fit(X)
    decoded = wl.decode(wl.encode(X), random_state=0)
    assert wl.columns_ == ("h", "m") and decoded["t"].dtype == np.int64
    assert (decoded["t"] == 100 * decoded["h"] + decoded["m"]).all()


def test_a_derived_value_is_missing_where_its_source_is_and_widens_an_integer_dtype():
    column = DerivedColumn("hour", "clock", "floordiv", argument=100,
                           dtype=np.dtype("int64"))
    assert column.compute(pd.DataFrame({"clock": [545.0, 1230.0]})).dtype == np.int64
    out = column.compute(pd.DataFrame({"clock": [545.0, np.nan]}))
    assert out.dtype == np.float64 and out.tolist()[0] == 5.0 and np.isnan(out.tolist()[1])
    labels = DerivedColumn("g", "x", "intervals", keys=(1.0,), values=("a", "b"),
                           dtype=pd.CategoricalDtype(["a", "b"]))
    out = labels.compute(pd.DataFrame({"x": [0.0, 2.0, np.nan]}))
    assert isinstance(out.dtype, pd.CategoricalDtype) and out.isna().tolist() == [False, False,
                                                                                   True]


@pytest.mark.parametrize("estimator", [
    lambda wl: AdaptiveProjection(epsilon=1.0, workload=wl, random_state=0),
    lambda wl: FEM(epsilon=1.0, workload=wl, solver="brute", rounds=4,
                   samples_per_round=3, random_state=0),
])
def test_synthetic_rows_keep_every_relation_and_the_columns_of_X(estimator):
    X = people()
    fitted = estimator(people_workload()).fit(X)
    synthetic = fitted.sample(500, random_state=1)
    assert list(synthetic.columns) == list(X.columns)
    assert synthetic.dtypes.to_dict() == X.dtypes.to_dict()
    assert relations_hold(synthetic) == dict.fromkeys(DERIVED, True)
    assert list(fitted.feature_names_in_) == list(X.columns)


def test_the_fit_never_reads_a_derived_column():
    X = people()
    garbage = X.assign(**{"education-num": -7, "ageGroup": "?", "hour": 99, "minute": -1,
                          "logwage": np.nan})
    fits = [AdaptiveProjection(epsilon=1.0, workload=people_workload(), random_state=0).fit(t)
            for t in (X, garbage)]
    assert fits[0].ledger_.entries == fits[1].ledger_.entries
    assert fits[0].workload_.answer(X).tolist() == fits[1].workload_.answer(garbage).tolist()
    pd.testing.assert_frame_equal(fits[0].sample(300, random_state=2),
                                  fits[1].sample(300, random_state=2).astype(X.dtypes))


def test_get_params_and_clone_carry_derived():
    from sklearn.base import clone

    wl = people_workload()
    assert clone(wl).get_params()["derived"] == DERIVED


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("derived, match", [
    ({"nope": {"of": "age", "floordiv": 10}}, r"derived names columns not in X: \['nope'\]"),
    ({"hour": {"of": "nope", "floordiv": 10}}, r"derived\['hour'\]: its source 'nope' is not"),
    ({"hour": {"of": "hour", "floordiv": 10}}, r"derived\['hour'\]: its source 'hour' must"),
    ({"hour": {"of": "clock", "floordiv": 100}, "minute": {"of": "hour", "mod": 2}},
     r"derived\['minute'\]: its source 'hour' must be a column that is not itself derived"),
    ({"hour": {"of": "clock"}}, r"derived\['hour'\] needs 'of' .* and exactly one of"),
    ({"hour": {"of": "clock", "floordiv": 100, "mod": 100}}, "exactly one of"),
    ({"hour": {"of": "clock", "floordiv": 100, "extra": 1}}, "exactly one of"),
    ({"hour": "clock // 100"}, r"derived\['hour'\] must be a dict"),
    ({"hour": {"of": "clock", "floordiv": 0}}, "'floordiv' must be a positive number"),
    ({"hour": {"of": "clock", "mod": True}}, "'mod' must be a positive number"),
    ({"logwage": {"of": "wage", "apply": "cube"}}, "'apply' must be one of"),
    ({"education-num": {"of": "education", "map": {}}}, "'map' must be a non-empty"),
    ({"education-num": {"of": "education", "map": [["HS-grad", 9], ["HS-grad", 10]]}},
     "'map' gives a source value twice"),
    ({"ageGroup": {"of": "age", "intervals": {"cuts": [60, 30], "labels": GROUPS}}},
     "'cuts' must be increasing finite numbers"),
    ({"ageGroup": {"of": "age", "intervals": {"cuts": [30], "labels": GROUPS}}},
     "'labels' needs one label more than 'cuts'"),
    ({"ageGroup": {"of": "age", "intervals": [30, 60]}}, "'intervals' must be"),
    ({"clock": {"of": ["hour"], "sum": [100]}}, "a 'sum' takes a list of two or more"),
    ({"clock": {"of": ["hour", "hour"], "sum": [1, 1]}}, "two or more distinct"),
    ({"clock": {"of": ["hour", "minute"], "sum": [100]}}, "one finite number a source"),
    ({"clock": {"of": ["hour", "nope"], "sum": [100, 1]}}, "its source 'nope' is not"),
    ({"clock": {"of": "hour", "sum": [100, 1]}}, "a 'sum' takes a list"),
])
def test_bad_declarations_name_the_column(derived, match):
    with pytest.raises(ValueError, match=match):
        people_workload(derived=derived).fit(people(50))


def test_a_map_must_cover_every_value_of_its_source():
    partial = {"education-num": {"of": "education", "map": {"HS-grad": 9, "Bachelors": 13}}}
    with pytest.raises(ValueError, match=r"derived\['education-num'\] gives no value for 2 of "
                                         r"the 4 values of 'education'"):
        people_workload(derived=partial).fit(people(50))


def test_a_map_of_a_binned_number_and_a_function_undefined_on_the_bounds_are_refused():
    binned = {"ageGroup": {"of": "age", "map": {18: "18-29"}}}
    with pytest.raises(ValueError, match=r"maps the values of 'age', a binned number"):
        people_workload(derived=binned).fit(people(50))
    log_of_zero = {"logwage": {"of": "clock", "apply": "log"}}  # clock's bounds hold 0
    with pytest.raises(ValueError, match=r"applies 'log' to 'clock', whose domain holds"):
        people_workload(derived=log_of_zero).fit(people(50))
    with pytest.raises(ValueError, match=r"needs a number column; 'sex' holds listed values"):
        people_workload(derived={"hour": {"of": "sex", "mod": 2}}).fit(people(50))


def test_a_marginal_of_a_derived_column_is_refused():
    wl = people_workload().set_params(marginals=[("education", "hour"), "sex"])
    with pytest.raises(ValueError, match=r"marginals name derived columns \['hour'\]"):
        wl.fit(people(50))


def test_a_derived_column_with_a_domain_of_its_own_is_refused():
    wl = people_workload().set_params(bounds={"age": (18, 89), "clock": (0, 2359),
                                              "wage": (1, 1000), "hour": (0, 23)})
    with pytest.raises(ValueError, match=r"bounds declares derived columns \['hour'\]"):
        wl.fit(people(50))


# ------------------------------------------------------------------ the domain file


def test_a_domain_file_declares_derived_columns():
    raw = {"education": {"values": list(EDUCATION)},
           "education-num": {"derived": {"of": "education", "map": [[k, v] for k, v in
                                                                   EDUCATION.items()]}},
           "clock": {"bounds": [0, 2359]},
           "hour": {"derived": {"of": "clock", "floordiv": 100}, "read_from_data": True}}
    params = parse_domain(raw)
    assert params["derived"]["hour"] == {"of": "clock", "floordiv": 100}
    assert params["read_from_data"] == ["hour"]
    X = people(100)[["education", "education-num", "clock", "hour"]]
    with pytest.warns(PrivacyLeakWarning, match=r"\['hour'\]"):
        kwargs = workload_params(raw)
    wl = QueryWorkload(**kwargs, k=2).fit(X)
    assert wl.columns_ == ("education", "clock")
    decoded = wl.decode(wl.encode(X), random_state=0)
    assert (decoded["hour"] == decoded["clock"] // 100).all()
    assert (decoded["education-num"] == decoded["education"].map(EDUCATION)).all()


@pytest.mark.parametrize("entry, match", [
    ({"derived": {"of": "a", "mod": 2}, "missing": True}, "it takes no \"missing\""),
    ({"derived": {"of": "a", "mod": 2}, "bins": 3}, "an entry with 'derived' takes only"),
    ({"derived": {"of": "zz", "mod": 2}}, r"the domain: derived\['b'\]: its source 'zz'"),
])
def test_bad_derived_entries_in_a_domain_file(entry, match):
    with pytest.raises(ValueError, match=match):
        parse_domain({"a": {"bounds": [0, 9]}, "b": entry})


def test_the_command_line_drafts_and_keeps_derived_columns(tmp_path, capsys):
    X = people(1500)
    X.to_csv(tmp_path / "t.csv", index=False)
    assert main(["domain", str(tmp_path / "t.csv"), "-o", str(tmp_path / "d.json")]) == 0
    assert ("derived (computed from their sources, never modelled): education-num of "
            "education, ageGroup of age, clock of hour and minute, logwage of wage"
            in capsys.readouterr().err)
    domain = json.loads((tmp_path / "d.json").read_text())
    assert domain["education-num"]["derived"]["of"] == "education"
    # the clock time is the weighted sum of its hour and minute (a remainder is never drafted)
    assert domain["clock"]["derived"] == {"of": ["hour", "minute"], "sum": [100, 1]}
    assert "derived" not in domain["hour"] and "derived" not in domain["minute"]
    assert domain["logwage"]["derived"] == {"of": "wage", "apply": "log"}
    assert domain["ageGroup"]["derived"]["intervals"]["labels"] == GROUPS
    # the age's bins begin where its group changes (cuts), so that the group's pairs with
    # the other columns are measured through the age's bins
    assert domain["age"]["cuts"] == [30, 60]
    capsys.readouterr()
    status = main(["fit", str(tmp_path / "t.csv"), "--domain", str(tmp_path / "d.json"),
                   "--epsilon", "1", "--seed", "0", "-q", "-o", str(tmp_path / "s.csv")])
    assert status == 0, capsys.readouterr().err
    synthetic = pd.read_csv(tmp_path / "s.csv")
    assert list(synthetic.columns) == list(X.columns)
    assert all(relations_hold(synthetic).values())
    assert synthetic["education-num"].dtype == np.int64 and synthetic["hour"].dtype == np.int64


# ------------------------------------------------------------------ the drafter


def _draft(frame, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return draft_domain(frame, **kwargs)


def test_the_drafter_derives_the_later_of_two_columns_that_determine_each_other():
    draft = _draft(people())
    assert draft["education-num"] == {"derived": {"of": "education", "map": [
        ["Bachelors", 13], ["HS-grad", 9], ["Masters", 14], ["Some-college", 10]]},
        "read_from_data": True}
    assert "values" in draft["education"]
    # wage comes first: log wage is derived from it (and not the other way round)
    assert draft["logwage"]["derived"] == {"of": "wage", "apply": "log"}
    assert "bounds" in draft["wage"]
    reordered = _draft(people()[["logwage", "wage", "sex"]])
    assert reordered["wage"]["derived"] == {"of": "logwage", "apply": "exp"}


def test_the_drafter_finds_no_function_by_chance_nor_across_missing_values():
    rng = np.random.default_rng(1)
    n = 200
    # 190 codes of one row and 5 of two whose labels agree: a function, as chance gives one
    code = np.r_[np.arange(190), np.repeat(np.arange(190, 195), 2)]
    label = rng.choice(["a", "b"], n)
    label[190:] = np.repeat(label[190::2], 2)
    X = pd.DataFrame({"code": code.astype(str), "label": label})
    assert n < MIN_ROWS_PER_VALUE * 195 and map_breaks_by_chance(code, label) < MIN_BROKEN_ROWS
    assert "derived" not in _draft(X, max_categories=50)["label"]
    X = people(1000)
    X["hour"] = X["hour"].astype(float).where(rng.random(1000) > 0.1)  # missing alone
    X["sex"] = np.where(rng.random(1000) < 0.5, "F", "M")
    draft = _draft(X)
    assert "derived" not in draft["hour"] and "derived" not in draft["sex"]
    assert "derived" not in draft["clock"]  # a source is not derived


def test_the_drafter_takes_a_map_seen_on_few_rows_a_value_that_chance_would_break():
    # a car's make of its model: 40 models, 5 rows each (fewer than MIN_ROWS_PER_VALUE), but
    # a table with the two independent would break the map on about 60 rows
    rng = np.random.default_rng(2)
    model = rng.permutation(np.repeat(np.arange(40), 5))
    makes = rng.choice(["audi", "ford", "honda", "toyota"], 40)
    X = pd.DataFrame({"model": [f"m{m}" for m in model], "make": makes[model],
                      "year": rng.choice([1999, 2008], 200)})
    assert map_breaks_by_chance(X["model"], X["make"]) >= MIN_BROKEN_ROWS
    draft = _draft(X, max_categories=50)
    assert draft["make"]["derived"]["of"] == "model"
    assert dict(map(tuple, draft["make"]["derived"]["map"])) == {
        f"m{m}": makes[m] for m in range(40)}
    assert "derived" not in draft["year"]  # not a function of the model


def test_the_drafter_takes_a_quotient_with_few_values_and_no_remainder():
    x = np.arange(0, 20000, 7)
    X = pd.DataFrame({"x": x, "hundreds": x // 100, "tens": x // 10, "last": x % 100})
    draft = _draft(X)
    assert "derived" not in draft["hundreds"]  # 200 quotients: more than the cuts follow
    assert "derived" not in draft["tens"] and "derived" not in draft["last"]
    X = pd.DataFrame({"x": x, "thousands": x // 1000})
    assert _draft(X)["thousands"]["derived"] == {"of": "x", "floordiv": 1000}
    # the cuts are the data's first value of each quotient (as for any interval function)
    assert _draft(X)["x"]["cuts"] == [int(x[x // 1000 == q].min()) for q in range(1, 20)]


def test_a_source_is_never_derived_itself():
    X = pd.DataFrame({"a": np.repeat(np.arange(10), 30)})
    X["b"] = X["a"] // 2  # b of a
    X["c"] = X["b"] % 2  # c of b, and of a
    draft = _draft(X)
    assert draft["b"]["derived"]["of"] == "a" and draft["c"]["derived"]["of"] == "a"
    assert "derived" not in draft["a"]


def loan_payments(n=2000, seed=0):
    """Repayments in cents and their total, a few totals kept in full precision."""
    rng = np.random.default_rng(seed)
    principal = np.round(rng.uniform(0, 20000, n), 2)
    interest = np.round(rng.uniform(0, 3000, n), 2)
    fees = np.where(rng.random(n) < 0.005, np.round(rng.uniform(5, 50, n), 2), 0.0)
    total = principal + interest + fees
    exact = rng.random(n) < 0.05  # full precision: up to half a cent off the rounded parts
    total = np.where(exact, total + rng.uniform(-0.005, 0.005, n), np.round(total, 2))
    return pd.DataFrame({"principal": principal, "interest": interest, "fees": fees,
                         "total": total, "amount": np.round(principal * 1.5 + 100, 2)})


def test_the_drafter_finds_a_total_of_parts_kept_in_cents():
    X = loan_payments()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the draft is read from the data
        domain = draft_domain(X)
        kwargs = workload_params(domain)
    assert domain["total"]["derived"] == {"of": ["principal", "interest", "fees"],
                                          "sum": [1, 1, 1]}
    assert all("derived" not in domain[c] for c in ["principal", "interest", "fees"])
    # the amount is 1.5 times the principal plus 100, to the cent: a relation of one source
    assert domain["amount"]["derived"] == {"of": ["principal"],
                                           "expression": "3 * `principal` / 2 + 100"}
    rows = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(**kwargs, k=2),
                              random_state=0).fit(X).sample(1000, random_state=0)
    assert np.allclose(rows["principal"] + rows["interest"] + rows["fees"], rows["total"],
                       rtol=0, atol=1e-6)


@pytest.mark.parametrize("change", ["a cent off on 0.2% of the rows", "a missing part"])
def test_the_drafter_drafts_no_total_that_rows_break(change):
    X = loan_payments()  # 2,000 rows: 2 rows off are coding errors (MAX_OFF_SHARE), 4 are not
    if change == "a cent off on 0.2% of the rows":
        X.loc[[7, 70, 700, 1700], "total"] += 0.01
    else:  # the total present where a part is missing: never allowed
        X.loc[7, "fees"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        domain = draft_domain(X)
    assert "derived" not in domain["total"]


def test_the_drafter_finds_a_total_two_rows_in_a_thousand_break():
    X = loan_payments()
    X.loc[[7, 700], "total"] += 100.0  # coding errors
    domain = _draft(X)
    assert domain["total"]["derived"] == {"of": ["principal", "interest", "fees"],
                                          "sum": [1, 1, 1]}


def loan_balances(n=3000, round_amounts=True, seed=0):
    """Loans whose balance is the amount less the principal repaid; the amounts round
    (points) or not."""
    rng = np.random.default_rng(seed)
    amount = np.where(rng.random(n) < 0.5, rng.choice([10000.0, 20000.0], n),
                      np.round(rng.uniform(1000, 40000, n), 2))
    if not round_amounts:
        amount = np.round(rng.uniform(1000, 40000, n), 2)
    principal = np.round(amount * rng.uniform(0, 1, n), 2)
    return pd.DataFrame({"amount": amount, "balance": np.round(amount - principal, 2),
                         "principal": principal})


def test_the_drafter_derives_a_difference_rather_than_a_total_with_points():
    X = loan_balances()
    domain = _draft(X)
    assert domain["amount"]["points"] == [10000.0, 20000.0]
    assert domain["balance"]["derived"] == {"of": ["amount", "principal"], "sum": [1, -1]}
    assert "derived" not in domain["principal"]
    with pytest.warns(PrivacyLeakWarning, match=r"\['amount', 'balance', 'principal'\]"):
        kwargs = workload_params(domain)  # the draft is read from the data
    rows = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(**kwargs, k=2),
                              random_state=0).fit(X).sample(500, random_state=0)
    np.testing.assert_allclose(rows["balance"], rows["amount"] - rows["principal"], atol=1e-6)
    # without points the total is derived, as before
    plain = _draft(loan_balances(round_amounts=False))
    assert plain["amount"]["derived"] == {"of": ["balance", "principal"], "sum": [1, 1]}
    assert "derived" not in plain["balance"]


@pytest.mark.parametrize("columns, decoded", [
    (["ageGroup"], ["age", "ageGroup"]),  # a derived column comes with its source
    (["age", "sex"], ["age", "sex"]),  # ... and only the derived ones asked for
    (["education-num", "hour"], ["education", "education-num", "clock", "hour"]),
])
def test_decode_can_give_some_columns_only(columns, decoded):
    X = people(300)
    wl = people_workload().fit(X)
    records = wl.encode(X)
    some = wl.decode(records, random_state=0, columns=columns)
    assert list(some.columns) == [c for c in X.columns if c in set(decoded)]
    every = wl.decode(records, random_state=0)
    for c in some:
        assert some[c].dtype == every[c].dtype
    # codes decode to the same values; the derived ones keep their relation
    for c in ("education", "education-num", "sex"):
        if c in some:
            pd.testing.assert_series_equal(some[c], every[c])
    if "ageGroup" in some:
        groups = np.asarray(GROUPS, dtype=object)[np.searchsorted([30, 60], some["age"], "right")]
        assert (some["ageGroup"].to_numpy() == groups).all()
    if "hour" in some:
        assert (some["hour"] == some["clock"] // 100).all()


def test_a_sum_may_count_a_missing_source_as_zero():
    spec = {"score": {"of": ["q1", "q2", "q3"], "sum": [1, 1, 1], "missing": 0}}
    column = parse_derived(spec, ["q1", "q2", "q3", "score"])["score"]
    frame = pd.DataFrame({"q1": [1, -1, np.nan], "q2": [0, np.nan, np.nan],
                          "q3": [1, 1, np.nan]})
    assert column.compute(frame).tolist() == [2.0, 0.0, 0.0]  # never missing
    plain = parse_derived({"score": {"of": ["q1", "q2", "q3"], "sum": [1, 1, 1]}},
                          ["q1", "q2", "q3", "score"])["score"]
    assert plain.compute(frame).isna().tolist() == [False, True, True]


@pytest.mark.parametrize("spec", [
    {"of": ["q1", "q2"], "sum": [1, 1], "missing": 1},
    {"of": ["q1", "q2"], "sum": [1, 1], "missing": True},
    {"of": ["q1", "q2"], "sum": [1, 1], "missing": 0, "clock": 2400},
    {"of": "q1", "floordiv": 2, "missing": 0},
])
def test_missing_as_zero_goes_with_a_plain_sum_only(spec):
    with pytest.raises(ValueError, match=r"derived\['score'\]: 'missing' is 0"):
        parse_derived({"score": spec}, ["q1", "q2", "score"])
