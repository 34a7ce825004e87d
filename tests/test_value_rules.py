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
from sklearn_privsyn.value_rule_drafts import (
    draft_exactly_between,
    draft_exactly_when,
    draft_only_when,
)
from sklearn_privsyn.value_rules import (
    ValueRule,
    parse_exactly_when,
    parse_only_when,
    parse_value_rules,
    rule_entries,
)

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


def fit_without_and_with(X, workload, **rules):
    """The 1-way fit (eps 0.05) without and with the rules, and 4,000 rows of each."""
    plain = AdaptiveProjection(epsilon=0.05, workload=workload(), random_state=0).fit(X)
    ruled = AdaptiveProjection(epsilon=0.05, workload=workload(**rules), random_state=0).fit(X)
    return plain, ruled, plain.sample(4000, random_state=1), ruled.sample(4000, random_state=1)


def test_synthetic_rows_keep_the_rule_and_the_models_shares():
    plain, ruled, before, after = fit_without_and_with(jobs(), jobs_workload, exactly_when=RULE)
    (rule,) = ruled.workload_.value_rules_
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


def break_first(column, where, value):
    """The table with ``column`` set to ``value`` on the first row where ``where`` holds."""
    def broken(X):
        return X.assign(**{column: X[column].where(X.index != X.index[where(X)][0], value)})
    return broken


@pytest.mark.parametrize("table, rules, broken", [
    (jobs, RULE, break_first("occupation", lambda X: X["work"] == "private", "?")),
    # a value held exactly where a column is missing; one single application with a
    # joint income, no rule
    (lambda: loans(), {"kind": {"value": "single", "column": "joint_income", "missing": True}},
     break_first("joint_income", lambda X: X["kind"] == "single", 1000.0)),
])
def test_the_drafter_finds_the_rule_and_not_a_broken_one(table, rules, broken):
    X = table()
    (column,) = rules
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(X)
        refused = draft_domain(broken(X))
        wl = QueryWorkload(**workload_params(draft), k=2).fit(X)
    assert draft[column]["exactly_when"] == rules[column]
    assert draft[column]["read_from_data"] is True
    assert "exactly_when" not in refused[column]
    assert all("exactly_when" not in draft[c] for c in X.columns if c != column)
    assert wl.value_rules_ == parse_exactly_when(rules, list(X.columns))


def test_a_domain_file_declares_value_rules():
    params = parse_domain({"work": ["?", "none", "private"],
                           "occupation": {"values": ["?", "sales"],
                                          "exactly_when": RULE["occupation"]}})
    assert params["exactly_when"] == RULE
    with pytest.raises(ValueError, match=r"the domain: exactly_when\['occupation'\]: 'job'"):
        parse_domain({"work": ["?"], "occupation": {"values": ["?"], "exactly_when": {
            "value": "?", "column": "job", "values": ["?"]}}})


# Implications (only_when): a value held only beside a few values of another column.

ROLE = {"role": [{"value": "rep", "column": "dept", "values": ["sales"]},
                 {"value": "lab", "column": "dept", "values": ["research"]}]}


def roles(n=3000, seed=0):
    """A job role, its department (a boss works in either), a region apart."""
    rng = np.random.default_rng(seed)
    role = rng.choice(["rep", "lab", "boss"], n, p=[0.4, 0.4, 0.2])
    dept = np.where(role == "rep", "sales", np.where(role == "lab", "research",
                                                      rng.choice(["sales", "research"], n)))
    return pd.DataFrame({"role": role, "dept": dept, "region": rng.choice(["n", "s"], n)})


def roles_workload(**kwargs):
    return QueryWorkload(domain={"role": ["rep", "lab", "boss"], "dept": ["sales", "research"],
                                 "region": ["n", "s"]}, k=2, **kwargs)


def test_an_implication_parses_and_a_row_keeps_it_one_way_only():
    rep, lab = parse_only_when(ROLE, ["role", "dept"])
    assert rep == ValueRule("role", "rep", "dept", ("sales",), exactly=False)
    assert str(rep) == "role == 'rep' only when dept in ['sales']"
    rows = pd.DataFrame({"role": ["rep", "rep", "boss", "boss", None],
                         "dept": ["sales", "research", "sales", "research", "research"]})
    # a boss (or a missing role) in research keeps it: only the rep outside sales breaks it
    assert rep.kept(rows).tolist() == [True, False, True, True, True]
    assert lab.kept(rows).tolist() == [True, True, True, True, True]


@pytest.mark.parametrize("spec, match", [
    ({"job": ROLE["role"][0]}, r"only_when\['job'\]: 'job' is not a column"),
    ({"role": {"value": "rep", "column": "firm", "values": ["x"]}},
     r"only_when\['role'\]: 'firm' is not a column"),
    ({"role": {"value": "rep", "column": "role", "values": ["rep"]}},
     "cannot be ruled by itself"),
    ({"role": [{"value": "rep", "values": ["sales"]}]}, "must be {\"value\": v"),
    ({"role": {"value": "rep", "column": "dept", "values": "sales"}}, "non-empty list"),
])
def test_bad_implications_name_the_parameter_and_the_column(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_only_when(spec, ["role", "dept"])


def test_an_implication_outside_the_domain_is_refused_naming_it():
    wl = roles_workload(only_when={"role": {"value": "rep", "column": "dept",
                                            "values": ["marketing"]}})
    with pytest.raises(ValueError, match=r"only_when\['role'\]: \['marketing'\] not among the "
                                         r"values of column 'dept'"):
        wl.fit(roles(200))


def test_synthetic_rows_keep_implications_with_the_same_ledger():
    plain, ruled, before, after = fit_without_and_with(roles(), roles_workload, only_when=ROLE)
    rules = ruled.workload_.value_rules_
    assert [r.exactly for r in rules] == [False, False] and ruled.workload_.rules_ == rules
    assert min(r.kept(before).mean() for r in rules) < 0.8  # drawn apart: about 0.6 each
    assert all(r.kept(after).all() for r in rules)
    assert ruled.ledger_.entries == plain.ledger_.entries
    # the 1-way shares of the model are kept where the rules allow them: role and region
    # exactly (sd 0.008), dept as the bosses can make it
    for a, col in [(0, "role"), (2, "region")]:
        levels = ruled.workload_.categories_[col]
        shares = after[col].value_counts(normalize=True).reindex(levels, fill_value=0)
        np.testing.assert_allclose(shares.to_numpy(), ruled.component_tables_[a][0],
                                   atol=0.03)


def test_the_drafter_finds_implications_both_ways_and_none_by_chance():
    X = roles()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(X)
        kwargs = workload_params(draft)
    assert draft["role"]["only_when"] == ROLE["role"]
    assert draft["role"]["read_from_data"] is True
    # a department holds a rep or a lab only beside ... each, with the bosses: 2 values
    assert draft["dept"]["only_when"] == [
        {"value": "sales", "column": "role", "values": ["boss", "rep"]},
        {"value": "research", "column": "role", "values": ["boss", "lab"]}]
    assert "only_when" not in draft["region"]
    wl = QueryWorkload(**kwargs, k=2).fit(X)
    assert set(wl.value_rules_) >= set(parse_only_when(ROLE, list(X.columns)))
    # independent columns of few values: no rule in 20 tables (each would be a chance below
    # exp(-30))
    rng = np.random.default_rng(1)
    for seed in range(20):
        Y = pd.DataFrame({c: rng.choice(list("abcd")[:k], 400, p=p) for c, k, p in [
            ("x", 2, [0.9, 0.1]), ("y", 3, [0.8, 0.15, 0.05]), ("z", 4, None)]})
        domain = {c: {"values": sorted(set(Y[c]))} for c in Y}
        draft_only_when(Y, domain, "read_from_data")
        assert not any("only_when" in e for e in domain.values())


@pytest.mark.parametrize("exceptions, drafted", [
    (["x1", "x2"], True),                # 0.2% of 1,000 reps: coding errors
    (["x1", "x2", "x3", "x4"], False),   # 0.4%: the reps are not all in sales
    (["x1"] * 5, False),                 # 5 rows: x1 is one of the reps' values, S is 2
])
def test_the_drafter_lets_a_few_coding_errors_through(exceptions, drafted):
    dept = ["sales"] * (1000 - len(exceptions)) + exceptions + ["research"] * 1000
    X = pd.DataFrame({"role": ["rep"] * 1000 + ["lab"] * 1000, "dept": dept})
    domain = {c: {"values": sorted(set(X[c]))} for c in X}
    draft_only_when(X, domain, "read_from_data")
    declared = domain["role"].get("only_when", [])
    declared = declared if isinstance(declared, list) else [declared]
    assert ({"value": "rep", "column": "dept", "values": ["sales"]} in declared) is drafted
    assert {"value": "lab", "column": "dept", "values": ["research"]} in declared


def verifications(n=4000, seed=2):
    """An income's verification, and a co-borrower's on joint applications only (missing
    on the others), never checked more closely than the borrower's own."""
    rng = np.random.default_rng(seed)
    levels = np.array(["none", "source", "full"])
    own = rng.integers(0, 3, n)
    joint = np.where(rng.random(n) < 0.3, np.minimum(own, rng.integers(0, 3, n)), -1)
    return pd.DataFrame({"own": levels[own],
                         "joint": np.where(joint >= 0, levels[np.maximum(joint, 0)], None)})


def test_the_drafter_finds_implications_of_a_column_that_may_be_missing():
    X = verifications()
    domain = {"own": {"values": ["full", "none", "source"]},
              "joint": {"values": ["full", "none", "source"], "missing": True}}
    draft_only_when(X, domain, "read_from_data")
    assert domain["joint"]["only_when"] == [
        {"value": "source", "column": "own", "values": ["full", "source"]},
        {"value": "full", "column": "own", "values": ["full"]}]
    # the other way, a missing co-borrower's verification beside "none" breaks "none only
    # when joint in [...]" on most rows: no rule
    assert "only_when" not in domain["own"]
    # missing beside the value counts against the rule: with 20 fully checked co-borrowers
    # (of about 400) beside a missing own verification, no rule for "full"
    Y = X.assign(own=X["own"].where(~X.index.isin(X.index[X["joint"] == "full"][:20])))
    domain = {"own": {"values": ["full", "none", "source"], "missing": True},
              "joint": {"values": ["full", "none", "source"], "missing": True}}
    draft_only_when(Y, domain, "read_from_data")
    assert domain["joint"]["only_when"] == {"value": "source", "column": "own",
                                            "values": ["full", "source"]}
    # 6 missing beside about 4,400 "source": coding errors (0.2%), not a value of the rule
    X = verifications(40_000)
    Y = X.assign(own=X["own"].where(~X.index.isin(X.index[X["joint"] == "source"][:6])))
    draft_only_when(Y, domain, "read_from_data")
    assert {"value": "source", "column": "own",
            "values": ["full", "source"]} in domain["joint"]["only_when"]


def test_the_drafter_states_rules_in_the_listed_values_only():
    X = roles()
    domain = {"role": {"values": ["rep", "Other"], "other": "Other"},
              "dept": {"values": ["sales", "research"]}, "region": {"values": ["n", "s"]}}
    draft_only_when(X, domain, "read_from_data")
    assert domain["role"]["only_when"] == ROLE["role"][0]  # "lab" is not listed
    assert "only_when" not in domain["dept"]  # its rules name "lab" or "boss"


def test_an_exactly_when_pair_is_not_drafted_again_as_an_implication():
    X = jobs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(X)
    assert "exactly_when" in draft["occupation"]
    assert "only_when" not in draft["occupation"] and "only_when" not in draft["work"]


def test_a_domain_file_declares_implications():
    params = parse_domain({"role": {"values": ["rep", "lab", "boss"],
                                    "only_when": ROLE["role"]},
                           "dept": ["sales", "research"]})
    assert params["only_when"] == ROLE
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert workload_params({"role": {"values": ["rep", "lab", "boss"],
                                         "only_when": ROLE["role"]},
                                "dept": ["sales", "research"]})["only_when"] == ROLE
    with pytest.raises(ValueError, match=r"the domain: only_when\['role'\]: 'job'"):
        parse_domain({"role": {"values": ["rep"], "only_when": {
            "value": "rep", "column": "job", "values": ["x"]}}, "dept": ["sales"]})


def test_the_command_line_drafts_implications_says_so_and_keeps_them(tmp_path, capsys):
    from sklearn_privsyn.cli import main

    roles(1500).to_csv(tmp_path / "d.csv", index=False)
    assert main(["domain", str(tmp_path / "d.csv"), "-o", str(tmp_path / "d.json")]) == 0
    assert "role == 'rep' only when dept in ['sales']" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "d.csv"), "--domain", str(tmp_path / "d.json"),
                 "--epsilon", "0.1", "--seed", "0", "-q", "-o", str(tmp_path / "s.csv")]) == 0
    rows = pd.read_csv(tmp_path / "s.csv")
    assert len(rows) == 1500
    assert (rows.loc[rows["role"] == "rep", "dept"] == "sales").all()
    assert (rows.loc[rows["role"] == "lab", "dept"] == "research").all()


# ---- ranges: a value held only beside a number within bounds (a job level's pay band) ----

BANDS = {"level": [{"value": 1, "column": "income", "between": [1000, 5000]},
                   {"value": 3, "column": "income", "between": [9000, 20000]}]}


def levels(n=3000, seed=0):
    """A job level, an income within the level's band, a city: the income a function of rank."""
    rng = np.random.default_rng(seed)
    level = rng.choice([1, 2, 3], n, p=[0.5, 0.3, 0.2])
    low, high = np.array([1000, 4000, 9000]), np.array([5000, 10000, 20000])
    income = np.round(low[level - 1] + rng.random(n) * (high - low)[level - 1])
    return pd.DataFrame({"level": level, "income": income,
                         "city": rng.choice(["Lyon", "Oslo"], n)})


def levels_workload(**kwargs):
    return QueryWorkload(domain={"level": [1, 2, 3], "city": ["Lyon", "Oslo"]},
                         bounds={"income": (1000, 20000)}, k=2, **kwargs)


def test_a_range_parses_and_a_row_keeps_it_one_way_only():
    first, third = parse_only_when(BANDS, ["level", "income"])
    assert first == ValueRule("level", 1, "income", (), exactly=False, between=(1000.0, 5000.0))
    assert str(first) == "level == 1 only when 1000 <= income <= 5000"
    assert first.numbers == ("income",) and first.columns == ("level", "income")
    rows = pd.DataFrame({"level": [1, 1, 1, 2, 3], "income": [1000, 5000.5, np.nan, 30, 30]})
    # the bounds are inside; a missing income keeps it; another level is not ruled
    assert first.kept(rows).tolist() == [True, False, True, True, True]
    assert third.kept(rows).tolist() == [True, True, True, True, False]


@pytest.mark.parametrize("spec, match", [
    ({"level": {"value": 1, "column": "income", "between": [5000, 1000]}}, "lo <= hi"),
    ({"level": {"value": 1, "column": "income", "between": [1000]}}, "two finite numbers"),
    ({"level": {"value": 1, "column": "income", "between": ["a", "b"]}}, "two finite numbers"),
    ({"level": {"value": 1, "column": "income", "between": [0, float("inf")]}},
     "two finite numbers"),
    ({"level": {"value": 1, "column": "income", "between": [0, 1], "values": [2]}},
     r"must be \{\"value\": v"),
])
def test_bad_ranges_name_the_parameter_and_the_column(spec, match):
    with pytest.raises(ValueError, match=r"only_when\['level'\].*" + match):
        parse_only_when(spec, ["level", "income"])


def test_a_range_compares_numbers_and_only_an_exact_one_names_missing_values():
    with pytest.raises(ValueError, match=r"only_when\['level'\] must be"):
        parse_only_when({"level": {**BANDS["level"][0], "missing": True}}, ["level", "income"])
    X = levels(200).assign(income=lambda d: d["income"].astype(str))
    wl = QueryWorkload(domain={"level": [1, 2, 3]}, k=1,
                       only_when={"level": BANDS["level"][0]})
    with pytest.raises(ValueError, match=r"only_when\['level'\]: column 'income' is not a "
                                         r"number"):
        wl.fit(X[["level", "income"]])


def test_synthetic_rows_keep_the_pay_bands_with_the_same_ledger():
    X = levels()
    plain = AdaptiveProjection(epsilon=0.1, workload=levels_workload(),
                               random_state=0).fit(X)
    ruled = AdaptiveProjection(epsilon=0.1, workload=levels_workload(only_when=BANDS),
                               random_state=0).fit(X)
    before, after = plain.sample(3000, random_state=1), ruled.sample(3000, random_state=1)
    rules = ruled.workload_.value_rules_
    assert min(r.kept(before).mean() for r in rules) < 0.9  # the 1-way fit draws them apart
    assert all(r.kept(after).all() for r in rules)
    assert ruled.ledger_.entries == plain.ledger_.entries
    # the level's shares stay the model's (the rows the rule leaves out are re-weighted;
    # the model's incomes allow it here: at eps 0.05 they held too few below 5,000)
    np.testing.assert_allclose(after["level"].value_counts(normalize=True).sort_index(),
                               before["level"].value_counts(normalize=True).sort_index(),
                               atol=0.03)


def test_a_domain_file_declares_ranges():
    entry = {"values": [1, 2, 3], "only_when": BANDS["level"]}
    params = parse_domain({"level": entry, "income": {"bounds": [1000, 20000]}})
    assert params["only_when"] == BANDS
    with pytest.raises(ValueError, match=r"the domain: only_when\['level'\]: \"between\""):
        parse_domain({"level": {"values": [1], "only_when": {
            "value": 1, "column": "income", "between": [3, 2]}},
            "income": {"bounds": [1000, 20000]}})


def test_the_drafter_finds_ranges_where_the_column_ranks_the_number():
    X = levels()
    domain = {"level": {"values": [1, 2, 3]}, "city": {"values": ["Lyon", "Oslo"]},
              "income": {"bounds": [1000, 20000]}}
    draft_only_when(X, domain, "read_from_data")
    rules = domain["level"]["only_when"]
    assert [(r["value"], r["column"]) for r in rules] == [(1, "income"), (2, "income"),
                                                          (3, "income")]
    for r in rules:  # the incomes beside the level, but for at most 0.2% of them (the tails)
        beside = X.loc[X["level"] == r["value"], "income"]
        lo, hi = r["between"]
        assert beside.min() <= lo <= hi <= beside.max()
        assert beside.between(lo, hi).mean() >= 0.998
    # 1,526 rows of level 1: one left out at each end (861 of level 2: none)
    assert rules[0]["between"] != [X.loc[X["level"] == 1, "income"].min(),
                                   X.loc[X["level"] == 1, "income"].max()]
    assert "only_when" not in domain["city"]  # a city does not rank the incomes
    with pytest.warns(PrivacyLeakWarning, match="read_from_data"):
        params = workload_params(domain)
    assert len(QueryWorkload(**params, k=2).fit(X).value_rules_) == 3


def test_the_drafter_finds_the_prices_of_service_tiers():
    # a telecom's monthly price by internet service (modeldata's wa_churn): the tiers overlap,
    # the service explains 0.78 of the variance of the prices' ranks, and a fibre customer
    # never pays a price of the low end of DSL
    rng = np.random.default_rng(0)
    service = rng.choice(["No", "DSL", "Fibre"], 3000, p=[0.22, 0.34, 0.44])
    low, high = (pd.Series(service).map(e).to_numpy() for e in (
        {"No": 18, "DSL": 24, "Fibre": 68}, {"No": 27, "DSL": 90, "Fibre": 119}))
    X = pd.DataFrame({"service": service, "price": np.round(rng.uniform(low, high), 2)})
    ranks = X["price"].rank()
    within = ((ranks - ranks.groupby(X["service"]).transform("mean")) ** 2).sum()
    assert 0.77 < 1 - within / ((ranks - ranks.mean()) ** 2).sum() < 0.8
    domain = {"service": {"values": ["DSL", "Fibre", "No"]}, "price": {"bounds": [18, 119]}}
    draft_only_when(X, domain, "read_from_data")
    ranges = {r["value"]: r["between"] for r in domain["service"]["only_when"]}
    assert set(ranges) == {"DSL", "Fibre", "No"}
    assert 68 <= ranges["Fibre"][0] < 68.5 and 26.5 < ranges["No"][1] <= 27


def test_the_drafter_leaves_ranges_narrower_than_a_bin_out():
    # an interest rate for each grade, to the hundredth: a function more than a range, which
    # the model's bins (a tenth of the span) could keep only by leaving rows out
    rng = np.random.default_rng(4)
    grade = rng.choice(list("ABCDE"), 5000)
    rate = np.array([6.07, 9.43, 12.61, 15.04, 18.06])[np.searchsorted(list("ABCDE"), grade)]
    X = pd.DataFrame({"grade": grade, "rate": rate + rng.choice([0.0, 0.01], 5000)})
    domain = {"grade": {"values": list("ABCDE")}, "rate": {"bounds": [5, 31]}}
    draft_only_when(X, domain, "read_from_data")
    assert "only_when" not in domain["grade"]


def test_the_drafter_finds_no_range_in_the_tails_of_independent_columns():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"group": rng.choice(list("abcd"), 20_000),
                      "x": np.round(rng.lognormal(8, 1, 20_000))})
    domain = {"group": {"values": list("abcd")}, "x": {"bounds": [0, float(X["x"].max())]}}
    draft_only_when(X, domain, "read_from_data")
    assert "only_when" not in domain["group"]


def cards(n=3000, seed=5, spent_without=0, holders_at_zero=0.02, kinds=("no", "yes")):
    """Applicants with and without a card, 2% of the holders spending 0 (AER's CreditCard)."""
    rng = np.random.default_rng(seed)
    card = rng.choice(kinds, n, p=[0.25] + [0.75 / (len(kinds) - 1)] * (len(kinds) - 1))
    spent = np.where(card == "no", 0.0, np.round(rng.lognormal(5, 1, n), 2))
    spent[(card != "no") & (rng.random(n) < holders_at_zero)] = 0.0
    spent[np.flatnonzero(card == "no")[:spent_without]] = 50.0
    return pd.DataFrame({"card": card, "spent": spent, "age": rng.integers(18, 80, n)})


def test_the_drafter_finds_a_value_only_at_a_point_and_rows_keep_it():
    X = cards()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the draft is read from the data
        draft = draft_domain(X)
    assert draft["spent"]["points"] == [0.0]
    assert draft["card"]["only_when"] == {"value": "no", "column": "spent", "between": [0, 0]}
    assert "only_when" not in draft["age"]
    with pytest.warns(PrivacyLeakWarning):
        est = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(**workload_params(draft)),
                                 random_state=0).fit(X)
    rows = est.sample(3000, random_state=0)
    assert (rows.loc[rows["card"] == "no", "spent"] == 0).all()
    assert abs((rows["card"] == "no").mean() - (X["card"] == "no").mean()) < 0.05


@pytest.mark.parametrize("holders_at_zero", [0, 1 / 2000, 0.02])
def test_a_value_at_a_point_both_ways_is_drafted_exactly_and_rows_keep_it(holders_at_zero):
    # Boston's tracts on highway 24 pay a tax of 666, and no other tract does; a card
    # holder at 0 now and then (1 in 2,000: a coding error) still leaves the rule exact.
    # (Two kinds of card spend alike: the card is not a function of the spending.)
    X = cards(holders_at_zero=holders_at_zero, kinds=("no", "yes", "gold"))
    exactly = (X["spent"] == 0).sum() - (X["card"] == "no").sum() <= 0.002 * len(X)
    assert exactly == (holders_at_zero < 0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the draft is read from the data
        draft = draft_domain(X)
    rule = {"value": "no", "column": "spent", "between": [0, 0]}
    assert draft["card"].get("exactly_when" if exactly else "only_when") == rule
    assert ("only_when" if exactly else "exactly_when") not in draft["card"]
    with pytest.warns(PrivacyLeakWarning):
        est = AdaptiveProjection(epsilon=1.0, workload=QueryWorkload(**workload_params(draft)),
                                 random_state=0).fit(X)
    rows = est.sample(3000, random_state=0)
    assert (rows.loc[rows["card"] == "no", "spent"] == 0).all()
    if exactly:
        assert not ((rows["card"] != "no") & (rows["spent"] == 0)).any()


@pytest.mark.parametrize("spent_without", [3, 0])
def test_no_point_rule_with_exceptions_or_by_chance(spent_without):
    # three applicants without a card who spent: exceptions; or a value too rare for a rule
    X = cards(spent_without=spent_without)
    if not spent_without:  # 4 rows without a card: 3 expected to spend if independent
        X = X[(X["card"] == "yes") | (X.index < 80)].reset_index(drop=True)
        X = X[(X["card"] == "yes") | (X.groupby("card").cumcount() < 4)]
    domain = {"card": {"values": ["no", "yes"]}, "spent": {"bounds": [0, 5000], "points": [0]},
              "age": {"bounds": [18, 79]}}
    draft_only_when(X, domain, "read_from_data")
    assert "only_when" not in domain["card"]


# ------------------------------------------------------------------ a value and a missing column

JOINT = {"kind": {"value": "single", "column": "joint_income", "missing": True}}


def loans(n=4000, seed=0):
    """Single and joint applications; a joint income exactly on the joint ones."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(["single", "joint"], n, p=[0.8, 0.2])
    income = np.round(rng.lognormal(11, 0.5, n), -2)
    return pd.DataFrame({"kind": kind,
                         "joint_income": np.where(kind == "joint", 2 * income, np.nan),
                         "income": income})


def loans_workload(**kwargs):
    return QueryWorkload(domain={"kind": ["joint", "single"]},
                         bounds={"joint_income": (0, 1000000), "income": (0, 500000)},
                         handle_missing=["joint_income"], k=2, **kwargs)


def test_a_missing_column_rule_parses_and_a_row_keeps_it_both_ways():
    (rule,) = parse_exactly_when(JOINT, ["kind", "joint_income"])
    assert rule == ValueRule("kind", "single", "joint_income", (), missing=True)
    assert str(rule) == "kind == 'single' exactly when joint_income is missing"
    rows = pd.DataFrame({"kind": ["single", "joint", "single", "joint"],
                         "joint_income": [np.nan, 90000.0, 50000.0, np.nan]})
    assert rule.kept(rows).tolist() == [True, True, False, False]
    (implication,) = parse_only_when(JOINT, ["kind", "joint_income"])
    assert implication.kept(rows).tolist() == [True, True, False, True]


@pytest.mark.parametrize("missing", [False, "yes", 1])
def test_a_missing_rule_must_say_true(missing):
    with pytest.raises(ValueError, match=r"exactly_when\['kind'\]: \"missing\" must be true"):
        parse_exactly_when({"kind": {**JOINT["kind"], "missing": missing}},
                           ["kind", "joint_income"])


def test_a_missing_rule_on_a_column_that_may_not_be_missing_is_refused():
    wl = loans_workload(exactly_when={"kind": {"value": "single", "column": "income",
                                               "missing": True}})
    with pytest.raises(ValueError, match=r"exactly_when\['kind'\]: column 'income' may not be "
                                         r"missing"):
        wl.fit(loans(200))


def test_synthetic_rows_keep_the_missing_rule_with_the_same_ledger():
    plain, ruled, before, after = fit_without_and_with(loans(), loans_workload,
                                                       exactly_when=JOINT)
    (rule,) = ruled.workload_.value_rules_
    assert rule.kept(before).mean() < 0.9  # the 1-way fit draws them apart
    assert rule.kept(after).all() and ruled.ledger_.entries == plain.ledger_.entries
    # the kind's shares stay the model's (sd 0.006 at 4,000 rows)
    shares = [rows["kind"].value_counts(normalize=True).sort_index() for rows in (before, after)]
    np.testing.assert_allclose(*shares, atol=0.03)


def test_a_domain_file_declares_a_missing_rule():
    params = parse_domain({"kind": {"values": ["joint", "single"], "exactly_when": JOINT["kind"]},
                           "joint_income": {"bounds": [0, 1000000], "missing": True}})
    assert params["exactly_when"] == JOINT
    with pytest.raises(ValueError, match=r"must be .* or \{\"value\": v, \"column\": other, "
                                         r"\"missing\": true\}"):
        parse_domain({"kind": {"values": ["joint"], "exactly_when": {
            "value": "joint", "column": "joint_income", "missing": True, "values": [1]}},
            "joint_income": {"bounds": [0, 1000000], "missing": True}})


# ------------------------------------------------------------------ a value exactly within a range

NO_INQUIRY = {"inquiries": {"value": 0, "column": "months", "between": [13, 24],
                            "missing": True}}


def credit(n=4000, seed=0):
    """Months since the last credit inquiry (missing: never one); inquiries in the last 12
    months, 0 exactly when the last was 13 months ago or more, or never; a region."""
    rng = np.random.default_rng(seed)
    months = rng.integers(0, 25, n).astype(float)
    months[rng.random(n) < 0.15] = np.nan
    inquiries = np.where(months <= 12, rng.integers(1, 8, n), 0)
    return pd.DataFrame({"months": months, "inquiries": inquiries,
                         "region": rng.choice(["north", "south"], n)})


def credit_workload(**kwargs):
    return QueryWorkload(domain={"region": ["north", "south"]},
                         bounds={"months": (0, 24), "inquiries": (0, 7)},
                         steps={"months": 1}, bins=4, handle_missing=["months"], k=2,
                         **kwargs)


def test_an_exact_range_parses_and_a_row_keeps_it_both_ways():
    (rule,) = parse_exactly_when(NO_INQUIRY, ["months", "inquiries"])
    assert rule == ValueRule("inquiries", 0, "months", (), between=(13.0, 24.0), missing=True)
    assert str(rule) == "inquiries == 0 exactly when 13 <= months <= 24 or months is missing"
    assert rule.numbers == ("months",)
    rows = pd.DataFrame({"months": [13, 24, np.nan, 12, 3, 20, np.nan],
                         "inquiries": [0, 0, 0, 0, 2, 1, 1]})
    assert rule.kept(rows).tolist() == [True, True, True, False, True, False, False]
    # without "missing": a missing number keeps the rule either way
    (loose,) = parse_exactly_when({"inquiries": {k: v for k, v in NO_INQUIRY["inquiries"].items()
                                                 if k != "missing"}}, ["months", "inquiries"])
    assert str(loose) == ("inquiries == 0 exactly when 13 <= months <= 24 (a missing months "
                          "keeps it)")
    assert loose.kept(rows).tolist() == [True, True, True, False, True, False, True]


@pytest.mark.parametrize("value, match", [
    (9, r"the value 9 is not a number within the column's bounds"),
    ("none", r"the value 'none' is not a number within"),
])
def test_an_exact_range_on_a_number_outside_its_bounds_is_refused(value, match):
    wl = credit_workload(exactly_when={"inquiries": {**NO_INQUIRY["inquiries"], "value": value}})
    with pytest.raises(ValueError, match=r"exactly_when\['inquiries'\]: " + match):
        wl.fit(credit(300))


def test_synthetic_rows_keep_an_exact_range_with_the_same_ledger():
    plain, ruled, before, after = fit_without_and_with(credit(), credit_workload,
                                                       exactly_when=NO_INQUIRY)
    (rule,) = ruled.workload_.value_rules_
    assert rule.kept(before).mean() < 0.8  # the 1-way fit draws the two apart
    assert rule.kept(after).all() and ruled.ledger_.entries == plain.ledger_.entries
    # the number's missing share stays the model's (sd 0.006 at 4,000 rows)
    assert abs(after["months"].isna().mean() - before["months"].isna().mean()) < 0.03


def test_a_domain_file_declares_an_exact_range():
    params = parse_domain({"months": {"bounds": [0, 24], "missing": True},
                           "inquiries": {"bounds": [0, 7], "exactly_when": NO_INQUIRY[
                               "inquiries"]}})
    assert params["exactly_when"] == NO_INQUIRY


def credit_domain():
    return {"months": {"bounds": [0, 24], "missing": True},
            "inquiries": {"bounds": [0, 7], "bins": 4},
            "region": {"values": ["north", "south"]}}


def draft_between(X):
    domain = credit_domain()
    draft_exactly_between(X, domain, "read_from_data")
    return domain


def test_the_drafter_finds_an_exact_range_and_where_the_missing_rows_fall():
    X = credit()
    domain = draft_between(X)
    assert domain["inquiries"]["exactly_when"] == {**NO_INQUIRY["inquiries"],
                                                   "between": [13.0, 24.0]}
    assert domain["inquiries"]["read_from_data"] is True
    assert "exactly_when" not in domain["region"]
    with pytest.warns(PrivacyLeakWarning, match="read_from_data"):
        params = workload_params(domain)
    assert QueryWorkload(**params, k=2).fit(X).value_rules_ == parse_exactly_when(
        NO_INQUIRY, list(X.columns))
    # inquiries beside a missing number on many rows: the range alone, missing numbers free
    mixed = X.assign(inquiries=X["inquiries"].where(X["months"].notna() | (X.index % 2 == 0), 3))
    assert "missing" not in draft_between(mixed)["inquiries"]["exactly_when"]


def break_rows(X, count):
    """``X`` with ``count`` rows of 2 to 12 months since an inquiry holding none."""
    rows = X.index[X["months"].between(2, 12)][:count]
    return X.assign(inquiries=X["inquiries"].where(~X.index.isin(rows), 0))


@pytest.mark.parametrize("count, drafted", [(6, True), (9, False)])
def test_the_drafter_lets_a_few_coding_errors_through_an_exact_range(count, drafted):
    # 0.2% of 4,000 rows is 8: 6 rows breaking it are coding errors, 9 are no rule
    domain = draft_between(break_rows(credit(), count))
    assert ("exactly_when" in domain["inquiries"]) is drafted


def test_the_drafter_finds_no_exact_range_between_independent_or_nearly_equal_numbers():
    rng = np.random.default_rng(5)
    n = 20_000
    X = pd.DataFrame({"months": rng.integers(0, 25, n).astype(float),
                      "inquiries": rng.integers(0, 8, n), "region": rng.choice(["a", "b"], n)})
    assert "exactly_when" not in draft_between(X)["inquiries"]
    # two counts equal but for a few rows: each value "exactly" at one point of the other
    # is a function, not a range (open credit lines and satisfactory accounts)
    lines = rng.integers(0, 40, n)
    Y = X.assign(months=np.where(rng.random(n) < 0.001, lines + 1, lines).astype(float),
                 inquiries=lines)
    assert "exactly_when" not in draft_between(Y)["inquiries"]
    # a rule of few rows: an independent table would break it on fewer than 30
    assert "exactly_when" not in draft_between(credit(40))["inquiries"]


def test_draft_domain_drafts_an_exact_range_once_after_the_other_rules():
    X = credit()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        draft = draft_domain(X)
    assert draft["inquiries"]["exactly_when"]["column"] == "months"
    assert "exactly_when" not in draft["months"]  # no rule back the other way


def test_an_exact_range_on_a_clock_reads_its_value_as_a_time_of_day():
    # a clock's bins are in minutes (0 to 1440) and its values HHMM: 23:00 is within it
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"t": rng.integers(0, 24, 500) * 100 + rng.integers(0, 60, 500),
                      "late": rng.integers(0, 60, 500).astype(float)})
    rule = {"t": {"value": 2300, "column": "late", "between": [0, 10]}}
    wl = QueryWorkload(bounds={"t": (0, 2400), "late": (0, 60)}, bins={"t": 24},
                       clocks=["t"], exactly_when=rule, k=1).fit(X)
    assert wl.value_rules_ == parse_exactly_when(rule, ["t", "late"])


# ------------------------------------------------------------ implications the ties already imply

def telco(n=3000, seed=0):
    """Internet services: "none" exactly when there is no internet; DSL-only landlines."""
    rng = np.random.default_rng(seed)
    internet = rng.choice(["DSL", "Fiber", "No"], n, p=[0.35, 0.45, 0.2])
    X = pd.DataFrame({"internet": internet})
    for name in ("security", "backup", "support"):
        X[name] = np.where(internet == "No", "none", rng.choice(["No", "Yes"], n))
    X["lines"] = np.where((internet == "DSL") & (rng.random(n) < 0.3), "no phone",
                          rng.choice(["single", "multiple"], n))
    return X


def test_a_shared_not_applicable_value_is_tied_once_and_not_implied_pair_by_pair():
    X = telco()
    domain = {c: {"values": sorted(set(X[c]))} for c in X}
    draft_exactly_when(X, domain, "read_from_data")
    draft_only_when(X, domain, "read_from_data")
    for name in ("security", "backup", "support"):  # a given column of three values
        assert domain[name]["exactly_when"] == {
            "value": "none", "column": "internet", "values": ["No"]}
    services = {"security", "backup", "support"}
    implications = [(b, r["column"]) for b, e in domain.items()
                    for r in rule_entries(e.get("only_when"))]
    assert not [(b, a) for b, a in implications if b in services and a in services]
    # what the ties do not imply stays: no landline only with DSL
    assert {"value": "no phone", "column": "internet", "values": ["DSL"]} in rule_entries(
        domain["lines"].get("only_when"))
    rows = X.sample(frac=1.0, random_state=0)
    declared = [{c: e[key] for c, e in domain.items() if key in e}
                for key in ("exactly_when", "only_when")]
    for rule in parse_value_rules(*declared, list(X.columns)):
        assert rule.kept(rows).all(), str(rule)


def test_an_implication_is_kept_where_no_tie_implies_it():
    # the services follow the internet one way only: no tie, so each implication stays
    X = telco()
    X.loc[(X["internet"] == "Fiber") & (np.arange(len(X)) % 10 == 0), "security"] = "none"
    domain = {c: {"values": sorted(set(X[c]))} for c in X}
    draft_exactly_when(X, domain, "read_from_data")
    draft_only_when(X, domain, "read_from_data")
    assert "exactly_when" not in domain["security"]
    assert {"value": "none", "column": "internet", "values": ["Fiber", "No"]} in rule_entries(
        domain["security"].get("only_when"))


def test_drafted_rules_name_whole_numbers_as_their_column_lists_them():
    # survival's pbc: four 0/1 findings missing together for the patients outside the trial,
    # read as floats (a missing value makes the column float) and listed as 0 and 1
    rng = np.random.default_rng(2)
    n = 400
    X = pd.DataFrame({"trt": rng.choice([1.0, 2.0], n)})
    for name in ("ascites", "hepato"):
        X[name] = rng.choice([0.0, 1.0], n, p=[0.7, 0.3])
    X.loc[X.index[:100], ["trt", "ascites", "hepato"]] = np.nan
    X["stage"] = np.where(X["trt"].isna(), 9, rng.choice([1, 2, 3], n))
    domain = draft_domain(X)
    assert domain["ascites"]["values"] == [0, 1]
    rules = [(b, r) for b, e in domain.items() for key in ("only_when", "exactly_when")
             for r in rule_entries(e.get(key))]
    assert rules
    for b, r in rules:
        for value, col in [(r["value"], b)] + [(w, r["column"]) for w in r.get("values", [])]:
            if isinstance(value, float):
                assert value != int(value) or "values" not in domain[col], (b, r)
    parse_domain(domain)
