"""Value rules (sklearn_privsyn.value_rules): a value held exactly when another column holds
one of a few, in every synthetic row.

Here: the declaration and its errors, the rule on a row, the values checked against the
domain, the drafter, the estimators' rows and the domain file. The sampler itself is
order_rules.sample_keeping_rules, tested with the order rules.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, PrivacyLeakWarning, QueryWorkload
from sklearn_privsyn.domain_draft import draft_domain
from sklearn_privsyn.domain_file import parse_domain, workload_params
from sklearn_privsyn.value_rules import ValueRule, parse_exactly_when

RULE = {"occupation": {"value": "?", "column": "work", "values": ["?", "none"]}}


def jobs(n=3000, seed=0):
    """A work status, an occupation that is "?" exactly when there is no work, a region."""
    rng = np.random.default_rng(seed)
    work = rng.choice(["?", "none", "private", "public", "own"], n, p=[0.06, 0.01, 0.6, 0.2,
                                                                       0.13])
    occupation = np.where(np.isin(work, ["?", "none"]), "?",
                          rng.choice(["sales", "tech", "craft", "admin"], n))
    region = rng.choice(["north", "south"], n)
    return pd.DataFrame({"work": work, "occupation": occupation, "region": region})


def jobs_workload(**kwargs):
    return QueryWorkload(domain={"work": ["?", "none", "private", "public", "own"],
                                 "occupation": ["?", "sales", "tech", "craft", "admin"],
                                 "region": ["north", "south"]}, k=2, **kwargs)


def test_a_declaration_parses_and_a_row_keeps_it_both_ways():
    (rule,) = parse_exactly_when(RULE, ["work", "occupation", "region"])
    assert rule == ValueRule("occupation", "?", "work", ("?", "none"))
    rows = pd.DataFrame({"work": ["?", "none", "private", "private", "?"],
                         "occupation": ["?", "?", "sales", "?", "tech"]})
    assert rule.kept(rows).tolist() == [True, True, True, False, False]


@pytest.mark.parametrize("spec, match", [
    ({"job": RULE["occupation"]}, r"exactly_when\['job'\]: 'job' is not a column"),
    ({"occupation": {"value": "?", "column": "firm", "values": ["?"]}},
     r"exactly_when\['occupation'\]: 'firm' is not a column"),
    ({"occupation": {"value": "?", "column": "occupation", "values": ["?"]}},
     "cannot be ruled by itself"),
    ({"occupation": {"value": "?", "column": "work"}}, "must be {\"value\": v"),
    ({"occupation": {"value": "?", "column": "work", "values": []}}, "non-empty list"),
    (["occupation"], "must be a dict"),
])
def test_bad_declarations_name_the_column(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_exactly_when(spec, ["work", "occupation", "region"])


def test_a_value_outside_the_domain_is_refused_naming_the_column():
    wl = jobs_workload(exactly_when={"occupation": {"value": "?", "column": "work",
                                                    "values": ["?", "retired"]}})
    with pytest.raises(ValueError, match=r"\['retired'\] not among the values of column 'work'"):
        wl.fit(jobs(200))


def test_synthetic_rows_keep_the_rule_and_the_models_shares():
    X = jobs()
    plain = AdaptiveProjection(epsilon=0.05, workload=jobs_workload(), random_state=0).fit(X)
    ruled = AdaptiveProjection(epsilon=0.05, workload=jobs_workload(exactly_when=RULE),
                               random_state=0).fit(X)
    (rule,) = ruled.workload_.value_rules_
    before, after = plain.sample(4000, random_state=1), ruled.sample(4000, random_state=1)
    assert rule.kept(before).mean() < 0.95  # the 1-way fit draws the two apart
    assert rule.kept(after).all()
    assert ruled.ledger_.entries == plain.ledger_.entries
    # one product (the 1-way marginals only): its tables are the shares the rows keep,
    # to sampling error (sd 0.008 at 4,000 rows)
    assert len(ruled.component_weights_) == 1
    for a, col in [(0, "work"), (2, "region")]:
        table = ruled.component_tables_[a][0]
        levels = ruled.workload_.categories_[col]
        shares = after[col].value_counts(normalize=True).reindex(levels, fill_value=0)
        np.testing.assert_allclose(shares.to_numpy(), table, atol=0.03)


def test_the_drafter_finds_the_rule_and_not_a_broken_one():
    X = jobs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(X)
        broken = draft_domain(X.assign(occupation=X["occupation"].where(
            X.index != X.index[X["work"] == "private"][0], "?")))
        kwargs = workload_params(draft)
    assert draft["occupation"]["exactly_when"] == RULE["occupation"]
    assert draft["occupation"]["read_from_data"] is True
    assert "exactly_when" not in broken["occupation"]
    assert all("exactly_when" not in draft[c] for c in ["work", "region"])
    wl = QueryWorkload(**kwargs, k=2).fit(X)
    assert wl.value_rules_ == parse_exactly_when(RULE, list(X.columns))


def test_a_domain_file_declares_value_rules():
    params = parse_domain({"work": ["?", "none", "private"],
                           "occupation": {"values": ["?", "sales"],
                                          "exactly_when": RULE["occupation"]}})
    assert params["exactly_when"] == RULE
    with pytest.raises(ValueError, match=r"the domain: exactly_when\['occupation'\]: 'job'"):
        parse_domain({"work": ["?"], "occupation": {"values": ["?"], "exactly_when": {
            "value": "?", "column": "job", "values": ["?"]}}})
