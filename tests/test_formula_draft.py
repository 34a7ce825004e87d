"""``privsyn domain`` drafts a loan's installment as the annuity of its amount, rate and term.

Here: the formula found (a percentage or a fraction a year), missing where a
source is, a few coding errors allowed and no more, no formula where there is
none, and the synthetic rows of a fit on the draft computing it on every row.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn._formula_draft import MAX_OFF_SHARE, annuity_text, draft_annuities
from sklearn_privsyn.domain_draft import MARK, draft_domain
from sklearn_privsyn.domain_file import workload_params


def loans(n=2000, seed=0, fraction=False):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"amount": rng.integers(10, 400, n) * 100,
                      "rate": rng.integers(500, 2500, n) / 100,
                      "term": rng.choice([36, 60], n),
                      "purpose": rng.choice(["car", "home", "debt"], n)})
    monthly = X["rate"] / 1200
    X["installment"] = (X["amount"] * monthly / (1 - (1 + monthly) ** -X["term"])).round(2)
    if fraction:
        X["rate"] = (X["rate"] / 100).round(4)
    return X


def draft(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return draft_domain(X)


@pytest.mark.parametrize("fraction, per_period", [(False, 1200), (True, 12)])
def test_an_installment_is_drafted_as_the_annuity_of_its_amount_rate_and_term(fraction,
                                                                               per_period):
    domain = draft(loans(fraction=fraction))
    entry = domain["installment"]
    assert entry[MARK] and entry["decimals"] == 2
    assert entry["derived"] == {"of": ["amount", "rate", "term"],
                                "expression": annuity_text("amount", "rate", "term", per_period)}
    assert "bounds" in domain["amount"] and "derived" not in domain["rate"]


def test_missing_only_where_a_source_is_missing():
    X = loans()
    gone = np.arange(len(X)) % 7 == 0
    X.loc[gone, "rate"] = np.nan
    X.loc[gone, "installment"] = np.nan
    domain = {c: {"bounds": [0, 1e5]} for c in ["amount", "rate", "term", "installment"]}
    draft_annuities(X, domain, MARK)
    assert "derived" in domain["installment"]
    X.loc[1, "installment"] = np.nan  # missing where every source is present: no formula
    domain = {c: {"bounds": [0, 1e5]} for c in ["amount", "rate", "term", "installment"]}
    draft_annuities(X, domain, MARK)
    assert "derived" not in domain["installment"]


@pytest.mark.parametrize("share_off, drafted", [(MAX_OFF_SHARE / 2, True),
                                                (MAX_OFF_SHARE * 5, False)])
def test_a_few_coding_errors_are_allowed_and_no_more(share_off, drafted):
    X = loans(n=10000)
    off = np.arange(int(share_off * len(X)))
    X.loc[off, "installment"] += 5.0
    domain = {c: {"bounds": [0, 1e5]} for c in ["amount", "rate", "term", "installment"]}
    draft_annuities(X, domain, MARK)
    assert ("derived" in domain["installment"]) is drafted


def test_no_formula_where_there_is_none():
    X = loans()
    X["installment"] = np.random.default_rng(1).permutation(X["installment"].to_numpy())
    domain = draft(X)
    assert "derived" not in domain["installment"]


def test_the_synthetic_rows_compute_the_installment_on_every_row():
    X = loans()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        params = workload_params(draft(X))
    est = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(**params, k=2),
                             random_state=0).fit(X)
    rows = est.sample(500, random_state=1)
    monthly = rows["rate"] / 1200
    paid = rows["amount"] * monthly / (1 - (1 + monthly) ** -rows["term"])
    assert np.all(np.abs(rows["installment"] - paid) <= 0.005 + 1e-9)
    assert rows["installment"].dtype == X["installment"].dtype


def test_a_column_a_formula_cannot_name_is_left_modelled():
    X = loans().rename(columns={"amount": "amount `usd`"})
    domain = {c: {"bounds": [0, 1e5]} for c in ["amount `usd`", "rate", "term", "installment"]}
    draft_annuities(X, domain, MARK)
    assert "derived" not in domain["installment"]
