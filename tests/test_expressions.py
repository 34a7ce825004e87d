"""Formulas (sklearn_privsyn.expressions) and the derived columns they declare.

A formula is read once and evaluated over numpy arrays; anything but numbers,
column names, arithmetic and a few functions is refused. Declared as a derived
``"expression"``, a column is computed from its sources (which may be derived
themselves, computed first) in every synthetic row, and the fit never reads it.
"""

import json

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.cli import main
from sklearn_privsyn.derived import parse_derived
from sklearn_privsyn.domain_file import parse_domain, workload_params
from sklearn_privsyn.expressions import Expression

ANNUITY = "amount * (rate / 1200) / (1 - (1 + rate / 1200) ** -term)"
RATES = {"A": [5.0, 5.5], "B": [9.0, 9.5], "C": [14.0, 14.5]}


def loans(n=1500, seed=0):
    """Loans: a grade, its rate (within the grade's range), an amount, a term and the
    monthly installment of those three (an annuity), in cents."""
    rng = np.random.default_rng(seed)
    grade = rng.choice(list(RATES), n, p=[0.5, 0.3, 0.2])
    rate = np.round([rng.uniform(*RATES[g]) for g in grade], 2)
    amount = rng.integers(10, 400, n) * 100
    term = rng.choice([36, 60], n)
    monthly = rate / 1200
    installment = np.round(amount * monthly / (1 - (1 + monthly) ** -term), 2)
    return pd.DataFrame({"grade": grade, "rate": rate, "amount": amount, "term": term,
                         "installment": installment})


def loan_workload(**derived):
    return QueryWorkload(
        domain={"grade": list(RATES), "term": [36, 60]}, bounds={"amount": (1000, 40000)},
        derived={"rate": {"of": "grade", "ranges": RATES},
                 "installment": {"of": ["amount", "rate", "term"], "expression": ANNUITY},
                 **derived},
        decimals={"rate": 2, "installment": 2},
    )


def annuity(frame):
    monthly = frame["rate"] / 1200
    return frame["amount"] * monthly / (1 - (1 + monthly) ** -frame["term"])


@pytest.mark.parametrize("text, names, expected", [
    ("a + 2 * b", ("a", "b"), [7.0, np.nan]),
    ("-a ** 2 / b", ("a", "b"), [-1 / 3, np.nan]),
    ("a // 2 + a % 2", ("a",), [1.0, 2.0]),
    ("`capital-gain` - a", ("capital-gain", "a"), [9.0, 1.0]),
    ("max(a, b) + min(a, 0) + abs(-a)", ("a", "b"), [4.0, np.nan]),
    ("exp(log(a)) + b ** 0.5", ("a", "b"), [1 + 3**0.5, np.nan]),
    ("a / (a - 1)", ("a",), [np.inf, 1.5]),  # non-finite as numpy gives it
])
def test_a_formula_reads_its_names_and_evaluates_as_numpy(text, names, expected):
    expression = Expression(text)
    assert expression.names == names
    values = {"a": np.array([1.0, 3.0]), "b": np.array([3.0, np.nan]),
              "capital-gain": np.array([10.0, 4.0])}
    np.testing.assert_allclose(expression.evaluate(values), expected)


@pytest.mark.parametrize("text, match", [
    ("", "non-empty text"),
    ("a +", "not a valid formula"),
    ("`a + b", "unmatched backtick"),
    ("a.real", "holds 'Attribute'"),
    ("a[0]", "holds 'Subscript'"),
    ("a < b", "holds 'Compare'"),
    ("__import__('os')", "calls a function it may not"),
    ("log(a, 2)", "calls a function it may not"),
    ("max(a)", "calls a function it may not"),
    ("a + 'x'", "'x' is not a number"),
    ("a + True", "True is not a number"),
    ("(lambda: 1)()", "calls a function it may not"),
])
def test_anything_but_arithmetic_is_refused(text, match):
    with pytest.raises(ValueError, match=match):
        Expression(text)


def test_a_formula_of_a_derived_source_keeps_every_synthetic_row_consistent():
    X = loans()
    est = AdaptiveProjection(epsilon=1.0, workload=loan_workload(), random_state=0).fit(X)
    assert est.workload_.columns_ == ("grade", "amount", "term")
    rows = est.sample(3000)
    assert list(rows.columns) == list(X.columns)
    assert (rows.dtypes == X.dtypes).all()
    # the rate as written (2 decimals) is what the installment is computed from, in cents
    np.testing.assert_allclose(rows["installment"], annuity(rows), atol=0.005 + 1e-9)
    assert (rows["installment"] == rows["installment"].round(2)).all()
    low, high = (rows["grade"].map({g: r[i] for g, r in RATES.items()}) for i in (0, 1))
    assert rows["rate"].between(low, high).all()


def test_the_fit_never_reads_a_formula_column():
    X = loans(400)
    scrambled = X.assign(installment=np.random.default_rng(1).normal(size=len(X)))
    fits = [AdaptiveProjection(epsilon=1.0, workload=loan_workload(), random_state=3).fit(t)
            for t in (X, scrambled)]
    assert fits[0].ledger_.entries == fits[1].ledger_.entries
    pd.testing.assert_frame_equal(fits[0].sample(200), fits[1].sample(200))


def test_a_formula_is_missing_where_a_source_is_or_it_is_no_finite_number():
    X = pd.DataFrame({"a": [1.0, np.nan, 4.0, 0.0], "b": [2, 3, 4, 5]})
    ratio = parse_derived({"r": {"of": ["a", "b"], "expression": "b / a"}}, ["a", "b", "r"])
    out = ratio["r"].compute(X)
    np.testing.assert_allclose(out, [2.0, np.nan, 1.0, np.nan])


def test_formulas_are_computed_after_the_derived_columns_they_read():
    columns = ["c", "b", "a", "x"]
    parsed = parse_derived({"c": {"of": "b", "expression": "b + 1"},
                            "b": {"of": ["a", "x"], "expression": "a * x"},
                            "a": {"of": "x", "floordiv": 10}}, columns)
    assert list(parsed) == ["a", "b", "c"]
    frame = pd.DataFrame({"x": [25.0, 7.0]})
    for name, column in parsed.items():
        frame[name] = column.compute(frame)
    assert frame["c"].tolist() == [51.0, 1.0]


@pytest.mark.parametrize("derived, match", [
    ({"r": {"of": ["a", "b"], "expression": "a +"}}, r"derived\['r'\]: formula 'a \+' is not"),
    ({"r": {"of": ["a"], "expression": "a + b"}},
     r"derived\['r'\]: the formula reads columns \['a', 'b'\]; 'of' must list exactly"),
    ({"r": {"of": ["a", "b"], "expression": "2 * a"}}, "'of' must list exactly"),
    ({"r": {"of": ["a", "zz"], "expression": "a + zz"}}, "its source 'zz' must be another"),
    ({"r": {"of": ["r", "a"], "expression": "r + a"}}, "its source 'r' must be another"),
    ({"r": {"of": ["a", "a"], "expression": "a"}}, "distinct source columns"),
    ({"r": {"of": [], "expression": "1"}}, "distinct source columns"),
    ({"r": {"of": "a", "expression": 3}}, "formula must be non-empty text"),
    ({"r": {"of": "b", "expression": "b"}, "b": {"of": "r", "expression": "r"}},
     r"derived columns \['b', 'r'\] read each other in a circle"),
])
def test_bad_formulas_name_the_column(derived, match):
    with pytest.raises(ValueError, match=match):
        parse_derived(derived, ["a", "b", "r"])


def test_a_formula_of_listed_values_that_are_not_numbers_is_refused():
    X = loans(200).assign(grade_text=lambda t: t["grade"])
    wl = loan_workload(grade_text={"of": "grade", "expression": "grade * 2"})
    with pytest.raises(ValueError, match=r"derived\['grade_text'\] needs a number column; "
                                         r"'grade' holds listed values"):
        wl.fit(X)


def test_decode_of_a_formula_alone_brings_its_sources_and_theirs():
    X = loans(300)
    wl = loan_workload().fit(X)
    some = wl.decode(wl.encode(X), random_state=0, columns=["installment"])
    assert list(some.columns) == ["grade", "rate", "amount", "term", "installment"]
    np.testing.assert_allclose(some["installment"], annuity(some), atol=0.005 + 1e-9)


def test_the_command_line_fits_a_domain_file_with_a_formula(tmp_path, capsys):
    X = loans(800)
    X.to_csv(tmp_path / "loans.csv", index=False)
    domain = {"grade": {"values": list(RATES)},
              "rate": {"derived": {"of": "grade", "ranges": RATES}, "decimals": 2},
              "amount": {"bounds": [1000, 40000], "step": 100},
              "term": {"values": [36, 60]},
              "installment": {"derived": {"of": ["amount", "rate", "term"],
                                          "expression": ANNUITY}, "decimals": 2}}
    (tmp_path / "d.json").write_text(json.dumps(domain))
    assert workload_params(domain)["derived"]["installment"]["expression"] == ANNUITY
    assert parse_domain(domain)["derived"]["rate"] == {"of": "grade", "ranges": RATES}
    assert main(["fit", str(tmp_path / "loans.csv"), "--domain", str(tmp_path / "d.json"),
                 "--epsilon", "1", "--seed", "0", "-o", str(tmp_path / "s.csv")]) == 0
    rows = pd.read_csv(tmp_path / "s.csv")
    assert len(rows) == len(X)
    np.testing.assert_allclose(rows["installment"], annuity(rows), atol=0.005 + 1e-9)
