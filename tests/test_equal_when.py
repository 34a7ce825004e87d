"""Equalities under a condition (sklearn_privsyn.equal_when): a fully paid loan repaid it all.

Here: the declaration and its errors, the rule on a row and its application,
the estimators' rows (the derived balance then 0), the domain file and the
command line, and the drafter (a tie under a condition, none by chance).
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn.cli import main
from sklearn_privsyn.domain_draft import draft_domain
from sklearn_privsyn.domain_file import parse_domain, workload_params
from sklearn_privsyn.equal_when import EqualWhen, draft_equal_when, parse_equal_when

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_privsyn.PrivacyLeakWarning")

COLUMNS = ["amount", "principal", "status", "balance"]
RULE = {"principal": {"column": "amount", "when": "status", "values": ["Fully Paid"]}}


def loans(n=3000, seed=0):
    """Loans: the principal repaid is the amount when fully paid, a part of it otherwise."""
    rng = np.random.default_rng(seed)
    amount = rng.integers(10, 401, n) * 100
    status = rng.choice(["Current", "Fully Paid", "Late"], n, p=[0.8, 0.15, 0.05])
    principal = np.where(status == "Fully Paid", amount, np.round(amount * rng.random(n) * 0.5, 2))
    return pd.DataFrame({"amount": amount, "principal": principal.astype(float),
                         "status": status, "balance": amount - principal})


def loans_workload(**kwargs):
    return QueryWorkload(bounds={"amount": (1000, 40000), "principal": (0, 40000)},
                         decimals={"principal": 2, "balance": 2},
                         derived={"balance": {"of": ["amount", "principal"], "sum": [1, -1]}},
                         k=2, **kwargs)


def test_a_declaration_parses_into_a_rule_kept_and_applied_on_its_rows():
    rule, = parse_equal_when(RULE, COLUMNS)
    assert rule == EqualWhen("principal", "amount", "status", ("Fully Paid",))
    assert rule.columns == ("principal", "amount", "status") and rule.key == "equal_when"
    rows = pd.DataFrame({"amount": [1000, 2000, 3000, np.nan, 5000],
                         "principal": [400.5, 2000.0, 10.0, 7.0, np.nan],
                         "status": ["Current", "Fully Paid", "Fully Paid", "Fully Paid",
                                    "Fully Paid"]})
    assert rule.kept(rows).tolist() == [True, True, False, True, True]
    applied = rule.apply(rows)
    assert applied.tolist()[:4] == [400.5, 2000.0, 3000.0, 7.0] and np.isnan(applied[4])
    assert rule.kept(rows.assign(principal=applied)).all()
    whole = pd.DataFrame({"a": [5, 6], "b": [2.4, 3.0], "c": ["y", "n"]})
    tied = EqualWhen("a", "b", "c", ("y",)).apply(whole)  # an integer column stays integer
    assert tied.tolist() == [2, 6] and tied.dtype == whole["a"].dtype
    assert parse_equal_when(None, COLUMNS) == ()


@pytest.mark.parametrize("spec, match", [
    ({"principal": {"column": "amount", "when": "status"}}, r"equal_when\['principal'\] must "
                                                             r"be \{\"column\": other"),
    ({"principal": {"column": "paid", "when": "status", "values": ["x"]}},
     "'paid' is not a column of the table"),
    ({"principal": {"column": "principal", "when": "status", "values": ["x"]}},
     "cannot be equal to itself"),
    ({"principal": {"column": "amount", "when": "amount", "values": [1]}},
     "must be a third column"),
    ({"principal": {"column": "amount", "when": "status", "values": []}},
     "\"values\" must be a non-empty list"),
    ({"owed": {"column": "amount", "when": "status", "values": ["x"]}},
     r"equal_when\['owed'\]: 'owed' is not a column"),
])
def test_bad_declarations_name_the_column(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_equal_when(spec, COLUMNS)


@pytest.mark.parametrize("rule, match", [
    ({"balance": {"column": "amount", "when": "status", "values": ["Fully Paid"]}},
     r"equal_when\['balance'\]: column 'balance' is derived"),
    ({"principal": {"column": "amount", "when": "status", "values": ["Paid"]}},
     r"\['Paid'\] not among the values of column 'status'"),
    ({"principal": {"column": "status", "when": "amount", "values": [1]}},
     "column 'status' is not a number"),
])
def test_a_workload_refuses_a_rule_it_cannot_keep(rule, match):
    with pytest.raises(ValueError, match=match):
        loans_workload(equal_when=rule).fit(loans(300))


def test_the_rows_of_a_fully_paid_loan_repaid_its_amount_and_owe_nothing():
    X = loans(3000)
    plain = AdaptiveProjection(epsilon=1.0, workload=loans_workload(), random_state=0).fit(X)
    ruled = AdaptiveProjection(epsilon=1.0, workload=loans_workload(equal_when=RULE),
                               random_state=0).fit(X)
    assert ruled.ledger_.entries == plain.ledger_.entries  # no budget
    before, after = plain.sample(3000, random_state=1), ruled.sample(3000, random_state=1)
    paid = before["status"] == "Fully Paid"
    assert (before.loc[paid, "balance"] != 0).mean() > 0.5  # the model alone keeps balances
    paid = after["status"] == "Fully Paid"
    assert paid.mean() == pytest.approx(X["status"].eq("Fully Paid").mean(), abs=0.04)
    assert (after.loc[paid, "principal"] == after.loc[paid, "amount"]).all()
    assert (after.loc[paid, "balance"] == 0).all()
    assert (after.loc[~paid, "principal"] == before.loc[~paid, "principal"]).all()
    assert (after.dtypes == X.dtypes).all()
    # decoding the principal alone brings what it needs
    codes = ruled.workload_.encoder_.encode(X.drop(columns="balance"))[:5]
    one = ruled.workload_.decode(codes, random_state=0, columns=["principal"])
    assert (one["principal"] == X["amount"][:5]).where(X["status"][:5] == "Fully Paid",
                                                        True).all()


def test_a_domain_file_and_the_command_line_keep_the_rule(tmp_path):
    domain = {"amount": {"bounds": [1000, 40000], "step": 100},
              "principal": {"bounds": [0, 40000], "decimals": 2, "equal_when": RULE["principal"]},
              "status": ["Current", "Fully Paid", "Late"],
              "balance": {"derived": {"of": ["amount", "principal"], "sum": [1, -1]},
                          "decimals": 2}}
    assert parse_domain(domain)["equal_when"] == RULE
    assert workload_params(domain)["equal_when"] == RULE
    with pytest.raises(ValueError, match=r"the domain: equal_when\['principal'\]: 'x' is not"):
        parse_domain({**domain, "principal": {"bounds": [0, 40000], "equal_when": {
            "column": "x", "when": "status", "values": ["Late"]}}})
    loans(800).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "d.json").write_text(json.dumps(domain))
    assert main(["fit", str(tmp_path / "d.csv"), "--domain", str(tmp_path / "d.json"),
                 "--epsilon", "0.5", "--seed", "0", "-q", "-o", str(tmp_path / "s.csv")]) == 0
    rows = pd.read_csv(tmp_path / "s.csv")
    paid = rows["status"] == "Fully Paid"
    assert paid.any() and (rows.loc[paid, "balance"] == 0).all()


def test_the_drafter_finds_the_tie_of_a_condition_and_says_so(tmp_path, capsys):
    X = loans(3000).drop(columns="balance")  # (with it, the amount is drafted as a total)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draft = draft_domain(X)
    assert draft["principal"]["equal_when"] == RULE["principal"]
    assert draft["principal"]["at_most"] == "amount"
    assert all("equal_when" not in draft[c] for c in ("amount", "status"))
    X.to_csv(tmp_path / "d.csv", index=False)
    assert main(["domain", str(tmp_path / "d.csv"), "-o", str(tmp_path / "d.json")]) == 0
    assert "principal == amount when status in ['Fully Paid']" in capsys.readouterr().err


@pytest.mark.parametrize("make", [
    # ties of chance: two counts of 0-4 equal on a fifth of the rows, whatever the status
    lambda X, rng: X.assign(amount=rng.integers(0, 5, len(X)), principal=rng.integers(
        0, 5, len(X)).astype(float)),
    # a tie on 35 rows of two counts that tie by chance on a fifth of the rows: an
    # independent pairing breaks it on 28, fewer than MIN_BROKEN_ROWS
    lambda X, rng: (lambda a, b, paid: X.assign(
        status=np.where(paid, "Fully Paid", "Current"), amount=a,
        principal=np.where(paid, a, b).astype(float)))(
        rng.integers(0, 5, len(X)), rng.integers(0, 5, len(X)), np.arange(len(X)) < 35),
    # the tie broken on 1% of the fully paid loans: more than coding errors
    lambda X, rng: X.assign(principal=np.where(
        (X["status"] == "Fully Paid") & (np.arange(len(X)) % 100 == 0), 1.0, X["principal"])),
    # a tie at one value: every late loan repaid nothing and owes no fee (ames: no basement,
    # no basement bath and no basement area), two facts of a value, no equality
    lambda X, rng: X.assign(amount=np.where(X["status"] == "Late", 0, X["amount"]),
                            principal=np.where(X["status"] == "Late", 0.0, X["principal"] + 1)),
    # a tie on every row but a third of the late loans: nearly the same column, not a
    # condition (the other rows tie too, on more than MAX_OTHER_TIE_SHARE of them)
    lambda X, rng: X.assign(principal=np.where(
        (X["status"] == "Late") & (np.arange(len(X)) % 3 == 0), 1.0, X["amount"])),
])
def test_the_drafter_takes_no_tie_of_chance_nor_a_broken_one(make):
    X = make(loans(3000), np.random.default_rng(5)).drop(columns="balance")
    domain = {"amount": {"bounds": [0, 40000]}, "principal": {"bounds": [0, 40000]},
              "status": {"values": ["Current", "Fully Paid", "Late"]}}
    draft_equal_when(X, domain, "read_from_data")
    assert all("equal_when" not in e for e in domain.values())


def test_a_row_breaking_the_rule_keeps_the_values_its_column_can_hold():
    # ames: a house without a basement has 0 basement baths and 0 square feet of it; a rule
    # baths == area there, applied to a row of the model with 1,284 square feet, gave the
    # baths (listed 0-3) a value of 1,284
    wl = QueryWorkload(domain={"baths": [0, 1, 2, 3], "area": [0, 2, 800, 1284],
                               "basement": ["none", "some"]},
                       equal_when={"baths": {"column": "area", "when": "basement",
                                             "values": ["none"]}}, k=2)
    wl.fit(pd.DataFrame({"baths": [0, 2, 1] * 10, "area": [0, 800, 1284] * 10,
                         "basement": ["none", "some", "some"] * 10}))
    rows = pd.DataFrame({"baths": [1, 3, 2], "area": [2, 1284, 800],
                         "basement": ["none", "none", "some"]})
    decoded = wl.decode(wl.encode(rows), random_state=0)
    assert decoded["baths"].tolist() == [2, 3, 2]  # applied; kept (1,284 is no bath count); none
    rule, = wl.equal_when_
    assert rule.apply(rows).tolist() == [2, 1284, 2]  # without the column's values: as before
