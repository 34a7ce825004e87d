"""Rules a fitted model's rows cannot keep together (sklearn_privsyn._rule_relaxation).

Here: which rules the greedy choice leaves out, on frames built by hand (a rule
no row keeps even alone among them); the warning that names them; the pool
sampler, an estimator's ``sample`` and the command line giving rows that keep
the other rules.
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from sklearn_privsyn import AdaptiveProjection, QueryWorkload
from sklearn_privsyn._rule_relaxation import keepable_rules
from sklearn_privsyn.cli import main
from sklearn_privsyn.order_rules import OrderRule, parse_at_most, rules_kept, sample_keeping_rules

pytestmark = pytest.mark.filterwarnings("ignore::sklearn_privsyn.PrivacyLeakWarning")


def chain_rules():
    # each kept by 15% of uniform draws on 0..9; the middle one with either other never
    # (a <= b - 5 <= c - 10 asks c >= 10), the outer two together by 2.25%
    return [OrderRule("a", "b", -5.0), OrderRule("b", "c", -5.0), OrderRule("c", "d", -5.0)]


def uniform_draw(m, rng):
    codes = rng.integers(0, 10, (m, 4))
    return codes, pd.DataFrame(codes, columns=list("abcd"))


def test_the_rule_that_alone_stops_the_most_rows_is_left_out_and_named():
    frame = pd.DataFrame({"a": [0, 0, 0, 5, 5], "b": [1, 1, 2, 0, 3], "c": [2, 0, 1, 9, 1]})
    rules = [OrderRule("a", "b"), OrderRule("b", "c"), OrderRule("a", "c")]
    # row 0 keeps all three, rows 1 and 2 break b <= c alone, row 3 breaks a <= b alone,
    # row 4 breaks all three
    with pytest.warns(UserWarning, match=r"cannot keep all 3 declared rules together .* 1 left "
                                         r"out, and the synthetic rows may break them: b <= c\."):
        kept, left_out = keepable_rules(rules, frame, 3)
    assert left_out == [rules[1]] and kept == [rules[0], rules[2]]
    assert rules_kept(kept, frame).sum() == 3
    # asking for more rows keeping them leaves out a second rule, the next greedy choice
    with pytest.warns(UserWarning, match="2 left out"):
        kept, left_out = keepable_rules(rules, frame, 4)
    assert left_out == [rules[0], rules[1]] and kept == [rules[2]]


def test_no_rule_is_left_out_where_enough_rows_keep_them_all():
    frame = pd.DataFrame({"a": [0, 1, 2], "b": [5, 5, 5]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept, left_out = keepable_rules([OrderRule("a", "b")], frame, 3)
    assert kept == [OrderRule("a", "b")] and left_out == []


def test_a_rule_no_row_keeps_even_alone_is_left_out_first():
    frame = pd.DataFrame({"a": [5, 6], "b": [0, 1], "c": [9, 9], "d": [6, 5]})
    rules = [OrderRule("a", "c"), OrderRule("a", "b"), OrderRule("a", "d")]
    # a <= b kept by no row, a <= d by row 0 only, which a <= b alone stops
    with pytest.warns(UserWarning, match=r"1 left out, .*: a <= b\."):
        kept, left_out = keepable_rules(rules, frame, 1)
    assert left_out == [rules[1]] and kept == [rules[0], rules[2]]


@pytest.mark.parametrize("block", [None, (("a", 0), ("b", 1), ("c", 2), ("d", 3))])
def test_the_sampler_keeps_the_rules_its_rows_can_keep_together(block):
    rules = chain_rules()
    with pytest.warns(UserWarning, match=r"1 left out, .*: b <= c - 5\."):
        rows = sample_keeping_rules(uniform_draw, tuple(rules), [10] * 4, 300,
                                    np.random.default_rng(0), block=block)
    assert len(rows) == 300
    assert rules_kept([rules[0], rules[2]], rows).all()
    assert not rules_kept([rules[1]], rows).any()  # no row keeps it beside the others
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = sample_keeping_rules(uniform_draw, tuple(rules), [10] * 4, 300,
                                     np.random.default_rng(0), block=block)
    pd.testing.assert_frame_equal(rows, again)


def test_an_estimator_gives_rows_where_its_rules_cannot_hold_together():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({c: rng.integers(0, 10, 600) for c in "abcd"})
    spec = {"a": "b - 5", "b": "c - 5", "c": "d - 5"}
    wl = QueryWorkload(bounds={c: (0, 9) for c in "abcd"}, at_most=spec, k=1)
    est = AdaptiveProjection(epsilon=1.0, workload=wl, random_state=0).fit(X)
    with pytest.warns(UserWarning, match=r"1 left out, .*: b <= c - 5\."):
        rows = est.sample(200, random_state=1)
    rules = parse_at_most(spec, list("abcd"))
    assert len(rows) == 200 and (rows.dtypes == X.dtypes).all()
    assert rules_kept([r for r in rules if str(r) != "b <= c - 5"], rows).all()


def test_the_command_line_says_which_rules_it_left_out(tmp_path, capsys):
    rng = np.random.default_rng(0)
    pd.DataFrame({c: rng.integers(0, 10, 600) for c in "abcd"}).to_csv(tmp_path / "d.csv",
                                                                       index=False)
    domain = {"a": {"bounds": [0, 9], "at_most": "b - 5"},
              "b": {"bounds": [0, 9], "at_most": "c - 5"},
              "c": {"bounds": [0, 9], "at_most": "d - 5"}, "d": {"bounds": [0, 9]}}
    (tmp_path / "d.json").write_text(json.dumps(domain))
    assert main(["fit", str(tmp_path / "d.csv"), "--domain", str(tmp_path / "d.json"),
                 "--epsilon", "1", "--seed", "0", "-q", "-o", str(tmp_path / "s.csv")]) == 0
    err = capsys.readouterr().err
    assert ("privsyn: warning: The fitted model's rows cannot keep all 3 declared rules "
            "together") in err and "1 left out" in err and ": b <= c - 5." in err
    rows = pd.read_csv(tmp_path / "s.csv")
    assert len(rows) == 600 and (rows["a"] <= rows["b"] - 5).all()
    assert (rows["c"] <= rows["d"] - 5).all()
